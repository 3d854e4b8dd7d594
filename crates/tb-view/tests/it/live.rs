//! A run still being written: new lines appear on the next request, a half-written last line
//! is not an error, a rewritten file is read again.

use crate::Server;
use serde_json::{Value, json};
use std::io::Write;

/// A small record of `uid`, passing or failing.
pub fn record(uid: &str, rep: u64, passed: bool) -> Value {
    json!({
        "uid": uid, "repetition": rep, "key": format!("{uid}::repeat::{rep}"),
        "messages": [
            {"T": "Text", "metadata": {}, "role": "user", "content": format!("please do {uid}")},
            {"T": "Text", "metadata": {}, "role": "assistant", "content": "done <DONE>"}
        ],
        "test_result": {"result": passed, "reward": if passed { 1.0 } else { 0.0 }, "tb": if passed { "" } else { "AssertionError: state mismatch" }},
        "metadata": {"scenario": "retail"},
        "is_system_error": false, "finish_reason": "done",
        "provenance": {"model": "m"}
    })
}

#[test]
fn a_growing_file_is_followed_and_a_half_line_is_not_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run.jsonl");
    let r3 = record("b.py:t", 0, false).to_string();
    let (head, tail) = r3.split_at(r3.len() / 2);
    std::fs::write(
        &p,
        format!(
            "{}\n{}\n{head}",
            record("a.py:t", 0, true),
            record("a.py:t", 1, false)
        ),
    )
    .unwrap();
    let srv = Server::start(std::slice::from_ref(&p));
    let s1 = srv.get("/api/state").ok().json();
    assert_eq!(s1["runs"][0]["attempts"], 2);
    assert_eq!(s1["runs"][0]["writing"], true);
    assert_eq!(s1["runs"][0]["bad_lines"], 0);
    assert!(srv.get("/").ok().body.contains("still being written"));
    let mut f = std::fs::OpenOptions::new().append(true).open(&p).unwrap();
    write!(f, "{tail}").unwrap();
    f.flush().unwrap();
    // The whole record, still without its newline: shown.
    let s2 = srv.get("/api/state").ok().json();
    assert_eq!(s2["runs"][0]["attempts"], 3);
    assert_eq!(s2["runs"][0]["writing"], false);
    assert_ne!(s1["generation"], s2["generation"]);
    writeln!(f).unwrap();
    writeln!(f, "{}", record("b.py:t", 1, true)).unwrap();
    drop(f);
    let s3 = srv.get("/api/state").ok().json();
    assert_eq!(s3["runs"][0]["attempts"], 4);
    assert_eq!(s3["runs"][0]["bad_lines"], 0);
    let tasks = srv.get("/api/runs/0/tasks").ok().json();
    assert_eq!(tasks["tasks"][1]["attempts"][0][0], 3);
    assert!(srv.get("/runs/0/attempts/4").ok().body.contains("b.py:t"));
    // Rewritten shorter (`--overwrite`): read again from the start.
    std::fs::write(&p, format!("{}\n", record("c.py:t", 0, true))).unwrap();
    let s4 = srv.get("/api/state").ok().json();
    assert_eq!(s4["runs"][0]["attempts"], 1);
    let tasks = srv.get("/api/runs/0/tasks").ok().json();
    assert_eq!(tasks["tasks"][0]["uid"], "c.py:t");
}

#[test]
fn a_file_that_disappears_is_reported_not_fatal() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("run.jsonl");
    std::fs::write(&p, format!("{}\n", record("a.py:t", 0, true))).unwrap();
    let srv = Server::start(std::slice::from_ref(&p));
    srv.get("/").ok();
    std::fs::remove_file(&p).unwrap();
    let page = srv.get("/").ok().body;
    assert!(page.contains("cannot read"), "{page}");
    // What was read stays browsable.
    srv.get("/runs/0/attempts/1").ok();
}
