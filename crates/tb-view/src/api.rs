//! The JSON the pages read (and anyone may): `/api/state`, `/api/runs`,
//! `/api/runs/{run}/tasks`, `/api/runs/{run}/attempts/{line}`, `/api/compare/{a}/{b}`.

use crate::model::{RunView, Snapshot};
use serde_json::{Value, json};

/// `/api/state`: the generation (changes whenever a page would) and each file's progress.
pub fn state(s: &Snapshot) -> Value {
    json!({
        "generation": s.generation,
        "runs": s.runs.iter().map(|r| json!({
            "file": r.run.file,
            "attempts": r.run.attempts.len(),
            "bad_lines": r.bad.len(),
            "writing": r.writing,
            "unreadable": r.unreadable,
        })).collect::<Vec<_>>(),
    })
}

/// `/api/runs`: tb-metrics' reports (as `tb agg --json` writes them) and each file's state.
pub fn runs(s: &Snapshot) -> Value {
    json!({
        "generation": s.generation,
        "reports": tb_metrics::format::to_json(&s.reports),
        "files": s.runs.iter().map(|r| json!({
            "file": r.run.file,
            "model": r.run.model,
            "bad_lines": r.bad,
            "writing": r.writing,
            "unreadable": r.unreadable,
        })).collect::<Vec<_>>(),
    })
}

/// `/api/runs/{run}/attempts/{line}`: one attempt as read, with its status and analysis.
pub fn attempt(r: &RunView, i: usize) -> Value {
    let a = &r.run.attempts[i];
    let info = &r.info[i];
    json!({
        "file": r.run.file,
        "line": a.line,
        "uid": a.uid,
        "repetition": a.repetition,
        "domain": a.domain,
        "status": info.status.name(),
        "finish_reason": a.finish_reason,
        "is_system_error": a.is_system_error,
        "test_result": a.test_result.as_ref().map(|t| json!({
            "result": t.result,
            "is_system_error": t.is_system_error,
            "tb": t.tb,
            "lineno": t.lineno,
            "line_content": t.line_content,
        })),
        "failure": info.failure,
        "verdict": a.verdict,
        "usage_by_role": a.role_usage(),
        "cost": info.cost,
        "messages": a.messages,
        "metadata": a.metadata,
        "provenance": a.provenance,
    })
}

/// `/api/compare/{a}/{b}`: what `tb sbs` computes, baseline `a` and candidate `b`.
pub fn compare(s: &Snapshot, a: usize, b: usize) -> Value {
    let r = tb_metrics::sbs::compare(&s.runs[a].run, &s.runs[b].run, LIFT);
    serde_json::to_value(&r).unwrap_or(Value::Null)
}

/// The lift `tb sbs` uses by default.
pub const LIFT: f64 = 0.03;
