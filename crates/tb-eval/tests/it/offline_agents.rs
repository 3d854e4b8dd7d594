//! The offline agents on the whole published benchmark: golden passes all 507 tasks' database
//! checks; noop fails every task whose golden state differs from its initial state, each
//! failure with its diff.

use crate::common;

use std::collections::HashMap;
use tb_eval::attempt::attempt_offline;
use tb_eval::offline::OfflineAgent;

#[tb_test_support::shared_test]
#[test]
fn golden_passes_and_noop_fails_with_diffs() {
    let shared = common::shared();
    let v1 = common::V1::load(&shared);
    let tasks = &v1.tasks;
    let env = v1.env();
    let mut per_domain: HashMap<String, (usize, usize)> = HashMap::new();
    for task in tasks {
        let golden = attempt_offline(&env, OfflineAgent::Golden, task, 0);
        assert!(!golden.is_system_error, "{}", task.uid);
        assert_eq!(
            golden.verdict.as_ref().map(|v| v.passed),
            Some(true),
            "golden fails {}",
            task.uid
        );
        let noop = attempt_offline(&env, OfflineAgent::Noop, task, 0);
        let v = noop.verdict.as_ref().unwrap();
        let e = per_domain.entry(task.scenario.clone()).or_default();
        e.0 += 1;
        if v.passed {
            e.1 += 1;
            // Only a task whose golden calls change nothing may pass without work.
            assert_eq!(task.uid, "sandbox_neobank_support_v1_group1.py:test_he_017");
        } else {
            assert!(
                v.state.iter().any(|s| !s.diff.is_empty()),
                "{} fails without a diff",
                task.uid
            );
            assert!(!noop.test_result.as_ref().unwrap().tb.is_empty());
        }
    }
    assert_eq!(per_domain["sandbox_external_retail"], (98, 0));
    assert_eq!(per_domain.values().map(|x| x.1).sum::<usize>(), 1);
}
