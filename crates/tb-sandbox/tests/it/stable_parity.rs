//! The fast paths give exactly what the full computations give, on every recorded trace of
//! the benchmark: [`State::hash`] and [`State::write_stable`] (straight from the tables) equal
//! `hash_stable`/`canonical` of [`State::stable_state`], and [`State::stable_diff`] (changed
//! tables only) equals [`deep_diff`] of the two stable states, entry for entry, for the
//! initial state against the golden one, both ways, and the base against a patched session.
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace); without it
//! the test is ignored, and in CI it fails.

use crate::traces;
use serde_json::Value;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::pyjson::canonical;
use tb_sandbox::state::hash_stable;
use tb_sandbox::{Clock, State};

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
    let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap();
    let checked = traces::for_each(|l, config, t, what| {
        let mut s = l.session_uncached(config, clock).unwrap();
        let initial = s.state.clone();
        assert_eq!(check_hash(&initial, what), t["initial_hash"], "{what}");
        for (tool, p) in traces::calls(t) {
            let _ = s.call(tool, &p);
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
    });
    assert_eq!(checked, 507, "every trace checked");
}
