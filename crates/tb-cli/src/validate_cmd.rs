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
    for t in &tasks {
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
                &serde_json::json!({"tasks": tasks.len(), "scenarios": summary, "problems": problems})
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
