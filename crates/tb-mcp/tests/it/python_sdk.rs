//! The official MCP Python SDK (`pip install mcp`, see scripts/ci-python-deps.sh) connects to our
//! server over Streamable HTTP, lists a retail task's tools, replays its golden calls, and the
//! effects then match the golden hash; every text it received is the in-process text.
//!
//! Python is found in `$TB_PYTHON`, then `target/py-venv/bin/python`, then `python3`
//! (`#[needs(python_mcp)]`).

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;
use tb_mcp::{HttpOptions, Limits};

fn python() -> PathBuf {
    tb_test_support::need(tb_test_support::Need::PythonMcp)
}

/// Runs the Python script against a server for one task and checks everything it saw.
async fn replay_with_python(py: &Path, root: &Path, task_id: &str) {
    let inproc = InProcess::open(root);
    let task = inproc.task(task_id);
    let calls = golden_calls(&task);
    assert!(!calls.is_empty(), "{task_id} has golden calls");
    let expected = inproc.run(&task, &calls);
    assert!(expected.verdicts.iter().all(|v| v.passed));

    let server = server(registry(root, Limits::default()), HttpOptions::default()).await;
    let dir = tempfile::tempdir().unwrap();
    let calls_file = dir.path().join("calls.json");
    let list: Vec<Value> = calls.iter().map(|(t, a)| json!([t, a])).collect();
    std::fs::write(&calls_file, serde_json::to_string(&list).unwrap()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/replay_golden.py");
    let (py, url, id, file) = (
        py.to_path_buf(),
        server.url(),
        task_id.to_string(),
        calls_file.clone(),
    );
    let out = tokio::task::spawn_blocking(move || {
        Command::new(py)
            .arg(script)
            .arg(url)
            .arg(id)
            .arg(file)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python failed: {stderr}");
    let got: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("python output is not JSON ({e}); stderr: {stderr}"));

    assert_eq!(got["server"], "thinkingbox-rs");
    // Same tools, same names, descriptions and input schemas as in-process.
    assert_eq!(
        got["tools"],
        Value::Array(expected.tools.clone()),
        "tool list"
    );
    // Every result text is the in-process text, and none is an MCP-level error.
    let results = got["results"].as_array().unwrap();
    assert_eq!(results.len(), calls.len());
    for (i, (r, want)) in results.iter().zip(&expected.texts).enumerate() {
        assert_eq!(
            r["text"].as_str(),
            Some(want.as_str()),
            "call {i} ({})",
            calls[i].0
        );
        assert_eq!(r["isError"], false, "call {i}");
    }
    // Reserved and admin names are not tools of the session.
    let mut refusals = Vec::new();
    for (name, probe) in got["probes"].as_object().unwrap() {
        assert_eq!(probe["isError"], true, "{name}: {probe}");
        refusals.push(format!("{name}: {}", probe["text"].as_str().unwrap()));
    }
    // (the same names for every task this helper replays)
    insta::allow_duplicates! {
        insta::assert_snapshot!(refusals.join("\n"), @"
        __reserved__geteffects: Unknown tool: '__reserved__geteffects'
        __reserved__init: Unknown tool: '__reserved__init'
        __reserved__server_tool: Unknown tool: '__reserved__server_tool'
        get_effects: Unknown tool: 'get_effects'
        session_create: Unknown tool: 'session_create'
        ");
    }
    // The effects match the golden hash, and both equal the in-process ones.
    let effects = &got["effects"];
    assert_eq!(effects["passed"], true, "{}", effects["diff"]);
    assert_eq!(effects["result_hash"], effects["golden_hash"]);
    assert_eq!(
        effects["golden_hash"].as_str(),
        Some(expected.verdicts[0].golden_hash.as_str())
    );
    assert_eq!(
        effects["result_hash"].as_str(),
        Some(expected.hashes[0].as_str())
    );
    assert_eq!(effects["diff"], json!([]));
    assert!(effects["initial_state"].is_object());
    assert_eq!(got["deleted"]["deleted"], true);
    server.shutdown().await.unwrap();
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_replays_a_retail_task_from_the_bundled_example() {
    let py = python();
    replay_with_python(
        &py,
        &example_root(),
        "brightside_retail.py:test_bs005_return_defective_headphones",
    )
    .await;
}

#[tb_test_support::data_test]
#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_sdk_replays_a_benchmark_retail_task() {
    let py = python();
    let root = shared_data();
    // The first retail task of the benchmark that writes something.
    let inproc = InProcess::open(&root);
    let tasks = inproc
        .ds
        .tasks_in_file("sandbox_external_retail_group1.py")
        .unwrap();
    let task = tasks
        .iter()
        .find(|t| {
            let run = inproc.run(t, &[]);
            !run.verdicts.iter().all(|v| v.passed)
        })
        .expect("a retail task that changes the state");
    replay_with_python(&py, &root, &task.uid).await;
}
