//! The data repository's setup-check test files (`banking.py`, `banking_email.py`,
//! `email_system_org.py`, `mcs_defaults.py`) on the native `online_banking`, `email_system`
//! and `ms_store` servers: every scripted record of `tb-bench-v1/tools-servers/traces/`
//! (solutions, noops, probes) replayed through the episode loop as `tb replay` does, at the
//! record's clock: each call's result text, each server's effects hash, both verdicts.

use crate::common;

use tb_eval::script_replay::{ScriptEnv, ScriptSummary, read_script_records, replay_script};
use tb_sandbox::Clock;

#[tb_test_support::shared_test]
#[tokio::test(flavor = "current_thread")]
async fn setup_check_scripts_replay_through_the_episode_loop() {
    let shared = common::shared();
    let root = shared.join("thinkingbox-data");
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let sandbox = tb_eval::sandbox::Sandbox::load(&root).unwrap();
    let agent = ds.agent("think").ok();
    let mut s = ScriptSummary::default();
    for file in [
        "banking",
        "banking_email",
        "email_system_org",
        "mcs_defaults",
    ] {
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
    eprintln!(
        "setup-check scripts: {} traces, calls {}/{}, effects {}/{}, verdicts {}/{}, finish {}",
        s.traces,
        s.calls_match,
        s.calls,
        s.effects_match,
        s.effects,
        s.verdicts_match,
        s.verdicts,
        s.finish_match
    );
    let shown: Vec<String> = s.mismatches.iter().map(|m| format!("{m:?}")).collect();
    assert!(s.mismatches.is_empty(), "{}", shown.join("\n"));
    assert_eq!((s.traces, s.calls, s.effects), (42, 81, 45));
    assert_eq!((s.calls_match, s.effects_match), (81, 45));
    assert_eq!((s.verdicts_match, s.finish_match), (84, 42));
}
