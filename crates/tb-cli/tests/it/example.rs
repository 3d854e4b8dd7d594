//! The README's first command, end to end: the bundled example runs offline with the golden
//! agent (every task passes) and the noop agent (only the read-only task passes), and the
//! records say why.

use super::common::example;
use super::tb;
use std::process::Command;

/// `text` with the example (and `tmp`, when given) shown as `[EXAMPLE]` (`[TMP]`), for
/// snapshots that do not depend on the machine.
fn redacted(text: &str, tmp: Option<&std::path::Path>) -> String {
    let ex = example();
    let mut paths = vec![(ex.as_path(), "[EXAMPLE]")];
    paths.extend(tmp.map(|t| (t, "[TMP]")));
    tb_test_support::redact(text, &paths)
}

/// `tb infer` over the whole example with an offline agent.
fn infer_example(agent: &str, repeat: &str, out: &std::path::Path) -> (i32, String) {
    let ex = example();
    let args = super::common::infer_args(&ex, &ex.join("testlist.yaml"), agent, repeat, out, &[]);
    tb(&args.iter().map(String::as_str).collect::<Vec<_>>())
}

/// [`infer_example`] into `<agent>.jsonl` of a new temporary directory: asserts that it
/// succeeds; the directory, the records and the output.
fn run_example(agent: &str, repeat: &str) -> (tempfile::TempDir, Vec<serde_json::Value>, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("{agent}.jsonl"));
    let (code, text) = infer_example(agent, repeat, &out);
    assert_eq!(code, 0, "{text}");
    let recs = records(&out);
    (dir, recs, text)
}

/// `tb validate` of the data root `root` with its `testlist.yaml`.
fn validate(root: &std::path::Path) -> (i32, String) {
    tb(&[
        "validate",
        "--data",
        root.to_str().unwrap(),
        "--test-list",
        root.join("testlist.yaml").to_str().unwrap(),
    ])
}

fn records(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn golden_agent_passes_every_example_task() {
    let (dir, recs, text) = run_example("golden", "3");
    insta::assert_snapshot!("golden_infer_output", redacted(&text, Some(dir.path())));
    assert_eq!(recs.len(), 24);
    let mut keys: Vec<&str> = recs.iter().map(|r| r["key"].as_str().unwrap()).collect();
    keys.sort_unstable();
    keys.dedup();
    assert_eq!(keys.len(), 24, "one record per (task, repetition)");
    for r in &recs {
        assert_eq!(r["test_result"]["result"], true, "{}", r["key"]);
        // No golden call of the example may fail: a failing call would make the task trivial.
        for m in r["messages"].as_array().unwrap() {
            if m["T"] == "ToolResponse" {
                assert!(
                    !m["content"].as_str().unwrap().starts_with("{\"error\""),
                    "{}: {}",
                    r["key"],
                    m["content"]
                );
            }
        }
    }
}

#[test]
fn noop_agent_fails_every_task_that_asks_for_a_change() {
    let (_dir, recs, _) = run_example("noop", "1");
    for r in recs {
        let read_only = r["uid"]
            .as_str()
            .unwrap()
            .ends_with("test_bs006_order_status_only");
        assert_eq!(r["verdict"]["passed"], read_only, "{}", r["uid"]);
        if !read_only {
            let diff = &r["verdict"]["state"][0]["diff"];
            assert!(
                !diff.as_array().unwrap().is_empty(),
                "a failure carries its diff"
            );
        }
    }
}

#[test]
fn validate_reports_the_example() {
    let ex = example();
    let (code, text) = validate(&ex);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("validate_output", redacted(&text, None));
}

#[test]
fn bad_input_gives_clear_errors() {
    let (code, text) = tb(&["infer", "--test-list", "nope.yaml"]);
    assert_ne!(code, 0, "{text}");
    insta::assert_snapshot!(redacted(&text, None), @r"
    error: no data root: pass --data DIR (a thinkingbox-data checkout, or a folder in its layout) or set THINKINGBOX_DATA. To get the benchmark:
      git clone https://github.com/microsoft/thinkingbox-data
      git -C thinkingbox-data checkout thinkingbox-bench-v1.0
      export THINKINGBOX_DATA=$PWD/thinkingbox-data
    ");
    let ex = example();
    let (code, text) = tb(&[
        "infer",
        "--data",
        ex.to_str().unwrap(),
        "--name",
        "brightside_retail.py:test_nope",
    ]);
    assert_ne!(code, 0, "{text}");
    insta::assert_snapshot!(redacted(&text, None), @r#"
    error: [EXAMPLE]/dataset/test_case/brightside_retail.py: no test function "test_nope" in [EXAMPLE]/dataset/test_case/brightside_retail.py (a test function is a module-level `def` whose first statement is a string starting with '!')
    "#);
    let (code, text) = tb(&[
        "infer",
        "--data",
        ex.to_str().unwrap(),
        "--name",
        "x.py:y",
        "--agent",
        "gpt",
    ]);
    assert_ne!(code, 0, "{text}");
    insta::assert_snapshot!(redacted(&text, None), @r#"
    error: unknown agent "gpt" (no [EXAMPLE]/dataset/agent/gpt.yaml)
    "#);
}

/// Python the test-body evaluator does not run is a `tb validate` problem naming file and line.
#[test]
fn validate_reports_unsupported_python_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("brightside");
    let status = Command::new("cp")
        .args(["-r", example().to_str().unwrap(), copy.to_str().unwrap()])
        .status()
        .unwrap();
    assert!(status.success());
    let file = copy.join("dataset/test_case/brightside_retail.py");
    let mut src = std::fs::read_to_string(&file).unwrap();
    let line = src.lines().count() + 3;
    src.push_str("\n\ndef helper():\n    with open('x') as f:\n        return f\n");
    std::fs::write(&file, src).unwrap();
    let (code, text) = validate(&copy);
    assert_ne!(code, 0, "{text}");
    // The problem names the `with` line of the appended helper.
    insta::with_settings!({filters => vec![(format!(r"brightside_retail\.py:{}:", line + 1).as_str(), "brightside_retail.py:[WITH_LINE]:")]}, {
        insta::assert_snapshot!("validate_unsupported_python", redacted(&text, Some(dir.path())));
    });
    // The unmodified example validates cleanly, test bodies included.
    let (code, text) = validate(&example());
    assert_eq!(code, 0, "{text}");
}
