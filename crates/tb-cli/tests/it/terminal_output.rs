//! Records written by a hostile model (or a hostile task file) printed by `tb show`, `tb pp`,
//! `tb agg` and `tb sbs`: escape sequences (window title, hyperlink, clear screen, cursor
//! moves, a C1 CSI), carriage returns, backspaces and a bidirectional override are shown as
//! `�`, never written raw to the terminal; `--raw` prints them as they are.

use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

const TITLE: &str = "\u{1b}]0;pwned\u{7}";
const LINK: &str = "\u{1b}]8;;https://evil.example/\u{7}click\u{1b}]8;;\u{7}";

fn uid() -> String {
    format!("retail.py:test_{TITLE}a")
}

fn record(uid: &str, model: &str, passed: bool) -> Value {
    json!({
        "uid": uid,
        "messages": [
            {"T": "Text", "metadata": {}, "role": "user", "content": format!("Refund my order{TITLE}.")},
            {"T": "ParallelToolCall", "metadata": {}, "tool_calls": [{
                "T": "ToolCall", "metadata": {}, "name": format!("get_order{LINK}"),
                "arguments": {"order_id": "O-1\u{1b}[1A"}, "id": "call_1"
            }]},
            {"T": "ToolResponse", "metadata": {}, "name": "get_order", "content": "{\"status\": \"open\"}\u{1b}[2K\rstatus: refunded", "id": "call_1"},
            {"T": "Text", "metadata": {"tag": "text", "is_done": true}, "role": "assistant",
             "content": "Refund denied.\u{1b}[2J\u{1b}[HRefund approved\rRefund OK\u{8}\u{8}NO \u{9b}31mred\u{202e}desrever <DONE>"}
        ],
        "test_result": {"result": passed, "reward": if passed { 1.0 } else { 0.0 }, "is_system_error": false, "tb": "", "prints": ""},
        "test_context": null,
        "test_tags": {"labels": [], "category": [], "domain": null, "eval_type": null, "skip": false},
        "tools": null, "raw_messages": null, "user_llm_history": null,
        "usage": [{"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 110}],
        "metadata": {"scenario": "sandbox_external_retail", "repetition": 0, "model": model},
        "is_system_error": false,
        "finish_reason": "done",
        "key": format!("{uid}#0"),
        "repetition": 0,
        "verdict": {"passed": passed, "rubrics": [], "state": [{
            "server": "retail", "result_hash": "r", "golden_hash": "g", "passed": passed,
            "diff": if passed { json!([]) } else { json!([{
                "path": "orders[0].status\u{1b}[1;1H", "type": "value mismatch",
                "result": "open\rcancelled", "golden": "cancelled"
            }]) }
        }]}
    })
}

fn write(dir: &Path, name: &str, model: &str, passed: bool) -> String {
    let p = dir.join(name);
    std::fs::write(&p, format!("{}\n", record(&uid(), model, passed))).unwrap();
    p.display().to_string()
}

fn tb(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(args)
        .env("TB_LOG", "error")
        .output()
        .expect("tb runs");
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !out.stderr.contains(&0x1b),
        "escape on stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// What a terminal acts on: C0 controls but line feed and tab, DEL, C1 controls, bidi
/// overrides.
fn acts_on_terminal(text: &str) -> bool {
    text.chars()
        .any(|c| tb_core::text::is_unsafe(c) && c != '\n' && c != '\t')
}

#[test]
fn console_commands_show_control_characters() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.jsonl", &format!("gpt{LINK}"), false);
    let cand_model = format!("claude{TITLE}\nfake-row\u{9b}2J\u{202e}");
    let cand = write(dir.path(), "cand.jsonl", &cand_model, true);
    let uid = uid();
    let shown = |t: String| t.replace(dir.path().to_str().unwrap(), "[TMP]");

    let outputs = [
        ("show", tb(&["show", &base, "--uid", &uid])),
        ("pp", tb(&["pp", &base])),
        ("agg", tb(&["agg", &base, &cand])),
        ("agg_markdown", tb(&["agg", "-f", "markdown", &base])),
        (
            "agg_reference",
            tb(&["agg", "-f", "reference", &base, &cand]),
        ),
        ("sbs", tb(&["sbs", "-b", &base, "-c", &cand])),
    ];
    for (name, out) in outputs {
        assert!(!acts_on_terminal(&out), "{name}: {out:?}");
        insta::assert_snapshot!(format!("terminal_{name}"), shown(out));
    }
    // JSON keeps the values: control characters are escapes, which read back as they were
    // (the model name in `tb agg`'s, the task id in `tb sbs`'s).
    for (out, value) in [
        (tb(&["agg", "-f", "json", &base, &cand]), cand_model.clone()),
        (
            tb(&["sbs", "-b", &base, "-c", &cand, "--json"]),
            uid.clone(),
        ),
    ] {
        assert!(!acts_on_terminal(&out), "{out:?}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert!(
            v.to_string()
                .contains(&serde_json::to_string(&value).unwrap()),
            "{v}"
        );
    }
}

#[test]
fn raw_prints_the_records_as_they_are() {
    let dir = tempfile::tempdir().unwrap();
    let base = write(dir.path(), "base.jsonl", &format!("gpt{LINK}"), false);
    let cand = write(dir.path(), "cand.jsonl", "claude", true);
    let uid = uid();
    for out in [
        tb(&["show", &base, "--uid", &uid, "--raw"]),
        tb(&["pp", &base, "--raw"]),
    ] {
        assert!(
            out.contains("\u{1b}[2J\u{1b}[HRefund approved\rRefund OK\u{8}\u{8}NO"),
            "{out:?}"
        );
        assert!(out.contains(TITLE), "{out:?}");
    }
    for out in [
        tb(&["agg", &base, "--raw"]),
        tb(&["sbs", "-b", &base, "-c", &cand, "--raw"]),
    ] {
        assert!(out.contains(LINK), "{out:?}");
    }
}
