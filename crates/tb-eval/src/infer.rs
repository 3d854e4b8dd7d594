//! Running attempts: task x repetition -> session -> episode -> verdict -> trial record.

use crate::judge::StateJudge;
use crate::offline::{OfflineAgent, run_offline};
use crate::sandbox::{Sandbox, SandboxError};
use crate::tools::{EpisodeSession, RemoteSession, RemoteTools};
use serde_json::{Map, Value, json};
use std::time::Instant;
use tb_core::{Check, FinishReason, Message, Task, TestResult, TrialRecord, Verdict, attempt_key};
use tb_sandbox::Clock;

/// What an attempt needs besides the task.
#[derive(Debug)]
pub struct AttemptEnv<'a> {
    /// Loaded domains.
    pub sandbox: &'a Sandbox,
    /// Golden-state cache.
    pub judge: &'a StateJudge,
    /// The session clock.
    pub clock: Clock,
    /// The agent's system prompt (agent YAML `system_instructions`), if any.
    pub agent_instructions: Option<&'a str>,
    /// Each scenario's `bot_instructions`, by scenario name.
    pub bot_instructions: &'a std::collections::HashMap<String, String>,
    /// Provenance copied into each record.
    pub provenance: &'a Map<String, Value>,
}

/// Runs one attempt of an offline agent and grades it.
pub fn attempt_offline(
    env: &AttemptEnv<'_>,
    agent: OfflineAgent,
    task: &Task,
    repetition: u32,
) -> TrialRecord {
    let started = Instant::now();
    let mut metadata = Map::new();
    metadata.insert("scenario".into(), json!(task.scenario));
    metadata.insert("agent".into(), json!(agent.name()));
    metadata.insert("test_case_file".into(), json!(task.source.path));
    metadata.insert(
        "test_case_name".into(),
        json!(task.uid.rsplit(':').next().unwrap_or("")),
    );
    metadata.insert("repetition".into(), json!(repetition));
    let mut messages = system_messages(env, task);
    let outcome = (|| -> Result<(Vec<Message>, FinishReason, Verdict), SandboxError> {
        let mut session = env.sandbox.session(task, env.clock)?;
        let t0 = Instant::now();
        let episode = run_offline(agent, task, &mut session);
        metadata.insert(
            "time_agent_user_loop".into(),
            json!(t0.elapsed().as_secs_f64()),
        );
        let t1 = Instant::now();
        let state = env.judge.judge(env.sandbox, task, env.clock, &session)?;
        metadata.insert("time_test".into(), json!(t1.elapsed().as_secs_f64()));
        let rubrics_unjudged: Vec<String> = if task.checks.contains(&Check::ValidateRubricsYesno) {
            session
                .server_names()
                .iter()
                .flat_map(|s| task.rubrics_yesno(s))
                .collect()
        } else {
            Vec::new()
        };
        if !rubrics_unjudged.is_empty() {
            metadata.insert("rubrics_not_judged".into(), json!(rubrics_unjudged.len()));
        }
        Ok((
            episode.messages,
            episode.finish_reason,
            Verdict::new(state, Vec::new()),
        ))
    })();
    let record = |messages: Vec<Message>,
                  finish_reason,
                  verdict: Option<Verdict>,
                  test_result,
                  is_system_error,
                  metadata| TrialRecord {
        uid: task.uid.clone(),
        messages,
        test_result,
        test_context: None,
        test_tags: Some(task.test_tags.clone()),
        tools: None,
        raw_messages: None,
        user_llm_history: None,
        usage: Vec::new(),
        metadata,
        is_system_error,
        finish_reason,
        key: attempt_key(&task.uid, repetition),
        repetition,
        verdict,
        usage_by_role: tb_core::UsageByRole::default(),
        provenance: env.provenance.clone(),
    };
    match outcome {
        Ok((episode_messages, finish_reason, verdict)) => {
            messages.extend(episode_messages);
            metadata.insert(
                "execution_time".into(),
                json!(started.elapsed().as_secs_f64()),
            );
            let test_result = test_result_of(&verdict);
            record(
                messages,
                finish_reason,
                Some(verdict),
                Some(test_result),
                false,
                metadata,
            )
        }
        Err(e) => {
            metadata.insert(
                "error".into(),
                json!({"type": "SessionError", "message": tb_core::error_text(&e)}),
            );
            metadata.insert(
                "execution_time".into(),
                json!(started.elapsed().as_secs_f64()),
            );
            record(messages, FinishReason::Done, None, None, true, metadata)
        }
    }
}

/// The reference's two system messages: agent instructions, then scenario (+ task) bot
/// instructions joined by a newline; each omitted when empty.
pub fn system_messages(env: &AttemptEnv<'_>, task: &Task) -> Vec<Message> {
    system_messages_of(
        env.agent_instructions,
        env.bot_instructions.get(&task.scenario).map(String::as_str),
        task.bot_instructions.as_deref(),
    )
}

/// The system messages from their parts: the agent's instructions, then the bot
/// instructions of the scenario and the task joined by a newline (only the parts present, as
/// the reference's `merge_bot_instructions`); an empty message is left out.
pub fn system_messages_of(
    agent: Option<&str>,
    scenario: Option<&str>,
    task: Option<&str>,
) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(a) = agent.filter(|s| !s.is_empty()) {
        out.push(Message::text("system", a));
    }
    let parts: Vec<&str> = [scenario, task].into_iter().flatten().collect();
    let bot = parts.join("\n");
    if !bot.is_empty() {
        out.push(Message::text("system", bot));
    }
    out
}

/// `json.dumps(v, ensure_ascii=False, indent=11)`.
fn dumps_indent11(v: &Value) -> String {
    tb_python::json::dumps_indented(v, 11, false)
}

/// The message of the v1 test files' database assertion (`validate_database`): both hashes,
/// then each difference with its path, type, and the result's and golden's JSON (indented by
/// 11, cut at 500 characters).
pub fn database_mismatch_text(s: &tb_core::StateVerdict) -> String {
    let mut m = format!(
        "Database hash after test execution does not match expected golden hash\nResult hash: {}\nGolden hash: {}\n",
        s.result_hash, s.golden_hash
    );
    if !s.diff.is_empty() {
        m.push_str(&format!("\nFound {} difference(s):\n", s.diff.len()));
        let field = |d: &Value, k: &str| match d.get(k) {
            Some(Value::String(t)) => t.clone(),
            Some(v) => tb_python::py_str(v),
            None => "N/A".into(),
        };
        let cut = |t: String| t.chars().take(500).collect::<String>();
        for (i, d) in s.diff.iter().enumerate() {
            m.push_str(&format!(
                "\n{}. Path: {}\n   Type: {}\n   Result:  {}\n   Golden:  {}\n",
                i + 1,
                field(d, "path"),
                field(d, "type"),
                cut(dumps_indent11(d.get("result").unwrap_or(&Value::Null))),
                cut(dumps_indent11(d.get("golden").unwrap_or(&Value::Null)))
            ));
        }
    }
    m
}

/// The reference-shaped test result of a verdict: the v1 test files' assertion message of
/// the first check that failed (the database check, else the first rubric not met).
pub fn test_result_of(v: &Verdict) -> TestResult {
    let failing: Vec<String> = v
        .state
        .iter()
        .filter(|s| !s.passed)
        .take(1)
        .map(|s| format!("AssertionError: {}\n", database_mismatch_text(s)))
        .chain(
            v.rubrics
                .iter()
                .filter(|r| !r.passed)
                .map(|r| format!("AssertionError: Rubric yesno failed: {}\n", r.rubric)),
        )
        .take(1)
        .collect();
    TestResult {
        result: v.passed,
        reward: if v.passed { 1.0 } else { 0.0 },
        is_system_error: false,
        tb: failing.join("\n"),
        prints: String::new(),
        lineno: -1,
        line_content: String::new(),
        // the reference's test runner always sets it (null: yes/no answers carry no motivation)
        metadata: Map::from_iter([("judge_motivation".to_string(), Value::Null)]),
    }
}

/// The models of a run.
#[derive(Debug, Clone, Default)]
pub struct Models {
    /// The agent under test.
    pub agent: Option<tb_llm::LlmClient>,
    /// The simulated user.
    pub user: Option<tb_llm::LlmClient>,
    /// The rubric judge.
    pub judge: Option<tb_llm::LlmClient>,
    /// The simulated user's and the judge's prompts.
    pub prompts: std::sync::Arc<crate::prompts::Prompts>,
}

/// Optional record fields to fill (`--dump`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Dump {
    /// `tools`: the tool list as the agent saw it.
    pub tools: bool,
    /// `userllm`: every simulated-user exchange.
    pub userllm: bool,
    /// `raw`: the agent's provider-native conversation.
    pub raw: bool,
}

/// Everything attempts of a run share; owned, so attempts can run as concurrent tasks.
#[derive(Debug, Clone)]
pub struct RunEnv {
    /// Loaded domains.
    pub sandbox: std::sync::Arc<Sandbox>,
    /// Golden-state cache.
    pub judge: std::sync::Arc<StateJudge>,
    /// The session clock.
    pub clock: Clock,
    /// Agent name (for records).
    pub agent_name: String,
    /// The agent YAML (instructions and builtin tools), if any.
    pub agent: Option<std::sync::Arc<tb_dataset::AgentConfig>>,
    /// Scenarios by name.
    pub scenarios: std::collections::HashMap<String, std::sync::Arc<tb_dataset::Scenario>>,
    /// Models.
    pub models: Models,
    /// `user_can_end_conversation`.
    pub user_can_end: bool,
    /// Budget of one model call (retries included).
    pub message_timeout: Option<std::time::Duration>,
    /// Budget of a whole attempt's episode.
    pub attempt_timeout: Option<std::time::Duration>,
    /// Optional record fields.
    pub dump: Dump,
    /// Provenance copied into each record.
    pub provenance: Map<String, Value>,
}

/// Which agent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentChoice {
    /// The configured agent model.
    Model,
    /// An offline agent.
    Offline(OfflineAgent),
}

/// The metadata every record starts with: scenario, agent, test-case file and name,
/// repetition.
pub fn base_metadata(task: &Task, agent: &str, repetition: u32) -> Map<String, Value> {
    let mut metadata = Map::new();
    metadata.insert("scenario".into(), json!(task.scenario));
    metadata.insert("agent".into(), json!(agent));
    metadata.insert("test_case_file".into(), json!(task.source.path));
    metadata.insert(
        "test_case_name".into(),
        json!(task.uid.rsplit(':').next().unwrap_or("")),
    );
    metadata.insert("repetition".into(), json!(repetition));
    metadata
}

/// The class of an operational failure, for the errors sidecar: `rate_limited`,
/// `endpoint_http` (an HTTP error status), `endpoint_unreachable` (connect or transport
/// error, dropped connection), `timeout`, `malformed_reply`, `tool_runtime` (session, tool
/// list, a panicking attempt), `config`, or `other`.
pub fn error_class(kind: &str) -> &'static str {
    match kind {
        "RateLimited" => "rate_limited",
        "HttpError" => "endpoint_http",
        "ConnectError" | "TransportError" => "endpoint_unreachable",
        "Timeout" => "timeout",
        "MalformedReply" | "RuntimeError" => "malformed_reply",
        "SessionError" | "ToolListError" | "ToolBackendError" | "Panic" => "tool_runtime",
        "ModelConfigError" | "ModelEncodeError" => "config",
        _ => "other",
    }
}

fn error_json(kind: &str, message: &str) -> Value {
    json!({"type": kind, "message": message, "tb": "", "class": error_class(kind)})
}

/// The record of an attempt that failed for operational reasons outside [`attempt`] (e.g.
/// it panicked): a system error with `metadata.error {type, message, class}`.
pub fn system_error_record(
    env: &RunEnv,
    task: &Task,
    repetition: u32,
    kind: &str,
    message: &str,
) -> TrialRecord {
    let mut rec = blank_record(
        env,
        task,
        repetition,
        base_metadata(task, &env.agent_name, repetition),
    );
    rec.is_system_error = true;
    rec.metadata
        .insert("error".into(), error_json(kind, message));
    rec
}

/// The record skeleton of an attempt (no messages, no verdict yet).
pub fn blank_record(
    env: &RunEnv,
    task: &Task,
    repetition: u32,
    metadata: Map<String, Value>,
) -> TrialRecord {
    TrialRecord {
        uid: task.uid.clone(),
        messages: Vec::new(),
        test_result: None,
        test_context: None,
        test_tags: Some(task.test_tags.clone()),
        tools: None,
        raw_messages: None,
        user_llm_history: None,
        usage: Vec::new(),
        metadata,
        is_system_error: false,
        finish_reason: FinishReason::Done,
        key: attempt_key(&task.uid, repetition),
        repetition,
        verdict: None,
        usage_by_role: tb_core::UsageByRole::default(),
        provenance: env.provenance.clone(),
    }
}

/// The rubrics of a task's servers, if its test checks them.
pub fn task_rubrics(task: &Task) -> Vec<String> {
    if task.checks.contains(&Check::ValidateRubricsYesno) {
        task.servers()
            .iter()
            .flat_map(|s| task.rubrics_yesno(s))
            .collect()
    } else {
        Vec::new()
    }
}

/// Grades a finished in-process session: the state verdict from the judge, then the rubrics
/// (see [`grade_with`]).
pub async fn grade(
    env: &RunEnv,
    task: &Task,
    session: &crate::sandbox::TaskSession,
    response: &str,
    rec: &mut TrialRecord,
) {
    let t0 = Instant::now();
    if session.has_own_servers() {
        let judge = match &env.models.judge {
            Some(client) => crate::pybody::BodyJudge::Model {
                client,
                timeout: env.message_timeout,
                prompts: &env.models.prompts,
            },
            None => crate::pybody::BodyJudge::None,
        };
        grade_body(env, task, session, judge, t0, rec).await;
        return;
    }
    let state = env
        .judge
        .judge(&env.sandbox, task, env.clock, session)
        .map_err(|e| ("SessionError", tb_core::error_text(&e)));
    grade_with(env, task, state, t0, response, rec).await;
}

/// Grades a finished in-process session whose servers report their own effects (the
/// airline): the task's Python test body runs in the evaluator on the attempt's
/// `TestContext` (response, tool calls, effects: the own servers' effects beside the state
/// verdicts of any table domains), `judge` answering its judge calls.
pub async fn grade_body(
    env: &RunEnv,
    task: &Task,
    session: &crate::sandbox::TaskSession,
    judge: crate::pybody::BodyJudge<'_>,
    t0: Instant,
    rec: &mut TrialRecord,
) {
    let state = match env.judge.judge(&env.sandbox, task, env.clock, session) {
        Ok(s) => s,
        Err(e) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json("SessionError", &e.to_string()));
            return;
        }
    };
    let mut effects = crate::pybody::v1_effects(task, &state);
    if let Value::Object(m) = &mut effects {
        m.extend(session.own_effects());
    }
    let ctx = std::sync::Arc::new(crate::pybody::context(&rec.messages, effects));
    let test = task.uid.rsplit(':').next().unwrap_or("");
    let run = match env.sandbox.test_source(task) {
        Ok((path, source)) => {
            // The attempt's budget (`--attempt-timeout`) is the body's too, else its default.
            let limits = tb_pyeval::Limits {
                time: Some(
                    env.attempt_timeout
                        .unwrap_or(tb_pyeval::budget::DEFAULT_TIME),
                ),
                ..tb_pyeval::Limits::default()
            };
            crate::pybody::run_body(&path, &source, test, &ctx, judge, &limits).await
        }
        Err(e) => Err(e),
    };
    rec.metadata
        .insert("time_test".into(), json!(t0.elapsed().as_secs_f64()));
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json("TestFileError", &e));
            return;
        }
    };
    rec.usage_by_role.judge.add(&run.usage);
    if !run.judge_calls.is_empty() {
        rec.metadata.insert(
            "judge_calls".into(),
            json!(
                run.judge_calls
                    .iter()
                    .map(|(q, a)| json!({"call": q, "answer": a}))
                    .collect::<Vec<_>>()
            ),
        );
    }
    rec.test_result = Some(crate::pybody::test_result_of_body(&run.outcome));
    rec.verdict = Some(Verdict {
        passed: run.outcome.passed,
        state,
        rubrics: Vec::new(),
    });
}

/// Grades a finished session from its state verdicts (in-process: the judge's; remote: the
/// server's), then (for rubric tasks, when a judge is configured) one yes/no question per
/// rubric on the final response. A judge failure is a test error
/// (`test_result.is_system_error`), as in the reference; a state failure (`Err((kind,
/// message))`) is a system error. `time_test` counts from `t0`.
pub async fn grade_with(
    env: &RunEnv,
    task: &Task,
    state: Result<Vec<tb_core::StateVerdict>, (&str, String)>,
    t0: Instant,
    response: &str,
    rec: &mut TrialRecord,
) {
    let state = match state {
        Ok(s) => s,
        Err((kind, message)) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json(kind, &message));
            return;
        }
    };
    let rubrics = task_rubrics(task);
    let mut verdict = Verdict::new(state, Vec::new());
    let mut test_error = None;
    // The reference's test checks the database first: a failed check ends it, no judge asked.
    let state_passed = verdict.state.iter().all(|s| s.passed);
    if !rubrics.is_empty() && state_passed {
        match &env.models.judge {
            None => {
                rec.metadata
                    .insert("rubrics_not_judged".into(), json!(rubrics.len()));
            }
            Some(j) => {
                match crate::rubric::judge_rubrics(
                    j,
                    response,
                    &rubrics,
                    env.message_timeout,
                    &env.models.prompts,
                )
                .await
                {
                    Ok((rv, usage)) => {
                        rec.usage_by_role.judge.add(&usage);
                        verdict = Verdict::new(verdict.state, rv);
                    }
                    Err(e) => test_error = Some(e),
                }
            }
        }
    }
    rec.metadata
        .insert("time_test".into(), json!(t0.elapsed().as_secs_f64()));
    let mut tr = test_result_of(&verdict);
    if !tr.result
        && let Ok((_, source)) = env.sandbox.test_source(task)
    {
        // the line of the test file whose assertion failed, as the reference reports it
        let marker = if state_passed {
            "assert judge.text_yesno(x.response, rubric)"
        } else {
            "assert False, error_msg"
        };
        if let Some((i, line)) = source
            .lines()
            .enumerate()
            .find(|(_, l)| l.trim_start().starts_with(marker))
        {
            tr.lineno = i64::try_from(i + 1).unwrap_or(-1);
            tr.line_content = line.to_string();
        }
    }
    if let Some(e) = test_error {
        tr.result = false;
        tr.reward = 0.0;
        tr.is_system_error = true;
        tr.tb = format!("JudgeException: judge model: {e}");
        rec.metadata
            .insert("test_error".into(), error_json(e.kind(), &e.to_string()));
        verdict.passed = false;
    }
    rec.test_result = Some(tr);
    rec.verdict = Some(verdict);
}

/// [`grade`] for a remote session (`tb infer` over a `tb mcp-start` or external servers,
/// `tb openenv` episodes): the state verdicts come from the session; its failure to give them
/// is a tool-backend system error.
pub async fn grade_remote(
    env: &RunEnv,
    task: &Task,
    remote: &mut dyn RemoteSession,
    response: &str,
    rec: &mut TrialRecord,
) {
    let t0 = Instant::now();
    let state = remote
        .verdicts()
        .await
        .map_err(|e| (crate::episode::TOOL_BACKEND_ERROR, e));
    grade_with(env, task, state, t0, response, rec).await;
}

/// Runs one attempt (session, episode, grading) and returns its record. Operational
/// failures (session, endpoint, budgets) become system errors with `metadata.error`, the
/// conversation up to the failure kept; they are never graded as model failures.
pub async fn attempt(
    env: &RunEnv,
    choice: AgentChoice,
    task: &Task,
    repetition: u32,
) -> TrialRecord {
    attempt_with(env, None, choice, task, repetition).await
}

/// [`attempt`], with the tools of a remote session when `remote` is given (e.g. a
/// `tb mcp-start` server): the session is opened there, the episode calls its tools, its
/// state verdicts come from there, and it is closed at the end. Without `remote`, the
/// in-process session, as [`attempt`].
pub async fn attempt_with(
    env: &RunEnv,
    remote: Option<&dyn RemoteTools>,
    choice: AgentChoice,
    task: &Task,
    repetition: u32,
) -> TrialRecord {
    let started = Instant::now();
    let agent_label = match choice {
        AgentChoice::Model => env.agent_name.clone(),
        AgentChoice::Offline(a) => a.name().to_string(),
    };
    let mut rec = blank_record(
        env,
        task,
        repetition,
        base_metadata(task, &agent_label, repetition),
    );
    let fail = |rec: &mut TrialRecord, kind: &str, msg: String| {
        rec.is_system_error = true;
        rec.metadata.insert("error".into(), error_json(kind, &msg));
        rec.metadata.insert(
            "execution_time".into(),
            json!(started.elapsed().as_secs_f64()),
        );
    };
    let remote_session = match remote {
        Some(r) => r.open_task(task).await,
        None => Ok(None),
    };
    let opened = match remote_session {
        Ok(Some(r)) => Ok(EpisodeSession::Remote(r)),
        Ok(None) => env
            .sandbox
            .session(task, env.clock)
            .map(EpisodeSession::Native)
            .map_err(|e| tb_core::error_text(&e)),
        Err(e) => Err(e),
    };
    let mut backend = match opened {
        Ok(b) => b,
        Err(e) => {
            fail(&mut rec, "SessionError", e);
            return rec;
        }
    };
    attempt_in(env, choice, task, &mut backend, started, &mut rec).await;
    backend.close().await;
    rec
}

async fn attempt_in(
    env: &RunEnv,
    choice: AgentChoice,
    task: &Task,
    backend: &mut EpisodeSession,
    started: Instant,
    rec: &mut TrialRecord,
) {
    let fail = |rec: &mut TrialRecord, kind: &str, msg: String| {
        rec.is_system_error = true;
        rec.metadata.insert("error".into(), error_json(kind, &msg));
        rec.metadata.insert(
            "execution_time".into(),
            json!(started.elapsed().as_secs_f64()),
        );
    };
    let scenario = env.scenarios.get(&task.scenario);
    let prepared = match backend {
        // built once per agent config, scenario and domains
        EpisodeSession::Native(s) => env.sandbox.agent_tools(env.agent.as_ref(), scenario, s),
        EpisodeSession::Remote(r) => std::sync::Arc::new(crate::episode::PreparedTools::build(
            env.agent.as_ref().map_or(&[][..], |a| &a.builtin_tools),
            scenario.map_or(&[][..], |s| &s.tools),
            &r.tool_list(),
        )),
    };
    let tools = match &prepared.tools {
        Ok(t) => t,
        Err(e) => {
            fail(rec, "ToolListError", e.clone());
            return;
        }
    };
    if !tools.missing.is_empty() {
        tracing::debug!(
            "task {}: scenario tools not provided by the session: {}",
            task.uid,
            tools.missing.join(", ")
        );
    }
    let system = system_messages_of(
        env.agent.as_ref().map(|a| a.system_instructions.as_str()),
        scenario.and_then(|s| s.bot_instructions.as_deref()),
        task.bot_instructions.as_deref(),
    );
    let mut agent: Box<dyn crate::episode::Agent> = match choice {
        AgentChoice::Offline(a) => Box::new(a.player(task)),
        AgentChoice::Model => {
            let Some(client) = env.models.agent.clone() else {
                fail(
                    rec,
                    "ModelConfigError",
                    "no agent model configured (orchestrator.agent_model)".into(),
                );
                return;
            };
            let provider = client.config().provider;
            match prepared
                .encoded(provider)
                .and_then(|t| crate::episode::ModelAgent::with_tools(client, t))
            {
                Ok(a) => Box::new(a),
                Err(e) => {
                    fail(rec, e.kind(), e.to_string());
                    return;
                }
            }
        }
    };
    let user = match choice {
        AgentChoice::Model => env.models.user.as_ref(),
        AgentChoice::Offline(_) => None,
    };
    let spec = crate::episode::EpisodeSpec {
        task,
        system,
        tools,
        user,
        user_can_end: env.user_can_end,
        message_timeout: env.message_timeout,
        keep_user_history: env.dump.userllm,
        prompts: &env.models.prompts,
    };
    let mut st = crate::episode::EpisodeState::default();
    let t_loop = Instant::now();
    let outcome = {
        let fut = crate::episode::run_episode(&spec, agent.as_mut(), backend.tools(), &mut st);
        match env.attempt_timeout {
            Some(d) => tokio::time::timeout(d, fut).await.unwrap_or_else(|_| {
                Err(crate::episode::EpisodeError {
                    role: "attempt",
                    kind: crate::episode::ErrorKind::Timeout,
                    message: format!("the attempt budget of {:.3}s ran out", d.as_secs_f64()),
                })
            }),
            None => fut.await,
        }
    };
    for (k, v) in [
        ("time_tool", st.time_tool),
        ("time_agent", st.time_agent),
        ("time_user", st.time_user),
    ] {
        rec.metadata.insert(k.into(), json!(v));
    }
    rec.metadata.insert(
        "time_agent_user_loop".into(),
        json!(t_loop.elapsed().as_secs_f64()),
    );
    rec.usage_by_role.user.add(&st.user_usage);
    for u in &st.agent_usage {
        rec.usage_by_role.agent.add(u);
    }
    if env.dump.tools {
        rec.tools = Some(Value::Array(
            tools.specs.iter().map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters, "direct_response": tools.direct.get(&t.name), "is_end_turn": tools.end_turn.contains(&t.name)})).collect(),
        ));
    }
    if env.dump.userllm {
        rec.user_llm_history = Some(Value::Array(std::mem::take(&mut st.user_llm_history)));
    }
    if env.dump.raw {
        rec.raw_messages = agent.raw();
    }
    if st.reasoning_only_replies >= crate::episode::MAX_REASONING_ONLY_REPLIES {
        rec.metadata.insert(
            "reasoning_only_replies".into(),
            json!(st.reasoning_only_replies),
        );
    }
    rec.usage = std::mem::take(&mut st.agent_usage);
    rec.messages = std::mem::take(&mut st.messages);
    match outcome {
        Ok(reason) => {
            rec.finish_reason = reason;
            let response = crate::episode::final_response(&rec.messages);
            match backend {
                EpisodeSession::Native(session) => grade(env, task, session, &response, rec).await,
                EpisodeSession::Remote(r) => {
                    grade_remote(env, task, r.as_mut(), &response, rec).await;
                }
            }
            rec.metadata.insert(
                "execution_time".into(),
                json!(started.elapsed().as_secs_f64()),
            );
        }
        Err(e) => {
            // A system error keeps the reference's default finish reason; the error's `type`
            // (`Timeout`, ...) says why the attempt stopped.
            rec.finish_reason = FinishReason::Done;
            let message = if e.kind == crate::episode::ErrorKind::ReplyRejected {
                e.message.clone()
            } else {
                e.to_string()
            };
            fail(rec, e.kind.as_str(), message);
            if let Some(Value::Object(err)) = rec.metadata.get_mut("error") {
                err.insert("role".into(), json!(e.role));
            }
        }
    }
}
