//! Running attempts: task x repetition -> session -> episode -> verdict -> trial record.

use crate::judge::StateJudge;
use crate::offline::{OfflineAgent, run_offline};
use crate::sandbox::{Sandbox, SandboxError};
use serde_json::{Map, Value, json};
use std::time::Instant;
use tb_core::{Check, FinishReason, Message, TestResult, TestTags, Task, TrialRecord, Verdict, attempt_key};
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
pub fn attempt_offline(env: &AttemptEnv<'_>, agent: OfflineAgent, task: &Task, repetition: u32) -> TrialRecord {
    let started = Instant::now();
    let mut metadata = Map::new();
    metadata.insert("scenario".into(), json!(task.scenario));
    metadata.insert("agent".into(), json!(agent.name()));
    metadata.insert("test_case_file".into(), json!(task.source.path));
    metadata.insert("test_case_name".into(), json!(task.uid.rsplit(':').next().unwrap_or("")));
    metadata.insert("repetition".into(), json!(repetition));
    let mut messages = system_messages(env, task);
    let outcome = (|| -> Result<(Vec<Message>, FinishReason, Verdict), SandboxError> {
        let mut session = env.sandbox.session(task, env.clock)?;
        let t0 = Instant::now();
        let episode = run_offline(agent, task, &mut session);
        metadata.insert("time_agent_user_loop".into(), json!(t0.elapsed().as_secs_f64()));
        let t1 = Instant::now();
        let state = env.judge.judge(env.sandbox, task, env.clock, &session)?;
        metadata.insert("time_test".into(), json!(t1.elapsed().as_secs_f64()));
        let rubrics_unjudged: Vec<String> = if task.checks.contains(&Check::ValidateRubricsYesno) {
            session.server_names().iter().flat_map(|s| task.rubrics_yesno(s)).collect()
        } else {
            Vec::new()
        };
        if !rubrics_unjudged.is_empty() {
            metadata.insert("rubrics_not_judged".into(), json!(rubrics_unjudged.len()));
        }
        let passed = state.iter().all(|s| s.passed);
        Ok((episode.messages, episode.finish_reason, Verdict { passed, state, rubrics: Vec::new() }))
    })();
    let record = |messages: Vec<Message>, finish_reason, verdict: Option<Verdict>, test_result, is_system_error, metadata| TrialRecord {
        uid: task.uid.clone(),
        messages,
        test_result,
        test_context: None,
        test_tags: Some(TestTags { domain: Some(task.scenario.clone()), ..TestTags::default() }),
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
        usage_by_role: Default::default(),
        provenance: env.provenance.clone(),
    };
    match outcome {
        Ok((episode_messages, finish_reason, verdict)) => {
            messages.extend(episode_messages);
            metadata.insert("execution_time".into(), json!(started.elapsed().as_secs_f64()));
            let test_result = test_result_of(&verdict);
            record(messages, finish_reason, Some(verdict), Some(test_result), false, metadata)
        }
        Err(e) => {
            metadata.insert("error".into(), json!({"type": "SessionError", "message": e.to_string()}));
            metadata.insert("execution_time".into(), json!(started.elapsed().as_secs_f64()));
            record(messages, FinishReason::Done, None, None, true, metadata)
        }
    }
}

/// The reference's two system messages: agent instructions, then scenario (+ task) bot
/// instructions joined by a newline; each omitted when empty.
pub fn system_messages(env: &AttemptEnv<'_>, task: &Task) -> Vec<Message> {
    let mut out = Vec::new();
    if let Some(a) = env.agent_instructions.filter(|s| !s.is_empty()) {
        out.push(Message::text("system", a));
    }
    let scenario = env.bot_instructions.get(&task.scenario).cloned().unwrap_or_default();
    let task_bi = task.bot_instructions.clone().unwrap_or_default();
    if !scenario.is_empty() || !task_bi.is_empty() {
        out.push(Message::text("system", format!("{scenario}\n{task_bi}")));
    }
    out
}

/// The reference-shaped test result of a verdict: a failed database check carries the diff
/// in `tb`, as the reference's assertion message does.
pub fn test_result_of(v: &Verdict) -> TestResult {
    let failing: Vec<String> = v
        .state
        .iter()
        .filter(|s| !s.passed)
        .map(|s| {
            let diff = serde_json::to_string(&s.diff).unwrap_or_default();
            format!("AssertionError: Database state mismatch for {}: {diff}", s.server)
        })
        .chain(v.rubrics.iter().filter(|r| !r.passed).map(|r| format!("AssertionError: rubric not met: {}", r.rubric)))
        .collect();
    TestResult {
        result: v.passed,
        reward: if v.passed { 1.0 } else { 0.0 },
        is_system_error: false,
        tb: failing.join("\n"),
        prints: String::new(),
        lineno: -1,
        line_content: String::new(),
        metadata: Map::new(),
    }
}
