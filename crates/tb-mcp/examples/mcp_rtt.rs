//! MCP `tools/call` round trips on loopback, for profiling the server and client paths alone
//! (`tb bench` reports the SDK figure and the transport floor beside everything else).
//!
//! ```sh
//! cargo build --release -p tb-mcp --example mcp_rtt
//! THINKINGBOX_DATA=/work/shared/thinkingbox-data target/release/examples/mcp_rtt [CALLS] [MODE] [--url URL]
//! perf record -g target/release/examples/mcp_rtt 20000
//! ```
//!
//! MODE is one of:
//! - `rmcp` (default): the official SDK's client (rmcp, through `tb_mcp::McpTools`, on
//!   tb-mcp's HTTP backend `tb_mcp::sdk_http::SdkHttpClient`);
//! - `stock`: the same client on rmcp's own reqwest backend, the result turned into a
//!   `ToolReply` as `McpTools::call` does (what `McpTools` did before it had its backend);
//! - `raw`: the same `tools/call` as a pre-built body POSTed with a plain reqwest client;
//! - `tcp`: the same HTTP request bytes written on a blocking `std::net::TcpStream` and the
//!   reply read by its `Content-Length` (no client library at all);
//! - `pingpong`: no HTTP server: a thread echoing a reply of the same size for every request of
//!   the same size on a loopback socket (the kernel's and the scheduler's share alone);
//! - `all`: every mode above in turn (`stock` after `rmcp`).
//!
//! The server is tb-mcp's (`tb_mcp::http::spawn`) on a 2-worker runtime of its own, as
//! `tb mcp-start` runs it (`--server-threads N` for another count); the client runs on a single-threaded runtime on the main thread.
//! With `--url http://HOST:PORT` the client talks to a server in another process instead
//! (`tb mcp-start --no-auth`), so the figure includes no in-process shortcut at all.
//!
//! The call is `get_customer_profile` (the first golden call of that name) of the benchmark's
//! `sandbox_external_retail_group1.py:test_case_ST002_003`, as in `tb bench`; without the
//! benchmark data, the bundled example's first task and its first golden call.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use tb_mcp::{HttpOptions, Limits, McpTools, Registry};
use tb_sandbox::Clock;

// `tb`'s allocator, so that the figures are the `tb` binary's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

/// User+system CPU seconds of the process and of the calling thread (from `/proc`, clock
/// ticks of 10 ms: the timed loops are long enough for that).
fn cpu() -> (f64, f64) {
    let ticks = |path: &str| -> f64 {
        let s = std::fs::read_to_string(path).unwrap_or_default();
        // fields after the command name (which is in parentheses): utime is the 12th, stime the 13th
        let rest = s.rsplit_once(')').map_or("", |(_, r)| r);
        let f: Vec<&str> = rest.split_whitespace().collect();
        let n = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        (n(11) + n(12)) / 100.0
    };
    (ticks("/proc/self/stat"), ticks("/proc/thread-self/stat"))
}

fn report(what: &str, us: &mut [f64], cpu0: (f64, f64)) {
    let n = us.len();
    let cpu1 = cpu();
    #[allow(clippy::cast_precision_loss, reason = "call counts")]
    let per = |a: f64, b: f64| (b - a) * 1e6 / n as f64;
    let client = per(cpu0.1, cpu1.1);
    let all = per(cpu0.0, cpu1.0);
    println!(
        "{what}: p50 {:.1} us, p90 {:.1} us, p99 {:.1} us ({n} calls); CPU per call: {all:.0} us ({client:.0} us client thread, {:.0} us other threads)",
        percentile(us, 0.5),
        percentile(us, 0.9),
        percentile(us, 0.99),
        all - client
    );
}

/// Times `n` calls of `f` after a warm-up.
fn time_blocking(n: usize, mut f: impl FnMut()) -> (Vec<f64>, (f64, f64)) {
    for _ in 0..(n / 10).clamp(10, 500) {
        f();
    }
    let cpu0 = cpu();
    let us = (0..n)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64() * 1e6
        })
        .collect();
    (us, cpu0)
}

/// Reads one HTTP/1.1 response with a `Content-Length` from `s` into `buf` (reused); returns
/// its length.
fn read_response(s: &mut std::net::TcpStream, buf: &mut Vec<u8>) -> usize {
    buf.clear();
    let mut chunk = [0u8; 4096];
    loop {
        let k = s.read(&mut chunk).unwrap();
        assert!(k > 0, "server closed the connection");
        buf.extend_from_slice(&chunk[..k]);
        let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") else {
            continue;
        };
        let head = std::str::from_utf8(&buf[..end])
            .unwrap()
            .to_ascii_lowercase();
        let len: usize = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .map(|v| v.trim().parse().unwrap())
            .expect("a content-length");
        while buf.len() < end + 4 + len {
            let k = s.read(&mut chunk).unwrap();
            assert!(k > 0, "server closed the connection");
            buf.extend_from_slice(&chunk[..k]);
        }
        return buf.len();
    }
}

fn main() {
    let mut n = 2000usize;
    let mut mode = "rmcp".to_string();
    let mut url: Option<String> = None;
    let mut server_threads = 2usize;
    let mut argv = std::env::args().skip(1);
    while let Some(a) = argv.next() {
        match a.as_str() {
            "--url" => url = argv.next(),
            "--server-threads" => {
                server_threads = argv
                    .next()
                    .and_then(|t| t.parse().ok())
                    .expect("--server-threads N");
            }
            m if m.parse::<usize>().is_ok() => n = m.parse().unwrap(),
            m => mode = m.to_string(),
        }
    }
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
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(server_threads.max(1))
        .enable_all()
        .build()
        .unwrap();
    let (server, base) = if let Some(u) = url {
        (None, u)
    } else {
        let registry =
            Arc::new(Registry::open(&root, Clock::default(), Limits::default()).unwrap());
        let server = server_rt
            .block_on(tb_mcp::http::spawn(
                "127.0.0.1:0".parse().unwrap(),
                registry,
                HttpOptions::default(),
            ))
            .unwrap();
        let base = server.url();
        (Some(server), base)
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tools = rt.block_on(McpTools::connect(&base, &task_id)).unwrap();
    let first = rt.block_on(tools.call(&tool, &args)).unwrap();
    assert!(first.outcome.is_ok(), "{}", first.text);
    let body = serde_json::to_vec(&serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": tool, "arguments": args},
    }))
    .unwrap();
    let mcp_url = tools.mcp_url().to_string();
    let all = mode == "all";
    if all || mode == "rmcp" {
        let (mut us, cpu0) = rt.block_on(async {
            let mut us = Vec::with_capacity(n);
            for _ in 0..(n / 10).clamp(10, 500) {
                std::hint::black_box(tools.call(&tool, &args).await.unwrap());
            }
            let cpu0 = cpu();
            for _ in 0..n {
                let t0 = Instant::now();
                std::hint::black_box(tools.call(&tool, &args).await.unwrap());
                us.push(t0.elapsed().as_secs_f64() * 1e6);
            }
            (us, cpu0)
        });
        report(&format!("rmcp ({tool})"), &mut us, cpu0);
    }
    if all || mode == "stock" {
        use rmcp::ServiceExt;
        let client = rt.block_on(async {
            let http = reqwest::Client::builder().no_proxy().build().unwrap();
            let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                http,
                rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                    mcp_url.clone(),
                ),
            );
            ().serve(transport).await.unwrap()
        });
        let serde_json::Value::Object(obj) = &args else {
            panic!("arguments must be an object")
        };
        let call = async || {
            let params =
                rmcp::model::CallToolRequestParams::new(tool.clone()).with_arguments(obj.clone());
            let result = client.call_tool(params).await.unwrap();
            tb_mcp::client::reply_of(&tool, &result)
        };
        let (mut us, cpu0) = rt.block_on(async {
            let mut us = Vec::with_capacity(n);
            for _ in 0..(n / 10).clamp(10, 500) {
                std::hint::black_box(call().await);
            }
            let cpu0 = cpu();
            for _ in 0..n {
                let t0 = Instant::now();
                std::hint::black_box(call().await);
                us.push(t0.elapsed().as_secs_f64() * 1e6);
            }
            (us, cpu0)
        });
        report(
            &format!("rmcp on its reqwest backend ({tool})"),
            &mut us,
            cpu0,
        );
        let _ = rt.block_on(client.cancel());
    }
    if all || mode == "raw" {
        let http = reqwest::Client::builder().no_proxy().build().unwrap();
        let (mut us, cpu0) = rt.block_on(async {
            let call = async || {
                let r = http
                    .post(&mcp_url)
                    .header("accept", "application/json, text/event-stream")
                    .header("content-type", "application/json")
                    .header("mcp-protocol-version", "2025-06-18")
                    .body(body.clone())
                    .send()
                    .await
                    .unwrap();
                assert!(r.status().is_success());
                r.bytes().await.unwrap().len()
            };
            for _ in 0..(n / 10).clamp(10, 500) {
                std::hint::black_box(call().await);
            }
            let cpu0 = cpu();
            let mut us = Vec::with_capacity(n);
            for _ in 0..n {
                let t0 = Instant::now();
                std::hint::black_box(call().await);
                us.push(t0.elapsed().as_secs_f64() * 1e6);
            }
            (us, cpu0)
        });
        report("raw reqwest", &mut us, cpu0);
    }
    // The exact bytes of one request, and the reply's size (for `pingpong`).
    let authority = mcp_url
        .strip_prefix("http://")
        .and_then(|r| r.split('/').next())
        .unwrap()
        .to_string();
    let path = mcp_url
        .strip_prefix(&format!("http://{authority}"))
        .unwrap();
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nhost: {authority}\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let mut reply_len = 0;
    if all || mode == "tcp" || mode == "pingpong" {
        let mut s = std::net::TcpStream::connect(&authority).unwrap();
        s.set_nodelay(true).unwrap();
        let mut buf = Vec::new();
        s.write_all(&request).unwrap();
        reply_len = read_response(&mut s, &mut buf);
        assert!(
            buf.starts_with(b"HTTP/1.1 200"),
            "{}",
            String::from_utf8_lossy(&buf)
        );
        if mode != "pingpong" {
            let (mut us, cpu0) = time_blocking(n, || {
                s.write_all(&request).unwrap();
                std::hint::black_box(read_response(&mut s, &mut buf));
            });
            report("raw tcp (same bytes, blocking socket)", &mut us, cpu0);
        }
    }
    if all || mode == "pingpong" {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let (req_len, rep_len) = (request.len(), reply_len);
        let echo = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            s.set_nodelay(true).unwrap();
            let reply = vec![b'x'; rep_len];
            let mut got = vec![0u8; req_len];
            while s.read_exact(&mut got).is_ok() {
                s.write_all(&reply).unwrap();
            }
        });
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_nodelay(true).unwrap();
        let mut got = vec![0u8; rep_len];
        let (mut us, cpu0) = time_blocking(n, || {
            s.write_all(&request).unwrap();
            s.read_exact(&mut got).unwrap();
        });
        report(
            &format!("tcp ping-pong between two threads ({req_len} B / {rep_len} B, no server)"),
            &mut us,
            cpu0,
        );
        drop(s);
        echo.join().unwrap();
    }
    rt.block_on(tools.close()).unwrap();
    if let Some(server) = server {
        server_rt.block_on(server.shutdown()).unwrap();
    }
}
