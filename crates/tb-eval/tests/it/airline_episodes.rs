//! The Airline Tau-Bench 26-04 release through the episode loop: every scripted record of
//! `tb-bench-v1/airline/traces.jsonl` (21 solutions, 2 alternates, 21 noops) replayed as
//! `tb replay` does (each call's result text, the effects hash, both verdicts), and the noop
//! agent through `attempt::attempt` with a judge model (the mock answering "Yes", then "No")
//! giving the reference's noop verdicts.

use crate::common;

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tb_eval::attempt::attempt;
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;
use tb_eval::run::{AgentChoice, Models, RunEnv};
use tb_eval::script_replay::{ScriptEnv, ScriptSummary, read_script_records, replay_script};
use tb_llm::{LlmClient, LlmConfig};
use tb_mock_model::{Api, MockServer, Reply};
use tb_sandbox::Clock;

const LIST: &str = "releases/dataset_2604_airline_tau_bench/testlist_2604_airline_tau_bench.yaml";

#[tb_test_support::shared_test]
#[tokio::test(flavor = "current_thread")]
async fn airline_scripts_replay_through_the_episode_loop() {
    let shared = common::shared();
    let root = shared.join("thinkingbox-data");
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let sandbox = tb_eval::root::LoadedRoot::load(&root).unwrap();
    let agent = ds.agent("think").ok();
    let records = read_script_records(&shared.join("tb-bench-v1/airline/traces.jsonl")).unwrap();
    let mut s = ScriptSummary::default();
    for record in &records {
        let task = ds.load_task(record["id"].as_str().unwrap()).unwrap();
        let env = ScriptEnv {
            sandbox: &sandbox,
            agent: agent.clone(),
            scenario: ds.scenario(&task.scenario).ok(),
            clock: Clock::default(),
        };
        replay_script(&env, &task, record, &mut s).await;
    }
    common::report_scripts("airline scripts", &s);
    assert_eq!(s.traces, 44);
    assert_eq!(s.calls, 126);
    assert_eq!(
        (s.effects_match, s.verdicts_match, s.finish_match),
        (44, 88, 44)
    );
}

fn judge_model(server: &MockServer) -> LlmClient {
    let mut c = LlmConfig::chat(&server.url("judge", Api::Chat), "mock");
    c.retry.max_retries_timeout = 0;
    c.timeout = 5.0;
    LlmClient::new(&c).unwrap()
}

#[tb_test_support::shared_test]
#[tokio::test(flavor = "current_thread")]
async fn noop_attempts_give_the_reference_noop_verdicts() {
    let shared = common::shared();
    let root = shared.join("thinkingbox-data");
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let tasks = ds.load_test_list(&root.join(LIST)).unwrap();
    assert_eq!(tasks.len(), 21);
    let sandbox = Arc::new(tb_eval::root::LoadedRoot::load(&root).unwrap());
    let recorded: HashMap<String, Value> =
        read_script_records(&shared.join("tb-bench-v1/airline/traces.jsonl"))
            .unwrap()
            .into_iter()
            .filter(|r| r["kind"] == "noop")
            .map(|r| (r["id"].as_str().unwrap().to_string(), r))
            .collect();
    let server = MockServer::start().await.unwrap();
    let mut scenarios = HashMap::new();
    for t in &tasks {
        scenarios.insert(t.scenario.clone(), ds.scenario(&t.scenario).unwrap());
    }
    for (answer, key, want_passes) in [
        ("Yes.", "verdict_judge_yes", 5usize),
        ("No.", "verdict_judge_no", 1),
    ] {
        let text = answer.to_string();
        server.set_script("judge", move |_: &tb_mock_model::MockRequest| {
            Reply::Text(text.clone())
        });
        let env = RunEnv {
            sandbox: sandbox.clone(),
            judge: Arc::new(StateJudge::new()),
            clock: Clock::default(),
            agent_name: "noop".into(),
            agent: ds.agent("think").ok(),
            scenarios: scenarios.clone(),
            models: Models {
                judge: Some(judge_model(&server)),
                ..Default::default()
            },
            user_can_end: false,
            message_timeout: Some(Duration::from_secs(10)),
            attempt_timeout: Some(Duration::from_mins(1)),
            dump: tb_eval::run::Dump::default(),
            provenance: serde_json::Map::default(),
        };
        let mut passes = 0;
        let mut judged = 0;
        for t in &tasks {
            let rec = attempt(&env, AgentChoice::Offline(OfflineAgent::Noop), t, 0).await;
            assert!(!rec.is_system_error, "{}: {:?}", t.uid, rec.metadata);
            let tr = rec.test_result.as_ref().unwrap();
            let want = &recorded[&t.uid][key];
            assert_eq!(
                (tr.result, tr.is_system_error, tr.tb.as_str()),
                (
                    want["passed"].as_bool().unwrap(),
                    want["system_error"].as_bool().unwrap(),
                    want["message"].as_str().unwrap()
                ),
                "{} {key}",
                t.uid
            );
            passes += usize::from(tr.result);
            if rec.metadata.contains_key("judge_calls") {
                judged += 1;
            }
        }
        assert_eq!(passes, want_passes, "{key}");
        assert!(judged > 0, "no attempt asked the judge model");
        assert!(
            server.count("judge") >= judged,
            "the judge calls reached the model"
        );
    }
}
