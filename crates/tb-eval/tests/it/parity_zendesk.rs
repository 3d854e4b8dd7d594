//! Parity of the zendesk toolset (all five variants): every recorded `zendesk_*` call of every
//! server's golden traces gives the recorded result. Other tools are built elsewhere, so their
//! mismatches (and the final states) are not judged here.

use crate::common;

const SERVERS: [&str; 5] = [
    "sandbox_external_retail",
    "external_booking_v1",
    "sandbox_auto_insurance",
    "sandbox_neobank_support_v1",
    "sandbox_consulting",
];

/// Number of recorded `zendesk_*` calls in a server's traces.
fn zendesk_calls(server: &str) -> usize {
    let shared = common::shared();
    let dir = shared.join("tb-bench-v1/traces");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if !(name.starts_with(server) && e.path().extension().is_some_and(|x| x == "jsonl")) {
            continue;
        }
        for line in std::fs::read_to_string(e.path())
            .unwrap_or_default()
            .lines()
        {
            let t: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
            n += t["calls"].as_array().map_or(0, |c| {
                c.iter()
                    .filter(|c| {
                        c["tool"]
                            .as_str()
                            .is_some_and(|t| t.starts_with("zendesk_"))
                    })
                    .count()
            });
        }
    }
    n
}

#[tb_test_support::shared_test]
#[test]
fn zendesk_calls_match_the_reference() {
    let mut failures = Vec::new();
    for server in SERVERS {
        let s = common::replay_domain(server);
        let zendesk: Vec<_> = s
            .mismatches
            .iter()
            .filter(|m| m.tool.as_deref().is_some_and(|t| t.starts_with("zendesk_")))
            .collect();
        let total = zendesk_calls(server);
        eprintln!(
            "{server}: {} traces; zendesk calls matched {}/{total}; all calls matched {}/{}",
            s.traces,
            total - zendesk.len(),
            s.calls_match,
            s.calls
        );
        for m in zendesk.iter().take(10) {
            eprintln!(
                "  {} {:?} {:?} {}: {}",
                m.trace, m.call, m.tool, m.what, m.detail
            );
        }
        failures.extend(
            zendesk
                .iter()
                .map(|m| format!("{server} {} {:?}", m.trace, m.call)),
        );
    }
    assert!(
        failures.is_empty(),
        "{} zendesk calls differ",
        failures.len()
    );
}
