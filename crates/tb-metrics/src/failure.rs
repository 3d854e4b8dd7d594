//! Failure analysis of one attempt: failure classes from the state diff, a clean-termination
//! flag, and one signature from a fixed priority list. Deterministic: the same record always
//! gets the same answer. The rules (also in `docs/metrics.md`):
//!
//! **Tool calls.** Each `ToolCall` is paired with the `ToolResponse` of the same id. Calls in
//! a turn marked `is_end_turn_tool` are left out. A call is an *error* when its response
//! content parses as a JSON object with an `"error"` key, or the call carries
//! `metadata.error` (its arguments could not be parsed). A call is an *empty lookup* when its
//! response parses as `null`, `""`, `[]`, `{}`, or an object with at least one empty list
//! whose every value is an empty list, `null` or the number 0. A call is *state-changing*
//! when its metadata says so (`state_changing: true|false` on the call or the response);
//! otherwise when the string in its `action` or `operation` argument (if any), else its name,
//! split on `_`, contains one of [`WRITE_VERBS`].
//!
//! **Classes** (overlapping; from every failing `verdict.state[].diff`; entry paths are
//! `table[i].field…` over rows sorted by id):
//! - *missing effect*: a row or field present in golden but not in the result
//!   (`missing in result (present in golden)`), or the whole server state missing;
//! - *extra effect*: a row or field present in the result but not in golden
//!   (`present in result (missing in golden)`), or a result state where golden has none;
//! - *wrong value*: a value, type or null mismatch of a field on a row both states have at
//!   the same position. In a table whose row counts differ, rows from the first position
//!   whose `id` differs onwards are shifted by the extra or missing rows, and their field
//!   mismatches are not counted (the row-count difference already is). In a table whose row
//!   counts are equal, a row whose `id` differs means both runs created (or removed) a row
//!   but not the same one: wrong value;
//! - *rubric failed*: a rubric the judge answered no.
//!
//! When the attempt made no state-changing call, its final state is the initial state, so
//! every difference is an effect of the golden calls it did not make: all findings count as
//! *missing effect*. Otherwise the classes compare the result with golden only (the records
//! carry no initial state): a *wrong value* may be a field the attempt set wrongly, or one
//! golden set and the attempt left alone.
//!
//! Records without a verdict (the reference's files) have no classes; their state is assumed
//! wrong when the test failed.
//!
//! **Clean termination**: `finish_reason` is `done` (the agent ended with `<DONE>`), at least
//! one state-changing call was made, and the last call was not an error.
//!
//! **Signature**, the first that holds:
//! 1. `system_error`: a decode error, a missing test result, or a test error (operational,
//!    not the model's failure; reported apart);
//! 2. `tool_usage`: a call was an error or an empty lookup and no later call to the same
//!    tool (same name and same action) returned a non-error, non-empty result;
//! 3. `wrong_state_update`: a state-changing call was made and the state differs from golden;
//! 4. `incomplete_user_resolution`: the episode did not end by the agent (`finish_reason`
//!    other than `done` and `end_turn_tool`: limits, timeout, the user ended, no user, agent
//!    error), or the state matched golden but a rubric failed;
//! 5. `no_state_change`: no state-changing call was made;
//! 6. `other`.

use crate::load::Attempt;
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use tb_core::Message;

/// Verbs that mark a tool call as state-changing (see the module rules).
pub const WRITE_VERBS: [&str; 56] = [
    "activate",
    "add",
    "allocate",
    "apply",
    "approve",
    "assign",
    "block",
    "book",
    "cancel",
    "charge",
    "close",
    "create",
    "deactivate",
    "delete",
    "dispute",
    "enroll",
    "escalate",
    "execute",
    "extend",
    "file",
    "force",
    "freeze",
    "generate",
    "grant",
    "insert",
    "invalidate",
    "issue",
    "link",
    "lock",
    "modify",
    "override",
    "pay",
    "place",
    "post",
    "process",
    "provision",
    "refund",
    "register",
    "reinstate",
    "reject",
    "remove",
    "renew",
    "reschedule",
    "reserve",
    "reset",
    "reship",
    "retire",
    "revoke",
    "schedule",
    "send",
    "set",
    "submit",
    "suspend",
    "transfer",
    "unlock",
    "update",
];

/// One tool call with its response.
#[derive(Debug, Clone, PartialEq)]
pub struct CallView {
    /// Tool name.
    pub name: String,
    /// Arguments as called.
    pub arguments: Value,
    /// Call id.
    pub id: String,
    /// The response text, if one was recorded.
    pub response: Option<String>,
    /// The call failed (see module rules).
    pub error: bool,
    /// The call returned an empty lookup.
    pub empty: bool,
    /// The call changes state (see module rules).
    pub state_changing: bool,
    /// Index of the `ParallelToolCall` message in the conversation.
    pub message_index: usize,
}

impl CallView {
    /// `name` plus the `action`/`operation` argument, which tells calls of one tool apart.
    pub fn tool_key(&self) -> String {
        match action_of(&self.arguments) {
            Some(a) => format!("{}#{a}", self.name),
            None => self.name.clone(),
        }
    }
}

fn action_of(args: &Value) -> Option<&str> {
    args.get("action")
        .or_else(|| args.get("operation"))
        .and_then(Value::as_str)
}

/// Whether a tool response is an error: JSON object with an `"error"` key.
pub fn is_error_content(content: &str) -> bool {
    matches!(serde_json::from_str::<Value>(content), Ok(Value::Object(o)) if o.contains_key("error"))
}

/// Whether a tool response is an empty lookup (see module rules).
pub fn is_empty_content(content: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(content) else {
        return content.trim().is_empty();
    };
    let empty_list = |x: &Value| matches!(x, Value::Array(a) if a.is_empty());
    match &v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => {
            o.is_empty()
                || (o.values().any(empty_list)
                    && o.values()
                        .all(|x| empty_list(x) || x.is_null() || x.as_f64() == Some(0.0)))
        }
        _ => false,
    }
}

/// Whether a call changes state by name and arguments (see module rules).
pub fn is_state_changing(name: &str, args: &Value) -> bool {
    let verb = action_of(args).unwrap_or(name);
    verb.split(['_', '-', '.'])
        .any(|t| WRITE_VERBS.contains(&t.to_ascii_lowercase().as_str()))
}

/// The tool calls of a conversation, paired with their responses, end-turn calls left out.
pub fn calls(messages: &[Message]) -> Vec<CallView> {
    let mut responses: HashMap<&str, (&str, &serde_json::Map<String, Value>)> = HashMap::new();
    for m in messages {
        if let Message::ToolResponse {
            id,
            content,
            metadata,
            ..
        } = m
        {
            responses
                .entry(id.as_str())
                .or_insert((content.as_str(), metadata));
        }
    }
    let mut out = Vec::new();
    for (mi, m) in messages.iter().enumerate() {
        let Message::ParallelToolCall {
            metadata,
            tool_calls,
        } = m
        else {
            continue;
        };
        if metadata
            .get("is_end_turn_tool")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            continue;
        }
        for c in tool_calls {
            if c.metadata
                .get("is_end_turn_tool")
                .and_then(Value::as_bool)
                .unwrap_or(false)
            {
                continue;
            }
            let resp = responses.get(c.id.as_str());
            let content = resp.map(|r| r.0);
            let flag = c
                .metadata
                .get("state_changing")
                .and_then(Value::as_bool)
                .or_else(|| {
                    resp.and_then(|r| r.1.get("state_changing"))
                        .and_then(Value::as_bool)
                });
            let arg_error = c.metadata.get("error").is_some_and(|e| !e.is_null());
            out.push(CallView {
                name: c.name.clone(),
                arguments: c.arguments.clone(),
                id: c.id.clone(),
                response: content.map(str::to_string),
                error: arg_error || content.is_some_and(is_error_content),
                empty: content.is_some_and(|c| !is_error_content(c) && is_empty_content(c)),
                state_changing: flag.unwrap_or_else(|| is_state_changing(&c.name, &c.arguments)),
                message_index: mi,
            });
        }
    }
    out
}

/// Failure classes of an attempt: how many diff findings of each kind.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Classes {
    /// Fields whose value differs on a row both states have.
    pub wrong_value: u64,
    /// Rows or fields in the result that golden lacks.
    pub extra_effect: u64,
    /// Rows or fields in golden that the result lacks.
    pub missing_effect: u64,
    /// Rubrics answered no.
    pub rubric_failed: u64,
}

impl Classes {
    /// Counts one diff entry: a missing effect, else an extra effect, else (when `wrong`) a
    /// wrong value.
    fn count(&mut self, missing: bool, extra: bool, wrong: bool) {
        if missing {
            self.missing_effect += 1;
        } else if extra {
            self.extra_effect += 1;
        } else if wrong {
            self.wrong_value += 1;
        }
    }
}

/// One path segment of a diff entry.
#[derive(Debug, Clone, PartialEq)]
enum Seg {
    Key(String),
    Index(usize),
}

fn parse_path(p: &str) -> Vec<Seg> {
    let mut out = Vec::new();
    if p == "root" {
        return out;
    }
    for part in p.split('.') {
        let mut rest = part;
        if let Some(b) = rest.find('[') {
            if b > 0 {
                out.push(Seg::Key(rest[..b].to_string()));
            }
            rest = &rest[b..];
            while let Some(stripped) = rest.strip_prefix('[') {
                let Some(e) = stripped.find(']') else { break };
                match stripped[..e].parse() {
                    Ok(i) => out.push(Seg::Index(i)),
                    Err(_) => out.push(Seg::Key(stripped[..e].to_string())),
                }
                rest = &stripped[e + 1..];
            }
            if !rest.is_empty() {
                out.push(Seg::Key(rest.to_string()));
            }
        } else {
            out.push(Seg::Key(rest.to_string()));
        }
    }
    out
}

/// Classes from one server's diff (the reference's deep-diff entries).
pub fn classify_diff(diff: &[Value]) -> Classes {
    let mut c = Classes::default();
    let entries: Vec<(Vec<Seg>, &str, &Value)> = diff
        .iter()
        .map(|e| {
            (
                parse_path(e.get("path").and_then(Value::as_str).unwrap_or("root")),
                e.get("type").and_then(Value::as_str).unwrap_or(""),
                e,
            )
        })
        .collect();
    // Tables whose row counts differ, and the first row whose id differs per table.
    let mut len_mismatch: HashMap<&str, bool> = HashMap::new();
    let mut first_id_shift: HashMap<&str, usize> = HashMap::new();
    for (segs, kind, _) in &entries {
        match segs.as_slice() {
            [Seg::Key(t)] if *kind == "length mismatch" => {
                len_mismatch.insert(t, true);
            }
            [Seg::Key(t), Seg::Index(i), Seg::Key(f)] if f == "id" => {
                let e = first_id_shift.entry(t).or_insert(*i);
                *e = (*e).min(*i);
            }
            _ => {}
        }
    }
    for (segs, kind, _) in &entries {
        let missing = kind.starts_with("missing in result");
        let extra = kind.starts_with("present in result");
        match segs.as_slice() {
            [] => c.count(
                *kind == "result is None, golden is not" || missing,
                *kind == "result is not None, golden is None" || extra,
                true,
            ),
            // Table level: a whole table, or its row-count difference (the rows are counted).
            [Seg::Key(_)] => c.count(missing, extra, *kind != "length mismatch"),
            // A row.
            [Seg::Key(_), Seg::Index(_)] => c.count(missing, extra, true),
            // A field of a row, or deeper.
            [Seg::Key(t), Seg::Index(i), rest @ ..] => {
                let shifted = len_mismatch.get(t.as_str()).copied().unwrap_or(false)
                    && first_id_shift.get(t.as_str()).is_some_and(|f| i >= f);
                if shifted {
                    continue;
                }
                // A list field's length: its element entries are counted.
                let list_length = *kind == "length mismatch" && !rest.is_empty();
                c.count(missing, extra, !list_length);
            }
            _ => c.count(missing, extra, *kind != "length mismatch"),
        }
    }
    c
}

/// One signature per failed attempt (see the module rules for the order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Signature {
    /// Operational error, not the model's.
    SystemError,
    /// A tool error or empty lookup not recovered from.
    ToolUsage,
    /// State-changing calls made, state wrong.
    WrongStateUpdate,
    /// The episode did not end by the agent, or the reply missed a rubric.
    IncompleteUserResolution,
    /// No state-changing call.
    NoStateChange,
    /// None of the above.
    Other,
}

impl Signature {
    /// All signatures in priority order.
    pub const ALL: [Signature; 6] = [
        Signature::SystemError,
        Signature::ToolUsage,
        Signature::WrongStateUpdate,
        Signature::IncompleteUserResolution,
        Signature::NoStateChange,
        Signature::Other,
    ];

    /// The names of the signatures of the model's failures (all but `system_error`, the
    /// first), in priority order.
    pub fn model_failure_names() -> [&'static str; 5] {
        let [_, rest @ ..] = Signature::ALL;
        rest.map(Signature::name)
    }

    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Signature::SystemError => "system_error",
            Signature::ToolUsage => "tool_usage",
            Signature::WrongStateUpdate => "wrong_state_update",
            Signature::IncompleteUserResolution => "incomplete_user_resolution",
            Signature::NoStateChange => "no_state_change",
            Signature::Other => "other",
        }
    }
}

/// The analysis of one failed attempt.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureAnalysis {
    /// Diff findings by class.
    pub classes: Classes,
    /// See the module rules.
    pub clean_termination: bool,
    /// The signature.
    pub signature: Signature,
    /// The calls behind a `tool_usage` signature (`name` or `name#action`).
    pub unrecovered_tools: Vec<String>,
}

/// Analyses an attempt; `None` when it passed.
pub fn analyze(a: &Attempt) -> Option<FailureAnalysis> {
    if a.passed() {
        return None;
    }
    let calls = calls(&a.messages);
    let mut classes = Classes::default();
    let mut state_known_ok = false;
    let changed = calls.iter().any(|c| c.state_changing);
    if let Some(v) = &a.verdict {
        for s in v.state.iter().filter(|s| !s.passed) {
            let c = classify_diff(&s.diff);
            if changed {
                classes.wrong_value += c.wrong_value;
                classes.extra_effect += c.extra_effect;
                classes.missing_effect += c.missing_effect;
            } else {
                // Nothing changed: the result is the initial state, so every difference is
                // an effect of the golden calls that the attempt did not make.
                classes.missing_effect += c.wrong_value + c.extra_effect + c.missing_effect;
            }
        }
        classes.rubric_failed = v.rubrics.iter().filter(|r| !r.passed).count() as u64;
        state_known_ok = v.state.iter().all(|s| s.passed);
    }
    let last_ok = calls.last().is_none_or(|c| !c.error);
    let clean_termination = a.finish_reason == "done" && changed && last_ok;
    let mut unrecovered = Vec::new();
    for (i, c) in calls.iter().enumerate() {
        if !(c.error || c.empty) {
            continue;
        }
        let key = c.tool_key();
        let recovered = calls[i + 1..]
            .iter()
            .any(|d| d.tool_key() == key && !d.error && !d.empty && d.response.is_some());
        if !recovered && !unrecovered.contains(&key) {
            unrecovered.push(key);
        }
    }
    let ended_by_agent = matches!(a.finish_reason.as_str(), "done" | "end_turn_tool");
    let signature = if a.is_system_error || a.test_result.as_ref().is_none_or(|t| t.is_system_error)
    {
        Signature::SystemError
    } else if !unrecovered.is_empty() {
        Signature::ToolUsage
    } else if changed && !state_known_ok {
        Signature::WrongStateUpdate
    } else if !ended_by_agent || (state_known_ok && classes.rubric_failed > 0) {
        Signature::IncompleteUserResolution
    } else if !changed {
        Signature::NoStateChange
    } else {
        Signature::Other
    };
    Some(FailureAnalysis {
        classes,
        clean_termination,
        signature,
        unrecovered_tools: if signature == Signature::ToolUsage {
            unrecovered
        } else {
            Vec::new()
        },
    })
}

/// Shares of failure classes and signatures over a set of attempts.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FailureSummary {
    /// Attempts analysed.
    pub attempts: u64,
    /// Failed attempts (reference rule; system errors included).
    pub failed: u64,
    /// Failed attempts that are not system errors (the denominator of the shares below).
    pub model_failures: u64,
    /// Share of model failures with each class present.
    pub class_share: BTreeMap<String, f64>,
    /// Share of model failures that terminated cleanly.
    pub clean_termination_share: f64,
    /// Count per signature (system errors included), in priority order.
    pub signature_counts: Vec<(String, u64)>,
    /// Share of model failures per signature (system errors excluded).
    pub signature_share: BTreeMap<String, f64>,
}

/// Summarizes the failures of attempts.
pub fn summarize_failures<'a>(attempts: impl IntoIterator<Item = &'a Attempt>) -> FailureSummary {
    let mut s = FailureSummary::default();
    let mut class_n = [0u64; 4];
    let mut clean = 0u64;
    let mut sig: BTreeMap<Signature, u64> = BTreeMap::new();
    for a in attempts {
        s.attempts += 1;
        let Some(f) = analyze(a) else { continue };
        s.failed += 1;
        *sig.entry(f.signature).or_default() += 1;
        if f.signature == Signature::SystemError {
            continue;
        }
        s.model_failures += 1;
        let c = f.classes;
        for (i, v) in [
            c.wrong_value,
            c.extra_effect,
            c.missing_effect,
            c.rubric_failed,
        ]
        .iter()
        .enumerate()
        {
            if *v > 0 {
                class_n[i] += 1;
            }
        }
        if f.clean_termination {
            clean += 1;
        }
    }
    let d = s.model_failures.max(1) as f64;
    for (i, name) in [
        "wrong_value",
        "extra_effect",
        "missing_effect",
        "rubric_failed",
    ]
    .iter()
    .enumerate()
    {
        s.class_share
            .insert(name.to_string(), class_n[i] as f64 / d);
    }
    s.clean_termination_share = clean as f64 / d;
    for g in Signature::ALL {
        let n = sig.get(&g).copied().unwrap_or(0);
        s.signature_counts.push((g.name().to_string(), n));
        if g != Signature::SystemError {
            s.signature_share.insert(g.name().to_string(), n as f64 / d);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::Outcome;
    use serde_json::{Map, json};
    use tb_core::{RubricVerdict, StateVerdict, ToolCall, Verdict};

    fn call(id: &str, name: &str, args: Value) -> Message {
        Message::ParallelToolCall {
            metadata: Map::new(),
            tool_calls: vec![ToolCall {
                metadata: Map::new(),
                name: name.into(),
                arguments: args,
                id: id.into(),
            }],
        }
    }
    fn resp(id: &str, name: &str, content: &str) -> Message {
        Message::ToolResponse {
            metadata: Map::new(),
            name: name.into(),
            content: content.into(),
            id: id.into(),
        }
    }
    fn attempt(messages: Vec<Message>, finish: &str, verdict: Option<Verdict>) -> Attempt {
        let passed = verdict.as_ref().is_some_and(|v| v.passed);
        Attempt {
            line: 1,
            uid: "t.py:a".into(),
            repetition: Some(0),
            domain: Some("d".into()),
            messages,
            test_result: Some(Outcome {
                result: passed,
                ..Default::default()
            }),
            is_system_error: false,
            finish_reason: finish.into(),
            usage: vec![],
            usage_by_role: None,
            verdict,
            metadata: Map::new(),
            provenance: Map::new(),
        }
    }
    fn state(diff: Vec<Value>) -> Verdict {
        Verdict {
            passed: diff.is_empty(),
            state: vec![StateVerdict {
                server: "s".into(),
                result_hash: "r".into(),
                golden_hash: "g".into(),
                passed: diff.is_empty(),
                diff,
            }],
            rubrics: vec![],
        }
    }

    /// Each call followed by its response: (id, tool, arguments, response text).
    fn exchanges(calls: &[(&str, &str, Value, &str)]) -> Vec<Message> {
        calls
            .iter()
            .flat_map(|(id, tool, args, reply)| {
                [call(id, tool, args.clone()), resp(id, tool, reply)]
            })
            .collect()
    }

    /// A failed attempt ended with `finish` whose state differs from golden by `entry`.
    fn failing(messages: Vec<Message>, finish: &str, entry: Value) -> Attempt {
        attempt(messages, finish, Some(state(vec![entry])))
    }

    /// A diff entry: a list's length differs.
    fn length(path: &str, result: u64, golden: u64) -> Value {
        json!({"path": path, "type": "length mismatch", "result": result, "golden": golden})
    }

    /// A diff entry: a row or field only the result has.
    fn extra(path: &str) -> Value {
        json!({"path": path, "type": "present in result (missing in golden)"})
    }

    /// A diff entry: a row or field only golden has.
    fn missing(path: &str) -> Value {
        json!({"path": path, "type": "missing in result (present in golden)"})
    }

    /// A diff entry: a value differs.
    fn changed(path: &str, result: Value, golden: Value) -> Value {
        json!({"path": path, "type": "value mismatch", "result": result, "golden": golden})
    }

    /// Classes with the three effect counts, no rubric failed.
    fn effects(wrong_value: u64, extra_effect: u64, missing_effect: u64) -> Classes {
        Classes {
            wrong_value,
            extra_effect,
            missing_effect,
            rubric_failed: 0,
        }
    }

    #[test]
    fn classes_from_diffs() {
        let cases = [
            // Wrong value on a row both have.
            (
                vec![changed("orders[0].status", json!("open"), json!("closed"))],
                effects(1, 0, 0),
            ),
            // Extra row (appended) and extra field.
            (
                vec![
                    length("refunds", 2, 1),
                    extra("refunds[1]"),
                    extra("orders[0].note"),
                ],
                effects(0, 2, 0),
            ),
            // Missing row.
            (
                vec![length("refunds", 0, 1), missing("refunds[0]")],
                effects(0, 0, 1),
            ),
            // An extra row sorted in the middle shifts the rows after it: only the extra row
            // counts.
            (
                vec![
                    length("t", 3, 2),
                    changed("t[0].x", json!(1), json!(2)),
                    changed("t[1].id", json!("b"), json!("c")),
                    changed("t[1].x", json!(5), json!(6)),
                    extra("t[2]"),
                ],
                effects(1, 1, 0),
            ),
            // Nested list field.
            (
                vec![length("t[0].tags", 1, 2), missing("t[0].tags[1]")],
                effects(0, 0, 1),
            ),
        ];
        for (diff, want) in cases {
            assert_eq!(classify_diff(&diff), want, "{diff:?}");
        }
        // Same row count, different id: both created a row, not the same one.
        let c = classify_diff(&[
            json!({"path": "t[1].id", "type": "value mismatch", "result": "b", "golden": "c"}),
        ]);
        assert_eq!(c.wrong_value, 1);
        // Whole state missing.
        assert_eq!(
            classify_diff(&[json!({"path": "root", "type": "result is None, golden is not"})])
                .missing_effect,
            1
        );
        assert_eq!(
            parse_path("a[2][3].b.c"),
            vec![
                Seg::Key("a".into()),
                Seg::Index(2),
                Seg::Index(3),
                Seg::Key("b".into()),
                Seg::Key("c".into())
            ]
        );
    }

    #[test]
    fn call_rules() {
        assert!(is_error_content(r#"{"error": "boom", "tool": "x"}"#));
        assert!(!is_error_content(r#"{"result": "ok"}"#));
        assert!(!is_error_content("plain text"));
        for e in [
            "[]",
            "{}",
            "null",
            "\"\"",
            r#"{"results": [], "count": 0}"#,
            "  ",
        ] {
            assert!(is_empty_content(e), "{e}");
        }
        for e in [
            r#"{"balance": 0}"#,
            r"[1]",
            r#"{"items": [], "next": "x"}"#,
            "text",
        ] {
            assert!(!is_empty_content(e), "{e}");
        }
        assert!(is_state_changing("cancel_order", &json!({})));
        assert!(is_state_changing("zendesk_update_item", &json!({})));
        assert!(!is_state_changing("get_order", &json!({})));
        assert!(!is_state_changing("lookup_validate_vin", &json!({})));
        assert!(is_state_changing(
            "asset_management_api",
            &json!({"action": "assign_device"})
        ));
        assert!(!is_state_changing(
            "asset_management_api",
            &json!({"action": "get_device_details"})
        ));
        assert!(is_state_changing(
            "okta_security_api_execute_action",
            &json!({"operation": "unlock_account"})
        ));
        // Metadata overrides the name rule; end-turn calls are skipped.
        let mut meta = Map::new();
        meta.insert("state_changing".into(), json!(true));
        let mut end = Map::new();
        end.insert("is_end_turn_tool".into(), json!(true));
        let msgs = vec![
            Message::ParallelToolCall {
                metadata: Map::new(),
                tool_calls: vec![ToolCall {
                    metadata: meta,
                    name: "get_x".into(),
                    arguments: json!({}),
                    id: "1".into(),
                }],
            },
            resp("1", "get_x", "{}"),
            Message::ParallelToolCall {
                metadata: end,
                tool_calls: vec![ToolCall {
                    metadata: Map::new(),
                    name: "end_turn".into(),
                    arguments: json!({}),
                    id: "2".into(),
                }],
            },
        ];
        let cs = calls(&msgs);
        assert_eq!(cs.len(), 1);
        assert!(cs[0].state_changing && cs[0].empty && !cs[0].error);
    }

    #[test]
    fn signature_tool_usage_unless_recovered() {
        let a = failing(
            exchanges(&[(
                "1",
                "get_order",
                json!({"id": 1}),
                r#"{"error": "not found"}"#,
            )]),
            "done",
            json!({"path": "t[0].x", "type": "value mismatch"}),
        );
        let f = analyze(&a).unwrap();
        assert_eq!(f.signature, Signature::ToolUsage);
        assert_eq!(f.unrecovered_tools, ["get_order"]);
        assert!(!f.clean_termination);
        // Recovered: the same tool later answers -> no tool_usage; a write was made -> wrong state update.
        let a = failing(
            exchanges(&[
                ("1", "get_order", json!({"id": 1}), "[]"),
                ("2", "get_order", json!({"id": 2}), r#"{"id": 2}"#),
                ("3", "cancel_order", json!({"id": 2}), r#"{"ok": true}"#),
            ]),
            "done",
            json!({"path": "t[0].x", "type": "value mismatch"}),
        );
        let f = analyze(&a).unwrap();
        assert_eq!(f.signature, Signature::WrongStateUpdate);
        assert_eq!(f.classes.wrong_value, 1);
        assert!(f.clean_termination);
    }

    #[test]
    fn signature_incomplete_and_no_state_change_and_others() {
        // Turn limit hit after reading only.
        let a = failing(
            exchanges(&[("1", "get_order", json!({}), r#"{"id":1}"#)]),
            "agent_limit",
            missing("t[0]"),
        );
        let f = analyze(&a).unwrap();
        assert_eq!(f.signature, Signature::IncompleteUserResolution);
        assert_eq!(f.classes.missing_effect, 1);
        // State right, rubric failed.
        let mut v = state(vec![]);
        v.passed = false;
        v.rubrics = vec![RubricVerdict {
            rubric: "says sorry".into(),
            passed: false,
            answer: "No".into(),
        }];
        let a = attempt(
            exchanges(&[("1", "update_order", json!({}), "{\"ok\":1}")]),
            "done",
            Some(v),
        );
        let f = analyze(&a).unwrap();
        assert_eq!(f.signature, Signature::IncompleteUserResolution);
        assert_eq!(f.classes.rubric_failed, 1);
        // Nothing done, ended with DONE.
        let a = failing(
            vec![Message::text("assistant", "ok <DONE>")],
            "done",
            missing("t[0]"),
        );
        let f = analyze(&a).unwrap();
        assert_eq!(f.signature, Signature::NoStateChange);
        assert!(!f.clean_termination);
        // Nothing changed: a field golden set is a missing effect, not a wrong value.
        let a = failing(
            vec![Message::text("assistant", "ok <DONE>")],
            "done",
            json!({"path": "t[0].x", "type": "value mismatch"}),
        );
        assert_eq!(
            analyze(&a).unwrap().classes,
            Classes {
                missing_effect: 1,
                ..Default::default()
            }
        );
        // System error.
        let mut a = attempt(vec![], "done", None);
        a.is_system_error = true;
        a.test_result = None;
        assert_eq!(analyze(&a).unwrap().signature, Signature::SystemError);
        // Passed: nothing to analyse.
        let a = attempt(vec![], "done", Some(state(vec![])));
        assert!(analyze(&a).is_none());
        // Reference file (no verdict), a write made: state assumed wrong.
        let a = attempt(
            exchanges(&[("1", "create_rma", json!({}), "{\"id\":1}")]),
            "done",
            None,
        );
        assert_eq!(analyze(&a).unwrap().signature, Signature::WrongStateUpdate);
        // Other: a write, state right, no rubric, ended by agent, but the test failed anyway.
        let mut v = state(vec![]);
        v.passed = false;
        let a = attempt(
            exchanges(&[("1", "create_rma", json!({}), "{\"id\":1}")]),
            "done",
            Some(v),
        );
        assert_eq!(analyze(&a).unwrap().signature, Signature::Other);
    }

    #[test]
    fn failure_summary_shares() {
        let fail = attempt(
            vec![],
            "done",
            Some(state(vec![
                json!({"path": "t[0]", "type": "missing in result (present in golden)"}),
            ])),
        );
        let ok = attempt(vec![], "done", Some(state(vec![])));
        let mut sys = attempt(vec![], "done", None);
        sys.is_system_error = true;
        let s = summarize_failures([&fail, &ok, &sys, &fail]);
        assert_eq!((s.attempts, s.failed, s.model_failures), (4, 3, 2));
        assert_eq!(s.class_share["missing_effect"], 1.0);
        assert_eq!(s.signature_share["no_state_change"], 1.0);
        assert_eq!(s.signature_counts[0], ("system_error".to_string(), 1));
    }
}
