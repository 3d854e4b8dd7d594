//! Reading trial records. Accepts our records and the reference's `DecodeResult` lines (which
//! lack `key`, `repetition`, `verdict`, `usage_by_role` and `provenance`); a malformed line is
//! an error naming the file and the line.

use crate::MetricsError;
use serde_json::{Map, Value};
use std::path::Path;
use tb_core::{Message, Usage, UsageByRole, Verdict};

/// The test outcome as far as metrics need it (the reference's `TestResult`, read leniently:
/// the reference writes `null` for some fields).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Outcome {
    /// `test_result.result`.
    pub result: bool,
    /// `test_result.is_system_error` (a test or judge error).
    pub is_system_error: bool,
    /// The assertion text.
    pub tb: String,
    /// Line of the failing assertion, if any.
    pub lineno: Option<i64>,
    /// Its text.
    pub line_content: String,
}

/// One attempt, read from one JSONL line.
#[derive(Debug, Clone, PartialEq)]
pub struct Attempt {
    /// 1-based line in its file.
    pub line: usize,
    /// `file.py:function`.
    pub uid: String,
    /// `repetition`, else `metadata.repetition`, else the `::repeat::N` suffix of `key`.
    pub repetition: Option<u64>,
    /// `metadata.scenario` (the benchmark's domain), else `test_tags.domain`.
    pub domain: Option<String>,
    /// The conversation.
    pub messages: Vec<Message>,
    /// `test_result`, null on a decode error.
    pub test_result: Option<Outcome>,
    /// `is_system_error` (decode error).
    pub is_system_error: bool,
    /// `finish_reason` as written (`done`, `agent_limit`, ...).
    pub finish_reason: String,
    /// The reference's per-call agent usage.
    pub usage: Vec<Usage>,
    /// Ours: usage per role, absent in reference files.
    pub usage_by_role: Option<UsageByRole>,
    /// Ours: the verdict with state diffs and rubric answers.
    pub verdict: Option<Verdict>,
    /// `metadata`.
    pub metadata: Map<String, Value>,
    /// Ours: provenance.
    pub provenance: Map<String, Value>,
}

/// How the reference's `tb agg` counts an attempt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefStatus {
    /// Not a system error, a test result, not a test error, `result` true.
    Passed,
    /// A test result that is false.
    Failed,
    /// Decode error, missing test result, or test error (counted as a failure in every rate).
    Error,
}

impl Attempt {
    /// The reference's classification (`get_decoded_result_stats`).
    pub fn ref_status(&self) -> RefStatus {
        if self.is_system_error {
            return RefStatus::Error;
        }
        match &self.test_result {
            None => RefStatus::Error,
            Some(t) if t.is_system_error => RefStatus::Error,
            Some(t) if t.result => RefStatus::Passed,
            Some(_) => RefStatus::Failed,
        }
    }

    /// Passed under the reference rule.
    pub fn passed(&self) -> bool {
        self.ref_status() == RefStatus::Passed
    }

    /// A system error: `is_system_error`, or `test_result.is_system_error`.
    pub fn is_any_system_error(&self) -> bool {
        self.is_system_error || self.test_result.as_ref().is_some_and(|t| t.is_system_error)
    }

    /// Usage per role: `usage_by_role` when present (the agent falls back to the sum of the
    /// reference `usage` list when `usage_by_role.agent` is empty).
    pub fn role_usage(&self) -> UsageByRole {
        let mut agent_sum = Usage::default();
        for u in &self.usage {
            agent_sum.add(u);
        }
        match &self.usage_by_role {
            Some(r) => {
                let mut r = r.clone();
                if r.agent.input_tokens == 0 && r.agent.output_tokens == 0 {
                    r.agent = agent_sum;
                }
                r
            }
            None => UsageByRole {
                agent: agent_sum,
                ..Default::default()
            },
        }
    }
}

/// The attempts of one file (one model).
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The file as given.
    pub file: String,
    /// The model: `provenance.model`, `provenance.models.agent`, `provenance.agent_model`,
    /// `metadata.model` of the first record that has one, else the file stem.
    pub model: String,
    /// The attempts in file order.
    pub attempts: Vec<Attempt>,
}

/// Reads a JSONL file of trial records.
pub fn read_run(path: &Path) -> Result<Run, MetricsError> {
    let text = std::fs::read_to_string(path).map_err(|e| MetricsError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let stem = path.file_stem().map_or_else(
        || path.display().to_string(),
        |s| s.to_string_lossy().into_owned(),
    );
    parse_run(&path.display().to_string(), &stem, &text)
}

/// Parses JSONL text; `file` names it in errors, `stem` is the fallback model name.
pub fn parse_run(file: &str, stem: &str, text: &str) -> Result<Run, MetricsError> {
    let mut attempts = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let err = |message: String| MetricsError::Line {
            file: file.to_string(),
            line: line_no,
            message,
        };
        attempts.push(parse_line(t, line_no).map_err(err)?);
    }
    Ok(run_of(file, stem, attempts))
}

/// Parses one record line (`line` is its 1-based number in its file); the error says what is
/// wrong, without the file and line (the caller adds them).
pub fn parse_line(text: &str, line: usize) -> Result<Attempt, String> {
    let v: Value = serde_json::from_str(text.trim()).map_err(|e| format!("not JSON: {e}"))?;
    parse_attempt(v, line)
}

/// A run of already parsed attempts: the model named as [`Run::model`] says, else `stem`.
pub fn run_of(file: &str, stem: &str, attempts: Vec<Attempt>) -> Run {
    let model = attempts
        .iter()
        .find_map(model_of)
        .unwrap_or_else(|| stem.to_string());
    Run {
        file: file.to_string(),
        model,
        attempts,
    }
}

fn str_at<'a>(v: &'a Value, path: &[&str]) -> Option<&'a str> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    match cur {
        Value::String(s) if !s.is_empty() => Some(s),
        Value::Object(o) => o
            .get("model")
            .or_else(|| o.get("name"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty()),
        _ => None,
    }
}

fn model_of(a: &Attempt) -> Option<String> {
    let prov = Value::Object(a.provenance.clone());
    let meta = Value::Object(a.metadata.clone());
    str_at(&prov, &["model"])
        .or_else(|| str_at(&prov, &["models", "agent"]))
        .or_else(|| str_at(&prov, &["agent_model"]))
        .or_else(|| str_at(&meta, &["model"]))
        .map(str::to_string)
}

/// Removes `null` values of keys whose absence serde fills with a default, recursively.
fn drop_null_defaults(v: &mut Value) {
    const KEYS: [&str; 8] = [
        "metadata",
        "input_tokens_details",
        "output_tokens_details",
        "cached_tokens",
        "reasoning_tokens",
        "input_tokens",
        "output_tokens",
        "total_tokens",
    ];
    match v {
        Value::Object(o) => {
            o.retain(|k, x| !(x.is_null() && KEYS.contains(&k.as_str())));
            if o.get("T").and_then(Value::as_str) == Some("ToolResponse")
                && o.get("content").is_some_and(Value::is_null)
            {
                o.insert("content".into(), Value::String(String::new()));
            }
            if let Some(c) = o.get_mut("content")
                && !c.is_string()
                && !c.is_null()
            {
                // Some writers store structured tool content; keep it as its JSON text.
                *c = Value::String(c.to_string());
            }
            for x in o.values_mut() {
                drop_null_defaults(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(drop_null_defaults),
        _ => {}
    }
}

fn parse_attempt(v: Value, line: usize) -> Result<Attempt, String> {
    let Value::Object(mut o) = v else {
        return Err("a record must be a JSON object".into());
    };
    let uid = match o.get("uid") {
        Some(Value::String(s)) => s.clone(),
        _ => return Err("missing or non-string `uid`".into()),
    };
    let metadata = match o.remove("metadata") {
        Some(Value::Object(m)) => m,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err("`metadata` must be an object".into()),
    };
    let provenance = match o.remove("provenance") {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let mut messages_v = o.remove("messages").unwrap_or(Value::Array(vec![]));
    if messages_v.is_null() {
        messages_v = Value::Array(vec![]);
    }
    drop_null_defaults(&mut messages_v);
    let Value::Array(items) = messages_v else {
        return Err("`messages` must be a list".into());
    };
    let mut messages = Vec::with_capacity(items.len());
    for (i, m) in items.into_iter().enumerate() {
        messages
            .push(serde_json::from_value::<Message>(m).map_err(|e| format!("messages[{i}]: {e}"))?);
    }
    let test_result = match o.remove("test_result") {
        None | Some(Value::Null) => None,
        Some(Value::Object(t)) => Some(Outcome {
            result: t.get("result").and_then(Value::as_bool).unwrap_or(false),
            is_system_error: t
                .get("is_system_error")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            tb: t
                .get("tb")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            lineno: t.get("lineno").and_then(Value::as_i64),
            line_content: t
                .get("line_content")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }),
        Some(_) => return Err("`test_result` must be an object or null".into()),
    };
    let is_system_error = match o.get("is_system_error") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => return Err("`is_system_error` must be a boolean".into()),
    };
    let finish_reason = o
        .get("finish_reason")
        .and_then(Value::as_str)
        .unwrap_or("done")
        .to_string();
    let mut usage_v = o.remove("usage").unwrap_or(Value::Array(vec![]));
    if usage_v.is_null() {
        usage_v = Value::Array(vec![]);
    }
    drop_null_defaults(&mut usage_v);
    let usage: Vec<Usage> = serde_json::from_value(usage_v).map_err(|e| format!("usage: {e}"))?;
    let usage_by_role = match o.remove("usage_by_role") {
        None | Some(Value::Null) => None,
        Some(mut u) => {
            drop_null_defaults(&mut u);
            Some(
                serde_json::from_value::<UsageByRole>(u)
                    .map_err(|e| format!("usage_by_role: {e}"))?,
            )
        }
    };
    let verdict = match o.remove("verdict") {
        None | Some(Value::Null) => None,
        Some(v) => Some(serde_json::from_value::<Verdict>(v).map_err(|e| format!("verdict: {e}"))?),
    };
    let repetition = o
        .get("repetition")
        .and_then(Value::as_u64)
        .or_else(|| metadata.get("repetition").and_then(Value::as_u64))
        .or_else(|| {
            o.get("key")
                .and_then(Value::as_str)
                .and_then(|k| k.rsplit_once("::repeat::"))
                .and_then(|(_, n)| n.parse().ok())
        });
    let domain = metadata
        .get("scenario")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .or_else(|| {
            o.get("test_tags")
                .and_then(|t| t.get("domain"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
        })
        .map(str::to_string);
    Ok(Attempt {
        line,
        uid,
        repetition,
        domain,
        messages,
        test_result,
        is_system_error,
        finish_reason,
        usage,
        usage_by_role,
        verdict,
        metadata,
        provenance,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = parse_run("f.jsonl", "f", "\n{\"uid\":\"a\"}\nnot json\n").unwrap_err();
        assert_eq!(
            e.to_string().split(':').take(2).collect::<Vec<_>>(),
            ["f.jsonl", "3"]
        );
        let e = parse_run("f.jsonl", "f", "[1]").unwrap_err();
        assert!(e.to_string().starts_with("f.jsonl:1: "), "{e}");
        let e = parse_run(
            "f.jsonl",
            "f",
            "{\"uid\":\"a\",\"messages\":[{\"T\":\"Nope\"}]}",
        )
        .unwrap_err();
        assert!(e.to_string().contains("messages[0]"), "{e}");
        let e =
            parse_run("f.jsonl", "f", "{\"uid\":\"a\",\"verdict\":{\"passed\":1}}").unwrap_err();
        assert!(e.to_string().contains("verdict"), "{e}");
        let e = parse_run("f.jsonl", "f", "{\"uid\":5}").unwrap_err();
        assert!(e.to_string().contains("uid"), "{e}");
    }

    #[test]
    fn reads_reference_shape_with_nulls() {
        let line = r#"{"uid":"a.py:t","messages":[{"T":"Text","metadata":null,"role":"user","content":"hi"},{"T":"ToolResponse","name":"x","content":null,"id":"1"}],"test_result":{"result":true,"reward":1.0,"is_system_error":false,"tb":null,"prints":null,"lineno":null,"line_content":null,"metadata":null},"test_context":null,"test_tags":null,"tools":null,"raw_messages":null,"user_llm_history":null,"usage":[{"input_tokens":10,"input_tokens_details":null,"output_tokens":5,"output_tokens_details":{"reasoning_tokens":2},"total_tokens":15}],"metadata":{"scenario":"s","repetition":3,"model":"m1"},"is_system_error":false,"finish_reason":"done"}"#;
        let r = parse_run("f", "stem", line).unwrap();
        let a = &r.attempts[0];
        assert!(a.passed());
        assert_eq!(a.repetition, Some(3));
        assert_eq!(a.domain.as_deref(), Some("s"));
        assert_eq!(r.model, "m1");
        assert_eq!(a.role_usage().agent.output_tokens, 5);
        let r = parse_run("f", "stem", r#"{"uid":"a","key":"a::repeat::7"}"#).unwrap();
        assert_eq!(r.model, "stem");
        assert_eq!(r.attempts[0].repetition, Some(7));
        assert_eq!(r.attempts[0].ref_status(), RefStatus::Error);
    }
}
