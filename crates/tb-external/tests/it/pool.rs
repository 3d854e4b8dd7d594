//! The pool of servers started ahead: closing it leaves no server process behind, even one
//! whose start was still in flight when the close came.
//!
//! Python: the library server (`tb_test_support::tiny_library`; `#[needs(python_mcp)]`).

use std::sync::Arc;
use std::time::Duration;
use tb_external::pool::ServerPool;
use tb_external::{ServersConfig, StartOptions};
use tb_test_support::tiny_library;

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_start_in_flight_at_the_close_is_torn_down_before_the_close_returns() {
    let py = tb_test_support::need(tb_test_support::Need::PythonMcp);
    let marker = format!("tb-ext-pool-close-{}", std::process::id());
    let dir = tempfile::tempdir().unwrap();
    let file =
        tiny_library::servers_file(dir.path(), &marker, "    env: {TINY_START_DELAY: \"1\"}\n");
    let cfg = ServersConfig::load(&file).unwrap();
    let opts = StartOptions {
        python: py.display().to_string(),
        ..StartOptions::default()
    };
    let pool = ServerPool::new(cfg.servers[0].clone(), Arc::new(opts), 1, 4);
    pool.refill();
    // the server process is up and still in its slow start (bounded wait: a guard)
    for _ in 0..400 {
        if !tiny_library::pids_with(&marker).is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        tiny_library::pids_with(&marker).len(),
        1,
        "no server started"
    );
    pool.close().await;
    assert_eq!(
        tiny_library::pids_with(&marker),
        Vec::<i32>::new(),
        "a server started ahead outlived the pool's close"
    );
    assert_eq!(pool.started.load(std::sync::atomic::Ordering::Relaxed), 1);
}
