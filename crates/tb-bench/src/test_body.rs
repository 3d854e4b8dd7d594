//! `test_body_us`: one airline test body evaluated in process (`tb-pyeval`), beside the
//! reference's subprocess per test.
//!
//! For every recorded airline trace (`tb-bench-v1/airline/traces.jsonl`, next to the data
//! root), the trace's calls are replayed on our airline server, its effects (the whole
//! 500-user, 2,000-reservation state) and the recorded reply and calls make the test's
//! context, and the task's test body is timed on it: the context's `x` built (effects read
//! lazily), the test module executed, the test function called, judge always yes. The median
//! over every trace x rounds is the figure; the test file is parsed once, outside the timing
//! (`parse_us` reports one parse).

use crate::error::{Context, Result};
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
use tb_domains::airline::{self, Base};
use tb_pyeval::{FixedJudge, TestFile};
use tb_sandbox::ServerSession;

/// The reference's time per test (a fresh `TestScriptSubprocess`).
pub(crate) const REFERENCE_SUBPROCESS_US: f64 = 1.7e6;

/// The target for one body.
pub(crate) const TARGET_US: f64 = 50.0;

/// Per recorded trace: its test function and `x`'s JSON.
type Contexts = Vec<(String, Arc<Value>)>;

/// The airline test file, parsed, and one context per recorded airline trace (its test
/// function and `x`'s JSON), or `None` when the airline traces are not next to the data.
/// The second value is the parse time of the test file (microseconds).
pub(crate) fn airline_contexts(root: &Path) -> Result<Option<(TestFile, f64, Contexts)>> {
    let traces = root.join("../tb-bench-v1/airline/traces.jsonl");
    if !traces.is_file() {
        return Ok(None);
    }
    let config = json!({
        "flights": "$THINKINGBOX_DATA/support/tau_bench/airline_data/flights.json",
        "reservations": "$THINKINGBOX_DATA/support/tau_bench/airline_data/reservations.json",
        "users": "$THINKINGBOX_DATA/support/tau_bench/airline_data/users.json",
    });
    let base = Base::load(&config, root).map_err(|e| crate::BenchError::Msg(e.to_string()))?;
    let path = root.join("dataset/test_case/airline_tau_bench.py");
    let source = std::fs::read_to_string(&path).context(path.display().to_string())?;
    let t0 = Instant::now();
    let file =
        TestFile::parse(&path, &source).map_err(|e| crate::BenchError::Msg(e.to_string()))?;
    let parse_us = crate::us(t0.elapsed());
    let text = std::fs::read_to_string(&traces).context(traces.display().to_string())?;
    let mut contexts = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let record: Value = serde_json::from_str(line)?;
        let id = record["id"].as_str().unwrap_or_default();
        let Some((_, test)) = id.split_once(':') else {
            continue;
        };
        let mut session = base.session(id, airline::default_clock());
        let steps = record["script"].as_array().into_iter().flatten();
        let calls = steps.filter(|s| s.get("call").is_some());
        for (step, rec) in calls.zip(record["calls"].as_array().into_iter().flatten()) {
            // End-turn tools are never executed by the framework.
            if rec["executed"] == json!(false) {
                continue;
            }
            if let Some(tool) = step["call"].as_str() {
                session.call_tool(tool, &step["args"]);
            }
        }
        let mut effects = Map::new();
        effects.insert("airline_tau_bench".into(), session.effects());
        let ctx = json!({
            "response": record["response"],
            "effects": effects,
            "tool_calls": record["tool_calls_seen_by_test"],
            "tool_direct_responses": [],
        });
        contexts.push((test.to_string(), Arc::new(ctx)));
    }
    Ok(Some((file, parse_us, contexts)))
}

/// The figure's detail object, or `None` when the airline traces are not next to the data.
pub(crate) fn test_body_figure(root: &Path, rounds: usize) -> Result<Option<Value>> {
    let Some((file, parse_us, contexts)) = airline_contexts(root)? else {
        return Ok(None);
    };
    let mut times = Vec::new();
    let mut passed = 0usize;
    for _ in 0..rounds.max(1) {
        for (test, ctx) in &contexts {
            let mut judge = FixedJudge::new(true);
            let t0 = Instant::now();
            let out = file
                .run_shared(test, ctx, &mut judge)
                .map_err(|e| crate::BenchError::Msg(e.to_string()))?;
            times.push(crate::us(t0.elapsed()));
            passed += usize::from(out.passed);
        }
    }
    let n = times.len();
    let median = crate::median(&mut times.clone());
    let p90 = crate::percentile(&mut times.clone(), 0.9);
    let max = crate::percentile(&mut times, 1.0);
    Ok(Some(json!({
        "bodies": contexts.len(),
        "runs": n,
        "passed_runs": passed,
        "median_us": crate::sig(median),
        "p90_us": crate::sig(p90),
        "max_us": crate::sig(max),
        "parse_us": crate::sig(parse_us),
    })))
}

/// One airline test body in process (`test_body_us`).
pub(super) fn figures(b: &super::Bench<'_>) -> Result<super::Measured> {
    b.progress("airline test bodies");
    let body = test_body_figure(b.root, 5)?;
    Ok(super::Measured {
        figures: vec![super::Figure {
            key: "test_body_us",
            value: body.as_ref().and_then(|b| b["median_us"].as_f64()),
            unit: "us",
            reference: Some(REFERENCE_SUBPROCESS_US),
            target: Some(TARGET_US),
            note: body.as_ref().map_or("skipped (no tb-bench-v1/airline/traces.jsonl next to the data root)".into(), |b| format!(
                "one airline test body in process (tb-pyeval) on the context of a recorded trace replayed on our airline server (whole state as effects, read lazily), median of {} runs over {} bodies (p90 {} us, max {} us; parsing the test file once {} us, not counted); reference: a fresh test subprocess per test",
                b["runs"], b["bodies"], b["p90_us"], b["max_us"], b["parse_us"]
            )),
        }],
        details: vec![("test_body", body.unwrap_or(Value::Null))],
        lines: Vec::new(),
    })
}
