//! Shared by the tb-mcp integration tests: data roots, a server on 127.0.0.1:0, and the
//! in-process reference (same task, same calls, no MCP) to compare against.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use tb_core::{StateVerdict, Task};
use tb_dataset::Dataset;
use tb_eval::judge::StateJudge;
use tb_eval::root::LoadedRoot;
use tb_mcp::{HttpOptions, Limits, Registry, RunningServer};
use tb_sandbox::Clock;

/// The bundled example (retail tools, 8 tasks); always present.
pub fn example_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
}

/// The example's task ids.
pub fn example_tasks() -> Vec<String> {
    let ds = Dataset::open(&example_root()).unwrap();
    ds.read_test_list(&example_root().join("testlist.yaml"))
        .unwrap()
        .into_iter()
        .map(|(id, _)| id)
        .collect()
}

/// The benchmark data root (`THINKINGBOX_DATA`, else `thinkingbox-data` in the shared
/// folder); panics when missing, so call it from `#[tb_test_support::data_test]`s only.
pub fn shared_data() -> PathBuf {
    tb_test_support::data()
}

/// The benchmark's test list under a data root.
pub fn bench_test_list(root: &std::path::Path) -> PathBuf {
    root.join("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml")
}

/// A registry over a data root.
pub fn registry(root: &std::path::Path, limits: Limits) -> Arc<Registry> {
    Arc::new(Registry::open(root, Clock::default(), limits).unwrap())
}

/// A server on 127.0.0.1:0.
pub async fn server(registry: Arc<Registry>, options: HttpOptions) -> RunningServer {
    tb_mcp::http::spawn("127.0.0.1:0".parse().unwrap(), registry, options)
        .await
        .unwrap()
}

/// The in-process reference for a data root: dataset, sandbox, judge.
pub struct InProcess {
    pub ds: Dataset,
    pub sandbox: LoadedRoot,
    pub judge: StateJudge,
}

/// What the in-process run of a call list gave.
pub struct Run {
    pub tools: Vec<Value>,
    pub texts: Vec<String>,
    pub verdicts: Vec<StateVerdict>,
    pub hashes: Vec<String>,
}

impl InProcess {
    pub fn open(root: &std::path::Path) -> Self {
        let ds = Dataset::open(root).unwrap();
        let sandbox = LoadedRoot::load(ds.root()).unwrap();
        InProcess {
            ds,
            sandbox,
            judge: StateJudge::new(),
        }
    }

    pub fn task(&self, id: &str) -> Task {
        self.ds.load_task(id).unwrap()
    }

    /// Fresh session, the calls in order, then the judge.
    pub fn run(&self, task: &Task, calls: &[(String, Value)]) -> Run {
        let mut s = self.sandbox.session(task, Clock::default()).unwrap();
        let tools = s.tool_list();
        let texts = calls.iter().map(|(t, a)| s.call(t, a).to_text(t)).collect();
        let verdicts = self
            .judge
            .judge(&self.sandbox, task, Clock::default(), &s)
            .unwrap();
        let hashes = s.servers.iter().map(|x| x.state.hash()).collect();
        Run {
            tools,
            texts,
            verdicts,
            hashes,
        }
    }
}

/// Every golden call of a task, over its servers in order.
/// The two runs the parity tests make of `task`: (`true`, its golden calls) and (`false`,
/// no call).
pub fn golden_and_noop(task: &Task) -> [(bool, Vec<(String, Value)>); 2] {
    [(true, golden_calls(task)), (false, Vec::new())]
}

pub fn golden_calls(task: &Task) -> Vec<(String, Value)> {
    task.servers()
        .iter()
        .flat_map(|s| task.golden_calls(s))
        .collect()
}

/// The bundled example's task the HTTP tests open sessions on.
pub const TASK: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

/// An HTTP client for the servers on 127.0.0.1 (no proxy).
pub fn http() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// Sends `req`: the status and the body as JSON (as a JSON string when it is not JSON).
pub async fn send(req: reqwest::RequestBuilder) -> (u16, Value) {
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// Sends `req`: its body, which must be JSON.
pub async fn json_of(req: reqwest::RequestBuilder) -> Value {
    req.send().await.unwrap().json().await.unwrap()
}

/// Asserts that the reference envelope `b`'s message (`content.value`) starts with `prefix`.
pub fn assert_message_starts(b: &Value, prefix: &str) {
    let message = b["content"]["value"].as_str().unwrap();
    assert!(message.starts_with(prefix), "{b}");
}

/// The session of `task` served over MCP on an in-memory pipe, as `tb mcp --stdio` serves
/// it: the serving task (its effects at the end) and the client's end of the pipe.
pub fn serve_in_memory(
    registry: Arc<Registry>,
    task: &'static str,
) -> (
    tokio::task::JoinHandle<Result<tb_mcp::registry::Effects, tb_mcp::stdio::StdioError>>,
    tokio::io::DuplexStream,
) {
    let (server_io, client_io) = tokio::io::duplex(1 << 16);
    let (server_in, server_out) = tokio::io::split(server_io);
    let serving = tokio::spawn(tb_mcp::stdio::serve_one(
        registry, task, server_in, server_out,
    ));
    (serving, client_io)
}

/// The bundled example's root, its in-process reference and its task `id`.
pub fn example_task(id: &str) -> (PathBuf, InProcess, Task) {
    let root = example_root();
    let inproc = InProcess::open(&root);
    let task = inproc.task(id);
    (root, inproc, task)
}
