//! `tb validate` on bad files: a scenario `tools:` entry naming a tool no server provides is
//! a problem with its file and line (and a "did you mean"); unknown keys are warned with
//! their file and line.

use super::common::{copy_dir, example};
use std::path::Path;
use std::process::Command;

fn validate(root: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(["validate", "--data"])
        .arg(root)
        .arg("--test-list")
        .arg(root.join("testlist.yaml"))
        .env_remove("THINKINGBOX_DATA")
        .output()
        .expect("tb runs");
    let (_, stdout, stderr) = super::common::code_and_streams(&out);
    (out.status.success(), stdout + &stderr)
}

#[test]
fn unknown_scenario_tools_and_keys_are_reported_with_file_and_line() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("brightside");
    copy_dir(&example(), &root);
    let scenario = root.join("dataset/scenario/sandbox_external_retail.yaml");
    let text = std::fs::read_to_string(&scenario).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let line = lines
        .iter()
        .position(|l| l.trim() == "- name: zendesk_get_items")
        .expect("the example lists zendesk_get_items")
        + 1;
    let text = text
        .replace("- name: zendesk_get_items\n", "- name: zendesk_get_itmes\n")
        .replace("bot_instructions: |", "bot_instruction: |");
    std::fs::write(&scenario, text).unwrap();

    let (ok, out) = validate(&root);
    assert!(!ok, "{out}");
    // The whole report: the problem with its file and line (the misspelt tool on line
    // `line`, with a "did you mean"), the warning for the unknown key, nothing else.
    assert!(
        out.contains(&format!("sandbox_external_retail.yaml:{line}: ")),
        "{out}"
    );
    let tmp = tb_test_support::regex_literal(dir.path().to_str().unwrap());
    // The log line repeats the warning; its colours and time are redacted.
    let filters = vec![
        (tmp.as_str(), "[TMP]"),
        ("\x1b\\[[0-9;]*m", ""),
        ("[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+Z", "[TIME]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(out);
    });
}

#[test]
fn the_bundled_example_has_no_problems_or_warnings() {
    let (ok, out) = validate(&example());
    assert!(ok, "{out}");
    let ex = tb_test_support::regex_literal(example().to_str().unwrap());
    insta::with_settings!({filters => vec![(ex.as_str(), "[EXAMPLE]")]}, {
        insta::assert_snapshot!(out);
    });
}

/// Source nested past CPython's limits (1000 parentheses, `if` and `try` 5000 deep, 100,000
/// unary minuses) is a syntax error with its file and line in `tb validate`, on the same
/// bounded parser `tb infer` uses, never a stack overflow.
#[test]
fn deeply_nested_test_source_is_a_syntax_error_not_a_crash() {
    let mut ifs = String::from("def helper():\n");
    for i in 1..5000 {
        ifs.push_str(&" ".repeat(i * 4));
        ifs.push_str(if i % 2 == 0 { "if True:\n" } else { "try:\n" });
    }
    ifs.push_str(&" ".repeat(5000 * 4));
    ifs.push_str("pass\n");
    for (name, extra, want) in [
        (
            "parentheses",
            format!("DEEP = {}1{}\n", "(".repeat(1000), ")".repeat(1000)),
            "Python syntax error: too many nested parentheses",
        ),
        (
            "blocks",
            ifs,
            "Python syntax error: too many levels of indentation",
        ),
        (
            "unary",
            format!("DEEP = {}1\n", "-".repeat(100_000)),
            "Python syntax error: expression nested too deeply",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("brightside");
        copy_dir(&example(), &root);
        let file = root.join("dataset/test_case/brightside_retail.py");
        let mut text = std::fs::read_to_string(&file).unwrap();
        let line = text.lines().count() + 1;
        text.push_str(&extra);
        std::fs::write(&file, text).unwrap();
        let (ok, out) = validate(&root);
        assert!(!ok, "{name}: {out}");
        // The line where the bound is passed (the 100th block level for the blocks).
        let at = if name == "blocks" { line + 100 } else { line };
        assert!(
            out.contains(&format!("brightside_retail.py:{at}: ")),
            "{name}: {out}"
        );
        assert!(out.contains(want), "{name}: {out}");
        assert!(!out.contains("overflow"), "{name}: {out}");
    }
}
