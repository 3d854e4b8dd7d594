//! `tools/call` POSTs are answered by tb-mcp itself when rmcp would take them as they are (see
//! `McpRoute` in src/http.rs); every other request goes to rmcp's service. Both must answer
//! byte for byte alike. A request with an `Origin` header (which rmcp, with no allowed origins
//! configured, does not check) always goes to rmcp, so the same request with and without it
//! compares the two paths: on twin sessions of the same task, for every golden call, tool
//! failures, unknown tools, string ids, the header-routed `/mcp`, an unknown session, and
//! requests that are not `tools/call`.

use crate::common;

use common::*;
use serde_json::{Value, json};
use tb_mcp::{HttpOptions, Limits};

struct Reply {
    status: u16,
    content_type: String,
    body: String,
}

async fn post(
    http: &reqwest::Client,
    url: &str,
    body: &str,
    via_rmcp: bool,
    session_header: Option<&str>,
) -> Reply {
    let mut req = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", "2025-06-18");
    if via_rmcp {
        req = req.header("origin", "http://localhost");
    }
    if let Some(s) = session_header {
        req = req.header("x-tb-session-id", s);
    }
    let resp = req.body(body.to_string()).send().await.unwrap();
    Reply {
        status: resp.status().as_u16(),
        content_type: resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string(),
        body: resp.text().await.unwrap(),
    }
}

/// The same request on the direct path (`a`) and through rmcp (`b`): equal answers.
async fn same(
    http: &reqwest::Client,
    (a, b): (&str, &str),
    body: &str,
    headers: (Option<&str>, Option<&str>),
) -> Reply {
    let direct = post(http, a, body, false, headers.0).await;
    let rmcp = post(http, b, body, true, headers.1).await;
    assert_eq!(direct.status, rmcp.status, "{body}");
    assert_eq!(direct.content_type, rmcp.content_type, "{body}");
    assert_eq!(direct.body, rmcp.body, "{body}");
    direct
}

fn call(id: Value, tool: &str, args: Option<&Value>) -> String {
    let mut params = json!({ "name": tool });
    if let Some(a) = args {
        params["arguments"] = a.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_tool_calls_answer_exactly_as_rmcp() {
    let root = example_root();
    let inproc = InProcess::open(&root);
    let server = server(registry(&root, Limits::default()), HttpOptions::default()).await;
    let base = server.url();
    let http = http();
    let open = |task: String| {
        let (http, base) = (http.clone(), base.clone());
        async move {
            let r = json_of(
                http.post(format!("{base}/admin/sessions"))
                    .json(&json!({ "task": task })),
            )
            .await;
            (
                r["session"].as_str().unwrap().to_string(),
                r["mcp_url"].as_str().unwrap().to_string(),
            )
        }
    };
    let mut checked = 0;
    for id in example_tasks() {
        let task = inproc.task(&id);
        let calls = golden_calls(&task);
        let expected = inproc.run(&task, &calls);
        let (sa, a) = open(id.clone()).await;
        let (sb, b) = open(id.clone()).await;
        for (i, (tool, args)) in calls.iter().enumerate() {
            let r = same(
                &http,
                (&a, &b),
                &call(json!(i), tool, Some(args)),
                (None, None),
            )
            .await;
            let v: Value = serde_json::from_str(&r.body).unwrap();
            assert_eq!(
                v["result"]["content"][0]["text"].as_str(),
                Some(expected.texts[i].as_str()),
                "{id}: {tool}"
            );
            checked += 1;
        }
        // Tool failures, unknown tools, no arguments, string ids, the shared /mcp.
        let first = calls.first().map_or("get_order", |(t, _)| t.as_str());
        let shared = format!("{base}/mcp");
        for body in [
            call(json!("s-1"), first, Some(&json!({"order_id": 5}))),
            call(json!(7), "__reserved__geteffects", Some(&json!({}))),
            call(json!(8), first, None),
            call(json!(9), "no_such_tool", None),
        ] {
            same(&http, (&a, &b), &body, (None, None)).await;
            same(&http, (&shared, &shared), &body, (Some(&sa), Some(&sb))).await;
        }
        // Effects stay identical: the twin sessions got the same calls.
        let effects = |s: String| {
            let (http, base) = (http.clone(), base.clone());
            async move {
                let v =
                    json_of(http.get(format!("{base}/admin/sessions/{s}/effects?states=false")))
                        .await;
                (v["result_hash"].clone(), v["passed"].clone())
            }
        };
        assert_eq!(effects(sa.clone()).await, effects(sb.clone()).await, "{id}");
        for s in [&sa, &sb] {
            http.delete(format!("{base}/admin/sessions/{s}"))
                .send()
                .await
                .unwrap();
        }
    }
    assert!(checked > 0);

    // An unknown session on the shared /mcp: the same JSON-RPC error.
    let shared = format!("{base}/mcp");
    let r = same(
        &http,
        (&shared, &shared),
        &call(json!(1), "get_order", None),
        (Some("nope"), Some("nope")),
    )
    .await;
    insta::assert_snapshot!(r.body, @r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"unknown session `nope` (never created, deleted, or removed after idling)"}}"#);

    // The request as rmcp's client sends it (its `Accept` order, a 2025-11-25 version, a
    // progress token in `_meta`), and `_meta` keys that rmcp acts on: a per-request protocol
    // version that the header does not match, or one with no other key, and other keys.
    let (_, a) = open(example_tasks()[0].clone()).await;
    let with_meta = |id: u64, meta: Value| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
               "params": {"_meta": meta, "name": "get_order", "arguments": {"order_id": "ORD-5004"}}})
        .to_string()
    };
    for (version, body) in [
        ("2025-11-25", with_meta(1, json!({"progressToken": 0}))),
        ("2025-11-25", with_meta(2, json!({"progressToken": "t"}))),
        (
            "2025-11-25",
            with_meta(3, json!({"progressToken": {"no": 1}})),
        ),
        (
            "2025-06-18",
            with_meta(
                4,
                json!({"io.modelcontextprotocol/protocolVersion": "2025-11-25"}),
            ),
        ),
        (
            "2025-06-18",
            with_meta(
                5,
                json!({"progressToken": 1, "io.modelcontextprotocol/protocolVersion": "2025-03-26"}),
            ),
        ),
        ("2025-06-18", with_meta(6, json!({"traceparent": "00-x"}))),
    ] {
        let send = |via_rmcp: bool| {
            let mut req = http
                .post(&a)
                .header("accept", "text/event-stream, application/json")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", version);
            if via_rmcp {
                req = req.header("origin", "http://localhost");
            }
            let body = body.clone();
            async move {
                let r = req.body(body).send().await.unwrap();
                (r.status().as_u16(), r.text().await.unwrap())
            }
        };
        assert_eq!(send(false).await, send(true).await, "{body}");
    }

    // Not tools/call, or not JSON-RPC: rmcp answers on both paths.
    let (_, a) = open(example_tasks()[0].clone()).await;
    for body in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 2, "method": "ping"}).to_string(),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string(),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "get_order", "arguments": {}, "_meta": {"progressToken": 1}}})
        .to_string(),
        "{not json".to_string(),
    ] {
        same(&http, (&a, &a), &body, (None, None)).await;
    }
    server.shutdown().await.unwrap();
}
