//! What `tb` prints for a bad command line (usage errors) and for commands that cannot start,
//! as snapshots: the whole text, so a changed word, line or exit code shows in review.

use std::process::Command;

/// `tb args...` without a data root in the environment: (exit code, stdout, stderr).
fn tb(args: &[&str]) -> (Option<i32>, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(args)
        .env_remove("THINKINGBOX_DATA")
        .env_remove("TB_LOG")
        .env_remove("RUST_LOG")
        .output()
        .expect("tb runs");
    super::common::code_and_streams(&out)
}

/// The snapshot text of one run.
fn shown(args: &[&str]) -> String {
    let (code, stdout, stderr) = tb(args);
    format!(
        "$ tb {}\nexit: {code:?}\n--- stdout\n{stdout}--- stderr\n{stderr}",
        args.join(" ")
    )
}

#[test]
fn no_command_prints_the_usage_and_exits_2() {
    insta::assert_snapshot!(shown(&[]));
}

#[test]
fn an_unknown_command_is_named_with_a_suggestion() {
    insta::assert_snapshot!(shown(&["nosuch"]));
}

#[test]
fn a_missing_required_argument_is_named() {
    insta::assert_snapshot!(shown(&["validate"]));
}

#[test]
fn an_unknown_flag_is_named() {
    insta::assert_snapshot!(shown(&["infer", "--no-such-flag"]));
}

#[test]
fn infer_without_tasks_says_how_to_give_them() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/brightside");
    insta::with_settings!({filters => vec![(tb_test_support::regex_literal(example).as_str(), "[EXAMPLE]")]}, {
        insta::assert_snapshot!(shown(&["infer", "--data", example]));
    });
}

#[test]
fn no_data_root_says_how_to_get_the_benchmark() {
    let dir = tempfile::tempdir().unwrap();
    let list = dir.path().join("list.yaml");
    std::fs::write(&list, "- x.py:test_y\n").unwrap();
    let tmp = dir.path().to_str().unwrap();
    insta::with_settings!({filters => vec![(tb_test_support::regex_literal(tmp).as_str(), "[TMP]")]}, {
        insta::assert_snapshot!(shown(&["validate", "--test-list", list.to_str().unwrap()]));
    });
}

#[test]
fn a_missing_data_root_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-data");
    let list = dir.path().join("list.yaml");
    std::fs::write(&list, "- x.py:test_y\n").unwrap();
    let tmp = dir.path().to_str().unwrap();
    insta::with_settings!({filters => vec![(tb_test_support::regex_literal(tmp).as_str(), "[TMP]")]}, {
        insta::assert_snapshot!(shown(&[
            "validate",
            "--data",
            missing.to_str().unwrap(),
            "--test-list",
            list.to_str().unwrap(),
        ]));
    });
}
