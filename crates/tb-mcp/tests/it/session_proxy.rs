//! The reference Session Proxy API, driven the way the Python reference `tb infer` drives it
//! (`MCPProxyClient`: session_create with the merged init config and the scenario's tool
//! names, list_tools, call_tool, get_effects, session_destroy), and one session served alone on
//! a byte stream (what `tb mcp-stdio` does on stdin/stdout).

use crate::common;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use serde_json::{Map, Value, json};
use std::path::Path;
use tb_mcp::{HttpOptions, Limits};

async fn post(h: &reqwest::Client, url: String, body: Value) -> (u16, Value) {
    let resp = h.post(url).json(&body).send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap())
}

/// `POST <base>/session_create` with `body`.
async fn create_session(h: &reqwest::Client, base: &str, body: Value) -> (u16, Value) {
    post(h, format!("{base}/session_create"), body).await
}

/// The scenario's tool names, as the reference client sends them in `available_tools`.
fn scenario_tools(inproc: &InProcess, scenario: &str) -> Vec<String> {
    inproc
        .ds
        .scenario(scenario)
        .unwrap()
        .tools
        .iter()
        .map(|t| t.name.clone())
        .collect()
}

async fn proxy_flow(root: &Path, ids: &[String]) {
    let inproc = InProcess::open(root);
    let server = server(registry(root, Limits::default()), HttpOptions::default()).await;
    let base = server.url();
    let h = http();
    for id in ids {
        let task = inproc.task(id);
        for (golden, calls) in golden_and_noop(&task) {
            let expected = inproc.run(&task, &calls);
            let sid = format!("{}-{golden}", uuid_like(id));
            let (s, b) = post(
                &h,
                format!("{base}/session_create"),
                json!({
                    "session_id": sid,
                    "server_config": task.world_state,
                    "available_tools": scenario_tools(&inproc, &task.scenario),
                    "timeout": 108.0,
                    "geteffects_proxy_info": true,
                }),
            )
            .await;
            assert_eq!(s, 200, "{id}: {b}");
            assert_eq!(b["success"], true);
            assert_eq!(b["content"]["type"], "object");
            let init: Map<String, Value> = task
                .servers()
                .iter()
                .map(|s| (s.clone(), json!({})))
                .collect();
            assert_eq!(b["content"]["value"], Value::Object(init));

            let (s, b) = post(&h, format!("{base}/list_tools"), json!({"session_id": sid})).await;
            assert_eq!(s, 200);
            let tools = b["content"]["value"]["tools"].as_object().unwrap();
            assert_eq!(tools.len(), expected.tools.len(), "{id}");
            for t in &expected.tools {
                let got = &tools[t["name"].as_str().unwrap()];
                assert_eq!(got["description"], t["description"]);
                assert_eq!(got["inputSchema"], t["inputSchema"]);
            }

            for ((tool, args), want) in calls.iter().zip(&expected.texts) {
                let (s, b) = post(
                    &h,
                    format!("{base}/call_tool"),
                    json!({"session_id": sid, "tool_name": tool, "arguments": args}),
                )
                .await;
                assert_eq!(s, 200, "{id} {tool}: {b}");
                assert_eq!(b["content"]["type"], "string");
                assert_eq!(
                    b["content"]["value"].as_str(),
                    Some(want.as_str()),
                    "{id} {tool}"
                );
            }

            let (s, b) = post(
                &h,
                format!("{base}/get_effects"),
                json!({"session_id": sid}),
            )
            .await;
            assert_eq!(s, 200);
            let effects = &b["content"]["value"];
            for v in &expected.verdicts {
                let e = &effects[&v.server];
                assert_eq!(
                    e["result_db_hash"].as_str(),
                    Some(v.result_hash.as_str()),
                    "{id}"
                );
                assert_eq!(
                    e["golden_db_hash"].as_str(),
                    Some(v.golden_hash.as_str()),
                    "{id}"
                );
                assert_eq!(e["diff"], Value::Array(v.diff.clone()), "{id}");
                assert!(e["initial_db_state"].is_object() && e["result_db_state"].is_object());
                assert!(e["golden_db_state"].is_object());
                // What the benchmark's validate_database asserts:
                assert_eq!(e["result_db_hash"] == e["golden_db_hash"], v.passed, "{id}");
                assert!(v.passed || !golden, "{id}: the golden run passes");
            }
            assert_eq!(
                effects["__reserved__proxy_info"]["tool_calls"]
                    .as_array()
                    .unwrap()
                    .len(),
                calls.len()
            );

            let (s, b) = post(
                &h,
                format!("{base}/session_destroy"),
                json!({"session_id": sid}),
            )
            .await;
            assert_eq!((s, &b["content"]["value"]), (200, &json!("Ok")));
            let (s, b) = post(
                &h,
                format!("{base}/session_destroy"),
                json!({"session_id": sid}),
            )
            .await;
            assert_eq!(
                (s, &b["content"]["value"]),
                (400, &json!("Session does not exist"))
            );
        }
    }
    server.shutdown().await.unwrap();
}

fn uuid_like(id: &str) -> String {
    id.chars().filter(char::is_ascii_alphanumeric).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_client_flow_on_the_example() {
    proxy_flow(&example_root(), &example_tasks()).await;
}

#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_client_flow_on_one_task_per_benchmark_domain() {
    let root = shared_data();
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let tasks = ds.load_test_list(&bench_test_list(&root)).unwrap();
    let mut seen = std::collections::HashSet::new();
    let ids: Vec<String> = tasks
        .into_iter()
        .filter(|t| seen.insert(t.scenario.clone()))
        .map(|t| t.uid)
        .collect();
    assert_eq!(ids.len(), 5, "{ids:?}");
    proxy_flow(&root, &ids).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_refusals_match_the_reference() {
    let root = example_root();
    let inproc = InProcess::open(&root);
    let task = inproc.task("brightside_retail.py:test_bs001_cancel_unshipped_order");
    let server = server(registry(&root, Limits::default()), HttpOptions::default()).await;
    let base = server.url();
    let h = http();
    let tools = scenario_tools(&inproc, &task.scenario);
    let create = |sid: &str, config: Value, tools: &[String]| json!({"session_id": sid, "server_config": config, "available_tools": tools});
    let cfg = Value::Object(task.world_state.clone());

    let (s, b) = create_session(&h, &base, create("a", cfg.clone(), &tools)).await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = create_session(&h, &base, create("a", cfg.clone(), &tools)).await;
    assert_eq!(s, 400);
    assert_message_starts(&b, "Session already exists");
    let (s, b) = create_session(&h, &base, create("b", json!({"no_such_server": {}}), &[])).await;
    assert_eq!(s, 400);
    assert_message_starts(&b, "Server no_such_server does not exist");
    let (s, b) = create_session(
        &h,
        &base,
        create("c", cfg.clone(), &["no_such_tool".to_string()]),
    )
    .await;
    assert_eq!(
        (s, &b["content"]["value"]),
        (400, &json!("Tool no_such_tool does not exist"))
    );
    let bad_patch =
        json!({"sandbox_external_retail": {"data_patch": {"no_such_table": [{"id": 1}]}}});
    let (s, b) = create_session(&h, &base, create("d", bad_patch, &[])).await;
    assert_eq!(s, 400, "{b}");
    insta::assert_snapshot!(b["content"]["value"], @r#""Error calling sandbox_external_retail init: Data patch validation failed: Unknown table 'no_such_table'""#);
    let (s, b) = create_session(&h, &base, json!({"session_id": "e"})).await;
    assert_eq!(s, 400);
    assert_message_starts(&b, "Invalid input");

    // Only visible tools are callable, also through __reserved__server_tool (the reference
    // lets it reach any server tool; here the session's grant holds on every route).
    let (s, b) = create_session(
        &h,
        &base,
        create("f", cfg.clone(), &["get_order".to_string()]),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = post(&h, format!("{base}/list_tools"), json!({"session_id": "f"})).await;
    assert_eq!(s, 200);
    assert_eq!(b["content"]["value"]["tools"].as_object().unwrap().len(), 1);
    let (s, b) = post(
        &h,
        format!("{base}/call_tool"),
        json!({"session_id": "f", "tool_name": "cancel_order", "arguments": {}}),
    )
    .await;
    assert_eq!(
        (s, &b["content"]["value"]),
        (400, &json!("Tool cancel_order does not exist"))
    );
    let (s, b) = post(
        &h,
        format!("{base}/call_tool"),
        json!({"session_id": "f", "tool_name": "__reserved__server_tool", "arguments": {"server_name": "sandbox_external_retail", "tool_name": "get_customer_profile", "arguments": {"customer_id": "CUS-1002"}}}),
    )
    .await;
    assert_eq!(s, 400, "{b}");
    let msg = b["content"]["value"].as_str().unwrap();
    insta::assert_snapshot!(msg, @"Tool sandbox_external_retail > get_customer_profile is not granted to this session (it is not in the session's tool list)");
    assert!(!msg.contains("CUS-1002"), "{msg}");
    // A granted tool is reachable through it.
    let (s, b) = post(
        &h,
        format!("{base}/call_tool"),
        json!({"session_id": "f", "tool_name": "__reserved__server_tool", "arguments": {"server_name": "sandbox_external_retail", "tool_name": "get_order", "arguments": {"order_id": "ORD-1"}}}),
    )
    .await;
    assert_eq!(s, 200, "{b}");

    // session_info merges; garbage_collect with 0 minutes removes every idle session.
    let (_, b) = post(
        &h,
        format!("{base}/session_info"),
        json!({"session_id": "a", "update": {"k": 1}}),
    )
    .await;
    assert_eq!(b["content"]["value"], json!({"k": 1}));
    let (_, b) = post(
        &h,
        format!("{base}/session_info"),
        json!({"session_id": "a", "update": {"j": 2}}),
    )
    .await;
    assert_eq!(b["content"]["value"], json!({"k": 1, "j": 2}));
    let (s, b) = post(
        &h,
        format!("{base}/garbage_collect"),
        json!({"inactivity_minutes": 0}),
    )
    .await;
    assert_eq!(s, 200);
    assert_eq!(b["content"]["value"]["count"], 2);
    let (s, b) = post(&h, format!("{base}/session_destroy_all"), json!({})).await;
    assert_eq!((s, &b["content"]["value"]), (200, &json!("Ok")));
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_session_served_alone_on_a_stream() {
    let id = "brightside_retail.py:test_bs005_return_defective_headphones";
    let (root, inproc, task) = example_task(id);
    let calls = golden_calls(&task);
    let expected = inproc.run(&task, &calls);
    let registry = registry(&root, Limits::default());
    let (serving, client_io) = serve_in_memory(registry.clone(), id);
    let client = ().serve(client_io).await.unwrap();
    let listed: Vec<Value> = client
        .list_all_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    assert_eq!(listed, expected.tools);
    for ((tool, args), want) in calls.iter().zip(&expected.texts) {
        let r = client
            .call_tool(
                CallToolRequestParams::new(tool.clone())
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .unwrap();
        assert_eq!(tb_mcp::client::reply_of(tool, &r).text, *want);
    }
    client.cancel().await.unwrap();
    let effects = serving.await.unwrap().unwrap();
    assert!(effects.passed());
    assert_eq!(
        effects.servers[0].golden_hash,
        expected.verdicts[0].golden_hash
    );
    assert!(
        registry.is_empty(),
        "the session closes with the connection"
    );
}
