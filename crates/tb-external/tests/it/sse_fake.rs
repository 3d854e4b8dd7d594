//! The legacy SSE transport against a small fake server of ours (raw HTTP/1.1 on a tokio
//! socket, so every misbehaviour can be staged): the round trip with the servers file's
//! headers on the GET and every POST; an endpoint event that never comes; a refused GET; an
//! endpoint of another origin; a malformed `message`; a POST answered 500; the stream ending
//! under a pending call; an oversized event. Every failure must be an error naming the cause,
//! never a hang (the call budget is 60 s: a hang would show as "no reply within 60.0s").

use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tb_external::{ServerConn, ServersConfig, StartOptions};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;

const SECRET: &str = "s3cret-do-not-print";
const BUDGET: Duration = Duration::from_mins(1);

#[derive(Debug, Clone, Copy, PartialEq)]
enum Mode {
    /// A working MCP server with a few misbehaving tools.
    Mcp,
    /// The stream opens but only pings, never the endpoint event.
    NoEndpoint,
    /// The GET is answered 401.
    Unauthorised,
    /// The endpoint event names another origin.
    ForeignEndpoint,
}

#[derive(Debug, Clone)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
}

type Stream = Arc<Mutex<Option<mpsc::UnboundedSender<String>>>>;

struct Fake {
    port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Fake {
    async fn start(mode: Mode) -> Fake {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stream: Stream = Arc::default();
        let s = seen.clone();
        let task = tokio::spawn(async move {
            while let Ok((sock, _)) = listener.accept().await {
                tokio::spawn(handle(sock, mode, s.clone(), stream.clone()));
            }
        });
        Fake { port, seen, task }
    }

    fn servers_yaml(&self, timeout: u32) -> ServersConfig {
        let text = format!(
            "servers:\n  fake:\n    type: sse\n    url: http://127.0.0.1:{}/sse\n    headers: {{X-Api-Key: \"{SECRET}\"}}\n    timeout: {timeout}\n",
            self.port
        );
        ServersConfig::parse(Path::new("servers.yaml"), &text).unwrap()
    }

    async fn conn(&self, timeout: u32) -> Result<ServerConn, tb_external::ExternalError> {
        let cfg = self.servers_yaml(timeout);
        let opts = StartOptions {
            start_timeout: Duration::from_mins(1),
            ..StartOptions::default()
        };
        ServerConn::start(&cfg.servers[0], &opts).await
    }

    fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }
}

async fn handle(sock: TcpStream, mode: Mode, seen: Arc<Mutex<Vec<Seen>>>, stream: Stream) {
    let mut r = BufReader::new(sock);
    let mut line = String::new();
    if r.read_line(&mut line).await.unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).await.unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; len];
    if r.read_exact(&mut body).await.is_err() {
        return;
    }
    seen.lock().unwrap().push(Seen {
        method: method.clone(),
        path: path.clone(),
        headers,
    });
    let mut sock = r.into_inner();
    const SSE_HEAD: &str = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\ncache-control: no-store\r\nconnection: close\r\n\r\n";
    match (method.as_str(), mode) {
        ("GET", Mode::Unauthorised) => {
            let _ = sock
                .write_all(b"HTTP/1.1 401 Unauthorized\r\ncontent-length: 12\r\nconnection: close\r\n\r\nbad api key.")
                .await;
        }
        ("GET", Mode::NoEndpoint) => {
            let _ = sock.write_all(SSE_HEAD.as_bytes()).await;
            loop {
                if sock.write_all(b": ping\r\n\r\n").await.is_err() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        ("GET", Mode::ForeignEndpoint) => {
            let _ = sock.write_all(SSE_HEAD.as_bytes()).await;
            let _ = sock
                .write_all(
                    b"event: endpoint\r\ndata: http://127.0.0.2:9/messages?session=1\r\n\r\n",
                )
                .await;
            tokio::time::sleep(Duration::from_mins(1)).await;
        }
        ("GET", Mode::Mcp) => {
            let (tx, mut rx) = mpsc::unbounded_channel::<String>();
            *stream.lock().unwrap() = Some(tx);
            let _ = sock.write_all(SSE_HEAD.as_bytes()).await;
            // a comment and a relative endpoint, split over two writes
            let _ = sock.write_all(b": hello\r\n\r\nevent: endp").await;
            let _ = sock
                .write_all(b"oint\r\ndata: /messages?session=1\r\n\r\n")
                .await;
            while let Some(ev) = rx.recv().await {
                if sock.write_all(ev.as_bytes()).await.is_err() {
                    return;
                }
            }
            // the sender was dropped: the stream ends
        }
        ("POST", _) => {
            let msg: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let reply = answer(&msg, &stream);
            let text: &[u8] = if reply {
                b"HTTP/1.1 202 Accepted\r\ncontent-length: 8\r\nconnection: close\r\n\r\nAccepted"
            } else {
                b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 4\r\nconnection: close\r\n\r\nboom"
            };
            let _ = sock.write_all(text).await;
        }
        _ => {
            let _ = sock
                .write_all(
                    b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n",
                )
                .await;
        }
    }
}

/// Acts on one POSTed message; false: answer the POST with a 500.
fn answer(msg: &Value, stream: &Stream) -> bool {
    let push = |v: Value| {
        if let Some(tx) = stream.lock().unwrap().as_ref() {
            let _ = tx.send(format!("event: message\r\ndata: {v}\r\n\r\n"));
        }
    };
    let id = msg.get("id").cloned().unwrap_or(Value::Null);
    let result = |r: Value| json!({"jsonrpc": "2.0", "id": id, "result": r});
    match msg.get("method").and_then(Value::as_str).unwrap_or("") {
        "initialize" => push(result(json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "fake", "version": "0"}
        }))),
        "tools/list" => {
            let tools: Vec<Value> = ["echo", "garble", "reject", "end", "huge"]
                .iter()
                .map(|n| json!({"name": n, "inputSchema": {"type": "object"}}))
                .collect();
            push(result(json!({ "tools": tools })));
        }
        "tools/call" => {
            let name = msg["params"]["name"].as_str().unwrap_or("");
            match name {
                "echo" => push(result(json!({
                    "content": [{"type": "text", "text": msg["params"]["arguments"]["text"]}]
                }))),
                "garble" => {
                    if let Some(tx) = stream.lock().unwrap().as_ref() {
                        let _ = tx.send(
                            "event: message\r\ndata: {\"jsonrpc\": \"2.0\", \"id\": \r\n\r\n"
                                .into(),
                        );
                    }
                }
                "reject" => return false,
                "end" => {
                    stream.lock().unwrap().take();
                }
                "huge" => {
                    if let Some(tx) = stream.lock().unwrap().as_ref() {
                        let _ = tx.send(format!(
                            "event: message\r\ndata: {}\r\n",
                            "x".repeat(64 << 10)
                        ));
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
    true
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    tb_external::server::result_text("fake", "t", r).unwrap()
}

/// The error of starting the first server of the servers.yaml `yaml` (which must fail).
async fn start_error(yaml: &str) -> String {
    let cfg = ServersConfig::parse(Path::new("servers.yaml"), yaml).unwrap();
    ServerConn::start(&cfg.servers[0], &StartOptions::default())
        .await
        .unwrap_err()
        .to_string()
}

/// A fake MCP server over SSE and a connection to it (30 s per call).
async fn mcp_fake() -> (Fake, ServerConn) {
    let fake = Fake::start(Mode::Mcp).await;
    let conn = fake.conn(30).await.unwrap();
    (fake, conn)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn round_trip_with_the_headers_on_the_get_and_every_post() {
    let (fake, conn) = mcp_fake().await;
    let names: Vec<&str> = conn.tools().iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["echo", "garble", "reject", "end", "huge"]);
    for word in ["one", "two"] {
        let r = conn
            .call("echo", args(json!({"text": word})), BUDGET)
            .await
            .unwrap();
        assert_eq!(text(&r), word);
    }
    assert!(!conn.is_broken());
    conn.shutdown(Duration::from_secs(2)).await;
    let seen = fake.seen();
    let header = |s: &Seen, k: &str| {
        s.headers
            .iter()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.clone())
    };
    // GET, then initialize, initialized, tools/list and two calls, each its own POST
    assert_eq!(
        seen.iter()
            .map(|s| format!("{} {}", s.method, s.path))
            .collect::<Vec<_>>(),
        [
            "GET /sse",
            "POST /messages?session=1",
            "POST /messages?session=1",
            "POST /messages?session=1",
            "POST /messages?session=1",
            "POST /messages?session=1",
        ]
    );
    assert_eq!(
        header(&seen[0], "accept").as_deref(),
        Some("text/event-stream")
    );
    for s in &seen {
        assert_eq!(header(s, "x-api-key").as_deref(), Some(SECRET), "{s:?}");
    }
    for s in &seen[1..] {
        assert_eq!(
            header(s, "content-type").as_deref(),
            Some("application/json")
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_event_that_never_comes_times_out() {
    let fake = Fake::start(Mode::NoEndpoint).await;
    let e = fake.conn(1).await.unwrap_err().to_string();
    assert_eq!(
        e,
        format!(
            "server `fake`: start: http://127.0.0.1:{}/sse: no `endpoint` event within 1.0s",
            fake.port
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_get_says_so_without_the_secret() {
    let fake = Fake::start(Mode::Unauthorised).await;
    let e = fake.conn(30).await.unwrap_err().to_string();
    assert!(
        e.ends_with("/sse: GET of the event stream answered HTTP 401: bad api key."),
        "{e}"
    );
    assert!(!e.contains(SECRET), "{e}");
    // nothing listening: a connection error
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let e = start_error(&format!(
        "servers:\n  gone:\n    type: sse\n    url: http://127.0.0.1:{port}/sse\n"
    ))
    .await;
    assert!(
        e.starts_with(&format!(
            "server `gone`: start: http://127.0.0.1:{port}/sse: GET of the event stream: "
        )),
        "{e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_endpoint_of_another_origin_is_refused() {
    let fake = Fake::start(Mode::ForeignEndpoint).await;
    let e = fake.conn(30).await.unwrap_err().to_string();
    assert!(
        e.ends_with(&format!(
            "the `endpoint` event names `http://127.0.0.2:9/messages?session=1`, whose origin is not the SSE URL's (http://127.0.0.1:{}); refused",
            fake.port
        )),
        "{e}"
    );
    // the secret never went there: only the GET was made
    assert_eq!(fake.seen().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_message_fails_the_pending_call() {
    let (_fake, conn) = mcp_fake().await;
    let e = crate::failed_call(&conn, "garble", BUDGET).await;
    assert!(e.starts_with("server `fake`: tools/call garble: "), "{e}");
    assert!(
        e.contains("(a `message` event is not a JSON-RPC message: "),
        "{e}"
    );
    // the connection is done with: the next call fails at once too
    assert!(conn.is_broken());
    assert!(conn.call("echo", Map::new(), BUDGET).await.is_err());
    conn.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_post_answered_500_fails_the_call() {
    let (fake, conn) = mcp_fake().await;
    let e = crate::failed_call(&conn, "reject", BUDGET).await;
    assert!(
        e.contains(&format!(
            "POST of a message to http://127.0.0.1:{}/messages?session=1 answered HTTP 500: boom",
            fake.port
        )),
        "{e}"
    );
    assert!(!e.contains(SECRET), "{e}");
    conn.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_stream_ending_fails_the_pending_call() {
    let (_fake, mut conn) = mcp_fake().await;
    assert!(conn.is_alive());
    let e = crate::failed_call(&conn, "end", BUDGET).await;
    assert!(e.starts_with("server `fake`: tools/call end: "), "{e}");
    assert!(e.contains("(the server ended the event stream)"), "{e}");
    assert!(!conn.is_alive());
    conn.shutdown(Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_event_closes_the_transport() {
    use rmcp::ServiceExt;
    use tb_external::sse::{SseOptions, SseTransport};
    let _ = rustls::crypto::ring::default_provider().install_default();
    let fake = Fake::start(Mode::Mcp).await;
    let transport = SseTransport::connect(
        reqwest::Client::new(),
        &format!("http://127.0.0.1:{}/sse", fake.port),
        &SseOptions {
            max_event_bytes: 4096,
            ..SseOptions::default()
        },
    )
    .await
    .unwrap();
    assert_eq!(
        transport.post_url().as_str(),
        format!("http://127.0.0.1:{}/messages?session=1", fake.port)
    );
    let reason = transport.close_reason();
    let client = ().serve(transport).await.unwrap();
    assert_eq!(client.list_all_tools().await.unwrap().len(), 5);
    let r = tokio::time::timeout(
        BUDGET,
        client.call_tool(rmcp::model::CallToolRequestParams::new("huge")),
    )
    .await
    .expect("an error, not a hang");
    assert!(r.is_err(), "{r:?}");
    assert_eq!(
        reason.get().as_deref(),
        Some("an event is larger than 4096 bytes")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_header_value_is_named_but_not_shown() {
    let e = start_error("servers:\n  fake:\n    type: sse\n    url: http://127.0.0.1:9/sse\n    headers: {X-Api-Key: \"half-a-secret\\nother-half\"}\n").await;
    assert!(
        e.starts_with("server `fake`: headers: header `X-Api-Key`: "),
        "{e}"
    );
    assert!(!e.contains("secret") && !e.contains("half"), "{e}");
}
