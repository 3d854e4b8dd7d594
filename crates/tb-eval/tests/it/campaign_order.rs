//! A campaign in each start order (`tb infer --start-order`): every planned attempt is run
//! exactly once and has its record, the start order is the scheduler's, and the verdicts do
//! not depend on the order.

use crate::common;

use std::collections::BTreeMap;
use std::sync::Arc;
use tb_campaign::schedule::{StartOrder, expected_turns, start_order};
use tb_campaign::store::{Outcome, Scan};
use tb_campaign::{self as campaign, CampaignFiles, Mode, Observer};
use tb_core::TrialRecord;
use tb_eval::offline::OfflineAgent;
use tb_eval::run::{AgentChoice, Models, RunEnv};

#[derive(Default)]
struct Seen {
    started: Vec<String>,
    finished: Vec<(String, bool)>,
}

impl Observer for Seen {
    fn started(&mut self, key: &str) {
        self.started.push(key.to_string());
    }
    fn finished(&mut self, record: &TrialRecord, outcome: Outcome) {
        let key = record.key.clone();
        self.finished.push((key, outcome == Outcome::Passed));
    }
}

#[tb_test_support::shared_test]
#[test]
fn every_order_runs_each_attempt_once_with_its_record() {
    let shared = common::shared();
    let v1 = common::V1::load(&shared);
    // Tasks of every domain, of different lengths.
    let tasks: Vec<Arc<tb_core::Task>> =
        v1.tasks.iter().step_by(13).cloned().map(Arc::new).collect();
    assert!(tasks.len() >= 30);
    let ds = tb_dataset::Dataset::open(&v1.root).unwrap();
    let mut scenarios = std::collections::HashMap::new();
    for t in &tasks {
        scenarios
            .entry(t.scenario.clone())
            .or_insert_with(|| ds.scenario(&t.scenario).unwrap());
    }
    let env = Arc::new(RunEnv {
        sandbox: Arc::new(tb_eval::root::LoadedRoot::load(&v1.root).unwrap()),
        judge: Arc::new(tb_eval::judge::StateJudge::new()),
        clock: tb_sandbox::Clock::default(),
        agent_name: "golden".into(),
        agent: None,
        scenarios,
        models: Models::default(),
        user_can_end: false,
        message_timeout: None,
        attempt_timeout: None,
        dump: tb_eval::run::Dump::default(),
        provenance: serde_json::Map::default(),
    });
    let repeat = 3;
    let concurrency = 4;
    // One thread: a slot takes its attempt and reports the start with no await in between,
    // so the starts are observed in the order the slots took them.
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut verdicts: Option<BTreeMap<String, bool>> = None;
    for order in [
        StartOrder::Plan,
        StartOrder::LongestFirst,
        StartOrder::Packed,
    ] {
        let planned = campaign::plan(&tasks, repeat, None);
        let keys: Vec<String> = planned.iter().map(|p| p.key.clone()).collect();
        let weights: Vec<u64> = planned.iter().map(|p| expected_turns(&p.task)).collect();
        let want_started: Vec<String> = start_order(&weights, concurrency, order)
            .into_iter()
            .map(|i| keys[i].clone())
            .collect();
        let files = CampaignFiles::new(&dir.path().join(format!("{}.jsonl", order.as_str())), None);
        let mut opened = campaign::open(files.clone(), planned, Mode::Fresh, "b", "c").unwrap();
        let mut seen = Seen::default();
        let stats = rt
            .block_on(campaign::run_ordered(
                env.clone(),
                None,
                AgentChoice::Offline(OfflineAgent::Golden),
                &mut opened,
                concurrency,
                order,
                &mut seen,
            ))
            .unwrap();
        let n = tasks.len() * repeat as usize;
        assert_eq!(stats.attempted, n, "{order:?}");
        assert_eq!(stats.verdicts, n, "{order:?}");
        assert_eq!(
            seen.started, want_started,
            "{order:?}: the scheduler's order"
        );
        // Every key exactly once in the output, none in the errors sidecar.
        let scan = Scan::read(&files.output).unwrap();
        let mut in_file: Vec<String> = scan.records.iter().filter_map(|r| r.key.clone()).collect();
        assert_eq!(in_file.len(), n);
        in_file.sort();
        let mut all = keys.clone();
        all.sort();
        assert_eq!(in_file, all, "{order:?}");
        assert!(Scan::read(&files.errors).unwrap().records.is_empty());
        // The same verdict per key whatever the order.
        let by_key: BTreeMap<String, bool> = seen.finished.into_iter().collect();
        assert_eq!(by_key.len(), n);
        match &verdicts {
            None => verdicts = Some(by_key),
            Some(v) => assert_eq!(v, &by_key, "{order:?}"),
        }
    }
    // The golden agent passes every task.
    assert!(verdicts.unwrap().values().all(|&p| p));
}
