//! One environment (one WebSocket session): reset to a task, step with the client's actions,
//! finalize once with the judges.
//!
//! The episode itself is `tb_eval`'s loop ([`tb_eval::episode::run_episode`]), the same code
//! `tb infer` runs, so the stop rules, the simulated user, agent-turn counting, end-turn tools
//! and direct responses behave identically. The loop pulls agent replies from an
//! [`tb_eval::episode::Agent`]; here that agent is a `RemoteAgent` whose replies are the
//! client's actions: each time the loop asks for the next reply, the step that caused it is
//! answered with what the loop added to the conversation meanwhile (tool results, the
//! simulated user's message). When the loop ends, the session is graded (state judge, then
//! the rubric judge for rubric tasks) and the terminal observation carries reward 1.0 or 0.0.
//!
//! Trust boundary: observations carry only the visible conversation, the visible tool list,
//! the query and the instructions. User context, golden calls and state, checks, rubrics,
//! effects, diffs, model names, paths and credentials stay here; errors are fixed strings that
//! name a stage only.

use crate::env::{BENCHMARK, Data, OWN_METADATA_KEY, RUNTIME_REVISION, Shared};
use crate::protocol::{Action, BatchCall, ErrorFrame, FieldError, TerminalCall, envelope};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use tb_core::{FinishReason, Message, Task, ToolCall, TrialRecord};
use tb_eval::episode::{
    Agent, AgentReply, AgentTools, BoxFuture, EpisodeSpec, EpisodeState, final_response,
    is_done_text, run_episode,
};
use tb_eval::run::RunEnv;
use tb_eval::tools::EpisodeSession;
use tb_llm::LlmError;
use tokio::sync::mpsc;

/// Tool names a task may not expose (they would shadow harness controls).
pub const RESERVED_TOOL_NAMES: &[&str] = &[
    "verify",
    "geteffects",
    "get_effects",
    "__get_effects__",
    "session_create",
    "session_destroy",
    "session_info",
    "list_tasks",
    "__list_tasks__",
    "task_discovery",
    "reset",
    "step",
    "state",
    "close",
    "finish",
    "done",
];

/// Longest accepted `test_uid` / `episode_id` / `agent` in a reset.
const MAX_RESET_STR: usize = 512;

/// What the server tells the loop.
#[derive(Debug)]
enum Cmd {
    Reply(Vec<Message>),
    /// A terminal turn: recorded, and the episode ends with `end_turn_tool`.
    Final(Vec<Message>),
    /// The harness ends the episode; the reason is recorded as given.
    Finish(String),
}

/// What the loop tells the server.
#[derive(Debug)]
enum Event {
    /// The loop waits for the agent's next reply: the current step is answered.
    NeedAction,
    /// The episode ended and was graded.
    Done(Box<Outcome>),
}

/// How an episode was graded.
#[derive(Debug, Clone, PartialEq)]
enum Grade {
    Pass,
    Fail,
    SystemError { stage: &'static str, graded: bool },
}

#[derive(Debug)]
struct Outcome {
    messages: Vec<Message>,
    finish_reason: String,
    grade: Grade,
}

/// The agent of the loop: its replies are the client's actions.
struct RemoteAgent {
    cmds: mpsc::Receiver<Cmd>,
    events: mpsc::Sender<Event>,
    log: Arc<Mutex<Vec<Message>>>,
    finish: Arc<Mutex<Option<String>>>,
    end_now: bool,
}

fn client_gone(what: &str) -> LlmError {
    LlmError::Transport {
        message: what.to_string(),
        endpoint: "openenv client".into(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Agent for RemoteAgent {
    fn observe(&mut self, msgs: &[Message]) {
        lock(&self.log).extend(msgs.iter().cloned());
    }

    fn reply(&mut self) -> BoxFuture<'_, Result<AgentReply, LlmError>> {
        Box::pin(async move {
            if self.events.send(Event::NeedAction).await.is_err() {
                return Err(client_gone("the session ended"));
            }
            match self.cmds.recv().await {
                Some(Cmd::Reply(messages)) => Ok(AgentReply {
                    messages,
                    usage: None,
                }),
                Some(Cmd::Final(messages)) => {
                    self.end_now = true;
                    Ok(AgentReply {
                        messages,
                        usage: None,
                    })
                }
                Some(Cmd::Finish(reason)) => {
                    *lock(&self.finish) = Some(reason);
                    Err(client_gone("finished by the harness"))
                }
                None => Err(client_gone("the session ended")),
            }
        })
    }

    fn end_requested(&mut self) -> Option<FinishReason> {
        std::mem::take(&mut self.end_now).then_some(FinishReason::EndTurnTool)
    }
}

/// Everything the episode task owns.
struct EpisodeCtx {
    task: Arc<Task>,
    system: Vec<Message>,
    tools: Arc<AgentTools>,
    session: Box<dyn EpisodeSession>,
    /// The run (models, judge, sandbox) this episode is graded with.
    run: Arc<RunEnv>,
    user_can_end: bool,
}

fn finish_name(r: FinishReason) -> String {
    serde_json::to_value(r)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_else(|| "done".into())
}

async fn run_task(ctx: EpisodeCtx, mut agent: RemoteAgent) {
    let events = agent.events.clone();
    let finish = agent.finish.clone();
    let user = ctx.run.models.user.clone();
    let spec = EpisodeSpec {
        task: &ctx.task,
        system: ctx.system.clone(),
        tools: &ctx.tools,
        user: user.as_ref(),
        user_can_end: ctx.user_can_end,
        message_timeout: None,
        keep_user_history: false,
        prompts: &ctx.run.models.prompts,
    };
    let mut session = ctx.session;
    let mut st = EpisodeState::default();
    let result = run_episode(&spec, &mut agent, session.as_mut(), &mut st).await;
    drop(agent);
    // The record's reason (for grading) and the reason the client sees: the harness's
    // `_finish` reason is recorded as given.
    let reason = match result {
        Ok(r) => Ok((r, finish_name(r))),
        Err(e) => match lock(&finish).take() {
            Some(r) => {
                let known = serde_json::from_value::<FinishReason>(Value::String(r.clone()))
                    .unwrap_or(FinishReason::AgentError);
                Ok((known, r))
            }
            None => {
                if e.role == "user" {
                    tracing::warn!(
                        event_name = "episode_failed",
                        tb_stage = "user_simulator",
                        tb_task_uid = %ctx.task.uid,
                        exception_type = %e.kind,
                        "simulated user failed (details redacted)"
                    );
                    tracing::debug!(error = %e, "simulated user failure");
                    Err("user_simulator")
                } else if e.role == "tools" {
                    tracing::warn!(
                        event_name = "episode_failed",
                        tb_stage = "tools",
                        tb_task_uid = %ctx.task.uid,
                        "tool backend failed (details redacted)"
                    );
                    tracing::debug!(error = %e, "tool backend failure");
                    Err("tools")
                } else {
                    Err("agent_channel")
                }
            }
        },
    };
    let outcome = match reason {
        Err(stage) => Outcome {
            messages: std::mem::take(&mut st.messages),
            finish_reason: "system_error".into(),
            grade: Grade::SystemError {
                stage,
                graded: false,
            },
        },
        Ok((reason, reason_text)) => {
            let messages = std::mem::take(&mut st.messages);
            let response = final_response(&messages);
            let mut rec = TrialRecord {
                uid: ctx.task.uid.clone(),
                messages: Vec::new(),
                test_result: None,
                test_context: None,
                test_tags: Some(ctx.task.test_tags.clone()),
                tools: None,
                raw_messages: None,
                user_llm_history: None,
                usage: Vec::new(),
                metadata: Map::new(),
                is_system_error: false,
                finish_reason: reason,
                key: tb_core::attempt_key(&ctx.task.uid, 0),
                repetition: 0,
                verdict: None,
                usage_by_role: tb_core::record::UsageByRole::default(),
                provenance: Map::new(),
            };
            tb_eval::grade::grade_session(
                &ctx.run,
                &ctx.task,
                session.as_mut(),
                &response,
                &mut rec,
            )
            .await;
            let grade = grade_of(&rec, &ctx.task.uid);
            Outcome {
                messages,
                finish_reason: reason_text,
                grade,
            }
        }
    };
    session.close().await;
    let _ = events.send(Event::Done(Box::new(outcome))).await;
}

fn grade_of(rec: &TrialRecord, uid: &str) -> Grade {
    let fail = |why: &str| {
        tracing::warn!(
            event_name = "grading_failed",
            tb_stage = "evaluator",
            tb_task_uid = %uid,
            reason = why,
            "grading failed (details redacted)"
        );
        Grade::SystemError {
            stage: "evaluator",
            graded: false,
        }
    };
    if rec.is_system_error {
        return fail("state judge");
    }
    if rec.metadata.contains_key("rubrics_not_judged") {
        return fail("no judge model for a rubric task");
    }
    match &rec.test_result {
        None => fail("no test result"),
        Some(t) if t.is_system_error => fail("judge model"),
        Some(t) if t.result => Grade::Pass,
        Some(_) => Grade::Fail,
    }
}

/// A running episode.
struct Live {
    task: Arc<Task>,
    tools: Arc<AgentTools>,
    tool_json: Vec<Value>,
    cmds: mpsc::Sender<Cmd>,
    events: mpsc::Receiver<Event>,
    log: Arc<Mutex<Vec<Message>>>,
    handle: tokio::task::JoinHandle<()>,
    next_call: u64,
}

impl Drop for Live {
    fn drop(&mut self) {
        self.handle.abort();
    }
}

/// Lifecycle of an environment (`state.status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// No reset yet.
    Idle,
    /// An episode runs.
    Active,
    /// The episode ended and was graded.
    Done,
    /// The session was closed.
    Closed,
    /// The last reset failed.
    Error,
}

impl Status {
    fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Active => "active",
            Status::Done => "done",
            Status::Closed => "closed",
            Status::Error => "error",
        }
    }
}

/// One OpenEnv environment.
pub struct Environment {
    shared: Arc<Shared>,
    episode_id: Option<String>,
    status: Status,
    task_uid: Option<String>,
    steps: u64,
    system_error: bool,
    metadata: Map<String, Value>,
    live: Option<Live>,
    terminal: Option<Value>,
}

impl std::fmt::Debug for Environment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Environment")
            .field("episode_id", &self.episode_id)
            .field("status", &self.status)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

fn tool_error_of(
    tools: &AgentTools,
    name: &str,
    parse_error: bool,
    content: &str,
) -> Option<&'static str> {
    if parse_error {
        return Some("invalid_args");
    }
    if !tools.names.contains(name) {
        return Some("tool_not_found");
    }
    match serde_json::from_str::<Value>(content) {
        Ok(Value::Object(m))
            if m.len() == 2 && m.contains_key("error") && m.contains_key("tool") =>
        {
            Some("execution_error")
        }
        _ => None,
    }
}

impl Environment {
    /// A fresh, idle environment.
    pub fn new(shared: Arc<Shared>) -> Self {
        Environment {
            shared,
            episode_id: None,
            status: Status::Idle,
            task_uid: None,
            steps: 0,
            system_error: false,
            metadata: Map::new(),
            live: None,
            terminal: None,
        }
    }

    /// The adapter's public metadata before a task is known: benchmark, runtime and data
    /// revisions, the agent; our own provenance under [`OWN_METADATA_KEY`].
    fn base_metadata(&self, agent: &str, data: Option<Arc<Data>>) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("benchmark".into(), json!(BENCHMARK));
        m.insert("thinkingbox_revision".into(), json!(RUNTIME_REVISION));
        for k in ["data_release", "data_revision"] {
            let v = data
                .as_ref()
                .and_then(|d| d.provenance.get(k).cloned())
                .unwrap_or_else(|| json!("local"));
            m.insert(k.into(), v);
        }
        m.insert("agent".into(), json!(agent));
        let own = data.map_or_else(
            || {
                let mut o = Map::new();
                o.insert("implementation".into(), json!("thinkingbox-rs"));
                o
            },
            |d| d.own.clone(),
        );
        m.insert(OWN_METADATA_KEY.into(), Value::Object(own));
        m
    }

    fn obs(&self, kind: &str) -> Map<String, Value> {
        let mut o = Map::new();
        o.insert("kind".into(), json!(kind));
        if let Some(uid) = &self.task_uid {
            o.insert("task_uid".into(), json!(uid));
        }
        o.insert("system_error".into(), json!(self.system_error));
        o.insert("steps_taken".into(), json!(self.steps));
        o.insert("metadata".into(), Value::Object(self.metadata.clone()));
        o
    }

    fn messages_json(&self) -> Value {
        match &self.live {
            Some(l) => serde_json::to_value(&*lock(&l.log)).unwrap_or(Value::Array(Vec::new())),
            None => Value::Array(Vec::new()),
        }
    }

    /// Ends the current episode (if any) without grading it.
    pub fn close(&mut self) {
        self.live = None;
        self.status = Status::Closed;
    }

    /// `state`.
    pub fn state(&self) -> Value {
        json!({
            "episode_id": self.episode_id,
            "step_count": self.steps,
            "task_uid": self.task_uid,
            "status": self.status.as_str(),
            "system_error": self.system_error,
        })
    }

    fn reset_error(&mut self, stage: &'static str) -> Value {
        tracing::warn!(
            event_name = "reset_failed",
            tb_stage = stage,
            tb_task_uid = self.task_uid.as_deref().unwrap_or(""),
            tb_episode_id = self.episode_id.as_deref().unwrap_or(""),
            "reset failed"
        );
        self.live = None;
        self.status = Status::Error;
        self.system_error = true;
        let mut o = self.obs("error");
        o.insert("finish_reason".into(), json!("reset_error"));
        o.insert("reward_type".into(), json!("system_error"));
        o.insert(
            "error".into(),
            json!(format!("ThinkingBox reset failed during {stage}.")),
        );
        o.insert(
            "test_summary".into(),
            json!({"passed": false, "graded": false, "is_system_error": true, "infrastructure_stage": stage}),
        );
        envelope(o, Some(0.0), true)
    }

    /// `reset`: `test_uid` (required; a task of the test list), optional `episode_id`,
    /// `agent` (a name under `dataset/agent/`), `dataset` (a data root or its `dataset/`
    /// folder, whose `testlist.yaml` or v1 release list then applies), `config` (a run config
    /// whose user and judge models then apply), ignored `seed`. `dataset` and `config` must
    /// resolve inside the server's reset roots ([`crate::Options::reset_roots`]).
    ///
    /// A client's mistake (no `test_uid`, a `test_uid` that is not in the server's test list,
    /// a malformed `agent`) is refused with a `VALIDATION_ERROR` frame naming the field (the
    /// socket stays open, the environment stays idle); unlike the reference, it is never an
    /// episode ending in a system error. Failures of the server itself are terminal error
    /// observations, as in the reference.
    pub async fn reset(&mut self, kwargs: Map<String, Value>) -> Result<Value, ErrorFrame> {
        let refuse = |field: &str, msg: &str, kind: &'static str| {
            tracing::info!(event_name = "reset_refused", field, msg, "reset refused");
            Err(ErrorFrame::validation(&[FieldError::new(
                &["data", field],
                msg,
                kind,
            )]))
        };
        self.live = None;
        self.terminal = None;
        self.steps = 0;
        self.system_error = false;
        self.task_uid = None;
        self.status = Status::Idle;
        self.episode_id = match kwargs.get("episode_id") {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= 255 => Some(s.clone()),
            _ => Some(uuid::Uuid::new_v4().to_string()),
        };
        let mut paths = [None, None];
        for (k, slot) in ["dataset", "config"].into_iter().zip(&mut paths) {
            match kwargs.get(k) {
                None | Some(Value::Null) => {}
                Some(Value::String(s)) => *slot = Some(s.clone()),
                Some(_) => return refuse(k, "Input should be a valid string", "string_type"),
            }
        }
        let [dataset, config] = paths;
        self.metadata = self.base_metadata(&self.shared.options.agent, self.shared.data());
        let agent_name = match kwargs.get("agent") {
            None | Some(Value::Null) => self.shared.options.agent.clone(),
            Some(Value::String(s))
                if !s.is_empty()
                    && s.len() <= 64
                    && s.chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') =>
            {
                s.clone()
            }
            Some(_) => {
                return refuse(
                    "agent",
                    "agent must be a name of letters, digits, '_' or '-' (at most 64)",
                    "value_error",
                );
            }
        };
        let uid = match kwargs.get("test_uid") {
            Some(Value::String(s)) if !s.is_empty() && s.len() <= MAX_RESET_STR => s.clone(),
            None | Some(Value::Null) => return refuse("test_uid", "Field required", "missing"),
            Some(Value::String(_)) => {
                return refuse(
                    "test_uid",
                    "test_uid must be 1 to 512 characters",
                    "value_error",
                );
            }
            Some(_) => return refuse("test_uid", "Input should be a valid string", "string_type"),
        };
        let settings = match &config {
            None => None,
            Some(c) => match self.shared.settings_of(c) {
                Some(s) => Some(s),
                None => {
                    return refuse(
                        "config",
                        "config must name a run config with usable user_model and judge_model inside the server's reset roots",
                        "value_error",
                    );
                }
            },
        };
        let data = match &dataset {
            None => self.shared.data(),
            Some(d) => {
                let Some(root) = self.shared.dataset_root(d) else {
                    return refuse(
                        "dataset",
                        "dataset must name a data root (or its dataset/ folder) inside the server's reset roots",
                        "value_error",
                    );
                };
                let shared = self.shared.clone();
                match tokio::task::spawn_blocking(move || shared.data_of(&root)).await {
                    Ok(Ok(d)) => Some(d),
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "a reset's dataset does not load");
                        return refuse(
                            "dataset",
                            "dataset does not load as a data root with a test list (see the server log)",
                            "value_error",
                        );
                    }
                    Err(_) => None,
                }
            }
        };
        self.metadata = self.base_metadata(&agent_name, data.clone());
        let Some(data) = data else {
            return Ok(self.reset_error("data"));
        };
        let Some(task) = data.tasks.get(&uid).cloned() else {
            return refuse(
                "test_uid",
                "test_uid is not a task of this server's test list",
                "value_error",
            );
        };
        self.task_uid = Some(uid);
        let mut provenance = data.provenance.clone();
        let run = match &settings {
            None => data.run.clone(),
            Some(s) => {
                provenance.insert("config_sha256".into(), json!(s.sha256));
                let mut run = (*data.run).clone();
                run.models = s.models.clone();
                run.models.prompts = data.run.models.prompts.clone();
                run.user_can_end = s.user_can_end;
                Arc::new(run)
            }
        };
        self.metadata
            .insert("execution_provenance".into(), Value::Object(provenance));
        self.metadata
            .insert("scenario".into(), json!(task.scenario));
        if let Some(tags) = task.tags() {
            self.metadata.insert("tags".into(), tags.clone());
        }
        if settings.is_none() && !self.shared.models_ready() {
            return Ok(self.reset_error("configuration"));
        }
        let (Ok(agent_cfg), Ok(scenario)) = (
            data.dataset.agent(&agent_name),
            data.dataset.scenario(&task.scenario),
        ) else {
            return Ok(self.reset_error("hydration"));
        };
        let remote = match &data.remote {
            Some(r) => match r.open_task(&task).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(event_name = "session_failed", tb_task_uid = %task.uid, "remote session failed to open (details redacted)");
                    tracing::debug!(error = %e, "remote session");
                    return Ok(self.reset_error("proxy_create"));
                }
            },
            None => None,
        };
        let session = match remote {
            Some(r) => r,
            None => match data.run.sandbox.session(&task, data.run.clock) {
                Ok(s) => Box::new(s) as Box<dyn EpisodeSession>,
                Err(e) => {
                    tracing::debug!(error = %e, "session");
                    return Ok(self.reset_error("proxy_create"));
                }
            },
        };
        let Ok(tools) = AgentTools::build(
            &agent_cfg.builtin_tools,
            &scenario.tools,
            &session.tool_list(),
        ) else {
            return Ok(self.reset_error("episode_init"));
        };
        if tools
            .specs
            .iter()
            .any(|t| RESERVED_TOOL_NAMES.contains(&t.name.as_str()))
        {
            return Ok(self.reset_error("episode_init"));
        }
        let tool_json: Vec<Value> = tools
            .specs
            .iter()
            .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters}))
            .collect();
        let bot = [
            scenario.bot_instructions.as_deref(),
            task.bot_instructions.as_deref(),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join("\n");
        let system = tb_eval::attempt::system_messages_of(
            Some(agent_cfg.system_instructions.as_str()),
            scenario.bot_instructions.as_deref(),
            task.bot_instructions.as_deref(),
        );
        let tools = Arc::new(tools);
        let (cmd_tx, cmd_rx) = mpsc::channel(1);
        let (ev_tx, ev_rx) = mpsc::channel(1);
        let log = Arc::new(Mutex::new(Vec::new()));
        let agent = RemoteAgent {
            cmds: cmd_rx,
            events: ev_tx,
            log: log.clone(),
            finish: Arc::new(Mutex::new(None)),
            end_now: false,
        };
        let ctx = EpisodeCtx {
            task: task.clone(),
            system,
            tools: tools.clone(),
            session,
            user_can_end: run.user_can_end,
            run,
        };
        let handle = tokio::spawn(run_task(ctx, agent));
        self.live = Some(Live {
            task: task.clone(),
            tools,
            tool_json,
            cmds: cmd_tx,
            events: ev_rx,
            log,
            handle,
            next_call: 0,
        });
        self.status = Status::Active;
        tracing::info!(
            event_name = "reset",
            tb_task_uid = %task.uid,
            tb_episode_id = self.episode_id.as_deref().unwrap_or(""),
            "episode started"
        );
        match self.wait().await {
            Ok(()) => {}
            Err(terminal) => return Ok(terminal),
        }
        let mut o = self.obs("reset");
        o.insert("task".into(), json!(task.query.clone().unwrap_or_default()));
        o.insert(
            "system_instructions".into(),
            json!(agent_cfg.system_instructions),
        );
        o.insert("bot_instructions".into(), json!(bot));
        if let Some(l) = &self.live {
            o.insert("tools".into(), Value::Array(l.tool_json.clone()));
        }
        o.insert("messages".into(), self.messages_json());
        Ok(envelope(o, None, false))
    }

    /// Waits for the loop: `Ok` when it wants the next action, `Err(terminal envelope)` when
    /// the episode ended (graded, or failed).
    async fn wait(&mut self) -> Result<(), Value> {
        let ev = match self.live.as_mut() {
            Some(l) => l.events.recv().await,
            None => None,
        };
        match ev {
            Some(Event::NeedAction) => Ok(()),
            Some(Event::Done(outcome)) => Err(self.finalize(*outcome)),
            None => Err(self.finalize(Outcome {
                messages: self
                    .live
                    .as_ref()
                    .map(|l| lock(&l.log).clone())
                    .unwrap_or_default(),
                finish_reason: "system_error".into(),
                grade: Grade::SystemError {
                    stage: "episode",
                    graded: false,
                },
            })),
        }
    }

    async fn send(&mut self, cmd: Cmd) -> Result<(), Value> {
        if let Some(l) = &self.live
            && l.cmds.send(cmd).await.is_err()
        {
            tracing::debug!("the episode loop ended before the action arrived");
        }
        // Either the loop answers, or it is gone and `wait` reports how it ended.
        self.wait().await
    }

    fn finalize(&mut self, outcome: Outcome) -> Value {
        let live = self.live.take();
        let (reward_type, passed, graded, stage) = match &outcome.grade {
            Grade::Pass => ("pass", true, true, None),
            Grade::Fail => ("fail", false, true, None),
            Grade::SystemError { stage, graded } => ("system_error", false, *graded, Some(*stage)),
        };
        self.system_error = stage.is_some();
        self.status = Status::Done;
        let mut o = self.obs("terminal");
        if let Some(l) = &live
            && !o.contains_key("task_uid")
        {
            o.insert("task_uid".into(), json!(l.task.uid));
        }
        o.insert("response".into(), json!(final_response(&outcome.messages)));
        o.insert(
            "messages".into(),
            serde_json::to_value(&outcome.messages).unwrap_or(Value::Array(Vec::new())),
        );
        o.insert("finish_reason".into(), json!(outcome.finish_reason));
        o.insert("reward_type".into(), json!(reward_type));
        let mut summary =
            json!({"passed": passed, "graded": graded, "is_system_error": stage.is_some()});
        if let Some(s) = stage {
            summary["infrastructure_stage"] = json!(s);
            o.insert(
                "error".into(),
                json!(format!("ThinkingBox infrastructure failure during {s}.")),
            );
        }
        o.insert("test_summary".into(), summary);
        tracing::info!(
            event_name = "episode_finished",
            tb_task_uid = self.task_uid.as_deref().unwrap_or(""),
            tb_episode_id = self.episode_id.as_deref().unwrap_or(""),
            reward_type,
            finish_reason = %outcome.finish_reason,
            steps = self.steps,
            "episode finished"
        );
        let env = envelope(o, Some(if passed { 1.0 } else { 0.0 }), true);
        self.terminal = Some(env.clone());
        env
    }

    fn not_active(&self) -> Value {
        let mut o = self.obs("error");
        o.insert("error".into(), json!("Environment is not active"));
        envelope(o, None, false)
    }

    fn step_error(&self, msg: &str) -> Value {
        let mut o = self.obs("error");
        o.insert("error".into(), json!(msg));
        o.insert("messages".into(), self.messages_json());
        envelope(o, None, false)
    }

    fn call_id(&mut self, given: Option<String>) -> String {
        if let Some(id) = given {
            id
        } else {
            let l = self.live.as_mut();
            let n = l.map(|l| {
                l.next_call += 1;
                l.next_call
            });
            format!("call_tb{}", n.unwrap_or(0))
        }
    }

    /// Pushes the agent's messages to the visible log (marked as the loop marks them) and
    /// hands them to the loop. Returns the log length before them.
    async fn submit(&mut self, mut msgs: Vec<Message>, last: bool) -> Result<usize, Value> {
        let Some(l) = &self.live else {
            return Err(self.not_active());
        };
        for m in &mut msgs {
            match m {
                Message::Text {
                    metadata, content, ..
                } if is_done_text(content) => {
                    metadata.insert("is_done".into(), json!(true));
                }
                Message::ParallelToolCall {
                    metadata,
                    tool_calls,
                } => {
                    for tc in tool_calls.iter_mut() {
                        if l.tools.end_turn.contains(&tc.name) {
                            metadata.insert("is_end_turn_tool".into(), json!(true));
                            tc.metadata.insert("is_end_turn_tool".into(), json!(true));
                        }
                    }
                }
                _ => {}
            }
        }
        let start = {
            let mut log = lock(&l.log);
            let n = log.len();
            log.extend(msgs.iter().cloned());
            n
        };
        self.steps += 1;
        self.send(if last {
            Cmd::Final(msgs)
        } else {
            Cmd::Reply(msgs)
        })
        .await?;
        Ok(start)
    }

    fn delta(&self, start: usize) -> Vec<Message> {
        match &self.live {
            Some(l) => lock(&l.log)
                .get(start..)
                .map(<[Message]>::to_vec)
                .unwrap_or_default(),
            None => Vec::new(),
        }
    }

    /// `step`.
    pub async fn step(&mut self, action: Action) -> Value {
        if let Some(t) = &self.terminal {
            return t.clone();
        }
        if self.live.is_none() {
            return self.not_active();
        }
        match action {
            Action::ListTools => {
                let mut o = self.obs("tools");
                if let Some(l) = &self.live {
                    o.insert("tools".into(), Value::Array(l.tool_json.clone()));
                }
                o.insert("messages".into(), self.messages_json());
                envelope(o, None, false)
            }
            Action::Finish(reason) => match self.send(Cmd::Finish(reason)).await {
                Err(t) => t,
                Ok(()) => self.step_error("The episode did not finish"),
            },
            Action::CallTool {
                tool_name,
                arguments,
                call_id,
            } => {
                let id = self.call_id(call_id);
                let call = BatchCall {
                    name: tool_name,
                    arguments: Value::Object(arguments),
                    call_id: Some(id),
                    parse_error: None,
                };
                self.call_tools(vec![call], false).await
            }
            Action::CallTools(calls) => self.call_tools(calls, true).await,
            Action::SubmitMessage {
                content,
                terminal_tool_calls,
                tool_calls_before_content,
            } => {
                self.submit_message(content, terminal_tool_calls, tool_calls_before_content)
                    .await
            }
        }
    }

    async fn call_tools(&mut self, calls: Vec<BatchCall>, batch: bool) -> Value {
        let mut tool_calls = Vec::with_capacity(calls.len());
        let mut parse_errors = Vec::with_capacity(calls.len());
        for c in calls {
            let id = self.call_id(c.call_id);
            let mut metadata = Map::new();
            if let Some(e) = &c.parse_error {
                metadata.insert("error".into(), json!(e));
            }
            parse_errors.push(c.parse_error.is_some());
            tool_calls.push(ToolCall {
                metadata,
                name: c.name,
                arguments: c.arguments,
                id,
            });
        }
        let msg = Message::ParallelToolCall {
            metadata: Map::new(),
            tool_calls: tool_calls.clone(),
        };
        let start = match self.submit(vec![msg], false).await {
            Ok(s) => s,
            Err(terminal) => return terminal,
        };
        let delta = self.delta(start);
        let Some(l) = &self.live else {
            return self.not_active();
        };
        let directs: Vec<String> = delta
            .iter()
            .filter_map(|m| match m {
                Message::Text {
                    metadata, content, ..
                } if metadata.get("tag").and_then(Value::as_str) == Some("direct") => {
                    Some(content.clone())
                }
                _ => None,
            })
            .collect();
        let mut results = Vec::new();
        for (i, tc) in tool_calls.iter().enumerate() {
            let content = delta.iter().find_map(|m| match m {
                Message::ToolResponse { id, content, .. } if *id == tc.id => Some(content.clone()),
                _ => None,
            });
            let Some(content) = content else { continue };
            let mut r = Map::new();
            r.insert("name".into(), json!(tc.name));
            r.insert("call_id".into(), json!(tc.id));
            if let Some(e) = tool_error_of(&l.tools, &tc.name, parse_errors[i], &content) {
                r.insert("tool_error".into(), json!(e));
            }
            r.insert("content".into(), json!(content));
            results.push(r);
        }
        // The loop emits direct responses after the batch; they belong to direct tools.
        if !directs.is_empty()
            && let Some(r) = results.iter_mut().rev().find(|r| {
                r.get("name")
                    .and_then(Value::as_str)
                    .is_some_and(|n| l.tools.direct.contains_key(n))
            })
        {
            r.insert("direct_response".into(), json!(directs.join("\n")));
        }
        let mut o;
        if batch {
            o = self.obs("tool_batch");
            o.insert(
                "tool_results".into(),
                Value::Array(results.into_iter().map(Value::Object).collect()),
            );
        } else {
            o = self.obs("tool");
            let r = results.into_iter().next().unwrap_or_default();
            o.insert("tool_name".into(), json!(tool_calls[0].name));
            o.insert("call_id".into(), json!(tool_calls[0].id));
            o.insert(
                "tool_result".into(),
                r.get("content").cloned().unwrap_or(json!("")),
            );
            for k in ["tool_error", "direct_response"] {
                if let Some(v) = r.get(k) {
                    o.insert(k.into(), v.clone());
                }
            }
        }
        o.insert("messages".into(), self.messages_json());
        envelope(o, None, false)
    }

    /// `submit_message`. With terminal tool calls, it is a terminal turn: every call must
    /// name a tool of the task and at least one an end-turn tool; the calls are recorded
    /// (none runs) in the order the provider gave them, and the episode ends with
    /// `end_turn_tool`.
    async fn submit_message(
        &mut self,
        content: Option<String>,
        terminal: Vec<TerminalCall>,
        calls_first: bool,
    ) -> Value {
        if let Some(l) = &self.live
            && !terminal.is_empty()
        {
            if terminal.iter().any(|c| !l.tools.names.contains(&c.name)) {
                return self.step_error("Terminal turn contains a tool unavailable to this task");
            }
            if !terminal.iter().any(|c| l.tools.end_turn.contains(&c.name)) {
                return self.step_error("Terminal turn requires a configured end-turn tool");
            }
        }
        let mut msgs = Vec::new();
        let text = content.map(|c| Message::text("assistant", c));
        let last = !terminal.is_empty();
        let calls = if terminal.is_empty() {
            None
        } else {
            let mut tcs = Vec::new();
            for c in terminal {
                let id = self.call_id(c.call_id);
                let mut metadata = Map::new();
                if let Some(e) = c.parse_error {
                    metadata.insert("error".into(), json!(e));
                }
                tcs.push(ToolCall {
                    metadata,
                    name: c.name,
                    arguments: c.arguments,
                    id,
                });
            }
            Some(Message::ParallelToolCall {
                metadata: Map::new(),
                tool_calls: tcs,
            })
        };
        if calls_first {
            msgs.extend(calls);
            msgs.extend(text);
        } else {
            msgs.extend(text);
            msgs.extend(calls);
        }
        let start = match self.submit(msgs, last).await {
            Ok(s) => s,
            Err(terminal) => return terminal,
        };
        let delta = self.delta(start);
        let user = delta.iter().rev().find_map(|m| match m {
            Message::Text { role, content, .. } if role == "user" => Some(content.clone()),
            _ => None,
        });
        let response = delta
            .iter()
            .find_map(|m| match m {
                Message::Text { role, content, .. } if role == "assistant" => Some(content.clone()),
                _ => None,
            })
            .unwrap_or_default();
        let mut o = self.obs("user");
        o.insert("response".into(), json!(response));
        if let Some(u) = user {
            o.insert("user_message".into(), json!(u));
        }
        o.insert("messages".into(), self.messages_json());
        envelope(o, None, false)
    }
}
