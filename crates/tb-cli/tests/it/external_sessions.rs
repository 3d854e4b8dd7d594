//! `tb mcp-start --servers FILE`: task sessions whose server runs from a servers.yaml (our
//! small library server on the official MCP Python SDK, `crates/tb-external/tests/fixtures/
//! tiny_library`), served over MCP like native ones: the scenario's grant on `tools/list` and
//! `tools/call`, the server's own results, effects and verdicts from its reserved tools, a
//! killed server a clear error (not a hang), and no server process left once sessions end or
//! the server stops.
//!
//! Python: as `external_servers` (`$TB_PYTHON`, else target/py-venv from
//! scripts/ci-python-deps.sh); missing, the tests fail under CI and skip loudly otherwise.

use super::external_servers::{fixture, processes_with, sdk_python, servers_file};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;
use tb_mcp::client::McpServer;
use tb_sandbox::CallOutcome;

/// A running `tb mcp-start`, killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    /// Ctrl-C (SIGINT), as a user stops it, and waits for the exit status.
    fn interrupt(mut self) -> std::process::ExitStatus {
        signal("INT", i32::try_from(self.child.id()).unwrap());
        self.child.wait().unwrap()
    }
}

fn start(servers: &Path, py: &Path, extra: &[&str]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args([
            "mcp-start",
            "--port",
            "0",
            "--no-auth",
            "--data",
            fixture().to_str().unwrap(),
            "--servers",
            servers.to_str().unwrap(),
            "--python",
            py.to_str().unwrap(),
        ])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start tb mcp-start");
    let stderr = child.stderr.take().unwrap();
    let mut lines = BufReader::new(stderr).lines();
    let mut seen = String::new();
    let url = loop {
        let Some(Ok(line)) = lines.next() else {
            let _ = child.kill();
            panic!("tb mcp-start ended before listening:\n{seen}");
        };
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest.trim().to_string();
        }
        seen.push_str(&line);
        seen.push('\n');
    };
    // keep draining stderr so the server never blocks on a full pipe
    std::thread::spawn(move || for _ in lines {});
    Server { child, url }
}

fn signal(sig: &str, pid: i32) {
    let ok = Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

/// Live processes whose command line holds `marker`, by pid.
fn pids_with(marker: &str) -> Vec<i32> {
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        if std::fs::read(e.path().join("cmdline"))
            .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        {
            out.push(pid);
        }
    }
    out
}

/// Waits (bounded) until no process holds `marker`; the count left.
fn settle(marker: &str) -> usize {
    for _ in 0..200 {
        if processes_with(marker) == 0 {
            return 0;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    processes_with(marker)
}

fn names(tools: &[Value]) -> Vec<String> {
    let mut v: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    v.sort();
    v
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn mcp_start_serves_an_external_server_session_like_a_native_one() {
    let Some(py) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-mcp-ext-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    assert_eq!(processes_with(&marker), 0);
    let server = start(&servers, &py, &[]);
    rt().block_on(async {
        let mcp = McpServer::new(&server.url).unwrap();
        let s = mcp.open("tiny_library.py:test_tl001_lend").await.unwrap();
        // one server process for the session
        assert_eq!(processes_with(&marker), 1);
        // the scenario's grant: `secret_admin_reset` (listed by the server, not granted) and
        // the reserved tools are not listed
        assert_eq!(
            names(s.tool_list()),
            [
                "crash_server",
                "emit_garbage",
                "get_book",
                "hang_forever",
                "lend_book",
                "list_loans",
                "return_book"
            ]
        );
        // the server's own result text
        let r = s.call("get_book", &json!({"book_id": "B1"})).await.unwrap();
        let book: Value = serde_json::from_str(&r.text).unwrap();
        assert_eq!(book["title"], "The Long Afternoon", "{}", r.text);
        // not granted, not reserved: unreachable, as an unknown tool
        for t in ["secret_admin_reset", "__reserved__geteffects"] {
            let r = s.call(t, &json!({})).await.unwrap();
            assert_eq!(r.outcome, CallOutcome::UnknownTool(t.into()), "{t}");
        }
        // effects from the server's geteffects: the golden lend is not done yet
        let fx = s.effects(true).await.unwrap();
        assert_eq!(fx["passed"], false, "{fx}");
        assert_eq!(fx["servers"][0]["server"], "tiny_library");
        assert!(!fx["diff"].as_array().unwrap().is_empty(), "{fx}");
        let r = s
            .call("lend_book", &json!({"book_id": "B1", "member_id": "M1"}))
            .await
            .unwrap();
        assert!(!r.text.contains("error"), "{}", r.text);
        let v = s.verdicts().await.unwrap();
        assert_eq!(v.len(), 1);
        assert!(v[0].passed, "{v:?}");
        assert_eq!(v[0].result_hash, v[0].golden_hash);
        s.close().await.unwrap();
    });
    assert_eq!(settle(&marker), 0, "the session's server is reaped");
    drop(server);
}

#[test]
fn a_killed_external_server_is_a_clear_error_and_the_server_goes_on() {
    let Some(py) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-mcp-kill-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let server = start(&servers, &py, &[]);
    rt().block_on(async {
        let mcp = McpServer::new(&server.url).unwrap();
        let s = mcp.open("tiny_library.py:test_tl001_lend").await.unwrap();
        let pids = pids_with(&marker);
        assert_eq!(pids.len(), 1, "{pids:?}");
        signal("KILL", pids[0]);
        // the call fails with the server's name, it does not hang
        let e = s
            .call("get_book", &json!({"book_id": "B1"}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tool server failure") && e.contains("server `tiny_library`"),
            "{e}"
        );
        // the session's end reports the failure (HTTP 502), not a verdict
        let e = s.effects(false).await.unwrap_err().to_string();
        assert!(e.contains("502") && e.contains("tiny_library"), "{e}");
        s.close().await.unwrap();
        // the server serves the next session
        let s = mcp.open("tiny_library.py:test_tl001_lend").await.unwrap();
        let r = s.call("get_book", &json!({"book_id": "B1"})).await.unwrap();
        assert!(r.text.contains("The Long Afternoon"), "{}", r.text);
        s.close().await.unwrap();
    });
    assert_eq!(settle(&marker), 0, "no server process left");
    drop(server);
}

#[test]
fn no_server_process_outlives_its_session_or_the_server() {
    let Some(py) = sdk_python() else { return };
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-mcp-leak-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let before = processes_with(&marker);
    assert_eq!(before, 0);
    let server = start(&servers, &py, &["--server-pool", "1"]);
    rt().block_on(async {
        let mcp = McpServer::new(&server.url).unwrap();
        // four sessions at once, ended by delete
        let mut open = Vec::new();
        for _ in 0..4 {
            open.push(
                mcp.open("tiny_library.py:test_tl004_no_change")
                    .await
                    .unwrap(),
            );
        }
        assert!(processes_with(&marker) >= 4);
        for s in open {
            s.close().await.unwrap();
        }
        // one left open (and one MCP call made) when the server is stopped
        let s = mcp
            .open("tiny_library.py:test_tl004_no_change")
            .await
            .unwrap();
        let r = s
            .call("list_loans", &json!({"member_id": "M2"}))
            .await
            .unwrap();
        assert!(!r.text.is_empty());
        drop(s);
    });
    let status = server.interrupt();
    assert!(status.success(), "{status}");
    // after the server's own shutdown: nothing to wait for
    assert_eq!(
        processes_with(&marker),
        before,
        "server processes left after the server stopped"
    );
}
