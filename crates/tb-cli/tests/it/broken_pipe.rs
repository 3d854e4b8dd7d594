//! `tb ... | head`: a reader that stops early is not an error of `tb`. It stops quietly (the
//! shell's status for SIGPIPE, no panic message), and what it had recorded is kept.

use std::process::{Child, Command, Stdio};

/// A task of the bundled example; `tb tools` prints its tool list (tens of KB).
const TASK: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

/// `tb tools` on [`TASK`] with stdout and stderr piped.
fn tb_tools() -> Child {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../examples/brightside");
    Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(["tools", "--data", example, "--task", TASK])
        .env_remove("TB_LOG")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tb starts")
}

#[test]
fn a_closed_stdout_stops_tb_quietly() {
    let mut child = tb_tools();
    // The reader goes away before tb writes its first line.
    drop(child.stdout.take());
    let out = child.wait_with_output().expect("tb ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    assert_eq!(out.status.code(), Some(141), "stderr: {stderr}");
}

#[test]
fn a_reader_that_stops_early_gets_the_lines_it_read() {
    use std::io::{BufRead, BufReader};
    let mut child = tb_tools();
    let mut first = String::new();
    BufReader::new(child.stdout.take().expect("piped"))
        .read_line(&mut first)
        .expect("one line");
    let out = child.wait_with_output().expect("tb ends");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!first.is_empty());
    assert!(!stderr.contains("panicked"), "stderr: {stderr}");
    // All of the output fits a pipe's buffer or not: either it finished (0) or it met
    // the closed pipe (141); never the panic's 101.
    assert!(
        matches!(out.status.code(), Some(0 | 141)),
        "status {:?}, stderr: {stderr}",
        out.status
    );
}
