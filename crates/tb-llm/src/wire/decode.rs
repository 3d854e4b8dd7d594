//! Decoding a 2xx reply of each API into messages, native conversation items and usage, with
//! the reference's client rules: what it reads, and what it stops on (`DecodeError::Rejected`,
//! with the text Python or pydantic gives).

use super::{DecodeError, ToolSet, WireError, encode_message, is_think};
use crate::config::{LlmConfig, Provider, ReasoningSource};
use serde_json::{Map, Value, json};
use tb_core::{Message, ToolCall, Usage};

/// pydantic's text of one failing field: `(field, message, error type, the input)`.
pub(super) type PydanticField<'a> = tb_python::validation_text::FieldError<'a>;

/// pydantic's validation error text for `model`'s failing fields.
pub(super) fn pydantic_error(model: &str, fields: &[PydanticField<'_>]) -> String {
    tb_python::validation_text::validation_error_text(model, fields)
}

/// The reference's `ToolCall(name, arguments, id)` checks: a text name and id, an object
/// as arguments.
pub(super) fn check_tool_call(
    name: &Value,
    arguments: &Value,
    id: &Value,
) -> Result<(), DecodeError> {
    let mut bad: Vec<PydanticField<'_>> = Vec::new();
    if !name.is_string() {
        bad.push((
            "name",
            "Input should be a valid string",
            "string_type",
            name,
        ));
    }
    if !arguments.is_object() {
        bad.push((
            "arguments",
            "Input should be a valid dictionary",
            "dict_type",
            arguments,
        ));
    }
    if !id.is_string() {
        bad.push(("id", "Input should be a valid string", "string_type", id));
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(DecodeError::Rejected(pydantic_error("ToolCall", &bad)))
    }
}

/// pydantic's text of a `Text` whose role is not one it takes.
pub(super) fn pydantic_literal_role(role: &Value) -> String {
    pydantic_error(
        "Text",
        &[(
            "role",
            "Input should be 'system', 'user' or 'assistant'",
            "literal_error",
            role,
        )],
    )
}

/// Python's truth of a JSON value loaded as Python objects.
pub(super) fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Bool(true)) => true,
    }
}

/// The reference's `Text(content=...)` check: a text.
pub(super) fn check_text(content: &Value) -> Result<(), DecodeError> {
    if content.is_string() {
        return Ok(());
    }
    Err(DecodeError::Rejected(pydantic_error(
        "Text",
        &[(
            "content",
            "Input should be a valid string",
            "string_type",
            content,
        )],
    )))
}

/// The reference's reading of a tool call's `arguments` (Chat Completions and Responses):
/// `json.loads` of a text; its failure (Python's `json` message, or the `TypeError` of a
/// value that is not a text) becomes the call's error and `{}` its arguments. A text that
/// loads to anything but an object keeps that value, which the call then refuses.
pub(super) fn reference_arguments(arg: Option<&Value>) -> (Value, Value) {
    let err = |t: String| (json!({}), json!(format!("Error: {t}")));
    match arg {
        Some(Value::String(s)) => match tb_python::json_error::loads_error(s) {
            Some(e) => err(e),
            None => match serde_json::from_str::<Value>(s) {
                Ok(v @ Value::Object(_)) => (v, Value::Null),
                Ok(v) => (v, json!("Error: tool arguments must be an object")),
                // what CPython reads and serde_json does not (NaN, Infinity, deep nesting): an
                // object as an argument error; anything else a value the call refuses, shown
                // as its text
                Err(e) if s.trim_start().starts_with('{') => err(e.to_string()),
                Err(_) => (
                    Value::String(s.trim().to_string()),
                    json!("Error: tool arguments must be an object"),
                ),
            },
        },
        Some(v) => err(format!(
            "the JSON object must be str, bytes or bytearray, not {}",
            tb_python::type_name(v)
        )),
        None => err("the JSON object must be str, bytes or bytearray, not NoneType".into()),
    }
}

/// A decoded reply.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// The reply as our messages (think, text, tool calls).
    pub messages: Vec<Message>,
    /// Provider-native items to append to the conversation for the next call.
    pub native: Vec<Value>,
    /// Token usage.
    pub usage: Usage,
}

pub(super) fn text_with(role: &str, content: String, meta: &[(&str, Value)]) -> Message {
    let mut metadata = Map::new();
    for (k, v) in meta {
        metadata.insert((*k).to_string(), v.clone());
    }
    Message::Text {
        metadata,
        role: role.to_string(),
        content,
    }
}

pub(super) fn malformed(what: &str, body: &Value) -> DecodeError {
    let mut s = body.to_string();
    if s.len() > 300 {
        let mut cut = 300;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    DecodeError::Malformed(WireError(format!("malformed reply: {what}; got {s}")))
}

pub(super) fn u(v: Option<&Value>) -> u64 {
    v.and_then(Value::as_u64).unwrap_or(0)
}

/// The argument error of a tool call whose arguments are `len` bytes, over `limit`.
pub(super) fn arguments_too_large(len: u64, limit: u64) -> Value {
    json!(format!(
        "Error: the tool arguments are {len} bytes, over the limit of {limit} bytes \
         (max_tool_argument_bytes); they were not read"
    ))
}

/// The size of a value's JSON text, without writing it.
pub(super) fn json_len(v: &Value) -> u64 {
    struct Count(u64);
    impl std::io::Write for Count {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0 += b.len() as u64;
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Count(0);
    let _ = serde_json::to_writer(&mut c, v);
    c.0
}

/// Decodes a tool call's argument text: the reference's rules (a parse error or a non-object
/// leaves `{}` and puts `Error: ...` in the call's metadata). Ours: a text over `max_bytes`
/// is not parsed and is such an error too.
pub fn tool_call_from_text(name: &str, id: &str, args: &str, max_bytes: u64) -> ToolCall {
    let mut metadata = Map::new();
    let parsed = if args.len() as u64 > max_bytes {
        Err(arguments_too_large(args.len() as u64, max_bytes))
    } else {
        serde_json::from_str::<Value>(args).map_err(|e| json!(format!("Error: {e}")))
    };
    let arguments = match parsed {
        Ok(Value::Object(m)) => Value::Object(m),
        Ok(_) => {
            metadata.insert(
                "error".into(),
                json!("Error: tool arguments must be an object"),
            );
            json!({})
        }
        Err(e) => {
            metadata.insert("error".into(), e);
            json!({})
        }
    };
    ToolCall {
        metadata,
        name: name.to_string(),
        arguments,
        id: id.to_string(),
    }
}

/// Decodes a 2xx reply body.
pub fn decode(
    cfg: &LlmConfig,
    tools: Option<&ToolSet>,
    body: &Value,
) -> Result<Decoded, DecodeError> {
    match cfg.provider {
        Provider::Chat => decode_chat(cfg, body),
        Provider::Responses => decode_responses(cfg, body),
        Provider::Anthropic => decode_anthropic(cfg, tools, body),
    }
}

/// Python's `KeyError` / `TypeError` text of `v[key]` on a JSON-loaded value.
pub(super) fn subscript<'a>(v: &'a Value, key: &str) -> Result<&'a Value, DecodeError> {
    match v {
        Value::Object(m) => m
            .get(key)
            .ok_or_else(|| DecodeError::Rejected(tb_python::str_repr(key))),
        Value::String(_) => Err(DecodeError::Rejected(
            "string indices must be integers, not 'str'".into(),
        )),
        Value::Array(_) => Err(DecodeError::Rejected(
            "list indices must be integers or slices, not str".into(),
        )),
        other => Err(DecodeError::Rejected(format!(
            "'{}' object is not subscriptable",
            tb_python::type_name(other)
        ))),
    }
}

/// The reference's text of a Responses item's parts (`content` or `summary`): the `text` of
/// each part of type `want`, joined by newlines; `empty` when there are no parts. Each part
/// must have a `type`, each wanted part a text `text`, as its loops require.
pub(super) fn parts_text(
    parts: Option<&Value>,
    want: &str,
    empty: &str,
) -> Result<String, DecodeError> {
    if !truthy(parts) {
        return Ok(empty.to_string());
    }
    let Some(Value::Array(parts)) = parts else {
        return Err(DecodeError::Rejected(match parts {
            Some(Value::String(_) | Value::Object(_)) => {
                "string indices must be integers, not 'str'".to_string()
            }
            other => format!(
                "'{}' object is not iterable",
                tb_python::type_name(other.unwrap_or(&Value::Null))
            ),
        }));
    };
    let mut out = Vec::new();
    for p in parts {
        if subscript(p, "type")? == want {
            match subscript(p, "text")? {
                Value::String(t) => out.push(t.as_str()),
                other => {
                    return Err(DecodeError::Rejected(format!(
                        "sequence item {}: expected str instance, {} found",
                        out.len(),
                        tb_python::type_name(other)
                    )));
                }
            }
        }
    }
    Ok(out.join("\n"))
}

/// A tool call id for a call that came without one (`reply_rules: lenient`): `call_tb` and a
/// number no other invented id of this process has.
pub(super) fn invented_call_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    format!(
        "call_tb{}",
        NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// With `reply_rules: lenient`, arguments that are not an object are an argument error the
/// model sees (`{}`), not a refused call.
pub(super) fn lenient_arguments(cfg: &LlmConfig, arguments: Value, error: Value) -> (Value, Value) {
    if cfg.lenient_replies && !arguments.is_object() {
        let error = if error.is_null() {
            json!("Error: tool arguments must be an object")
        } else {
            error
        };
        return (json!({}), error);
    }
    (arguments, error)
}

/// One Chat Completions tool call, read as the reference does: `function.arguments`,
/// `function.name` and `id` must be there; the arguments go through [`reference_arguments`]
/// and the call through [`check_tool_call`]; `metadata.error` is the arguments' error or
/// null. Ours: arguments over `max_tool_argument_bytes` are not read (the flag says so).
pub(super) fn chat_tool_call(cfg: &LlmConfig, c: &Value) -> Result<(ToolCall, bool), DecodeError> {
    let f = subscript(c, "function")?;
    let limit = cfg.max_tool_argument_bytes;
    let arg = match f {
        Value::Object(m) => Some(subscript(f, "arguments").map(|_| m.get("arguments"))?),
        // `None["arguments"]` and the like: a TypeError, which the reference's argument
        // reading catches; reading the name then raises it again
        _ => None,
    };
    let len = match arg.flatten() {
        Some(Value::String(s)) => s.len() as u64,
        Some(v) => json_len(v),
        None => 0,
    };
    let (arguments, error, over) = if len > limit {
        (json!({}), arguments_too_large(len, limit), true)
    } else {
        match arg {
            Some(a) => {
                let (v, e) = reference_arguments(a);
                (v, e, false)
            }
            None => (json!({}), Value::Null, false),
        }
    };
    let name = subscript(f, "name")?;
    let invented;
    let id = match subscript(c, "id") {
        Err(_) if cfg.lenient_replies => {
            // lenient: a call without an id gets one of its own, unique in the run
            invented = json!(invented_call_id());
            &invented
        }
        r => r?,
    };
    let (arguments, error) = lenient_arguments(cfg, arguments, error);
    check_tool_call(name, &arguments, id)?;
    Ok((
        ToolCall {
            metadata: Map::from_iter([("error".to_string(), error)]),
            name: name.as_str().unwrap_or_default().to_string(),
            arguments,
            id: id.as_str().unwrap_or_default().to_string(),
        },
        over,
    ))
}

pub(super) fn decode_chat(cfg: &LlmConfig, body: &Value) -> Result<Decoded, DecodeError> {
    let Some(msg) = body
        .get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .and_then(|c| c.get("message"))
        .filter(|m| m.is_object())
    else {
        return Err(malformed("no `choices[0].message` object", body));
    };
    let role = msg
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("assistant");
    if role != "assistant" {
        return Err(malformed(
            &format!("reply role is `{role}`, expected assistant"),
            body,
        ));
    }
    let mut out = Vec::new();
    // The reference reads `reasoning_content` (vLLM, DeepSeek) of reasoning models only; other
    // fields (OpenRouter's `reasoning`) are not read.
    if cfg.is_reasoning && truthy(msg.get("reasoning_content")) {
        let r = &msg["reasoning_content"];
        check_text(r)?;
        out.push(text_with(
            "assistant",
            r.as_str().unwrap_or_default().to_string(),
            &[("tag", json!("think"))],
        ));
    }
    if truthy(msg.get("content")) {
        let mut c = msg["content"].clone();
        if cfg.lenient_replies
            && let Value::Array(parts) = &c
        {
            // lenient: a list of parts (Mistral) is the text of its text parts
            c = json!(
                parts
                    .iter()
                    .filter_map(|p| p.get("text").and_then(Value::as_str))
                    .collect::<String>()
            );
        }
        let c = &c;
        check_text(c)?;
        let meta: Vec<(&str, Value)> = if cfg.is_reasoning {
            vec![("tag", json!("text"))]
        } else {
            vec![]
        };
        out.push(text_with(
            "assistant",
            c.as_str().unwrap_or_default().to_string(),
            &meta,
        ));
    }
    // Tool calls whose arguments are over the bound: the conversation keeps them as `{}`.
    let mut oversized = Vec::new();
    if truthy(msg.get("tool_calls")) {
        let Some(calls) = msg["tool_calls"].as_array() else {
            return Err(malformed("`tool_calls` is not a list", body));
        };
        let mut tcs = Vec::new();
        for (i, c) in calls.iter().enumerate() {
            let (tc, over) = chat_tool_call(cfg, c)?;
            if over {
                oversized.push(i);
            }
            tcs.push(tc);
        }
        out.push(Message::ParallelToolCall {
            metadata: Map::new(),
            tool_calls: tcs,
        });
    }
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    let usage = Usage {
        input_tokens: u(usage.get("prompt_tokens")),
        input_tokens_details: tb_core::record::InputTokensDetails {
            cached_tokens: u(usage.pointer("/prompt_tokens_details/cached_tokens")),
        },
        output_tokens: u(usage.get("completion_tokens")),
        output_tokens_details: tb_core::record::OutputTokensDetails {
            reasoning_tokens: u(usage.pointer("/completion_tokens_details/reasoning_tokens")),
        },
        total_tokens: usage.get("total_tokens").and_then(Value::as_u64),
    };
    let mut native = msg.clone();
    for i in oversized {
        if let Some(f) = native.pointer_mut(&format!("/tool_calls/{i}/function"))
            && let Some(o) = f.as_object_mut()
        {
            o.insert("arguments".into(), json!("{}"));
        }
    }
    Ok(Decoded {
        messages: out,
        native: vec![native],
        usage,
    })
}

pub(super) fn decode_responses(cfg: &LlmConfig, body: &Value) -> Result<Decoded, DecodeError> {
    let Some(items) = body.get("output").and_then(Value::as_array) else {
        return Err(malformed("no `output` list", body));
    };
    // the reference reads `usage` before the output: a reply without it stops there
    match body.get("usage") {
        // lenient: no usage is no count
        _ if cfg.lenient_replies && !body.get("usage").is_some_and(Value::is_object) => {}
        None => return Err(DecodeError::Rejected(tb_python::str_repr("usage"))),
        Some(Value::Object(_)) => {}
        Some(other) => {
            return Err(DecodeError::Rejected(format!(
                "thinkingbox.common.usage_types.Usage() argument after ** must be a mapping, not {}",
                tb_python::type_name(other)
            )));
        }
    }
    let mut out: Vec<Message> = Vec::new();
    let mut native = Vec::new();
    for item in items {
        let ty = item.get("type").and_then(Value::as_str).unwrap_or("");
        match ty {
            "reasoning" => {
                let text = match cfg.reasoning_source {
                    ReasoningSource::Summary => {
                        parts_text(item.get("summary"), "summary_text", "(hidden)")?
                    }
                    ReasoningSource::Content => {
                        parts_text(item.get("content"), "reasoning_text", "")?
                    }
                    ReasoningSource::None => String::new(),
                };
                out.push(text_with("assistant", text, &[("tag", json!("think"))]));
            }
            "function_call" => {
                // the reference's reading: `arguments`, `name`, `call_id` must be there
                let limit = cfg.max_tool_argument_bytes;
                let arg = subscript(item, "arguments")?;
                let (arguments, error) = match arg {
                    Value::String(a) if a.len() as u64 > limit => {
                        (json!({}), arguments_too_large(a.len() as u64, limit))
                    }
                    a => reference_arguments(Some(a)),
                };
                let name = subscript(item, "name")?;
                let id = subscript(item, "call_id")?;
                let (arguments, error) = lenient_arguments(cfg, arguments, error);
                check_tool_call(name, &arguments, id)?;
                let tc = ToolCall {
                    metadata: Map::from_iter([("error".to_string(), error)]),
                    name: name.as_str().unwrap_or_default().to_string(),
                    arguments,
                    id: id.as_str().unwrap_or_default().to_string(),
                };
                if let Some(Message::ParallelToolCall { tool_calls, .. }) = out.last_mut() {
                    tool_calls.push(tc);
                } else {
                    out.push(Message::ParallelToolCall {
                        metadata: Map::new(),
                        tool_calls: vec![tc],
                    });
                }
            }
            "message"
                if matches!(
                    item.get("role").and_then(Value::as_str),
                    Some("system" | "developer" | "user" | "assistant")
                ) =>
            {
                let role = item.get("role").and_then(Value::as_str).unwrap_or_default();
                let text = parts_text(item.get("content"), "output_text", "")?;
                if role == "developer" {
                    // the reference's Text takes system, user or assistant only
                    return Err(DecodeError::Rejected(pydantic_literal_role(&item["role"])));
                }
                let meta: Vec<(&str, Value)> = if cfg.is_reasoning {
                    vec![("tag", json!("text"))]
                } else {
                    vec![]
                };
                out.push(text_with(role, text, &meta));
            }
            _ => {
                let py = |v: Option<&Value>| match v {
                    Some(Value::String(t)) => t.clone(),
                    Some(v) => tb_python::value_repr(v),
                    None => "None".into(),
                };
                return Err(DecodeError::Rejected(format!(
                    "cannot convert type={} role={}",
                    py(item.get("type")),
                    py(item.get("role"))
                )));
            }
        }
        let mut clean = item.clone();
        if ty == "function_call"
            && item
                .get("arguments")
                .and_then(Value::as_str)
                .is_some_and(|a| a.len() as u64 > cfg.max_tool_argument_bytes)
            && let Some(o) = clean.as_object_mut()
        {
            o.insert("arguments".into(), json!("{}"));
        }
        if ty == "message"
            && let Some(Value::Array(parts)) = clean.get_mut("content")
        {
            for p in parts {
                if let Some(o) = p.as_object_mut()
                    && o.get("logprobs").is_some_and(Value::is_null)
                {
                    o.remove("logprobs");
                }
            }
        }
        native.push(clean);
    }
    let usage = match body.get("usage") {
        Some(Value::Object(_)) => serde_json::from_value::<Usage>(body["usage"].clone())
            .map_err(|e| malformed(&format!("`usage`: {e}"), body))?,
        _ => Usage::default(),
    };
    Ok(Decoded {
        messages: out,
        native,
        usage,
    })
}

pub(super) fn decode_anthropic(
    cfg: &LlmConfig,
    tools: Option<&ToolSet>,
    body: &Value,
) -> Result<Decoded, DecodeError> {
    let role = body
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or("assistant")
        .to_string();
    let mut out = Vec::new();
    let mut calls = Vec::new();
    match body.get("content") {
        Some(Value::Array(blocks)) => {
            for b in blocks {
                match b.get("type").and_then(Value::as_str).unwrap_or("") {
                    "thinking" => {
                        if truthy(b.get("thinking")) {
                            check_text(&b["thinking"])?;
                        }
                        let t = b.get("thinking").and_then(Value::as_str).unwrap_or("");
                        if !t.is_empty() {
                            out.push(text_with(
                                &role,
                                t.to_string(),
                                &[
                                    ("tag", json!("think")),
                                    (
                                        "thinking_signature",
                                        b.get("signature").cloned().unwrap_or(Value::Null),
                                    ),
                                ],
                            ));
                        }
                    }
                    "redacted_thinking" => {
                        out.push(text_with(
                            &role,
                            String::new(),
                            &[
                                ("tag", json!("think")),
                                (
                                    "redacted_thinking",
                                    b.get("data").cloned().unwrap_or(Value::Null),
                                ),
                            ],
                        ));
                    }
                    "text" => {
                        if truthy(b.get("text")) {
                            check_text(&b["text"])?;
                        }
                        let t = b.get("text").and_then(Value::as_str).unwrap_or("");
                        if !t.is_empty() {
                            out.push(text_with(&role, t.to_string(), &[]));
                        }
                    }
                    "tool_use" => {
                        let name = b
                            .get("name")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        let mut metadata = Map::new();
                        let len = b.get("input").map_or(0, json_len);
                        let mut input = if len > cfg.max_tool_argument_bytes {
                            metadata.insert(
                                "error".into(),
                                arguments_too_large(len, cfg.max_tool_argument_bytes),
                            );
                            json!({})
                        } else {
                            b.get("input").cloned().unwrap_or(json!({}))
                        };
                        if cfg.lenient_replies && !input.is_object() {
                            // lenient: an input given as JSON text is read as the arguments'
                            // text is on the other APIs
                            let (v, e) = match &input {
                                Value::String(_) => reference_arguments(Some(&input)),
                                _ => (input.clone(), Value::Null),
                            };
                            let (v, e) = lenient_arguments(cfg, v, e);
                            if !e.is_null() {
                                metadata.insert("error".into(), e);
                            }
                            input = v;
                        }
                        if let (Some(map), Value::Object(args)) =
                            (tools.and_then(|t| t.arg_maps.get(&name)), &input)
                        {
                            input = Value::Object(
                                args.iter()
                                    .map(|(k, v)| {
                                        (map.get(k).cloned().unwrap_or(k.clone()), v.clone())
                                    })
                                    .collect(),
                            );
                        }
                        // the reference's `ToolCall(name, input, id)`, missing ones "" / {}
                        let empty = json!("");
                        check_tool_call(
                            b.get("name").unwrap_or(&empty),
                            &input,
                            b.get("id").unwrap_or(&empty),
                        )?;
                        calls.push(ToolCall {
                            metadata,
                            name,
                            arguments: input,
                            id: b
                                .get("id")
                                .and_then(Value::as_str)
                                .unwrap_or("")
                                .to_string(),
                        });
                    }
                    _ if !b.is_object() => {
                        return Err(DecodeError::Rejected(format!(
                            "'{}' object has no attribute 'get'",
                            tb_python::type_name(b)
                        )));
                    }
                    _ => {
                        let ty = match b.get("type") {
                            Some(Value::String(t)) => t.clone(),
                            Some(v) => tb_python::value_repr(v),
                            None => "None".into(),
                        };
                        return Err(DecodeError::Rejected(format!("Unknown content type: {ty}")));
                    }
                }
            }
        }
        // the reference takes any other content as the text of its `str()`
        None => {}
        Some(Value::String(s)) => out.push(text_with(&role, s.clone(), &[])),
        Some(other) => out.push(text_with(&role, tb_python::value_repr(other), &[])),
    }
    let has_calls = !calls.is_empty();
    if has_calls {
        out.push(Message::ParallelToolCall {
            metadata: Map::new(),
            tool_calls: calls,
        });
    }
    if !has_calls
        && !out.is_empty()
        && out
            .iter()
            .all(|m| matches!(m, Message::Text { metadata, .. } if is_think(metadata)))
    {
        out.push(text_with(
            &role,
            String::new(),
            &[("is_dummy", json!(true))],
        ));
    }
    let native = out.iter().flat_map(|m| encode_message(cfg, m)).collect();
    let usage = body.get("usage").cloned().unwrap_or(Value::Null);
    // the reference's usage: an object (or none), whose counts must be integers where given
    if !cfg.lenient_replies && body.get("usage").is_some_and(|u| !u.is_object()) {
        return Err(DecodeError::Rejected(format!(
            "'{}' object has no attribute 'get'",
            tb_python::type_name(&usage)
        )));
    }
    if let Some(c) = usage
        .get("cache_read_input_tokens")
        .filter(|c| !(c.is_u64() || c.is_i64()))
        // lenient: a count that is not a number counts 0
        .filter(|_| !cfg.lenient_replies)
    {
        return Err(DecodeError::Rejected(pydantic_error(
            "InputTokensDetails",
            &[(
                "cached_tokens",
                "Input should be a valid integer",
                "int_type",
                c,
            )],
        )));
    }
    let bad = |k: &str| usage.get(k).is_some_and(|v| !(v.is_u64() || v.is_i64()));
    if !cfg.lenient_replies && (bad("input_tokens") || bad("output_tokens")) {
        let ty = |k: &str| tb_python::type_name(usage.get(k).unwrap_or(&json!(0)));
        return Err(DecodeError::Rejected(format!(
            "unsupported operand type(s) for +: '{}' and '{}'",
            ty("input_tokens"),
            ty("output_tokens")
        )));
    }
    let (i, o) = (u(usage.get("input_tokens")), u(usage.get("output_tokens")));
    let usage = Usage {
        input_tokens: i,
        input_tokens_details: tb_core::record::InputTokensDetails {
            cached_tokens: u(usage.get("cache_read_input_tokens")),
        },
        output_tokens: o,
        output_tokens_details: tb_core::record::OutputTokensDetails::default(),
        total_tokens: Some(i + o),
    };
    Ok(Decoded {
        messages: out,
        native,
        usage,
    })
}
