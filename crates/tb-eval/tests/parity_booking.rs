//! Parity of external_booking_v1 with the reference: every golden call's result, the final
//! state and its diff, on all 104 traces (89 tasks plus 15 rubric variants).

mod common;

#[test]
fn booking_matches_the_reference() {
    common::assert_full_parity("external_booking_v1", 104);
}

/// Progress view while the zendesk toolkit is elsewhere: the calls of this domain's own tools
/// must all match; prints counts and the first mismatches of non-zendesk tools.
#[test]
fn booking_own_tools_match_the_reference() {
    let Some(s) = common::replay_domain("external_booking_v1") else {
        return;
    };
    let ours: Vec<&tb_eval::replay::Mismatch> = s
        .mismatches
        .iter()
        .filter(|m| {
            m.what == "call"
                && m.tool
                    .as_deref()
                    .is_some_and(|t| !t.starts_with("zendesk_"))
        })
        .collect();
    let zendesk_calls = s
        .mismatches
        .iter()
        .filter(|m| {
            m.what == "call" && m.tool.as_deref().is_some_and(|t| t.starts_with("zendesk_"))
        })
        .count();
    eprintln!(
        "external_booking_v1: calls {}/{} (zendesk mismatches {zendesk_calls}, own-tool mismatches {}), final {}/{}",
        s.calls_match,
        s.calls,
        ours.len(),
        s.final_match,
        s.traces
    );
    for m in ours.iter().take(30) {
        eprintln!("  {} {:?} {:?}: {}", m.trace, m.call, m.tool, m.detail);
    }
    assert!(
        ours.is_empty(),
        "{} calls of booking's own tools differ",
        ours.len()
    );
    let own_tables = own_tables_final_match();
    eprintln!(
        "external_booking_v1: final state outside zendesk tables matches on {own_tables}/{}",
        s.traces
    );
    assert_eq!(own_tables, s.traces);
}

/// Replays every trace and counts those whose final state, zendesk tables left out, equals
/// the golden state's.
fn own_tables_final_match() -> usize {
    use serde_json::Value;
    let Some(shared) = common::shared() else {
        return 0;
    };
    let server = "external_booking_v1";
    let domain = tb_domains::by_name(server).unwrap().unwrap();
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .unwrap();
    let clock = tb_sandbox::Clock::parse("2026-11-30T12:00:00Z").unwrap();
    let strip = |v: &Value| -> Value {
        let mut m = v.as_object().cloned().unwrap_or_default();
        m.retain(|k, _| !k.starts_with("zendesk_"));
        Value::Object(m)
    };
    let mut matched = 0;
    for stem in [
        "external_booking_v1_group1",
        "external_booking_v1_group1_rubrics_yesno",
    ] {
        let tasks: Vec<Value> =
            std::fs::read_to_string(shared.join(format!("tb-bench-v1/tasks/{stem}.jsonl")))
                .unwrap()
                .lines()
                .map(|l| serde_json::from_str(l).unwrap())
                .collect();
        for trace in
            tb_eval::replay::read_traces(&shared.join(format!("tb-bench-v1/traces/{stem}.jsonl")))
                .unwrap()
        {
            let task = tasks.iter().find(|t| t["id"] == trace.id.as_str()).unwrap();
            let mut session = loaded.session(&task["init"][server], clock).unwrap();
            for call in &trace.calls {
                let params = if call.parameters.is_null() {
                    Value::Object(Default::default())
                } else {
                    call.parameters.clone()
                };
                session.call(&call.tool, &params);
            }
            if strip(&session.state.stable_state()) == strip(&trace.golden_state) {
                matched += 1;
            } else {
                eprintln!("  {}: own tables differ", trace.id);
            }
        }
    }
    matched
}
