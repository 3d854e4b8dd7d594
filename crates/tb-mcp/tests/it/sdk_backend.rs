//! tb-mcp's HTTP backend for rmcp's client transport (`tb_mcp::sdk_http::SdkHttpClient`)
//! gives rmcp's client exactly what rmcp's own reqwest backend gives it, for every reply a
//! server may send to a `tools/call`: results of each shape, JSON-RPC errors, HTTP failures,
//! SSE, and hostile replies (malformed, oversized, wrong id, another result type). A fake
//! server answers the handshake normally and the `tools/call` with the case's reply; the same
//! call is made through both backends and the outcomes (result or error text, or a timeout)
//! compared.

use axum::body::Body;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::{
    StreamableHttpClient, StreamableHttpClientTransportConfig,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tb_mcp::sdk_http::SdkHttpClient;

/// A case's reply to the `tools/call`: status, headers, body chunks (one chunk: with a
/// `Content-Length`; several: chunked, no length).
type Reply = (u16, Vec<(&'static str, String)>, Vec<Vec<u8>>);
type ReplyFn = Arc<dyn Fn(&Value) -> Reply + Send + Sync>;

fn json_reply(status: u16, body: String) -> Reply {
    (
        status,
        vec![("content-type", "application/json".into())],
        vec![body.into_bytes()],
    )
}

/// A reply with the request's id spliced in for `ID`.
fn with_id(id: &Value, template: &str) -> String {
    template.replace("ID", &id.to_string())
}

async fn fake_server(reply: ReplyFn) -> (String, tokio::task::JoinHandle<()>) {
    let route = move |method: axum::http::Method, body: axum::body::Bytes| {
        let reply = reply.clone();
        async move {
            if method != axum::http::Method::POST {
                return StatusCode::METHOD_NOT_ALLOWED.into_response();
            }
            let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let id = msg["id"].clone();
            let ok = |result: Value| {
                (
                    [("content-type", "application/json")],
                    json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string(),
                )
                    .into_response()
            };
            match msg["method"].as_str() {
                Some("initialize") => ok(json!({
                    "protocolVersion": "2025-06-18",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "fake", "version": "1"},
                })),
                Some("tools/list") => ok(json!({"tools": []})),
                Some("tools/call") => {
                    let (status, headers, chunks) = reply(&id);
                    let mut h = HeaderMap::new();
                    for (k, v) in headers {
                        h.insert(k, v.parse().unwrap());
                    }
                    let body = if chunks.len() == 1 {
                        Body::from(chunks.into_iter().next().unwrap())
                    } else {
                        Body::from_stream(futures_util::stream::iter(
                            chunks.into_iter().map(Ok::<_, std::convert::Infallible>),
                        ))
                    };
                    let mut r = Response::new(body);
                    *r.status_mut() = StatusCode::from_u16(status).unwrap();
                    *r.headers_mut() = h;
                    r
                }
                _ => StatusCode::ACCEPTED.into_response(),
            }
        }
    };
    let app = axum::Router::new().route("/mcp", axum::routing::any(route));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let task = tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (url, task)
}

/// Limits small enough for the oversize cases.
const MAX_JSON: usize = 64 * 1024;
const MAX_SSE: usize = 4 * 1024;

/// One `tools/call` through rmcp's client on `client`: the result, the error, or a timeout.
async fn call<C: StreamableHttpClient>(client: C, url: &str) -> String {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_string());
    config.max_json_response_size = MAX_JSON;
    config.max_sse_event_size = MAX_SSE;
    config.max_error_response_size = 1024;
    let transport = StreamableHttpClientTransport::with_client(client, config);
    let service = match ().serve(transport).await {
        Ok(s) => s,
        Err(e) => return format!("initialize failed: {e}"),
    };
    let params = CallToolRequestParams::new("t")
        .with_arguments(json!({"a": 1}).as_object().cloned().unwrap_or_default());
    let out = tokio::time::timeout(Duration::from_secs(3), service.call_tool(params)).await;
    let _ = service.cancel().await;
    match out {
        Ok(Ok(r)) => format!("ok {r:?}"),
        Ok(Err(e)) => format!("error {e}"),
        Err(_) => "timeout".into(),
    }
}

fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

fn cases() -> Vec<(&'static str, ReplyFn)> {
    let j = |status: u16, template: &'static str| -> ReplyFn {
        Arc::new(move |id| json_reply(status, with_id(id, template)))
    };
    let big_text = "x".repeat(MAX_JSON);
    let big_event = "y".repeat(MAX_SSE * 2);
    vec![
        (
            "text result",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"{\"a\": 1}"}],"isError":false,"_meta":{"thinkingbox/outcome":"ok"}}}"#,
            ),
        ),
        (
            "isError result",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"Unknown tool: 't'"}],"isError":true}}"#,
            ),
        ),
        (
            "structuredContent",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"text","text":"{}"}],"structuredContent":{"k":[1,2.5,null]},"_meta":{"x":1}}}"#,
            ),
        ),
        (
            "structuredContent null, content null",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":null,"structuredContent":null}}"#,
            ),
        ),
        (
            "only _meta (not a CallToolResult)",
            j(200, r#"{"jsonrpc":"2.0","id":ID,"result":{"_meta":{}}}"#),
        ),
        (
            "another result type (elicit)",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"action":"accept","content":{"a":1}}}"#,
            ),
        ),
        (
            "resultType complete",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"resultType":"complete","content":[]}}"#,
            ),
        ),
        (
            "JSON-RPC error",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"error":{"code":-32602,"message":"bad params"}}"#,
            ),
        ),
        (
            "JSON-RPC error on HTTP 500",
            j(
                500,
                r#"{"jsonrpc":"2.0","id":ID,"error":{"code":-32603,"message":"boom"}}"#,
            ),
        ),
        ("JSON non-error on HTTP 400", j(400, r#"{"detail":"nope"}"#)),
        ("malformed JSON", j(200, r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"#)),
        ("empty JSON body", j(200, "")),
        ("wrong id", j(200, r#"{"jsonrpc":"2.0","id":987654,"result":{"content":[]}}"#)),
        (
            "result and error",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#,
            ),
        ),
        (
            "duplicate result key",
            j(
                200,
                r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[]},"result":{"isError":true}}"#,
            ),
        ),
        (
            "bad content block",
            j(200, r#"{"jsonrpc":"2.0","id":ID,"result":{"content":[{"type":"nope"}]}}"#),
        ),
        (
            "oversized, with a length",
            Arc::new(move |id| {
                json_reply(
                    200,
                    format!(
                        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"type":"text","text":"{big_text}"}}]}}}}"#
                    ),
                )
            }),
        ),
        (
            "oversized, chunked",
            Arc::new(|_| {
                (
                    200,
                    vec![("content-type", "application/json".into())],
                    vec![vec![b' '; MAX_JSON / 2]; 4],
                )
            }),
        ),
        (
            "text/html 200",
            Arc::new(|_| {
                (
                    200,
                    vec![("content-type", "text/html".into())],
                    vec![b"<html></html>".to_vec()],
                )
            }),
        ),
        (
            "plain 503 with Retry-After",
            Arc::new(|_| {
                (
                    503,
                    vec![
                        ("content-type", "text/plain".into()),
                        ("retry-after", "7".into()),
                    ],
                    vec![b"busy".to_vec()],
                )
            }),
        ),
        (
            "429",
            Arc::new(|_| (429, vec![("retry-after", "1".into())], vec![Vec::new()])),
        ),
        (
            "401 with a challenge",
            Arc::new(|_| {
                (
                    401,
                    vec![("www-authenticate", r#"Bearer realm="x""#.into())],
                    vec![Vec::new()],
                )
            }),
        ),
        (
            "403 with a scope",
            Arc::new(|_| {
                (
                    403,
                    vec![(
                        "www-authenticate",
                        r#"Bearer error="insufficient_scope", scope="tools:call""#.into(),
                    )],
                    vec![Vec::new()],
                )
            }),
        ),
        (
            "404 text",
            Arc::new(|_| {
                (
                    404,
                    vec![("content-type", "text/plain".into())],
                    vec![vec![b'n'; 5000]],
                )
            }),
        ),
        ("202 to a request", Arc::new(|_| (202, Vec::new(), vec![Vec::new()]))),
        (
            "SSE reply",
            Arc::new(|id| {
                (
                    200,
                    vec![("content-type", "text/event-stream".into())],
                    vec![
                        format!(
                            "event: message\ndata: {}\n\n",
                            json!({"jsonrpc": "2.0", "id": id, "result": {"content": [{"type": "text", "text": "sse"}]}})
                        )
                        .into_bytes(),
                    ],
                )
            }),
        ),
    ]
    .into_iter()
    .chain(std::iter::once((
        "SSE event over the limit",
        Arc::new(move |_: &Value| -> Reply {
            (
                200,
                vec![("content-type", "text/event-stream".into())],
                vec![format!("data: {big_event}\n\n").into_bytes()],
            )
        }) as ReplyFn,
    )))
    .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tools_call_reply_reaches_rmcp_as_its_own_backend_gives_it() {
    let mut checked = 0;
    for (name, reply) in cases() {
        let (url, server) = fake_server(reply).await;
        let theirs = call(http(), &url).await;
        // (the transport's error text names the backend's type)
        let ours = call(SdkHttpClient::new(http(), &url), &url).await.replace(
            "tb_mcp::sdk_http::SdkHttpClient",
            "reqwest::async_impl::client::Client",
        );
        if name == "SSE event over the limit" {
            // rmcp classifies its own limiter's error as fatal (a private type); ours ends the
            // stream with an error: both must fail, neither may deliver a result.
            assert!(!theirs.starts_with("ok"), "{name}: {theirs}");
            assert!(!ours.starts_with("ok"), "{name}: {ours}");
        } else {
            assert_eq!(ours, theirs, "{name}");
        }
        if [
            "text result",
            "isError result",
            "structuredContent",
            "SSE reply",
        ]
        .contains(&name)
        {
            assert!(theirs.starts_with("ok CallToolResult"), "{name}: {theirs}");
        }
        server.abort();
        checked += 1;
    }
    assert_eq!(checked, 27);
}
