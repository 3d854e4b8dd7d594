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
    #[arg(short = 'n', long = "name")]
    pub names: Vec<String>,
    /// A test-case file (`.py`) or a folder of them (walked recursively).
    #[arg(short = 'i', long)]
    pub inputs: Option<PathBuf>,
    /// The agent: `golden` or `noop` (offline, no model), or an agent YAML name under
    /// `dataset/agent/` (e.g. `think`) played by the config's `orchestrator.agent_model`.
    #[arg(short = 'a', long, default_value = "golden")]
    pub agent: String,
    /// Run config YAML (models: `orchestrator.agent_model`, `user_model`, `judge_model`).
    #[arg(short = 'c', long)]
    pub config: Option<PathBuf>,
    /// Attempts run at the same time (model agents).
    #[arg(short = 'b', long, default_value_t = 5)]
    pub batch_size: usize,
    /// Budget in seconds of one model call, retries included.
    #[arg(long)]
    pub message_timeout: Option<f64>,
    /// Budget in seconds of one attempt's whole episode.
    #[arg(long)]
    pub attempt_timeout: Option<f64>,
    /// Optional record fields, comma-separated: `tools`, `userllm`, `raw`.
    #[arg(long, default_value = "")]
    pub dump: String,
    /// Attempts per task.
    #[arg(short = 'r', long, default_value_t = 1)]
    pub repeat: u32,
    /// Where to write trial records (JSONL).
    #[arg(short = 'o', long)]
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
    let Some(agent) = OfflineAgent::parse(&a.agent).filter(|_| a.config.is_none()) else {
        return run_model(a);
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
    if let Some(p) = &a.inputs {
        tasks.extend(load_inputs(&ds, p)?);
    }
    if tasks.is_empty() {
        bail!("no tasks: give --test-list FILE, --name file.py:function or --inputs PATH");
    }
    let mut bot_instructions = HashMap::new();
    for t in &tasks {
        if !bot_instructions.contains_key(&t.scenario) {
            let s = ds.scenario(&t.scenario)?;
            bot_instructions.insert(
                t.scenario.clone(),
                s.bot_instructions.clone().unwrap_or_default(),
            );
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
                std::fs::create_dir_all(dir)
                    .with_context(|| format!("creating {}", dir.display()))?;
            }
            Some(std::io::BufWriter::new(
                std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
            ))
        }
        None => None,
    };
    let (mut attempts, mut passed, mut errors) = (0usize, 0usize, 0usize);
    let mut per_scenario: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    let unjudged: usize = tasks
        .iter()
        .filter(|t| t.checks.contains(&tb_core::Check::ValidateRubricsYesno))
        .count();
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
    println!(
        "agent {}: {attempts} attempts of {} tasks x {}",
        agent.name(),
        tasks.len(),
        a.repeat
    );
    for (s, (n, p)) in &per_scenario {
        println!(
            "  {s:<32} {p:>5}/{n:<5} passed ({:.1}%)",
            100.0 * *p as f64 / *n as f64
        );
    }
    println!(
        "passed {passed}/{attempts} ({:.1}%), system errors {errors}",
        100.0 * passed as f64 / attempts.max(1) as f64
    );
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

pub(crate) fn describe_failure(rec: &tb_core::TrialRecord) -> String {
    let mut s = format!("FAIL {}", rec.key);
    if let Some(v) = &rec.verdict {
        for sv in v.state.iter().filter(|x| !x.passed) {
            s.push_str(&format!(
                "\n  {}: {} difference(s) from golden",
                sv.server,
                sv.diff.len()
            ));
            for d in sv.diff.iter().take(5) {
                let path = d.get("path").and_then(|x| x.as_str()).unwrap_or("");
                let kind = d.get("type").and_then(|x| x.as_str()).unwrap_or("");
                match (d.get("result"), d.get("golden")) {
                    (Some(r), Some(g)) => {
                        s.push_str(&format!("\n    {path}: {kind} (result {r}, golden {g})"))
                    }
                    _ => s.push_str(&format!("\n    {path}: {kind}")),
                }
            }
        }
    } else if let Some(e) = rec.metadata.get("error") {
        s.push_str(&format!("\n  system error: {e}"));
    }
    s
}

/// Test-case files of `--inputs`: one `.py` file or every `.py` under a folder, each test
/// function hydrated, in path order.
pub(crate) fn load_inputs(ds: &tb_dataset::Dataset, path: &std::path::Path) -> Result<Vec<tb_core::Task>> {
    let mut files = Vec::new();
    if path.is_dir() {
        let mut stack = vec![path.to_path_buf()];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).with_context(|| format!("reading {}", d.display()))? {
                let p = e?.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "py") {
                    files.push(p);
                }
            }
        }
        files.sort();
    } else if path.is_file() {
        files.push(path.to_path_buf());
    } else {
        bail!("--inputs {}: no such file or folder", path.display());
    }
    let mut tasks = Vec::new();
    for f in files {
        let tf = ds.test_file(&f)?;
        for t in &tf.tests {
            tasks.push(ds.hydrate(&f, t)?);
        }
    }
    Ok(tasks)
}

fn secs(v: Option<f64>, flag: &str) -> Result<Option<std::time::Duration>> {
    match v {
        None => Ok(None),
        Some(s) if s > 0.0 && s.is_finite() => Ok(Some(std::time::Duration::from_secs_f64(s))),
        Some(s) => bail!("{flag} must be a positive number of seconds, got {s}"),
    }
}

/// `tb infer -c CONFIG --agent NAME`: attempts played by a model (or an offline agent with a
/// config), run concurrently, written in input order, one flushed line per attempt.
fn run_model(a: &InferArgs) -> Result<ExitCode> {
    use std::sync::Arc;
    use tb_eval::infer::{AgentChoice, Dump, Models, RunEnv};
    let Some(cfg_path) = &a.config else {
        bail!("agent `{}` is played by a model: give the run config with -c CONFIG.yaml (the offline agents `golden` and `noop` need none)", a.agent);
    };
    if a.repeat == 0 || a.batch_size == 0 {
        bail!("--repeat and --batch-size must be at least 1");
    }
    let cfg = tb_llm::ConfigFile::load(cfg_path)?;
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
    if let Some(p) = &a.inputs {
        tasks.extend(load_inputs(&ds, p)?);
    }
    if tasks.is_empty() {
        bail!("no tasks: give --test-list FILE, --name file.py:function or --inputs PATH");
    }
    let offline = OfflineAgent::parse(&a.agent);
    let agent_cfg = match offline {
        Some(_) => ds.agent("think").ok(),
        None => Some(ds.agent(&a.agent)?),
    };
    let client = |c: &Option<tb_llm::LlmConfig>| -> Result<Option<tb_llm::LlmClient>> { c.as_ref().map(tb_llm::LlmClient::new).transpose().map_err(anyhow::Error::from) };
    let models = Models { agent: client(&cfg.agent_model)?, user: client(&cfg.user_model)?, judge: client(&cfg.judge_model)? };
    if offline.is_none() && models.agent.is_none() {
        bail!("{}: `orchestrator.agent_model` is required to play agent `{}`", cfg_path.display(), a.agent);
    }
    let rubric_tasks = tasks.iter().filter(|t| !tb_eval::infer::task_rubrics(t).is_empty()).count();
    if rubric_tasks > 0 && models.judge.is_none() && offline.is_none() {
        bail!("{rubric_tasks} task(s) have yes/no rubrics: `judge_model` is required in {}", cfg_path.display());
    }
    let mut scenarios = HashMap::new();
    for t in &tasks {
        if !scenarios.contains_key(&t.scenario) {
            scenarios.insert(t.scenario.clone(), ds.scenario(&t.scenario)?);
        }
    }
    let mut dump = Dump::default();
    for d in a.dump.split(',').map(str::trim).filter(|d| !d.is_empty()) {
        match d {
            "tools" => dump.tools = true,
            "userllm" => dump.userllm = true,
            "raw" => dump.raw = true,
            other => bail!("--dump: unknown field `{other}` (tools, userllm, raw)"),
        }
    }
    let mut provenance = Map::new();
    provenance.insert("tb_version".into(), json!(env!("CARGO_PKG_VERSION")));
    provenance.insert("data_root".into(), json!(root.display().to_string()));
    provenance.insert("agent".into(), json!(a.agent));
    provenance.insert("clock".into(), json!(clock.now_iso()));
    for (role, c) in [("agent_model", &cfg.agent_model), ("user_model", &cfg.user_model), ("judge_model", &cfg.judge_model)] {
        if let Some(c) = c {
            provenance.insert(role.into(), c.provenance());
        }
    }
    let env = Arc::new(RunEnv {
        sandbox: Arc::new(sandbox),
        judge: Arc::new(StateJudge::new()),
        clock,
        agent_name: a.agent.clone(),
        agent: agent_cfg,
        scenarios,
        models,
        user_can_end: cfg.user_can_end_conversation,
        message_timeout: secs(a.message_timeout, "--message-timeout")?,
        attempt_timeout: secs(a.attempt_timeout, "--attempt-timeout")?,
        dump,
        provenance,
    });
    let choice = offline.map(AgentChoice::Offline).unwrap_or(AgentChoice::Model);
    let mut out = match &a.output {
        Some(p) => {
            if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
            }
            Some(std::io::BufWriter::new(std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?))
        }
        None => None,
    };
    let started = std::time::Instant::now();
    let run_start = chrono::Utc::now().to_rfc3339();
    let jobs: Vec<(Arc<tb_core::Task>, u32)> = {
        let shared: Vec<Arc<tb_core::Task>> = tasks.iter().cloned().map(Arc::new).collect();
        shared.iter().flat_map(|t| (0..a.repeat).map(move |r| (t.clone(), r))).collect()
    };
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    let (mut attempts, mut passed, mut errors) = (0usize, 0usize, 0usize);
    let mut per_scenario: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut failures = Vec::new();
    rt.block_on(async {
        let sem = Arc::new(tokio::sync::Semaphore::new(a.batch_size));
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        for (i, (task, rep)) in jobs.iter().cloned().enumerate() {
            let (env, sem, tx) = (env.clone(), sem.clone(), tx.clone());
            tokio::spawn(async move {
                let Ok(_permit) = sem.acquire_owned().await else { return };
                let rec = tb_eval::infer::attempt(&env, choice, &task, rep).await;
                let _ = tx.send((i, rec));
            });
        }
        drop(tx);
        let mut pending: BTreeMap<usize, tb_core::TrialRecord> = BTreeMap::new();
        let mut next = 0usize;
        while let Some((i, rec)) = rx.recv().await {
            pending.insert(i, rec);
            while let Some(rec) = pending.remove(&next) {
                next += 1;
                attempts += 1;
                let ok = rec.verdict.as_ref().is_some_and(|v| v.passed) && rec.test_result.as_ref().is_some_and(|t| t.result);
                if rec.is_system_error || rec.test_result.as_ref().is_some_and(|t| t.is_system_error) {
                    errors += 1;
                }
                let e = per_scenario.entry(rec.metadata.get("scenario").and_then(|s| s.as_str()).unwrap_or("").to_string()).or_default();
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
        anyhow::Ok(())
    })?;
    if let Some(p) = &a.output {
        let stem = p.with_extension("");
        let meta_path = PathBuf::from(format!("{}_run_metadata.json", stem.display()));
        let meta = json!({
            "setup_config": cfg.redacted(),
            "agent": a.agent,
            "agent_config": env.agent.as_ref().map(|c| json!({"system_instructions": c.system_instructions, "builtin_tools": c.builtin_tools})),
            "user_config": {"system_prompt": if cfg.user_can_end_conversation { tb_eval::user_sim::USER_RULES_WITH_END } else { tb_eval::user_sim::USER_RULES }},
            "judge_config": {"system_prompt": tb_eval::rubric::JUDGE_SYSTEM},
            "provenance": env.provenance,
            "run_start_dt": run_start,
            "run_duration (sec)": started.elapsed().as_secs_f64(),
        });
        std::fs::write(&meta_path, serde_json::to_string_pretty(&meta)? + "\n").with_context(|| format!("writing {}", meta_path.display()))?;
    }
    println!("agent {}: {attempts} attempts of {} tasks x {}", a.agent, tasks.len(), a.repeat);
    for (s, (n, p)) in &per_scenario {
        println!("  {s:<32} {p:>5}/{n:<5} passed ({:.1}%)", 100.0 * *p as f64 / *n as f64);
    }
    println!("passed {passed}/{attempts} ({:.1}%), system errors {errors}", 100.0 * passed as f64 / attempts.max(1) as f64);
    for f in &failures {
        println!("{f}");
    }
    if let Some(p) = &a.output {
        println!("records: {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}
