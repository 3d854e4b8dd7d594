//! `tb infer`: run attempts of tasks with an agent, grade each, write one record per attempt.
//!
//! Every agent (the offline `golden` and `noop`, and model agents with `-c CONFIG`) runs
//! through the same campaign machinery (`tb_campaign`): concurrent attempts keyed
//! `<uid>::repeat::<n>`, records written and synced as each attempt ends, system errors in
//! an errors sidecar, `--resume`, `--shard i/n`, provenance in every record and in the run
//! manifest. See docs/campaigns.md.

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tb_campaign::provenance as prov;
use tb_campaign::store::Outcome;
use tb_campaign::{self as campaign, CampaignFiles, Mode, Observer, RoleLimits, Shard};
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;
use tb_eval::run::{AgentChoice, Dump, Models, RunEnv};

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
    /// Attempts running at the same time (default 5 with a model agent, the number of CPUs
    /// with an offline one).
    #[arg(short = 'b', long = "concurrency", visible_alias = "batch-size")]
    pub concurrency: Option<usize>,
    /// Agent-model requests in flight at most (default: no limit beyond --concurrency).
    #[arg(long)]
    pub agent_concurrency: Option<usize>,
    /// Simulated-user requests in flight at most, so the user model cannot take the
    /// endpoint's capacity from the agent.
    #[arg(long)]
    pub user_concurrency: Option<usize>,
    /// Judge requests in flight at most, likewise.
    #[arg(long)]
    pub judge_concurrency: Option<usize>,
    /// The order attempts start in: `plan` (repetition-major, so a partial run covers every
    /// task), `longest-first` (by expected model turns) or `packed` (longest first, packed so
    /// the slots end together): a shorter tail when attempts outnumber --concurrency; see
    /// docs/campaigns.md.
    #[arg(long, default_value = "plan")]
    pub start_order: tb_campaign::schedule::StartOrder,
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
    /// Where to write trial records with a verdict (JSONL).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Where to write attempts that ended in a system or test error (JSONL); default
    /// `<output stem>_errors.jsonl`.
    #[arg(long)]
    pub errors_output: Option<PathBuf>,
    /// Continue the run in --output: skip keys that already have a verdict, rerun the rest
    /// (system errors included); a torn last line left by a kill is cut first.
    #[arg(long, conflicts_with = "overwrite")]
    pub resume: bool,
    /// Start over even if --output already holds records (they are deleted).
    #[arg(long)]
    pub overwrite: bool,
    /// Run only shard i of n (`i/n`, from 0): a fixed partition of the (task, repetition)
    /// keys by a hash of the key; combine the shards' outputs with `tb merge`.
    #[arg(long)]
    pub shard: Option<String>,
    /// The time tools see (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    pub now: Option<String>,
    /// Failed attempts to list with their first differences.
    #[arg(long, default_value_t = 10)]
    pub show_failures: usize,
    /// Run the tools in a running `tb mcp-start` server (`mcp://HOST:PORT`) instead of in
    /// process: each attempt opens a session there, and its state verdicts come from there.
    /// The server must serve the same data (and clock) for the same verdicts.
    #[arg(long, value_name = "mcp://HOST:PORT")]
    pub tools: Option<String>,
    /// Bearer token for the --tools server's admin routes.
    #[arg(long, env = "TB_MCP_TOKEN", hide_env_values = true)]
    pub tools_token: Option<String>,
    /// Set by `tb campaign run`: the campaign (`{name, id, shards}`) stamped into every
    /// record's and the manifest's provenance, so `tb merge` refuses foreign shards.
    #[arg(skip)]
    pub campaign: Option<Value>,
    /// What the model is shown (tool surface, prompts).
    #[command(flatten)]
    pub shown: crate::common::SurfaceArgs,
    #[command(flatten)]
    pub servers: crate::common::ServerArgs,
}

/// The tasks selected by --test-list, --name and --inputs, in that order.
pub(crate) fn select_tasks(a: &InferArgs, ds: &tb_dataset::Dataset) -> Result<Vec<tb_core::Task>> {
    let mut tasks = Vec::new();
    if let Some(list) = &a.test_list {
        let list = ds.resolve_test_list(list);
        if let Some(w) = crate::common::release_pin_warning(ds.root(), &list) {
            eprintln!("{w}");
        }
        tasks.extend(ds.load_test_list(&list)?);
    }
    if !a.names.is_empty() {
        tasks.extend(ds.load_tasks(&a.names)?);
    }
    if let Some(p) = &a.inputs {
        tasks.extend(load_inputs(ds, p)?);
    }
    if tasks.is_empty() {
        bail!("no tasks: give --test-list FILE, --name file.py:function or --inputs PATH");
    }
    let mut seen = BTreeSet::new();
    for t in &tasks {
        if !seen.insert(t.uid.as_str()) {
            bail!(
                "task {} is selected twice: each task may appear once (use --repeat for more attempts)",
                t.uid
            );
        }
    }
    Ok(tasks)
}

/// Progress: an indicatif bar on stderr (hidden when stderr is not a terminal), and what
/// the summary needs.
struct Progress {
    bar: indicatif::ProgressBar,
    running: usize,
    done: usize,
    errors: usize,
    verdicts: usize,
    passed: usize,
    per_scenario: BTreeMap<String, (usize, usize)>,
    failures: Vec<String>,
    show_failures: usize,
}

impl Progress {
    fn new(total: usize, show_failures: usize) -> Progress {
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(total as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{elapsed_precise} [{bar:30}] {pos}/{len} {msg} ETA {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        Progress {
            bar,
            running: 0,
            done: 0,
            errors: 0,
            verdicts: 0,
            passed: 0,
            per_scenario: BTreeMap::new(),
            failures: Vec::new(),
            show_failures,
        }
    }

    fn redraw(&self) {
        let rate = if self.verdicts == 0 {
            "-".to_string()
        } else {
            format!("{:.1}%", 100.0 * self.passed as f64 / self.verdicts as f64)
        };
        self.bar.set_message(format!(
            "| running {} | errors {} | passed {}/{} ({rate})",
            self.running, self.errors, self.passed, self.verdicts
        ));
    }
}

impl Observer for Progress {
    fn started(&mut self, _key: &str) {
        self.running += 1;
        self.redraw();
    }

    fn finished(&mut self, rec: &tb_core::TrialRecord, outcome: Outcome) {
        self.running = self.running.saturating_sub(1);
        self.done += 1;
        let scenario = rec
            .metadata
            .get("scenario")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let e = self.per_scenario.entry(scenario).or_default();
        e.0 += 1;
        match outcome {
            Outcome::Passed => {
                self.passed += 1;
                self.verdicts += 1;
                e.1 += 1;
            }
            Outcome::Failed => self.verdicts += 1,
            Outcome::SystemError | Outcome::TestError => self.errors += 1,
        }
        if outcome != Outcome::Passed && self.failures.len() < self.show_failures {
            self.failures
                .push(tb_llm::redact::redact(&describe_failure(rec)).into_owned());
        }
        self.bar.inc(1);
        self.redraw();
    }
}

/// Runs `tb infer`.
pub fn run(a: &InferArgs) -> Result<ExitCode> {
    if a.repeat == 0 || a.concurrency == Some(0) {
        bail!("--repeat and --concurrency must be at least 1");
    }
    let offline = OfflineAgent::parse(&a.agent);
    if a.resume && a.output.is_none() {
        bail!("--resume needs the --output to continue");
    }
    let shard = a.shard.as_deref().map(Shard::parse).transpose()?;
    let cfg = a
        .config
        .as_ref()
        .map(|p| tb_llm::ConfigFile::load(p))
        .transpose()?;
    let root = crate::common::data_root(&a.data)?;
    let surface = a.shown.surface(&root)?;
    let prompts = a.shown.prompts()?;
    let (ds, sandbox) = crate::common::open_with(&root, &surface)?;
    let clock = crate::common::clock(&a.now)?;
    let agent_cfg = match offline {
        Some(_) => ds.agent("think").ok(),
        None => Some(ds.agent(&a.agent)?),
    };
    if offline.is_none() && a.config.is_none() {
        bail!(
            "agent `{}` is played by a model: give the run config with -c CONFIG.yaml (the offline agents `golden` and `noop` need none)",
            a.agent
        );
    }
    let tasks = select_tasks(a, &ds)?;
    let client = |c: Option<&tb_llm::LlmConfig>| -> Result<Option<tb_llm::LlmClient>> {
        c.map(tb_llm::LlmClient::new)
            .transpose()
            .map_err(anyhow::Error::from)
    };
    let models = match &cfg {
        Some(cfg) => Models {
            agent: client(cfg.agent_model.as_ref())?,
            user: client(cfg.user_model.as_ref())?,
            judge: client(cfg.judge_model.as_ref())?,
            prompts: prompts.clone(),
        },
        None => Models {
            prompts: prompts.clone(),
            ..Models::default()
        },
    };
    if offline.is_none() && models.agent.is_none() {
        bail!(
            "{}: `orchestrator.agent_model` is required to play agent `{}`",
            cfg.as_ref()
                .map(|c| c.path.display().to_string())
                .unwrap_or_default(),
            a.agent
        );
    }
    let rubric_tasks = tasks
        .iter()
        .filter(|t| !tb_eval::grade::task_rubrics(t).is_empty())
        .count();
    if rubric_tasks > 0 && models.judge.is_none() && offline.is_none() {
        bail!(
            "{rubric_tasks} task(s) have yes/no rubrics: `judge_model` is required in {}",
            cfg.as_ref()
                .map(|c| c.path.display().to_string())
                .unwrap_or_default()
        );
    }
    let models = campaign::gate_models(
        models,
        RoleLimits {
            agent: a.agent_concurrency,
            user: a.user_concurrency,
            judge: a.judge_concurrency,
        },
    );
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
    let message_timeout = secs(a.message_timeout, "--message-timeout")?;
    let attempt_timeout = secs(a.attempt_timeout, "--attempt-timeout")?;

    // Provenance: what the result depends on.
    let ids: Vec<&str> = tasks.iter().map(|t| t.uid.as_str()).collect();
    let tools_backend = match (&a.tools, &a.servers.servers) {
        (Some(addr), _) => prov::ToolsBackend::Mcp(addr.clone()),
        (None, Some(file)) => prov::ToolsBackend::External {
            servers: file.clone(),
            prefer: a.servers.prefer.clone(),
        },
        (None, None) => prov::ToolsBackend::InProcess,
    };
    let run_prov = prov::run_provenance(&prov::RunInputs {
        tb_version: env!("CARGO_PKG_VERSION"),
        tb_commit: env!("TB_GIT_COMMIT"),
        data_root: &root,
        ds: &ds,
        ids: &ids,
        test_list: a.test_list.as_deref(),
        config: cfg.as_ref(),
        agent: &a.agent,
        clock: &clock,
        message_timeout,
        attempt_timeout,
        surface: &surface,
        prompts: &prompts,
        campaign: a.campaign.as_ref(),
        tools: &tools_backend,
    })
    .with_context(|| format!("hashing the dataset files under {}", root.display()))?;
    let provenance = run_prov.provenance.clone();
    if a.tools.is_some() && a.servers.servers.is_some() {
        bail!("--tools and --servers exclude each other: the --tools server runs the sessions");
    }
    let sandbox = Arc::new(sandbox);
    let external = a.servers.backend(sandbox.clone(), clock)?;
    if let Some(x) = &external {
        for t in &tasks {
            for s in t.world_state.keys() {
                if x.route(s) == tb_external::Route::Unknown {
                    bail!(
                        "task {}: server `{s}` is neither a native domain nor in {}",
                        t.uid,
                        x.config().file.display()
                    );
                }
            }
        }
    }

    let env = Arc::new(RunEnv {
        sandbox,
        judge: Arc::new(StateJudge::new()),
        clock,
        agent_name: a.agent.clone(),
        agent: agent_cfg,
        scenarios,
        models,
        user_can_end: cfg.as_ref().is_some_and(|c| c.user_can_end_conversation),
        message_timeout,
        attempt_timeout,
        dump,
        provenance,
    });
    let choice = offline.map_or(AgentChoice::Model, AgentChoice::Offline);
    let remote_tools: Option<Arc<dyn tb_eval::tools::RemoteTools>> = match &a.tools {
        Some(addr) => Some(Arc::new(
            tb_mcp::McpServer::new(addr)
                .with_context(|| format!("--tools {addr}"))?
                .with_token(a.tools_token.clone()),
        )),
        None => external
            .clone()
            .map(|x| x as Arc<dyn tb_eval::tools::RemoteTools>),
    };

    // The files: without --output, a scratch folder removed at the end.
    let scratch = a.output.is_none().then(|| {
        std::env::temp_dir().join(format!(
            "tb-infer-{}-{}",
            std::process::id(),
            chrono::Utc::now().timestamp_nanos_opt().unwrap_or(0)
        ))
    });
    let output = match (&a.output, &scratch) {
        (Some(o), _) => o.clone(),
        (None, Some(d)) => d.join("records.jsonl"),
        (None, None) => unreachable!("scratch is set when there is no output"),
    };
    let files = CampaignFiles::new(&output, a.errors_output.as_deref());
    let mode = if a.resume {
        Mode::Resume
    } else if a.overwrite {
        Mode::Overwrite
    } else {
        Mode::Fresh
    };
    let shared: Vec<Arc<tb_core::Task>> = tasks.iter().cloned().map(Arc::new).collect();
    let planned = campaign::plan(&shared, a.repeat, shard);
    let keys = planned.len();
    let mut opened = campaign::open(
        files.clone(),
        planned,
        mode,
        &run_prov.bundle_hash,
        &run_prov.config_hash,
    )?;
    for n in &opened.notes {
        eprintln!("note: {}", tb_llm::redact::redact(n));
    }
    let prior: Vec<(String, bool)> = opened
        .prior
        .iter()
        .map(|r| {
            (
                r.scenario.clone().unwrap_or_default(),
                r.outcome == Outcome::Passed,
            )
        })
        .collect();
    let skipped = prior.len();
    let todo = opened.todo.len();

    // The run manifest: provenance, the test list, and one entry per session.
    let run_start = chrono::Utc::now().to_rfc3339();
    let mut sessions = match mode {
        Mode::Resume => campaign::manifest_sessions(&files.manifest)?,
        _ => Vec::new(),
    };
    sessions.push(json!({
        "started": run_start,
        "argv": std::env::args().collect::<Vec<_>>(),
        "resumed": a.resume,
        "skipped": skipped,
        "to_run": todo,
    }));
    let run_manifest = prov::RunManifest {
        run: &run_prov,
        env: &env,
        ids: &ids,
        repeat: a.repeat,
        shard,
        keys,
        files: &files,
    };
    let manifest = |sessions: &[Value], complete| run_manifest.to_json(sessions, complete);
    tb_campaign::store::write_json_atomic(&files.manifest, &manifest(&sessions, None))?;

    let concurrency = a.concurrency.unwrap_or(match offline {
        Some(_) => std::thread::available_parallelism().map_or(4, std::num::NonZero::get),
        None => 5,
    });
    let started = std::time::Instant::now();
    let mut progress = Progress::new(todo, a.show_failures);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let stats = rt.block_on(async {
        if let Some(x) = &external {
            x.warm_for(&tasks);
        }
        let stats = campaign::run_ordered(
            env.clone(),
            remote_tools,
            choice,
            &mut opened,
            concurrency,
            a.start_order,
            &mut progress,
        )
        .await;
        if let Some(x) = &external {
            x.shutdown().await;
            for (server, n) in x.started() {
                tracing::info!("external server `{server}`: {n} started");
            }
        }
        stats
    })?;
    progress.bar.finish_and_clear();
    drop(opened);

    // Totals over the whole output: earlier sessions' verdicts and this session's records.
    let mut per_scenario = progress.per_scenario.clone();
    let mut passed = progress.passed;
    for r in &prior {
        let e = per_scenario.entry(r.0.clone()).or_default();
        e.0 += 1;
        if r.1 {
            e.1 += 1;
            passed += 1;
        }
    }
    let attempts = skipped + stats.attempted;
    let errors = stats.errors;
    if let Some(last) = sessions.last_mut() {
        last["finished"] = json!(chrono::Utc::now().to_rfc3339());
        last["duration (sec)"] = json!(started.elapsed().as_secs_f64());
        last["attempted"] = json!(stats.attempted);
        last["verdicts"] = json!(stats.verdicts);
        last["system_errors"] = json!(stats.errors);
    }
    let mut m = manifest(&sessions, Some(errors == 0));
    m["run_duration (sec)"] = json!(started.elapsed().as_secs_f64());
    tb_campaign::store::write_json_atomic(&files.manifest, &m)?;

    let mut head = format!(
        "agent {}: {attempts} attempts of {} tasks x {}",
        a.agent,
        tasks.len(),
        a.repeat
    );
    if let Some(s) = shard {
        head.push_str(&format!(" (shard {s}: {keys} keys)"));
    }
    if a.resume {
        head.push_str(&format!(
            " ({skipped} already done, {} run now)",
            stats.attempted
        ));
    }
    println!("{head}");
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
    if offline.is_some() && env.models.judge.is_none() && rubric_tasks > 0 {
        println!(
            "note: {rubric_tasks} task(s) also have yes/no rubric checks; offline agents run no judge model, so only their database check is graded"
        );
    }
    for f in &progress.failures {
        println!("{f}");
    }
    if let Some(d) = &scratch {
        let _ = std::fs::remove_dir_all(d);
    } else {
        println!("records: {}", files.output.display());
        if errors > 0 {
            println!(
                "system errors: {errors} attempt(s) in {}; rerun them with --resume",
                files.errors.display()
            );
        }
    }
    Ok(if errors == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
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
                        s.push_str(&format!("\n    {path}: {kind} (result {r}, golden {g})"));
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
pub(crate) fn load_inputs(
    ds: &tb_dataset::Dataset,
    path: &std::path::Path,
) -> Result<Vec<tb_core::Task>> {
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
