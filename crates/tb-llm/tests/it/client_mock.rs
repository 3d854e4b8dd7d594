//! The clients against the mock server over real HTTP: the three APIs, retries and errors.

use serde_json::json;
use std::time::Duration;
use tb_core::Message;
use tb_llm::{ChatSession, LlmClient, LlmConfig, LlmError, Provider, Secret, ToolSpec};
use tb_mock_model::{Api, Fault, MockOptions, MockServer, Reply, ToolPlayer};

fn cfg(server: &MockServer, role: &str, api: Api) -> LlmConfig {
    let mut c = LlmConfig::chat(&server.url(role, api), "mock-model");
    c.provider = match api {
        Api::Chat => Provider::Chat,
        Api::Responses => Provider::Responses,
        Api::Anthropic => Provider::Anthropic,
    };
    c.retry.backoff_base = 0.001;
    c.retry.backoff_max = 0.01;
    c.timeout = 5.0;
    c.credential = Some(tb_llm::config::Credential {
        api_key: Secret::new("sk-test-XYZ"),
        header: "Authorization".into(),
    });
    c
}

/// A mock server whose route `role` answers `text` to every request.
async fn answering(role: &str, text: &'static str) -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.set_script(role, move |_r: &tb_mock_model::MockRequest| {
        Reply::Text(text.into())
    });
    server
}

/// An HTTP error reply with `status`, its `Retry-After` header and `body`.
fn status(status: u16, retry_after: Option<&str>, body: &str) -> Fault {
    Fault::Status {
        status,
        retry_after: retry_after.map(str::to_string),
        body: body.into(),
    }
}

/// `client` completing the one user message `x`.
async fn ask_x(client: &LlmClient) -> Result<tb_llm::Completion, LlmError> {
    client
        .complete_messages(&[Message::text("user", "x")])
        .await
}

fn tool() -> ToolSpec {
    ToolSpec {
        name: "get_order".into(),
        description: "d".into(),
        parameters: json!({"type": "object", "properties": {"order_id": {"type": "string"}}}),
    }
}

#[tokio::test]
async fn three_apis_round_trip_tool_calls_and_usage() {
    let server = MockServer::start().await.unwrap();
    server.set_script(
        "agent",
        ToolPlayer {
            calls: vec![("get_order".into(), json!({"order_id": "O1"}))],
            closing: "Done. <DONE>".into(),
        },
    );
    for api in [Api::Chat, Api::Responses, Api::Anthropic] {
        let client = LlmClient::new(&cfg(&server, "agent", api)).unwrap();
        let mut s = ChatSession::new(client, &[tool()]).unwrap();
        s.add(&[Message::text("system", "sys"), Message::text("user", "hi")]);
        let c = s.complete().await.unwrap();
        let Message::ParallelToolCall { tool_calls, .. } = &c.messages[0] else {
            panic!("{api:?}: {:?}", c.messages)
        };
        assert_eq!(tool_calls[0].arguments, json!({"order_id": "O1"}));
        assert!(
            c.usage.input_tokens > 0 && c.usage.input_tokens_details.cached_tokens == 3,
            "{api:?}"
        );
        s.add(&[Message::ToolResponse {
            metadata: serde_json::Map::default(),
            name: "get_order".into(),
            content: "{}".into(),
            id: tool_calls[0].id.clone(),
        }]);
        let c = s.complete().await.unwrap();
        assert!(
            matches!(&c.messages[0], Message::Text { content, .. } if content == "Done. <DONE>"),
            "{api:?}"
        );
    }
    let reqs = server.requests();
    assert!(reqs.iter().all(|r| {
        r.headers
            .iter()
            .any(|(k, v)| k == "authorization" && v == "Bearer sk-test-XYZ")
    }));
    let anth = reqs.iter().find(|r| r.api == Api::Anthropic).unwrap();
    assert_eq!(anth.body["system"][0]["text"], "sys");
}

#[tokio::test]
async fn retries_429_and_listed_5xx_then_succeeds() {
    let server = answering("u", "ok").await;
    server.push_fault(
        "u",
        status(429, Some("0"), "{\"error\":{\"message\":\"slow down\"}}"),
    );
    server.push_fault("u", status(503, None, "busy"));
    server.push_fault("u", Fault::Malformed("{\"nope\": 1}".into()));
    let client = LlmClient::new(&cfg(&server, "u", Api::Chat)).unwrap();
    let c = ask_x(&client).await.unwrap();
    assert_eq!(c.attempts, 4);
    assert_eq!(server.count("u"), 4);
    // every attempt sends the same request
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4);
    assert_eq!(reqs[0].body["messages"][0]["content"], "x");
    assert!(reqs.iter().all(|r| {
        r.body == reqs[0].body
            && r.headers
                .iter()
                .any(|(k, v)| k == "content-type" && v == "application/json")
    }));
}

#[tokio::test]
async fn a_lean_server_reads_the_same_requests_without_tool_schemas() {
    type Seen = std::sync::Arc<std::sync::Mutex<Vec<(Vec<String>, String, bool)>>>;
    let mut seen: Vec<Seen> = Vec::new();
    for options in [
        MockOptions::default(),
        MockOptions::lean(),
        MockOptions::campaign(),
    ] {
        let server = MockServer::start_with(options).await.unwrap();
        let log: Seen = std::sync::Arc::default();
        let l = log.clone();
        server.set_script("a", move |r: &tb_mock_model::MockRequest| {
            l.lock().unwrap().push((
                r.tools.clone(),
                format!("{:?} {:?}", r.system, r.turns),
                r.body.get("tools").is_some(),
            ));
            Reply::Text(format!("{} tools", r.tools.len()))
        });
        let second = ToolSpec {
            name: "find".into(),
            ..tool()
        };
        for api in [Api::Chat, Api::Responses, Api::Anthropic] {
            let client = LlmClient::new(&cfg(&server, "a", api)).unwrap();
            let mut s = ChatSession::new(client, &[tool(), second.clone()]).unwrap();
            s.add(&[Message::text("system", "sys"), Message::text("user", "hi")]);
            // twice: the second request carries the tool list the server has seen
            for _ in 0..2 {
                let c = s.complete().await.unwrap();
                assert!(
                    matches!(&c.messages[0], Message::Text { content, .. } if content == "2 tools"),
                    "{api:?}: {:?}",
                    c.messages
                );
                s.add(&[Message::text("user", "more")]);
            }
        }
        seen.push(log);
    }
    let full = seen[0].lock().unwrap();
    assert_eq!(full.len(), 6);
    assert!(full[1].1.contains("more") && full[1].1.contains("2 tools"));
    for lean in [seen[1].lock().unwrap(), seen[2].lock().unwrap()] {
        assert_eq!(lean.len(), 6);
        for (f, l) in full.iter().zip(lean.iter()) {
            assert_eq!(f.0, ["get_order", "find"]);
            assert_eq!(f.1, l.1);
            assert_eq!(&f.0, &l.0);
            assert!(f.2 && !l.2);
        }
    }
}

#[tokio::test]
async fn a_server_that_keeps_no_requests_still_counts_them() {
    let server = MockServer::start_with(MockOptions::lean()).await.unwrap();
    server.set_script("u", |r: &tb_mock_model::MockRequest| {
        // scripts still see the whole request
        let n = r.body["messages"].as_array().map_or(0, Vec::len);
        Reply::Text(format!("{} {n}", r.last_user().unwrap_or("")))
    });
    server.push_fault("u", status(503, None, "busy"));
    let client = LlmClient::new(&cfg(&server, "u", Api::Chat)).unwrap();
    for _ in 0..2 {
        let c = ask_x(&client).await.unwrap();
        assert!(
            matches!(&c.messages[0], Message::Text { content, .. } if content == "x 1"),
            "{:?}",
            c.messages
        );
    }
    assert_eq!(server.count("u"), 3);
    assert_eq!(server.count("other"), 0);
    assert!(server.requests().is_empty());
}

#[tokio::test]
async fn unlisted_500_is_an_error_at_once() {
    let server = answering("u", "ok").await;
    server.push_fault("u", status(500, None, "{\"error\":\"boom\"}"));
    let client = LlmClient::new(&cfg(&server, "u", Api::Chat)).unwrap();
    let e = ask_x(&client).await.unwrap_err();
    assert!(
        matches!(&e, LlmError::Http { status: 500, message, attempts: 1, .. } if message == "boom"),
        "{e}"
    );
    assert_eq!(e.kind(), "HttpError");
}

#[tokio::test]
async fn malformed_replies_exhaust_their_budget_with_a_clear_error() {
    let server = MockServer::start().await.unwrap();
    for _ in 0..3 {
        server.push_fault("u", Fault::Malformed("not json".into()));
    }
    let client = LlmClient::new(&cfg(&server, "u", Api::Chat)).unwrap();
    let e = ask_x(&client).await.unwrap_err();
    assert_eq!(e.kind(), "MalformedReply");
    insta::with_settings!({filters => vec![(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]")]}, {
        insta::assert_snapshot!(e, @"malformed reply: the body is not JSON (expected ident at line 1 column 2) (from http://127.0.0.1:[PORT]/u/v1/chat/completions, 3 attempt(s))");
    });
    assert_eq!(server.count("u"), 3);
}

#[tokio::test]
async fn timeouts_are_retried_then_reported() {
    let server = answering("u", "late").await;
    let mut c = cfg(&server, "u", Api::Chat);
    c.timeout = 0.05;
    c.retry.max_retries_timeout = 1;
    server.push_fault("u", Fault::Delay(Duration::from_millis(400)));
    let client = LlmClient::new(&c).unwrap();
    // one timeout, then a normal answer
    let ok = ask_x(&client).await.unwrap();
    assert_eq!(ok.attempts, 2);
    server.push_fault("u", Fault::Delay(Duration::from_millis(400)));
    server.push_fault("u", Fault::Delay(Duration::from_millis(400)));
    let e = ask_x(&client).await.unwrap_err();
    assert_eq!(e.kind(), "Timeout", "{e}");
}

#[tokio::test]
async fn a_dead_endpoint_gives_a_connect_error() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let mut c = LlmConfig::chat(&format!("http://127.0.0.1:{port}/v1/chat/completions"), "m");
    c.retry.backoff_base = 0.001;
    c.retry.max_retries_connect = 1;
    let e = LlmClient::new(&c)
        .unwrap()
        .complete_messages(&[Message::text("user", "x")])
        .await
        .unwrap_err();
    assert_eq!(e.kind(), "ConnectError", "{e}");
    // The whole message, naming the address it could not reach.
    let port = format!(":{port}"); // digits: a regex matching itself
    insta::with_settings!({filters => vec![(port.as_str(), ":[PORT]"), (r"os error \d+", "os error [ERRNO]")]}, {
        insta::assert_snapshot!(e, @"cannot connect to http://127.0.0.1:[PORT]/v1/chat/completions after 2 attempt(s): error sending request: client error (Connect): tcp connect error: Connection refused (os error [ERRNO])");
    });
}

#[tokio::test]
async fn requests_with_tools_are_sent_whole_with_a_length_also_when_retried() {
    // The tools' JSON is a shared segment of the body: the server must still get one whole
    // body with a `Content-Length`, on the first send and on a retry.
    let server = answering("agent", "ok <DONE>").await;
    server.push_fault("agent", status(503, None, "busy"));
    let second = ToolSpec {
        name: "find".into(),
        ..tool()
    };
    for api in [Api::Chat, Api::Responses, Api::Anthropic] {
        let c = cfg(&server, "agent", api);
        let client = LlmClient::new(&c).unwrap();
        let tools = client.tools(&[tool(), second.clone()]).unwrap();
        let mut s = ChatSession::new(client, &[tool(), second.clone()]).unwrap();
        s.add(&[Message::text("system", "sys"), Message::text("user", "hi")]);
        let native = s.native().to_vec();
        s.complete().await.unwrap();
        let want = tb_llm::wire::request_body(&c, &native, Some(&tools)).unwrap();
        let bytes = tb_llm::wire::request_body_bytes(&c, &native, Some(&tools)).unwrap();
        let sent: Vec<_> = server
            .requests()
            .into_iter()
            .filter(|r| r.api == api)
            .collect();
        assert_eq!(sent.len(), if api == Api::Chat { 2 } else { 1 }, "{api:?}");
        for r in &sent {
            assert_eq!(r.body, want, "{api:?}");
            let header = |name: &str| {
                r.headers
                    .iter()
                    .find(|(k, _)| k == name)
                    .map(|(_, v)| v.clone())
            };
            assert_eq!(header("content-length"), Some(bytes.len().to_string()));
            assert_eq!(header("transfer-encoding"), None);
        }
    }
}

#[tokio::test]
async fn the_server_counts_the_requests_it_holds() {
    let server =
        MockServer::start_with(MockOptions::lean().with_reply_delay(Duration::from_millis(500)))
            .await
            .unwrap();
    server.set_script("u", |_r: &tb_mock_model::MockRequest| {
        Reply::Text("ok".into())
    });
    assert_eq!((server.in_flight(), server.peak_in_flight()), (0, 0));
    let client = LlmClient::new(&cfg(&server, "u", Api::Chat)).unwrap();
    let msgs = [Message::text("user", "x")];
    let one = || client.complete_messages(&msgs);
    let (a, b, c) = tokio::join!(one(), one(), one());
    assert!(a.is_ok() && b.is_ok() && c.is_ok());
    // every request answered: none held; at least one was held at some point
    assert_eq!(server.in_flight(), 0);
    assert!((1..=3).contains(&server.peak_in_flight()));
    assert_eq!(server.count("u"), 3);
    server.reset_peak_in_flight();
    assert_eq!(server.peak_in_flight(), 0);
}
