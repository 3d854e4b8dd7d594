//! The episode loop, with the reference's semantics (`agent_user_loop.py`): the task's query
//! as the first user message; agent turns that call tools sequentially until the agent writes
//! visible text or calls an end-turn tool; `<DONE>` at the end of the agent's text ends the
//! episode; otherwise the simulated user answers, up to `max_user_sim_turns`;
//! `max_agent_sim_turns` caps agent actions over the whole episode. Every finish reason is
//! recorded. Agents are anything implementing [`Agent`]: a model ([`ModelAgent`]) or the
//! offline agents ([`crate::offline::OfflineAgent`]).

use crate::tools::ToolBackend;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tb_core::{FinishReason, Message, Task, ToolCall, Usage};
use tb_llm::{ChatSession, EncodedTools, LlmClient, LlmError, Provider, ToolSpec};

/// The `<DONE>` marker.
pub const DONE: &str = "<DONE>";

/// A boxed future (agents are used as trait objects).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One agent reply.
#[derive(Debug, Clone, Default)]
pub struct AgentReply {
    /// The reply's messages (think, text, tool calls).
    pub messages: Vec<Message>,
    /// Usage of the model call, if a model was called.
    pub usage: Option<Usage>,
}

/// An agent: sees the conversation, answers with messages.
pub trait Agent: Send {
    /// Messages added to the conversation that did not come from the agent (system prompts,
    /// user messages, tool responses, direct responses), in order.
    fn observe(&mut self, msgs: &[Message]);
    /// The agent's next reply.
    fn reply(&mut self) -> BoxFuture<'_, Result<AgentReply, LlmError>>;
    /// The provider-native conversation, if the agent keeps one (for `--dump raw`).
    fn raw(&self) -> Option<Value> {
        None
    }
    /// Asked after each agent turn: a reason to end the episode now, before the end check
    /// and the simulated user (an agent driven from outside may declare its turn final).
    fn end_requested(&mut self) -> Option<FinishReason> {
        None
    }
}

/// A model as the agent: a [`ChatSession`] with the agent's tools.
#[derive(Debug)]
pub struct ModelAgent {
    session: ChatSession,
}

impl ModelAgent {
    /// A model agent with these tools.
    pub fn new(client: LlmClient, tools: &[ToolSpec]) -> Result<Self, LlmError> {
        Ok(ModelAgent {
            session: ChatSession::new(client, tools)?,
        })
    }

    /// A model agent with tools already encoded for its provider (`None`: no tools).
    pub fn with_tools(
        client: LlmClient,
        tools: Option<Arc<EncodedTools>>,
    ) -> Result<Self, LlmError> {
        Ok(ModelAgent {
            session: ChatSession::with_tools(client, tools)?,
        })
    }
}

impl Agent for ModelAgent {
    fn observe(&mut self, msgs: &[Message]) {
        self.session.add(msgs);
    }

    fn reply(&mut self) -> BoxFuture<'_, Result<AgentReply, LlmError>> {
        Box::pin(async move {
            let c = self.session.complete().await?;
            Ok(AgentReply {
                messages: c.messages,
                usage: Some(c.usage),
            })
        })
    }

    fn raw(&self) -> Option<Value> {
        Some(Value::Array(self.session.native().to_vec()))
    }
}

/// The tools the agent sees: builtins first, then the scenario's tools that the session
/// provides, with the scenario's overrides applied.
#[derive(Debug, Clone, Default)]
pub struct AgentTools {
    /// Tool specs in the order given to the model.
    pub specs: Vec<ToolSpec>,
    /// Names of every tool the model was given.
    pub names: HashSet<String>,
    /// Tools whose call ends the episode (not executed).
    pub end_turn: HashSet<String>,
    /// Tools with a direct-response format string.
    pub direct: HashMap<String, String>,
    /// Scenario tools the session does not provide (not shown to the model).
    pub missing: Vec<String>,
}

impl AgentTools {
    /// Builds the tool list: the builtins in their YAML order, then the session's tools in
    /// its listing order (the reference's registration order) that the scenario names.
    /// Duplicate names are an error, as in the reference.
    pub fn build(
        builtins: &[tb_dataset::ToolDef],
        scenario_tools: &[tb_dataset::ToolOverride],
        tool_list: &[Value],
    ) -> Result<Self, String> {
        let mut t = AgentTools::default();
        for b in builtins {
            t.push(ToolSpec {
                name: b.name.clone(),
                description: b.description.clone(),
                parameters: Value::Object(b.input_schema.clone()),
            })?;
            if b.is_end_turn {
                t.end_turn.insert(b.name.clone());
            }
            if let Some(d) = &b.direct_response {
                t.direct.insert(b.name.clone(), d.clone());
            }
        }
        // the reference's order: the session's listing order (the servers' registration
        // order), filtered by the scenario's tool names
        let mut wanted: HashMap<&str, &tb_dataset::ToolOverride> = HashMap::new();
        for o in scenario_tools {
            if wanted.insert(o.name.as_str(), o).is_some() {
                return Err(format!("duplicate tool name `{}`", o.name));
            }
        }
        let listed: HashSet<&str> = tool_list
            .iter()
            .filter_map(|v| v.get("name")?.as_str())
            .collect();
        t.missing = scenario_tools
            .iter()
            .filter(|o| !listed.contains(o.name.as_str()))
            .map(|o| o.name.clone())
            .collect();
        let mut seen: HashSet<&str> = HashSet::new();
        for server_tool in tool_list {
            let Some(name) = server_tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let Some(o) = wanted.get(name).copied() else {
                continue;
            };
            if !seen.insert(name) {
                continue;
            }
            let mut description = server_tool
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut parameters = server_tool
                .get("inputSchema")
                .cloned()
                .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
            if let Some(d) = &o.override_description {
                description.clone_from(d);
            }
            if let Some(args) = &o.override_arg_description {
                for (param, desc) in args {
                    if let Some(p) = parameters
                        .get_mut("properties")
                        .and_then(|p| p.get_mut(param))
                        .and_then(Value::as_object_mut)
                    {
                        p.insert("description".into(), desc.clone());
                    } else {
                        tracing::warn!(
                            "tool {}: override_arg_description names `{param}`, which is not a parameter; ignored",
                            o.name
                        );
                    }
                }
            }
            t.push(ToolSpec {
                name: o.name.clone(),
                description,
                parameters,
            })?;
            if o.is_end_turn {
                t.end_turn.insert(o.name.clone());
            }
            if let Some(d) = &o.direct_response {
                t.direct.insert(o.name.clone(), d.clone());
            }
        }
        Ok(t)
    }

    fn push(&mut self, spec: ToolSpec) -> Result<(), String> {
        if !self.names.insert(spec.name.clone()) {
            return Err(format!("duplicate tool name `{}`", spec.name));
        }
        self.specs.push(spec);
        Ok(())
    }
}

/// An agent's tools built once for attempts that share them (same agent config, scenario
/// and tool list), with their encodings per provider made on first use.
#[derive(Debug)]
pub(crate) struct PreparedTools {
    /// The tools, or why they cannot be built (`ToolListError`).
    pub tools: Result<AgentTools, String>,
    encoded: Mutex<Vec<(Provider, Arc<EncodedTools>)>>,
}

impl PreparedTools {
    /// Builds the tools (see [`AgentTools::build`]).
    pub fn build(
        builtins: &[tb_dataset::ToolDef],
        scenario_tools: &[tb_dataset::ToolOverride],
        tool_list: &[Value],
    ) -> Self {
        PreparedTools {
            tools: AgentTools::build(builtins, scenario_tools, tool_list),
            encoded: Mutex::new(Vec::new()),
        }
    }

    /// The tools encoded for a provider (`None` without tools), encoded once.
    pub fn encoded(&self, provider: Provider) -> Result<Option<Arc<EncodedTools>>, LlmError> {
        let Ok(tools) = &self.tools else {
            return Ok(None);
        };
        if tools.specs.is_empty() {
            return Ok(None);
        }
        let mut enc = self
            .encoded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, e)) = enc.iter().find(|(p, _)| *p == provider) {
            return Ok(Some(e.clone()));
        }
        let e = Arc::new(EncodedTools::new(provider, &tools.specs)?);
        enc.push((provider, e.clone()));
        Ok(Some(e))
    }
}

/// What an episode needs besides the agent and the session.
#[derive(Debug, Clone)]
pub struct EpisodeSpec<'a> {
    /// The task.
    pub task: &'a Task,
    /// System messages (agent instructions, bot instructions).
    pub system: Vec<Message>,
    /// The agent's tools.
    pub tools: &'a AgentTools,
    /// The simulated user's model, if any.
    pub user: Option<&'a LlmClient>,
    /// The user may end the conversation with `<DONE>`.
    pub user_can_end: bool,
    /// Budget of one model call (including its retries).
    pub message_timeout: Option<Duration>,
    /// Keep each simulated-user exchange.
    pub keep_user_history: bool,
    /// The simulated user's prompts.
    pub prompts: &'a crate::prompts::Prompts,
}

/// The [`EpisodeError::kind`] of a tool backend's operational failure, as text.
pub const TOOL_BACKEND_ERROR: &str = ErrorKind::ToolBackendError.as_str();

/// The class of an operational failure, recorded as `metadata.error.type` (the variant's
/// name, so records and sidecars keep their strings).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum ErrorKind {
    /// The model's configuration was rejected.
    ModelConfigError,
    /// The request could not be encoded.
    ModelEncodeError,
    /// HTTP 429.
    RateLimited,
    /// Another HTTP failure.
    HttpError,
    /// A budget ran out (a model call's or the attempt's).
    Timeout,
    /// No connection.
    ConnectError,
    /// The connection failed mid-request.
    TransportError,
    /// The model's reply could not be read.
    MalformedReply,
    /// The tool backend failed (not a tool's own error).
    ToolBackendError,
    /// The model's reply has the API's shape but the reference's client stops on it
    /// (recorded as the reference records it: `RuntimeError`).
    ReplyRejected,
}

impl ErrorKind {
    /// The kind's name (what records carry).
    pub const fn as_str(self) -> &'static str {
        match self {
            ErrorKind::ModelConfigError => "ModelConfigError",
            ErrorKind::ModelEncodeError => "ModelEncodeError",
            ErrorKind::RateLimited => "RateLimited",
            ErrorKind::HttpError => "HttpError",
            ErrorKind::Timeout => "Timeout",
            ErrorKind::ConnectError => "ConnectError",
            ErrorKind::TransportError => "TransportError",
            ErrorKind::MalformedReply => "MalformedReply",
            ErrorKind::ToolBackendError => "ToolBackendError",
            ErrorKind::ReplyRejected => "RuntimeError",
        }
    }

    /// The kind of a model client's failure.
    pub fn of_llm(e: &LlmError) -> Self {
        match e {
            LlmError::Config(_) => ErrorKind::ModelConfigError,
            LlmError::Encode(_) => ErrorKind::ModelEncodeError,
            LlmError::Http { status: 429, .. } => ErrorKind::RateLimited,
            LlmError::Http { .. } => ErrorKind::HttpError,
            LlmError::Timeout { .. } => ErrorKind::Timeout,
            LlmError::Connect { .. } => ErrorKind::ConnectError,
            LlmError::Transport { .. } => ErrorKind::TransportError,
            LlmError::Malformed { .. } => ErrorKind::MalformedReply,
            LlmError::Rejected { .. } => ErrorKind::ReplyRejected,
        }
    }
}

impl std::fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An operational failure during an episode: it makes the attempt a system error.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {message}", display_role(role))]
pub struct EpisodeError {
    /// `agent` or `user` (a model), `tools` (the tool backend), or `attempt` (its budget).
    pub role: &'static str,
    /// Class (`Timeout`, `HttpError`, ...).
    pub kind: ErrorKind,
    /// Message.
    pub message: String,
}

fn display_role(role: &str) -> String {
    match role {
        "tools" => "tool backend".into(),
        r => format!("{r} model"),
    }
}

impl EpisodeError {
    fn llm(role: &'static str, e: LlmError) -> Self {
        EpisodeError {
            role,
            kind: ErrorKind::of_llm(&e),
            message: e.to_string(),
        }
    }
}

/// The state of an episode, kept outside the loop so that a cancelled episode (attempt
/// budget) still leaves its partial conversation.
#[derive(Debug, Clone, Default)]
pub struct EpisodeState {
    /// The whole conversation, system prompts first.
    pub messages: Vec<Message>,
    /// One entry per agent model call.
    pub agent_usage: Vec<Usage>,
    /// Simulated-user usage, summed.
    pub user_usage: Usage,
    /// Seconds in agent calls.
    pub time_agent: f64,
    /// Seconds in user calls.
    pub time_user: f64,
    /// Seconds in tools.
    pub time_tool: f64,
    /// `[system, user, reply]` per simulated-user call (when kept).
    pub user_llm_history: Vec<Value>,
    /// Every tool call with its response (end-turn calls with an empty response).
    pub tool_calls: Vec<(ToolCall, String)>,
    /// Agent actions counted against `max_agent_sim_turns`.
    pub agent_turns: u64,
    /// Replies holding only reasoning, in a row (ours: guarded).
    pub reasoning_only_replies: u64,
}

/// Replies with only reasoning (no text, no call) tolerated in a row before the turn is cut.
/// The reference keeps calling the agent on them without a bound; ours keeps calling it as the
/// reference does (a model that thinks over several replies gets the same requests), but not
/// forever: past this many in a row the turn ends, and the record says so
/// (`metadata.reasoning_only_replies`).
pub const MAX_REASONING_ONLY_REPLIES: u64 = 100;

fn meta_bool(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn tag(m: &Map<String, Value>) -> &str {
    m.get("tag").and_then(Value::as_str).unwrap_or("text")
}

/// Whether the stripped text ends with `<DONE>`.
pub fn is_done_text(s: &str) -> bool {
    s.trim().ends_with(DONE)
}

/// The reference's end check: scanning back, the first visible non-dummy assistant text
/// decides (`done` if it carries `is_done`, else continue); an end-turn tool call met before
/// it ends with `end_turn_tool`.
pub fn should_end(messages: &[Message]) -> Option<FinishReason> {
    for m in messages.iter().rev() {
        match m {
            Message::Text { metadata, role, .. }
                if role == "assistant"
                    && tag(metadata) != "think"
                    && !meta_bool(metadata, "is_dummy") =>
            {
                return meta_bool(metadata, "is_done").then_some(FinishReason::Done);
            }
            Message::ParallelToolCall { metadata, .. }
                if meta_bool(metadata, "is_end_turn_tool") =>
            {
                return Some(FinishReason::EndTurnTool);
            }
            _ => {}
        }
    }
    None
}

/// The last visible, non-dummy assistant text tagged `text` (what the judge reads; it keeps
/// the `<DONE>` marker, as the reference's `x.response`).
pub fn final_response(messages: &[Message]) -> String {
    for m in messages.iter().rev() {
        if let Message::Text {
            metadata,
            role,
            content,
        } = m
            && role == "assistant"
            && tag(metadata) == "text"
            && !meta_bool(metadata, "is_dummy")
        {
            return content.clone();
        }
    }
    String::new()
}

/// Fills a direct-response format string (`{key}` placeholders) from a JSON object result.
pub fn format_direct(template: &str, result: &str) -> Option<String> {
    let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(result) else {
        return None;
    };
    let mut out = String::new();
    let mut rest = template;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if after.as_bytes().first() == Some(&c) {
            out.push(c as char);
            rest = &after[1..];
            continue;
        }
        if c == b'}' {
            return None;
        }
        let j = after.find('}')?;
        let v = obj.get(&after[..j])?;
        match v {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
        rest = &after[j + 1..];
    }
    out.push_str(rest);
    Some(out)
}

/// Runs the tool call the way the reference's agent session does: an argument error or an
/// unknown name answered as text, else the backend's result (and the direct response, when
/// the tool has one). An `Err` is the backend's operational failure.
pub async fn dispatch(
    tools: &AgentTools,
    session: &mut dyn ToolBackend,
    tc: &ToolCall,
) -> Result<(String, Option<String>), EpisodeError> {
    if let Some(e) = tc
        .metadata
        .get("error")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
    {
        return Ok((e.to_string(), None));
    }
    if !tools.names.contains(&tc.name) {
        return Ok((
            format!("Error: function '{}' does not exist", tc.name),
            None,
        ));
    }
    let result = session
        .call(&tc.name, &tc.arguments)
        .await
        .map_err(|message| EpisodeError {
            role: "tools",
            kind: ErrorKind::ToolBackendError,
            message: format!("tool `{}`: {message}", tc.name),
        })?;
    Ok(match tools.direct.get(&tc.name) {
        Some(t) => match format_direct(t, &result) {
            Some(d) => (result, Some(d)),
            None => ("Error in function execution".into(), None),
        },
        None => (result, None),
    })
}

async fn timed<T>(
    budget: Option<Duration>,
    role: &'static str,
    fut: impl Future<Output = Result<T, LlmError>>,
) -> Result<T, EpisodeError> {
    match budget {
        Some(d) => match tokio::time::timeout(d, fut).await {
            Ok(r) => r.map_err(|e| EpisodeError::llm(role, e)),
            Err(_) => Err(EpisodeError {
                role,
                kind: ErrorKind::Timeout,
                message: format!(
                    "no reply within the message budget of {:.3}s",
                    d.as_secs_f64()
                ),
            }),
        },
        None => fut.await.map_err(|e| EpisodeError::llm(role, e)),
    }
}

/// Runs an episode. The conversation, usage and timers accumulate in `st`; on an error the
/// partial conversation stays there.
pub async fn run_episode(
    spec: &EpisodeSpec<'_>,
    agent: &mut dyn Agent,
    session: &mut dyn ToolBackend,
    st: &mut EpisodeState,
) -> Result<FinishReason, EpisodeError> {
    let task = spec.task;
    let max_agent = task.max_agent_sim_turns.unwrap_or(u64::MAX);
    let mut max_user = task
        .max_user_sim_turns
        .unwrap_or(tb_dataset::DEFAULT_MAX_USER_SIM_TURNS);
    if spec.user_can_end {
        max_user += 1;
    }
    let user_context = task.user_context.clone().unwrap_or_default();
    let user_enabled = spec.user.is_some() && !user_context.is_empty();
    st.messages.extend(spec.system.iter().cloned());
    agent.observe(&spec.system);
    let mut turn: u64 = 0;
    loop {
        if st.agent_turns >= max_agent {
            return Ok(FinishReason::AgentLimit);
        }
        let user_msg = if turn == 0 {
            Message::text("user", task.query.clone().unwrap_or_default())
        } else {
            let Some(user) = spec.user.filter(|_| user_enabled) else {
                return Ok(FinishReason::NoUserLlm);
            };
            if turn > max_user {
                return Ok(FinishReason::UserLimit);
            }
            let t0 = Instant::now();
            let r = timed(
                spec.message_timeout,
                "user",
                crate::user_sim::simulate(
                    user,
                    &st.messages,
                    &user_context,
                    spec.user_can_end,
                    spec.prompts,
                ),
            )
            .await;
            st.time_user += t0.elapsed().as_secs_f64();
            let ut = r?;
            st.user_usage.add(&ut.usage);
            if spec.keep_user_history {
                st.user_llm_history.push(ut.exchange);
            }
            ut.message
        };
        if spec.user_can_end
            && let Message::Text { metadata, .. } = &user_msg
            && meta_bool(metadata, "is_done")
        {
            st.messages.push(user_msg);
            return Ok(FinishReason::UserDone);
        }
        st.messages.push(user_msg.clone());
        agent.observe(std::slice::from_ref(&user_msg));
        agent_turn(spec, agent, session, st, max_agent)
            .await
            .map_err(|mut e| {
                if e.kind == ErrorKind::ReplyRejected {
                    // the reference's wording of a failed agent turn
                    e.message = format!(
                        "Error during decoding turn {turn} for test case {}: {}",
                        task.uid, e.message
                    );
                }
                e
            })?;
        if let Some(r) = agent.end_requested() {
            return Ok(r);
        }
        if let Some(r) = should_end(&st.messages) {
            return Ok(r);
        }
        turn += 1;
    }
}

/// Runs one agent turn on its own (the agent replies, its tool calls run, until it writes
/// visible text, calls an end-turn tool or reaches `max_agent_sim_turns`), as inside
/// [`run_episode`]: for callers that supply the user turns themselves (`tb tui`, where a
/// person plays the user). The caller pushes the user message and lets the agent observe it.
pub async fn run_agent_turn(
    spec: &EpisodeSpec<'_>,
    agent: &mut dyn Agent,
    session: &mut dyn ToolBackend,
    st: &mut EpisodeState,
) -> Result<(), EpisodeError> {
    let max_agent = spec.task.max_agent_sim_turns.unwrap_or(u64::MAX);
    agent_turn(spec, agent, session, st, max_agent).await
}

/// Pushes a yielded message; returns false when the agent-action limit cuts the turn.
fn emit(st: &mut EpisodeState, msg: Message, max_agent: u64) -> bool {
    let counts = match &msg {
        Message::ParallelToolCall { .. } => true,
        Message::Text { metadata, role, .. } => role == "assistant" && tag(metadata) != "think",
        Message::ToolResponse { .. } => false,
    };
    st.messages.push(msg);
    if st.agent_turns >= max_agent {
        return false;
    }
    if counts {
        st.agent_turns += 1;
    }
    true
}

async fn agent_turn(
    spec: &EpisodeSpec<'_>,
    agent: &mut dyn Agent,
    session: &mut dyn ToolBackend,
    st: &mut EpisodeState,
    max_agent: u64,
) -> Result<(), EpisodeError> {
    loop {
        let t0 = Instant::now();
        let r = timed(spec.message_timeout, "agent", agent.reply()).await;
        st.time_agent += t0.elapsed().as_secs_f64();
        let AgentReply {
            mut messages,
            usage,
        } = r?;
        if let Some(u) = usage {
            st.agent_usage.push(u);
        }
        let mut end_turn_found = false;
        for m in &mut messages {
            match m {
                Message::Text {
                    metadata,
                    role,
                    content,
                } if role == "assistant" && tag(metadata) == "text" && is_done_text(content) => {
                    metadata.insert("is_done".into(), json!(true));
                }
                Message::ParallelToolCall {
                    metadata,
                    tool_calls,
                } => {
                    for tc in tool_calls.iter_mut() {
                        if spec.tools.end_turn.contains(&tc.name) {
                            end_turn_found = true;
                            metadata.insert("is_end_turn_tool".into(), json!(true));
                            tc.metadata.insert("is_end_turn_tool".into(), json!(true));
                            st.tool_calls.push((tc.clone(), String::new()));
                        }
                    }
                }
                _ => {}
            }
        }
        if messages.is_empty() {
            return Ok(());
        }
        let think_only = messages
            .iter()
            .all(|m| matches!(m, Message::Text { metadata, .. } if tag(metadata) == "think"));
        st.reasoning_only_replies = if think_only {
            st.reasoning_only_replies + 1
        } else {
            0
        };
        for m in &messages {
            if !emit(st, m.clone(), max_agent) {
                return Ok(());
            }
        }
        match st.messages.last() {
            Some(Message::Text { metadata, role, .. })
                if role == "assistant" && tag(metadata) == "text" =>
            {
                return Ok(());
            }
            _ => {}
        }
        if end_turn_found {
            return Ok(());
        }
        if think_only && st.reasoning_only_replies >= MAX_REASONING_ONLY_REPLIES {
            tracing::warn!(
                "task {}: {} reasoning-only replies in a row; ending the agent turn",
                spec.task.uid,
                st.reasoning_only_replies
            );
            return Ok(());
        }
        for m in &messages {
            let Message::ParallelToolCall { tool_calls, .. } = m else {
                continue;
            };
            let mut directs = Vec::new();
            for tc in tool_calls {
                let t0 = Instant::now();
                let r = dispatch(spec.tools, session, tc).await;
                st.time_tool += t0.elapsed().as_secs_f64();
                let (content, direct) = r?;
                st.tool_calls.push((tc.clone(), content.clone()));
                let resp = Message::ToolResponse {
                    metadata: Map::new(),
                    name: tc.name.clone(),
                    content,
                    id: tc.id.clone(),
                };
                agent.observe(std::slice::from_ref(&resp));
                if !emit(st, resp, max_agent) {
                    return Ok(());
                }
                directs = direct.into_iter().collect();
            }
            for d in directs {
                let mut meta = Map::new();
                meta.insert("tag".into(), json!("direct"));
                let dm = Message::Text {
                    metadata: meta,
                    role: "assistant".into(),
                    content: d,
                };
                agent.observe(std::slice::from_ref(&dm));
                if !emit(st, dm, max_agent) {
                    return Ok(());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn end_rules() {
        let mut done = Message::text("assistant", "ok <DONE>");
        if let Message::Text { metadata, .. } = &mut done {
            metadata.insert("is_done".into(), json!(true));
        }
        assert_eq!(should_end(&[done.clone()]), Some(FinishReason::Done));
        assert_eq!(
            should_end(&[done, Message::text("assistant", "more?")]),
            None
        );
        let mut et = Map::new();
        et.insert("is_end_turn_tool".into(), json!(true));
        assert_eq!(
            should_end(&[Message::ParallelToolCall {
                metadata: et,
                tool_calls: vec![]
            }]),
            Some(FinishReason::EndTurnTool)
        );
        assert!(is_done_text("bye <DONE>\n"));
        assert!(!is_done_text("<DONE> bye"));
        assert_eq!(
            format_direct("Order {id}: {{ok}} {n}", r#"{"id":"A","n":3}"#).as_deref(),
            Some("Order A: {ok} 3")
        );
        assert_eq!(format_direct("{missing}", r#"{"id":"A"}"#), None);
        assert_eq!(format_direct("{id}", "not json"), None);
    }
}
