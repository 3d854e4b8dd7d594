//! The three wire formats: encoding our messages and tools into each API's JSON, building the
//! request body, and (`decode`) decoding a reply into messages, native conversation items and
//! usage.
//! Pure functions on `serde_json::Value`; no IO.

use crate::config::{LlmConfig, Provider, ReasoningSource};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use tb_core::Message;

mod decode;
pub use decode::{Decoded, decode, tool_call_from_text};

/// A tool as the model sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Name.
    pub name: String,
    /// Description.
    pub description: String,
    /// JSON schema of the arguments.
    pub parameters: Value,
}

/// Tools encoded for one provider.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ToolSet {
    /// The provider-native tool list.
    pub encoded: Vec<Value>,
    /// Names, for "does not exist" checks.
    pub names: HashSet<String>,
    /// Anthropic: per tool, sanitized property name -> original.
    pub arg_maps: HashMap<String, HashMap<String, String>>,
}

/// A reply that is not the API's shape, or a conversation the API cannot take.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

/// Why a 2xx reply was not decoded.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// Not the API's shape (retried as a malformed reply).
    #[error(transparent)]
    Malformed(#[from] WireError),
    /// The API's shape, but the reference's client stops on it (a tool call's arguments not
    /// an object, a call without an id, content that is not text, usage counts it cannot
    /// take): the attempt is a system error, with the reference's text of the failure.
    #[error("{0}")]
    Rejected(String),
}

fn is_think(m: &Map<String, Value>) -> bool {
    m.get("tag").and_then(Value::as_str) == Some("think")
}

/// Encodes tools for a provider.
pub fn encode_tools(provider: Provider, tools: &[ToolSpec]) -> Result<ToolSet, WireError> {
    let mut set = ToolSet::default();
    for t in tools {
        let mut params = if let Value::Object(m) = &t.parameters {
            m.clone()
        } else {
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            m.insert("properties".into(), json!({}));
            m
        };
        let enc = match provider {
            Provider::Chat => {
                params.insert("additionalProperties".into(), Value::Bool(false));
                json!({"type": "function", "function": {"name": t.name, "description": t.description, "parameters": params}})
            }
            Provider::Responses => {
                params.insert("additionalProperties".into(), Value::Bool(false));
                json!({"type": "function", "name": t.name, "description": t.description, "parameters": params})
            }
            Provider::Anthropic => {
                let (schema, map) = sanitize_schema(&t.name, params)?;
                if !map.is_empty() {
                    set.arg_maps.insert(t.name.clone(), map);
                }
                json!({"type": "custom", "name": t.name, "description": t.description, "input_schema": schema})
            }
        };
        if let Some(i) = set
            .encoded
            .iter()
            .position(|e| tool_name(e) == Some(t.name.as_str()))
        {
            set.encoded[i] = enc;
        } else {
            set.encoded.push(enc);
        }
        set.names.insert(t.name.clone());
    }
    Ok(set)
}

fn tool_name(v: &Value) -> Option<&str> {
    v.get("name")
        .or_else(|| v.get("function").and_then(|f| f.get("name")))
        .and_then(Value::as_str)
}

fn valid_key(k: &str) -> bool {
    !k.is_empty()
        && k.len() <= 64
        && k.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
}

fn sanitize_key(k: &str) -> String {
    if valid_key(k) {
        return k.to_string();
    }
    let mut s = String::new();
    for c in k.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
            s.push(c);
        } else {
            s.push_str(&format!("_x{:02x}", c as u32));
        }
    }
    s.chars().take(64).collect()
}

/// Sanitized property name -> original.
type KeyMap = HashMap<String, String>;

/// Anthropic rejects top-level property names outside `[A-Za-z0-9_.-]{1,64}`: rewrite them
/// (`_xHH`) and remember the originals.
fn sanitize_schema(
    tool: &str,
    mut schema: Map<String, Value>,
) -> Result<(Map<String, Value>, KeyMap), WireError> {
    let mut map = HashMap::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Ok((schema, map));
    }
    let Some(Value::Object(props)) = schema.get("properties").cloned() else {
        return Ok((schema, map));
    };
    let mut out = Map::new();
    for (k, v) in props {
        let s = sanitize_key(&k);
        if out.contains_key(&s) {
            return Err(WireError(format!(
                "tool {tool}: properties `{k}` and `{}` both become `{s}` for Anthropic",
                map.get(&s).cloned().unwrap_or(s.clone())
            )));
        }
        if s != k {
            map.insert(s.clone(), k);
        }
        out.insert(s, v);
    }
    schema.insert("properties".into(), Value::Object(out));
    if let Some(Value::Array(req)) = schema.get("required").cloned() {
        let req: Vec<Value> = req
            .into_iter()
            .map(|r| {
                r.as_str()
                    .map(|s| Value::String(sanitize_key(s)))
                    .unwrap_or(r)
            })
            .collect();
        schema.insert("required".into(), Value::Array(req));
    }
    Ok((schema, map))
}

/// Encodes one of our messages as provider-native conversation items.
pub fn encode_message(cfg: &LlmConfig, msg: &Message) -> Vec<Value> {
    match cfg.provider {
        Provider::Chat => match msg {
            Message::Text { metadata, role, content } => {
                if is_think(metadata) || metadata.get("is_dummy").and_then(Value::as_bool) == Some(true) {
                    return Vec::new();
                }
                vec![json!({"role": role, "content": content})]
            }
            Message::ParallelToolCall { tool_calls, .. } => {
                let calls: Vec<Value> = tool_calls
                    .iter()
                    .map(|tc| json!({"function": {"arguments": args_text(&tc.arguments), "name": tc.name}, "id": tc.id, "type": "function"}))
                    .collect();
                vec![json!({"role": "assistant", "tool_calls": calls})]
            }
            Message::ToolResponse { content, id, .. } => vec![json!({"role": "tool", "tool_call_id": id, "content": content})],
        },
        Provider::Responses => match msg {
            Message::Text { metadata, role, content } => {
                if is_think(metadata) || metadata.get("is_dummy").and_then(Value::as_bool) == Some(true) {
                    return Vec::new();
                }
                let role = if cfg.is_reasoning && role == "system" { "developer" } else { role.as_str() };
                vec![json!({"role": role, "content": content})]
            }
            Message::ParallelToolCall { tool_calls, .. } => tool_calls
                .iter()
                .map(|tc| json!({"arguments": args_text(&tc.arguments), "call_id": tc.id, "name": tc.name, "type": "function_call"}))
                .collect(),
            Message::ToolResponse { content, id, .. } => vec![json!({"call_id": id, "output": content, "type": "function_call_output"})],
        },
        Provider::Anthropic => match msg {
            Message::Text { metadata, role, content } => {
                if metadata.get("is_dummy").and_then(Value::as_bool) == Some(true) {
                    return Vec::new();
                }
                if role == "system" {
                    return vec![json!({"role": "system", "content": [{"type": "text", "text": content}]})];
                }
                if is_think(metadata) {
                    if let Some(data) = metadata.get("redacted_thinking").filter(|v| !v.is_null()) {
                        return vec![json!({"role": "assistant", "content": [{"type": "redacted_thinking", "data": data}]})];
                    }
                    let mut block = json!({"type": "thinking", "thinking": content});
                    if let Some(sig) = metadata.get("thinking_signature").filter(|v| v.as_str().is_some_and(|s| !s.is_empty())) {
                        block["signature"] = sig.clone();
                    }
                    return vec![json!({"role": "assistant", "content": [block]})];
                }
                vec![json!({"role": role, "content": [{"type": "text", "text": content}]})]
            }
            Message::ParallelToolCall { tool_calls, .. } => {
                let content: Vec<Value> = tool_calls.iter().map(|tc| json!({"type": "tool_use", "id": tc.id, "name": tc.name, "input": tc.arguments})).collect();
                vec![json!({"role": "assistant", "content": content})]
            }
            Message::ToolResponse { content, id, .. } => {
                vec![json!({"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": [{"type": "text", "text": content}]}]})]
            }
        },
    }
}

fn args_text(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_else(|_| "{}".into())
}

/// Builds the request body from the native conversation and tools.
pub fn request_body(
    cfg: &LlmConfig,
    native: &[Value],
    tools: Option<&ToolSet>,
) -> Result<Value, WireError> {
    let body = body_parts(cfg, native, tools)?;
    let BodyParts {
        mut map,
        native: borrowed,
        tools,
    } = body;
    if let Some((k, items)) = borrowed {
        map.insert(k.into(), Value::Array(items.to_vec()));
    }
    if let Some(t) = tools {
        map.insert("tools".into(), Value::Array(t.encoded.clone()));
    }
    Ok(Value::Object(map))
}

/// The request body as JSON bytes: exactly `serde_json::to_vec(&request_body(..))`, written
/// from the borrowed conversation and tools (no copy of the conversation, which holds every
/// tool result so far, nor of the tool schemas).
pub fn request_body_bytes(
    cfg: &LlmConfig,
    native: &[Value],
    tools: Option<&ToolSet>,
) -> Result<Vec<u8>, WireError> {
    request_body_bytes_with(cfg, native, tools, None)
}

/// The JSON of a tool set's `encoded` list, written once for a conversation's every request
/// (the schemas are most of an agent request's bytes).
pub(crate) fn tools_json(tools: &ToolSet) -> Vec<u8> {
    serde_json::to_vec(&tools.encoded).unwrap_or_default()
}

/// [`request_body_bytes`], with the tools' list already written: `tools_json` must be
/// [`tools_json`] of `tools`.
pub(crate) fn request_body_bytes_with(
    cfg: &LlmConfig,
    native: &[Value],
    tools: Option<&ToolSet>,
    tools_json: Option<&[u8]>,
) -> Result<Vec<u8>, WireError> {
    let shared = tools_json.map(bytes::Bytes::copy_from_slice);
    let parts = request_body_segments(cfg, native, tools, shared.as_ref(), None)?;
    Ok(parts.concat())
}

/// The request body as segments whose concatenation is [`request_body_bytes`]: the tools'
/// list, when `tools_json` ([`tools_json`] of `tools`) is given, is that buffer shared (a
/// reference count, not a copy), so the ~100 KB of schemas an agent request carries are held
/// once per tool set however many requests are in flight. `native_json`, when given, must be
/// [`NativeJson`] of `native`: the conversation's items written once each, when they were
/// added, instead of again for every request.
pub(crate) fn request_body_segments(
    cfg: &LlmConfig,
    native: &[Value],
    tools: Option<&ToolSet>,
    tools_json: Option<&bytes::Bytes>,
    native_json: Option<&NativeJson>,
) -> Result<Vec<bytes::Bytes>, WireError> {
    let BodyParts {
        map,
        native: borrowed,
        tools,
    } = body_parts(cfg, native, tools)?;
    let mut segments = Vec::with_capacity(3);
    let mut out = Vec::with_capacity(4 * 1024);
    out.push(b'{');
    for (i, (k, v)) in map.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put(&mut out, k)?;
        out.push(b':');
        match (borrowed, tools) {
            (Some((nk, items)), _) if k == nk => match native_json {
                Some(j) if j.items == items.len() => {
                    out.reserve(j.json.len() + 2);
                    out.push(b'[');
                    out.extend_from_slice(&j.json);
                    out.push(b']');
                }
                _ => put(&mut out, items)?,
            },
            (_, Some(t)) if k == "tools" => match tools_json {
                Some(j) if !j.is_empty() => {
                    segments.push(bytes::Bytes::from(std::mem::take(&mut out)));
                    segments.push(j.clone());
                }
                _ => put(&mut out, &t.encoded)?,
            },
            _ => put(&mut out, v)?,
        }
    }
    out.push(b'}');
    segments.push(bytes::Bytes::from(out));
    Ok(segments)
}

/// A conversation's items as the compact JSON of the list without its brackets (each item
/// as `serde_json::to_vec` writes it, joined by commas: what writing the list writes
/// between `[` and `]`), kept beside the items as they are added, so a request writes each
/// item once in the conversation's life rather than once per request.
#[derive(Debug, Clone, Default)]
pub(crate) struct NativeJson {
    json: Vec<u8>,
    /// Items written.
    items: usize,
}

impl NativeJson {
    /// Appends items (the conversation's next ones, in order).
    pub(crate) fn extend<'a>(&mut self, items: impl IntoIterator<Item = &'a Value>) {
        for v in items {
            if self.items > 0 {
                self.json.push(b',');
            }
            // writing a Value to a Vec cannot fail
            let _ = serde_json::to_writer(&mut self.json, v);
            self.items += 1;
        }
    }
}

/// Appends a value as compact JSON (what `serde_json::to_vec` writes).
fn put<T: serde::Serialize + ?Sized>(out: &mut Vec<u8>, v: &T) -> Result<(), WireError> {
    serde_json::to_writer(out, v)
        .map_err(|e| WireError(format!("cannot write the request body: {e}")))
}

/// A request body whose conversation and tools are still borrowed: `map` holds every key in
/// its final order, with `Value::Null` in the slots of `native` (its key) and of `tools`
/// (`"tools"`) when those are to be filled from the borrowed parts.
struct BodyParts<'a> {
    map: Map<String, Value>,
    native: Option<(&'static str, &'a [Value])>,
    tools: Option<&'a ToolSet>,
}

fn body_parts<'a>(
    cfg: &LlmConfig,
    native: &'a [Value],
    tools: Option<&'a ToolSet>,
) -> Result<BodyParts<'a>, WireError> {
    let mut b = Map::new();
    let tools = tools.filter(|t| !t.encoded.is_empty());
    // the conversation's key when it is the borrowed conversation as is
    let mut native_key: Option<&'static str> = None;
    match cfg.provider {
        Provider::Chat => {
            if cfg.endpoint_url.is_some() {
                b.insert("model".into(), json!(cfg.deployment));
            }
            b.insert("messages".into(), Value::Null);
            native_key = Some("messages");
            b.insert("temperature".into(), json!(cfg.temperature));
            b.insert(
                "max_completion_tokens".into(),
                json!(cfg.max_completion_tokens),
            );
            b.insert("seed".into(), json!(cfg.seed));
            if let Some(p) = cfg.top_p {
                b.insert("top_p".into(), json!(p));
            }
            if let Some(k) = cfg.top_k {
                b.insert("top_k".into(), json!(k));
            }
            if tools.is_some() {
                b.insert("tools".into(), Value::Null);
                b.insert("parallel_tool_calls".into(), json!(cfg.parallel_tool_calls));
            }
            if cfg.is_reasoning
                && let Some(e) = &cfg.reasoning_effort
            {
                b.insert("reasoning_effort".into(), json!(e));
            }
        }
        Provider::Responses => {
            b.insert("model".into(), json!(cfg.deployment));
            b.insert("input".into(), Value::Null);
            native_key = Some("input");
            b.insert("temperature".into(), json!(cfg.temperature));
            b.insert("max_output_tokens".into(), json!(cfg.max_completion_tokens));
            if let Some(p) = cfg.top_p {
                b.insert("top_p".into(), json!(p));
            }
            // the reference's order: model, input, temperature, max_output_tokens, tools,
            // parallel_tool_calls, reasoning, store
            if tools.is_some() {
                b.insert("tools".into(), Value::Null);
                b.insert("parallel_tool_calls".into(), json!(cfg.parallel_tool_calls));
            }
            if cfg.is_reasoning {
                let mut r = Map::new();
                if let Some(e) = &cfg.reasoning_effort {
                    r.insert("effort".into(), json!(e));
                }
                if cfg.reasoning_source == ReasoningSource::Summary {
                    r.insert("summary".into(), json!("detailed"));
                }
                if !r.is_empty() {
                    b.insert("reasoning".into(), Value::Object(r));
                }
            }
            b.insert("store".into(), json!(true));
        }
        Provider::Anthropic => {
            b.insert("model".into(), json!(cfg.deployment));
            b.insert("cache_control".into(), json!({"type": "ephemeral"}));
            // merge consecutive same-role messages; lift leading system messages
            let mut merged: Vec<Value> = Vec::new();
            for m in native {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                let content = m
                    .get("content")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                if let Some(last) = merged.last_mut()
                    && last.get("role").and_then(Value::as_str) == Some(role)
                    && let Some(Value::Array(c)) = last.get_mut("content")
                {
                    c.extend(content);
                    continue;
                }
                merged.push(json!({"role": role, "content": content}));
            }
            let mut system = Vec::new();
            while merged
                .first()
                .and_then(|m| m.get("role"))
                .and_then(Value::as_str)
                == Some("system")
            {
                let m = merged.remove(0);
                for block in m["content"].as_array().into_iter().flatten() {
                    system.push(
                        block
                            .get("text")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                    );
                }
            }
            if merged
                .iter()
                .any(|m| m.get("role").and_then(Value::as_str) == Some("system"))
            {
                return Err(WireError(
                    "system messages can only come at the start of an Anthropic conversation"
                        .into(),
                ));
            }
            b.insert("messages".into(), Value::Array(merged));
            if let Some(t) = cfg.temperature {
                b.insert("temperature".into(), json!(t));
            }
            b.insert("max_tokens".into(), json!(cfg.max_completion_tokens));
            if let Some(k) = cfg.top_k {
                b.insert("top_k".into(), json!(k));
            }
            if let Some(p) = cfg.top_p {
                b.insert("top_p".into(), json!(p));
            }
            if !cfg.stop_sequences.is_empty() {
                b.insert("stop_sequences".into(), json!(cfg.stop_sequences));
            }
            if tools.is_some() {
                b.insert("tools".into(), Value::Null);
                if !cfg.parallel_tool_calls {
                    b.insert(
                        "tool_choice".into(),
                        json!({"type": "auto", "disable_parallel_tool_use": true}),
                    );
                }
            }
            if let Some(t) = &cfg.thinking {
                b.insert("thinking".into(), t.clone());
            }
            if let Some(o) = &cfg.output_config {
                b.insert("output_config".into(), o.clone());
            }
            if !system.is_empty() {
                b.insert(
                    "system".into(),
                    json!([{"type": "text", "text": system.join("\n")}]),
                );
            }
        }
    }
    for k in &cfg.disabled_params {
        b.remove(k);
    }
    for (k, v) in &cfg.extra_body {
        b.insert(k.clone(), v.clone());
    }
    // a slot still holds the borrowed part unless `disabled_params` removed it or
    // `extra_body` replaced it
    let live = |k: &str| b.contains_key(k) && !cfg.extra_body.contains_key(k);
    Ok(BodyParts {
        native: native_key.filter(|k| live(k)).map(|k| (k, native)),
        tools: tools.filter(|_| live("tools")),
        map: b,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tb_core::{ToolCall, Usage};

    fn cfg(p: Provider) -> LlmConfig {
        let mut c = LlmConfig::chat("http://x", "m");
        c.provider = p;
        c
    }

    #[test]
    fn tool_arguments_over_the_bound_are_an_argument_error_in_every_api() {
        let big = format!("{{\"q\": \"{}\"}}", "x".repeat(100));
        let err = json!(format!(
            "Error: the tool arguments are {} bytes, over the limit of 50 bytes (max_tool_argument_bytes); they were not read",
            big.len()
        ));
        let calls = |d: &Decoded| match d.messages.last() {
            Some(Message::ParallelToolCall { tool_calls, .. }) => tool_calls.clone(),
            other => panic!("{other:?}"),
        };
        let mut c = cfg(Provider::Responses);
        c.max_tool_argument_bytes = 50;
        let d = decode(
            &c,
            None,
            &json!({"output": [
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": big},
            {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"}],
            "usage": {}}),
        )
        .unwrap();
        let tc = calls(&d);
        assert_eq!(
            (&tc[0].arguments, &tc[0].metadata["error"]),
            (&json!({}), &err)
        );
        assert_eq!(tc[1].metadata["error"], Value::Null);
        assert_eq!(d.native[0]["arguments"], json!("{}"));
        assert_eq!(d.native[1]["arguments"], json!("{}"));
        let mut c = cfg(Provider::Anthropic);
        c.max_tool_argument_bytes = 50;
        let input: Value = serde_json::from_str(&big).unwrap();
        let d = decode(
            &c,
            None,
            &json!({"role": "assistant", "content": [
            {"type": "tool_use", "id": "a", "name": "f", "input": input}]}),
        )
        .unwrap();
        let tc = calls(&d);
        let compact = serde_json::to_string(&input).unwrap().len();
        let err = json!(
            err.as_str()
                .unwrap()
                .replace(&big.len().to_string(), &compact.to_string())
        );
        assert_eq!(
            (&tc[0].arguments, &tc[0].metadata["error"]),
            (&json!({}), &err)
        );
        assert!(!d.native[0].to_string().contains("xxxx"));
        // exactly at the bound is read
        let mut c = cfg(Provider::Chat);
        c.max_tool_argument_bytes = big.len() as u64;
        let d = decode(
            &c,
            None,
            &json!({"choices": [{"message": {"role": "assistant", "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": "f", "arguments": big}}]}}]}),
        )
        .unwrap();
        assert_eq!(calls(&d)[0].metadata["error"], Value::Null);
    }

    #[test]
    fn chat_reply_with_bad_arguments_keeps_the_parse_error() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{oops"}},
            {"id": "c2", "type": "function", "function": {"name": "g", "arguments": {"a": 1}}},
            {"id": "c3", "type": "function", "function": {"name": "h", "arguments": "{}"}}]}}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15, "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 2}}});
        let d = decode(&cfg(Provider::Chat), None, &body).unwrap();
        let Message::ParallelToolCall { tool_calls, .. } = &d.messages[0] else {
            panic!()
        };
        assert_eq!(
            tool_calls[0].metadata["error"],
            "Error: Expecting property name enclosed in double quotes: line 1 column 2 (char 1)"
        );
        assert_eq!(
            tool_calls[1].metadata["error"],
            "Error: the JSON object must be str, bytes or bytearray, not dict"
        );
        assert_eq!(tool_calls[1].arguments, json!({}));
        assert_eq!(tool_calls[2].metadata["error"], Value::Null);
        assert_eq!(d.usage.input_tokens_details.cached_tokens, 4);
        assert_eq!(d.usage.output_tokens_details.reasoning_tokens, 2);
        assert!(matches!(
            decode(&cfg(Provider::Chat), None, &json!({"choices": []})),
            Err(DecodeError::Malformed(_))
        ));
    }

    /// Replies the reference's client stops on, with its texts.
    #[test]
    fn replies_the_reference_refuses_are_rejected_with_its_texts() {
        let chat = |m: Value| {
            decode(
                &cfg(Provider::Chat),
                None,
                &json!({"choices": [{"message": m}]}),
            )
        };
        let call = |f: Value| json!({"role": "assistant", "tool_calls": [f]});
        let rejected = |r: Result<Decoded, DecodeError>| match r {
            Err(DecodeError::Rejected(t)) => t,
            other => panic!("{other:?}"),
        };
        assert_eq!(
            rejected(chat(call(
                json!({"id": "c", "function": {"name": "f", "arguments": "null"}})
            ))),
            "1 validation error for ToolCall\narguments\n  Input should be a valid dictionary [type=dict_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.14/v/dict_type"
        );
        assert!(
            rejected(chat(call(
                json!({"id": "c", "function": {"name": "f", "arguments": "[{\"a\": 1}]"}})
            )))
            .contains("input_value=[{'a': 1}], input_type=list]")
        );
        assert_eq!(
            rejected(chat(call(
                json!({"function": {"name": "f", "arguments": "{}"}})
            ))),
            "'id'"
        );
        assert!(rejected(chat(json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}]})))
            .starts_with("1 validation error for Text\ncontent\n  Input should be a valid string [type=string_type"));
        let anth = |b: Value| decode(&cfg(Provider::Anthropic), None, &b);
        assert!(rejected(anth(json!({"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]})))
            .contains("input_value='{}', input_type=str]"));
        assert!(rejected(anth(json!({"role": "assistant", "content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": null}})))
            .starts_with("1 validation error for InputTokensDetails\ncached_tokens\n"));
        let resp = |b: Value| decode(&cfg(Provider::Responses), None, &b);
        assert_eq!(rejected(resp(json!({"output": []}))), "'usage'");
    }

    #[test]
    fn anthropic_merges_roles_lifts_system_and_maps_keys() {
        let c = cfg(Provider::Anthropic);
        let tools = encode_tools(Provider::Anthropic, &[ToolSpec { name: "t".into(), description: "d".into(), parameters: json!({"type": "object", "properties": {"a b": {"type": "string"}}, "required": ["a b"]}) }]).unwrap();
        assert_eq!(tools.encoded[0]["input_schema"]["required"][0], "a_x20b");
        let msgs = [
            Message::text("system", "s1"),
            Message::text("system", "s2"),
            Message::text("user", "hi"),
            Message::ToolResponse {
                metadata: Map::new(),
                name: "t".into(),
                content: "r1".into(),
                id: "1".into(),
            },
            Message::ToolResponse {
                metadata: Map::new(),
                name: "t".into(),
                content: "r2".into(),
                id: "2".into(),
            },
        ];
        let native: Vec<Value> = msgs.iter().flat_map(|m| encode_message(&c, m)).collect();
        let b = request_body(&c, &native, Some(&tools)).unwrap();
        assert_eq!(b["system"][0]["text"], "s1\ns2");
        assert_eq!(b["messages"].as_array().unwrap().len(), 1);
        assert_eq!(b["messages"][0]["content"].as_array().unwrap().len(), 3);
        assert_eq!(b["tool_choice"]["disable_parallel_tool_use"], true);
        let d = decode(&c, Some(&tools), &json!({"role": "assistant", "content": [{"type": "tool_use", "id": "x", "name": "t", "input": {"a_x20b": 1}}], "usage": {"input_tokens": 3, "output_tokens": 2, "cache_read_input_tokens": 1}})).unwrap();
        let Message::ParallelToolCall { tool_calls, .. } = &d.messages[0] else {
            panic!()
        };
        assert_eq!(tool_calls[0].arguments, json!({"a b": 1}));
        let d = decode(&c, None, &json!({"role": "assistant", "content": [{"type": "thinking", "thinking": "hm", "signature": "s"}]})).unwrap();
        assert_eq!(d.messages.len(), 2);
        assert!(encode_message(&c, &d.messages[1]).is_empty());
    }

    #[test]
    fn responses_groups_calls_and_reads_reasoning() {
        let mut c = cfg(Provider::Responses);
        c.is_reasoning = true;
        let body = json!({"id": "r", "output": [
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}]},
            {"type": "function_call", "call_id": "a", "name": "f", "arguments": "{}"},
            {"type": "function_call", "call_id": "b", "name": "g", "arguments": "{}"}],
            "usage": {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8, "output_tokens_details": {"reasoning_tokens": 2}}});
        let d = decode(&c, None, &body).unwrap();
        assert_eq!(d.messages.len(), 2);
        assert_eq!(d.usage.output_tokens_details.reasoning_tokens, 2);
        let enc = encode_message(&c, &Message::text("system", "x"));
        assert_eq!(enc[0]["role"], "developer");
    }

    /// `reply_rules: lenient` reads what the reference's client stops on.
    #[test]
    fn lenient_replies_are_read() {
        let lenient = |p: Provider| {
            let mut c = cfg(p);
            c.lenient_replies = true;
            c
        };
        let chat = |m: Value| {
            decode(
                &lenient(Provider::Chat),
                None,
                &json!({"choices": [{"message": m}]}),
            )
            .unwrap()
        };
        let d = chat(
            json!({"role": "assistant", "content": [{"type": "text", "text": "hi"}, {"type": "text", "text": "!"}]}),
        );
        assert_eq!(d.messages, vec![Message::text("assistant", "hi!")]);
        let d = chat(json!({"role": "assistant", "tool_calls": [
            {"function": {"name": "f", "arguments": "{}"}},
            {"function": {"name": "f", "arguments": "{}"}},
            {"id": "c", "function": {"name": "g", "arguments": "null"}}]}));
        let Message::ParallelToolCall { tool_calls, .. } = &d.messages[0] else {
            panic!()
        };
        assert!(tool_calls[0].id.starts_with("call_tb"));
        assert_ne!(tool_calls[0].id, tool_calls[1].id);
        assert_eq!(
            (&tool_calls[2].arguments, &tool_calls[2].metadata["error"]),
            (
                &json!({}),
                &json!("Error: tool arguments must be an object")
            )
        );
        let d = decode(
            &lenient(Provider::Anthropic),
            None,
            &json!({"role": "assistant",
            "content": [{"type": "tool_use", "id": "t", "name": "f", "input": "{\"a\": 1}"}],
            "usage": {"input_tokens": 1, "output_tokens": 1, "cache_read_input_tokens": null}}),
        )
        .unwrap();
        let Message::ParallelToolCall { tool_calls, .. } = &d.messages[0] else {
            panic!()
        };
        assert_eq!(tool_calls[0].arguments, json!({"a": 1}));
        assert_eq!(d.usage.input_tokens_details.cached_tokens, 0);
        let d = decode(&lenient(Provider::Responses), None, &json!({"output": []})).unwrap();
        assert_eq!(d.usage, Usage::default());
    }

    /// The Responses body of a reasoning model: `reasoning` after the tools, before `store`,
    /// where the reference's payload has it.
    #[test]
    fn responses_reasoning_sits_after_the_tools() {
        let mut c = cfg(Provider::Responses);
        c.is_reasoning = true;
        c.reasoning_effort = Some("low".into());
        let specs = [ToolSpec {
            name: "t".into(),
            description: "d".into(),
            parameters: json!({"type": "object", "properties": {}}),
        }];
        let tools = encode_tools(c.provider, &specs).unwrap();
        let body: Value =
            serde_json::from_slice(&request_body_bytes(&c, &[], Some(&tools)).unwrap()).unwrap();
        let keys: Vec<&str> = body
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "model",
                "input",
                "temperature",
                "max_output_tokens",
                "tools",
                "parallel_tool_calls",
                "reasoning",
                "store"
            ]
        );
    }

    #[test]
    fn body_bytes_are_the_serialized_body() {
        let specs = [
            ToolSpec {
                name: "t".into(),
                description: "d \"q\" \u{e9}".into(),
                parameters: json!({"type": "object", "properties": {"a b": {"type": "string"}}}),
            },
            ToolSpec {
                name: "u".into(),
                description: String::new(),
                parameters: Value::Null,
            },
        ];
        let call = ToolCall {
            metadata: Map::new(),
            name: "t".into(),
            arguments: json!({"a b": "x\ny"}),
            id: "c1".into(),
        };
        let msgs = [
            Message::text("system", "s"),
            Message::text("user", "hi \u{1F600}"),
            Message::ParallelToolCall {
                metadata: Map::new(),
                tool_calls: vec![call],
            },
            Message::ToolResponse {
                metadata: Map::new(),
                name: "t".into(),
                content: "{\"ok\": true}".into(),
                id: "c1".into(),
            },
        ];
        let mut configs = Vec::new();
        for p in [Provider::Chat, Provider::Responses, Provider::Anthropic] {
            let mut c = cfg(p);
            configs.push(c.clone());
            c.is_reasoning = true;
            c.reasoning_effort = Some("low".into());
            configs.push(c.clone());
            // the conversation's and the tools' slots replaced or removed
            let mut x = c.clone();
            x.extra_body.insert("messages".into(), json!(["replaced"]));
            x.extra_body.insert("input".into(), json!("replaced"));
            x.extra_body.insert("extra".into(), json!({"k": 1}));
            configs.push(x);
            let mut x = c.clone();
            x.disabled_params = vec!["temperature".into(), "tools".into()];
            configs.push(x);
            let mut x = c.clone();
            x.disabled_params = vec!["messages".into(), "input".into()];
            x.extra_body.insert("tools".into(), json!([]));
            configs.push(x);
        }
        for c in &configs {
            let tools = encode_tools(c.provider, &specs).unwrap();
            let native: Vec<Value> = msgs.iter().flat_map(|m| encode_message(c, m)).collect();
            for (n, t) in [
                (&native[..], Some(&tools)),
                (&native[..1], None),
                (&[][..], Some(&tools)),
            ] {
                let v = request_body(c, n, t).unwrap();
                let bytes = request_body_bytes(c, n, t).unwrap();
                let json = t.map(tools_json);
                let with = request_body_bytes_with(c, n, t, json.as_deref()).unwrap();
                assert_eq!(with, bytes);
                let shared = json.map(bytes::Bytes::from);
                let segments = request_body_segments(c, n, t, shared.as_ref(), None).unwrap();
                assert_eq!(segments.concat(), bytes);
                // the conversation written item by item beforehand: the same bytes
                let mut pre = NativeJson::default();
                pre.extend(n);
                let pre_segments =
                    request_body_segments(c, n, t, shared.as_ref(), Some(&pre)).unwrap();
                assert_eq!(pre_segments.concat(), bytes);
                // where the body's tools are the given ones (not removed or replaced by the
                // config), they are the tools' buffer itself, not a copy
                if let (Some(j), Some(t)) = (&shared, t)
                    && !t.encoded.is_empty()
                    && v.get("tools") == Some(&Value::Array(t.encoded.clone()))
                {
                    assert!(segments.iter().any(|s| s.as_ptr() == j.as_ptr()));
                }
                assert_eq!(
                    String::from_utf8(bytes).unwrap(),
                    serde_json::to_string(&v).unwrap(),
                    "{:?}",
                    c.provider
                );
            }
        }
    }
}
