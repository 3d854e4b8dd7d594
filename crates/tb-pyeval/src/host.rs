//! The objects the runner hands to a test: `x` (the reference's `TestContext`) and `judge`.

use crate::interp::{ExcKind, Interp, R, raise};
use crate::repr::to_str;
use crate::value::{JsonRef, Kwargs, Object, Seg, Value, from_json, lazy_json_field, lazy_value};
use std::sync::Arc;

/// Builds `x` from the reference's JSON form of a `TestContext` (what its test subprocess
/// receives): tool calls, their responses and messages become objects with attributes;
/// everything else (effects, metadata, ...) becomes plain dicts and lists. The effects (a
/// server's whole state, megabytes for the airline) are converted lazily, an entry when the
/// body reads it (see [`crate::value::Dict`]).
pub fn context_value(ctx: &Arc<serde_json::Value>) -> Value {
    let _paused = crate::budget::pause();
    let mut attrs: Vec<(&'static str, Value)> = Vec::new();
    let get = |k: &str| ctx.get(k);
    attrs.push((
        "response",
        get("response").map_or_else(|| Value::str(""), from_json),
    ));
    attrs.push((
        "tool_direct_responses",
        get("tool_direct_responses").map_or_else(|| Value::list(Vec::new()), from_json),
    ));
    attrs.push((
        "effects",
        lazy_json_field(ctx, "effects").unwrap_or_else(empty_dict),
    ));
    let root = JsonRef::root(ctx);
    // The messages' fields are read lazily too (a dict field converted when the body reads it).
    let list_of = |key: &str, each: fn(&JsonRef) -> Value| -> Vec<Value> {
        if !get(key).is_some_and(serde_json::Value::is_array) {
            return Vec::new();
        }
        let list = root.child(Seg::Key(key));
        let n = list.get().as_array().map_or(0, Vec::len);
        (0..n).map(|i| each(&list.child(Seg::Index(i)))).collect()
    };
    let tool_calls = list_of("tool_calls", tool_call_response);
    attrs.push(("tool_calls", Value::list(tool_calls)));
    let messages = list_of("messages", message);
    attrs.push(("messages", Value::list(messages)));
    attrs.push((
        "init_result",
        get("init_result").map_or_else(empty_dict, from_json),
    ));
    attrs.push((
        "session_id",
        get("session_id").map_or_else(
            || Value::str("00000000-0000-0000-0000-000000000000"),
            from_json,
        ),
    ));
    attrs.push((
        "metadata",
        get("metadata").map_or_else(empty_dict, from_json),
    ));
    Object::new_value("TestContext", attrs)
}

fn empty_dict() -> Value {
    Value::dict(crate::value::Dict::default())
}

fn tool_call_response(at: &JsonRef) -> Value {
    let field = |k: &str| {
        at.get()
            .get(k)
            .map_or(Value::None, |_| message(&at.child(Seg::Key(k))))
    };
    Object::new_value(
        "ToolCallResponse",
        [
            ("tool_call", field("tool_call")),
            ("tool_response", field("tool_response")),
        ],
    )
}

/// A message (`Text`, `ToolCall`, `ToolResponse`, ...) as an object of its class `T`.
fn message(at: &JsonRef) -> Value {
    let v = at.get();
    let Some(map) = v.as_object() else {
        return from_json(v);
    };
    let class = map
        .get("T")
        .and_then(serde_json::Value::as_str)
        .unwrap_or("Message");
    let obj = Object::new_value(class, []);
    if let Value::Object(o) = &obj {
        let mut attrs = o.attrs.borrow_mut();
        for (k, val) in map {
            attrs.insert(
                std::rc::Rc::from(k.as_str()),
                lazy_value(at, Seg::Key(k), val),
            );
        }
    }
    obj
}

/// The `judge` object.
pub fn judge_value() -> Value {
    Object::new_value("Judge", [])
}

fn str_arg(
    name: &str,
    args: &[Value],
    kwargs: &[(String, Value)],
    pos: usize,
    param: &str,
) -> R<String> {
    let v = args
        .get(pos)
        .or_else(|| kwargs.iter().find(|(k, _)| k == param).map(|(_, v)| v));
    match v {
        Some(Value::Str(s)) => Ok(s.to_string()),
        Some(other) => Ok(to_str(other)),
        None => raise(
            ExcKind::TypeError,
            format!("Judge.{name}() missing 1 required positional argument: '{param}'"),
        ),
    }
}

fn judge_result(r: Result<bool, String>) -> R<Value> {
    match r {
        Ok(b) => Ok(Value::Bool(b)),
        Err(e) => raise(
            ExcKind::JudgeException,
            format!("Error getting Judge completion: {e}"),
        ),
    }
}

/// `judge.<name>(...)`.
pub fn call_judge(
    interp: &mut Interp<'_>,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
) -> R<Value> {
    match name {
        "text_yesno" => {
            let text = str_arg(name, &args, &kwargs, 0, "text")?;
            let question = str_arg(name, &args, &kwargs, 1, "question")?;
            judge_result(interp.judge.text_yesno(&text, &question))
        }
        "compare_yesno" => {
            let first = str_arg(name, &args, &kwargs, 0, "first")?;
            let second = str_arg(name, &args, &kwargs, 1, "second")?;
            let question = str_arg(name, &args, &kwargs, 2, "question")?;
            judge_result(interp.judge.compare_yesno(&first, &second, &question))
        }
        "yesno" => {
            let question = str_arg(name, &args, &kwargs, 0, "question")?;
            judge_result(interp.judge.yesno(&question))
        }
        "no_repeat" => {
            let first = str_arg(name, &args, &kwargs, 0, "first")?;
            let list = args
                .get(1)
                .cloned()
                .or_else(|| {
                    kwargs
                        .iter()
                        .find(|(k, _)| k == "second_list")
                        .map(|(_, v)| v.clone())
                })
                .unwrap_or_else(|| Value::list(Vec::new()));
            let question = interp.judge.repeat_question();
            for second in crate::builtins::iterate(&list)? {
                let second = to_str(&second);
                match interp.judge.compare_yesno(&first, &second, &question) {
                    Ok(true) => return Ok(Value::Bool(false)),
                    Ok(false) => {}
                    Err(e) => {
                        return raise(
                            ExcKind::JudgeException,
                            format!("Error getting Judge completion: {e}"),
                        );
                    }
                }
            }
            Ok(Value::Bool(true))
        }
        other => raise(
            ExcKind::NotImplementedError,
            format!("Judge.{other}() is not supported by tb's test-body evaluator"),
        ),
    }
}
