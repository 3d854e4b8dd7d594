//! A hostile client gets an answer to everything it sends, and nothing it should not: JSON-RPC
//! errors for bad MCP messages (HTTP and stdio), bounded numbers and ids on the Session Proxy
//! API, task ids only inside the data root, the admin token, and the tool grant on every route.

use crate::common;

use common::*;
use serde_json::{Value, json};
use tb_mcp::{HttpOptions, Limits};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

fn mcp_post(
    h: &reqwest::Client,
    url: &str,
    body: impl Into<reqwest::Body>,
) -> reqwest::RequestBuilder {
    h.post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(body)
}

/// What every bad MCP message must get, over HTTP and stdio: (body, JSON-RPC code).
fn bad_messages() -> Vec<(Vec<u8>, i64)> {
    let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
    vec![
        (b"this is not json".to_vec(), -32700),
        (b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": \xff}".to_vec(), -32700),
        (deep.into_bytes(), -32700),
        (
            br#"{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"x": 1e999}}"#.to_vec(),
            -32700,
        ),
        (b"17".to_vec(), -32600),
        (br#"{"id": 2, "method": "tools/list"}"#.to_vec(), -32600),
        (
            br#"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": 7}}"#.to_vec(),
            -32602,
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"arguments": {}}}"#
                .to_vec(),
            -32602,
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "get_order", "arguments": [1]}}"#
                .to_vec(),
            -32602,
        ),
        (
            br#"{"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": null}"#.to_vec(),
            -32602,
        ),
    ]
}

fn check_error(reply: &Value, code: i64, what: &str) {
    assert_eq!(reply["jsonrpc"], "2.0", "{what}: {reply}");
    assert_eq!(reply["error"]["code"], code, "{what}: {reply}");
    let msg = reply["error"]["message"].as_str().unwrap_or_default();
    assert!(
        !msg.is_empty() && !msg.contains("Method not found"),
        "{what}: {reply}"
    );
    assert!(
        msg.len() < 1000,
        "{what}: the error quotes the input: {msg}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_mcp_messages_over_http_get_json_rpc_errors() {
    let registry = registry(&example_root(), Limits::default());
    let server = server(registry, HttpOptions::default()).await;
    let h = http();
    let (s, b) = send(
        h.post(format!("{}/admin/sessions", server.url()))
            .json(&json!({"task": TASK})),
    )
    .await;
    assert_eq!(s, 201, "{b}");
    let url = b["mcp_url"].as_str().unwrap().to_string();
    for (body, code) in bad_messages() {
        let what = String::from_utf8_lossy(&body[..body.len().min(80)]).into_owned();
        let (status, reply) = send(mcp_post(&h, &url, body)).await;
        assert!(
            status == 200 || status == 400,
            "{what}: HTTP {status} {reply}"
        );
        check_error(&reply, code, &what);
    }
    // The id of a request with bad params is kept.
    let (_, reply) = send(mcp_post(
        &h,
        &url,
        r#"{"jsonrpc": "2.0", "id": "q", "method": "tools/call", "params": {"name": 7}}"#,
    ))
    .await;
    assert_eq!(reply["id"], "q");
    // A good call still works on the same session.
    let (status, reply) = send(mcp_post(
        &h,
        &url,
        r#"{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "get_order", "arguments": {"order_id": "ORD-1"}}}"#,
    ))
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["id"], 9);
    assert!(reply.get("result").is_some(), "{reply}");
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_lines_over_stdio_get_json_rpc_errors() {
    let registry = registry(&example_root(), Limits::default());
    let (serving, client_io) = serve_in_memory(registry.clone(), TASK);
    let (client_in, mut client_out) = tokio::io::split(client_io);
    let mut replies = BufReader::new(client_in).lines();
    let mut cases = bad_messages();
    // A line longer than the limit (9 MiB), then a last bad line without its newline.
    cases.push((
        vec![b'x'; tb_mcp::stdio::MAX_LINE_BYTES + (1 << 20)],
        -32700,
    ));
    let sent = cases.clone();
    let writer = tokio::spawn(async move {
        for (body, _) in sent {
            client_out.write_all(&body).await.unwrap();
            client_out.write_all(b"\n").await.unwrap();
        }
        client_out.write_all(b"{oops").await.unwrap();
        client_out.shutdown().await.unwrap();
        client_out
    });
    for (i, (body, code)) in cases.iter().enumerate() {
        let what = format!(
            "line {}: {}",
            i + 1,
            String::from_utf8_lossy(&body[..body.len().min(60)])
        );
        let line = tokio::time::timeout(std::time::Duration::from_mins(1), replies.next_line())
            .await
            .expect("an answer to every line")
            .unwrap()
            .expect("a reply line");
        check_error(&serde_json::from_str(&line).unwrap(), *code, &what);
    }
    let last = replies
        .next_line()
        .await
        .unwrap()
        .expect("the last line's reply");
    check_error(&serde_json::from_str(&last).unwrap(), -32700, "last line");
    let _client_out = writer.await.unwrap();
    // End of input ends the session (the client never initialized: rmcp says so).
    let ended = tokio::time::timeout(std::time::Duration::from_mins(1), serving)
        .await
        .expect("the session ends with its input")
        .unwrap();
    match ended {
        Err(tb_mcp::stdio::StdioError::Transport(m)) => {
            insta::assert_snapshot!(m, @"connection closed: initialize request");
        }
        other => panic!("expected the missing initialize, got {other:?}"),
    }
    assert!(registry.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proxy_numbers_ids_and_task_paths_are_bounded() {
    let registry = registry(&example_root(), Limits::default());
    let server = server(registry, HttpOptions::default()).await;
    let base = server.url();
    let h = http();
    let post = |path: &str, body: Value| send(h.post(format!("{base}{path}")).json(&body));

    // Numbers that would overflow a Duration: a clear 400, and the server goes on.
    let mut refusals = Vec::new();
    for n in [json!(1e300), json!(1.797_693_134_862_315_7e308), json!(-1)] {
        let (s, b) = post("/garbage_collect", json!({"inactivity_minutes": n})).await;
        assert_eq!(s, 400, "{n}: {b}");
        refusals.push(format!("garbage_collect {n}: {}", b["content"]["value"]));
        let cfg = json!({"sandbox_external_retail": {}});
        let (s, b) = post(
            "/session_create",
            json!({"session_id": "t1", "server_config": cfg, "available_tools": [], "timeout": n}),
        )
        .await;
        assert_eq!(s, 400, "{n}: {b}");
        refusals.push(format!("session_create {n}: {}", b["content"]["value"]));
    }
    insta::assert_snapshot!(refusals.join("\n"), @r#"
    garbage_collect 1e+300: "Invalid input: field `inactivity_minutes` is too large (1e+300; at most 43200 are accepted)"
    session_create 1e+300: "Invalid input: field `timeout` is too large (1e+300 seconds; at most 2592000 are accepted)"
    garbage_collect 1.7976931348623157e+308: "Invalid input: field `inactivity_minutes` is too large (1.7976931348623157e+308; at most 43200 are accepted)"
    session_create 1.7976931348623157e+308: "Invalid input: field `timeout` is too large (1.7976931348623157e+308 seconds; at most 2592000 are accepted)"
    garbage_collect -1: "Invalid input: field `inactivity_minutes` must be a non-negative number"
    session_create -1: "Invalid input: field `timeout` must be a non-negative number, got -1"
    "#);
    let (s, _) = send(h.get(format!("{base}/health"))).await;
    assert_eq!(s, 200);

    // Session ids: length and characters.
    let cfg = json!({"sandbox_external_retail": {}});
    for id in [
        "x".repeat(10_000),
        "a/b".into(),
        "a b".into(),
        String::new(),
        "é".into(),
    ] {
        let (s, b) = post(
            "/session_create",
            json!({"session_id": id, "server_config": cfg, "available_tools": []}),
        )
        .await;
        assert_eq!(s, 400, "{b}");
        assert!(b.to_string().len() < 1000, "the error echoes the id: {b}");
    }
    let (s, b) = post(
        "/session_create",
        json!({"session_id": "3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b", "server_config": cfg, "available_tools": []}),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let (s, b) = post("/session_info", json!({"session_id": "y".repeat(100_000)})).await;
    assert_eq!(s, 400);
    assert!(b.to_string().len() < 1000, "{b}");

    // Task ids: only names inside the data root, and the same answer whether a file exists.
    let mut answers = Vec::new();
    for task in [
        "/etc/passwd:x",
        "../../../../etc/passwd:x",
        "/nonexistent/file.py:x",
        "../brightside_retail.py:x",
    ] {
        let (s, b) = post("/admin/sessions", json!({"task": task})).await;
        assert_eq!(s, 400, "{task}: {b}");
        let msg = b["error"].as_str().unwrap().to_string();
        answers.push(msg.replace(task, "T"));
    }
    assert!(answers.windows(2).all(|w| w[0] == w[1]), "{answers:?}");
    // The one answer, the task id shown as T.
    insta::assert_snapshot!(answers[0], @"cannot load task `T`: `T` is not a task id (want `file.py:function`, the file a test-case file name of the data root)");
    server.shutdown().await.unwrap();
}
