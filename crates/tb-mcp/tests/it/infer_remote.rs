//! `tb infer --tools mcp://...`: attempts whose tools run in a `tb mcp-start` server give the
//! same records (conversation, finish reason, verdicts with their diffs) as in-process
//! attempts, for the golden and the noop agent on every task of the bundled example.

use crate::common;

use common::*;
use serde_json::Map;
use std::collections::HashMap;
use std::sync::Arc;
use tb_eval::attempt::{attempt, attempt_with};
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;
use tb_eval::run::{AgentChoice, Dump, Models, RunEnv};
use tb_eval::tools::RemoteTools;
use tb_mcp::client::McpServer;
use tb_mcp::{HttpOptions, Limits};
use tb_sandbox::Clock;

fn run_env(inproc: InProcess, tasks: &[tb_core::Task]) -> RunEnv {
    let mut scenarios = HashMap::new();
    for t in tasks {
        scenarios
            .entry(t.scenario.clone())
            .or_insert_with(|| inproc.ds.scenario(&t.scenario).unwrap());
    }
    RunEnv {
        sandbox: Arc::new(inproc.sandbox),
        judge: Arc::new(StateJudge::new()),
        clock: Clock::default(),
        agent_name: "offline".into(),
        agent: None,
        scenarios,
        models: Models::default(),
        user_can_end: false,
        message_timeout: None,
        attempt_timeout: None,
        dump: Dump::default(),
        provenance: Map::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn remote_tools_give_the_in_process_verdicts_on_the_example() {
    let root = example_root();
    let ids = example_tasks();
    assert_eq!(ids.len(), 8);
    let inproc = InProcess::open(&root);
    let tasks: Vec<tb_core::Task> = ids.iter().map(|id| inproc.task(id)).collect();
    let env = run_env(inproc, &tasks);
    let reg = registry(&root, Limits::default());
    let server = server(reg.clone(), HttpOptions::default()).await;
    let remote: Arc<dyn RemoteTools> =
        Arc::new(McpServer::new(&format!("mcp://{}", server.addr)).unwrap());
    let (mut passed, mut failed) = (0, 0);
    for task in &tasks {
        for agent in [OfflineAgent::Golden, OfflineAgent::Noop] {
            let choice = AgentChoice::Offline(agent);
            let local = attempt(&env, choice, task, 0).await;
            let rem = attempt_with(&env, Some(remote.as_ref()), choice, task, 0).await;
            let what = format!("{} ({agent:?})", task.uid);
            assert!(
                !local.is_system_error,
                "{what}: in-process: {:?}",
                local.metadata.get("error")
            );
            assert!(
                !rem.is_system_error,
                "{what}: remote: {:?}",
                rem.metadata.get("error")
            );
            let (lv, rv) = (local.verdict.clone().unwrap(), rem.verdict.clone().unwrap());
            assert_eq!(lv.passed, rv.passed, "{what}: passed");
            assert_eq!(lv.state.len(), rv.state.len(), "{what}: servers");
            for (l, r) in lv.state.iter().zip(&rv.state) {
                assert_eq!(l.server, r.server, "{what}");
                assert_eq!(l.passed, r.passed, "{what}: {} passed", l.server);
                assert_eq!(l.diff, r.diff, "{what}: {} diff", l.server);
                assert_eq!(l.result_hash, r.result_hash, "{what}: {} hash", l.server);
            }
            assert_eq!(lv, rv, "{what}: verdict");
            assert_eq!(local.test_result, rem.test_result, "{what}: test result");
            assert_eq!(
                local.finish_reason, rem.finish_reason,
                "{what}: finish reason"
            );
            assert_eq!(local.messages, rem.messages, "{what}: conversation");
            if rv.passed {
                passed += 1;
            } else {
                failed += 1;
            }
        }
    }
    // 8 golden runs pass; of the noop runs only the read-only task passes.
    assert_eq!((passed, failed), (9, 7));
    assert_eq!(reg.len(), 0, "every remote session was closed");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_is_a_system_error() {
    let root = example_root();
    let ids = example_tasks();
    let inproc = InProcess::open(&root);
    let tasks = vec![inproc.task(&ids[0])];
    let env = run_env(inproc, &tasks);
    // Bind then drop a listener: nothing listens on that port any more.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let remote = McpServer::new(&format!("mcp://127.0.0.1:{port}")).unwrap();
    let rec = attempt_with(
        &env,
        Some(&remote),
        AgentChoice::Offline(OfflineAgent::Golden),
        &tasks[0],
        0,
    )
    .await;
    assert!(rec.is_system_error);
    assert!(rec.verdict.is_none());
    assert_eq!(rec.metadata["error"]["class"], "tool_runtime");
}
