//! Parity of the zendesk toolset (all five variants): every recorded `zendesk_*` call of every
//! server's golden traces gives the recorded result. Other tools are built elsewhere, so their
//! mismatches (and the final states) are not judged here.

mod common;

const SERVERS: [&str; 5] = [
    "sandbox_external_retail",
    "external_booking_v1",
    "sandbox_auto_insurance",
    "sandbox_neobank_support_v1",
    "sandbox_consulting",
];

#[test]
fn zendesk_calls_match_the_reference() {
    let mut failures = Vec::new();
    for server in SERVERS {
        let Some(s) = common::replay_domain(server) else { return };
        let zendesk: Vec<_> =
            s.mismatches.iter().filter(|m| m.tool.as_deref().is_some_and(|t| t.starts_with("zendesk_"))).collect();
        eprintln!("{server}: {} traces, {} zendesk call mismatches", s.traces, zendesk.len());
        for m in zendesk.iter().take(10) {
            eprintln!("  {} {:?} {:?} {}: {}", m.trace, m.call, m.tool, m.what, m.detail);
        }
        failures.extend(zendesk.iter().map(|m| format!("{server} {} {:?}", m.trace, m.call)));
    }
    assert!(failures.is_empty(), "{} zendesk calls differ", failures.len());
}
