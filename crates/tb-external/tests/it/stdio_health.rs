//! A stdio server's health as the pool and the sessions see it: rmcp's service does not
//! report a closed stdio transport, so a server whose process died must still be seen as
//! broken (no teardown sent to it, the next call failing at once with the reason), and a call
//! abandoned by its caller before the server's own budget (a client-side timeout shorter than
//! `--server-call-timeout`) leaves the server marked broken (it is busy or hung with it).
//!
//! Python: the library server (`tb_test_support::tiny_library`; `#[needs(python_mcp)]`).

use serde_json::Map;
use std::time::Duration;
use tb_external::{ServerConn, ServersConfig, StartOptions};
use tb_test_support::tiny_library;

async fn conn(marker: &str) -> (ServerConn, tempfile::TempDir) {
    let py = tb_test_support::need(tb_test_support::Need::PythonMcp);
    let dir = tempfile::tempdir().unwrap();
    let file = tiny_library::servers_file(dir.path(), marker, "");
    let cfg = ServersConfig::load(&file).unwrap();
    let opts = StartOptions {
        python: py.display().to_string(),
        ..StartOptions::default()
    };
    let c = ServerConn::start(&cfg.servers[0], &opts).await.unwrap();
    (c, dir)
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stdio_server_whose_process_died_is_broken() {
    let marker = format!("tb-ext-dead-{}", std::process::id());
    let (mut c, _dir) = conn(&marker).await;
    assert!(!c.is_broken() && c.is_alive());
    let pid = c.pid().unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    // seen without any call (bounded wait: a guard, not a timing check)
    for _ in 0..400 {
        if c.is_broken() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    assert!(c.is_broken(), "a dead stdio server still looks healthy");
    assert!(!c.is_alive());
    let e = crate::failed_call(&c, "get_book", Duration::from_mins(1)).await;
    assert!(e.contains("closed its stdout"), "{e}");
    c.shutdown(Duration::from_secs(2)).await;
    assert!(tiny_library::pids_with(&marker).is_empty());
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_abandoned_before_its_budget_marks_the_server_broken() {
    let marker = format!("tb-ext-abandon-{}", std::process::id());
    let (c, _dir) = conn(&marker).await;
    // the caller gives up first (its own, shorter timeout); the server is still in the call
    let gave_up = tokio::time::timeout(
        Duration::from_millis(300),
        c.call("hang_forever", Map::new(), Duration::from_mins(2)),
    )
    .await;
    assert!(gave_up.is_err(), "hang_forever answered: {gave_up:?}");
    assert!(c.is_broken());
    let e = crate::failed_call(&c, "get_book", Duration::from_mins(1)).await;
    assert!(e.contains("failed an earlier call"), "{e}");
    c.shutdown(Duration::from_secs(2)).await;
    assert!(tiny_library::pids_with(&marker).is_empty());
}
