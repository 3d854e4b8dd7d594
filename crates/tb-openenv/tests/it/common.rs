//! Shared by the integration tests: the mock model server, a run config pointing the user and
//! judge models at it, the bundled example and the benchmark data, golden calls, and the
//! hidden-field scan.
#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tb_core::Task;
use tb_eval::judge::StateJudge;
use tb_eval::root::LoadedRoot;
use tb_mock_model::{Api, MockRequest, MockServer, Reply};
use tb_sandbox::Clock;
use tokio_tungstenite::tungstenite::Message as WsMessage;

/// The API key of the test config: must never reach a client.
pub const SECRET: &str = "sk-openenv-test-7a41f0c9e2d85b36";
/// Model names of the test config: must never reach a client.
pub const USER_MODEL: &str = "mock-user-model-5c2e";
/// Judge model name.
pub const JUDGE_MODEL: &str = "mock-judge-model-9b1d";
/// What the simulated user answers.
pub const USER_REPLY: &str = "Thanks, please go ahead.";

/// The bundled example (always present).
pub fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
}

/// The benchmark data (`THINKINGBOX_DATA`, else `thinkingbox-data` in the shared folder);
/// panics when missing, so call it from `#[tb_test_support::data_test]`s only.
pub fn benchmark_data() -> PathBuf {
    tb_test_support::data()
}

/// A mock model server: the user answers [`USER_REPLY`], the judge answers `Yes`.
pub async fn mock() -> MockServer {
    let server = MockServer::start().await.expect("mock model server");
    server.set_script("user", |_r: &MockRequest| Reply::Text(USER_REPLY.into()));
    server.set_script("judge", |_r: &MockRequest| Reply::Text("Yes".into()));
    server
}

/// Writes a run config whose user and judge models are the mock's roles `user` and `judge`.
pub fn write_config(dir: &Path, server: &MockServer) -> PathBuf {
    let model = |role: &str, name: &str| {
        format!(
            "  type: aoai\n  endpoint_url: {}\n  deployment: {name}\n  credential: {{type: api-key, api_key: {SECRET}}}\n  timeout: 10\n  max_retries_connect: 0\n  max_retries_timeout: 0\n  max_retries_server_error: 0\n  max_retries_malformed: 0\n  backoff_base: 0.001\n  backoff_max: 0.002\n",
            server.url(role, Api::Chat)
        )
    };
    let text = format!(
        "orchestrator:\n  type: thinkingbox\nuser_model:\n{}judge_model:\n{}judge_type: legacy\n",
        model("user", USER_MODEL),
        model("judge", JUDGE_MODEL)
    );
    let path = dir.join("openenv-run.yaml");
    std::fs::write(&path, text).expect("writing the config");
    path
}

/// All golden calls of a task, in server order.
pub fn golden_calls(t: &Task) -> Vec<(String, Value)> {
    t.servers().iter().flat_map(|s| t.golden_calls(s)).collect()
}

/// The index of a golden call whose omission changes the final state (so an episode that
/// skips it must fail).
pub fn essential_call(sandbox: &LoadedRoot, task: &Task) -> usize {
    let judge = StateJudge::new();
    let calls = golden_calls(task);
    for skip in (0..calls.len()).rev() {
        let mut session = sandbox.session(task, Clock::default()).unwrap();
        for (i, (tool, args)) in calls.iter().enumerate() {
            if i != skip {
                let _ = session.call(tool, args);
            }
        }
        let verdicts = judge
            .judge(sandbox, task, Clock::default(), &session)
            .unwrap();
        if verdicts.iter().any(|v| !v.passed) {
            return skip;
        }
    }
    panic!("{}: no golden call changes the state", task.uid);
}

/// Keys that never cross to a client (the reference evaluator's privacy list, plus ours).
pub const FORBIDDEN_KEYS: &[&str] = &[
    "api_key",
    "assertion",
    "assertion_source",
    "assertions",
    "authorization",
    "credential",
    "credentials",
    "effects",
    "expected_state",
    "golden_state",
    "golden_state_model",
    "headers",
    "init_result",
    "line_content",
    "private_user_context",
    "prints",
    "secret",
    "session_id",
    "tb",
    "test_code",
    "test_context",
    "test_source",
    "token",
    "traceback",
    "user_context",
    "world_state",
    "golden_test_case",
    "tool_interactions",
    "data_patch",
    "rubrics_yesno",
    "rubrics",
    "checks",
    "diff",
    "golden_hash",
    "result_hash",
    "verdict",
    "deployment",
    "endpoint_url",
    "path",
    "source",
];

/// Text that never crosses to a client for these tasks and this setup: the API key, model
/// names, model URLs, file paths, each task's private user context (every non-trivial line)
/// and rubrics, and marker words of hidden structures.
pub fn forbidden_strings(tasks: &[&Task], paths: &[&Path], server: &MockServer) -> Vec<String> {
    let mut out = vec![
        SECRET.to_string(),
        USER_MODEL.to_string(),
        JUDGE_MODEL.to_string(),
        server.addr().to_string(),
        "golden_test_case".into(),
        "tool_interactions".into(),
        "data_patch".into(),
        "validate_database".into(),
        "dataset/test_case".into(),
        "openenv-run.yaml".into(),
    ];
    for p in paths {
        out.push(p.display().to_string());
        if let Ok(c) = p.canonicalize() {
            out.push(c.display().to_string());
        }
    }
    for t in tasks {
        if let Some(ctx) = &t.user_context {
            out.extend(
                ctx.lines()
                    .map(str::trim)
                    .filter(|l| l.len() >= 24)
                    .map(str::to_string),
            );
        }
        for s in t.servers() {
            out.extend(t.rubrics_yesno(&s));
        }
    }
    out
}

/// Every forbidden key (any depth, case-insensitive) of a frame, as `path: key`.
pub fn hidden_keys(v: &Value) -> Vec<String> {
    fn walk(v: &Value, path: &str, out: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, x) in m {
                    if FORBIDDEN_KEYS.contains(&k.to_ascii_lowercase().as_str()) {
                        out.push(format!("{path}: {k}"));
                    }
                    walk(x, &format!("{path}.{k}"), out);
                }
            }
            Value::Array(a) => {
                for (i, x) in a.iter().enumerate() {
                    walk(x, &format!("{path}[{i}]"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, "$", &mut out);
    out
}

/// The spec the Python client script reads.
pub fn episode_spec(uid: &str, calls: &[(String, Value)], expect: f64) -> Value {
    json!({
        "test_uid": uid,
        "calls": calls.iter().map(|(n, a)| json!([n, a])).collect::<Vec<_>>(),
        "closing": "All done: your request is handled. <DONE>",
        "expect_reward": expect,
        "expect_reward_type": if expect == 1.0 { "pass" } else { "fail" },
    })
}

/// The bundled example's first task (cancel an unshipped order).
pub const BS001: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

pub type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Longest wait for one reply; only a guard against hanging, not a timing check.
pub const GUARD: Duration = Duration::from_mins(2);

/// A WebSocket to the server's `/ws`.
pub async fn connect(url: &str) -> Ws {
    tokio_tungstenite::connect_async(format!("{}/ws", url.replace("http://", "ws://")))
        .await
        .expect("websocket connect")
        .0
}

/// Sends a frame and returns the next text frame.
pub async fn ask(ws: &mut Ws, frame: Value) -> Value {
    ws.send(WsMessage::Text(frame.to_string().into()))
        .await
        .expect("send");
    loop {
        let m = tokio::time::timeout(GUARD, ws.next())
            .await
            .expect("the server did not answer")
            .expect("the server closed the socket")
            .expect("a frame");
        if let WsMessage::Text(t) = m {
            return serde_json::from_str(&t).expect("server frames are JSON");
        }
    }
}

/// Starts a server on a free port and waits until its data is loaded.
pub async fn start_server(options: tb_openenv::Options) -> tb_openenv::RunningServer {
    let server = tb_openenv::spawn("127.0.0.1:0".parse().unwrap(), options)
        .await
        .expect("server");
    server.shared.wait_loaded().await;
    server
}

/// One HTTP/1.1 request (`POST`s carry `{}`): the status and the body.
pub async fn http(method: &str, url: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest
        .split_once('/')
        .map(|(h, p)| (h, format!("/{p}")))
        .unwrap();
    let mut s = tokio::net::TcpStream::connect(host).await.unwrap();
    let body = if method == "GET" { "" } else { "{}" };
    s.write_all(
        format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut buf = Vec::new();
    tokio::time::timeout(GUARD, s.read_to_end(&mut buf))
        .await
        .unwrap()
        .unwrap();
    let text = String::from_utf8_lossy(&buf).to_string();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    (status, body)
}
