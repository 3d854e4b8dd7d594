//! The data repository's setup-check test files (`banking.py`, `banking_email.py`,
//! `email_system_org.py`, `mcs_defaults.py`) on the native `online_banking`, `email_system`
//! and `ms_store` servers: every scripted record of `tb-bench-v1/tools-servers/traces/`
//! (solutions, noops, probes) replayed through the episode loop as `tb replay` does, at the
//! record's clock: each call's result text, each server's effects hash, both verdicts.
//! `ms_store` reads its answers from the reference server's source, so its file needs the
//! data repository's checkout (a test on the reference's code).

use crate::common;

use std::path::Path;
use tb_eval::script_replay::{ScriptEnv, ScriptSummary, read_script_records, replay_script};
use tb_sandbox::Clock;

/// Replays every scripted record of the given trace files on the data checkout at `root`.
async fn replay(root: &Path, files: &[&str]) -> ScriptSummary {
    let shared = common::shared();
    let ds = tb_dataset::Dataset::open(root).unwrap();
    let sandbox = tb_eval::root::LoadedRoot::load(root).unwrap();
    let agent = ds.agent("think").ok();
    let mut s = ScriptSummary::default();
    for file in files {
        let path = shared.join(format!("tb-bench-v1/tools-servers/traces/{file}.jsonl"));
        for record in read_script_records(&path).unwrap() {
            let task = ds.load_task(record["id"].as_str().unwrap()).unwrap();
            let clock = Clock::parse(record["clock"]["now_utc"].as_str().unwrap()).unwrap();
            let env = ScriptEnv {
                sandbox: &sandbox,
                agent: agent.clone(),
                scenario: ds.scenario(&task.scenario).ok(),
                clock,
            };
            replay_script(&env, &task, &record, &mut s).await;
        }
    }
    common::report_scripts(&format!("setup-check scripts {files:?}"), &s);
    s
}

/// `online_banking` and `email_system` are ours entirely: the benchmark's data is enough.
#[tb_test_support::shared_test]
#[tokio::test(flavor = "current_thread")]
async fn setup_check_scripts_replay_through_the_episode_loop() {
    let root = common::shared().join("thinkingbox-data");
    let s = replay(&root, &["banking", "banking_email", "email_system_org"]).await;
    assert_eq!((s.traces, s.calls, s.effects), (35, 73, 38));
    assert_eq!((s.calls_match, s.effects_match), (73, 38));
    assert_eq!((s.verdicts_match, s.finish_match), (70, 35));
}

/// `ms_store` answers with texts read from the reference server's source.
#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[tokio::test(flavor = "current_thread")]
async fn ms_store_scripts_replay_through_the_episode_loop() {
    let root = tb_test_support::reference_data();
    let s = replay(&root, &["mcs_defaults"]).await;
    assert_eq!((s.traces, s.calls, s.effects), (7, 8, 7));
    assert_eq!((s.calls_match, s.effects_match), (8, 7));
    assert_eq!((s.verdicts_match, s.finish_match), (14, 7));
}
