//! The `/ws` protocol from a plain WebSocket client (tokio-tungstenite), over every frame type
//! the server sends: observations of every kind (reset, tools, tool, tool_batch, user,
//! terminal, error), state frames, and error frames of each code it can produce. Every frame
//! is scanned for hidden fields (keys and text) and none may carry any.

use crate::common;

use common::*;
use futures_util::{SinkExt, StreamExt};
use serde_json::{Value, json};
use std::time::Duration;
use tb_dataset::Dataset;
use tb_mock_model::Fault;
use tokio_tungstenite::tungstenite::Message as WsMessage;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// Longest wait for one reply; only a guard against hanging, not a timing check.
const GUARD: Duration = Duration::from_mins(2);

struct Client {
    ws: Ws,
    frames: Vec<String>,
}

impl Client {
    async fn connect(url: &str) -> Client {
        let (ws, _) =
            tokio_tungstenite::connect_async(format!("{}/ws", url.replace("http://", "ws://")))
                .await
                .expect("websocket connect");
        Client {
            ws,
            frames: Vec::new(),
        }
    }

    async fn send_raw(&mut self, text: &str) {
        self.ws
            .send(WsMessage::Text(text.to_string().into()))
            .await
            .expect("send");
    }

    /// The next text frame, or None when the server closed the socket.
    async fn next(&mut self) -> Option<Value> {
        loop {
            let m = tokio::time::timeout(GUARD, self.ws.next())
                .await
                .expect("the server did not answer")?;
            match m {
                Ok(WsMessage::Text(t)) => {
                    self.frames.push(t.to_string());
                    return Some(serde_json::from_str(&t).expect("server frames are JSON"));
                }
                Ok(WsMessage::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    }

    async fn ask(&mut self, frame: Value) -> Value {
        self.send_raw(&frame.to_string()).await;
        self.next().await.expect("a reply")
    }

    async fn step(&mut self, action: Value) -> Value {
        let f = self.ask(json!({"type": "step", "data": action})).await;
        assert_eq!(f["type"], "observation", "{f}");
        f["data"].clone()
    }
}

fn error_code(f: &Value) -> &str {
    assert_eq!(f["type"], "error", "{f}");
    f["data"]["code"].as_str().unwrap_or("")
}

fn check_frames(frames: &[String], forbidden: &[String]) {
    for raw in frames {
        let v: Value = serde_json::from_str(raw).unwrap();
        let keys = hidden_keys(&v);
        assert!(keys.is_empty(), "hidden keys {keys:?} in frame {raw}");
        for s in forbidden {
            if let Some(at) = raw.find(s.as_str()) {
                let from = raw.floor_char_boundary(at.saturating_sub(200));
                let to = raw.ceil_char_boundary((at + s.len() + 200).min(raw.len()));
                panic!("hidden text {s:?} in a frame: …{}…", &raw[from..to]);
            }
        }
    }
}

struct Setup {
    dir: tempfile::TempDir,
    mock: tb_mock_model::MockServer,
    config: std::path::PathBuf,
}

async fn setup() -> Setup {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    let config = write_config(dir.path(), &mock);
    Setup { dir, mock, config }
}

/// Asserts that the observation `o` ends its episode with `end_turn_tool`; its messages.
fn ended_by_end_turn_tool(o: &Value) -> &Vec<Value> {
    assert_eq!(o["done"], true, "{o}");
    let ob = &o["observation"];
    assert_eq!(ob["finish_reason"], "end_turn_tool", "{o}");
    ob["messages"].as_array().unwrap()
}

/// The example's tasks (of its test list) and the golden calls of [`BS001`].
fn example_tasks() -> (Vec<tb_core::Task>, Vec<(String, Value)>) {
    let ds = Dataset::open(&example()).unwrap();
    let tasks = ds.load_test_list(&example().join("testlist.yaml")).unwrap();
    let task = tasks.iter().find(|t| t.uid == BS001).unwrap();
    let calls = golden_calls(task);
    (tasks, calls)
}

/// A session on a server of the bundled example: the setup (which must outlive the server),
/// the server and a connected client.
async fn example_session() -> (Setup, tb_openenv::RunningServer, Client) {
    let s = setup().await;
    let server = s.serve_example().await;
    let c = Client::connect(&server.url()).await;
    (s, server, c)
}

impl Setup {
    /// Options serving the bundled example with the mock's config.
    fn example_options(&self) -> tb_openenv::Options {
        tb_openenv::Options::new(example(), Some(self.config.clone()))
    }

    /// A server of the bundled example with the mock's config, its data loaded.
    async fn serve_example(&self) -> tb_openenv::RunningServer {
        start_server(self.example_options()).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_frame_type_and_no_hidden_fields() {
    let (s, server, mut c) = example_session().await;
    let (tasks, calls) = example_tasks();
    let task = tasks.iter().find(|t| t.uid == BS001).unwrap();

    // Error frames: each code the session can produce without closing.
    c.send_raw("this is not json").await;
    assert_eq!(error_code(&c.next().await.unwrap()), "INVALID_JSON");
    c.send_raw("[1, 2]").await;
    assert_eq!(error_code(&c.next().await.unwrap()), "INVALID_JSON");
    assert_eq!(
        error_code(&c.ask(json!({"type": "dance"})).await),
        "UNKNOWN_TYPE"
    );
    assert_eq!(
        error_code(&c.ask(json!({"type": "step"})).await),
        "VALIDATION_ERROR"
    );
    let bad = c
        .ask(json!({"type": "step", "data": {"type": "call_tool", "tool_name": "x", "arguments": "nope", "extra": 1}}))
        .await;
    assert_eq!(error_code(&bad), "VALIDATION_ERROR");
    assert!(
        bad["data"]["errors"]
            .as_array()
            .is_some_and(|e| e.len() == 2),
        "{bad}"
    );
    let bad = c
        .ask(json!({"type": "step", "data": {"type": "call_tool", "tool_name": "a", "parallel_tool_calls": [{"name": "a"}]}}))
        .await;
    assert_eq!(error_code(&bad), "VALIDATION_ERROR");

    // State and steps before any reset.
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["type"], "state");
    assert_eq!(st["data"]["status"], "idle");
    assert_eq!(st["data"]["step_count"], 0);
    let o = c.step(json!({"type": "list_tools"})).await;
    assert_eq!(o["observation"]["kind"], "error");
    assert_eq!(o["observation"]["error"], "Environment is not active");
    assert_eq!(o["done"], false);

    // Resets that must fail without touching the file system: not in the test list, a path,
    // no uid at all. Client-named `dataset`/`config` paths are never read. These are the
    // client's mistakes: a VALIDATION_ERROR naming `test_uid` (never an episode ending in a
    // system error), the socket stays open and the environment idle.
    for (kwargs, kind) in [
        (
            json!({"test_uid": "brightside_retail.py:test_nope"}),
            "value_error",
        ),
        (json!({"test_uid": "../../../etc/passwd"}), "value_error"),
        (json!({"test_uid": "/etc/passwd:root"}), "value_error"),
        (json!({"seed": 3}), "missing"),
        (json!({"test_uid": 42}), "string_type"),
    ] {
        let f = c.ask(json!({"type": "reset", "data": kwargs})).await;
        assert_eq!(error_code(&f), "VALIDATION_ERROR", "{f}");
        let e = &f["data"]["errors"][0];
        assert_eq!(e["loc"], json!(["data", "test_uid"]), "{f}");
        assert_eq!(e["type"], kind, "{f}");
        assert!(!f.to_string().contains("passwd"), "{f}");
    }
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": BS001, "agent": "../x"}}))
        .await;
    assert_eq!(error_code(&f), "VALIDATION_ERROR", "{f}");
    assert_eq!(f["data"]["errors"][0]["loc"], json!(["data", "agent"]));
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["data"]["status"], "idle");
    assert_eq!(st["data"]["system_error"], false);

    // A full episode: reset, tools, single calls (known, unknown), a batch with a parse
    // error, a message the simulated user answers, a bad terminal turn, the closing message.
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": BS001, "episode_id": "ep-1", "seed": 7}}))
        .await;
    let d = &f["data"];
    assert_eq!(d["done"], false, "{f}");
    assert_eq!(d["reward"], Value::Null);
    let o = &d["observation"];
    assert_eq!(o["kind"], "reset");
    assert_eq!(o["task_uid"], BS001);
    assert_eq!(o["task"], json!(task.query.clone().unwrap()));
    assert_eq!(o["metadata"]["scenario"], "sandbox_external_retail");
    assert_eq!(d["metadata"], o["metadata"]);
    let tools: Vec<&str> = o["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(tools.contains(&"InjectionAttackInToolResponse") && tools.contains(&"cancel_order"));
    let msgs = o["messages"].as_array().unwrap();
    assert_eq!(msgs.last().unwrap()["role"], "user");
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["data"]["episode_id"], "ep-1");
    assert_eq!(st["data"]["status"], "active");

    let o = c.step(json!({"type": "list_tools", "metadata": {}})).await;
    assert_eq!(o["observation"]["kind"], "tools");
    assert_eq!(o["observation"]["steps_taken"], 0);

    let (t0, a0) = &calls[0];
    let o = c
        .step(json!({"type": "call_tool", "tool_name": t0, "arguments": a0, "call_id": "k0"}))
        .await;
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "tool", "{o}");
    assert_eq!(ob["tool_name"], json!(t0));
    assert_eq!(ob["call_id"], "k0");
    assert!(ob.get("tool_error").is_none(), "{o}");
    assert_eq!(ob["steps_taken"], 1);

    let o = c
        .step(json!({"type": "call_tool", "tool_name": "get_effects", "arguments": {}}))
        .await;
    assert_eq!(o["observation"]["tool_error"], "tool_not_found");
    assert_eq!(
        o["observation"]["tool_result"],
        "Error: function 'get_effects' does not exist"
    );

    let o = c
        .step(json!({"type": "call_tool", "parallel_tool_calls": [
            {"name": calls[1].0, "arguments": calls[1].1, "call_id": "b1"},
            {"name": "get_order", "arguments": {}, "call_id": "b2", "parse_error": "Expecting value: line 1 column 2"},
            {"name": "no_such_tool", "arguments": {}, "call_id": "b3"}
        ]}))
        .await;
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "tool_batch", "{o}");
    let r = ob["tool_results"].as_array().unwrap();
    assert_eq!(r.len(), 3);
    assert!(r[0].get("tool_error").is_none());
    assert_eq!(r[1]["tool_error"], "invalid_args");
    assert_eq!(r[2]["tool_error"], "tool_not_found");

    let o = c
        .step(
            json!({"type": "submit_message", "content": "Can you confirm you want it cancelled?"}),
        )
        .await;
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "user", "{o}");
    assert_eq!(ob["user_message"], USER_REPLY);
    assert_eq!(ob["response"], "Can you confirm you want it cancelled?");
    assert_eq!(o["done"], false);

    let o = c
        .step(json!({"type": "submit_message", "content": "ok", "terminal_tool_calls": [{"name": "cancel_order", "arguments": {}, "call_id": "t0"}]}))
        .await;
    assert_eq!(o["observation"]["kind"], "error", "{o}");
    assert_eq!(o["done"], false);

    for (i, (t, a)) in calls.iter().enumerate().skip(2) {
        let o = c
            .step(json!({"type": "call_tool", "tool_name": t, "arguments": a, "call_id": format!("g{i}")}))
            .await;
        assert_eq!(o["observation"]["kind"], "tool", "{o}");
    }
    let o = c
        .step(json!({"type": "submit_message", "content": "Your order ORD-5004 is cancelled and refunded. <DONE>"}))
        .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["reward"], 1.0, "{o}");
    let term = o["observation"].clone();
    assert_eq!(term["kind"], "terminal");
    assert_eq!(term["reward_type"], "pass");
    assert_eq!(term["finish_reason"], "done");
    assert_eq!(term["system_error"], false);
    assert_eq!(
        term["test_summary"],
        json!({"passed": true, "graded": true, "is_system_error": false})
    );
    assert!(term["response"].as_str().unwrap().ends_with("<DONE>"));
    let again = c
        .step(json!({"type": "call_tool", "tool_name": t0, "arguments": a0}))
        .await;
    assert_eq!(
        again, o,
        "a step after the end repeats the terminal observation"
    );
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["data"]["status"], "done");
    assert_eq!(st["data"]["step_count"], term["steps_taken"]);

    // Second episode on the same socket: the harness ends it early (`_finish`); nothing
    // was done, so it fails.
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    assert_eq!(f["data"]["observation"]["kind"], "reset");
    let o = c
        .step(json!({"type": "_finish", "reason": "agent_error"}))
        .await;
    assert_eq!(o["done"], true);
    assert_eq!(o["reward"], 0.0);
    assert_eq!(o["observation"]["reward_type"], "fail");
    assert_eq!(o["observation"]["finish_reason"], "agent_error");

    // Third: the end-turn tool ends the episode without executing siblings.
    c.ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    let o = c
        .step(json!({"type": "call_tool", "parallel_tool_calls": [
            {"name": "InjectionAttackInToolResponse", "arguments": {"reason": "x"}, "call_id": "e1"},
            {"name": "cancel_order", "arguments": {"order_id": "ORD-5004", "cancellation_reason": "customer_request"}, "call_id": "e2"}
        ]}))
        .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["observation"]["finish_reason"], "end_turn_tool");
    assert_eq!(o["observation"]["reward_type"], "fail");

    c.send_raw(&json!({"type": "close"}).to_string()).await;
    assert!(c.next().await.is_none(), "close ends the session");

    let mut frames = std::mem::take(&mut c.frames);
    frames.extend(user_simulator_failure(&s, &server).await);
    frames.extend(capacity_and_reaper(&s).await);
    let forbidden = forbidden_strings(
        &tasks.iter().collect::<Vec<_>>(),
        &[example().as_path(), s.config.as_path()],
        &s.mock,
    );
    check_frames(&frames, &forbidden);
    let kinds: std::collections::BTreeSet<String> = frames
        .iter()
        .filter_map(|f| serde_json::from_str::<Value>(f).ok())
        .map(|v| {
            let k = v["data"]["observation"]["kind"].as_str().unwrap_or("");
            let code = v["data"]["code"].as_str().unwrap_or("");
            format!("{}:{k}{code}", v["type"].as_str().unwrap_or(""))
        })
        .collect();
    for want in [
        "observation:reset",
        "observation:tools",
        "observation:tool",
        "observation:tool_batch",
        "observation:user",
        "observation:terminal",
        "observation:error",
        "state:",
        "error:INVALID_JSON",
        "error:UNKNOWN_TYPE",
        "error:VALIDATION_ERROR",
        "error:CAPACITY_REACHED",
    ] {
        assert!(
            kinds.contains(want),
            "no {want} frame was scanned: {kinds:?}"
        );
    }
    server.shutdown().await.unwrap();
}

/// The simulated user's endpoint fails: the episode ends as a system error, not a plain 0.
async fn user_simulator_failure(s: &Setup, server: &tb_openenv::RunningServer) -> Vec<String> {
    s.mock.push_fault(
        "user",
        Fault::Status {
            status: 400,
            retry_after: None,
            body: format!("{{\"error\": \"bad request for {SECRET}\"}}"),
        },
    );
    let mut c = Client::connect(&server.url()).await;
    c.ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    let o = c
        .step(json!({"type": "submit_message", "content": "Which order do you mean?"}))
        .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["reward"], 0.0);
    let ob = &o["observation"];
    assert_eq!(ob["reward_type"], "system_error");
    assert_eq!(ob["system_error"], true);
    assert_eq!(ob["test_summary"]["infrastructure_stage"], "user_simulator");
    assert_eq!(
        ob["error"],
        "ThinkingBox infrastructure failure during user_simulator."
    );
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["data"]["system_error"], true);
    c.frames
}

/// A second server with room for two sessions: a third connection gets CAPACITY_REACHED and
/// is closed. A third server with a short idle timeout: an idle session is closed by the
/// reaper, and its place is free again.
async fn capacity_and_reaper(s: &Setup) -> Vec<String> {
    let mut o = s.example_options();
    o.max_envs = 2;
    o.idle_timeout = None;
    let server = start_server(o).await;
    let mut a = Client::connect(&server.url()).await;
    let mut b = Client::connect(&server.url()).await;
    // Both sessions are registered once they answer a frame.
    a.ask(json!({"type": "state"})).await;
    b.ask(json!({"type": "state"})).await;
    let mut c = Client::connect(&server.url()).await;
    let f = c.next().await.expect("an error frame");
    assert_eq!(error_code(&f), "CAPACITY_REACHED");
    assert_eq!(f["data"]["max_sessions"], 2);
    assert_eq!(f["data"]["active_sessions"], 2);
    assert!(
        c.next().await.is_none(),
        "the socket is closed after CAPACITY_REACHED"
    );
    // Closing one frees a place.
    a.send_raw(&json!({"type": "close"}).to_string()).await;
    assert!(a.next().await.is_none());
    let mut d = Client::connect(&server.url()).await;
    // The closed session's place is released when its handler ends; retry a bounded number
    // of times (no timing assertion: only that a place frees up).
    let mut admitted = false;
    for _ in 0..50 {
        let f = d.ask(json!({"type": "state"})).await;
        if f["type"] == "state" {
            admitted = true;
            break;
        }
        assert_eq!(error_code(&f), "CAPACITY_REACHED");
        tokio::time::sleep(Duration::from_millis(20)).await;
        d = Client::connect(&server.url()).await;
    }
    assert!(admitted, "a closed session's place was never released");
    let mut frames = a.frames;
    frames.extend(b.frames);
    frames.extend(c.frames);
    frames.extend(d.frames);
    server.shutdown().await.unwrap();

    let mut o = s.example_options();
    o.idle_timeout = Some(Duration::from_millis(200));
    let server = start_server(o).await;
    let mut e = Client::connect(&server.url()).await;
    e.ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    // Idle sessions are closed by the reaper (bounded wait, no timing assertion).
    assert!(e.next().await.is_none(), "the idle session was closed");
    frames.extend(e.frames);
    server.shutdown().await.unwrap();
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ready_is_503_with_reasons_until_models_are_configured() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("no-models.yaml");
    std::fs::write(&cfg, "judge_type: legacy\n").unwrap();
    let server = start_server(tb_openenv::Options::new(example(), Some(cfg.clone()))).await;
    let get_json = |path: &str| {
        let url = format!("{}{path}", server.url());
        async move {
            let r = http("GET", &url).await;
            (
                r.0,
                serde_json::from_str::<Value>(&r.1).unwrap_or(Value::Null),
            )
        }
    };
    let (status, body) = get_json("/ready").await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["data"], true);
    assert_eq!(body["runtime_config"], true);
    assert_eq!(body["user_model"], false);
    assert_eq!(body["judge_model"], false);
    insta::assert_snapshot!(body["reasons"], @r#"["user_model: the run config has no user_model","judge_model: the run config has no judge_model"]"#);
    assert!(!body.to_string().contains(&dir.path().display().to_string()));
    assert_eq!(
        get_json("/health").await,
        (200, json!({"status": "healthy"}))
    );
    assert_eq!(
        get_json("/schema").await.1["action"]["oneOf"]
            .as_array()
            .unwrap()
            .len(),
        3
    );
    assert_eq!(get_json("/metadata").await.1["name"], "thinkingbox_env");
    for p in ["/reset", "/step", "/state"] {
        assert_eq!(get_json(p).await.0, 404, "{p}");
    }
    // A reset fails at the configuration stage, as a system error.
    let mut c = Client::connect(&server.url()).await;
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    assert_eq!(
        f["data"]["observation"]["error"],
        "ThinkingBox reset failed during configuration."
    );
    assert_eq!(f["data"]["observation"]["reward_type"], "system_error");
    server.shutdown().await.unwrap();

    // Ready with both models.
    let s = setup().await;
    let server = s.serve_example().await;
    let r = http("GET", &format!("{}/ready", server.url())).await;
    assert_eq!(r.0, 200, "{}", r.1);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_frames_never_break_the_session() {
    let (s, server, mut c) = example_session().await;
    let junk = [
        String::new(),
        "{".into(),
        "null".into(),
        "\"step\"".into(),
        "{\"type\": null}".into(),
        "{\"type\": \"step\", \"data\": []}".into(),
        "{\"type\": \"step\", \"data\": {\"type\": 5}}".into(),
        "{\"type\": \"step\", \"data\": {\"type\": \"call_tool\", \"parallel_tool_calls\": [1, {\"name\": \"\"}]}}".into(),
        "{\"type\": \"reset\", \"data\": \"x\"}".into(),
        format!("{{\"type\": \"{}\"}}", "x".repeat(10_000)),
        "{\"type\": \"step\", \"data\": {\"type\": \"submit_message\", \"terminal_tool_calls\": {}}}".into(),
    ];
    for j in &junk {
        c.send_raw(j).await;
        let f = c.next().await.expect("the session survives");
        assert_eq!(f["type"], "error", "{j} -> {f}");
        assert!(f["data"]["message"].as_str().unwrap().len() < 200);
    }
    // Binary frames that are not UTF-8 are refused the same way.
    c.ws.send(WsMessage::Binary(vec![0xff, 0xfe].into()))
        .await
        .unwrap();
    assert_eq!(error_code(&c.next().await.unwrap()), "INVALID_JSON");
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["type"], "state");
    let forbidden = forbidden_strings(&[], &[example().as_path(), s.config.as_path()], &s.mock);
    check_frames(&c.frames, &forbidden);
    server.shutdown().await.unwrap();
}

/// A rubric task of the benchmark: the judge model's yes is a pass, its no a graded fail, and
/// its failure a system error at the evaluator stage (never a plain 0). Rubric text never
/// reaches the client.
#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rubric_judge_pass_fail_and_failure() {
    let data = benchmark_data();
    let ds = Dataset::open(&data).unwrap();
    let all = ds
        .load_test_list(&data.join(tb_openenv::env::CANONICAL_TEST_LIST))
        .unwrap();
    let task = all
        .iter()
        .find(|t| !tb_eval::grade::task_rubrics(t).is_empty())
        .expect("a rubric task");
    let s = setup().await;
    let list = s.dir.path().join("one-rubric-task.yaml");
    std::fs::write(&list, format!("- {}\n", task.uid)).unwrap();
    let mut o = tb_openenv::Options::new(&data, Some(s.config.clone()));
    o.test_list = Some(list.clone());
    let server = start_server(o).await;
    let calls = golden_calls(task);
    let mut frames = Vec::new();
    let mut play = async |judge: &str| -> Value {
        match judge {
            "fault" => s.mock.push_fault(
                "judge",
                Fault::Status {
                    status: 400,
                    retry_after: None,
                    body: "{\"error\": \"no\"}".into(),
                },
            ),
            answer => {
                let a = answer.to_string();
                s.mock
                    .set_script("judge", move |_r: &tb_mock_model::MockRequest| {
                        tb_mock_model::Reply::Text(a.clone())
                    });
            }
        }
        let mut c = Client::connect(&server.url()).await;
        let f = c
            .ask(json!({"type": "reset", "data": {"test_uid": task.uid}}))
            .await;
        assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
        for (t, a) in &calls {
            let o = c
                .step(json!({"type": "call_tool", "tool_name": t, "arguments": a}))
                .await;
            assert_eq!(o["done"], false, "{o}");
        }
        let o = c
            .step(json!({"type": "submit_message", "content": "Here is everything you asked about. <DONE>"}))
            .await;
        frames.extend(std::mem::take(&mut c.frames));
        o
    };
    let yes = play("Yes").await;
    assert_eq!(yes["reward"], 1.0, "{yes}");
    assert_eq!(yes["observation"]["reward_type"], "pass");
    let no = play("No.").await;
    assert_eq!(no["reward"], 0.0, "{no}");
    assert_eq!(no["observation"]["reward_type"], "fail");
    assert_eq!(no["observation"]["test_summary"]["graded"], true);
    let failed = play("fault").await;
    assert_eq!(failed["reward"], 0.0, "{failed}");
    let ob = &failed["observation"];
    assert_eq!(ob["reward_type"], "system_error");
    assert_eq!(ob["system_error"], true);
    assert_eq!(ob["test_summary"]["is_system_error"], true);
    assert_eq!(ob["test_summary"]["infrastructure_stage"], "evaluator");
    assert_eq!(
        ob["error"],
        "ThinkingBox infrastructure failure during evaluator."
    );
    assert!(s.mock.count("judge") >= 3);
    let forbidden = forbidden_strings(
        &[task],
        &[data.as_path(), s.config.as_path(), list.as_path()],
        &s.mock,
    );
    check_frames(&frames, &forbidden);
    server.shutdown().await.unwrap();
}

/// Shutting the server down closes open sessions (it does not wait for clients to leave).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_closes_open_sessions() {
    let (_s, server, mut c) = example_session().await;
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
        .await;
    assert_eq!(f["data"]["observation"]["kind"], "reset");
    tokio::time::timeout(GUARD, server.shutdown())
        .await
        .expect("shutdown waits for no client")
        .unwrap();
    assert!(c.next().await.is_none(), "the session was closed");
}

/// A message over the size limit (20 MB against 8 MiB) is answered with a close frame (1009,
/// with the limit as its reason), not a TCP reset; a message within it still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_message_gets_a_close_frame_with_its_reason() {
    let (_s, server, mut c) = example_session().await;
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["type"], "state");
    let big = format!(
        "{{\"type\": \"state\", \"pad\": \"{}\"}}",
        "x".repeat(20 << 20)
    );
    // The server may stop reading mid-message: the send can fail once it closed.
    let _ = c.ws.send(WsMessage::Text(big.into())).await;
    let mut close = None;
    for _ in 0..100 {
        match tokio::time::timeout(GUARD, c.ws.next()).await {
            Ok(Some(Ok(WsMessage::Close(f)))) => {
                close = f;
                break;
            }
            Ok(Some(Ok(_))) => {}
            Ok(Some(Err(e))) => panic!("the server reset the connection: {e}"),
            Ok(None) => break,
            Err(e) => panic!("no close frame: {e}"),
        }
    }
    let f = close.expect("a close frame");
    assert_eq!(u16::from(f.code), 1009);
    insta::assert_snapshot!(f.reason.as_str(), @"message too big: the limit is 8388608 bytes");
    server.shutdown().await.unwrap();
}

/// The Airline Tau-Bench release over OpenEnv: the recorded solution of its first task, played
/// by the client as the agent, gets the reference's exact tool texts, and with the judge
/// answering "Yes" the reward of the recorded verdict.
#[tb_test_support::shared_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn airline_release_episode_gets_the_recorded_texts_and_verdict() {
    let shared = tb_test_support::shared();
    let data = benchmark_data();
    let text = std::fs::read_to_string(shared.join("tb-bench-v1/airline/traces.jsonl")).unwrap();
    let rec: Value = text
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .find(|r| r["kind"] == "solution")
        .unwrap();
    let s = setup().await;
    s.mock
        .set_script("judge", |_r: &tb_mock_model::MockRequest| {
            tb_mock_model::Reply::Text("Yes".into())
        });
    let mut o = tb_openenv::Options::new(&data, Some(s.config.clone()));
    o.test_list = Some(
        data.join("releases/dataset_2604_airline_tau_bench/testlist_2604_airline_tau_bench.yaml"),
    );
    o.clock = tb_sandbox::Clock::parse(rec["clock"]["now_utc"].as_str().unwrap()).unwrap();
    let server = start_server(o).await;
    let mut c = Client::connect(&server.url()).await;
    let f = c
        .ask(json!({"type": "reset", "data": {"test_uid": rec["id"]}}))
        .await;
    assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
    let mut calls = 0;
    for call in rec["calls"].as_array().unwrap() {
        if call["executed"] != true {
            continue;
        }
        let o = c
            .step(json!({"type": "call_tool", "tool_name": call["tool"], "arguments": call["parameters"]}))
            .await;
        assert_eq!(o["observation"]["tool_result"], call["result"], "{o}");
        calls += 1;
    }
    assert!(calls > 0);
    let o = c
        .step(json!({"type": "submit_message", "content": rec["response"].as_str().unwrap_or("Done.")}))
        .await;
    let want = if rec["verdict_judge_yes"]["passed"] == true {
        1.0
    } else {
        0.0
    };
    assert_eq!(o["reward"], want, "{o}");
    server.shutdown().await.unwrap();
}

/// The frames exactly as the OpenEnv ThinkingBox adapter's client (`ThinkingBoxEnv`) and its
/// evaluator serialize them: every field dumped with its default (`metadata: {}`, an empty
/// `parallel_tool_calls` beside a single call, null `tool_name`/`call_id` and empty
/// `arguments` beside a batch, `parse_error: null` on every child, any `_finish` reason),
/// and the adapter's terminal-turn rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapter_clients_frames_and_terminal_turns() {
    const END: &str = "InjectionAttackInToolResponse";
    let (_s, server, mut c) = example_session().await;
    let (_, calls) = example_tasks();
    async fn reset(c: &mut Client) {
        let f = c
            .ask(json!({"type": "reset", "data": {"test_uid": BS001}}))
            .await;
        assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
    }

    // list_tools, single calls (with and without a call id) and a batch, then `_finish`
    // with the client's default reason.
    reset(&mut c).await;
    let o = c.step(json!({"metadata": {}, "type": "list_tools"})).await;
    assert_eq!(o["observation"]["kind"], "tools", "{o}");
    let (t0, a0) = &calls[0];
    let o = c
        .step(json!({"metadata": {}, "type": "call_tool", "tool_name": t0, "arguments": a0, "call_id": "s1", "parallel_tool_calls": []}))
        .await;
    assert_eq!(o["observation"]["kind"], "tool", "{o}");
    assert_eq!(o["observation"]["call_id"], "s1");
    assert!(o["observation"].get("tool_error").is_none(), "{o}");
    let o = c
        .step(json!({"metadata": {}, "type": "call_tool", "tool_name": t0, "arguments": a0, "call_id": null, "parallel_tool_calls": []}))
        .await;
    assert_eq!(o["observation"]["kind"], "tool", "{o}");
    let o = c
        .step(json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {}, "call_id": null, "parallel_tool_calls": [
            {"name": calls[1].0, "arguments": calls[1].1, "call_id": "p1", "parse_error": null},
            {"name": t0, "arguments": {}, "call_id": "p2", "parse_error": "Expecting value: line 1 column 1"}
        ]}))
        .await;
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "tool_batch", "{o}");
    assert!(ob["tool_results"][0].get("tool_error").is_none(), "{o}");
    assert_eq!(ob["tool_results"][1]["tool_error"], "invalid_args");
    // Conflicting single-call fields beside a batch, and neither form, are still refused.
    for bad in [
        json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {"a": 1}, "call_id": null, "parallel_tool_calls": [{"name": t0, "arguments": {}, "call_id": "x", "parse_error": null}]}),
        json!({"metadata": {}, "type": "call_tool", "tool_name": t0, "arguments": {}, "call_id": null, "parallel_tool_calls": [{"name": t0, "arguments": {}, "call_id": "x", "parse_error": null}]}),
        json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {}, "call_id": "c", "parallel_tool_calls": [{"name": t0, "arguments": {}, "call_id": "x", "parse_error": null}]}),
        json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {}, "call_id": null, "parallel_tool_calls": []}),
    ] {
        let f = c.ask(json!({"type": "step", "data": bad})).await;
        assert_eq!(error_code(&f), "VALIDATION_ERROR", "{f}");
    }
    let o = c
        .step(json!({"metadata": {}, "type": "_finish", "reason": "harness"}))
        .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["observation"]["finish_reason"], "harness");
    assert_eq!(o["observation"]["reward_type"], "fail");
    let st = c.ask(json!({"type": "state"})).await;
    assert_eq!(st["data"]["status"], "done");

    // Any reason string is recorded.
    reset(&mut c).await;
    let o = c
        .step(json!({"metadata": {}, "type": "_finish", "reason": "limit"}))
        .await;
    assert_eq!(o["observation"]["finish_reason"], "limit", "{o}");

    // Terminal turns that the adapter refuses: no end-turn tool, a tool the task lacks.
    reset(&mut c).await;
    for (terminal, why) in [
        (
            json!([{"name": t0, "arguments": {}, "call_id": "x1", "parse_error": null}]),
            "Terminal turn requires a configured end-turn tool",
        ),
        (
            json!([{"name": END, "arguments": {}, "call_id": "x1", "parse_error": null}, {"name": "no_such_tool", "arguments": {}, "call_id": "x2", "parse_error": null}]),
            "Terminal turn contains a tool unavailable to this task",
        ),
    ] {
        let o = c
            .step(json!({"metadata": {}, "type": "submit_message", "content": "x", "terminal_tool_calls": terminal, "tool_calls_before_content": false}))
            .await;
        assert_eq!(o["observation"]["kind"], "error", "{o}");
        assert_eq!(o["observation"]["error"], why, "{o}");
        assert_eq!(o["done"], false);
    }
    // An end-turn call next to a normal call: both recorded, neither runs, the episode
    // ends with `end_turn_tool`.
    let o = c
        .step(json!({"metadata": {}, "type": "submit_message", "content": "I am stopping here.", "terminal_tool_calls": [
            {"name": END, "arguments": {"reason": "r"}, "call_id": "e1", "parse_error": null},
            {"name": calls[1].0, "arguments": calls[1].1, "call_id": "e2", "parse_error": null}
        ], "tool_calls_before_content": false}))
        .await;
    let msgs = ended_by_end_turn_tool(&o);
    let n = msgs.len();
    assert_eq!(msgs[n - 2]["content"], "I am stopping here.", "{o}");
    let batch = &msgs[n - 1];
    assert_eq!(batch["T"], "ParallelToolCall", "{o}");
    assert_eq!(batch["metadata"]["is_end_turn_tool"], true, "{o}");
    let ids: Vec<&str> = batch["tool_calls"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["e1", "e2"]);
    assert!(
        !msgs.iter().any(|m| m["T"] == "ToolResponse"),
        "no terminal call runs: {o}"
    );

    // The calls before the text, only the end-turn call: the episode ends with
    // `end_turn_tool` (the simulated user is not asked).
    reset(&mut c).await;
    let o = c
        .step(json!({"metadata": {}, "type": "submit_message", "content": "Reporting this.", "terminal_tool_calls": [
            {"name": END, "arguments": {"reason": "r"}, "call_id": "f1", "parse_error": null}
        ], "tool_calls_before_content": true}))
        .await;
    let msgs = ended_by_end_turn_tool(&o);
    let n = msgs.len();
    assert_eq!(msgs[n - 2]["T"], "ParallelToolCall", "{o}");
    assert_eq!(msgs[n - 1]["content"], "Reporting this.", "{o}");
    assert_eq!(
        msgs.iter().filter(|m| m["role"] == "user").count(),
        1,
        "only the task's query: {o}"
    );
    server.shutdown().await.unwrap();
}
