//! The test-body evaluator gives the fast path's verdicts on all 507 v1 tasks: golden and
//! noop attempts, with the judge answering yes and then no. The fast path's rule: an attempt
//! passes when every server's state hash equals the golden hash and every yes/no rubric holds
//! (so "no" fails exactly the rubric tasks whose state passes).

use crate::common;

use std::collections::HashMap;
use tb_eval::attempt::attempt_offline;
use tb_eval::offline::OfflineAgent;
use tb_eval::pybody;
use tb_pyeval::{FixedJudge, TestFile};

#[tb_test_support::shared_test]
#[test]
fn evaluator_matches_the_fast_path_on_all_507() {
    let shared = common::shared();
    let v1 = common::V1::load(&shared);
    let (root, tasks) = (&v1.root, &v1.tasks);
    let env = v1.env();
    let mut files: HashMap<String, TestFile> = HashMap::new();
    let (mut runs, mut failures) = (0usize, Vec::new());
    let mut noop_passes = Vec::new();
    for task in tasks {
        let path = pybody::test_file_path(root, task);
        let file = files.entry(task.source.path.clone()).or_insert_with(|| {
            let f = TestFile::read(&path).unwrap();
            f.check().unwrap();
            f
        });
        let test = task.uid.rsplit(':').next().unwrap();
        for agent in [OfflineAgent::Golden, OfflineAgent::Noop] {
            let record = attempt_offline(&env, agent, task, 0);
            let verdict = record
                .verdict
                .as_ref()
                .expect("offline attempts have verdicts");
            let ctx = pybody::context(&record.messages, pybody::v1_effects(task, &verdict.state));
            let state_passed = verdict.state.iter().all(|s| s.passed);
            let rubrics: Vec<String> = task
                .world_state
                .keys()
                .flat_map(|s| task.rubrics_yesno(s))
                .collect();
            for answer in [true, false] {
                let mut j = FixedJudge::new(answer);
                let got = file.run(test, &ctx, &mut j).unwrap();
                runs += 1;
                let want = state_passed && (answer || rubrics.is_empty());
                if got.passed != want || got.system_error {
                    failures.push(format!(
                        "{} {agent:?} judge={answer}: want passed={want}, got {got:?}",
                        task.uid
                    ));
                }
                if !got.passed && !state_passed && !got.message.starts_with("AssertionError: Database hash after test execution does not match expected golden hash") {
                    failures.push(format!("{} {agent:?}: unexpected message {:?}", task.uid, got.message));
                }
                if agent == OfflineAgent::Noop && got.passed && answer {
                    noop_passes.push(task.uid.clone());
                }
            }
        }
    }
    eprintln!(
        "test bodies: {runs} runs, {} differ from the fast path",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert_eq!(runs, 507 * 4);
    assert_eq!(
        noop_passes,
        vec!["sandbox_neobank_support_v1_group1.py:test_he_017".to_string()]
    );
}
