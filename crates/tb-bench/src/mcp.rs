//! The MCP figures: one `tools/call` of a read tool over Streamable HTTP on loopback, through
//! the MCP client and as a raw POST (`mcp_call_p50_us`, `mcp_call_p99_us`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A read tool call of a retail task: (task uid, tool, arguments). The first golden call of
/// the first retail task that succeeds without writing.
pub(super) fn retail_read_call(l: &Loaded, clock: Clock) -> Result<(String, String, Value)> {
    for (task, calls) in l.tasks.iter().zip(&l.calls) {
        if !task.scenario.contains("retail") {
            continue;
        }
        let mut servers = l.sandbox.session(task, clock)?.servers;
        for (s, (_, calls)) in servers.iter_mut().zip(calls) {
            for (tool, params) in calls {
                let w0 = s.state.writes();
                let ok = s.call(tool, params).is_ok();
                if ok && s.state.writes() == w0 && params.is_object() {
                    return Ok((task.uid.clone(), tool.clone(), params.clone()));
                }
            }
        }
    }
    bail!("no retail task with a read-only golden call")
}

/// Tool calls over MCP Streamable HTTP on loopback: the tb-mcp server in this process on
/// 127.0.0.1:0 (on its own multi-threaded runtime), a session opened through the admin API,
/// `n` timed `tools/call` round trips of a read tool from the rmcp client
/// ([`tb_mcp::McpTools`], on a single-threaded runtime).
pub(super) fn mcp_bench(a: &BenchOptions, l: &Loaded, root: &std::path::Path) -> Result<Value> {
    let (task, tool, args) = retail_read_call(l, Clock::default())?;
    let n = a.mcp_calls;
    let warmup = (n / 10).clamp(10, 500);
    // The server on a runtime of its own, as `tb mcp-start` runs it; the client, one caller
    // making one call at a time, on a single-threaded runtime of its own.
    let server_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(a.threads.unwrap_or(2).max(1))
        .enable_all()
        .build()?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let registry = std::sync::Arc::new(
        tb_mcp::Registry::open(root, Clock::default(), tb_mcp::Limits::default())
            .map_err(|e| BenchError::Msg(e.to_string()))?,
    );
    let server = server_rt.block_on(tb_mcp::http::spawn(
        "127.0.0.1:0".parse()?,
        registry,
        tb_mcp::HttpOptions::default(),
    ))?;
    rt.block_on(async move {
        // 1. The rmcp client (what `McpTools` users get).
        let tools = tb_mcp::McpTools::connect(&server.url(), &task).await?;
        let first = tools.call(&tool, &args).await?;
        if !first.outcome.is_ok() {
            bail!("{tool} failed over MCP: {}", first.text);
        }
        for _ in 0..warmup {
            std::hint::black_box(tools.call(&tool, &args).await?);
        }
        let mut rmcp_us = Vec::with_capacity(n);
        for _ in 0..n {
            let t0 = Instant::now();
            let r = tools.call(&tool, &args).await?;
            rmcp_us.push(us(t0.elapsed()));
            std::hint::black_box(r);
        }
        // 2. The transport floor: the same call as one pre-built JSON-RPC body POSTed with a
        // plain reqwest client (its own connection, TCP_NODELAY as reqwest sets it), with the
        // headers the rmcp client sends, so the server takes the same path; the reply is read
        // whole and its status checked, not parsed.
        tb_llm::install_crypto_provider();
        let http = reqwest::Client::builder()
            .no_proxy()
            .build()
            .map_err(|e| BenchError::Msg(format!("building the HTTP client: {e}")))?;
        // (a clone of a ~150-byte buffer per call: tens of nanoseconds)
        let body: Vec<u8> = serde_json::to_vec(&json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args},
        }))?;
        let post = || {
            http.post(tools.mcp_url())
                .header("accept", "application/json, text/event-stream")
                .header("content-type", "application/json")
                .header("mcp-protocol-version", "2025-06-18")
                .body(body.clone())
                .send()
        };
        let raw_call = async || -> Result<usize> {
            let resp = post()
                .await
                .map_err(|e| BenchError::Msg(format!("raw tools/call: {e}")))?;
            let status = resp.status();
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| BenchError::Msg(format!("raw tools/call: {e}")))?;
            if !status.is_success() {
                bail!("raw tools/call: HTTP {status}: {}", String::from_utf8_lossy(&bytes));
            }
            Ok(bytes.len())
        };
        let raw_bytes = raw_call().await?;
        for _ in 0..warmup {
            std::hint::black_box(raw_call().await?);
        }
        let mut raw_us = Vec::with_capacity(n);
        for _ in 0..n {
            let t0 = Instant::now();
            let r = raw_call().await?;
            raw_us.push(us(t0.elapsed()));
            std::hint::black_box(r);
        }
        tools.close().await?;
        server.shutdown().await?;
        Ok(json!({
            "task": task, "tool": tool, "calls": n, "warmup": warmup,
            "server_threads": a.threads.unwrap_or(2).max(1), "client_runtime": "current_thread",
            "rmcp_p50_us": percentile(&mut rmcp_us, 0.5),
            "rmcp_p99_us": percentile(&mut rmcp_us, 0.99),
            // the transport floor: a pre-built tools/call body POSTed with reqwest (no MCP client)
            "raw_p50_us": percentile(&mut raw_us, 0.5),
            "raw_p99_us": percentile(&mut raw_us, 0.99),
            "raw_reply_bytes": raw_bytes,
            "raw_what": "plain reqwest POST of a pre-built tools/call JSON-RPC body to the same endpoint, reply read whole (the transport floor, not an MCP client)",
            "result_bytes": first.text.len(),
        }))
    })
}

/// Tool calls over MCP Streamable HTTP on loopback (`mcp_call_p50_us`, `mcp_call_p99_us`),
/// unless `--mcp-calls 0`.
pub(super) fn figures(b: &Bench<'_>) -> Result<Measured> {
    let mcp = if b.a.mcp_calls > 0 {
        b.progress("MCP tool calls");
        Some(mcp_bench(b.a, b.l, b.root)?)
    } else {
        None
    };
    let mcp_fig = |k: &str| mcp.as_ref().and_then(|m| m[k].as_f64());
    let figures = vec![
        Figure {
            key: "mcp_call_p50_us",
            value: mcp_fig("rmcp_p50_us"),
            unit: "us",
            reference: None,
            target: Some(target::MCP_CALL_P50_US),
            note: mcp.as_ref().map_or("skipped (--mcp-calls 0)".into(), |m| format!(
                "{} x tools/call {} ({} bytes of result) over MCP Streamable HTTP on loopback, tb-mcp server in process on its own {}-thread runtime, rmcp client (McpTools) on a single-threaded runtime, one at a time after {} warm-up calls; transport floor (the same call as a pre-built body POSTed with reqwest, mcp.raw_p50_us) {:.0} us",
                m["calls"], m["tool"].as_str().unwrap_or(""), m["result_bytes"], m["server_threads"], m["warmup"],
                m["raw_p50_us"].as_f64().unwrap_or(f64::NAN),
            )),
        },
        Figure {
            key: "mcp_call_p99_us",
            value: mcp_fig("rmcp_p99_us"),
            unit: "us",
            reference: None,
            target: None,
            note: "same calls, 99th percentile".into(),
        },
    ];
    Ok(Measured {
        figures,
        details: vec![("mcp", mcp.unwrap_or(Value::Null))],
        lines: Vec::new(),
    })
}
