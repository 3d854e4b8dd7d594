//! Trial-record skeletons: the metadata every record starts with, a blank record of an
//! attempt, and the system-error records of operational failures (`metadata.error` with its
//! class for the errors sidecar).

use crate::run::RunEnv;
use serde_json::{Map, Value, json};
use tb_core::{FinishReason, Task, TrialRecord, attempt_key};

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

pub(crate) fn error_json(kind: &str, message: &str) -> Value {
    json!({"type": kind, "message": message, "tb": "", "class": error_class(kind)})
}

/// The record of an attempt that failed for operational reasons outside [`crate::attempt`] (e.g.
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
    skeleton(&env.provenance, task, repetition, metadata)
}

/// [`blank_record`] with the run's provenance given alone.
pub(crate) fn skeleton(
    provenance: &Map<String, Value>,
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
        provenance: provenance.clone(),
    }
}
