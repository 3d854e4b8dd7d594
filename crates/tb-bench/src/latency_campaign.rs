//! The `latency_campaign` figure of `tb bench`: a campaign against a slow model.
//!
//! Every attempt goes through the episode loop ([`tb_eval::infer::attempt`], model agent)
//! against the in-process mock model server, which plays the task's golden calls, the
//! simulated user and the judge, and waits `delay` before every answer. `concurrency`
//! attempts are in flight. The ideal wall time is the model turns (every request the mock
//! answered) x delay / concurrency: what a harness that cost nothing would need. The figure is
//! the measured wall time against it, with the harness's CPU time per attempt, peak memory,
//! and the open sockets and file descriptors sampled through the run (growth shows as a
//! rising series).
//!
//! The mock server runs on a runtime of its own (threads `tb-mock`), the attempts on another
//! (threads `tb-harness`), so the CPU time of each side is read apart from
//! `/proc/self/task/*/stat`. Attempts are started longest first (by the task's number of
//! golden calls, which the harness knows from the task, not from the mock), so the last
//! wave is made of short attempts and the tail does not dominate.
//!
//! Self-contained: it takes what `tb bench` loaded and returns one JSON object.

use crate::error::Result;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tb_core::Task;
use tb_eval::infer::{AgentChoice, attempt};
use tb_eval::sandbox::Sandbox;
use tb_llm::mock::{MockOptions, MockServer};

/// What the figure runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Attempts per task.
    pub repeat: u32,
    /// The mock model's delay before every answer.
    pub delay: Duration,
    /// Attempts in flight.
    pub concurrency: usize,
    /// Worker threads of the harness runtime.
    pub threads: usize,
}

/// The inputs `tb bench` has loaded.
pub struct Inputs<'a> {
    /// The tasks.
    pub tasks: &'a [Task],
    /// Per task, its golden calls in order (every server's).
    pub golden: Vec<Vec<(String, Value)>>,
    /// The sandbox.
    pub sandbox: Arc<Sandbox>,
    /// The dataset (scenarios, agent config).
    pub ds: &'a tb_dataset::Dataset,
}

/// One sample of this process's resources.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    rss_kib: u64,
    fds: u64,
    sockets: u64,
}

fn sample() -> Sample {
    let rss_kib = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0);
    let (mut fds, mut sockets) = (0, 0);
    if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
        for e in dir.flatten() {
            fds += 1;
            if std::fs::read_link(e.path())
                .is_ok_and(|t| t.to_string_lossy().starts_with("socket:"))
            {
                sockets += 1;
            }
        }
    }
    Sample {
        rss_kib,
        fds,
        sockets,
    }
}

/// CPU seconds (user + system) of this process's threads, summed by thread-name prefix.
fn cpu_by_thread(prefixes: &[&str]) -> Vec<f64> {
    let tick = 100.0; // USER_HZ on Linux
    let mut out = vec![0.0; prefixes.len()];
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ... utime stime: fields 14 and 15; comm may hold spaces.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let comm = &stat[open + 1..close];
        let rest: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks = |i: usize| {
            rest.get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        let secs = (ticks(11) + ticks(12)) / tick;
        if let Some(i) = prefixes.iter().position(|p| comm.starts_with(p)) {
            out[i] += secs;
        }
    }
    out
}

/// CPU seconds of the whole process.
fn cpu_process() -> f64 {
    std::fs::read_to_string("/proc/self/stat")
        .ok()
        .and_then(|s| {
            let rest: Vec<String> = s[s.rfind(')')? + 1..]
                .split_whitespace()
                .map(str::to_string)
                .collect();
            Some((rest.get(11)?.parse::<f64>().ok()? + rest.get(12)?.parse::<f64>().ok()?) / 100.0)
        })
        .unwrap_or(0.0)
}

/// Runs the figure.
pub fn run(inp: Inputs<'_>, o: &Options) -> Result<Value> {
    let mock_rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("tb-mock")
        .enable_all()
        .build()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(o.threads.max(1))
        .thread_name("tb-harness")
        .enable_all()
        .build()?;
    let server = mock_rt.block_on(MockServer::start_with(
        MockOptions::lean().with_reply_delay(o.delay),
    ))?;
    let tasks: Arc<Vec<Task>> = Arc::new(inp.tasks.to_vec());
    // Longest first: attempts ordered by golden calls, descending; repetitions interleaved.
    let mut order: Vec<(usize, u32)> = (0..o.repeat)
        .flat_map(|r| (0..tasks.len()).map(move |t| (t, r)))
        .collect();
    order.sort_by_key(|&(t, r)| (std::cmp::Reverse(inp.golden[t].len()), r, t));
    let order = Arc::new(order);
    let total = order.len();
    let concurrency = o.concurrency.max(1);

    let before = sample();
    let out = rt.block_on(async {
        // Clients are built on the harness runtime, so they share its connection pool.
        let envs = crate::golden_mock_envs(
            &server,
            &crate::GoldenInputs {
                tasks: inp.tasks,
                golden: &inp.golden,
                sandbox: &inp.sandbox,
                ds: inp.ds,
            },
            120.0,
            Duration::from_mins(10),
        )?;
        let envs = Arc::new(envs);
        let cpu0 = cpu_by_thread(&["tb-harness", "tb-mock"]);
        let pcpu0 = cpu_process();
        let done = Arc::new(AtomicUsize::new(0));
        // Sampler: every 250 ms, and at each tenth of the attempts done.
        let sampler = {
            let done = done.clone();
            tokio::spawn(async move {
                let mut series = Vec::new();
                let mut peak = Sample::default();
                let t0 = Instant::now();
                loop {
                    let s = sample();
                    peak.rss_kib = peak.rss_kib.max(s.rss_kib);
                    peak.fds = peak.fds.max(s.fds);
                    peak.sockets = peak.sockets.max(s.sockets);
                    let d = done.load(Ordering::Relaxed);
                    series.push((t0.elapsed().as_secs_f64(), d, s));
                    if d >= total {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                (series, peak)
            })
        };
        let t0 = Instant::now();
        let next = Arc::new(AtomicUsize::new(0));
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..concurrency {
            let (next, envs, tasks, order, done) = (
                next.clone(),
                envs.clone(),
                tasks.clone(),
                order.clone(),
                done.clone(),
            );
            workers.spawn(async move {
                let (mut passed, mut errors, mut first_error) = (0usize, 0usize, Value::Null);
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(t, rep)) = order.get(i) else {
                        break;
                    };
                    let rec = attempt(&envs[t], AgentChoice::Model, &tasks[t], rep).await;
                    if rec.is_system_error {
                        errors += 1;
                        if first_error.is_null() {
                            first_error = json!({"uid": rec.uid,
                                "error": rec.metadata.get("error").cloned()});
                        }
                    }
                    if rec.verdict.as_ref().is_some_and(|v| v.passed) {
                        passed += 1;
                    }
                    done.fetch_add(1, Ordering::Relaxed);
                }
                (passed, errors, first_error)
            });
        }
        let (mut passed, mut errors, mut first_error) = (0usize, 0usize, Value::Null);
        while let Some(r) = workers.join_next().await {
            let (p, e, f) = r?;
            passed += p;
            errors += e;
            if first_error.is_null() {
                first_error = f;
            }
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu1 = cpu_by_thread(&["tb-harness", "tb-mock"]);
        let pcpu = cpu_process() - pcpu0;
        let (series, peak) = sampler.await?;
        Ok::<_, crate::error::BenchError>((
            wall,
            passed,
            errors,
            first_error,
            cpu1[0] - cpu0[0],
            cpu1[1] - cpu0[1],
            pcpu,
            series,
            peak,
        ))
    })?;
    let (wall, passed, errors, first_error, harness_cpu, mock_cpu, process_cpu, series, peak) = out;
    let after = sample();
    let mut turns = server.count("user") + server.count("judge");
    for i in 0..tasks.len() {
        turns += server.count(&format!("t{i}"));
    }
    let delay = o.delay.as_secs_f64();
    let ideal = turns as f64 * delay / concurrency as f64;
    // The longest attempt alone bounds the wall time from below too.
    let longest_turns = (0..tasks.len())
        .map(|i| server.count(&format!("t{i}")) / o.repeat.max(1) as usize)
        .max()
        .unwrap_or(0);
    // The resources at each tenth of the run (by attempts done).
    let tenths: Vec<Value> = (1..=10)
        .filter_map(|k| {
            let want = total * k / 10;
            series.iter().find(|(_, d, _)| *d >= want).map(|(t, d, s)| {
                json!({"t_s": round(*t, 2), "done": d, "rss_mib": round(s.rss_kib as f64 / 1024.0, 1),
                       "fds": s.fds, "sockets": s.sockets})
            })
        })
        .collect();
    drop(rt);
    drop(server);
    drop(mock_rt);
    Ok(json!({
        "attempts": total,
        "passed": passed,
        "system_errors": errors,
        "first_error": first_error,
        "concurrency": concurrency,
        "threads": o.threads,
        "delay_s": delay,
        "model_turns": turns,
        "longest_attempt_turns": longest_turns,
        "seconds": wall,
        "ideal_s": ideal,
        "over_ideal": wall / ideal - 1.0,
        "harness_cpu_s": harness_cpu,
        "mock_cpu_s": mock_cpu,
        "process_cpu_s": process_cpu,
        "harness_cpu_ms_per_attempt": harness_cpu * 1e3 / total.max(1) as f64,
        "peak_rss_mib": peak.rss_kib as f64 / 1024.0,
        "peak_fds": peak.fds,
        "peak_sockets": peak.sockets,
        "connections_per_endpoint": tb_llm::connections_per_endpoint(),
        "before": {"rss_mib": before.rss_kib as f64 / 1024.0, "fds": before.fds, "sockets": before.sockets},
        "after": {"rss_mib": after.rss_kib as f64 / 1024.0, "fds": after.fds, "sockets": after.sockets},
        "by_tenth": tenths,
    }))
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}
