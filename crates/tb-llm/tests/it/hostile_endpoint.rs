//! Model endpoints that misbehave on purpose, served by a raw TCP listener in the test: a 200
//! whose body never ends, a huge `Content-Length`, redirects to another port (does the key go
//! with them?), tool calls with huge arguments. Each must end as a bounded, clear error.

use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use tb_core::Message;
use tb_llm::config::{Credential, Secret};
use tb_llm::{LlmClient, LlmConfig, LlmError};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Reads one HTTP/1.1 request (head and a `Content-Length` body); its head.
async fn read_request(s: &mut TcpStream) -> String {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = s.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return String::from_utf8_lossy(&buf).into_owned();
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).into_owned();
            let len = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + len {
                let n = s.read(&mut chunk).await.unwrap_or(0);
                if n == 0 {
                    break;
                }
                buf.extend_from_slice(&chunk[..n]);
            }
            return head;
        }
    }
}

/// A server answering every connection with `reply`; the request heads it saw.
async fn serve<F, Fut>(reply: F) -> (String, Arc<Mutex<Vec<String>>>)
where
    F: Fn(TcpStream) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let reply = Arc::new(reply);
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            let head = read_request(&mut s).await;
            seen2.lock().unwrap().push(head);
            tokio::spawn(reply(s));
        }
    });
    (format!("http://{addr}"), seen)
}

fn cfg(base: &str) -> LlmConfig {
    let mut c = LlmConfig::chat(&format!("{base}/v1/chat/completions"), "m");
    c.retry.backoff_base = 0.0;
    c.retry.backoff_max = 0.0;
    c.timeout = 120.0;
    c
}

/// The error a client with `c` gets for [`user`]'s message (panics when it gets a reply).
async fn refused(c: &LlmConfig) -> LlmError {
    LlmClient::new(c)
        .unwrap()
        .complete_messages(&user())
        .await
        .unwrap_err()
}

fn user() -> Vec<Message> {
    vec![Message::text("user", "hi")]
}

#[tokio::test]
async fn a_reply_that_never_ends_stops_at_the_cap() {
    let (base, seen) = serve(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
            .await;
        let piece = vec![b' '; 64 * 1024];
        let mut frame = format!("{:x}\r\n", piece.len()).into_bytes();
        frame.extend_from_slice(&piece);
        frame.extend_from_slice(b"\r\n");
        // endless: until the client goes away
        while s.write_all(&frame).await.is_ok() {}
    })
    .await;
    let mut c = cfg(&base);
    c.max_reply_bytes = 4 << 20;
    let e = refused(&c).await;
    let msg = e.to_string();
    assert!(
        msg.contains("over the limit of 4194304 bytes (4 MiB, max_reply_bytes)"),
        "{msg}"
    );
    assert_eq!(e.kind(), "MalformedReply");
    // not retried: the same endpoint would send the same
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn a_huge_content_length_is_refused_before_reading() {
    let (base, _) = serve(|mut s| async move {
        let _ = s
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1099511627776\r\n\r\n{\"choices\": [")
            .await;
        // and then nothing: a client that waited for the body would hang here
        tokio::time::sleep(std::time::Duration::from_mins(10)).await;
    })
    .await;
    let e = refused(&cfg(&base)).await;
    let msg = e.to_string();
    assert!(
        msg.contains(
            "announces 1099511627776 bytes, over the limit of 33554432 bytes (32 MiB, max_reply_bytes)"
        ),
        "{msg}"
    );
}

/// The other origin a redirect points to: it answers as a model would and records whether a
/// key came with the request.
async fn other_origin() -> (String, Arc<Mutex<Vec<String>>>) {
    serve_json(
        json!({"choices": [{"message": {"role": "assistant", "content": "from elsewhere"}}]})
            .to_string(),
    )
    .await
}

/// An endpoint answering every request with `200 OK` and the JSON `body`.
async fn serve_json(body: String) -> (String, Arc<Mutex<Vec<String>>>) {
    serve(move |mut s| {
        let body = body.clone();
        async move {
            let _ = s
                .write_all(
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                        body.len()
                    )
                    .as_bytes(),
                )
                .await;
        }
    })
    .await
}

#[tokio::test]
async fn redirects_are_not_followed_and_the_key_stays_home() {
    for (status, header) in [(301, "api-key"), (302, "x-api-key"), (307, "Authorization")] {
        let (elsewhere, elsewhere_seen) = other_origin().await;
        let location = format!("{elsewhere}/v1/chat/completions?token=abc");
        let (base, seen) = serve(move |mut s| {
            let location = location.clone();
            async move {
                let _ = s
                    .write_all(
                        format!("HTTP/1.1 {status} Moved\r\nlocation: {location}\r\ncontent-length: 0\r\n\r\n")
                            .as_bytes(),
                    )
                    .await;
            }
        })
        .await;
        let mut c = cfg(&base);
        c.credential = Some(Credential {
            api_key: Secret::new("sk-redirect-test-key"),
            header: header.into(),
        });
        let e = refused(&c).await;
        let msg = e.to_string();
        assert!(msg.starts_with(&format!("HTTP {status} from ")), "{msg}");
        assert!(
            msg.contains(&format!(
                "the endpoint redirects to {elsewhere}/v1/chat/completions; redirects are not followed"
            )),
            "{msg}"
        );
        assert!(!msg.contains("token=abc"), "the query is not echoed: {msg}");
        assert_eq!(seen.lock().unwrap().len(), 1);
        // the key went to the endpoint, and nothing at all to the other origin
        assert!(
            seen.lock().unwrap()[0]
                .to_ascii_lowercase()
                .contains(&format!("{}:", header.to_ascii_lowercase()))
        );
        assert!(elsewhere_seen.lock().unwrap().is_empty());
    }
}

fn tool_reply(args: &str) -> String {
    json!({"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "f", "arguments": args}},
        {"id": "c2", "type": "function", "function": {"name": "g", "arguments": "{\"a\": 1}"}}]}}]})
    .to_string()
}

#[tokio::test]
async fn huge_tool_arguments_are_an_argument_error_and_kept_out_of_the_conversation() {
    let huge = format!("{{\"q\": \"{}\"}}", "x".repeat(3 << 20));
    let body = tool_reply(&huge);
    let (base, _) = serve_json(body).await;
    let client = LlmClient::new(&cfg(&base)).unwrap();
    let mut session = tb_llm::ChatSession::new(client, &[]).unwrap();
    session.add(&user());
    let c = session.complete().await.unwrap();
    let Some(Message::ParallelToolCall { tool_calls, .. }) = c.messages.last() else {
        panic!("no tool calls: {:?}", c.messages);
    };
    assert_eq!(tool_calls[0].arguments, json!({}));
    assert_eq!(
        tool_calls[0].metadata["error"],
        json!(format!(
            "Error: the tool arguments are {} bytes, over the limit of 1048576 bytes (max_tool_argument_bytes); they were not read",
            huge.len()
        ))
    );
    // the other call of the reply is untouched
    assert_eq!(tool_calls[1].arguments, json!({"a": 1}));
    assert_eq!(tool_calls[1].metadata["error"], Value::Null);
    // what goes back to the model next time holds `{}`, not the 3 MiB
    let native: &Value = session.native().last().unwrap();
    assert_eq!(
        native["tool_calls"][0]["function"]["arguments"],
        json!("{}")
    );
    assert!(native.to_string().len() < 1024);
}
