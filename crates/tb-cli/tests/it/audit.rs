//! `tb audit` end to end on tb-audit's fixture dataset: formats, output file, and the exit
//! code as a gate (non-zero when a golden trajectory fails).

use std::path::PathBuf;
use std::process::Command;

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tb-audit/tests/fixtures/weakcheck")
}

/// `text` with the fixture (and `tmp`, when given) shown as `[FIXTURE]` (`[TMP]`).
fn redacted(text: &str, tmp: Option<&std::path::Path>) -> String {
    let f = fixture();
    let mut paths = vec![(f.as_path(), "[FIXTURE]")];
    paths.extend(tmp.map(|t| (t, "[TMP]")));
    tb_test_support::redact(text, &paths)
}

fn tb_audit(list: &str, extra: &[&str]) -> (Option<i32>, String, String) {
    let f = fixture();
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args([
            "audit",
            "--data",
            f.to_str().unwrap(),
            "--test-list",
            f.join(list).to_str().unwrap(),
            "--wall-now",
            "2026-12-01T09:00:00Z",
        ])
        .args(extra)
        .env_remove("THINKINGBOX_DATA")
        .output()
        .expect("tb runs");
    super::common::code_and_streams(&out)
}

#[test]
fn passes_the_gate_and_names_the_blind_spot() {
    let (code, out, err) = tb_audit("testlist.yaml", &["--format", "json"]);
    assert_eq!(code, Some(0), "{err}");
    let j: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(j["summary"]["golden_pass"], 5);
    let weak = &j["tasks"][0];
    assert_eq!(weak["id"], "weak_retail.py:test_w001_open_ticket");
    assert_eq!(weak["blind_spots"][0]["call"], 1);
    assert_eq!(weak["blind_spots"][0]["tool"], "zendesk_create_item");
    assert_eq!(weak["blind_spots"][0]["argument"], "item.subject");
    insta::with_settings!({filters => vec![(r"in \d+\.\d+ s on \d+ thread\(s\)", "in [SECONDS] s on [N] thread(s)")]}, {
        insta::assert_snapshot!(redacted(&err, None), @"audited 5 tasks in [SECONDS] s on [N] thread(s): golden 5/5, noop passes 2, mean sensitivity 0.917");
    });
}

#[test]
fn html_to_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("audit.html");
    let (code, out, err) = tb_audit(
        "testlist.yaml",
        &["--format", "html", "--output", path.to_str().unwrap()],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(out.is_empty());
    let html = std::fs::read_to_string(&path).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    insta::assert_snapshot!("audit_html", redacted(&html, Some(dir.path())));
}

#[test]
fn a_failing_golden_trajectory_fails_the_gate() {
    let (code, out, err) = tb_audit("testlist_broken.yaml", &[]);
    assert_eq!(code, Some(1), "{out}{err}");
    insta::assert_snapshot!("audit_broken_text", redacted(&out, None));
    insta::with_settings!({filters => vec![(r"in \d+\.\d+ s on \d+ thread\(s\)", "in [SECONDS] s on [N] thread(s)")]}, {
        insta::assert_snapshot!(redacted(&err, None), @"audited 2 tasks in [SECONDS] s on [N] thread(s): golden 1/2, noop passes 0, mean sensitivity 1.000");
    });
}
