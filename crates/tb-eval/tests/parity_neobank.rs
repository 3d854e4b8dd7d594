//! Tool parity for `sandbox_neobank_support_v1`: every golden call, final state and diff of the
//! 104 neobank traces (89 base tasks and 15 rubric variants) must equal the reference's.

mod common;

const SERVER: &str = "sandbox_neobank_support_v1";

/// Progress on this domain's own tools, whatever the state of the zendesk variant: prints the
/// call mismatches of non-zendesk tools (there must be none).
#[test]
fn neobank_own_tools_match() {
    let Some(s) = common::replay_domain(SERVER) else {
        return;
    };
    let own: Vec<_> = s
        .mismatches
        .iter()
        .filter(|m| {
            m.what == "call"
                && m.tool
                    .as_deref()
                    .is_some_and(|t| !t.starts_with("zendesk_"))
        })
        .collect();
    let zendesk_calls = s.mismatches.iter().filter(|m| m.what == "call").count() - own.len();
    eprintln!(
        "{SERVER}: calls {}/{} ({} non-zendesk mismatches, {} zendesk), final {}/{}",
        s.calls_match,
        s.calls,
        own.len(),
        zendesk_calls,
        s.final_match,
        s.traces
    );
    for m in own.iter().take(20) {
        eprintln!("  {} {:?} {:?}: {}", m.trace, m.call, m.tool, m.detail);
    }
    assert!(own.is_empty(), "{} non-zendesk call mismatches", own.len());
}

/// The final state of this domain's own tables (all but `zendesk_*`) equals the golden one in
/// every trace, whatever the zendesk calls did.
#[test]
fn neobank_own_tables_match() {
    let Some(shared) = common::shared() else {
        return;
    };
    let domain = tb_domains::by_name(SERVER).unwrap().unwrap();
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .unwrap();
    let clock = tb_sandbox::Clock::parse("2026-11-30T12:00:00Z").unwrap();
    let own = |v: &serde_json::Value| -> serde_json::Value {
        v.as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| !k.starts_with("zendesk_"))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let (mut traces, mut matched) = (0, 0);
    for file in [
        "sandbox_neobank_support_v1_group1",
        "sandbox_neobank_support_v1_group1_rubrics_yesno",
    ] {
        let tasks_text =
            std::fs::read_to_string(shared.join(format!("tb-bench-v1/tasks/{file}.jsonl")))
                .unwrap();
        let tasks: Vec<serde_json::Value> = tasks_text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for trace in
            tb_eval::replay::read_traces(&shared.join(format!("tb-bench-v1/traces/{file}.jsonl")))
                .unwrap()
        {
            traces += 1;
            let task = tasks.iter().find(|t| t["id"] == trace.id.as_str()).unwrap();
            let mut s = loaded.session(&task["init"][SERVER], clock).unwrap();
            for c in &trace.calls {
                let params = if c.parameters.is_null() {
                    serde_json::json!({})
                } else {
                    c.parameters.clone()
                };
                s.call(&c.tool, &params);
            }
            let (ours, golden) = (own(&s.state.stable_state()), own(&trace.golden_state));
            if ours == golden {
                matched += 1;
            } else {
                let d = tb_sandbox::diff::deep_diff(&ours, &golden);
                eprintln!(
                    "  {}: {}",
                    trace.id,
                    serde_json::Value::Array(d.into_iter().take(3).collect())
                );
            }
        }
    }
    eprintln!("{SERVER}: own tables match in {matched}/{traces} traces");
    assert_eq!(matched, traces);
}

#[test]
fn neobank_full_parity() {
    common::assert_full_parity(SERVER, 104);
}
