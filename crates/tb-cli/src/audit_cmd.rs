//! `tb audit`: check the benchmark itself (golden, noop, mutants, clock, look-alikes,
//! rubrics). The checks live in `tb-audit`; rules in docs/audit.md.

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;
use tb_audit::{AuditOptions, render};

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Text tables: per task, findings, blind spots, per domain, summary.
    Table,
    /// One JSON object: `{"tasks": [...], "summary": {...}}`.
    Json,
    /// A self-contained HTML page.
    Html,
}

/// `tb audit` arguments.
#[derive(Debug, Args)]
pub struct AuditArgs {
    /// Test list (default: the v1 release list of the data root).
    #[arg(long)]
    pub test_list: Option<PathBuf>,
    /// Data root (the folder holding `dataset/` and `servers/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Write the output here instead of stdout.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// The session clock (RFC 3339; default: the scenarios' pinned time).
    #[arg(long)]
    pub now: Option<String>,
    /// The other clock of the clock check (RFC 3339; default: the wall clock now).
    #[arg(long)]
    pub wall_now: Option<String>,
    /// Worker threads (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
}

/// Runs `tb audit`. Exit code 1 when a golden trajectory fails.
pub fn run(a: &AuditArgs) -> Result<ExitCode> {
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let (list, tasks) = tb_bench::test_list_tasks(&ds, a.test_list.as_ref())?;
    let mut opts = AuditOptions {
        clock: crate::common::clock(&a.now)?,
        ..AuditOptions::default()
    };
    if let Some(w) = &a.wall_now {
        opts.wall = tb_sandbox::Clock::parse(w).map_err(anyhow::Error::msg)?;
    }
    if let Some(n) = a.threads {
        opts.threads = n.max(1);
    }
    let t0 = Instant::now();
    let report = tb_audit::audit(&sandbox, &tasks, &opts);
    let secs = t0.elapsed().as_secs_f64();
    let text = match a.format {
        Format::Table => render::to_text(&report),
        Format::Json => format!(
            "{}\n",
            serde_json::to_string_pretty(&render::to_json(&report))?
        ),
        Format::Html => render::to_html(&report, &format!("tb audit: {}", list.display())),
    };
    match &a.output {
        Some(p) => std::fs::write(p, text).with_context(|| format!("writing {}", p.display()))?,
        None => print!("{text}"),
    }
    eprintln!(
        "audited {} tasks in {secs:.2} s on {} thread(s): golden {}/{}, noop passes {}, mean sensitivity {}",
        report.summary.tasks,
        opts.threads,
        report.summary.golden_pass,
        report.summary.tasks,
        report.summary.noop_pass.len(),
        report
            .summary
            .mean_sensitivity
            .map_or("-".into(), |s| format!("{s:.3}"))
    );
    Ok(if report.golden_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
