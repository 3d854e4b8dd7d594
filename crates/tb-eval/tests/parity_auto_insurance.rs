//! Parity of `sandbox_auto_insurance` with the reference: every golden call, final state and diff.

mod common;

use serde_json::Value;
use tb_eval::replay::read_traces;
use tb_sandbox::Clock;

const SERVER: &str = "sandbox_auto_insurance";

#[test]
fn auto_insurance_matches_the_reference() {
    common::assert_full_parity(SERVER, 100);
}

/// This domain's own tools (everything but zendesk): each of their golden calls gives the
/// recorded result, and every non-zendesk table ends as in the golden state. Holds whether or
/// not the zendesk toolset is in place.
#[test]
fn own_tools_match_the_reference() {
    let Some(shared) = common::shared() else {
        return;
    };
    let domain = tb_domains::by_name(SERVER).unwrap().unwrap();
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .unwrap();
    let clock = Clock::parse("2026-11-30T12:00:00Z").unwrap();
    let name = format!("{SERVER}_group1.jsonl");
    let tasks: Vec<Value> = std::fs::read_to_string(shared.join("tb-bench-v1/tasks").join(&name))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let (mut calls, mut matched, mut tables_ok, mut traces) = (0, 0, 0, 0);
    let mut failures = Vec::new();
    for trace in read_traces(&shared.join("tb-bench-v1/traces").join(&name)).unwrap() {
        traces += 1;
        let task = tasks.iter().find(|t| t["id"] == trace.id.as_str()).unwrap();
        let mut session = loaded.session(&task["init"][SERVER], clock).unwrap();
        for (i, call) in trace.calls.iter().enumerate() {
            let params = if call.parameters.is_null() {
                Value::Object(Default::default())
            } else {
                call.parameters.clone()
            };
            let got = session.call(&call.tool, &params).to_json(&call.tool);
            if call.tool.starts_with("zendesk_") {
                continue;
            }
            calls += 1;
            if got == call.result {
                matched += 1;
            } else {
                failures.push(format!(
                    "{} call {i} {}: got {got}, want {}",
                    trace.id, call.tool, call.result
                ));
            }
        }
        let fin = session.state.stable_state();
        let own = |v: &Value| -> Vec<(String, Value)> {
            v.as_object()
                .unwrap()
                .iter()
                .filter(|(k, _)| !k.starts_with("zendesk_"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<std::collections::BTreeMap<_, _>>()
                .into_iter()
                .collect()
        };
        if own(&fin) == own(&trace.golden_state) {
            tables_ok += 1;
        } else {
            failures.push(format!(
                "{}: own tables differ from the golden state",
                trace.id
            ));
        }
    }
    eprintln!("{SERVER} own tools: calls {matched}/{calls}, own tables {tables_ok}/{traces}");
    for f in failures.iter().take(20) {
        eprintln!("  {f}");
    }
    assert!(failures.is_empty(), "{} mismatches", failures.len());
}
