//! One attempt as a person wants to read it: outcome, the conversation with each tool call
//! and its result, and what changed in the database against what should have (from
//! `verdict.state[].diff`).

use crate::MetricsError;
use crate::failure::{self, is_empty_content, is_error_content};
use crate::load::{Attempt, Run};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tb_core::Message;

/// Finds the attempt of `uid` with repetition `repeat` (the first of the uid when `None`).
pub fn find_attempt<'a>(
    run: &'a Run,
    uid: &str,
    repeat: Option<u64>,
) -> Result<&'a Attempt, MetricsError> {
    let mut of_uid = run.attempts.iter().filter(|a| a.uid == uid).peekable();
    if of_uid.peek().is_none() {
        return Err(MetricsError::NotFound(format!(
            "{}: no attempt of {uid}",
            run.file
        )));
    }
    match repeat {
        None => of_uid
            .next()
            .ok_or_else(|| MetricsError::NotFound(uid.to_string())),
        Some(r) => {
            let all: Vec<&Attempt> = of_uid.collect();
            all.iter()
                .find(|a| a.repetition == Some(r))
                .copied()
                .ok_or_else(|| {
                    let reps: Vec<String> = all
                        .iter()
                        .map(|a| a.repetition.map_or_else(|| "?".into(), |x| x.to_string()))
                        .collect();
                    MetricsError::NotFound(format!(
                        "{}: {uid} has no repetition {r} (has: {})",
                        run.file,
                        reps.join(", ")
                    ))
                })
        }
    }
}

/// Options of [`render_attempt`].
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowOptions {
    /// Print system prompts and long tool results in full.
    pub full: bool,
}

fn clip(s: &str, max: usize, full: bool) -> String {
    if full || s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!(
        "{head}… [{} more chars; --full shows all]",
        s.chars().count() - max
    )
}

fn indent(s: &str, pad: &str) -> String {
    s.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

fn short(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

/// Renders an attempt as text.
pub fn render_attempt(a: &Attempt, opts: ShowOptions) -> String {
    let mut s = String::new();
    let rep = a.repetition.map_or_else(|| "?".into(), |r| r.to_string());
    let _ = writeln!(s, "{}  repetition {rep}  (line {})", a.uid, a.line);
    let status = match a.ref_status() {
        crate::load::RefStatus::Passed => "PASSED",
        crate::load::RefStatus::Failed => "FAILED",
        crate::load::RefStatus::Error => "ERROR",
    };
    let _ = writeln!(
        s,
        "outcome: {status}   finish_reason: {}   domain: {}",
        a.finish_reason,
        a.domain.as_deref().unwrap_or("-")
    );
    if let Some(err) = a.metadata.get("error") {
        let _ = writeln!(
            s,
            "error: {}",
            err.get("message")
                .and_then(Value::as_str)
                .map_or_else(|| err.to_string(), str::to_string)
        );
    }
    if let Some(f) = failure::analyze(a) {
        let c = f.classes;
        let _ = writeln!(
            s,
            "signature: {}   clean termination: {}   classes: wrong value {}, extra effect {}, missing effect {}, rubric failed {}",
            f.signature.name(),
            if f.clean_termination { "yes" } else { "no" },
            c.wrong_value,
            c.extra_effect,
            c.missing_effect,
            c.rubric_failed
        );
        if !f.unrecovered_tools.is_empty() {
            let _ = writeln!(
                s,
                "unrecovered tool errors or empty lookups: {}",
                f.unrecovered_tools.join(", ")
            );
        }
    }
    let u = a.role_usage();
    let _ = writeln!(
        s,
        "tokens (input/cached/output): agent {}/{}/{}  user {}/{}/{}  judge {}/{}/{}",
        u.agent.input_tokens,
        u.agent.input_tokens_details.cached_tokens,
        u.agent.output_tokens,
        u.user.input_tokens,
        u.user.input_tokens_details.cached_tokens,
        u.user.output_tokens,
        u.judge.input_tokens,
        u.judge.input_tokens_details.cached_tokens,
        u.judge.output_tokens
    );

    s.push_str("\n== Conversation\n");
    let calls = failure::calls(&a.messages);
    let changing: BTreeMap<&str, bool> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.state_changing))
        .collect();
    for m in &a.messages {
        match m {
            Message::Text {
                metadata,
                role,
                content,
            } => {
                let tag = metadata
                    .get("tag")
                    .and_then(Value::as_str)
                    .unwrap_or("text");
                let mut label = role.clone();
                if tag != "text" {
                    label.push(':');
                    label.push_str(tag);
                }
                if metadata
                    .get("is_user_llm")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
                {
                    label.push_str(" (simulated)");
                }
                let max = if role == "system" { 400 } else { 4000 };
                let _ = writeln!(
                    s,
                    "[{label}]\n{}",
                    indent(&clip(content, max, opts.full), "  ")
                );
            }
            Message::ParallelToolCall {
                metadata,
                tool_calls,
            } => {
                let end = metadata
                    .get("is_end_turn_tool")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                for c in tool_calls {
                    let mut tags = Vec::new();
                    if end {
                        tags.push("end turn".to_string());
                    }
                    if changing.get(c.id.as_str()).copied().unwrap_or(false) {
                        tags.push("state-changing".into());
                    }
                    if let Some(e) = c.metadata.get("error").filter(|e| !e.is_null()) {
                        tags.push(format!("argument error: {}", short(e)));
                    }
                    let tags = if tags.is_empty() {
                        String::new()
                    } else {
                        format!("  [{}]", tags.join("; "))
                    };
                    let _ = writeln!(s, "  -> {}({})  id {}{tags}", c.name, c.arguments, c.id);
                }
            }
            Message::ToolResponse {
                name, content, id, ..
            } => {
                let flag = if is_error_content(content) {
                    "  [ERROR]"
                } else if is_empty_content(content) {
                    "  [EMPTY]"
                } else {
                    ""
                };
                let _ = writeln!(
                    s,
                    "  <- {name} id {id}{flag}\n{}",
                    indent(&clip(content, 1500, opts.full), "     ")
                );
            }
        }
    }

    s.push_str("\n== Database: result against golden\n");
    match &a.verdict {
        None => s.push_str("  (no verdict in this record: the state diff is not available)\n"),
        Some(v) => {
            for sv in &v.state {
                if sv.passed {
                    let _ = writeln!(
                        s,
                        "  {}: matches golden (hash {})",
                        sv.server,
                        short_hash(&sv.result_hash)
                    );
                    continue;
                }
                let _ = writeln!(
                    s,
                    "  {}: differs (result {} vs golden {})",
                    sv.server,
                    short_hash(&sv.result_hash),
                    short_hash(&sv.golden_hash)
                );
                s.push_str(&render_diff(&sv.diff));
            }
            if !v.rubrics.is_empty() {
                s.push_str("\n== Rubrics\n");
                for r in &v.rubrics {
                    let _ = writeln!(
                        s,
                        "  [{}] {}{}",
                        if r.passed { "yes" } else { "no" },
                        r.rubric,
                        if r.answer.is_empty() {
                            String::new()
                        } else {
                            format!("  (judge: {})", r.answer)
                        }
                    );
                }
            }
        }
    }
    if let Some(t) = &a.test_result
        && !t.result
        && !t.tb.is_empty()
    {
        let _ = writeln!(
            s,
            "\n== Test message\n{}",
            indent(&clip(&t.tb, 3000, opts.full), "  ")
        );
    }
    s
}

fn short_hash(h: &str) -> &str {
    h.get(..12).unwrap_or(h)
}

/// A state-diff entry's parts: its path (`root` when none), its kind (`type`), and the path
/// split into the table and the rest (`[i].field`, `.field` or empty).
pub struct DiffEntry<'a> {
    /// The path (`orders[0].status`; `root` when the entry has none).
    pub path: &'a str,
    /// What differs (`value mismatch`, `length mismatch`, ...).
    pub kind: &'a str,
    /// The path up to the first `[` or `.`.
    pub table: &'a str,
    /// The path after the table.
    pub rest: &'a str,
}

impl<'a> DiffEntry<'a> {
    /// The parts of the entry `e`.
    pub fn of(e: &'a Value) -> Self {
        let path = e.get("path").and_then(Value::as_str).unwrap_or("root");
        let (table, rest) = match path.find(['[', '.']) {
            Some(i) => (&path[..i], &path[i..]),
            None => (path, ""),
        };
        DiffEntry {
            path,
            kind: e.get("type").and_then(Value::as_str).unwrap_or(""),
            table,
            rest,
        }
    }
}

/// Groups diff entries by table and row: `table`, then `[i]` with its fields.
pub fn render_diff(diff: &[Value]) -> String {
    let mut by_row: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for e in diff {
        let d = DiffEntry::of(e);
        let (kind, table, rest) = (d.kind, d.table, d.rest);
        let (row, field) = if let Some(r) = rest.strip_prefix('[') {
            match r.find(']') {
                Some(j) => (
                    format!("row [{}]", &r[..j]),
                    r[j + 1..].trim_start_matches('.').to_string(),
                ),
                None => (String::new(), rest.to_string()),
            }
        } else {
            (String::new(), rest.trim_start_matches('.').to_string())
        };
        let what = match kind {
            "value mismatch" => format!(
                "result {}, should be {}",
                short(e.get("result").unwrap_or(&Value::Null)),
                short(e.get("golden").unwrap_or(&Value::Null))
            ),
            "type mismatch" => format!(
                "type {}, should be {}",
                short(e.get("result").unwrap_or(&Value::Null)),
                short(e.get("golden").unwrap_or(&Value::Null))
            ),
            "length mismatch" => format!(
                "{} rows/items, should be {}",
                short(e.get("result").unwrap_or(&Value::Null)),
                short(e.get("golden").unwrap_or(&Value::Null))
            ),
            k if k.starts_with("present in result") => {
                "present in result, not in golden (extra)".into()
            }
            k if k.starts_with("missing in result") => {
                "missing in result, present in golden (missing)".into()
            }
            other => other.to_string(),
        };
        let line = if field.is_empty() {
            what
        } else {
            format!("{field}: {what}")
        };
        let key = (table.to_string(), row);
        if !by_row.contains_key(&key) {
            order.push(key.clone());
        }
        by_row.entry(key).or_default().push(line);
    }
    let mut s = String::new();
    let mut last_table = None;
    for key in order {
        if last_table.as_ref() != Some(&key.0) {
            let _ = writeln!(s, "    table {}", key.0);
            last_table = Some(key.0.clone());
        }
        let lines = &by_row[&key];
        if key.1.is_empty() {
            for l in lines {
                let _ = writeln!(s, "      {l}");
            }
        } else {
            let _ = writeln!(s, "      {}", key.1);
            for l in lines {
                let _ = writeln!(s, "        {l}");
            }
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_run;
    use serde_json::json;

    #[test]
    fn shows_calls_results_and_diff() {
        let rec = json!({
            "uid": "f.py:t", "repetition": 1, "key": "f.py:t::repeat::1",
            "messages": [
                {"T": "Text", "metadata": {}, "role": "system", "content": "be helpful"},
                {"T": "Text", "metadata": {}, "role": "user", "content": "cancel O1"},
                {"T": "ParallelToolCall", "metadata": {}, "tool_calls": [{"T": "ToolCall", "metadata": {}, "name": "cancel_order", "arguments": {"order_id": "O1"}, "id": "c1"}]},
                {"T": "ToolResponse", "metadata": {}, "name": "cancel_order", "content": "{\"error\": \"no such order\"}", "id": "c1"},
                {"T": "Text", "metadata": {}, "role": "assistant", "content": "done <DONE>"}
            ],
            "test_result": {"result": false, "reward": 0.0, "tb": "AssertionError: Database state mismatch"},
            "metadata": {"scenario": "retail"}, "is_system_error": false, "finish_reason": "done",
            "verdict": {"passed": false, "state": [{"server": "retail", "result_hash": "aaaaaaaaaaaaaaaa", "golden_hash": "bbbbbbbbbbbbbbbb", "passed": false,
                "diff": [{"path": "orders[0].status", "type": "value mismatch", "result": "open", "golden": "cancelled"}, {"path": "refunds[2]", "type": "missing in result (present in golden)"}]}], "rubrics": []}
        });
        let run = parse_run("f.jsonl", "f", &rec.to_string()).unwrap();
        let a = find_attempt(&run, "f.py:t", Some(1)).unwrap();
        let out = render_attempt(a, ShowOptions::default());
        assert!(
            out.contains("-> cancel_order({\"order_id\":\"O1\"})  id c1  [state-changing]"),
            "{out}"
        );
        assert!(out.contains("<- cancel_order id c1  [ERROR]"), "{out}");
        assert!(
            out.contains("status: result \"open\", should be \"cancelled\""),
            "{out}"
        );
        assert!(
            out.contains("missing in result, present in golden"),
            "{out}"
        );
        assert!(out.contains("signature: tool_usage"), "{out}");
        assert!(
            find_attempt(&run, "f.py:t", Some(4))
                .unwrap_err()
                .to_string()
                .contains("has: 1")
        );
        assert!(find_attempt(&run, "nope", None).is_err());
    }
}
