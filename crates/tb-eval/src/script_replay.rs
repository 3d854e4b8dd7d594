//! Replays scripted reference episodes (`tb-bench-v1/airline/traces.jsonl`,
//! `tb-bench-v1/tools-servers/traces/*.jsonl`) through the episode loop: the record's
//! `script` plays the agent (one tool call per reply, ids `call_000`, `call_001`, ...; a
//! `say` is a text reply) and the simulated user (its `user` replies), in a fresh session of
//! the task; then the task's test body runs in the evaluator with the judge answering yes,
//! then no. Compared with the record: every call's result text (what the agent received), each server's
//! `effects_sha256` (`sha256(json.dumps(effects, sort_keys=True))`), the finish reason, and
//! both verdicts (`passed`, `system_error`, `message`).

use crate::episode::{Agent, AgentReply, BoxFuture, EpisodeSpec, EpisodeState};
use crate::pybody::{BodyJudge, run_body};
use crate::root::LoadedRoot;
use serde::Serialize;
use serde_json::{Map, Value, json};
use std::collections::VecDeque;
use std::sync::Arc;
use tb_core::{Message, Task, ToolCall};
use tb_sandbox::{Clock, pyjson};

/// Whether a trace record is a scripted episode (it has a `script`).
pub fn is_script_record(v: &Value) -> bool {
    v.get("script").is_some_and(Value::is_array)
}

/// One thing that differed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ScriptMismatch {
    /// Task uid.
    pub trace: String,
    /// The record's `kind` (`solution`, `solution_alt`, `noop`, `probe`).
    pub kind: String,
    /// `call`, `effects`, `verdict_judge_yes`, `verdict_judge_no`, `finish_reason`, `session`.
    pub what: String,
    /// What we expected and what we got.
    pub detail: String,
}

/// Totals over replayed scripted records.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ScriptSummary {
    /// Records replayed.
    pub traces: usize,
    /// Recorded calls compared (the unexecuted ones too).
    pub calls: usize,
    /// Calls whose result text equals the recorded one.
    pub calls_match: usize,
    /// Effects hashes compared (one per server of each record).
    pub effects: usize,
    /// Effects hashes equal to the recorded ones.
    pub effects_match: usize,
    /// Verdicts compared (two per record: judge yes, judge no).
    pub verdicts: usize,
    /// Verdicts equal in `passed`, `system_error` and `message`.
    pub verdicts_match: usize,
    /// Records whose finish reason equals the recorded one.
    pub finish_match: usize,
    /// What differed.
    pub mismatches: Vec<ScriptMismatch>,
}

impl ScriptSummary {
    /// Everything matched.
    pub fn clean(&self) -> bool {
        self.mismatches.is_empty()
    }
}

/// What a replay needs besides the record and its task.
#[derive(Debug, Clone)]
pub struct ScriptEnv<'a> {
    /// Loaded domains and servers.
    pub sandbox: &'a LoadedRoot,
    /// The agent config the episodes ran with (`think`).
    pub agent: Option<Arc<tb_dataset::AgentConfig>>,
    /// The task's scenario.
    pub scenario: Option<Arc<tb_dataset::Scenario>>,
    /// The session clock.
    pub clock: Clock,
}

/// The script as an agent: plays the steps up to the next `user` step.
#[derive(Debug)]
struct ScriptAgent {
    steps: VecDeque<Value>,
    calls: usize,
}

impl Agent for ScriptAgent {
    fn observe(&mut self, _msgs: &[Message]) {}

    fn reply(&mut self) -> BoxFuture<'_, Result<AgentReply, tb_llm::LlmError>> {
        let step = match self.steps.front() {
            Some(s) if s.get("user").is_none() => self.steps.pop_front(),
            _ => None,
        };
        let messages = match step {
            Some(s) if s.get("call").is_some() => {
                let id = format!("call_{:03}", self.calls);
                self.calls += 1;
                vec![Message::ParallelToolCall {
                    metadata: Map::new(),
                    tool_calls: vec![ToolCall {
                        metadata: Map::new(),
                        name: s["call"].as_str().unwrap_or_default().to_string(),
                        arguments: s.get("args").cloned().unwrap_or_else(|| json!({})),
                        id,
                    }],
                }]
            }
            Some(s) => {
                let mut meta = Map::new();
                meta.insert("tag".into(), json!("text"));
                vec![Message::Text {
                    metadata: meta,
                    role: "assistant".into(),
                    content: s
                        .get("say")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string(),
                }]
            }
            // The script has nothing for the agent here: an empty reply ends its turn.
            None => Vec::new(),
        };
        Box::pin(async move {
            Ok(AgentReply {
                messages,
                usage: None,
            })
        })
    }
}

/// `sha256(json.dumps(v, sort_keys=True))` with Python's default separators.
pub fn effects_sha256(v: &Value) -> String {
    let text = pyjson::dumps(v, pyjson::Layout::SortKeys);
    tb_core::sha256_hex(text.as_bytes())
}

fn short(v: &str) -> String {
    const N: usize = 300;
    if v.chars().count() <= N {
        v.to_string()
    } else {
        format!("{}...", v.chars().take(N).collect::<String>())
    }
}

/// Replays one scripted record of `task` and adds what it compared to `summary`.
pub async fn replay_script(
    env: &ScriptEnv<'_>,
    task: &Task,
    record: &Value,
    summary: &mut ScriptSummary,
) {
    let id = record["id"].as_str().unwrap_or_default().to_string();
    let kind = record["kind"].as_str().unwrap_or_default().to_string();
    summary.traces += 1;
    let miss = |summary: &mut ScriptSummary, what: &str, detail: String| {
        summary.mismatches.push(ScriptMismatch {
            trace: id.clone(),
            kind: kind.clone(),
            what: what.into(),
            detail,
        });
    };
    let mut session = match env.sandbox.session(task, env.clock) {
        Ok(s) => s,
        Err(e) => return miss(summary, "session", e.to_string()),
    };
    let prepared = env
        .sandbox
        .agent_tools(env.agent.as_ref(), env.scenario.as_ref(), &session);
    let tools = match &prepared.tools {
        Ok(t) => t,
        Err(e) => return miss(summary, "session", e.clone()),
    };
    let system = crate::attempt::system_messages_of(
        env.agent.as_ref().map(|a| a.system_instructions.as_str()),
        env.scenario
            .as_ref()
            .and_then(|s| s.bot_instructions.as_deref()),
        task.bot_instructions.as_deref(),
    );
    let prompts = crate::prompts::Prompts::default();
    let spec = EpisodeSpec {
        task,
        system,
        tools,
        user: None,
        user_can_end: false,
        message_timeout: None,
        keep_user_history: false,
        prompts: &prompts,
    };
    let steps: VecDeque<Value> = record["script"]
        .as_array()
        .map(|a| a.iter().cloned().collect())
        .unwrap_or_default();
    let mut agent = ScriptAgent { steps, calls: 0 };
    let mut st = EpisodeState::default();
    st.messages.extend(spec.system.iter().cloned());
    let mut user_text = task.query.clone().unwrap_or_default();
    let finish = loop {
        st.messages.push(Message::text("user", user_text.clone()));
        if let Err(e) =
            crate::episode::run_agent_turn(&spec, &mut agent, &mut session, &mut st).await
        {
            return miss(summary, "session", e.to_string());
        }
        if let Some(r) = crate::episode::should_end(&st.messages) {
            break Some(r);
        }
        match agent.steps.pop_front() {
            Some(s) if s.get("user").is_some() => {
                user_text = s["user"].as_str().unwrap_or_default().to_string();
            }
            Some(s) => {
                break {
                    miss(
                        summary,
                        "session",
                        format!("the agent's turn ended before script step {s}"),
                    );
                    None
                };
            }
            None => break None,
        }
    };
    let finish_text = finish
        .map(|f| serde_json::to_value(f).unwrap_or_default())
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    if finish_text == record["finish_reason"].as_str().unwrap_or_default() {
        summary.finish_match += 1;
    } else {
        miss(
            summary,
            "finish_reason",
            format!("want {}, got {finish_text:?}", record["finish_reason"]),
        );
    }
    // Calls: the recorded executed calls against ours, in order.
    let recorded = record["calls"].as_array().cloned().unwrap_or_default();
    // Unexecuted calls (end-turn tools, tools outside the scenario) count too: their text is
    // what the agent received (empty for an end-turn tool).
    for (i, want) in recorded.iter().enumerate() {
        summary.calls += 1;
        let want_text = want["result"].as_str().unwrap_or_default();
        match st.tool_calls.get(i) {
            Some((tc, got)) if tc.name == want["tool"].as_str().unwrap_or_default() => {
                if got == want_text {
                    summary.calls_match += 1;
                } else {
                    miss(
                        summary,
                        "call",
                        format!(
                            "call {i} ({}): want {:?}, got {:?}",
                            tc.name,
                            short(want_text),
                            short(got)
                        ),
                    );
                }
            }
            other => miss(
                summary,
                "call",
                format!(
                    "call {i}: want {}, got {:?}",
                    want["tool"],
                    other.map(|(t, _)| &t.name)
                ),
            ),
        }
    }
    // Effects, per server.
    let state = match crate::judge::StateJudge::new().judge(env.sandbox, task, env.clock, &session)
    {
        Ok(s) => s,
        Err(e) => return miss(summary, "session", e.to_string()),
    };
    let mut effects = crate::pybody::v1_effects(task, &state);
    if let Value::Object(m) = &mut effects {
        m.extend(session.own_effects());
    }
    let want_hashes: Vec<(String, String)> = match &record["effects_sha256"] {
        Value::String(h) => task
            .servers()
            .first()
            .map(|s| vec![(s.clone(), h.clone())])
            .unwrap_or_default(),
        Value::Object(m) => m
            .iter()
            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
            .collect(),
        _ => Vec::new(),
    };
    for (server, want) in want_hashes {
        summary.effects += 1;
        let got = effects.get(&server).map(effects_sha256).unwrap_or_default();
        if got == want {
            summary.effects_match += 1;
        } else {
            miss(
                summary,
                "effects",
                format!("{server}: want {want}, got {got}"),
            );
        }
    }
    // Verdicts, judge yes then no.
    let ctx = std::sync::Arc::new(crate::pybody::context(&st.messages, effects));
    let test = task.uid.rsplit(':').next().unwrap_or("");
    let (path, source) = match env.sandbox.test_source(task) {
        Ok(x) => x,
        Err(e) => return miss(summary, "session", e),
    };
    for (answer, key) in [(true, "verdict_judge_yes"), (false, "verdict_judge_no")] {
        let want = &record[key];
        summary.verdicts += 1;
        match run_body(
            &path,
            &source,
            test,
            &ctx,
            BodyJudge::Fixed(answer),
            &tb_pyeval::Limits::default(),
        )
        .await
        {
            Ok(run) => {
                let o = &run.outcome;
                if json!(o.passed) == want["passed"]
                    && json!(o.system_error) == want["system_error"]
                    && json!(o.message) == want["message"]
                {
                    summary.verdicts_match += 1;
                } else {
                    miss(
                        summary,
                        key,
                        format!(
                            "want passed={} system_error={} {:?}, got passed={} system_error={} {:?}",
                            want["passed"],
                            want["system_error"],
                            short(want["message"].as_str().unwrap_or_default()),
                            o.passed,
                            o.system_error,
                            short(&o.message)
                        ),
                    );
                }
            }
            Err(e) => miss(summary, key, e),
        }
    }
}

/// Reads a JSONL file of scripted records (file:line on a bad line).
pub fn read_script_records(path: &std::path::Path) -> Result<Vec<Value>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?;
        if !is_script_record(&v) || v.get("id").and_then(Value::as_str).is_none() {
            return Err(format!(
                "{}:{}: not a scripted trace record (needs `id` and `script`)",
                path.display(),
                i + 1
            ));
        }
        out.push(v);
    }
    Ok(out)
}
