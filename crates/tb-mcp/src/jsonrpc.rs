//! Every request gets an answer: the checks that run on each MCP message (an HTTP body or a
//! stdio line) before rmcp sees it, so that what rmcp would drop, answer with a bare HTTP
//! status, or take as an unknown method is answered with the JSON-RPC error it is: a parse
//! error (not JSON, invalid UTF-8, too deep, a number out of range, too long), an invalid
//! request (not a JSON-RPC 2.0 object), or invalid params (with the field that is wrong).

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use rmcp::model::{CallToolRequest, ClientJsonRpcMessage, ClientRequest, JsonRpcRequest};
use serde::Deserialize;
use serde_json::{Value, json};

/// JSON-RPC's error codes.
pub const PARSE_ERROR: i64 = -32700;
/// The message is not a valid JSON-RPC request.
pub const INVALID_REQUEST: i64 = -32600;
/// The method's params are wrong.
pub const INVALID_PARAMS: i64 = -32602;

/// Methods rmcp knows; a message naming one with params it cannot read is invalid params
/// (rmcp would take it as a custom request and answer "method not found").
const KNOWN_METHODS: &[&str] = &["initialize", "ping", "tools/call", "tools/list"];

/// Why a message is refused, and the reply that says so.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The request's id when it could be read (else `null`).
    pub id: Value,
    /// The JSON-RPC error code.
    pub code: i64,
    /// What is wrong.
    pub message: String,
}

impl Rejection {
    fn new(id: Value, code: i64, message: impl Into<String>) -> Self {
        Rejection {
            id,
            code,
            message: message.into(),
        }
    }

    /// A parse error with no id.
    pub fn parse(message: impl Into<String>) -> Self {
        Rejection::new(Value::Null, PARSE_ERROR, message)
    }

    /// The JSON-RPC error reply.
    pub fn to_json(&self) -> Value {
        json!({"jsonrpc": "2.0", "id": self.id, "error": {"code": self.code, "message": self.message}})
    }

    /// The reply as one line of text (no newline).
    pub fn to_line(&self) -> String {
        self.to_json().to_string()
    }
}

/// A JSON value's type as messages name it (`a string`, `an object`, ...).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Checks one message. `Ok(Some(msg))`: rmcp can take it (the parsed message, for callers that
/// use it); `Ok(None)`: a batch (an array), left to rmcp as it is; `Err`: the reply to send.
pub fn check(bytes: &[u8]) -> Result<Option<ClientJsonRpcMessage>, Rejection> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| Rejection::parse(format!("Parse error: the message is not UTF-8 ({e})")))?;
    let v: Value =
        serde_json::from_str(text).map_err(|e| Rejection::parse(format!("Parse error: {e}")))?;
    let obj = match &v {
        Value::Object(m) => m,
        Value::Array(_) => return Ok(None),
        other => {
            return Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: a JSON-RPC message must be an object, got {}",
                    kind(other)
                ),
            ));
        }
    };
    let id = match obj.get("id") {
        None | Some(Value::Null) => Value::Null,
        Some(i @ (Value::String(_) | Value::Number(_))) => i.clone(),
        Some(other) => {
            return Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: `id` must be a string or a number, got {}",
                    kind(other)
                ),
            ));
        }
    };
    let method_owned = match obj.get("method") {
        Some(Value::String(m)) => Some(m.clone()),
        _ => None,
    };
    let bad = |code: i64, msg: String| Err(Rejection::new(id.clone(), code, msg));
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return bad(
            INVALID_REQUEST,
            "Invalid Request: `jsonrpc` must be \"2.0\"".into(),
        );
    }
    let method = match obj.get("method") {
        None => None,
        Some(Value::String(m)) => Some(m.as_str()),
        Some(other) => {
            return bad(
                INVALID_REQUEST,
                format!(
                    "Invalid Request: `method` must be a string, got {}",
                    kind(other)
                ),
            );
        }
    };
    if method == Some("tools/call") {
        match obj.get("params") {
            Some(Value::Object(p)) => {
                match p.get("name") {
                    Some(Value::String(_)) => {}
                    Some(other) => {
                        return bad(
                            INVALID_PARAMS,
                            format!(
                                "Invalid params: `params.name` (the tool name) must be a string, got {}",
                                kind(other)
                            ),
                        );
                    }
                    None => {
                        return bad(
                            INVALID_PARAMS,
                            "Invalid params: `params.name` (the tool name) is missing".into(),
                        );
                    }
                }
                match p.get("arguments") {
                    None | Some(Value::Null | Value::Object(_)) => {}
                    Some(other) => {
                        return bad(
                            INVALID_PARAMS,
                            format!(
                                "Invalid params: `params.arguments` must be an object, got {}",
                                kind(other)
                            ),
                        );
                    }
                }
            }
            Some(other) => {
                return bad(
                    INVALID_PARAMS,
                    format!(
                        "Invalid params: `params` of tools/call must be an object with `name`, got {}",
                        kind(other)
                    ),
                );
            }
            None => {
                return bad(
                    INVALID_PARAMS,
                    "Invalid params: tools/call needs `params` with the tool's `name`".into(),
                );
            }
        }
    }
    // A `tools/call` request read as one: what rmcp's untagged message type yields for it (its
    // other request variants need another `method`; its shape check needs an `id` and no
    // `result` or `error`), without trying the other variants first. Anything it does not
    // read goes through the generic parse below, errors and all.
    if method == Some("tools/call")
        && matches!(obj.get("id"), Some(Value::String(_) | Value::Number(_)))
        && !obj.contains_key("result")
        && !obj.contains_key("error")
        && let Ok(request) = JsonRpcRequest::<CallToolRequest>::deserialize(&v)
    {
        return Ok(Some(ClientJsonRpcMessage::Request(JsonRpcRequest {
            jsonrpc: request.jsonrpc,
            id: request.id,
            request: ClientRequest::CallToolRequest(request.request),
        })));
    }
    match serde_json::from_value::<ClientJsonRpcMessage>(v) {
        Ok(msg) => {
            if let ClientJsonRpcMessage::Request(r) = &msg
                && let rmcp::model::ClientRequest::CustomRequest(c) = &r.request
                && KNOWN_METHODS.contains(&c.method.as_str())
            {
                return bad(
                    INVALID_PARAMS,
                    format!(
                        "Invalid params: the params of `{}` do not have the shape MCP defines",
                        c.method
                    ),
                );
            }
            Ok(Some(msg))
        }
        Err(e) => match method_owned {
            Some(m) => bad(INVALID_PARAMS, format!("Invalid params of `{m}`: {e}")),
            None => bad(INVALID_REQUEST, format!("Invalid Request: {e}")),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(b: &[u8]) -> i64 {
        check(b).unwrap_err().code
    }

    #[test]
    fn every_bad_message_has_its_error() {
        assert_eq!(code(b"not json"), PARSE_ERROR);
        assert_eq!(code(b"{\"a\": \xff}"), PARSE_ERROR);
        assert_eq!(code(b"[1e999]"), PARSE_ERROR);
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let e = check(deep.as_bytes()).unwrap_err();
        assert_eq!(e.code, PARSE_ERROR);
        assert!(e.message.contains("recursion limit"), "{}", e.message);
        assert_eq!(code(b"42"), INVALID_REQUEST);
        assert_eq!(code(br#"{"id": 1, "method": "ping"}"#), INVALID_REQUEST);
        assert_eq!(
            code(br#"{"jsonrpc": "2.0", "id": {}, "method": "ping"}"#),
            INVALID_REQUEST
        );
        for params in [
            r#""params": {"name": 7}"#,
            r#""params": {}"#,
            r#""params": null"#,
            r#""params": {"name": "x", "arguments": [1]}"#,
        ] {
            let m = format!(r#"{{"jsonrpc": "2.0", "id": 3, "method": "tools/call", {params}}}"#);
            let e = check(m.as_bytes()).unwrap_err();
            assert_eq!((e.code, &e.id), (INVALID_PARAMS, &json!(3)), "{params}");
        }
        let m = br#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call"}"#;
        assert_eq!(code(m), INVALID_PARAMS);
        assert!(
            check(br#"{"jsonrpc": "2.0", "id": "a", "method": "tools/call", "params": {"name": "x"}}"#)
                .unwrap()
                .is_some()
        );
        assert!(check(br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}"#).is_ok());
        assert!(check(br"[]").unwrap().is_none());
    }

    /// A `tools/call` read as one equals rmcp's generic parse of it, its `_meta` extension
    /// included, and whatever the typed read refuses gets the generic parse's answer.
    #[test]
    fn tools_calls_read_typed_equal_the_generic_parse() {
        let generic = |b: &[u8]| {
            let v: Value = serde_json::from_slice(b).unwrap();
            serde_json::from_value::<ClientJsonRpcMessage>(v)
        };
        let meta = |m: &ClientJsonRpcMessage| match m {
            ClientJsonRpcMessage::Request(r) => match &r.request {
                ClientRequest::CallToolRequest(c) => {
                    format!("{:?}", c.extensions.get::<rmcp::model::RequestMetaObject>())
                }
                other => format!("not a call: {other:?}"),
            },
            other => format!("not a request: {other:?}"),
        };
        let params = [
            r#"{"name":"t"}"#,
            r#"{"name":"t","arguments":null}"#,
            r#"{"name":"t","arguments":{"a":[1,2.5,{"b":null}],"c":"é"}}"#,
            r#"{"name":"t","arguments":{},"_meta":{"progressToken":3}}"#,
            r#"{"name":"t","_meta":{"progressToken":"p","other":{"x":1}}}"#,
            r#"{"name":"t","_meta":{"io.modelcontextprotocol/protocolVersion":"2025-06-18"}}"#,
            r#"{"name":"t","task":{"ttl":1000}}"#,
            r#"{"name":"t","extra":[1]}"#,
        ];
        for (i, p) in params.iter().enumerate() {
            for id in [format!("{i}"), format!("\"id{i}\"")] {
                for extra in ["", r#","x":{"y":1}"#] {
                    let m = format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{p}{extra}}}"#
                    );
                    let ours = check(m.as_bytes()).unwrap().unwrap();
                    let theirs = generic(m.as_bytes()).unwrap();
                    assert_eq!(format!("{ours:?}"), format!("{theirs:?}"), "{m}");
                    assert_eq!(meta(&ours), meta(&theirs), "{m}");
                    assert!(
                        meta(&ours).starts_with("Some") == p.contains("_meta"),
                        "{m}"
                    );
                }
            }
        }
        // refused by the typed read: the generic parse answers (here: not a request, or
        // rmcp's "not the shape MCP defines" for params its call type cannot read)
        for m in [
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"t"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","inputResponses":5}}"#,
        ] {
            let ours = format!("{:?}", check(m.as_bytes()));
            assert!(!ours.starts_with("Ok(Some(Request"), "{m}: {ours}");
        }
    }
}
