//! Test bodies through the Python evaluator (`tb-pyeval`): the reference's `TestContext` of an
//! attempt (last response, tool calls with their responses, effects per server) and the
//! outcome of running a test function on it.
//!
//! For the v1 servers the effects are what their `__reserved__geteffects` reports to a test:
//! `result_db_hash`, `golden_db_hash`, the deep `diff`, `rubrics` and, where the task's init
//! has them, `rubrics_yesno` (the states are left out: no published test reads them).

use serde_json::{Map, Value, json};
use tb_core::{Message, StateVerdict, Task};
use tb_sandbox::ServerSession;

/// `x.response`: the last visible (not dummy, not think) assistant text.
pub fn response_of(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.is_visible_assistant_text())
        .and_then(|m| match m {
            Message::Text { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// `x.tool_calls`: every call (end-turn calls included) with its response, paired by id, in
/// the reference's JSON form.
pub fn tool_calls_of(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Message::ParallelToolCall { tool_calls, .. } = m else {
            continue;
        };
        for call in tool_calls {
            let response = messages[i + 1..].iter().find_map(|r| match r {
                Message::ToolResponse { id, .. } if *id == call.id => serde_json::to_value(r).ok(),
                _ => None,
            });
            let response = response.unwrap_or_else(|| {
                json!({"T": "ToolResponse", "metadata": {}, "name": call.name, "content": "", "id": call.id})
            });
            out.push(json!({"tool_call": serde_json::to_value(call).unwrap_or(Value::Null), "tool_response": response}));
        }
    }
    out
}

/// The v1 servers' effects for a test, from the state verdicts of an attempt.
pub fn v1_effects(task: &Task, state: &[StateVerdict]) -> Value {
    let mut effects = Map::new();
    for s in state {
        let mut m = Map::new();
        m.insert("result_db_hash".into(), json!(s.result_hash));
        m.insert("golden_db_hash".into(), json!(s.golden_hash));
        m.insert("diff".into(), Value::Array(s.diff.clone()));
        // The server's init config: the scenario's world_state merged with the task's init.
        let init = task.world_state.get(&s.server);
        m.insert(
            "rubrics".into(),
            init.and_then(|i| i.get("rubrics"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        if let Some(r) = init.and_then(|i| i.get("rubrics_yesno")) {
            m.insert("rubrics_yesno".into(), r.clone());
        }
        effects.insert(s.server.clone(), Value::Object(m));
    }
    Value::Object(effects)
}

/// The effects of servers that report their own (`ServerSession::effects`, e.g. the airline),
/// by server name, added to `effects` (a v1 server's entry is kept when it has none).
pub fn add_server_effects(effects: &mut Value, sessions: &[&dyn ServerSession]) {
    if !effects.is_object() {
        *effects = Value::Object(Map::new());
    }
    if let Value::Object(m) = effects {
        for s in sessions {
            if let Some(e) = s.effects() {
                m.insert(s.server().to_string(), e);
            }
        }
    }
}

/// The reference's JSON form of a `TestContext`.
pub fn context(messages: &[Message], effects: Value) -> Value {
    json!({
        "response": response_of(messages),
        "tool_direct_responses": [],
        "effects": effects,
        "tool_calls": tool_calls_of(messages),
        "messages": messages,
        "init_result": {},
        "metadata": {},
    })
}

/// Parses and checks the test file of every task once: each syntax error or construct the
/// evaluator does not support, as `file:line: ...` (before any model is called).
pub fn check_test_files(data_root: &std::path::Path, tasks: &[Task]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    for t in tasks {
        if !seen.insert(t.source.path.clone()) {
            continue;
        }
        let path = test_file_path(data_root, t);
        match tb_pyeval::TestFile::read(&path) {
            Ok(file) => {
                for u in file.unsupported() {
                    problems.push(format!(
                        "{}:{}: not supported by tb's test-body evaluator: {}",
                        path.display(),
                        u.line,
                        u.construct
                    ));
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    problems
}

/// A task's test file: its source path under the data root, or as given when it is not there
/// (`SourceLoc::path` is relative to the data root when possible).
pub fn test_file_path(data_root: &std::path::Path, task: &Task) -> std::path::PathBuf {
    let under_root = data_root.join(&task.source.path);
    if under_root.is_file() {
        under_root
    } else {
        std::path::PathBuf::from(&task.source.path)
    }
}
