//! A tool server on the official MCP Python SDK (`mcp`, FastMCP) served over its legacy
//! HTTP+SSE transport (the tiny library of `tests/fixtures/tiny_library/server`, started with
//! `--sse PORT`), reached as `type: sse` from a servers file, through the same session layer
//! `tb infer` uses: init with the task's `world_state` entry, the tool list (reserved tools
//! hidden), calls, the effects as the state verdict, teardown. The server requires the file's
//! header on every request (a 401 otherwise), so the header reaching the GET and every POST
//! is checked too. The server killed mid-session: the next call is an error naming the
//! transport, not a wait for the call budget.
//!
//! Python: `$TB_PYTHON`, else `target/py-venv/bin/python` (scripts/ci-python-deps.sh;
//! `#[needs(python_mcp)]`).

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;
use tb_eval::tools::ToolBackend;
use tb_external::{ExternalOptions, ExternalTools, ServersConfig};

const TASK: &str = "tiny_library.py:test_tl001_lend";
const HEADER: &str = "X-Api-Key";
const SECRET: &str = "s3cret-sse-key";

fn fixture() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tiny_library")
}

fn sdk_python() -> PathBuf {
    tb_test_support::need(tb_test_support::Need::PythonMcp)
}

/// The error of calling `tool` with `args` in the session `s`, which must fail.
async fn call_error(s: &mut tb_external::ExternalSession, tool: &str, args: &Value) -> String {
    s.call_tool(tool, args).await.unwrap_err().to_string()
}

/// The library server on a free port, killed and reaped when dropped.
struct PyServer {
    child: tb_test_support::Reaped,
    port: u16,
}

impl PyServer {
    /// [`PyServer::start`] with the SDK's Python, its teardown log in `dir`.
    fn in_dir(dir: &Path) -> PyServer {
        PyServer::start(&sdk_python(), &dir.join("teardown.log"))
    }

    fn start(py: &Path, teardown_log: &Path) -> PyServer {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(py)
            .arg(fixture().join("server/tiny_library.py"))
            .args(["--sse", &port.to_string()])
            .env("TINY_REQUIRED_HEADER", format!("{HEADER}: {SECRET}"))
            .env("TINY_TEARDOWN_LOG", teardown_log)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut server = PyServer {
            child: tb_test_support::Reaped(child),
            port,
        };
        // ready when it accepts connections (Python start-up takes seconds on a busy machine)
        let t0 = std::time::Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                server.child.try_wait().unwrap().is_none(),
                "the SSE server exited"
            );
            assert!(
                t0.elapsed().as_secs() < 120,
                "the SSE server did not come up"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        server
    }

    fn tools(&self, header_value: &str) -> ExternalTools {
        let text = format!(
            "servers:\n  tiny_library:\n    type: sse\n    url: http://127.0.0.1:{}/sse\n    headers: {{{HEADER}: \"{header_value}\"}}\n    timeout: 30\n",
            self.port
        );
        let cfg = ServersConfig::parse(&fixture().join("servers-sse.yaml"), &text).unwrap();
        let sandbox = tb_eval::root::LoadedRoot::load(&fixture()).unwrap();
        ExternalTools::new(
            cfg,
            Arc::new(sandbox),
            tb_sandbox::Clock::default(),
            ExternalOptions::default(),
        )
    }
}

fn task() -> tb_core::Task {
    tb_dataset::Dataset::open(&fixture())
        .unwrap()
        .load_task(TASK)
        .unwrap()
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sdk_server_over_sse_runs_a_whole_session() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("teardown.log");
    let server = PyServer::start(&py, &log);
    let task = task();

    // the wrong header value: the server refuses the GET, and the error keeps the value out
    let e = server
        .tools("wrong-value")
        .open_session(&task)
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("answered HTTP 401"), "{e}");
    assert!(!e.contains("wrong-value"), "{e}");

    let tools = server.tools(SECRET);
    let mut s = tools.open_session(&task).await.unwrap();
    // __reserved__init got the task's world_state entry (the server counts the books)
    assert_eq!(
        Value::Object(s.init_results()),
        json!({"tiny_library": {"books": 3}})
    );
    let names: Vec<String> = s
        .tool_list()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    for t in ["get_book", "lend_book", "return_book", "list_loans"] {
        assert!(names.iter().any(|n| n == t), "{t} in {names:?}");
    }
    assert!(
        names.iter().all(|n| !n.starts_with("__reserved__")),
        "{names:?}"
    );
    let book = s
        .call_tool("get_book", &json!({"book_id": "B1"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&book).unwrap(),
        json!({"id": "B1", "title": "The Long Afternoon", "available": true})
    );
    let loan = s
        .call_tool("lend_book", &json!({"book_id": "B1", "member_id": "M1"}))
        .await
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&loan).unwrap(),
        json!({"id": "L2", "book_id": "B1", "member_id": "M1", "returned": false})
    );
    // a tool error is a result, not a failure of the server
    let again = s
        .call_tool("lend_book", &json!({"book_id": "B1", "member_id": "M2"}))
        .await
        .unwrap();
    assert!(again.contains("book B1 is already lent"), "{again}");
    // the effects: the golden calls replayed on a fresh state give the same hash
    let verdicts = s.state_verdicts().await.unwrap();
    assert_eq!(verdicts.len(), 1);
    assert!(verdicts[0].passed, "{verdicts:?}");
    assert!(verdicts[0].diff.is_empty());
    s.close_all().await;
    let torn_down = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        torn_down.trim(),
        server.child.id().to_string(),
        "__reserved__teardown ran once, in the server"
    );
    tools.shutdown().await;
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_killed_mid_session_fails_the_next_call() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = PyServer::in_dir(dir.path());
    let task = task();
    let tools = server.tools(SECRET);
    let mut s = tools.open_session(&task).await.unwrap();
    s.call_tool("get_book", &json!({"book_id": "B1"}))
        .await
        .unwrap();
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    let e = call_error(&mut s, "get_book", &json!({"book_id": "B2"})).await;
    assert!(
        e.starts_with("server `tiny_library`: tools/call get_book: "),
        "{e}"
    );
    // the transport's failure, not the call budget running out
    assert!(!e.contains("no reply within"), "{e}");
    // teardown is skipped for the failed server; closing does not wait on it
    s.close_all().await;
    // and a new session cannot start
    let e = tools.open_session(&task).await.unwrap_err().to_string();
    assert!(e.contains("GET of the event stream"), "{e}");
    tools.shutdown().await;
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_server_dying_under_a_pending_call_fails_it() {
    let dir = tempfile::tempdir().unwrap();
    let server = PyServer::in_dir(dir.path());
    let tools = server.tools(SECRET);
    let mut s = tools.open_session(&task()).await.unwrap();
    // the tool SIGKILLs its own process while the call waits for its answer on the stream
    let e = call_error(&mut s, "crash_server", &json!({})).await;
    assert!(
        e.starts_with("server `tiny_library`: tools/call crash_server: "),
        "{e}"
    );
    assert!(!e.contains("no reply within"), "{e}");
    assert!(
        e.contains("(the server ended the event stream)")
            || e.contains("(reading the event stream: "),
        "{e}"
    );
    s.close_all().await;
    tools.shutdown().await;
}
