//! `tb replay`: replay the reference's recorded traces and compare every result and state.

use anyhow::{Context, Result};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;
use tb_eval::replay::{ReplaySummary, read_traces, replay_trace};

/// `tb replay` arguments.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// Trace files (JSONL, the format of tb-bench-v1/traces).
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,
    /// Data root (the folder holding `dataset/` and `servers/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Print one JSON summary object.
    #[arg(long)]
    pub json: bool,
    /// The time tools see (RFC 3339). The recorded traces were taken on 2026-11-30.
    #[arg(long)]
    pub now: Option<String>,
    /// Mismatches to list in the text report.
    #[arg(long, default_value_t = 20)]
    pub show: usize,
}

/// Runs `tb replay`.
pub fn run(a: &ReplayArgs) -> Result<ExitCode> {
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let clock = crate::common::clock(&a.now)?;
    if let Some(first) = a.traces.first()
        && is_script_file(first)
    {
        return run_scripts(a, &ds, &sandbox, clock);
    }
    let mut summary = ReplaySummary::default();
    for file in &a.traces {
        let traces = read_traces(file).map_err(anyhow::Error::msg)?;
        for trace in traces {
            let task = ds
                .load_task(&trace.id)
                .with_context(|| format!("{}: trace {}", file.display(), trace.id))?;
            let config = task
                .world_state
                .get(&trace.domain)
                .cloned()
                .unwrap_or_default();
            let loaded = sandbox.domain(&trace.domain).with_context(|| {
                format!(
                    "{}: trace {} names unknown server {}",
                    file.display(),
                    trace.id,
                    trace.domain
                )
            })?;
            replay_trace(loaded, &config, clock, &trace, &mut summary);
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let s = &summary;
        print_counts(
            18,
            s.traces,
            &[
                ("initial_match", s.initial_match, s.traces),
                ("golden_hash_match", s.golden_hash_match, s.traces),
                ("golden_diff_match", s.golden_diff_match, s.traces),
                ("calls_match", s.calls_match, s.calls),
                ("final_match", s.final_match, s.traces),
                ("diff_match", s.diff_match, s.traces),
            ],
        );
        for m in s.mismatches.iter().take(a.show) {
            let call = m
                .call
                .map(|c| format!(" call {c} ({})", m.tool.clone().unwrap_or_default()))
                .unwrap_or_default();
            println!(
                "  {}{call} {}: first difference at {}",
                m.trace, m.what, m.detail
            );
        }
        more_mismatches(s.mismatches.len(), a.show);
    }
    Ok(exit_code(summary.clean()))
}

/// The summary's figures: `traces`, then each check's matches out of its cases, names
/// padded to `width`.
fn print_counts(width: usize, traces: usize, rows: &[(&str, usize, usize)]) {
    println!("{:<width$}{traces}", "traces");
    for (name, matched, of) in rows {
        println!("{name:<width$}{matched}/{of}");
    }
}

/// The line after the mismatches shown, when `--show` left some out.
fn more_mismatches(total: usize, shown: usize) {
    if total > shown {
        println!(
            "  ... {} more mismatches (use --show N or --json)",
            total - shown
        );
    }
}

/// Success when everything matched, else 1.
fn exit_code(clean: bool) -> ExitCode {
    if clean {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Whether a trace file holds scripted episodes (the airline and setup-check traces).
fn is_script_file(path: &std::path::Path) -> bool {
    std::fs::read_to_string(path)
        .ok()
        .and_then(|t| {
            let line = t.lines().find(|l| !l.trim().is_empty())?.to_string();
            serde_json::from_str::<serde_json::Value>(&line).ok()
        })
        .is_some_and(|v| tb_eval::script_replay::is_script_record(&v))
}

/// `tb replay` on scripted episodes: each record's script through the episode loop, the
/// test body with the judge answering yes and no, everything compared.
fn run_scripts(
    a: &ReplayArgs,
    ds: &tb_dataset::Dataset,
    sandbox: &tb_eval::root::LoadedRoot,
    clock: tb_sandbox::Clock,
) -> Result<ExitCode> {
    use tb_eval::script_replay::{ScriptEnv, ScriptSummary, read_script_records, replay_script};
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let agent = ds.agent("think").ok();
    let mut summary = ScriptSummary::default();
    for file in &a.traces {
        let records = read_script_records(file).map_err(anyhow::Error::msg)?;
        for record in records {
            let id = record["id"].as_str().unwrap_or_default();
            let task = ds
                .load_task(id)
                .with_context(|| format!("{}: trace {id}", file.display()))?;
            // The record's own clock (`clock.now_utc`) unless `--now` is given.
            let clock = match (&a.now, record["clock"]["now_utc"].as_str()) {
                (None, Some(t)) => tb_sandbox::Clock::parse(t).map_err(anyhow::Error::msg)?,
                _ => clock,
            };
            let env = ScriptEnv {
                sandbox,
                agent: agent.clone(),
                scenario: ds.scenario(&task.scenario).ok(),
                clock,
            };
            rt.block_on(replay_script(&env, &task, &record, &mut summary));
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&summary)?);
    } else {
        let s = &summary;
        print_counts(
            16,
            s.traces,
            &[
                ("calls_match", s.calls_match, s.calls),
                ("effects_match", s.effects_match, s.effects),
                ("verdicts_match", s.verdicts_match, s.verdicts),
                ("finish_match", s.finish_match, s.traces),
            ],
        );
        for m in s.mismatches.iter().take(a.show) {
            println!("  {} [{}] {}: {}", m.trace, m.kind, m.what, m.detail);
        }
        more_mismatches(s.mismatches.len(), a.show);
    }
    Ok(exit_code(summary.clean()))
}
