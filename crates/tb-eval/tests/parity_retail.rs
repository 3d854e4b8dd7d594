//! Full parity of the `sandbox_external_retail` server with the reference's golden replays.

mod common;

#[test]
fn retail_matches_the_reference() {
    common::assert_full_parity("sandbox_external_retail", 98);
}

/// Progress view while zendesk is built elsewhere: the retail-only calls (every tool whose
/// name does not start with `zendesk_`) must all match. Prints their count and mismatches.
#[test]
fn retail_own_tools_match() {
    let Some(s) = common::replay_domain("sandbox_external_retail") else {
        return;
    };
    let shared = common::shared().expect("shared data");
    let mut total = 0usize;
    for entry in std::fs::read_dir(shared.join("tb-bench-v1/traces")).expect("traces dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.starts_with("sandbox_external_retail") || !name.ends_with(".jsonl") {
            continue;
        }
        for trace in tb_eval::replay::read_traces(&path).expect("traces") {
            total += trace
                .calls
                .iter()
                .filter(|c| !c.tool.starts_with("zendesk_"))
                .count();
        }
    }
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
    eprintln!(
        "retail non-zendesk calls: {}/{} match",
        total - own.len(),
        total
    );
    for m in own.iter().take(30) {
        eprintln!("  {} {:?} {:?}: {}", m.trace, m.call, m.tool, m.detail);
    }
    assert!(own.is_empty(), "{} retail calls differ", own.len());
}

/// Progress view while zendesk is built elsewhere: after replaying each trace, every
/// non-zendesk table of the final stable state equals the golden state's.
#[test]
fn retail_own_tables_match() {
    use serde_json::Value;
    let Some(shared) = common::shared() else {
        return;
    };
    let server = "sandbox_external_retail";
    let domain = tb_domains::by_name(server)
        .expect("registry")
        .expect("retail");
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .expect("initial data");
    let clock = tb_sandbox::Clock::parse("2026-11-30T12:00:00Z").expect("clock");
    let (mut traces, mut bad) = (0usize, Vec::new());
    for entry in std::fs::read_dir(shared.join("tb-bench-v1/traces")).expect("traces dir") {
        let path = entry.expect("entry").path();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !name.starts_with(server) || !name.ends_with(".jsonl") {
            continue;
        }
        let tasks: Vec<Value> =
            std::fs::read_to_string(shared.join("tb-bench-v1/tasks").join(&name))
                .expect("tasks")
                .lines()
                .map(|l| serde_json::from_str(l).expect("task json"))
                .collect();
        for trace in tb_eval::replay::read_traces(&path).expect("traces") {
            traces += 1;
            let task = tasks
                .iter()
                .find(|t| t["id"] == trace.id.as_str())
                .expect("task");
            let mut s = loaded
                .session(&task["init"][server], clock)
                .expect("session");
            for c in &trace.calls {
                let p = if c.parameters.is_null() {
                    serde_json::json!({})
                } else {
                    c.parameters.clone()
                };
                s.call(&c.tool, &p);
            }
            let ours = s.state.stable_state();
            for (table, rows) in ours.as_object().expect("state") {
                if !table.starts_with("zendesk_") && Some(rows) != trace.golden_state.get(table) {
                    bad.push(format!("{} {table}", trace.id));
                }
            }
        }
    }
    eprintln!(
        "retail non-zendesk tables: {}/{} traces match",
        traces - bad.len(),
        traces
    );
    for b in bad.iter().take(20) {
        eprintln!("  {b}");
    }
    assert!(bad.is_empty());
}
