//! `tb validate`: load a test list and everything it needs, print a per-scenario summary.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `tb validate` arguments.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// Data root (the folder holding `dataset/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Test list (YAML list of `file.py:function`).
    #[arg(long)]
    pub test_list: PathBuf,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub servers: crate::common::ServerArgs,
}

/// Runs `tb validate`.
pub fn run(a: &ValidateArgs) -> Result<ExitCode> {
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let tasks = ds.load_test_list(&ds.resolve_test_list(&a.test_list))?;
    let summary = tb_dataset::summarize(&ds, &tasks)?;
    // Every task's session must open (its data patch must apply) and its golden calls must
    // name tools that exist.
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    // --servers: the file itself, then which side runs each task's servers
    let servers = match a.servers.config() {
        Ok(c) => c,
        Err(e) => {
            problems.push(crate::error_text(&e));
            None
        }
    };
    let prefer = a.servers.options()?.prefer;
    if let Some(cfg) = &servers {
        for spec in &cfg.servers {
            if !tasks.iter().any(|t| t.world_state.contains_key(&spec.name)) {
                warnings.push(format!(
                    "{}:{}: server `{}`: no task of the list names it",
                    cfg.file.display(),
                    spec.line,
                    spec.name
                ));
            }
        }
    }
    for t in &tasks {
        if let Some(cfg) = &servers {
            let mut external = false;
            let mut unknown = false;
            for s in t.world_state.keys() {
                match tb_external::session::route(cfg, prefer, sandbox.domain(s).is_some(), s) {
                    tb_external::Route::External => external = true,
                    tb_external::Route::Native => {}
                    tb_external::Route::Unknown => {
                        unknown = true;
                        problems.push(format!(
                            "{} ({}:{}): server `{s}` is neither a native domain nor in {}",
                            t.uid,
                            t.source.path,
                            t.source.line,
                            cfg.file.display()
                        ))
                    }
                }
            }
            if external || unknown {
                // its external servers are checked when they run
                continue;
            }
        }
        match sandbox.session(t, tb_sandbox::Clock::default()) {
            Ok(s) => {
                for server in s.server_names() {
                    for (tool, _) in t.golden_calls(&server) {
                        if s.server(&server)
                            .is_some_and(|x| x.domain.tool(&tool).is_none())
                        {
                            problems
                                .push(format!("{}: golden call to unknown tool `{tool}`", t.uid));
                        }
                    }
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    // Every test file's Python must be within what the test-body evaluator runs.
    problems.extend(tb_eval::pybody::check_test_files(&root, &tasks));
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"tasks": tasks.len(), "scenarios": summary, "problems": problems, "warnings": warnings})
            )?
        );
    } else {
        println!(
            "{:<32} {:>6} {:>7} {:>6} {:>9} {:>8}",
            "scenario", "tasks", "golden", "tools", "db-check", "rubrics"
        );
        for s in &summary {
            println!(
                "{:<32} {:>6} {:>7} {:>6} {:>9} {:>8}",
                s.scenario,
                s.tasks,
                s.golden_calls,
                s.tools,
                s.validate_database,
                s.validate_rubrics_yesno
            );
        }
        println!(
            "{} tasks loaded from {}",
            tasks.len(),
            a.test_list.display()
        );
        for w in &warnings {
            println!("warning: {w}");
        }
        for p in &problems {
            println!("problem: {p}");
        }
    }
    Ok(if problems.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
