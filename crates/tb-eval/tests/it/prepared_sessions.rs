//! A session of a prepared task ([`tb_eval::root::LoadedRoot::prepare`], each data patch
//! validated once) is the task's session: for every task of the benchmark, the same servers
//! (table domains and own servers), the same states and write counts, and a write in one
//! session is seen by no other session of the prepared task.

use crate::common;
use tb_sandbox::Clock;

#[tb_test_support::shared_test]
#[test]
fn prepared_task_sessions_are_the_tasks_sessions() {
    let v1 = common::V1::load(&common::shared());
    let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap();
    assert_eq!(v1.tasks.len(), 507);
    let mut calls = 0;
    for task in &v1.tasks {
        let prepared = v1.sandbox.prepare(task, clock).unwrap();
        assert_eq!(prepared.uid(), task.uid);
        let want = v1.sandbox.session(task, clock).unwrap();
        let mut a = v1.sandbox.session_prepared(&prepared).unwrap();
        let b = v1.sandbox.session_prepared(&prepared).unwrap();
        assert_eq!(a.own.len(), want.own.len(), "{}", task.uid);
        assert_eq!(a.servers.len(), want.servers.len(), "{}", task.uid);
        for (s, w) in a.servers.iter().zip(&want.servers) {
            assert_eq!(s.domain.name, w.domain.name);
            assert_eq!(s.state.full_state(), w.state.full_state(), "{}", task.uid);
            assert_eq!(s.state.writes(), w.state.writes(), "{}", task.uid);
            assert_eq!(s.clock, w.clock);
        }
        assert_eq!(a.tool_list(), want.tool_list(), "{}", task.uid);
        // The golden calls in one session leave the other (and the warm one) as they were.
        for server in task.servers() {
            for (tool, params) in task.golden_calls(&server) {
                let _ = a.call(&tool, &params);
                calls += 1;
            }
        }
        let again = v1.sandbox.session(task, clock).unwrap();
        for other in [&b, &again] {
            for (s, w) in other.servers.iter().zip(&want.servers) {
                assert_eq!(s.state.full_state(), w.state.full_state(), "{}", task.uid);
            }
        }
    }
    assert!(calls > 3000, "golden calls made: {calls}");
}
