//! `tb tui`: play one task (or a scenario) in the terminal. The options are read and the
//! task, sandbox and models loaded here; the app itself is `tb-tui`.

use anyhow::{Context, Result, bail};
use clap::{ArgGroup, Args, ValueEnum};
use serde_json::{Map, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tb_eval::run::{Dump, Models, RunEnv};
use tb_tui::Play;

/// Who you play.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlayArg {
    /// The user: the config's agent model answers (the reference's mode).
    User,
    /// The agent: you call the tools and answer the user (no model needed).
    Agent,
    /// Watch the model agent and the simulated user, step by step.
    Watch,
}

/// `tb tui` arguments.
#[derive(Debug, Args)]
#[command(group(ArgGroup::new("what").required(true).args(["name", "scenario"])))]
pub struct TuiArgs {
    /// Run config YAML (orchestrator.agent_model, user_model, judge_model); not needed for
    /// --play agent.
    #[arg(short = 'c', long)]
    pub config: Option<PathBuf>,
    /// Dataset directory (or the data root holding `dataset/` and `servers/`).
    #[arg(short = 'd', long = "dataset", conflicts_with = "data")]
    pub dataset: Option<PathBuf>,
    /// Data root (the folder holding `dataset/` and `servers/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// The agent config (`dataset/agent/NAME.yaml`): instructions and builtin tools.
    /// Default `base`, or `think` when the dataset has no `base`.
    #[arg(short = 'a', long)]
    pub agent: Option<String>,
    /// The task, `FILE.py:TEST`.
    #[arg(short = 'n', long)]
    pub name: Option<String>,
    /// A scenario, without a task (no checks, no golden state).
    #[arg(short = 's', long)]
    pub scenario: Option<String>,
    /// The first user message (overrides the task's query).
    #[arg(short = 'q', long, default_value = "")]
    pub query: String,
    /// Who you play.
    #[arg(long, value_enum, default_value = "user")]
    pub play: PlayArg,
    /// The time tools see (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    pub now: Option<String>,
    /// Budget in seconds of one model call, retries included.
    #[arg(long, default_value_t = 300.0)]
    pub message_timeout: f64,
    /// External tool servers (--servers FILE, --python, --prefer external, the start, init
    /// and call timeouts): the task's servers that run from the file start when the session
    /// opens and are torn down when tb tui ends.
    #[command(flatten)]
    pub servers: crate::common::ServerArgs,
}

/// Runs `tb tui`.
pub fn run(a: &TuiArgs) -> Result<ExitCode> {
    let play = match a.play {
        PlayArg::User => Play::User,
        PlayArg::Agent => Play::Agent,
        PlayArg::Watch => Play::Watch,
    };
    let cfg = a
        .config
        .as_ref()
        .map(|p| tb_llm::ConfigFile::load(p))
        .transpose()?;
    if play != Play::Agent {
        match &cfg {
            None => bail!(
                "--play {} needs a model as the agent: give -c CONFIG.yaml with orchestrator.agent_model (or play the agent yourself: --play agent, no config needed)",
                play.name()
            ),
            Some(c) if c.agent_model.is_none() => bail!(
                "{}: `orchestrator.agent_model` is required for --play {}",
                c.path.display(),
                play.name()
            ),
            _ => {}
        }
    }
    if !(a.message_timeout > 0.0 && a.message_timeout.is_finite()) {
        bail!("--message-timeout must be a positive number of seconds");
    }
    if a.servers.server_pool > 0 {
        bail!(
            "--server-pool: tb tui plays one session, whose servers start when it opens (no pool)"
        );
    }
    let root = crate::common::data_root(&a.dataset.clone().or_else(|| a.data.clone()))?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let clock = crate::common::clock(&a.now)?;
    let mut notes = Vec::new();
    let (agent_name, agent_cfg) = match &a.agent {
        Some(n) => (n.clone(), ds.agent(n)?),
        None => {
            if let Ok(c) = ds.agent("base") {
                ("base".to_string(), c)
            } else {
                let c = ds.agent("think").context(
                    "no agent `base` (nor `think`) under dataset/agent/: give one with -a NAME",
                )?;
                notes.push("The dataset has no agent `base`; using `think`.".to_string());
                ("think".to_string(), c)
            }
        }
    };
    let (task, is_task) = match (&a.name, &a.scenario) {
        (Some(n), None) => {
            let mut t = ds.load_task(n)?;
            if !a.query.is_empty() {
                t.query = Some(a.query.clone());
            }
            (t, true)
        }
        (None, Some(s)) => {
            let sc = ds.scenario(s).map_err(|e| {
                let known = ds.scenario_names().unwrap_or_default().join(", ");
                anyhow::anyhow!("{e} (scenarios: {known})")
            })?;
            (
                tb_core::Task {
                    uid: "none:none".into(),
                    scenario: s.clone(),
                    query: (!a.query.is_empty()).then(|| a.query.clone()),
                    user_context: None,
                    max_user_sim_turns: None,
                    max_agent_sim_turns: None,
                    bot_instructions: None,
                    init: Map::new(),
                    world_state: sc.world_state.clone(),
                    raw: Map::new(),
                    checks: Vec::new(),
                    test_tags: tb_core::TestTags::default(),
                    source: tb_core::SourceLoc {
                        path: sc.path.display().to_string(),
                        line: 0,
                    },
                },
                false,
            )
        }
        _ => bail!("exactly one of --name and --scenario must be given"),
    };
    let mut scenarios = HashMap::new();
    scenarios.insert(task.scenario.clone(), ds.scenario(&task.scenario)?);
    let client = |c: Option<&tb_llm::LlmConfig>| -> Result<Option<tb_llm::LlmClient>> {
        c.map(tb_llm::LlmClient::new)
            .transpose()
            .map_err(anyhow::Error::from)
    };
    let models = match &cfg {
        Some(cfg) => Models {
            agent: if play == Play::Agent {
                None
            } else {
                client(cfg.agent_model.as_ref())?
            },
            user: client(cfg.user_model.as_ref())?,
            judge: client(cfg.judge_model.as_ref())?,
            prompts: Arc::default(),
        },
        None => Models::default(),
    };
    if is_task && !tb_eval::grade::task_rubrics(&task).is_empty() && models.judge.is_none() {
        notes.push(
            "This task has yes/no rubrics and no judge_model is configured: /test grades the state only."
                .into(),
        );
    }
    let mut provenance = Map::new();
    provenance.insert("tb_version".into(), json!(env!("CARGO_PKG_VERSION")));
    provenance.insert("tb_commit".into(), json!(env!("TB_GIT_COMMIT")));
    provenance.insert("data_root".into(), json!(root.display().to_string()));
    provenance.insert("agent".into(), json!(agent_name));
    provenance.insert("clock".into(), json!(clock.now_iso()));
    let sandbox = Arc::new(sandbox);
    let external = a.servers.backend(sandbox.clone(), clock)?;
    if let Some(x) = &external {
        for s in task.world_state.keys() {
            if x.route(s) == tb_external::Route::Unknown {
                bail!(
                    "{} {}: server `{s}` is neither a native domain nor in {}",
                    if is_task { "task" } else { "scenario" },
                    if is_task { &task.uid } else { &task.scenario },
                    x.config().file.display()
                );
            }
        }
    }
    let external_here = external.as_ref().is_some_and(|x| x.is_external(&task));
    match (&a.servers.servers, external_here) {
        (Some(file), true) => {
            provenance.insert(
                "tools".into(),
                json!({"backend": "external", "servers": file.display().to_string(), "prefer": a.servers.prefer}),
            );
        }
        (Some(file), false) => {
            provenance.insert("tools".into(), json!({"backend": "in-process"}));
            notes.push(format!(
                "Every server of this task runs natively: {} is not used (--prefer external runs its servers).",
                file.display()
            ));
        }
        (None, _) => {
            provenance.insert("tools".into(), json!({"backend": "in-process"}));
        }
    }
    provenance.insert(
        "source".into(),
        json!({"command": "tb tui", "play": play.name()}),
    );
    let mut names = Map::new();
    if let Some(cfg) = &cfg {
        for (role, c) in [
            ("agent", &models.agent.as_ref().and(cfg.agent_model.clone())),
            ("user", &cfg.user_model),
            ("judge", &cfg.judge_model),
        ] {
            if let Some(c) = c {
                names.insert(role.into(), json!(c.deployment));
            }
        }
    }
    if play == Play::Agent {
        names.insert("agent".into(), json!("human (tb tui)"));
    }
    provenance.insert("models".into(), serde_json::Value::Object(names));
    let env = RunEnv {
        sandbox,
        judge: Arc::new(tb_eval::judge::StateJudge::new()),
        clock,
        agent_name: agent_name.clone(),
        agent: Some(agent_cfg),
        scenarios,
        models,
        user_can_end: cfg.as_ref().is_some_and(|c| c.user_can_end_conversation),
        message_timeout: Some(std::time::Duration::from_secs_f64(a.message_timeout)),
        attempt_timeout: None,
        dump: Dump::default(),
        provenance,
    };
    let agent_label = match play {
        Play::Agent => "human".to_string(),
        _ => agent_name,
    };
    tb_tui::run(tb_tui::Setup {
        env,
        task,
        is_task,
        play,
        dataset: Some(Arc::new(ds)),
        agent_label,
        notes,
        remote: external.map(|x| x as Arc<dyn tb_eval::tools::RemoteTools>),
    })?;
    Ok(ExitCode::SUCCESS)
}
