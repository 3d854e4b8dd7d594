//! Sessions opened from a prepared config ([`tb_sandbox::Loaded::prepare`], the data patch
//! validated once) are the uncached sessions of the config, on every recorded trace of the
//! benchmark: the same full state and write count, the trace's initial hash, and after the
//! golden calls the trace's golden hash; two sessions of one prepared config do not see each
//! other's writes.
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace); without it
//! the test is ignored, and in CI it fails.

use crate::traces;
use tb_sandbox::Clock;

#[tb_test_support::shared_test]
#[test]
fn prepared_sessions_equal_uncached_ones_on_every_trace() {
    let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap();
    let checked = traces::for_each(|l, config, t, what| {
        let prepared = l.prepare(config, clock);
        let want = l.session_uncached(config, clock).unwrap();
        let mut s = prepared.session().unwrap();
        let sibling = prepared.session().unwrap();
        assert_eq!(s.state.full_state(), want.state.full_state(), "{what}");
        assert_eq!(s.state.writes(), want.state.writes(), "{what}");
        assert_eq!(s.state.hash(), t["initial_hash"], "{what}");
        for (tool, p) in traces::calls(t) {
            let _ = s.call(tool, &p);
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
    });
    assert_eq!(checked, 507, "every trace checked");
}
