//! `McpTools` (admin create + MCP Streamable HTTP client) gives the same tool list, the same
//! result texts and the same verdicts as the in-process session, for the golden agent (every
//! task passes) and the noop agent (same failures, same diffs).

use crate::common;

use common::*;
use serde_json::Value;
use std::path::Path;
use tb_mcp::client::McpServer;
use tb_mcp::{HttpOptions, Limits};
use tb_sandbox::CallOutcome;

async fn check_tasks(root: &Path, ids: &[String]) -> (usize, usize) {
    let inproc = InProcess::open(root);
    let server = server(registry(root, Limits::default()), HttpOptions::default()).await;
    let client = McpServer::new(&format!("mcp://{}", server.addr)).unwrap();
    let (mut passed, mut failed) = (0, 0);
    for id in ids {
        let task = inproc.task(id);
        for (golden, calls) in golden_and_noop(&task) {
            let expected = inproc.run(&task, &calls);
            let tools = client.open(id).await.unwrap();
            assert_eq!(
                tools.tool_list(),
                expected.tools.as_slice(),
                "{id}: tool list"
            );
            for ((tool, args), want) in calls.iter().zip(&expected.texts) {
                let reply = tools.call(tool, args).await.unwrap();
                assert_eq!(&reply.text, want, "{id}: {tool}");
                assert_eq!(reply.outcome.to_text(tool), *want, "{id}: {tool} outcome");
            }
            let verdicts = tools.verdicts().await.unwrap();
            assert_eq!(verdicts, expected.verdicts, "{id} (golden: {golden})");
            if verdicts.iter().all(|v| v.passed) {
                passed += 1;
            } else {
                failed += 1;
            }
            tools.close().await.unwrap();
        }
    }
    server.shutdown().await.unwrap();
    (passed, failed)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_and_noop_verdicts_match_in_process_on_the_example() {
    let ids = example_tasks();
    assert_eq!(ids.len(), 8);
    let (passed, failed) = check_tasks(&example_root(), &ids).await;
    // 8 golden runs pass; of the noop runs only the read-only task passes.
    assert_eq!((passed, failed), (9, 7));
}

#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_and_noop_verdicts_match_in_process_on_the_benchmark_retail_tasks() {
    let root = shared_data();
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let ids: Vec<String> = ds
        .tasks_in_file("sandbox_external_retail_group1.py")
        .unwrap()
        .into_iter()
        .map(|t| t.uid)
        .collect();
    assert!(!ids.is_empty());
    let (passed, _failed) = check_tasks(&root, &ids).await;
    assert!(passed >= ids.len(), "every golden run passes");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_errors_and_unknown_tools_come_back_as_in_process() {
    let id = "brightside_retail.py:test_bs001_cancel_unshipped_order";
    let (root, inproc, task) = example_task(id);
    let server = server(registry(&root, Limits::default()), HttpOptions::default()).await;
    let tools = McpServer::new(&server.url())
        .unwrap()
        .open(id)
        .await
        .unwrap();
    let cases: Vec<(String, Value)> = vec![
        // wrong argument type, missing field, extra field, unknown id, unknown and reserved tools
        ("get_order".into(), serde_json::json!({"order_id": 5})),
        ("get_order".into(), serde_json::json!({})),
        (
            "get_order".into(),
            serde_json::json!({"order_id": "ORD-5004", "x": 1}),
        ),
        (
            "get_order".into(),
            serde_json::json!({"order_id": "ORD-0000"}),
        ),
        ("no_such_tool".into(), serde_json::json!({})),
        ("__reserved__geteffects".into(), serde_json::json!({})),
        ("__reserved__init".into(), serde_json::json!({"config": {}})),
    ];
    let expected = inproc.run(&task, &cases);
    for ((tool, args), want) in cases.iter().zip(&expected.texts) {
        let reply = tools.call(tool, args).await.unwrap();
        assert_eq!(&reply.text, want, "{tool} {args}");
    }
    let reply = tools
        .call("__reserved__geteffects", &serde_json::json!({}))
        .await
        .unwrap();
    assert_eq!(
        reply.outcome,
        CallOutcome::UnknownTool("__reserved__geteffects".into())
    );
    let err = tools
        .call("get_order", &serde_json::json!([1]))
        .await
        .unwrap_err();
    insta::assert_snapshot!(err, @"arguments of `get_order` must be a JSON object, got [1]");
    tools.close().await.unwrap();
    server.shutdown().await.unwrap();
}
