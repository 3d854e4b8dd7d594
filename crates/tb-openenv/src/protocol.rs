//! The OpenEnv wire format: client frames, the ThinkingBox actions carried by `step`, server
//! frames (observation envelopes, state, errors) and the public JSON schemas.
//!
//! Every client frame is a JSON text object with a `type`; every server reply is one JSON text
//! frame. Parsing never panics: anything malformed becomes an [`ErrorFrame`] with one of the
//! OpenEnv error codes, and errors never echo server internals.

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use serde_json::{Map, Value, json};

/// The OpenEnv error codes of `{"type":"error","data":{"message","code"}}` frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// The frame is not JSON (or not a JSON object).
    InvalidJson,
    /// The frame's `type` is not one we serve.
    UnknownType,
    /// The frame or its action does not match the schema.
    ValidationError,
    /// The environment failed to carry out a valid request.
    ExecutionError,
    /// Too many environments are open; the socket is closed after this frame.
    CapacityReached,
    /// The environment could not be created; the socket is closed after this frame.
    FactoryError,
    /// The session failed; the socket is closed after this frame.
    SessionError,
}

impl ErrorCode {
    /// The code as sent.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidJson => "INVALID_JSON",
            ErrorCode::UnknownType => "UNKNOWN_TYPE",
            ErrorCode::ValidationError => "VALIDATION_ERROR",
            ErrorCode::ExecutionError => "EXECUTION_ERROR",
            ErrorCode::CapacityReached => "CAPACITY_REACHED",
            ErrorCode::FactoryError => "FACTORY_ERROR",
            ErrorCode::SessionError => "SESSION_ERROR",
        }
    }
}

/// One problem found while validating a frame (pydantic-like: location, message, type).
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    /// Path of the offending field (`["data", "arguments"]`).
    pub loc: Vec<String>,
    /// What is wrong, in fixed words (never the offending value).
    pub msg: String,
    /// A short class (`missing`, `extra_forbidden`, `type_error`, `value_error`).
    pub kind: &'static str,
}

impl FieldError {
    /// A problem with one field.
    pub fn new(loc: &[&str], msg: impl Into<String>, kind: &'static str) -> Self {
        FieldError {
            loc: loc.iter().map(std::string::ToString::to_string).collect(),
            msg: msg.into(),
            kind,
        }
    }

    fn to_json(&self) -> Value {
        json!({"loc": self.loc, "msg": self.msg, "type": self.kind})
    }
}

/// An error frame.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorFrame {
    /// The code.
    pub code: ErrorCode,
    /// A fixed message.
    pub message: String,
    /// Extra `data` keys (`errors`, `active_sessions`, ...).
    pub extra: Map<String, Value>,
}

impl ErrorFrame {
    /// An error frame with a message and no extra keys.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorFrame {
            code,
            message: message.into(),
            extra: Map::new(),
        }
    }

    /// A `VALIDATION_ERROR` listing the problems.
    pub fn validation(errors: &[FieldError]) -> Self {
        let mut f = ErrorFrame::new(ErrorCode::ValidationError, "Invalid message");
        f.extra.insert(
            "errors".into(),
            Value::Array(errors.iter().map(FieldError::to_json).collect()),
        );
        f
    }

    /// Whether the server closes the socket after sending it.
    pub fn closes(&self) -> bool {
        matches!(
            self.code,
            ErrorCode::CapacityReached | ErrorCode::FactoryError | ErrorCode::SessionError
        )
    }

    /// The frame as JSON text.
    pub fn to_text(&self) -> String {
        let mut data = Map::new();
        data.insert("message".into(), json!(self.message));
        data.insert("code".into(), json!(self.code.as_str()));
        for (k, v) in &self.extra {
            data.insert(k.clone(), v.clone());
        }
        json!({"type": "error", "data": data}).to_string()
    }
}

/// A client frame.
#[derive(Debug, Clone, PartialEq)]
pub enum ClientFrame {
    /// `reset` with its keyword arguments.
    Reset(Map<String, Value>),
    /// `step` with its action.
    Step(Action),
    /// `state`.
    State,
    /// `close`.
    Close,
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// Parses one text frame.
pub fn parse_frame(text: &str) -> Result<ClientFrame, ErrorFrame> {
    let v: Value = serde_json::from_str(text).map_err(|_| {
        ErrorFrame::new(
            ErrorCode::InvalidJson,
            "Invalid JSON: the frame is not JSON",
        )
    })?;
    let Value::Object(m) = v else {
        return Err(ErrorFrame::new(
            ErrorCode::InvalidJson,
            "Invalid JSON: the frame must be a JSON object",
        ));
    };
    let ty = match m.get("type") {
        Some(Value::String(s)) => s.as_str(),
        None => "",
        Some(_) => {
            return Err(ErrorFrame::validation(&[FieldError::new(
                &["type"],
                "must be a string",
                "type_error",
            )]));
        }
    };
    match ty {
        "reset" => match m.get("data") {
            None | Some(Value::Null) => Ok(ClientFrame::Reset(Map::new())),
            Some(Value::Object(d)) => Ok(ClientFrame::Reset(d.clone())),
            Some(other) => Err(ErrorFrame::validation(&[FieldError::new(
                &["data"],
                format!("must be an object, found {}", type_name(other)),
                "type_error",
            )])),
        },
        "step" => match m.get("data") {
            Some(Value::Object(d)) => Action::parse(d)
                .map(ClientFrame::Step)
                .map_err(|e| ErrorFrame::validation(&e)),
            None => Err(ErrorFrame::validation(&[FieldError::new(
                &["data"],
                "field required",
                "missing",
            )])),
            Some(other) => Err(ErrorFrame::validation(&[FieldError::new(
                &["data"],
                format!("must be an object, found {}", type_name(other)),
                "type_error",
            )])),
        },
        "state" => Ok(ClientFrame::State),
        "close" => Ok(ClientFrame::Close),
        other => Err(ErrorFrame::new(
            ErrorCode::UnknownType,
            format!("Unknown message type: {}", short(other)),
        )),
    }
}

/// At most 64 characters of client text, for messages.
fn short(s: &str) -> String {
    let mut out: String = s.chars().take(64).collect();
    if out.len() < s.len() {
        out.push('…');
    }
    out
}

/// One call of a `call_tool` batch (`parallel_tool_calls`), or an end-turn call of a
/// `submit_message` ([`TerminalCall`]).
#[derive(Debug, Clone, PartialEq)]
pub struct BatchCall {
    /// Tool name.
    pub name: String,
    /// Arguments (an object unless `parse_error` is set).
    pub arguments: Value,
    /// Call id: required and unique in a batch; a single call may omit it.
    pub call_id: Option<String>,
    /// The provider's argument parse error; the call is then not executed.
    pub parse_error: Option<String>,
}

/// An end-turn call recorded with a `submit_message` (never executed): the fields of a
/// batch call, its call id required on the wire but ids may repeat within a turn.
pub type TerminalCall = BatchCall;

/// A ThinkingBox action (`step` data).
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// `{"type":"list_tools"}`: the visible tools (not a turn).
    ListTools,
    /// `{"type":"call_tool","tool_name","arguments","call_id"}`: one call.
    CallTool {
        /// Tool name.
        tool_name: String,
        /// Arguments object.
        arguments: Map<String, Value>,
        /// Call id, if given.
        call_id: Option<String>,
    },
    /// `{"type":"call_tool","parallel_tool_calls":[...]}`: one provider batch.
    CallTools(Vec<BatchCall>),
    /// `{"type":"submit_message","content","terminal_tool_calls","tool_calls_before_content"}`.
    SubmitMessage {
        /// Assistant text to the user.
        content: Option<String>,
        /// End-turn calls of the same provider turn.
        terminal_tool_calls: Vec<TerminalCall>,
        /// The calls came before the text.
        tool_calls_before_content: bool,
    },
    /// `{"type":"_finish","reason"}`: the trusted harness ends the episode (not in the schema).
    /// The reason is any string (default `harness`); it is recorded as the finish reason.
    Finish(String),
}

struct Fields<'a> {
    m: &'a Map<String, Value>,
    prefix: Vec<String>,
    errors: Vec<FieldError>,
}

impl<'a> Fields<'a> {
    fn new(m: &'a Map<String, Value>, prefix: &[String]) -> Self {
        Fields {
            m,
            prefix: prefix.to_vec(),
            errors: Vec::new(),
        }
    }

    fn loc(&self, k: &str) -> Vec<String> {
        let mut l = self.prefix.clone();
        l.push(k.to_string());
        l
    }

    fn err(&mut self, k: &str, msg: impl Into<String>, kind: &'static str) {
        let loc = self.loc(k);
        self.errors.push(FieldError {
            loc,
            msg: msg.into(),
            kind,
        });
    }

    fn allow(&mut self, keys: &[&str]) {
        let extra: Vec<String> = self
            .m
            .keys()
            .filter(|k| !keys.contains(&k.as_str()))
            .cloned()
            .collect();
        for k in extra {
            self.err(&k, "extra fields not permitted", "extra_forbidden");
        }
    }

    /// [`Fields::allow`] for an action object: `type`, `metadata` and the action's `keys`.
    fn allow_action(&mut self, keys: &[&str]) {
        let all: Vec<&str> = ["type", "metadata"].iter().chain(keys).copied().collect();
        self.allow(&all);
    }

    fn present(&self, k: &str) -> bool {
        !matches!(self.m.get(k), None | Some(Value::Null))
    }

    fn opt_str(&mut self, k: &str) -> Option<String> {
        match self.m.get(k) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => {
                let msg = format!("must be a string, found {}", type_name(other));
                self.err(k, msg, "type_error");
                None
            }
        }
    }

    fn req_str(&mut self, k: &str) -> Option<String> {
        if !self.present(k) {
            self.err(k, "field required", "missing");
            return None;
        }
        self.opt_str(k)
    }

    /// A boolean that defaults to false when absent (null is refused).
    fn opt_bool(&mut self, k: &str) -> bool {
        match self.m.get(k) {
            None => false,
            Some(Value::Bool(b)) => *b,
            Some(other) => {
                let msg = format!("must be a boolean, found {}", type_name(other));
                self.err(k, msg, "type_error");
                false
            }
        }
    }

    fn metadata(&mut self) {
        if let Some(v) = self.m.get("metadata")
            && !v.is_object()
        {
            let msg = format!("must be an object, found {}", type_name(v));
            self.err("metadata", msg, "type_error");
        }
    }

    /// An object field that defaults to `{}` when absent (null is refused, as the adapter's
    /// models refuse it).
    fn object(&mut self, k: &str) -> Option<Map<String, Value>> {
        match self.m.get(k) {
            None => Some(Map::new()),
            Some(Value::Object(o)) => Some(o.clone()),
            Some(other) => {
                let msg = format!("must be an object, found {}", type_name(other));
                self.err(k, msg, "type_error");
                None
            }
        }
    }

    /// A list of objects that defaults to `[]` when absent (null is refused).
    fn list(&mut self, k: &str) -> Vec<Map<String, Value>> {
        match self.m.get(k) {
            None => Vec::new(),
            Some(Value::Array(a)) => {
                let mut out = Vec::new();
                for (i, it) in a.iter().enumerate() {
                    match it {
                        Value::Object(o) => out.push(o.clone()),
                        other => {
                            let msg =
                                format!("item {i} must be an object, found {}", type_name(other));
                            self.err(k, msg, "type_error");
                        }
                    }
                }
                out
            }
            Some(other) => {
                let msg = format!("must be a list, found {}", type_name(other));
                self.err(k, msg, "type_error");
                Vec::new()
            }
        }
    }
}

/// Longest accepted tool name, call id or finish reason (longer is a validation error).
pub const MAX_NAME_LEN: usize = 256;

/// The finish reason of a `_finish` action that names none.
pub const DEFAULT_FINISH_REASON: &str = "harness";

impl Action {
    /// Validates an action object (`step` data). Unknown keys are refused, as the
    /// reference's models forbid extras.
    pub fn parse(d: &Map<String, Value>) -> Result<Action, Vec<FieldError>> {
        let root = vec!["data".to_string()];
        let ty = match d.get("type") {
            Some(Value::String(s)) => s.clone(),
            None => {
                return Err(vec![FieldError::new(
                    &["data", "type"],
                    "field required (list_tools, call_tool or submit_message)",
                    "missing",
                )]);
            }
            Some(other) => {
                return Err(vec![FieldError::new(
                    &["data", "type"],
                    format!("must be a string, found {}", type_name(other)),
                    "type_error",
                )]);
            }
        };
        let mut f = Fields::new(d, &root);
        f.metadata();
        let action = match ty.as_str() {
            "list_tools" => {
                f.allow_action(&[]);
                Some(Action::ListTools)
            }
            "call_tool" => Self::parse_call(&mut f),
            "submit_message" => Self::parse_submit(&mut f),
            "_finish" => {
                f.allow_action(&["reason"]);
                let reason = match d.get("reason") {
                    None => Some(DEFAULT_FINISH_REASON.to_string()),
                    Some(Value::String(s)) if s.len() <= MAX_NAME_LEN => Some(s.clone()),
                    Some(Value::String(_)) => {
                        f.err(
                            "reason",
                            format!("must be at most {MAX_NAME_LEN} bytes"),
                            "value_error",
                        );
                        None
                    }
                    Some(other) => {
                        let msg = format!("must be a string, found {}", type_name(other));
                        f.err("reason", msg, "type_error");
                        None
                    }
                };
                reason.map(Action::Finish)
            }
            _ => {
                f.err(
                    "type",
                    "must be one of list_tools, call_tool, submit_message",
                    "value_error",
                );
                None
            }
        };
        match action {
            Some(a) if f.errors.is_empty() => Ok(a),
            _ => Err(f.errors),
        }
    }

    fn check_name(f: &mut Fields<'_>, k: &str, v: Option<&String>) {
        if let Some(s) = v
            && (s.is_empty() || s.len() > MAX_NAME_LEN)
        {
            f.err(
                k,
                format!("must be 1 to {MAX_NAME_LEN} bytes"),
                "value_error",
            );
        }
    }

    fn parse_call(f: &mut Fields<'_>) -> Option<Action> {
        f.allow_action(&["tool_name", "arguments", "call_id", "parallel_tool_calls"]);
        // `parallel_tool_calls` defaults to an empty list, which means "no batch"; a batch is
        // a non-empty list. Exactly one of `tool_name` and a batch must be given.
        let items = f.list("parallel_tool_calls");
        let arguments = f.object("arguments");
        let batch =
            f.m.get("parallel_tool_calls")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
        let tool_name = f.opt_str("tool_name");
        Self::check_name(f, "tool_name", tool_name.as_ref());
        let call_id = f.opt_str("call_id");
        Self::check_name(f, "call_id", call_id.as_ref());
        if batch {
            if f.present("tool_name") {
                f.err(
                    "tool_name",
                    "supply exactly one of tool_name and a non-empty parallel_tool_calls",
                    "value_error",
                );
            }
            if arguments.as_ref().is_some_and(|a| !a.is_empty()) {
                f.err(
                    "arguments",
                    "must be empty with parallel_tool_calls (each call carries its own)",
                    "value_error",
                );
            }
            if f.present("call_id") {
                f.err(
                    "call_id",
                    "must be null with parallel_tool_calls (each call carries its own)",
                    "value_error",
                );
            }
            Some(Action::CallTools(Self::parse_calls(
                f,
                &items,
                "parallel_tool_calls",
                true,
            )))
        } else {
            if tool_name.is_none() && f.errors.is_empty() {
                f.err(
                    "tool_name",
                    "field required (or a non-empty parallel_tool_calls)",
                    "missing",
                );
            }
            Some(Action::CallTool {
                tool_name: tool_name?,
                arguments: arguments?,
                call_id,
            })
        }
    }

    /// The calls of the list field `key`: name and call id required (and not too long),
    /// arguments an object, an optional parse error; with `unique_ids` a repeated call id is
    /// an error.
    fn parse_calls(
        f: &mut Fields<'_>,
        items: &[Map<String, Value>],
        key: &str,
        unique_ids: bool,
    ) -> Vec<BatchCall> {
        let mut calls = Vec::new();
        let mut ids = std::collections::HashSet::new();
        for (i, it) in items.iter().enumerate() {
            let mut loc = f.prefix.clone();
            loc.push(key.into());
            loc.push(i.to_string());
            let mut c = Fields::new(it, &loc);
            c.allow(&["name", "arguments", "call_id", "parse_error"]);
            let name = c.req_str("name");
            Self::check_name(&mut c, "name", name.as_ref());
            let call_id = c.req_str("call_id");
            Self::check_name(&mut c, "call_id", call_id.as_ref());
            let parse_error = c.opt_str("parse_error");
            let arguments = c.object("arguments");
            if unique_ids
                && let Some(id) = &call_id
                && !ids.insert(id.clone())
            {
                c.err("call_id", "duplicate call_id in the batch", "value_error");
            }
            f.errors.append(&mut c.errors);
            if let (Some(name), Some(arguments), Some(call_id)) = (name, arguments, call_id) {
                calls.push(BatchCall {
                    name,
                    arguments: Value::Object(arguments),
                    call_id: Some(call_id),
                    parse_error,
                });
            }
        }
        calls
    }

    fn parse_submit(f: &mut Fields<'_>) -> Option<Action> {
        f.allow_action(&[
            "content",
            "terminal_tool_calls",
            "tool_calls_before_content",
        ]);
        let content = f.opt_str("content");
        let before = f.opt_bool("tool_calls_before_content");
        let items = f.list("terminal_tool_calls");
        // Call ids are required, as in a batch; unlike a batch, ids may repeat (the adapter's
        // message model does not check them).
        let calls = Self::parse_calls(f, &items, "terminal_tool_calls", false);
        if content.is_none() && items.is_empty() {
            f.err(
                "content",
                "required unless terminal_tool_calls is non-empty",
                "missing",
            );
        }
        Some(Action::SubmitMessage {
            content,
            terminal_tool_calls: calls,
            tool_calls_before_content: before,
        })
    }
}

/// The `data` of an observation frame: `{"observation": {...fields, "metadata"}, "reward",
/// "done", "metadata"?}` (OpenEnv's `serialize_observation`).
pub fn envelope(mut observation: Map<String, Value>, reward: Option<f64>, done: bool) -> Value {
    observation.remove("reward");
    observation.remove("done");
    let metadata = observation
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()))
        .clone();
    let mut data = Map::new();
    data.insert("observation".into(), Value::Object(observation));
    data.insert("reward".into(), reward.map_or(Value::Null, |r| json!(r)));
    data.insert("done".into(), json!(done));
    if metadata.as_object().is_some_and(|m| !m.is_empty()) {
        data.insert("metadata".into(), metadata);
    }
    Value::Object(data)
}

/// An observation frame as text.
pub fn observation_frame(data: &Value) -> String {
    json!({"type": "observation", "data": data}).to_string()
}

/// A state frame as text.
pub fn state_frame(data: &Value) -> String {
    json!({"type": "state", "data": data}).to_string()
}

/// `GET /schema`: the public action (three variants; `_finish` is deliberately absent),
/// observation and state schemas.
pub fn schema() -> Value {
    let meta = json!({"type": "object", "additionalProperties": true, "default": {}});
    let tool_call_child = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "call_id"],
        "properties": {
            "name": {"type": "string"},
            "arguments": {"type": "object", "default": {}},
            "call_id": {"type": "string"},
            "parse_error": {"type": ["string", "null"], "default": null}
        }
    });
    let terminal_child = tool_call_child.clone();
    let message = json!({"type": "object", "description": "A ThinkingBox message, discriminated by `T`: Text, ParallelToolCall or ToolResponse."});
    let tool = json!({
        "type": "object",
        "additionalProperties": false,
        "required": ["name", "description", "input_schema"],
        "properties": {
            "name": {"type": "string"},
            "description": {"type": "string"},
            "input_schema": {"type": "object"}
        }
    });
    json!({
        "action": {
            "title": "ThinkingBoxAction",
            "oneOf": [
                {
                    "title": "ListToolsAction",
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["type"],
                    "properties": {"type": {"const": "list_tools"}, "metadata": meta}
                },
                {
                    "title": "CallToolAction",
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["type"],
                    "description": "Either one call (tool_name, arguments, call_id) or one provider batch (parallel_tool_calls), not both.",
                    "properties": {
                        "type": {"const": "call_tool"},
                        "tool_name": {"type": ["string", "null"]},
                        "arguments": {"type": "object", "default": {}},
                        "call_id": {"type": ["string", "null"], "default": null},
                        "parallel_tool_calls": {"type": "array", "items": tool_call_child, "default": []},
                        "metadata": meta
                    }
                },
                {
                    "title": "SubmitMessageAction",
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["type"],
                    "description": "Assistant text to the user; content is required unless terminal_tool_calls is non-empty.",
                    "properties": {
                        "type": {"const": "submit_message"},
                        "content": {"type": ["string", "null"]},
                        "terminal_tool_calls": {"type": "array", "items": terminal_child, "default": []},
                        "tool_calls_before_content": {"type": "boolean", "default": false},
                        "metadata": meta
                    }
                }
            ]
        },
        "observation": {
            "title": "ThinkingBoxObservation",
            "type": "object",
            "additionalProperties": false,
            "required": ["kind", "system_error", "steps_taken"],
            "properties": {
                "kind": {"enum": ["reset", "tools", "tool", "tool_batch", "user", "terminal", "error"]},
                "task_uid": {"type": "string"},
                "task": {"type": "string"},
                "system_instructions": {"type": "string"},
                "bot_instructions": {"type": "string"},
                "tools": {"type": "array", "items": tool},
                "messages": {"type": "array", "items": message},
                "tool_name": {"type": "string"},
                "call_id": {"type": "string"},
                "tool_result": {"type": "string"},
                "tool_error": {"enum": ["tool_not_found", "invalid_args", "execution_error"]},
                "direct_response": {"type": "string"},
                "tool_results": {"type": "array", "items": {"type": "object"}},
                "user_message": {"type": "string"},
                "response": {"type": "string"},
                "finish_reason": {"type": "string"},
                "reward_type": {"enum": ["pass", "fail", "system_error"]},
                "test_summary": {
                    "type": "object",
                    "properties": {
                        "passed": {"type": "boolean"},
                        "graded": {"type": "boolean"},
                        "is_system_error": {"type": "boolean"},
                        "infrastructure_stage": {"type": "string"}
                    }
                },
                "error": {"type": "string"},
                "system_error": {"type": "boolean", "default": false},
                "steps_taken": {"type": "integer", "minimum": 0},
                "done": {"type": "boolean", "default": false},
                "reward": {"type": ["number", "boolean", "integer", "null"]},
                "metadata": meta
            }
        },
        "state": {
            "title": "ThinkingBoxState",
            "type": "object",
            "additionalProperties": true,
            "required": ["step_count"],
            "properties": {
                "episode_id": {"type": ["string", "null"]},
                "step_count": {"type": "integer", "minimum": 0},
                "task_uid": {"type": ["string", "null"]},
                "status": {"enum": ["idle", "active", "finalizing", "done", "closed", "error"]},
                "system_error": {"type": "boolean"}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn step(v: Value) -> Result<ClientFrame, ErrorFrame> {
        parse_frame(&json!({"type": "step", "data": v}).to_string())
    }

    #[test]
    fn frames_and_actions() {
        assert_eq!(
            parse_frame("nope").unwrap_err().code,
            ErrorCode::InvalidJson
        );
        assert_eq!(parse_frame("[1]").unwrap_err().code, ErrorCode::InvalidJson);
        assert_eq!(
            parse_frame(r#"{"type":"dance"}"#).unwrap_err().code,
            ErrorCode::UnknownType
        );
        assert_eq!(
            parse_frame(r#"{"type":"step"}"#).unwrap_err().code,
            ErrorCode::ValidationError
        );
        assert_eq!(
            parse_frame(r#"{"type":"state"}"#).unwrap(),
            ClientFrame::State
        );
        assert_eq!(
            step(json!({"type": "list_tools", "metadata": {}})).unwrap(),
            ClientFrame::Step(Action::ListTools)
        );
        assert!(matches!(
            step(json!({"type": "call_tool", "tool_name": "t", "arguments": {"a": 1}})).unwrap(),
            ClientFrame::Step(Action::CallTool { .. })
        ));
        // arguments must be an object; both forms at once are refused; extras are refused.
        for bad in [
            json!({"type": "call_tool", "tool_name": "t", "arguments": [1]}),
            json!({"type": "call_tool", "tool_name": "t", "parallel_tool_calls": [{"name": "t"}]}),
            json!({"type": "call_tool", "tool_name": "t", "bogus": 1}),
            json!({"type": "call_tool", "parallel_tool_calls": []}),
            json!({"type": "call_tool", "parallel_tool_calls": [{"name": "a", "call_id": "x"}, {"name": "b", "call_id": "x"}]}),
            json!({"type": "submit_message"}),
            json!({"type": "submit_message", "content": 3}),
            json!({"type": "_finish", "reason": 3}),
            json!({"type": "_finish", "reason": null}),
            json!({"type": "call_tool", "tool_name": "t", "arguments": null}),
            json!({"type": "call_tool", "parallel_tool_calls": [{"name": "a", "call_id": "x"}], "arguments": {"k": 1}}),
            json!({"type": "call_tool", "parallel_tool_calls": [{"name": "a", "call_id": "x"}], "call_id": "y"}),
            json!({"type": "call_tool", "tool_name": "t", "parallel_tool_calls": null}),
            json!({"type": "submit_message", "content": "x", "terminal_tool_calls": null}),
            json!({"type": "submit_message", "content": "x", "tool_calls_before_content": null}),
            json!({"type": "verify"}),
            json!({"tool_name": "t"}),
        ] {
            let e = step(bad.clone()).unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationError, "{bad}");
            assert!(!e.to_text().contains("bogus\":1"));
        }
        let ok = step(json!({"type": "call_tool", "parallel_tool_calls": [{"name": "a", "call_id": "c", "parse_error": "bad json"}]})).unwrap();
        assert!(
            matches!(ok, ClientFrame::Step(Action::CallTools(c)) if c[0].parse_error.is_some())
        );
        assert!(matches!(
            step(json!({"type": "submit_message", "terminal_tool_calls": [{"name": "X", "call_id": "c"}]}))
                .unwrap(),
            ClientFrame::Step(Action::SubmitMessage { content: None, .. })
        ));
    }

    /// Each call of a batch or of a terminal turn needs a string `call_id` and object
    /// `arguments` (a parse error does not lift that), as the adapter's models require; ids
    /// must be unique in a batch, not in a terminal turn.
    #[test]
    fn child_calls_need_call_id_and_object_arguments() {
        let refused = |v: Value, loc: &str| {
            let e = step(v.clone()).unwrap_err();
            assert_eq!(e.code, ErrorCode::ValidationError, "{v}");
            assert!(e.to_text().contains(loc), "{v}: {}", e.to_text());
        };
        for (list, extra) in [
            ("parallel_tool_calls", json!({"type": "call_tool"})),
            (
                "terminal_tool_calls",
                json!({"type": "submit_message", "content": "x"}),
            ),
        ] {
            let with = |child: Value| {
                let mut o = extra.as_object().unwrap().clone();
                o.insert(list.into(), json!([child]));
                Value::Object(o)
            };
            refused(with(json!({"name": "a"})), "call_id");
            refused(with(json!({"name": "a", "call_id": null})), "call_id");
            refused(with(json!({"name": "a", "call_id": 7})), "call_id");
            refused(
                with(
                    json!({"name": "a", "call_id": "c", "arguments": "{oops", "parse_error": "bad json"}),
                ),
                "arguments",
            );
            refused(
                with(json!({"name": "a", "call_id": "c", "arguments": null})),
                "arguments",
            );
        }
        let twice = json!([{"name": "End", "call_id": "c"}, {"name": "End", "call_id": "c"}]);
        refused(
            json!({"type": "call_tool", "parallel_tool_calls": twice}),
            "duplicate call_id",
        );
        assert!(matches!(
            step(json!({"type": "submit_message", "terminal_tool_calls": twice})).unwrap(),
            ClientFrame::Step(Action::SubmitMessage { .. })
        ));
    }

    /// The actions as the OpenEnv ThinkingBox adapter's client serializes them (every field
    /// dumped, defaults included).
    #[test]
    fn adapter_client_frames_are_accepted() {
        let single = step(json!({"metadata": {}, "type": "call_tool", "tool_name": "t", "arguments": {"a": 1}, "call_id": "c1", "parallel_tool_calls": []})).unwrap();
        assert_eq!(
            single,
            ClientFrame::Step(Action::CallTool {
                tool_name: "t".into(),
                arguments: json!({"a": 1}).as_object().unwrap().clone(),
                call_id: Some("c1".into()),
            })
        );
        let single = step(json!({"metadata": {}, "type": "call_tool", "tool_name": "t", "arguments": {}, "call_id": null, "parallel_tool_calls": []})).unwrap();
        assert!(matches!(
            single,
            ClientFrame::Step(Action::CallTool { call_id: None, .. })
        ));
        let batch = step(json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {}, "call_id": null, "parallel_tool_calls": [
            {"name": "a", "arguments": {"x": 1}, "call_id": "c1", "parse_error": null},
            {"name": "b", "arguments": {}, "call_id": "c2", "parse_error": "bad json"}
        ]}))
        .unwrap();
        let ClientFrame::Step(Action::CallTools(calls)) = batch else {
            panic!("not a batch: {batch:?}")
        };
        assert_eq!(calls.len(), 2);
        assert_eq!(calls[0].parse_error, None);
        assert_eq!(calls[1].parse_error.as_deref(), Some("bad json"));
        let submit = step(json!({"metadata": {}, "type": "submit_message", "content": "bye", "terminal_tool_calls": [
            {"name": "End", "arguments": {}, "call_id": "t1", "parse_error": null},
            {"name": "Other", "arguments": {}, "call_id": "t2", "parse_error": "oops"}
        ], "tool_calls_before_content": true}))
        .unwrap();
        let ClientFrame::Step(Action::SubmitMessage {
            terminal_tool_calls,
            tool_calls_before_content: true,
            ..
        }) = submit
        else {
            panic!("not a terminal turn: {submit:?}")
        };
        assert_eq!(terminal_tool_calls[0].parse_error, None);
        assert_eq!(terminal_tool_calls[1].parse_error.as_deref(), Some("oops"));
        for (frame, reason) in [
            (
                json!({"metadata": {}, "type": "_finish", "reason": "harness"}),
                "harness",
            ),
            (
                json!({"metadata": {}, "type": "_finish", "reason": "limit"}),
                "limit",
            ),
            (json!({"type": "_finish", "reason": ""}), ""),
            (json!({"type": "_finish"}), DEFAULT_FINISH_REASON),
        ] {
            assert_eq!(
                step(frame).unwrap(),
                ClientFrame::Step(Action::Finish(reason.into()))
            );
        }
        assert_eq!(
            step(json!({"metadata": {}, "type": "list_tools"})).unwrap(),
            ClientFrame::Step(Action::ListTools)
        );
    }

    /// Whether `v` satisfies `schema` (the subset of JSON Schema that [`schema`] uses).
    fn conforms(schema: &Value, v: &Value) -> bool {
        if let Some(alts) = schema.get("oneOf").and_then(Value::as_array) {
            return alts.iter().filter(|s| conforms(s, v)).count() == 1;
        }
        if let Some(c) = schema.get("const") {
            return c == v;
        }
        if let Some(e) = schema.get("enum").and_then(Value::as_array) {
            return e.contains(v);
        }
        let types: Vec<&str> = match schema.get("type") {
            Some(Value::String(t)) => vec![t.as_str()],
            Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        let kind = match v {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        };
        if !types.is_empty() && !types.contains(&kind) {
            return false;
        }
        match v {
            Value::Array(items) => schema
                .get("items")
                .is_none_or(|s| items.iter().all(|i| conforms(s, i))),
            Value::Object(m) => {
                let props = schema.get("properties").and_then(Value::as_object);
                let required_ok =
                    schema
                        .get("required")
                        .and_then(Value::as_array)
                        .is_none_or(|r| {
                            r.iter()
                                .filter_map(Value::as_str)
                                .all(|k| m.contains_key(k))
                        });
                let closed = schema.get("additionalProperties") == Some(&json!(false));
                required_ok
                    && m.iter().all(|(k, x)| match props.and_then(|p| p.get(k)) {
                        Some(s) => conforms(s, x),
                        None => !closed,
                    })
            }
            _ => true,
        }
    }

    mod prop {
        use super::*;
        use proptest::prelude::*;

        fn name() -> impl Strategy<Value = String> {
            "[A-Za-z_][A-Za-z0-9_]{0,16}"
        }

        fn args() -> impl Strategy<Value = Value> {
            proptest::collection::btree_map(name(), any::<i32>(), 0..3).prop_map(|m| json!(m))
        }

        fn opt<T: std::fmt::Debug + Clone + 'static>(
            s: impl Strategy<Value = T> + 'static,
        ) -> impl Strategy<Value = Option<T>> {
            proptest::option::of(s)
        }

        fn metadata(o: &mut Map<String, Value>, m: Option<Value>) {
            if let Some(m) = m {
                o.insert("metadata".into(), m);
            }
        }

        /// Children of a batch or a terminal turn: distinct ids, optional arguments and
        /// `parse_error` (null or text).
        fn children(min: usize) -> impl Strategy<Value = Value> {
            proptest::collection::vec((name(), opt(args()), opt(opt("[ -~]{0,12}"))), min..4)
                .prop_map(|cs| {
                    let items: Vec<Value> = cs
                        .into_iter()
                        .enumerate()
                        .map(|(i, (n, a, pe))| {
                            let mut o = Map::new();
                            o.insert("name".into(), json!(n));
                            if let Some(a) = a {
                                o.insert("arguments".into(), a);
                            }
                            o.insert("call_id".into(), json!(format!("id{i}")));
                            if let Some(pe) = pe {
                                o.insert("parse_error".into(), json!(pe));
                            }
                            Value::Object(o)
                        })
                        .collect();
                    json!(items)
                })
        }

        fn meta() -> impl Strategy<Value = Option<Value>> {
            opt(args())
        }

        /// Actions the public schema allows, within its described rules (one call or a
        /// non-empty batch; content unless terminal calls).
        fn action() -> impl Strategy<Value = Value> {
            let list = meta().prop_map(|m| {
                let mut o = Map::new();
                o.insert("type".into(), json!("list_tools"));
                metadata(&mut o, m);
                Value::Object(o)
            });
            let single = (name(), opt(args()), opt(opt(name())), any::<bool>(), meta()).prop_map(
                |(n, a, id, empty_batch, m)| {
                    let mut o = Map::new();
                    o.insert("type".into(), json!("call_tool"));
                    o.insert("tool_name".into(), json!(n));
                    if let Some(a) = a {
                        o.insert("arguments".into(), a);
                    }
                    if let Some(id) = id {
                        o.insert("call_id".into(), json!(id));
                    }
                    if empty_batch {
                        o.insert("parallel_tool_calls".into(), json!([]));
                    }
                    metadata(&mut o, m);
                    Value::Object(o)
                },
            );
            let batch = (children(1), any::<bool>(), meta()).prop_map(|(c, nulls, m)| {
                let mut o = Map::new();
                o.insert("type".into(), json!("call_tool"));
                o.insert("parallel_tool_calls".into(), c);
                if nulls {
                    o.insert("tool_name".into(), Value::Null);
                    o.insert("arguments".into(), json!({}));
                    o.insert("call_id".into(), Value::Null);
                }
                metadata(&mut o, m);
                Value::Object(o)
            });
            let submit = (
                opt(opt("[ -~]{0,20}")),
                children(0),
                opt(any::<bool>()),
                meta(),
            )
                .prop_filter_map(
                    "content or terminal calls",
                    |(content, c, before, m)| {
                        let has_calls = c.as_array().is_some_and(|a| !a.is_empty());
                        let has_content = matches!(content, Some(Some(_)));
                        if !has_calls && !has_content {
                            return None;
                        }
                        let mut o = Map::new();
                        o.insert("type".into(), json!("submit_message"));
                        if let Some(content) = content {
                            o.insert("content".into(), json!(content));
                        }
                        if has_calls {
                            o.insert("terminal_tool_calls".into(), c);
                        }
                        if let Some(b) = before {
                            o.insert("tool_calls_before_content".into(), json!(b));
                        }
                        metadata(&mut o, m);
                        Some(Value::Object(o))
                    },
                );
            prop_oneof![list, single, batch, submit]
        }

        #[test]
        fn conforms_tells_schema_actions_from_others() {
            let s = schema();
            for (v, ok) in [
                (json!({"type": "list_tools"}), true),
                (json!({"type": "list_tools", "bogus": 1}), false),
                (json!({"type": "call_tool", "tool_name": 3}), false),
                (
                    json!({"type": "submit_message", "content": "x", "terminal_tool_calls": [{"name": "a", "parse_error": 1}]}),
                    false,
                ),
                (
                    json!({"type": "submit_message", "content": "x", "terminal_tool_calls": [{"name": "a", "parse_error": null}]}),
                    false,
                ),
                (
                    json!({"type": "submit_message", "content": "x", "terminal_tool_calls": [{"name": "a", "call_id": "c", "parse_error": null}]}),
                    true,
                ),
                (
                    json!({"type": "call_tool", "tool_name": "t", "arguments": null}),
                    false,
                ),
                (json!({"type": "_finish", "reason": "harness"}), false),
            ] {
                assert_eq!(conforms(&s["action"], &v), ok, "{v}");
            }
        }

        proptest! {
            /// Every generated action satisfies the public schema, and the validator accepts it.
            #[test]
            fn schema_actions_are_accepted(a in action()) {
                let s = schema();
                prop_assert!(conforms(&s["action"], &a), "not in the schema: {a}");
                prop_assert!(step(a.clone()).is_ok(), "refused: {a}: {:?}", step(a.clone()));
            }
        }
    }

    #[test]
    fn envelope_shape() {
        let mut o = Map::new();
        o.insert("kind".into(), json!("reset"));
        o.insert("metadata".into(), json!({"m": 1}));
        let e = envelope(o, None, false);
        assert_eq!(
            e,
            json!({"observation": {"kind": "reset", "metadata": {"m": 1}}, "reward": null, "done": false, "metadata": {"m": 1}})
        );
        let e = envelope(Map::new(), Some(1.0), true);
        assert_eq!(
            e,
            json!({"observation": {"metadata": {}}, "reward": 1.0, "done": true})
        );
        let s = schema();
        assert_eq!(s["action"]["oneOf"].as_array().unwrap().len(), 3);
        assert!(!s.to_string().contains("_finish"));
        assert!(!s["observation"].to_string().contains("user_context"));
    }
}
