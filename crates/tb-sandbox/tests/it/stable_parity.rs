//! The fast paths give exactly what the full computations give, on every recorded trace of
//! the benchmark: [`State::hash`] and [`State::write_stable`] (straight from the tables) equal
//! `hash_stable`/`canonical` of [`State::stable_state`], and [`State::stable_diff`] (changed
//! tables only) equals [`deep_diff`] of the two stable states, entry for entry, for the
//! initial state against the golden one, both ways, and the base against a patched session.
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace); without it
//! the test is ignored, and in CI it fails.

use serde_json::Value;
use std::path::PathBuf;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::pyjson::canonical;
use tb_sandbox::state::hash_stable;
use tb_sandbox::{Clock, State};

fn lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

fn check_same(a: &State, b: &State, what: &str) {
    let (sa, sb) = (a.stable_state(), b.stable_state());
    assert_eq!(
        a.stable_diff(b),
        deep_diff(&sa, &sb),
        "{what}: stable_diff differs from deep_diff"
    );
}

fn check_hash(s: &State, what: &str) -> String {
    let stable = s.stable_state();
    let mut text = String::new();
    s.write_stable(&mut text);
    assert!(text == canonical(&stable), "{what}: canonical text differs");
    let h = s.hash();
    assert_eq!(h, hash_stable(&stable), "{what}: hash differs");
    h
}

#[tb_test_support::shared_test]
#[test]
fn fast_hash_and_diff_equal_the_full_ones_on_every_trace() {
    let shared = tb_test_support::shared();
    let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap();
    let toolslib = tb_domains::toolslib(&shared.join("thinkingbox-data"));
    let mut checked = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("tb-bench-v1/traces"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let inits = lines(&shared.join("tb-bench-v1/tasks").join(&name));
        let mut loaded = std::collections::HashMap::new();
        for t in lines(&file) {
            let server = t["domain"].as_str().unwrap().to_string();
            let l = loaded.entry(server.clone()).or_insert_with(|| {
                tb_domains::by_name(&server)
                    .unwrap()
                    .unwrap()
                    .load(&toolslib)
                    .unwrap()
            });
            let init = inits.iter().find(|i| i["id"] == t["id"]).unwrap();
            let config = &init["init"][&server];
            let what = t["id"].as_str().unwrap();
            let mut s = l.session_uncached(config, clock).unwrap();
            let initial = s.state.clone();
            assert_eq!(check_hash(&initial, what), t["initial_hash"], "{what}");
            for c in t["calls"].as_array().unwrap() {
                let p = match &c["parameters"] {
                    Value::Null => Value::Object(serde_json::Map::default()),
                    p => p.clone(),
                };
                let _ = s.call(c["tool"].as_str().unwrap(), &p);
            }
            assert_eq!(check_hash(&s.state, what), t["golden_hash"], "{what}");
            let diff = initial.stable_diff(&s.state);
            assert_eq!(
                Value::Array(diff),
                t["diff_initial_vs_golden"],
                "{what}: diff differs from the trace"
            );
            check_same(&initial, &s.state, what);
            check_same(&s.state, &initial, what);
            check_same(&l.base, &s.state, what);
            checked += 1;
        }
    }
    assert_eq!(checked, 507, "every trace checked");
}
