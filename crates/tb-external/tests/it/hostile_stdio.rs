//! Stdio servers that misbehave on purpose (`tests/fixtures/hostile_server.py`, standard
//! library only): a stderr flood without newlines and with bytes that are not UTF-8, a reply
//! over the transport's size limit, a child left running after a clean exit, and what the
//! server sees of tb's environment. Needs a Python (`#[needs(python)]`).

use serde_json::Map;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tb_external::{ServerConn, ServersConfig, StartOptions};

fn python() -> PathBuf {
    tb_test_support::need(tb_test_support::Need::Python)
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile_server.py")
}

/// Starts the hostile server in `mode` with `arg`, plus `extra` YAML lines of its entry.
/// The hostile server in `plain` mode, with the `extra` YAML lines of its entry, in a new
/// temporary directory (returned, to outlive the server).
async fn start_plain(extra: &str) -> (tempfile::TempDir, ServerConn) {
    let dir = tempfile::tempdir().unwrap();
    let c = start(dir.path(), "plain", "", extra).await;
    (dir, c)
}

async fn start(dir: &Path, mode: &str, arg: &str, extra: &str) -> ServerConn {
    let py = python();
    let file = dir.join("servers.yaml");
    std::fs::write(
        &file,
        format!(
            "servers:\n  hostile:\n    type: mcp-process\n    command: [\"{{python}}\", \"{}\", \"{mode}\", \"{arg}\"]\n{extra}",
            fixture().display()
        ),
    )
    .unwrap();
    let cfg = ServersConfig::load(&file).unwrap();
    let opts = StartOptions {
        python: py.display().to_string(),
        ..StartOptions::default()
    };
    ServerConn::start(&cfg.servers[0], &opts).await.unwrap()
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    tb_external::server::result_text("hostile", "t", r).unwrap()
}

/// Waits (bounded; a guard, not a timing check) until `f` holds.
async fn eventually(mut f: impl FnMut() -> bool) -> bool {
    for _ in 0..600 {
        if f() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stderr_flood_without_newlines_and_bad_bytes_is_drained() {
    let dir = tempfile::tempdir().unwrap();
    let mark = dir.path().join("flood-done");
    let extra = format!(
        "    env: {{HOSTILE_MARK: \"{}\", HOSTILE_BIG_MIB: \"17\"}}\n",
        mark.display()
    );
    let c = start(dir.path(), "stderr-flood", "64", &extra).await;
    // the server got its 64 MiB (one line) and the bad bytes out: it was not blocked
    assert!(eventually(|| mark.exists()).await, "the flood never ended");
    let r = c
        .call("ping", Map::new(), Duration::from_mins(1))
        .await
        .unwrap();
    assert_eq!(text(&r), "pong");
    // a failed call shows the last stderr lines: the cut flood line, then the lossy one
    let e = crate::failed_call(&c, "big", Duration::from_mins(1)).await;
    assert!(e.contains("its stderr ends with:\neeee"), "{e}");
    assert!(
        e.contains("\n\u{fffd}\u{fffd} bad bytes \u{fffd}( end-of-flood"),
        "{}",
        &e[e.len().saturating_sub(300)..]
    );
    assert!(e.len() < 8192, "the tail is bounded: {} bytes", e.len());
    c.shutdown(Duration::from_secs(2)).await;
}

#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_over_the_size_limit_fails_the_call_at_once_naming_the_limit() {
    let (_dir, c) = start_plain("    env: {HOSTILE_BIG_MIB: \"17\"}\n").await;
    // a budget far beyond the test's own: an error here came from the size, not the clock
    let e = crate::failed_call(&c, "big", Duration::from_hours(1)).await;
    assert!(
        e.contains(
            "tools/call big: the server sent a message of more than 16777216 bytes (16 MiB), the transport's size limit"
        ),
        "{}",
        &e[..e.len().min(400)]
    );
    assert!(c.is_broken());
    c.shutdown(Duration::from_secs(2)).await;
}

#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_under_the_size_limit_passes() {
    let (_dir, c) = start_plain("    env: {HOSTILE_BIG_MIB: \"15\"}\n").await;
    let r = c
        .call("big", Map::new(), Duration::from_mins(2))
        .await
        .unwrap();
    assert_eq!(text(&r).len(), 15 << 20);
    c.shutdown(Duration::from_secs(2)).await;
}

#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_sees_the_minimal_environment_and_what_its_entry_names() {
    let (_dir, c) = start_plain(
        "    env: {EXTRA_FROM_FILE: \"1\"}\n    pass_env: [CARGO, TB_NOT_SET_ANYWHERE]\n",
    )
    .await;
    let r = c
        .call("env", Map::new(), Duration::from_mins(1))
        .await
        .unwrap();
    let names: Vec<String> = serde_json::from_str(&text(&r)).unwrap();
    let allowed = [
        "PATH",
        "HOME",
        "LANG",
        "LANGUAGE",
        "TMPDIR",
        "PYTHONPATH",
        "FASTMCP_LOG_LEVEL",
        "EXTRA_FROM_FILE",
        "CARGO",
    ];
    let leaked: Vec<&String> = names
        .iter()
        .filter(|n| !allowed.contains(&n.as_str()) && !n.starts_with("LC_"))
        .collect();
    assert!(leaked.is_empty(), "tb's environment leaked: {leaked:?}");
    assert!(names.contains(&"EXTRA_FROM_FILE".to_string()));
    assert_eq!(
        names.contains(&"CARGO".to_string()),
        std::env::var_os("CARGO").is_some(),
        "{names:?}"
    );
    if std::env::var_os("PATH").is_some() {
        assert!(names.contains(&"PATH".to_string()));
    }
    c.shutdown(Duration::from_secs(2)).await;
}

/// Whether a process runs (a zombie waiting for its parent does not).
fn running(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        s.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z') && !rest.starts_with('X'))
    })
}

async fn child_outlives(mode: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("child.pid");
    let c = start(dir.path(), mode, &pidfile.display().to_string(), "").await;
    let pid: i32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(running(pid), "the server's child is not running");
    // the server exits cleanly when its stdin ends
    c.shutdown(Duration::from_secs(5)).await;
    !eventually(|| !running(pid)).await
}

#[cfg(target_os = "linux")]
#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_in_the_servers_group_does_not_outlive_a_clean_exit() {
    assert!(
        !child_outlives("child").await,
        "the server's child is still running after shutdown"
    );
}

#[cfg(target_os = "linux")]
#[tb_test_support::needs(python)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_child_in_its_own_session_does_not_outlive_a_clean_exit() {
    assert!(
        !child_outlives("child-session").await,
        "the server's child (own session) is still running after shutdown"
    );
}
