//! `tb openenv` with external tool servers (`Options::tools`, what `tb openenv --servers FILE`
//! sets): an episode whose task's server runs from a servers.yaml (our small library server
//! on the official MCP Python SDK, `crates/tb-external/tests/fixtures/tiny_library`) lists
//! only the scenario's granted tools, calls the server, is graded from the server's effects,
//! and ends with the server process torn down and reaped; a killed server ends the episode as
//! a system error, not a hang.
//!
//! Python: `$TB_PYTHON` (with `mcp`), else target/py-venv from scripts/ci-python-deps.sh;
//! missing, the tests fail under CI and skip loudly otherwise.

use crate::common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tb_test_support::tiny_library::{pids_with, root as fixture};

/// The fixture's task of lending a book.
const LEND: &str = "tiny_library.py:test_tl001_lend";

/// Waits (bounded) until no process holds `marker`; how many are left.
async fn settle(marker: &str) -> usize {
    for _ in 0..200 {
        if pids_with(marker).is_empty() {
            return 0;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    pids_with(marker).len()
}

/// Resets `ws` on [`LEND`]: asserts the reset observation; the frame.
async fn reset_lend(ws: &mut Ws) -> Value {
    let f = ask(ws, json!({"type": "reset", "data": {"test_uid": LEND}})).await;
    assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
    f
}

async fn step(ws: &mut Ws, action: Value) -> Value {
    let f = ask(ws, json!({"type": "step", "data": action})).await;
    assert_eq!(f["type"], "observation", "{f}");
    f["data"].clone()
}

/// A server over the fixture (its models the mock's, its config in `dir`) whose episodes
/// run the library server from a servers.yaml in `dir` with the `extra` YAML lines and a
/// pool of `pool`: the server, its backend, the marker on the library server's command line
/// (`tb-openenv-<name>-<our pid>`, so its processes can be counted) and the mock model.
async fn start(
    dir: &Path,
    name: &str,
    pool: usize,
    extra: &str,
) -> (
    tb_openenv::RunningServer,
    Arc<tb_external::ExternalTools>,
    String,
    tb_mock_model::MockServer,
) {
    let py = tb_test_support::need(tb_test_support::Need::PythonMcp);
    let mock = mock().await;
    let config = write_config(dir, &mock);
    let marker = format!("tb-openenv-{name}-{}", std::process::id());
    let (server, ext) = serve(dir, &py, &marker, config, pool, extra).await;
    (server, ext, marker, mock)
}

/// [`start`] with the library server's Python and the mock's config given.
async fn serve(
    dir: &Path,
    py: &Path,
    marker: &str,
    config: PathBuf,
    pool: usize,
    extra: &str,
) -> (tb_openenv::RunningServer, Arc<tb_external::ExternalTools>) {
    let servers = tb_test_support::tiny_library::servers_file(dir, marker, extra);
    let cfg = tb_external::ServersConfig::load(&servers).unwrap();
    let opts = tb_external::ExternalOptions {
        start: tb_external::StartOptions {
            python: py.display().to_string(),
            call_timeout: Duration::from_secs(20),
            ..tb_external::StartOptions::default()
        },
        pool,
        ..tb_external::ExternalOptions::default()
    };
    let made: Arc<std::sync::OnceLock<Arc<tb_external::ExternalTools>>> = Arc::default();
    let m2 = made.clone();
    let mut o = tb_openenv::Options::new(fixture(), Some(config));
    o.test_list = Some(fixture().join("testlist.yaml"));
    o.tools = Some(tb_openenv::env::ToolsFactory(Arc::new(
        move |sandbox, clock| {
            m2.get_or_init(|| {
                Arc::new(tb_external::ExternalTools::new(
                    cfg.clone(),
                    sandbox,
                    clock,
                    opts.clone(),
                ))
            })
            .clone() as Arc<dyn tb_eval::tools::RemoteTools>
        },
    )));
    let server = start_server(o).await;
    let ext = made
        .get()
        .expect("the backend is built with the data")
        .clone();
    (server, ext)
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_on_an_external_server_is_served_and_graded_like_a_native_one() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ext, marker, _mock) = start(dir.path(), "ext", 0, "").await;
    let mut ws = connect(&server.url()).await;

    // two episodes: the golden one passes, one that does nothing fails
    for (calls, want) in [
        (
            vec![
                ("get_book", json!({"book_id": "B1"})),
                ("lend_book", json!({"book_id": "B1", "member_id": "M1"})),
            ],
            1.0,
        ),
        (vec![("get_book", json!({"book_id": "B1"}))], 0.0),
    ] {
        let f = reset_lend(&mut ws).await;
        let o = &f["data"]["observation"];
        assert_eq!(pids_with(&marker).len(), 1, "one server for the episode");
        let mut tools: Vec<&str> = o["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        tools.sort_unstable();
        // the scenario's grant: the server's `secret_admin_reset` and reserved tools are not
        // listed
        assert_eq!(tools, tb_test_support::tiny_library::GRANTED);
        // and not callable
        let r = step(
            &mut ws,
            json!({"type": "call_tool", "tool_name": "secret_admin_reset", "arguments": {}}),
        )
        .await;
        assert_eq!(r["observation"]["tool_error"], "tool_not_found", "{r}");
        for (tool, args) in calls {
            let r = step(
                &mut ws,
                json!({"type": "call_tool", "tool_name": tool, "arguments": args}),
            )
            .await;
            assert_eq!(r["observation"]["kind"], "tool", "{r}");
            assert!(r["observation"].get("tool_error").is_none(), "{r}");
            if tool == "get_book" {
                let book: Value =
                    serde_json::from_str(r["observation"]["tool_result"].as_str().unwrap())
                        .unwrap();
                assert_eq!(book["title"], "The Long Afternoon");
            }
        }
        let o = step(
            &mut ws,
            json!({"type": "submit_message", "content": "Done, B1 is lent to you. <DONE>"}),
        )
        .await;
        assert_eq!(o["done"], true, "{o}");
        assert_eq!(o["reward"], want, "{o}");
        assert_eq!(o["observation"]["system_error"], false, "{o}");
        // the episode's server is torn down and reaped at its end
        assert_eq!(
            settle(&marker).await,
            0,
            "server process left after the episode"
        );
    }
    server.shutdown().await.unwrap();
    ext.shutdown().await;
    assert!(pids_with(&marker).is_empty());
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_external_server_ends_the_episode_as_a_system_error() {
    let dir = tempfile::tempdir().unwrap();
    let (server, ext, marker, _mock) = start(dir.path(), "kill", 0, "").await;
    let mut ws = connect(&server.url()).await;
    reset_lend(&mut ws).await;
    let pids = pids_with(&marker);
    assert_eq!(pids.len(), 1, "{pids:?}");
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pids[0].to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let o = step(
        &mut ws,
        json!({"type": "call_tool", "tool_name": "get_book", "arguments": {"book_id": "B1"}}),
    )
    .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["reward"], 0.0, "{o}");
    let ob = &o["observation"];
    assert_eq!(ob["reward_type"], "system_error", "{o}");
    assert_eq!(ob["system_error"], true, "{o}");
    assert_eq!(ob["test_summary"]["infrastructure_stage"], "tools", "{o}");
    assert_eq!(settle(&marker).await, 0, "no server process left");
    // the server goes on: the next episode gets a fresh server
    reset_lend(&mut ws).await;
    let r = step(
        &mut ws,
        json!({"type": "call_tool", "tool_name": "get_book", "arguments": {"book_id": "B1"}}),
    )
    .await;
    assert!(
        r["observation"]["tool_result"]
            .as_str()
            .unwrap()
            .contains("The Long Afternoon"),
        "{r}"
    );
    // closing the socket mid-episode tears the episode's server down too
    drop(ws);
    assert_eq!(
        settle(&marker).await,
        0,
        "no server process left after the client left"
    );
    server.shutdown().await.unwrap();
    ext.shutdown().await;
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pool_is_up_before_the_first_reset_and_gone_after() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("teardowns.log");
    let extra = format!("    env: {{TINY_TEARDOWN_LOG: \"{}\"}}\n", log.display());
    let (server, ext, marker, _mock) = start(dir.path(), "pool", 2, &extra).await;
    // two servers started with the data, before any reset
    let mut ahead = Vec::new();
    for _ in 0..2400 {
        ahead = pids_with(&marker);
        if ahead.len() == 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(ahead.len(), 2, "{ahead:?}");
    let mut ws = connect(&server.url()).await;
    reset_lend(&mut ws).await;
    let o = step(
        &mut ws,
        json!({"type": "submit_message", "content": "Nothing to do. <DONE>"}),
    )
    .await;
    assert_eq!(o["done"], true, "{o}");
    // the episode ran on a server started ahead: its teardown names one of their pids
    let mut used = String::new();
    for _ in 0..400 {
        used = std::fs::read_to_string(&log).unwrap_or_default();
        if !used.trim().is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pid: i32 = used.trim().parse().unwrap();
    assert!(ahead.contains(&pid), "{pid} {ahead:?}");
    drop(ws);
    server.shutdown().await.unwrap();
    ext.shutdown().await;
    assert_eq!(settle(&marker).await, 0, "pool servers left after the stop");
}
