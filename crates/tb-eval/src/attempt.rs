//! Running attempts: task x repetition -> session -> episode -> graded trial record. The
//! episode is played here; grading is [`crate::grade`]'s.

use crate::grade::{grade_session, test_result_of};
use crate::offline::{OfflineAgent, run_offline};
use crate::record::{base_metadata, blank_record, error_json, skeleton};
use crate::root::RootError;
use crate::run::{AgentChoice, AttemptEnv, RunEnv};
use crate::tools::{EpisodeSession, RemoteTools};
use serde_json::{Value, json};
use std::time::Instant;
use tb_core::{Check, FinishReason, Message, Task, TrialRecord, Verdict};

/// Runs one attempt of an offline agent and grades it.
pub fn attempt_offline(
    env: &AttemptEnv<'_>,
    agent: OfflineAgent,
    task: &Task,
    repetition: u32,
) -> TrialRecord {
    let started = Instant::now();
    let mut metadata = base_metadata(task, agent.name(), repetition);
    let messages = system_messages(env, task);
    let outcome = (|| -> Result<(Vec<Message>, FinishReason, Verdict), RootError> {
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
    let mut rec = skeleton(env.provenance, task, repetition, metadata);
    rec.messages = messages;
    match outcome {
        Ok((episode_messages, finish_reason, verdict)) => {
            rec.messages.extend(episode_messages);
            rec.metadata.insert(
                "execution_time".into(),
                json!(started.elapsed().as_secs_f64()),
            );
            rec.test_result = Some(test_result_of(&verdict));
            rec.finish_reason = finish_reason;
            rec.verdict = Some(verdict);
        }
        Err(e) => {
            rec.metadata.insert(
                "error".into(),
                json!({"type": "SessionError", "message": tb_core::error_text(&e)}),
            );
            rec.metadata.insert(
                "execution_time".into(),
                json!(started.elapsed().as_secs_f64()),
            );
            rec.is_system_error = true;
        }
    }
    rec
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
    let remote_session = match remote {
        Some(r) => r.open_task(task).await,
        None => Ok(None),
    };
    let opened = match remote_session {
        Ok(Some(r)) => Ok(r),
        Ok(None) => env
            .sandbox
            .session(task, env.clock)
            .map(|s| Box::new(s) as Box<dyn EpisodeSession>)
            .map_err(|e| tb_core::error_text(&e)),
        Err(e) => Err(e),
    };
    let mut backend = match opened {
        Ok(b) => b,
        Err(e) => {
            fail(&mut rec, started, "SessionError", e);
            return rec;
        }
    };
    attempt_in(env, choice, task, &mut backend, started, &mut rec).await;
    backend.close().await;
    rec
}

/// Marks `rec` a system error of `kind` (`metadata.error`), with the time spent so far.
fn fail(rec: &mut TrialRecord, started: Instant, kind: &str, msg: String) {
    rec.is_system_error = true;
    rec.metadata.insert("error".into(), error_json(kind, &msg));
    rec.metadata.insert(
        "execution_time".into(),
        json!(started.elapsed().as_secs_f64()),
    );
}

async fn attempt_in(
    env: &RunEnv,
    choice: AgentChoice,
    task: &Task,
    backend: &mut Box<dyn EpisodeSession>,
    started: Instant,
    rec: &mut TrialRecord,
) {
    let scenario = env.scenarios.get(&task.scenario);
    let prepared = match backend.in_process() {
        // built once per agent config, scenario and domains
        Some(s) => env.sandbox.agent_tools(env.agent.as_ref(), scenario, s),
        None => std::sync::Arc::new(crate::episode::PreparedTools::build(
            env.agent.as_ref().map_or(&[][..], |a| &a.builtin_tools),
            scenario.map_or(&[][..], |s| &s.tools),
            &backend.tool_list(),
        )),
    };
    let tools = match &prepared.tools {
        Ok(t) => t,
        Err(e) => {
            fail(rec, started, "ToolListError", e.clone());
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
                    started,
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
                    fail(rec, started, e.kind(), e.to_string());
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
        let fut = crate::episode::run_episode(&spec, agent.as_mut(), backend.as_mut(), &mut st);
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
            grade_session(env, task, backend.as_mut(), &response, rec).await;
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
            fail(rec, started, e.kind.as_str(), message);
            if let Some(Value::Object(err)) = rec.metadata.get_mut("error") {
                err.insert("role".into(), json!(e.role));
            }
        }
    }
}
