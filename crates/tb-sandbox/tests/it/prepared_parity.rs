//! Sessions opened from a prepared config ([`tb_sandbox::Loaded::prepare`], the data patch
//! validated once) are the uncached sessions of the config, on every recorded trace of the
//! benchmark: the same full state and write count, the trace's initial hash, and after the
//! golden calls the trace's golden hash; two sessions of one prepared config do not see each
//! other's writes.
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace); without it
//! the test is ignored, and in CI it fails.

use serde_json::Value;
use std::path::PathBuf;
use tb_sandbox::Clock;

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

#[tb_test_support::shared_test]
#[test]
fn prepared_sessions_equal_uncached_ones_on_every_trace() {
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
            let prepared = l.prepare(config, clock);
            let want = l.session_uncached(config, clock).unwrap();
            let mut s = prepared.session().unwrap();
            let sibling = prepared.session().unwrap();
            assert_eq!(s.state.full_state(), want.state.full_state(), "{what}");
            assert_eq!(s.state.writes(), want.state.writes(), "{what}");
            assert_eq!(s.state.hash(), t["initial_hash"], "{what}");
            for c in t["calls"].as_array().unwrap() {
                let p = match &c["parameters"] {
                    Value::Null => Value::Object(serde_json::Map::default()),
                    p => p.clone(),
                };
                let _ = s.call(c["tool"].as_str().unwrap(), &p);
            }
            assert_eq!(s.state.hash(), t["golden_hash"], "{what}");
            for other in [&sibling, &prepared.session().unwrap()] {
                assert_eq!(
                    other.state.full_state(),
                    want.state.full_state(),
                    "{what}: a write reached another session"
                );
                assert_eq!(other.state.hash(), t["initial_hash"], "{what}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 507, "every trace checked");
}
