//! Full parity of the `sandbox_consulting` server with the reference: every golden call's
//! result, every final state and diff, over all 101 traces.

mod common;

use serde_json::Value;
use tb_eval::replay::read_traces;
use tb_sandbox::Clock;

const SERVER: &str = "sandbox_consulting";

#[test]
fn consulting_full_parity() {
    common::assert_full_parity(SERVER, 101);
}

/// This domain's own tools alone (the zendesk tools are another toolkit): every non-zendesk
/// call's result, and the final state of every non-zendesk table, equal the reference's.
#[test]
fn consulting_own_tools_parity() {
    let Some(shared) = common::shared() else {
        return;
    };
    let domain = tb_domains::by_name(SERVER).unwrap().unwrap();
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .unwrap();
    let clock = Clock::parse("2026-11-30T12:00:00Z").unwrap();
    let tasks_file = shared
        .join("tb-bench-v1/tasks")
        .join(format!("{SERVER}_group1.jsonl"));
    let tasks: Vec<Value> = std::fs::read_to_string(&tasks_file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let own = |t: &str| !t.starts_with("zendesk_");
    let (mut calls, mut matched, mut tables_ok, mut traces) = (0, 0, 0, 0);
    let mut bad = Vec::new();
    for trace in read_traces(
        &shared
            .join("tb-bench-v1/traces")
            .join(format!("{SERVER}_group1.jsonl")),
    )
    .unwrap()
    {
        traces += 1;
        let task = tasks.iter().find(|t| t["id"] == trace.id.as_str()).unwrap();
        let mut s = loaded.session(&task["init"][SERVER], clock).unwrap();
        for (i, c) in trace.calls.iter().enumerate() {
            let params = if c.parameters.is_null() {
                Value::Object(Default::default())
            } else {
                c.parameters.clone()
            };
            let got = s.call(&c.tool, &params).to_json(&c.tool);
            if own(&c.tool) {
                calls += 1;
                if got == c.result {
                    matched += 1;
                } else {
                    bad.push(format!(
                        "{} call {i} {}: ours {got} reference {}",
                        trace.id, c.tool, c.result
                    ));
                }
            }
        }
        let ours = s.state.stable_state();
        let tables = ours.as_object().unwrap();
        let diff: Vec<&String> = tables
            .keys()
            .filter(|k| own(k) && tables[*k] != trace.golden_state[*k])
            .collect();
        if diff.is_empty() {
            tables_ok += 1;
        } else {
            bad.push(format!("{} tables differ: {diff:?}", trace.id));
        }
    }
    eprintln!(
        "{SERVER} own tools: calls {matched}/{calls}, non-zendesk tables match in {tables_ok}/{traces} traces"
    );
    for b in bad.iter().take(30) {
        eprintln!("  {b}");
    }
    assert!(bad.is_empty(), "{} mismatches", bad.len());
}
