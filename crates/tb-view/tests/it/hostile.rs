//! Hostile record text renders as text: `<script>`, `</style>`, SVG-breaking text,
//! `javascript:` URLs and ANSI escapes in every field a record carries; a malformed line is
//! shown with its number; a 100 MB line does not take the server down.

use crate::Server;
use serde_json::{Value, json};
use std::io::Write;

pub const EVIL: &str = "<script>alert(1)</script></style><svg onload=alert(2)><a href=\"javascript:alert(3)\">x</a> \u{1b}[31mred\u{1b}[0m ]]> --> '\"";

/// A record whose every text is [`EVIL`], failing with a diff, a rubric and a test message.
pub fn evil_record(uid: &str, rep: u64) -> Value {
    json!({
        "uid": uid, "repetition": rep, "key": format!("{uid}::repeat::{rep}"),
        "messages": [
            {"T": "Text", "metadata": {}, "role": "system", "content": EVIL},
            {"T": "Text", "metadata": {}, "role": "user", "content": EVIL},
            {"T": "ParallelToolCall", "metadata": {}, "tool_calls": [
                {"T": "ToolCall", "metadata": {"error": EVIL}, "name": EVIL, "arguments": {"q": EVIL}, "id": EVIL}]},
            {"T": "ToolResponse", "metadata": {}, "name": EVIL, "content": EVIL, "id": EVIL},
            {"T": "Text", "metadata": {"is_user_llm": true}, "role": "user", "content": EVIL},
            {"T": "Text", "metadata": {}, "role": "assistant", "content": EVIL}
        ],
        "test_result": {"result": false, "reward": 0.0, "tb": EVIL, "lineno": 3, "line_content": EVIL},
        "metadata": {"scenario": EVIL, "test_case_file": EVIL, "error": EVIL, "time_test": 0.5},
        "provenance": {"model": EVIL, "config_hash": EVIL},
        "is_system_error": false, "finish_reason": "done",
        "verdict": {"passed": false, "state": [{"server": EVIL, "result_hash": EVIL, "golden_hash": EVIL, "passed": false,
            "diff": [{"path": EVIL, "type": "value mismatch", "result": EVIL, "golden": EVIL},
                     {"path": "t[1]", "type": EVIL}]}],
            "rubrics": [{"rubric": EVIL, "passed": false, "answer": EVIL}]}
    })
}

fn assert_inert(page: &str, what: &str) {
    for bad in [
        "<script>alert",
        "<svg onload",
        "href=\"javascript:",
        "</style><",
        "\u{1b}[",
    ] {
        assert!(!page.contains(bad), "{what} holds {bad:?} unescaped");
    }
}

#[test]
fn every_record_text_is_escaped_on_every_page() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("evil.jsonl");
    let b = dir.path().join("evil2.jsonl");
    let uid = format!("{EVIL}.py:t");
    let mut text = String::new();
    for rep in 0..2 {
        text.push_str(&evil_record(&uid, rep).to_string());
        text.push('\n');
    }
    std::fs::write(&a, &text).unwrap();
    let mut ok = evil_record(&uid, 0);
    ok["test_result"]["result"] = json!(true);
    ok["verdict"] = Value::Null;
    std::fs::write(&b, format!("{ok}\n")).unwrap();
    let srv = Server::start(&[a, b]);
    let pages = [
        "/",
        "/runs/0/tasks",
        "/runs/0/attempts/1",
        "/runs/0/attempts/2",
        "/compare/0/1",
        &format!("/compare/0/1/task?uid={}", tb_view::pages::url_enc(&uid)),
    ];
    for p in pages {
        let r = srv.get(p).ok();
        assert_inert(&r.body, p);
        assert_eq!(r.header("content-security-policy"), Some(tb_view::CSP));
    }
    let page = srv.get("/runs/0/attempts/1").ok().body;
    assert!(
        page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"),
        "{page}"
    );
    assert!(
        page.contains("\u{241b}[31mred"),
        "ANSI escapes shown as the ESC symbol"
    );
    assert!(page.contains("simulated user"));
    // The JSON is JSON (served as such, never sniffed as HTML).
    let j = srv.get("/api/runs/0/tasks").ok();
    assert_eq!(j.header("content-type"), Some("application/json"));
    assert_eq!(j.json()["tasks"][0]["uid"], uid);
}

#[test]
fn malformed_lines_are_shown_with_their_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run.jsonl");
    let good = crate::live::record("a.py:t", 0, true);
    std::fs::write(
        &p,
        format!(
            "{good}\n{{\"uid\": \"<script>x\n[1,2]\n{}\n",
            crate::live::record("a.py:t", 1, false)
        ),
    )
    .unwrap();
    let srv = Server::start(&[p]);
    let page = srv.get("/").ok().body;
    assert!(page.contains("2 lines that are not records"), "{page}");
    assert!(page.contains("line 2: not JSON"), "{page}");
    assert!(
        page.contains("line 3: a record must be a JSON object"),
        "{page}"
    );
    assert_inert(&page, "runs page");
    let tasks = srv.get("/api/runs/0/tasks").ok().json();
    assert_eq!(tasks["bad_lines"][0]["line"], 2);
    assert_eq!(tasks["tasks"][0]["attempts"].as_array().unwrap().len(), 2);
    // The record after the bad lines keeps its own line number.
    assert_eq!(tasks["tasks"][0]["attempts"][1][0], 4);
    assert!(srv.get("/runs/0/tasks").ok().body.contains("line 3"));
}

#[test]
fn a_100_mb_line_does_not_take_the_server_down() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("big.jsonl");
    let mut f = std::fs::File::create(&p).unwrap();
    let mut big = crate::live::record("big.py:t", 0, false);
    big["messages"][1]["content"] = json!("x".repeat(100 << 20));
    writeln!(f, "{big}").unwrap();
    writeln!(f, "{}", crate::live::record("small.py:t", 0, true)).unwrap();
    drop(f);
    let srv = Server::start(&[p]);
    let tasks = srv.get("/api/runs/0/tasks").ok().json();
    assert_eq!(tasks["tasks"].as_array().unwrap().len(), 2);
    let page = srv.get("/runs/0/attempts/1").ok().body;
    assert!(
        page.len() < 2 << 20,
        "the page clips the text: {} bytes",
        page.len()
    );
    assert!(page.contains("more characters"));
    srv.get("/").ok();
    srv.get("/runs/0/attempts/2").ok();
}
