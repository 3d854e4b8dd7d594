//! The OpenEnv ThinkingBox adapter's packaged evaluator (`thinkingbox-eval`, from a local
//! reconstruction installed with the reference's ThinkingBox runtime in a venv outside this
//! project) against `tb openenv` on five benchmark tasks, one per domain, with a scripted agent
//! model: the golden calls then a closing message (every episode passes) and the same with an
//! essential call skipped (every episode fails).
//!
//! `thinkingbox-eval` requires each episode's server provenance to equal its own run's, the
//! ThinkingBox runtime included; `tb openenv` names its own runtime, so every episode lands in
//! the evaluator's errors file with its provenance message. Checked: each record carries the
//! server's verdict (pass / fail as expected), and the server's provenance differs from the
//! run's on exactly the three runtime fields.
//!
//! The evaluator is `tb_test_support::adapter_eval()`; the data is the benchmark data checkout.

use crate::common::*;
use serde_json::{Value, json};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tb_core::Task;
use tb_dataset::Dataset;
use tb_eval::root::LoadedRoot;
use tb_mock_model::{Api, MockRequest, Reply, Turn};

/// The evaluator's message when the server's provenance is not the run's.
const PROVENANCE_REFUSAL: &str =
    "ThinkingBox server execution provenance did not exactly match the run";

/// The fields of `execution_provenance` naming the ThinkingBox runtime.
const RUNTIME_FIELDS: [&str; 3] = [
    "thinkingbox_revision",
    "thinkingbox_source_sha256",
    "thinkingbox_source_type",
];

const PROVENANCE_FIELDS: [&str; 11] = [
    "thinkingbox_revision",
    "thinkingbox_source_sha256",
    "thinkingbox_source_type",
    "data_release",
    "data_revision",
    "config_sha256",
    "data_bundle_sha256",
    "manifest_path",
    "manifest_sha256",
    "manifest_uids_sha256",
    "task_count",
];

/// The first task of each non-rubric file of the release list: one per domain.
fn one_per_domain(ds: &Dataset, data: &Path) -> Vec<Task> {
    let tasks = ds
        .load_test_list(&data.join(tb_openenv::env::CANONICAL_TEST_LIST))
        .unwrap();
    let mut seen = BTreeSet::new();
    let picked: Vec<Task> = tasks
        .into_iter()
        .filter(|t| !t.uid.contains("rubrics"))
        .filter(|t| seen.insert(t.scenario.clone()))
        .collect();
    assert_eq!(picked.len(), 5, "{seen:?}");
    picked
}

/// The agent model: the calls scripted for the task whose query opens the conversation, one
/// per reply, then a closing message.
fn agent_script(plans: HashMap<String, Vec<(String, Value)>>) -> impl Fn(&MockRequest) -> Reply {
    move |r: &MockRequest| {
        let first = r.turns.iter().find_map(|t| match t {
            Turn::User(s) => Some(s.as_str()),
            _ => None,
        });
        let calls = first
            .and_then(|q| {
                plans
                    .iter()
                    .find(|(query, _)| !query.is_empty() && q.contains(query.as_str()))
            })
            .map(|(_, c)| c);
        match calls.and_then(|c| c.get(r.tool_calls_so_far())) {
            Some(c) => Reply::Calls(vec![c.clone()]),
            None => Reply::Text("All done: your request is handled. <DONE>".into()),
        }
    }
}

fn native_config(
    dir: &Path,
    name: &str,
    mock: &tb_mock_model::MockServer,
    agent_role: &str,
) -> PathBuf {
    let model = |role: &str, indent: &str| {
        [
            "type: aoai".to_string(),
            format!("deployment: mock-{role}"),
            format!("endpoint_url: {}", mock.url(role, Api::Chat)),
            "temperature: 0.0".into(),
            "max_completion_tokens: 512".into(),
            "timeout: 60.0".into(),
        ]
        .iter()
        .map(|l| format!("{indent}{l}\n"))
        .collect::<String>()
    };
    let text = format!(
        "mcp_proxy:\n  endpoint_url: http://127.0.0.1:9\norchestrator:\n  type: thinkingbox\n  agent_model:\n{}user_model:\n{}judge_model:\n{}judge_type: legacy\n",
        model(agent_role, "    "),
        model("user", "  "),
        model("judge", "  "),
    );
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

#[tb_test_support::adapter_eval_test]
#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinkingbox_eval_reaches_every_verdict_and_differs_only_on_the_runtime() {
    let eval = tb_test_support::adapter_eval();
    let data = tb_test_support::data();
    let ds = Dataset::open(&data).unwrap();
    let sandbox = LoadedRoot::load(ds.root()).unwrap();
    let tasks = one_per_domain(&ds, &data);
    let mut full = HashMap::new();
    let mut skip = HashMap::new();
    for t in &tasks {
        let calls = golden_calls(t);
        let mut fewer = calls.clone();
        fewer.remove(essential_call(&sandbox, t));
        let query = t.query.clone().unwrap_or_default();
        let key: String = query.chars().take(60).collect();
        full.insert(key.clone(), calls);
        skip.insert(key, fewer);
    }
    let mock = mock().await;
    mock.set_script("agent", agent_script(full));
    mock.set_script("agent_skip", agent_script(skip));
    let dir = tempfile::tempdir().unwrap();
    let cfg_agent = native_config(dir.path(), "eval-agent.yaml", &mock, "agent");
    let cfg_skip = native_config(dir.path(), "eval-agent-skip.yaml", &mock, "agent_skip");
    let list = dir.path().join("five.yaml");
    let uids: Vec<&str> = tasks.iter().map(|t| t.uid.as_str()).collect();
    std::fs::write(&list, serde_json::to_string(&uids).unwrap()).unwrap();
    let server = start_server(tb_openenv::Options::new(&data, Some(cfg_agent.clone()))).await;

    let mut summary = Vec::new();
    for (label, cfg, want) in [
        ("agent", &cfg_agent, "pass"),
        ("agent-skip", &cfg_skip, "fail"),
    ] {
        let out = dir.path().join(label);
        let child = tokio::process::Command::new(&eval)
            .arg(&list)
            .args(["--config".as_ref(), cfg.as_os_str()])
            .args(["--dataset".as_ref(), data.as_os_str()])
            .args(["--base-url", &server.url()])
            .args(["--output".as_ref(), out.join("results.jsonl").as_os_str()])
            .kill_on_drop(true)
            .output();
        // A guard against a hung evaluator, not a timing check.
        let run = tokio::time::timeout(Duration::from_mins(15), child)
            .await
            .expect("thinkingbox-eval did not finish")
            .expect("running thinkingbox-eval");
        let stderr = String::from_utf8_lossy(&run.stderr);
        assert!(!run.status.success(), "{label}: {stderr}");
        assert!(
            stderr.contains("5 repetitions remain quarantined and retryable"),
            "{label}: {stderr}"
        );
        let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
        assert!(results.trim().is_empty(), "{label}: {results}");
        let errors = tb_test_support::json_lines(&out.join("errors.jsonl"));
        assert_eq!(errors.len(), 5, "{label}");
        for e in &errors {
            let uid = e["uid"].as_str().unwrap();
            assert_eq!(
                e["error"]["message"], PROVENANCE_REFUSAL,
                "{label} {uid}: {}",
                e["error"]
            );
            let audit = &e["observation_audit"];
            assert_eq!(audit["kind"], "terminal", "{label} {uid}: {audit}");
            assert_eq!(audit["reward_type"], want, "{label} {uid}: {audit}");
            assert_eq!(audit["system_error"], false);
            assert_eq!(audit["test_summary"]["graded"], true);
            let server_side = &audit["metadata"]["execution_provenance"];
            let run_side = &e["provenance"];
            let differing: Vec<&str> = PROVENANCE_FIELDS
                .into_iter()
                .filter(|k| {
                    let mine = if *k == "config_sha256" {
                        &run_side["config"]["sha256"]
                    } else {
                        &run_side[*k]
                    };
                    mine != &server_side[*k]
                })
                .collect();
            assert_eq!(
                differing, RUNTIME_FIELDS,
                "{label} {uid}: {server_side} vs {run_side}"
            );
            summary.push(json!({"run": label, "uid": uid, "reward_type": audit["reward_type"], "finish_reason": audit["finish_reason"], "error": e["error"]["message"]}));
        }
    }
    for s in &summary {
        eprintln!("{s}");
    }
    server.shutdown().await.unwrap();
}
