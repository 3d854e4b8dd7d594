//! `tb mcp-start --servers FILE`: task sessions whose server runs from a servers.yaml (our
//! small library server on the official MCP Python SDK, `crates/tb-external/tests/fixtures/
//! tiny_library`), served over MCP like native ones: the scenario's grant on `tools/list` and
//! `tools/call`, the server's own results, effects and verdicts from its reserved tools, a
//! killed server a clear error (not a hang), and no server process left once sessions end or
//! the server stops. The Session Proxy API's `session_create` with raw per-server configs
//! starts, initialises, routes and reaps the file's server the same way, and `--server-pool N`
//! has N servers up before the first session.
//!
//! Python: as `external_servers` (`$TB_PYTHON`, else target/py-venv from
//! scripts/ci-python-deps.sh; `#[needs(python_mcp)]`).

use super::external_servers::{fixture, processes_with, sdk_python, servers_file};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;
use tb_mcp::client::McpServer;
use tb_sandbox::CallOutcome;

/// A running `tb mcp-start`, killed when dropped.
struct Server {
    child: tb_test_support::Reaped,
    url: String,
}

impl Server {
    /// Ctrl-C (SIGINT), as a user stops it, and waits for the exit status.
    fn interrupt(mut self) -> std::process::ExitStatus {
        signal("INT", i32::try_from(self.child.id()).unwrap());
        self.child.wait().unwrap()
    }
}

fn start(servers: &Path, py: &Path, extra: &[&str]) -> Server {
    start_with(servers, py, extra, &[])
}

fn start_with(servers: &Path, py: &Path, extra: &[&str], envs: &[(&str, &Path)]) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tb"))
        .envs(envs.iter().copied())
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
    Server {
        child: tb_test_support::Reaped(child),
        url,
    }
}

fn signal(sig: &str, pid: i32) {
    let ok = Command::new("kill")
        .args([format!("-{sig}"), pid.to_string()])
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "kill -{sig} {pid}");
}

use tb_test_support::tiny_library::pids_with;

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

#[tb_test_support::needs(python_mcp)]
#[test]
fn mcp_start_serves_an_external_server_session_like_a_native_one() {
    let py = sdk_python();
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
        assert_eq!(names(s.tool_list()), tb_test_support::tiny_library::GRANTED);
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

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_killed_external_server_is_a_clear_error_and_the_server_goes_on() {
    let py = sdk_python();
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

#[tb_test_support::needs(python_mcp)]
#[test]
fn no_server_process_outlives_its_session_or_the_server() {
    let py = sdk_python();
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

/// A POST of `body` to `base` + `path` (plain HTTP/1.1, one connection): status and JSON body.
fn post(base: &str, path: &str, body: &Value) -> (u16, Value) {
    use std::io::{Read, Write};
    let hostport = base.trim_start_matches("http://").trim_end_matches('/');
    let mut c = std::net::TcpStream::connect(hostport).unwrap();
    c.set_read_timeout(Some(Duration::from_mins(3))).unwrap();
    let body = serde_json::to_vec(body).unwrap();
    write!(
        c,
        "POST {path} HTTP/1.1\r\nHost: {hostport}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    c.write_all(&body).unwrap();
    let mut raw = Vec::new();
    c.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw);
    let (head, body) = text.split_once("\r\n\r\n").expect("an HTTP reply");
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{head}"
    );
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    (
        status,
        serde_json::from_str(body).unwrap_or(Value::String(body.to_string())),
    )
}

/// Waits (bounded: a guard against hanging, not a timing check) until `n` processes hold
/// `marker`; their pids.
fn wait_for(marker: &str, n: usize) -> Vec<i32> {
    for _ in 0..2400 {
        let p = pids_with(marker);
        if p.len() == n {
            return p;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!(
        "{} processes hold {marker}, not {n}",
        pids_with(marker).len()
    );
}

/// The pids the library server wrote at its teardowns.
fn torn_down(log: &Path) -> Vec<i32> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// Waits (bounded) until the teardown log names `n` pids; them.
fn wait_torn_down(log: &Path, n: usize) -> Vec<i32> {
    for _ in 0..400 {
        let t = torn_down(log);
        if t.len() >= n {
            return t;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("teardowns: {:?}, not {n}", torn_down(log));
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn session_create_with_raw_configs_runs_the_external_server() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-mcp-proxy-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let log = dir.path().join("teardowns.log");
    let server = start_with(&servers, &py, &[], &[("TINY_TEARDOWN_LOG", log.as_path())]);
    let base = server.url.clone();
    // the reference's proxy passes each server's config to its `__reserved__init` as is
    let config = json!({
        "data_patch": {"books": [{"id": "B9", "title": "Proxy Days", "available": true}]},
        "golden_test_case": {"tool_interactions": [
            {"tool": "lend_book", "parameters": {"book_id": "B9", "member_id": "M1"}}
        ]},
        "rubrics_yesno": ["The agent lent B9."],
    });
    let create = |id: &str, tools: &[&str]| {
        post(
            &base,
            "/session_create",
            &json!({
                "session_id": id,
                "server_config": {"tiny_library": config},
                "available_tools": tools,
                "geteffects_proxy_info": true,
            }),
        )
    };
    let (s, b) = create("p1", &["get_book", "lend_book"]);
    assert_eq!(s, 200, "{b}");
    // init_result: what the server's init returned beyond `status` (it counts the patched books)
    assert_eq!(
        b["content"]["value"],
        json!({"tiny_library": {"books": 4}}),
        "{b}"
    );
    assert_eq!(
        processes_with(&marker),
        1,
        "one server process for the session"
    );
    // only the available tools are listed (not the server's others, never the reserved ones)
    let (s, b) = post(&base, "/list_tools", &json!({"session_id": "p1"}));
    assert_eq!(s, 200, "{b}");
    let mut listed: Vec<&String> = b["content"]["value"]["tools"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    listed.sort();
    assert_eq!(listed, ["get_book", "lend_book"]);
    // routed to the server: the patched book
    let call = |tool: &str, args: Value| {
        post(
            &base,
            "/call_tool",
            &json!({"session_id": "p1", "tool_name": tool, "arguments": args}),
        )
    };
    let (s, b) = call("get_book", json!({"book_id": "B9"}));
    assert_eq!(s, 200, "{b}");
    assert!(
        b["content"]["value"]
            .as_str()
            .unwrap()
            .contains("Proxy Days"),
        "{b}"
    );
    for t in ["secret_admin_reset", "__reserved__geteffects"] {
        let (s, b) = call(t, json!({}));
        assert_eq!(s, 400, "{t}: {b}");
        assert_eq!(b["success"], false, "{t}: {b}");
    }
    // the server's own effects, as its geteffects gives them: the golden lend not done yet
    let effects = || post(&base, "/get_effects", &json!({"session_id": "p1"}));
    let (s, b) = effects();
    assert_eq!(s, 200, "{b}");
    let fx = &b["content"]["value"];
    assert_ne!(
        fx["tiny_library"]["result_db_hash"], fx["tiny_library"]["golden_db_hash"],
        "{fx}"
    );
    assert_eq!(
        fx["tiny_library"]["rubrics_yesno"],
        json!(["The agent lent B9."])
    );
    // `__reserved__server_tool` reaches the named server's tool
    let (s, b) = call(
        "__reserved__server_tool",
        json!({"server_name": "tiny_library", "tool_name": "lend_book",
               "arguments": {"book_id": "B9", "member_id": "M1"}}),
    );
    assert_eq!(s, 200, "{b}");
    assert!(
        !b["content"]["value"].as_str().unwrap().contains("error"),
        "{b}"
    );
    let (_, b) = effects();
    let fx = &b["content"]["value"];
    assert_eq!(
        fx["tiny_library"]["result_db_hash"], fx["tiny_library"]["golden_db_hash"],
        "{fx}"
    );
    assert!(
        fx["tiny_library"]["diff"].as_array().unwrap().is_empty(),
        "{fx}"
    );
    assert_eq!(
        fx["__reserved__proxy_info"]["tool_calls"]
            .as_array()
            .unwrap()
            .len(),
        2,
        "{fx}"
    );
    // a taken id, and a tool no server lists: refused; the refused session's server is reaped
    let (s, b) = create("p1", &["get_book"]);
    assert_ne!(s, 200, "{b}");
    let (s, b) = create("p2", &["get_book", "no_such_tool"]);
    assert_ne!(s, 200, "{b}");
    assert!(b.to_string().contains("no_such_tool"), "{b}");
    let pids = wait_for(&marker, 1);
    // destroy: teardown called on the session's server, the process reaped
    let (s, b) = post(&base, "/session_destroy", &json!({"session_id": "p1"}));
    assert_eq!(s, 200, "{b}");
    assert_eq!(settle(&marker), 0, "the session's server is reaped");
    assert!(
        torn_down(&log).contains(&pids[0]),
        "{:?} {pids:?}",
        torn_down(&log)
    );
    // session_destroy_all and the server's stop reap the rest
    let (s, _) = create("p3", &["get_book"]);
    assert_eq!(s, 200);
    let (s, _) = post(&base, "/session_destroy_all", &json!({}));
    assert_eq!(s, 200);
    assert_eq!(settle(&marker), 0, "destroy_all reaps the server");
    let (s, _) = create("p4", &["get_book"]);
    assert_eq!(s, 200);
    let status = server.interrupt();
    assert!(status.success(), "{status}");
    assert_eq!(
        processes_with(&marker),
        0,
        "server processes left after the stop"
    );
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn server_pool_has_its_servers_up_before_the_first_session_and_none_after() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-mcp-pool-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let log = dir.path().join("teardowns.log");
    assert_eq!(processes_with(&marker), 0);
    let server = start_with(
        &servers,
        &py,
        &["--server-pool", "2"],
        &[("TINY_TEARDOWN_LOG", log.as_path())],
    );
    // two started ahead, before any session is asked for
    let ahead = wait_for(&marker, 2);
    rt().block_on(async {
        let mcp = McpServer::new(&server.url).unwrap();
        let s = mcp.open("tiny_library.py:test_tl001_lend").await.unwrap();
        let r = s.call("get_book", &json!({"book_id": "B1"})).await.unwrap();
        assert!(r.text.contains("The Long Afternoon"), "{}", r.text);
        s.close().await.unwrap();
    });
    // the session ran on a server started ahead (its teardown names that pid); the pool is
    // refilled to two idle servers
    let first = wait_torn_down(&log, 1);
    assert!(ahead.contains(&first[0]), "{first:?} {ahead:?}");
    let ahead = wait_for(&marker, 2);
    // the proxy's session_create takes one from the pool too
    let (s, b) = post(
        &server.url,
        "/session_create",
        &json!({"session_id": "pool-1", "server_config": {"tiny_library": {}},
                "available_tools": ["get_book"]}),
    );
    assert_eq!(s, 200, "{b}");
    let (s, _) = post(
        &server.url,
        "/session_destroy",
        &json!({"session_id": "pool-1"}),
    );
    assert_eq!(s, 200);
    let used = wait_torn_down(&log, 2);
    assert!(ahead.contains(&used[1]), "{used:?} {ahead:?}");
    wait_for(&marker, 2);
    let status = server.interrupt();
    assert!(status.success(), "{status}");
    assert_eq!(
        processes_with(&marker),
        0,
        "pool servers left after the stop"
    );
}
