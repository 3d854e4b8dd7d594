//! Secrets never leave the process, and the evaluator surface needs a token by default.
//!
//! - A model endpoint that echoes the request (API key header included) in its 401 body: the
//!   key reaches no record, errors sidecar, manifest, console line, log line or `tb pp`
//!   output; neither does the password in the endpoint URL's userinfo.
//! - `tb mcp-start` without `--token` generates one, prints it, and refuses the admin and
//!   Session Proxy routes without it.
//!
//! Everything listens on 127.0.0.1 only; every wait is bounded.

use super::common::{example, infer_args};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::Duration;

const KEY: &str = "sk-echoed-key-5d1f0a7c93b2e";
const URL_PASSWORD: &str = "url-pw-8c4e21b7";

/// Answers every request with a 401 whose body quotes the whole request head.
fn echo_401_server() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        for s in listener.incoming() {
            let Ok(mut s) = s else { return };
            std::thread::spawn(move || {
                let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                let mut head = Vec::new();
                let mut buf = [0u8; 4096];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let text = String::from_utf8_lossy(&head).into_owned();
                let body = serde_json::json!({"error": {"message": format!("Incorrect API key provided. Request was: {text}")}})
                    .to_string();
                let reply = format!(
                    "HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = s.write_all(reply.as_bytes());
            });
        }
    });
    addr
}

#[test]
fn an_echoed_key_reaches_no_file_console_or_log() {
    let addr = echo_401_server();
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("config.yaml");
    let url = format!("http://user:{URL_PASSWORD}@{addr}/v1/chat/completions");
    let model = format!(
        "    type: aoai\n    deployment: m\n    endpoint_url: {url}\n    api_key_env: TB_TEST_ECHO_KEY\n"
    );
    std::fs::write(
        &cfg,
        format!(
            "orchestrator:\n  type: thinkingbox\n  agent_model:\n{model}user_model:\n{}judge_model:\n{}",
            model.replace("    ", "  "),
            model.replace("    ", "  ")
        ),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    let root = example();
    let extra = ["-c", cfg.to_str().unwrap(), "--log", "debug"];
    let args = infer_args(
        &root,
        &root.join("testlist.yaml"),
        "think",
        "1",
        &out,
        &extra,
    );
    let run = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(&args)
        .env("TB_TEST_ECHO_KEY", KEY)
        .env_remove("THINKINGBOX_DATA")
        .output()
        .expect("tb runs");
    let (_, stdout, stderr) = super::common::code_and_streams(&run);
    let console = stdout + &stderr;
    // The endpoint was reached and its error recorded (else this test shows nothing).
    let sidecar = dir.path().join("out_errors.jsonl");
    let errors = std::fs::read_to_string(&sidecar).unwrap_or_default();
    assert!(
        errors.contains("Incorrect API key provided"),
        "no echoed error in the sidecar: {errors}\n{console}"
    );
    let manifest = std::fs::read_to_string(dir.path().join("out_run_metadata.json")).unwrap();
    let records = std::fs::read_to_string(&out).unwrap_or_default();
    let first = errors.lines().next().unwrap().to_string();
    // The whole recorded error: the endpoint's echo with the key and the password redacted.
    let rec: serde_json::Value = serde_json::from_str(&first).unwrap();
    let port = format!(":{}", addr.port());
    insta::with_settings!({filters => vec![
        (tb_test_support::regex_literal(&port).as_str(), ":[PORT]"),
        // the size of the prompt and the tools, not the redaction under test
        (r"content-length: \d+", "content-length: [LEN]"),
        // the request body (the task's prompt and tools) is cut in the message; the head is
        // what the redaction is about
        (r#"\\r\\n\\r\\n\{.*\.\.\.""#, r#"\r\n\r\n[REQUEST BODY]...""#),
    ]}, {
        insta::assert_snapshot!(
            "echoed_key_error_record",
            serde_json::to_string_pretty(&rec["metadata"]["error"]).unwrap()
        );
    });
    let line = dir.path().join("one.jsonl");
    std::fs::write(&line, format!("{first}\n")).unwrap();
    let pp = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(["pp", line.to_str().unwrap()])
        .output()
        .expect("tb pp runs");
    let pp = String::from_utf8_lossy(&pp.stdout).into_owned();
    assert!(pp.contains("Incorrect API key"), "{pp}");
    for (what, text) in [
        ("console and logs", &console),
        ("errors sidecar", &errors),
        ("records", &records),
        ("manifest", &manifest),
        ("tb pp", &pp),
    ] {
        assert!(!text.contains(KEY), "the API key reached the {what}");
        assert!(
            !text.contains(URL_PASSWORD),
            "the URL password reached the {what}"
        );
    }
    assert!(errors.contains("<redacted>"), "{errors}");
}

#[test]
fn mcp_start_generates_a_token_and_needs_it() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args([
            "mcp-start",
            "--port",
            "0",
            "--data",
            example().to_str().unwrap(),
        ])
        .env_remove("TB_MCP_TOKEN")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tb mcp-start runs");
    let stderr = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                return;
            }
        }
    });
    let (mut token, mut url) = (None, None);
    while token.is_none() || url.is_none() {
        let Ok(l) = rx.recv_timeout(Duration::from_mins(2)) else {
            break;
        };
        if let Some(t) = l
            .split("admin token")
            .nth(1)
            .and_then(|r| r.rsplit(": ").next())
        {
            token = Some(t.trim().to_string());
        }
        if let Some(u) = l.split("listening on ").nth(1) {
            url = Some(u.trim().to_string());
        }
    }
    let result = std::panic::catch_unwind(|| {
        let token = token.clone().expect("a generated token on stderr");
        let url = url.clone().expect("the listening address on stderr");
        assert!(token.len() >= 32, "{token}");
        let get = |auth: Option<&str>| -> u16 {
            let addr = url.trim_start_matches("http://");
            let mut s = std::net::TcpStream::connect(addr).unwrap();
            s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
            let auth = auth
                .map(|t| format!("Authorization: Bearer {t}\r\n"))
                .unwrap_or_default();
            write!(
                s,
                "GET /admin/sessions HTTP/1.1\r\nHost: {addr}\r\n{auth}Connection: close\r\n\r\n"
            )
            .unwrap();
            let mut reply = String::new();
            let _ = s.read_to_string(&mut reply);
            reply
                .split_whitespace()
                .nth(1)
                .and_then(|c| c.parse().ok())
                .unwrap_or(0)
        };
        assert_eq!(get(None), 401, "the admin routes are open without a token");
        assert_eq!(get(Some("wrong")), 401);
        assert_eq!(get(Some(&token)), 200);
    });
    let _ = child.kill();
    let _ = child.wait();
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
}
