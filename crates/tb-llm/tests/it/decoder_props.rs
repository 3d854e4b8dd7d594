//! The reply decoders of the three APIs against a model of the reference's clients: any reply
//! of the API's envelope, with any JSON in its fields, decodes to the outcome the reference
//! reaches (its messages: visible texts, thoughts, tool calls; or a system error), and never
//! panics.
//!
//! The model below is written from the reference's client rules (which field it reads, which
//! value it refuses), independently of the decoders: a system error where a Python exception
//! escapes its decoding (a missing key, a value pydantic refuses), else the messages.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tb_core::Message;
use tb_llm::wire::{DecodeError, decode};
use tb_llm::{LlmConfig, Provider};

/// The outcome of decoding a reply: a system error, or (visible texts, thoughts, tool calls).
#[derive(Debug, PartialEq, Eq)]
enum Outcome {
    SystemError,
    Messages(usize, usize, usize),
}

fn ours(provider: Provider, body: &Value) -> Outcome {
    let mut cfg = LlmConfig::chat("http://x", "m");
    cfg.provider = provider;
    match decode(&cfg, None, body) {
        Err(DecodeError::Rejected(_) | DecodeError::Malformed(_)) => Outcome::SystemError,
        Ok(d) => {
            let (mut texts, mut thoughts, mut calls) = (0, 0, 0);
            for m in &d.messages {
                match m {
                    Message::Text { metadata, .. } => {
                        if metadata.get("is_dummy").is_some() {
                        } else if metadata.get("tag") == Some(&json!("think")) {
                            thoughts += 1;
                        } else {
                            texts += 1;
                        }
                    }
                    Message::ParallelToolCall { tool_calls, .. } => calls += tool_calls.len(),
                    Message::ToolResponse { .. } => {}
                }
            }
            Outcome::Messages(texts, thoughts, calls)
        }
    }
}

// ---------------------------------------------------------------------------------------
// The reference's rules.

fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null | Value::Bool(false)) => false,
        Some(Value::Number(n)) => n.as_f64() != Some(0.0),
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Array(a)) => !a.is_empty(),
        Some(Value::Object(o)) => !o.is_empty(),
        Some(Value::Bool(true)) => true,
    }
}

/// What `json.loads` of an argument text gives: an object, another value, or an error
/// (texts come from [`arg_text`], whose Python outcome is known).
#[derive(Clone, Copy, Debug)]
enum Loads {
    Object,
    Other,
    Error,
}

struct Fail;

/// A tool call's arguments as the reference reads them: a text loading to an object, a text
/// that does not load or a value that is not a text (both: an argument error, `{}`) are
/// fine; a text loading to anything else makes the call invalid.
fn args_ok(arg: &Value, loads: Loads) -> bool {
    !matches!((arg, loads), (Value::String(_), Loads::Other))
}

/// A tool call's (arguments, name, id): all there, the name and id strings, the arguments
/// what `loads` reads.
fn call_ok(
    (arg, name, id): (Option<&Value>, Option<&Value>, Option<&Value>),
    loads: Loads,
) -> Result<(), Fail> {
    let (arg, name, id) = (arg.ok_or(Fail)?, name.ok_or(Fail)?, id.ok_or(Fail)?);
    if !name.is_string() || !id.is_string() || !args_ok(arg, loads) {
        return Err(Fail);
    }
    Ok(())
}

fn chat_model(m: &Value, loads: &[Loads]) -> Result<(usize, usize, usize), Fail> {
    let mut texts = 0;
    if truthy(m.get("content")) {
        if !m["content"].is_string() {
            return Err(Fail);
        }
        texts += 1;
    }
    let mut calls = 0;
    if truthy(m.get("tool_calls")) {
        let Some(list) = m["tool_calls"].as_array() else {
            return Err(Fail);
        };
        for (i, tc) in list.iter().enumerate() {
            let f = tc.get("function").ok_or(Fail)?;
            let f = f.as_object().ok_or(Fail)?;
            call_ok(
                (f.get("arguments"), f.get("name"), tc.get("id")),
                loads[i % loads.len()],
            )?;
            calls += 1;
        }
    }
    Ok((texts, 0, calls))
}

fn anthropic_model(b: &Value) -> Result<(usize, usize, usize), Fail> {
    let (mut texts, mut thoughts, mut calls) = (0, 0, 0);
    match b.get("content") {
        None => {}
        Some(Value::Array(blocks)) => {
            for bl in blocks {
                let o = bl.as_object().ok_or(Fail)?;
                match o.get("type").and_then(Value::as_str) {
                    Some("thinking") => {
                        if truthy(o.get("thinking")) {
                            if !o["thinking"].is_string() {
                                return Err(Fail);
                            }
                            thoughts += 1;
                        }
                    }
                    Some("redacted_thinking") => thoughts += 1,
                    Some("text") => {
                        if truthy(o.get("text")) {
                            if !o["text"].is_string() {
                                return Err(Fail);
                            }
                            texts += 1;
                        }
                    }
                    Some("tool_use") => {
                        let name_ok = o.get("name").is_none_or(Value::is_string);
                        let id_ok = o.get("id").is_none_or(Value::is_string);
                        let input_ok = o.get("input").is_none_or(Value::is_object);
                        if !(name_ok && id_ok && input_ok) {
                            return Err(Fail);
                        }
                        calls += 1;
                    }
                    _ => return Err(Fail),
                }
            }
        }
        // any other content: the text of its str()
        Some(_) => texts += 1,
    }
    let int = |v: &Value| v.is_i64() || v.is_u64();
    match b.get("usage") {
        None => {}
        Some(Value::Object(u)) => {
            for k in ["cache_read_input_tokens", "input_tokens", "output_tokens"] {
                if u.get(k).is_some_and(|v| !int(v)) {
                    return Err(Fail);
                }
            }
        }
        Some(_) => return Err(Fail),
    }
    Ok((texts, thoughts, calls))
}

/// The reference's loop over a Responses item's parts.
fn parts_ok(parts: Option<&Value>, want: &str) -> bool {
    if !truthy(parts) {
        return true;
    }
    let Some(Value::Array(parts)) = parts else {
        return false;
    };
    parts.iter().all(|p| match p.as_object() {
        None => false,
        Some(o) => match o.get("type") {
            None => false,
            Some(t) if t == want => o.get("text").is_some_and(Value::is_string),
            Some(_) => true,
        },
    })
}

fn responses_model(b: &Value, loads: &[Loads]) -> Result<(usize, usize, usize), Fail> {
    match b.get("usage") {
        Some(Value::Object(_)) => {}
        _ => return Err(Fail),
    }
    let (mut texts, mut thoughts, mut calls) = (0, 0, 0);
    for (i, item) in b["output"].as_array().ok_or(Fail)?.iter().enumerate() {
        let o = item.as_object().ok_or(Fail)?;
        match (
            o.get("type").and_then(Value::as_str),
            o.get("role").and_then(Value::as_str),
        ) {
            (Some("reasoning"), _) => {
                if !parts_ok(o.get("summary"), "summary_text") {
                    return Err(Fail);
                }
                thoughts += 1;
            }
            (Some("function_call"), _) => {
                call_ok(
                    (o.get("arguments"), o.get("name"), o.get("call_id")),
                    loads[i % loads.len()],
                )?;
                calls += 1;
            }
            (Some("message"), Some(role @ ("system" | "developer" | "user" | "assistant"))) => {
                if !parts_ok(o.get("content"), "output_text") || role == "developer" {
                    return Err(Fail);
                }
                texts += 1;
            }
            _ => return Err(Fail),
        }
    }
    Ok((texts, thoughts, calls))
}

fn outcome(r: Result<(usize, usize, usize), Fail>) -> Outcome {
    match r {
        Ok((a, b, c)) => Outcome::Messages(a, b, c),
        Err(Fail) => Outcome::SystemError,
    }
}

// ---------------------------------------------------------------------------------------
// Replies.

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..1000).prop_map(|n| json!(n)),
        Just(json!(1.5)),
        prop_oneof![Just(""), Just("x"), Just("{}"), Just("text")].prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(2, 8, 3, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]", inner, 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// An argument text with what `json.loads` makes of it.
fn arg_text() -> impl Strategy<Value = (Value, Loads)> {
    prop_oneof![
        prop::collection::btree_map("[a-z]{1,3}", any_json(), 0..3).prop_map(|m| {
            let o: Map<String, Value> = m.into_iter().collect();
            (json!(Value::Object(o).to_string()), Loads::Object)
        }),
        Just((json!("{\"a\": NaN}"), Loads::Object)),
        Just((json!("null"), Loads::Other)),
        Just((json!("[{\"a\": 1}]"), Loads::Other)),
        Just((json!("5"), Loads::Other)),
        Just((json!("\"s\""), Loads::Other)),
        Just((json!("NaN"), Loads::Other)),
        Just((json!(""), Loads::Error)),
        Just((json!("{\"a\": \"b"), Loads::Error)),
        Just((json!("{'a': 1}"), Loads::Error)),
        any_json().prop_map(|v| (v, Loads::Error)),
    ]
}

/// `(key, value)` pairs put into an object when the value is there.
fn object(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

fn str_or_any() -> impl Strategy<Value = Option<Value>> {
    prop::option::of(prop_oneof![
        3 => prop_oneof![Just("f"), Just("call_1"), Just("")].prop_map(|s| json!(s)),
        1 => any_json(),
    ])
}

/// A Chat Completions or Responses tool call (its argument's `json.loads` outcome beside).
fn chat_call() -> impl Strategy<Value = (Value, Loads)> {
    (
        str_or_any(),
        str_or_any(),
        prop::option::of(arg_text()),
        0..10u8,
    )
        .prop_map(|(id, name, arg, shape)| {
            let loads = arg.as_ref().map_or(Loads::Error, |a| a.1);
            let function = object(vec![("name", name), ("arguments", arg.map(|a| a.0))]);
            let tc = match shape {
                0 => json!("not a call"),
                1 => object(vec![("id", id)]),
                2 => object(vec![("id", id), ("function", Some(json!(null)))]),
                _ => object(vec![
                    ("id", id),
                    ("type", Some(json!("function"))),
                    ("function", Some(function)),
                ]),
            };
            (tc, loads)
        })
}

fn loads_of(calls: &[(Value, Loads)]) -> Vec<Loads> {
    let mut l: Vec<Loads> = calls.iter().map(|c| c.1).collect();
    if l.is_empty() {
        l.push(Loads::Error);
    }
    l
}

fn parts(want: &'static str) -> impl Strategy<Value = Value> {
    let part = prop_oneof![
        3 => (
            prop::option::of(prop_oneof![Just(want), Just("refusal"), Just("other")]),
            prop::option::of(prop_oneof![3 => Just(json!("t")), 1 => any_json()]),
        )
            .prop_map(|(t, text)| object(vec![("type", t.map(|t| json!(t))), ("text", text)])),
        1 => any_json(),
    ];
    prop_oneof![
        3 => prop::collection::vec(part, 0..3).prop_map(Value::Array),
        1 => any_json(),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn chat_replies_decode_as_the_reference_decodes_them(
        content in prop::option::of(prop_oneof![
            3 => prop_oneof![Just("hi"), Just("")].prop_map(|s| json!(s)),
            1 => any_json(),
        ]),
        calls in prop::option::of(prop::collection::vec(chat_call(), 0..3)),
        odd_calls in prop::option::of(any_json()),
        reasoning in prop::option::of(any_json()),
    ) {
        let loads = loads_of(calls.as_deref().unwrap_or(&[]));
        let tool_calls = match (&calls, odd_calls) {
            (Some(c), _) => Some(Value::Array(c.iter().map(|c| c.0.clone()).collect())),
            (None, o) => o,
        };
        let m = object(vec![
            ("role", Some(json!("assistant"))),
            ("content", content),
            ("tool_calls", tool_calls),
            ("reasoning", reasoning),
        ]);
        let body = json!({"choices": [{"index": 0, "message": m}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}});
        prop_assert_eq!(ours(Provider::Chat, &body), outcome(chat_model(&m, &loads)), "{}", body);
    }

    #[test]
    fn anthropic_replies_decode_as_the_reference_decodes_them(
        blocks in prop::collection::vec(
            prop_oneof![
                4 => (
                    prop::option::of(prop_oneof![
                        Just("text"), Just("thinking"), Just("redacted_thinking"),
                        Just("tool_use"), Just("image"),
                    ]),
                    prop::option::of(prop_oneof![2 => Just(json!("words")), 1 => any_json()]),
                    prop::option::of(prop_oneof![2 => Just(json!({"q": 1})), 1 => any_json()]),
                    str_or_any(),
                )
                    .prop_map(|(t, text, input, id)| object(vec![
                        ("type", t.map(|t| json!(t))),
                        ("text", text.clone()),
                        ("thinking", text),
                        ("name", Some(json!("f"))),
                        ("input", input),
                        ("id", id),
                    ])),
                1 => any_json(),
            ],
            0..4,
        ),
        odd_content in prop::option::of(any_json()),
        usage in prop::option::of(prop_oneof![
            3 => (
                prop::option::of(prop_oneof![Just(json!(5)), Just(json!(null)), Just(json!([5]))]),
                prop::option::of(prop_oneof![Just(json!(3)), Just(json!(null))]),
            )
                .prop_map(|(c, i)| object(vec![
                    ("input_tokens", i),
                    ("output_tokens", Some(json!(2))),
                    ("cache_read_input_tokens", c),
                ])),
            1 => any_json(),
        ]),
        list in any::<bool>(),
    ) {
        let content = if list { Some(Value::Array(blocks)) } else { odd_content };
        let body = object(vec![
            ("role", Some(json!("assistant"))),
            ("content", content),
            ("usage", usage),
        ]);
        prop_assert_eq!(ours(Provider::Anthropic, &body), outcome(anthropic_model(&body)), "{}", body);
    }

    #[test]
    fn responses_replies_decode_as_the_reference_decodes_them(
        items in prop::collection::vec(
            prop_oneof![
                2 => chat_call().prop_map(|(tc, l)| {
                    let f = tc.get("function").cloned().unwrap_or(Value::Null);
                    (object(vec![
                        ("type", Some(json!("function_call"))),
                        ("call_id", tc.get("id").cloned()),
                        ("name", f.get("name").cloned()),
                        ("arguments", f.get("arguments").cloned()),
                    ]), l)
                }),
                2 => (
                    prop::option::of(prop_oneof![
                        Just("assistant"), Just("user"), Just("developer"), Just("tool"),
                    ]),
                    prop::option::of(parts("output_text")),
                )
                    .prop_map(|(role, content)| (object(vec![
                        ("type", Some(json!("message"))),
                        ("role", role.map(|r| json!(r))),
                        ("content", content),
                    ]), Loads::Error)),
                1 => prop::option::of(parts("summary_text")).prop_map(|summary| (object(vec![
                    ("type", Some(json!("reasoning"))),
                    ("summary", summary),
                ]), Loads::Error)),
                1 => any_json().prop_map(|v| (v, Loads::Error)),
            ],
            0..4,
        ),
        usage in prop::option::of(prop_oneof![
            3 => Just(json!({"input_tokens": 1, "output_tokens": 1, "total_tokens": 2})),
            1 => Just(json!({})),
            1 => any_json().prop_filter("not an object", |v| !v.is_object()),
        ]),
    ) {
        let loads: Vec<Loads> = items.iter().map(|i| i.1).collect();
        let loads = if loads.is_empty() { vec![Loads::Error] } else { loads };
        let body = object(vec![
            ("output", Some(Value::Array(items.into_iter().map(|i| i.0).collect()))),
            ("usage", usage),
        ]);
        prop_assert_eq!(ours(Provider::Responses, &body), outcome(responses_model(&body, &loads)), "{}", body);
    }
}
