//! `tb infer`: run attempts of tasks with an agent, grade each, write one record per attempt.

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Map, json};
use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use tb_eval::infer::{AttemptEnv, attempt_offline};
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;

/// `tb infer` arguments.
#[derive(Debug, Args)]
pub struct InferArgs {
    /// Data root (the folder holding `dataset/` and `servers/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Test list (YAML list of `file.py:function`).
    #[arg(long)]
    pub test_list: Option<PathBuf>,
    /// One task id (`file.py:function`); repeatable.
    #[arg(long = "name")]
    pub names: Vec<String>,
    /// The agent: `golden` or `noop` (offline, no model).
    #[arg(long, default_value = "golden")]
    pub agent: String,
    /// Attempts per task.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Where to write trial records (JSONL).
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// The time tools see (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    pub now: Option<String>,
    /// Failed attempts to list with their first differences.
    #[arg(long, default_value_t = 10)]
    pub show_failures: usize,
}

/// Runs `tb infer`.
pub fn run(a: &InferArgs) -> Result<ExitCode> {
    let Some(agent) = OfflineAgent::parse(&a.agent) else {
        bail!("unknown agent `{}`: the offline agents are `golden` and `noop` (model agents need a config, -c)", a.agent);
    };
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let clock = crate::common::clock(&a.now)?;
    let mut tasks = Vec::new();
    if let Some(list) = &a.test_list {
        tasks.extend(ds.load_test_list(&ds.resolve_test_list(list))?);
    }
    if !a.names.is_empty() {
        tasks.extend(ds.load_tasks(&a.names)?);
    }
    if tasks.is_empty() {
        bail!("no tasks: give --test-list FILE or --name file.py:function");
    }
    let mut bot_instructions = HashMap::new();
    for t in &tasks {
        if !bot_instructions.contains_key(&t.scenario) {
            let s = ds.scenario(&t.scenario)?;
            bot_instructions.insert(t.scenario.clone(), s.bot_instructions.clone().unwrap_or_default());
        }
    }
    let agent_cfg = ds.agent("think").ok();
    let mut provenance = Map::new();
    provenance.insert("tb_version".into(), json!(env!("CARGO_PKG_VERSION")));
    provenance.insert("data_root".into(), json!(root.display().to_string()));
    provenance.insert("agent".into(), json!(agent.name()));
    provenance.insert("clock".into(), json!(clock.now_iso()));
    let judge = StateJudge::new();
    let env = AttemptEnv {
        sandbox: &sandbox,
        judge: &judge,
        clock,
        agent_instructions: agent_cfg.as_ref().map(|c| c.system_instructions.as_str()),
        bot_instructions: &bot_instructions,
        provenance: &provenance,
    };
    let mut out = match &a.output {
        Some(p) => {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            Some(std::io::BufWriter::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?))
        }
        None => None,
    };
    let (mut attempts, mut passed, mut errors) = (0usize, 0usize, 0usize);
    let mut per_scenario: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let unjudged: usize = tasks.iter().filter(|t| t.checks.contains(&tb_core::Check::ValidateRubricsYesno)).count();
    for rep in 0..a.repeat {
        for task in &tasks {
            let rec = attempt_offline(&env, agent, task, rep);
            attempts += 1;
            let ok = rec.verdict.as_ref().is_some_and(|v| v.passed);
            if rec.is_system_error {
                errors += 1;
            }
            let e = per_scenario.entry(task.scenario.clone()).or_default();
            e.0 += 1;
            if ok {
                passed += 1;
                e.1 += 1;
            } else if failures.len() < a.show_failures {
                failures.push(describe_failure(&rec));
            }
            if let Some(w) = out.as_mut() {
                serde_json::to_writer(&mut *w, &rec)?;
                w.write_all(b"\n")?;
                w.flush()?;
            }
        }
    }
    println!("agent {}: {attempts} attempts of {} tasks x {}", agent.name(), tasks.len(), a.repeat);
    for (s, (n, p)) in &per_scenario {
        println!("  {s:<32} {p:>5}/{n:<5} passed ({:.1}%)", 100.0 * *p as f64 / *n as f64);
    }
    println!("passed {passed}/{attempts} ({:.1}%), system errors {errors}", 100.0 * passed as f64 / attempts.max(1) as f64);
    if unjudged > 0 {
        println!(
            "note: {unjudged} task(s) also have yes/no rubric checks; offline agents run no judge model, so only their database check is graded"
        );
    }
    for f in &failures {
        println!("{f}");
    }
    if let Some(p) = &a.output {
        println!("records: {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

fn describe_failure(rec: &tb_core::TrialRecord) -> String {
    let mut s = format!("FAIL {}", rec.key);
    if let Some(v) = &rec.verdict {
        for sv in v.state.iter().filter(|x| !x.passed) {
            s.push_str(&format!("\n  {}: {} difference(s) from golden", sv.server, sv.diff.len()));
            for d in sv.diff.iter().take(5) {
                let path = d.get("path").and_then(|x| x.as_str()).unwrap_or("");
                let kind = d.get("type").and_then(|x| x.as_str()).unwrap_or("");
                match (d.get("result"), d.get("golden")) {
                    (Some(r), Some(g)) => s.push_str(&format!("\n    {path}: {kind} (result {r}, golden {g})")),
                    _ => s.push_str(&format!("\n    {path}: {kind}")),
                }
            }
        }
    } else if let Some(e) = rec.metadata.get("error") {
        s.push_str(&format!("\n  system error: {e}"));
    }
    s
}
