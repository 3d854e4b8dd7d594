//! `tb tui` in a real terminal: tmux runs it in a detached 200x50 session on its own server
//! socket, `send-keys` types, `capture-pane -p` reads the screen. On a retail task of the
//! benchmark, played as the agent: the task's golden calls typed as `/tool` commands, then
//! `/test` shows a line starting with PASS and the effects pane has nothing left to fix; the
//! session saved with `/save` reads back in `tb show` and `tb run-test` with the same
//! verdict; the same task without its last golden call shows FAIL and the failing field.
//!
//! Every wait polls the screen against a deadline; the tmux server is killed at the end, also
//! when the test fails. Without tmux the tests fail in CI (`CI=true`) and are reported as
//! ignored otherwise (`#[needs(tmux)]`); likewise without the benchmark data.

use super::tb;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use tb_test_support::Need;

const UID: &str = "sandbox_external_retail_group1.py:test_case_ST002_001";
const DEADLINE: Duration = Duration::from_mins(1);

/// The benchmark data (panics when missing: call from `#[tb_test_support::data_test]`s only).
fn shared_data() -> PathBuf {
    tb_test_support::data()
}

/// A tmux server of our own (its socket in a temporary folder), killed on drop.
struct Tmux {
    dir: tempfile::TempDir,
    tmux: PathBuf,
}

impl Tmux {
    fn new() -> Tmux {
        Tmux {
            dir: tempfile::tempdir().expect("a temporary folder for the tmux socket"),
            tmux: tb_test_support::need(Need::Tmux),
        }
    }

    fn cmd(&self, args: &[&str]) -> std::process::Output {
        Command::new(&self.tmux)
            .arg("-S")
            .arg(self.dir.path().join("tmux.sock"))
            .args(args)
            .env_remove("TMUX")
            .output()
            .expect("tmux runs")
    }

    /// Starts `shell` in a detached 200x50 session.
    fn start(&self, shell: &str) {
        let out = self.cmd(&[
            "new-session",
            "-d",
            "-s",
            "tui",
            "-x",
            "200",
            "-y",
            "50",
            shell,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    fn type_text(&self, text: &str) {
        let out = self.cmd(&["send-keys", "-t", "tui", "-l", text]);
        assert!(out.status.success(), "send-keys");
    }

    fn key(&self, key: &str) {
        let out = self.cmd(&["send-keys", "-t", "tui", key]);
        assert!(out.status.success(), "send-keys {key}");
    }

    /// Types a line and presses Enter.
    fn line(&self, text: &str) {
        self.type_text(text);
        self.key("Enter");
    }

    fn capture(&self) -> String {
        String::from_utf8_lossy(&self.cmd(&["capture-pane", "-p", "-t", "tui"]).stdout).into_owned()
    }

    /// Polls the screen until `pred` holds; panics with the last screen at the deadline.
    fn wait(&self, what: &str, pred: impl Fn(&str) -> bool) -> String {
        let t0 = Instant::now();
        loop {
            let s = self.capture();
            if pred(&s) {
                return s;
            }
            assert!(
                t0.elapsed() <= DEADLINE,
                "timed out waiting for {what}; the screen:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.cmd(&["kill-server"]);
    }
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The shell line that runs `tb tui`, then reports its exit status and whether the terminal
/// is back in canonical mode (`TTYicanon`; raw mode left behind shows `TTY-icanon`).
fn tui_shell(root: &Path) -> String {
    format!(
        "env -u NO_COLOR TB_LOG=error {} tui --data {} -n {} --play agent; echo TUI-EXITED $?; echo TTY$(stty -a | grep -o -- '-\\?icanon' | head -n 1); sleep 600",
        sh_quote(env!("CARGO_BIN_EXE_tb")),
        sh_quote(&root.display().to_string()),
        sh_quote(UID)
    )
}

fn golden_calls(root: &Path) -> Vec<String> {
    let ds = tb_dataset::Dataset::open(root).unwrap();
    let t = ds.load_task(UID).unwrap();
    let calls: Vec<String> = t
        .servers()
        .iter()
        .flat_map(|s| t.golden_calls(s))
        .map(|(tool, params)| format!("/tool {tool} {params}"))
        .collect();
    assert!(calls.len() >= 2, "the task has golden calls");
    calls
}

/// Whether a line of the conversation pane starts with `word` (inside the pane's border).
fn pane_line_starts(screen: &str, word: &str) -> bool {
    screen
        .lines()
        .any(|l| l.trim_start_matches('│').starts_with(word))
}

#[tb_test_support::data_test]
#[tb_test_support::needs(tmux)]
#[test]
fn golden_calls_typed_in_tmux_pass_and_the_saved_record_reads_back() {
    let root = shared_data();
    let dir = tempfile::tempdir().unwrap();
    let saved = dir.path().join("session.jsonl");
    let tmux = Tmux::new();
    tmux.start(&tui_shell(&root));
    tmux.wait("the app", |s| {
        s.contains("play: agent") && s.contains("effects")
    });
    for call in golden_calls(&root) {
        tmux.line(&call);
    }
    tmux.line("/test");
    let screen = tmux.wait("the verdict", |s| {
        pane_line_starts(s, "PASS ") || pane_line_starts(s, "FAIL ")
    });
    assert!(
        pane_line_starts(&screen, &format!("PASS {UID}")),
        "{screen}"
    );
    assert!(
        screen.contains("to fix: nothing, the state matches the golden state"),
        "{screen}"
    );
    assert!(screen.contains("matches the golden state"), "{screen}");
    tmux.line(&format!("/save {}", saved.display()));
    tmux.wait("the save", |s| s.contains("Saved the session"));
    // A resize is taken (the pane redraws at the new size).
    let _ = tmux.cmd(&["resize-window", "-t", "tui", "-x", "150", "-y", "40"]);
    tmux.wait("the redraw at 150 columns", |s| {
        s.lines()
            .any(|l| l.chars().count() == 150 && l.starts_with("└"))
    });
    tmux.key("C-c");
    let screen = tmux.wait("the exit", |s| s.contains("TUI-EXITED"));
    assert!(screen.contains("TUI-EXITED 0"), "{screen}");
    let screen = tmux.wait("the terminal mode", |s| s.contains("TTY"));
    assert!(
        screen.contains("TTYicanon"),
        "the terminal is restored:\n{screen}"
    );
    assert!(
        !screen.contains("play: agent"),
        "the main screen is back after quitting:\n{screen}"
    );

    let file = saved.display().to_string();
    let root_s = root.display().to_string();
    let (code, show) = tb(&["show", &file, "--uid", UID]);
    assert_eq!(code, 0, "{show}");
    assert!(show.contains("outcome: PASSED"), "{show}");
    let (code, rt) = tb(&["run-test", &file, "--data", &root_s]);
    assert_eq!(code, 0, "{rt}");
    insta::assert_snapshot!(
        tb_test_support::redact(&rt, &[(saved.as_path(), "[SAVED]"), (root.as_path(), "[DATA]")]),
        @"
    PASS sandbox_external_retail_group1.py:test_case_ST002_001::repeat::0: as recorded (2 call(s) replayed)
    1 record(s) graded as recorded, 0 changed
    tool surface: own (auto: no servers' sources under [DATA]/servers)
    "
    );
    let (code, agg) = tb(&["agg", &file]);
    assert_eq!(code, 0, "{agg}");
}

#[tb_test_support::data_test]
#[tb_test_support::needs(tmux)]
#[test]
fn without_the_last_golden_call_tmux_shows_fail_and_the_field() {
    let root = shared_data();
    let mut calls = golden_calls(&root);
    calls.pop();
    let tmux = Tmux::new();
    tmux.start(&tui_shell(&root));
    tmux.wait("the app", |s| {
        s.contains("play: agent") && s.contains("effects")
    });
    for call in &calls {
        tmux.line(call);
    }
    tmux.line("/test");
    let screen = tmux.wait("the verdict", |s| {
        pane_line_starts(s, "PASS ") || pane_line_starts(s, "FAIL ")
    });
    assert!(
        pane_line_starts(&screen, &format!("FAIL {UID}")),
        "{screen}"
    );
    // The golden state has the ticket solved; here it is still open.
    assert!(
        screen.contains(r#"status: is "open", should be "solved""#),
        "{screen}"
    );
    assert!(
        screen.contains("to fix: ") && !screen.contains("to fix: nothing"),
        "{screen}"
    );
    tmux.key("C-c");
    let screen = tmux.wait("the exit", |s| s.contains("TUI-EXITED"));
    assert!(screen.contains("TUI-EXITED 0"), "{screen}");
}

#[tb_test_support::data_test]
#[tb_test_support::needs(tmux)]
#[test]
fn a_panic_restores_the_terminal() {
    let root = shared_data();
    let tmux = Tmux::new();
    tmux.start(&format!("TB_TUI_TEST_PANIC=1 {}", tui_shell(&root)));
    let screen = tmux.wait("the exit", |s| s.contains("TTY"));
    assert!(screen.contains("TUI-EXITED 101"), "{screen}");
    assert!(
        screen.contains("TB_TUI_TEST_PANIC=1"),
        "the panic message is shown: {screen}"
    );
    assert!(
        screen.contains("TTYicanon"),
        "the terminal is restored:\n{screen}"
    );
}

/// `tb tui --servers`: the tiny library's task on its own server process (our server on the
/// official MCP Python SDK, `crates/tb-external/tests/fixtures/tiny_library`), played as the
/// agent: the golden calls reach the server, `/test` passes from its effects, and quitting
/// tears the server down (its `__reserved__teardown` runs) and reaps it. Needs tmux and the
/// Python with `mcp` (as `external_servers`).
#[tb_test_support::needs(tmux, python_mcp)]
#[test]
fn external_servers_in_tmux_pass_and_are_torn_down_on_quit() {
    use super::external_servers::{fixture, processes_with, servers_file};
    let py = tb_test_support::need(Need::PythonMcp);
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-tui-tmux-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let teardown = dir.path().join("teardown.log");
    let uid = "tiny_library.py:test_tl001_lend";
    let shell = format!(
        "env -u NO_COLOR TB_LOG=error TINY_TEARDOWN_LOG={} {} tui --data {} -n {} --play agent --servers {} --python {}; echo TUI-EXITED $?; sleep 600",
        sh_quote(&teardown.display().to_string()),
        sh_quote(env!("CARGO_BIN_EXE_tb")),
        sh_quote(&fixture().display().to_string()),
        sh_quote(uid),
        sh_quote(&servers.display().to_string()),
        sh_quote(&py.display().to_string()),
    );
    let tmux = Tmux::new();
    tmux.start(&shell);
    tmux.wait("the app on the server", |s| {
        s.contains("play: agent") && s.contains("effects (from the tool servers)")
    });
    assert_eq!(processes_with(&marker), 1, "one server for the session");
    let ds = tb_dataset::Dataset::open(&fixture()).unwrap();
    let task = ds.load_task(uid).unwrap();
    // A call on a server is a job: the next line waits for its response, as a person would
    // (a command typed meanwhile is refused as busy).
    for (tool, params) in task.golden_calls("tiny_library") {
        tmux.line(&format!("/tool {tool} {params}"));
        tmux.wait("the server's response", |s| {
            s.contains(&format!("← {tool} ")) && s.contains("│ ready")
        });
    }
    tmux.line("/test");
    let screen = tmux.wait("the verdict", |s| {
        pane_line_starts(s, "PASS ") || pane_line_starts(s, "FAIL ")
    });
    assert!(
        pane_line_starts(&screen, &format!("PASS {uid}")),
        "{screen}"
    );
    assert!(screen.contains("matches the golden state"), "{screen}");
    tmux.key("C-c");
    let screen = tmux.wait("the exit", |s| s.contains("TUI-EXITED"));
    assert!(screen.contains("TUI-EXITED 0"), "{screen}");
    assert_eq!(
        processes_with(&marker),
        0,
        "no server left once tb tui ended"
    );
    let log = std::fs::read_to_string(&teardown).unwrap_or_default();
    assert_eq!(
        log.lines().count(),
        1,
        "the server's teardown ran once: {log:?}"
    );
}
