//! The memory figures: the process's RSS, and the growth of a fresh process holding many
//! idle sessions (`idle_sessions_10k_mib`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// VmRSS and VmHWM of this process in KiB, from /proc/self/status.
pub(super) fn rss_kib() -> (Option<u64>, Option<u64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// The idle-memory child: load, then hold `n` fresh sessions of mixed tasks; print JSON.
pub(super) fn idle_child(a: &BenchOptions, n: usize) -> Result<ExitCode> {
    let (l, _, _) = load(a)?;
    let clock = Clock::parse(&a.now).map_err(|e| BenchError::Msg(e.clone()))?;
    let (before, _) = rss_kib();
    let t0 = Instant::now();
    let mut sessions = Vec::with_capacity(n);
    for i in 0..n {
        sessions.push(l.sandbox.session(&l.tasks[i % l.tasks.len()], clock)?);
    }
    let created = t0.elapsed();
    let (after, _) = rss_kib();
    std::hint::black_box(&sessions);
    println!(
        "{}",
        json!({"sessions": n, "rss_before_kib": before, "rss_after_kib": after,
               "create_all_s": created.as_secs_f64()})
    );
    Ok(ExitCode::SUCCESS)
}

/// `--sessions-memory N`: see [`BenchOptions::sessions_memory`].
pub(super) fn sessions_memory(a: &BenchOptions, n: usize) -> Result<ExitCode> {
    let root = a.data.clone();
    let list = a.test_list.clone().unwrap_or_else(|| {
        root.join("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml")
    });
    let clock = Clock::parse(&a.now).map_err(|e| BenchError::Msg(e.clone()))?;
    let limits = tb_mcp::Limits {
        max_sessions: n.max(1),
        idle_timeout: None,
        ..tb_mcp::Limits::default()
    };
    let registry = std::sync::Arc::new(tb_mcp::Registry::open(&root, clock, limits)?);
    let ds = tb_dataset::Dataset::open(&root)?;
    let ids: Vec<String> = ds
        .read_test_list(&list)?
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    if ids.is_empty() {
        bail!("{}: no tasks", list.display());
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    let kib = || rss_kib().0.unwrap_or(0);
    // Warm: every task loaded once (its tool set, its golden state), then closed.
    for id in &ids {
        let s = rt.block_on(registry.create_for_task(id))?;
        registry.remove(s.id())?;
    }
    let warm = kib();
    let t0 = Instant::now();
    let calls = rt.block_on(async {
        let mut slots = Vec::with_capacity(n);
        for i in 0..n {
            slots.push(registry.create_for_task(&ids[i % ids.len()]).await?);
        }
        let mut jobs = tokio::task::JoinSet::new();
        for slot in slots {
            let reg = registry.clone();
            jobs.spawn(async move {
                let task = match slot.origin() {
                    tb_mcp::registry::Origin::Task(t) => t.clone(),
                    tb_mcp::registry::Origin::Proxy(_) => return Ok::<usize, BenchError>(0),
                };
                let mut calls = 0;
                for server in task.servers() {
                    for (tool, args) in task.golden_calls(&server) {
                        reg.call(&slot, &tool, args).await?;
                        calls += 1;
                    }
                }
                reg.effects(&slot, true).await?;
                Ok(calls)
            });
        }
        let mut calls = 0;
        while let Some(r) = jobs.join_next().await {
            calls += r??;
        }
        Ok::<usize, BenchError>(calls)
    })?;
    let peak = kib();
    let ran = t0.elapsed();
    registry.remove_all();
    // Without a collection: what an idle server kept before.
    rt.block_on(async { tokio::time::sleep(Duration::from_secs(3)).await });
    let closed = kib();
    println!(
        "{}",
        json!({"sessions": n, "golden_calls": calls, "run_s": ran.as_secs_f64(),
               "rss_warm_mib": warm as f64 / 1024.0, "rss_peak_mib": peak as f64 / 1024.0,
               "rss_closed_mib": closed as f64 / 1024.0})
    );
    Ok(ExitCode::SUCCESS)
}

pub(super) fn idle_memory(a: &BenchOptions) -> Result<Value> {
    let exe = std::env::current_exe().context("locating the tb binary")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("bench")
        .arg("--idle-child")
        .arg(a.idle_sessions.to_string())
        .arg("--now")
        .arg(&a.now);
    cmd.arg("--data").arg(&a.data);
    if let Some(t) = &a.test_list {
        cmd.arg("--test-list").arg(t);
    }
    let out = cmd.output().context("running the idle-memory child")?;
    if !out.status.success() {
        bail!(
            "idle-memory child failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let v: Value = serde_json::from_slice(&out.stdout).context("idle-memory child output")?;
    Ok(v)
}

/// Idle sessions in a fresh process (`idle_sessions_10k_mib`), unless `--idle-sessions 0`.
pub(super) fn idle_figures(b: &Bench<'_>) -> Result<Measured> {
    let a = b.a;
    b.progress("idle sessions (child process)");
    let idle = if a.idle_sessions > 0 {
        Some(idle_memory(a)?)
    } else {
        None
    };
    let idle_mib = idle.as_ref().and_then(|v| {
        let b = v["rss_before_kib"].as_f64()?;
        let e = v["rss_after_kib"].as_f64()?;
        Some((e - b) / 1024.0 * 10_000.0 / a.idle_sessions as f64)
    });
    Ok(Measured {
        figures: vec![Figure {
            key: "idle_sessions_10k_mib",
            value: idle_mib,
            unit: "MiB",
            reference: Some(reference::PEAK_RSS_MIB),
            target: Some(target::IDLE_SESSIONS_10K_MIB),
            note: format!(
                "VmRSS growth of a fresh process holding {} sessions of mixed tasks (round robin over the list; sessions of one task share its patched tables copy-on-write; scaled to 10,000); reference column: ONE reference process's peak RSS",
                a.idle_sessions
            ),
        }],
        details: vec![("idle", idle.unwrap_or(Value::Null))],
        lines: Vec::new(),
    })
}
