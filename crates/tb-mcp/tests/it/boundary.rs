//! The trust boundary and the refusals: what an agent's MCP session can and cannot reach, the
//! admin token, and every limit answering with a clear error instead of hanging.

use crate::common;

use common::*;
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use tb_mcp::client::{ClientError, McpServer};
use tb_mcp::{HttpOptions, Limits};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_session_reaches_only_its_tools_and_admin_needs_the_token() {
    let registry = registry(&example_root(), Limits::default());
    let options = HttpOptions {
        token: Some("s3cret".into()),
        any_host: false,
        ..HttpOptions::default()
    };
    let server = server(registry, options).await;
    let base = server.url();
    let h = http();

    // Without the token: every admin and proxy route refuses; /health answers.
    for (method, path) in [
        (reqwest::Method::POST, "/admin/sessions"),
        (reqwest::Method::GET, "/admin/sessions"),
        (reqwest::Method::GET, "/admin/sessions/x/effects"),
        (reqwest::Method::DELETE, "/admin/sessions/x"),
        (reqwest::Method::POST, "/session_create"),
        (reqwest::Method::POST, "/call_tool"),
        (reqwest::Method::POST, "/get_effects"),
        (reqwest::Method::POST, "/list_tools"),
        (reqwest::Method::POST, "/session_destroy_all"),
        (reqwest::Method::POST, "/mcp"),
    ] {
        let (status, body) = send(
            h.request(method.clone(), format!("{base}{path}"))
                .json(&json!({"task": TASK})),
        )
        .await;
        assert_eq!(status, 401, "{method} {path}: {body}");
        let (status, _) = send(
            h.request(method.clone(), format!("{base}{path}"))
                .bearer_auth("wrong")
                .json(&json!({})),
        )
        .await;
        assert_eq!(status, 401, "{method} {path} with a wrong token");
    }
    let health = h.get(format!("{base}/health")).send().await.unwrap();
    assert_eq!(health.text().await.unwrap(), "OK");

    // With the token the evaluator opens a session; the agent needs only the mcp_url.
    let client = McpServer::new(&base)
        .unwrap()
        .with_token(Some("s3cret".into()));
    let tools = client.open(TASK).await.unwrap();
    assert!(
        tools
            .mcp_url()
            .ends_with(&format!("/mcp/{}", tools.session()))
    );
    let names: Vec<&str> = tools
        .tool_list()
        .iter()
        .filter_map(|t| t["name"].as_str())
        .collect();
    assert_eq!(names.len(), 33);
    for n in &names {
        assert!(!n.starts_with("__"), "{n} is listed");
        assert!(
            !n.contains("effects") && !n.contains("session"),
            "{n} is listed"
        );
    }
    let listed = serde_json::to_string(tools.tool_list()).unwrap();
    assert!(
        !listed.contains("golden"),
        "the tool list mentions golden data"
    );
    for name in [
        "__reserved__geteffects",
        "__reserved__init",
        "__reserved__teardown",
        "__reserved__server_tool",
        "get_effects",
        "session_destroy",
    ] {
        let reply = tools
            .call(name, &json!({"server_name": "sandbox_external_retail", "tool_name": "get_order", "arguments": {"order_id": "ORD-5004"}}))
            .await
            .unwrap();
        assert_eq!(
            reply.outcome,
            tb_sandbox::CallOutcome::UnknownTool(name.into()),
            "{name}"
        );
    }
    // A tool result never carries the golden state or the hashes.
    let reply = tools
        .call("get_order", &json!({"order_id": "ORD-5004"}))
        .await
        .unwrap();
    assert!(!reply.text.contains("golden") && !reply.text.contains("hash"));

    // The shared /mcp endpoint (header-routed, as the reference) is behind the token too.
    let mut headers = HashMap::new();
    headers.insert(
        axum::http::HeaderName::from_static("x-tb-session-id"),
        axum::http::HeaderValue::from_str(tools.session()).unwrap(),
    );
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"))
        .custom_headers(headers.clone())
        .auth_header("s3cret");
    let shared = ()
        .serve(StreamableHttpClientTransport::with_client(
            h.clone(),
            config,
        ))
        .await
        .unwrap();
    let listed = shared.list_all_tools().await.unwrap();
    assert_eq!(listed.len(), 33);
    let r = shared
        .call_tool(
            CallToolRequestParams::new("get_order")
                .with_arguments(json!({"order_id": "ORD-5004"}).as_object().unwrap().clone()),
        )
        .await
        .unwrap();
    assert_eq!(r.is_error, Some(false));
    shared.cancel().await.unwrap();
    let config = StreamableHttpClientTransportConfig::with_uri(format!("{base}/mcp"))
        .custom_headers(headers);
    let refused = ()
        .serve(StreamableHttpClientTransport::with_client(
            h.clone(),
            config,
        ))
        .await;
    assert!(
        refused.is_err(),
        "the shared /mcp without the token must refuse"
    );

    // Effects are on the admin path only.
    let (status, _) = send(h.get(format!("{base}/mcp/{}/effects", tools.session()))).await;
    assert_ne!(status, 200);
    let effects = tools.effects(false).await.unwrap();
    assert_eq!(effects["passed"], false);
    tools.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_get_clear_errors() {
    let limits = Limits {
        max_sessions: 2,
        max_body_bytes: 4096,
        ..Limits::default()
    };
    let server = server(registry(&example_root(), limits), HttpOptions::default()).await;
    let base = server.url();
    let h = http();
    let post = |path: &str| h.post(format!("{base}{path}"));

    // Admin: malformed JSON, wrong types, unknown task, unknown session, unknown route.
    let (s, b) = send(post("/admin/sessions").body("{not json")).await;
    assert_eq!(s, 400);
    insta::assert_snapshot!(b, @r#"{"error":"malformed JSON body: key must be a string at line 1 column 2"}"#);
    let (s, b) = send(post("/admin/sessions").json(&json!({"task": 5}))).await;
    assert_eq!(s, 400);
    insta::assert_snapshot!(b, @r#"{"error":"field `task` must be a string, got a number (want {\"task\": \"file.py:function\"})"}"#);
    let (s, b) = send(post("/admin/sessions").json(&json!([1, 2]))).await;
    assert_eq!(s, 400, "{b}");
    let (s, b) = send(post("/admin/sessions").json(&json!({"task": "nope.py:test_x"}))).await;
    assert_eq!(s, 400);
    let ex = example_root();
    let shown = tb_test_support::redact(&b.to_string(), &[(ex.as_path(), "[EXAMPLE]")]);
    insta::assert_snapshot!(shown, @r#"{"error":"cannot load task `nope.py:test_x`: <argument>: test-case file \"nope.py\" not found (looked for [EXAMPLE]/dataset/test_case/nope.py)"}"#);
    let (s, b) =
        send(post("/admin/sessions").json(&json!({"task": "brightside_retail.py:test_nope"})))
            .await;
    assert_eq!(s, 400, "{b}");
    let (s, b) = send(h.get(format!("{base}/admin/sessions/nope/effects"))).await;
    assert_eq!(s, 404);
    insta::assert_snapshot!(b, @r#"{"error":"unknown session `nope` (never created, deleted, or removed after idling)"}"#);
    let (s, _) = send(h.delete(format!("{base}/admin/sessions/nope"))).await;
    assert_eq!(s, 404);
    let (s, _) =
        send(post("/mcp/nope").json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})))
            .await;
    assert_eq!(s, 404);
    let (s, _) = send(h.get(format!("{base}/nowhere"))).await;
    assert_eq!(s, 404);

    // Body cap: 413, on admin, proxy and MCP routes alike.
    let big = json!({"task": "x".repeat(10_000)});
    let (s, b) = send(post("/admin/sessions").json(&big)).await;
    assert_eq!(s, 413, "{b}");
    let (s, b) = send(post("/session_create").json(&big)).await;
    assert_eq!(s, 413, "{b}");
    assert_eq!(b["success"], false);

    // Session cap: the third session is refused with 503 and says why.
    let client = McpServer::new(&base).unwrap();
    let a = client.open(TASK).await.unwrap();
    let b2 = client.open(TASK).await.unwrap();
    match client.open(TASK).await {
        Err(ClientError::Admin {
            status, message, ..
        }) => {
            assert_eq!(status, 503);
            insta::assert_snapshot!(message, @"session limit reached (2 open sessions): delete sessions or raise --max-sessions");
        }
        other => panic!("expected a refusal, got {other:?}"),
    }
    let big_args = json!({"order_id": "x".repeat(10_000)});
    let err = a.call("get_order", &big_args).await.unwrap_err();
    assert!(matches!(err, ClientError::Mcp { .. }), "{err}");
    // The session still works after the refused call.
    assert!(
        a.call("get_order", &json!({"order_id": "ORD-5004"}))
            .await
            .unwrap()
            .outcome
            .is_ok()
    );

    // Proxy API: malformed input and unknown session in the reference envelope.
    let (s, b) = send(post("/call_tool").body("[")).await;
    assert_eq!(s, 400);
    assert_eq!(b["success"], false);
    assert_message_starts(&b, "Invalid input");
    let (s, b) = send(
        post("/call_tool")
            .json(&json!({"session_id": "nope", "tool_name": "get_order", "arguments": {}})),
    )
    .await;
    assert_eq!(
        (s, b["content"]["value"].as_str()),
        (400, Some("Session does not exist"))
    );
    let (s, b) = send(
        post("/call_tool")
            .json(&json!({"session_id": a.session(), "tool_name": "get_order", "arguments": "x"})),
    )
    .await;
    assert_eq!(s, 400, "{b}");
    let (s, b) = send(post("/call_tool").json(
        &json!({"session_id": a.session(), "tool_name": "get_order", "arguments": {"order_id": 5}}),
    ))
    .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["content"]["value"],
        r#"{"error": "Tool execution failed: Input validation failed: order_id: Input should be a valid string", "tool": "get_order"}"#
    );

    a.close().await.unwrap();
    b2.close().await.unwrap();
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_sessions_are_reaped() {
    let limits = Limits {
        idle_timeout: Some(Duration::from_millis(200)),
        ..Limits::default()
    };
    let registry = registry(&example_root(), limits);
    let server = server(registry.clone(), HttpOptions::default()).await;
    let client = McpServer::new(&server.url()).unwrap();
    let tools = client.open(TASK).await.unwrap();
    // Bounded wait for the reaper (it runs every 50 ms with this timeout).
    for _ in 0..400 {
        if registry.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(registry.is_empty(), "the idle session was not reaped");
    let err = tools
        .call("get_order", &json!({"order_id": "ORD-5004"}))
        .await
        .unwrap_err();
    assert!(
        err.to_string().contains("unknown session")
            || err.to_string().contains("404")
            || err.to_string().contains("Not Found"),
        "{err}"
    );
    let err = tools.effects(false).await.unwrap_err();
    assert!(
        matches!(err, ClientError::Admin { status: 404, .. }),
        "{err}"
    );
    server.shutdown().await.unwrap();
}
