//! MCP `tools/call` round trips on loopback with the official SDK's client (rmcp, through
//! `tb_mcp::McpTools`), for profiling the server and client paths alone (`tb bench` reports
//! the same figures beside everything else).
//!
//! ```sh
//! cargo build --release -p tb-mcp --example mcp_rtt
//! THINKINGBOX_DATA=/work/shared/thinkingbox-data target/release/examples/mcp_rtt [CALLS]
//! perf record -g target/release/examples/mcp_rtt 20000
//! ```
//!
//! The call is `get_customer_profile` (the first golden call of that name) of the benchmark's
//! `sandbox_external_retail_group1.py:test_case_ST002_003`, as in `tb bench`; without the
//! benchmark data, the bundled example's first task and its first golden call.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tb_mcp::{HttpOptions, Limits, McpTools, Registry};
use tb_sandbox::Clock;

fn percentile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "q in 0..=1"
    )]
    let i = ((v.len() - 1) as f64 * q).round() as usize;
    v[i]
}

fn main() {
    let mut argv = std::env::args().skip(1);
    let n: usize = argv.next().map_or(2000, |s| s.parse().unwrap());
    let shared = std::env::var_os("THINKINGBOX_DATA").map(PathBuf::from);
    let (root, task_id, tool_name) = match shared {
        Some(root) => (
            root,
            "sandbox_external_retail_group1.py:test_case_ST002_003".to_string(),
            Some("get_customer_profile"),
        ),
        None => (
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside"),
            "brightside_retail.py:test_bs001_cancel_unshipped_order".to_string(),
            None,
        ),
    };
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let task = ds.load_task(&task_id).unwrap();
    let (tool, args) = task
        .servers()
        .iter()
        .flat_map(|s| task.golden_calls(s))
        .find(|(t, _)| tool_name.is_none_or(|n| n == t))
        .expect("a golden call");
    let registry = Arc::new(Registry::open(&root, Clock::default(), Limits::default()).unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let server = tb_mcp::http::spawn(
            "127.0.0.1:0".parse().unwrap(),
            registry,
            HttpOptions::default(),
        )
        .await
        .unwrap();
        let tools = McpTools::connect(&server.url(), &task_id).await.unwrap();
        let first = tools.call(&tool, &args).await.unwrap();
        assert!(first.outcome.is_ok(), "{}", first.text);
        let warmup = (n / 10).clamp(10, 500);
        for _ in 0..warmup {
            std::hint::black_box(tools.call(&tool, &args).await.unwrap());
        }
        let mut us = Vec::with_capacity(n);
        for _ in 0..n {
            let t0 = Instant::now();
            std::hint::black_box(tools.call(&tool, &args).await.unwrap());
            us.push(t0.elapsed().as_secs_f64() * 1e6);
        }
        println!(
            "rmcp: p50 {:.1} us, p99 {:.1} us ({n} calls of {tool})",
            percentile(&mut us, 0.5),
            percentile(&mut us, 0.99)
        );
        tools.close().await.unwrap();
        server.shutdown().await.unwrap();
    });
}
