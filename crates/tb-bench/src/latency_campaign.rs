//! The `latency_campaign` figure of `tb bench`: a campaign against a slow model.
//!
//! Every attempt goes through the episode loop ([`tb_eval::attempt::attempt`], model agent)
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
//! `/proc/self/task/*/stat`. Attempts start in the campaign scheduler's order
//! ([`tb_campaign::schedule`], `packed` by default here: longest expected first, packed
//! so the 2,000 slots end together; the expected turns come from the task, not the mock).
//!
//! Where the time goes is measured, not guessed: the mock server counts the requests it is
//! holding ([`MockServer::in_flight`]), sampled every 250 ms beside the attempts started and
//! done, so a harness that does not keep `concurrency` model requests outstanding shows as
//! `mock_in_flight` below `concurrency` while attempts are still queued; and the scheduler's
//! run-queue wait of the harness and mock threads (`/proc/self/task/*/schedstat`) says how
//! much of the wall time the process spent ready to run but waiting for a CPU (other
//! processes on a shared machine), beside the machine's busy CPU seconds (`/proc/stat`).
//!
//! Self-contained: it takes what `tb bench` loaded and returns one JSON object.

use crate::campaign::Tally;
use crate::error::Result;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tb_campaign::schedule::{self, StartOrder};
use tb_core::Task;
use tb_eval::attempt::attempt;
use tb_eval::root::LoadedRoot;
use tb_eval::run::AgentChoice;
use tb_mock_model::{MockOptions, MockServer};

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
    /// The order attempts start in.
    pub order: StartOrder,
}

/// The inputs `tb bench` has loaded.
pub struct Inputs<'a> {
    /// The tasks.
    pub tasks: &'a [Task],
    /// Per task, its golden calls in order (every server's).
    pub golden: Vec<Vec<(String, Value)>>,
    /// The sandbox.
    pub sandbox: Arc<LoadedRoot>,
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

/// The scheduler's view of this process's threads, summed by thread-name prefix: seconds on
/// a CPU and seconds waiting on a run queue (ready, but another thread had the CPU), from
/// `/proc/self/task/*/schedstat` (nanoseconds). Zeros when the kernel does not expose it.
fn sched_by_thread(prefixes: &[&str]) -> Vec<(f64, f64)> {
    let mut out = vec![(0.0, 0.0); prefixes.len()];
    let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
        return out;
    };
    for e in dir.flatten() {
        let (Ok(comm), Ok(stat)) = (
            std::fs::read_to_string(e.path().join("comm")),
            std::fs::read_to_string(e.path().join("schedstat")),
        ) else {
            continue;
        };
        let Some(i) = prefixes.iter().position(|p| comm.trim_end().starts_with(p)) else {
            continue;
        };
        let mut f = stat
            .split_whitespace()
            .map(|v| v.parse::<f64>().unwrap_or(0.0));
        let (on, wait) = (f.next().unwrap_or(0.0), f.next().unwrap_or(0.0));
        out[i].0 += on / 1e9;
        out[i].1 += wait / 1e9;
    }
    out
}

/// The machine's busy and total CPU seconds so far (all CPUs), from `/proc/stat`.
fn machine_cpu() -> (f64, f64) {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return (0.0, 0.0);
    };
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return (0.0, 0.0);
    };
    // user nice system idle iowait irq softirq steal ...
    let v: Vec<f64> = line
        .split_whitespace()
        .skip(1)
        .map(|x| x.parse().unwrap_or(0.0))
        .collect();
    let total: f64 = v.iter().take(8).sum();
    let idle = v.get(3).copied().unwrap_or(0.0) + v.get(4).copied().unwrap_or(0.0);
    ((total - idle) / 100.0, total / 100.0)
}

/// The 1-minute load average.
fn loadavg() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(0.0)
}

/// The resident set size, in KiB, from `/proc/self/statm` (one short line).
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4)
}

/// RSS, open file descriptors and, of those, sockets. Reading every descriptor's link costs
/// ~6,000 `readlink` calls in this process's CPU time at the campaign's peak, so the sampler
/// takes this only every [`FD_EVERY`] samples and the RSS alone otherwise.
fn sample() -> Sample {
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
        rss_kib: rss_kib(),
        fds,
        sockets,
    }
}

/// Every how many samples (of 250 ms) the descriptors are counted.
const FD_EVERY: usize = 8;

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
    let server = Arc::new(mock_rt.block_on(MockServer::start_with(
        MockOptions::campaign().with_reply_delay(o.delay),
    ))?);
    let tasks: Arc<Vec<Task>> = Arc::new(inp.tasks.to_vec());
    // The campaign's packed start order (tb-eval's, as `tb infer --start-order packed`):
    // attempts by expected turns (golden calls + closing reply + rubric questions).
    let jobs: Vec<(usize, u32)> = (0..o.repeat)
        .flat_map(|r| (0..tasks.len()).map(move |t| (t, r)))
        .collect();
    let per_task: Vec<u64> = tasks.iter().map(schedule::expected_turns).collect();
    let weights: Vec<u64> = jobs.iter().map(|&(t, _)| per_task[t]).collect();
    let start = schedule::start_order(&weights, o.concurrency.max(1), o.order);
    // The wall time in turns this order needs when every turn takes the same time.
    let planned_turns = schedule::list_makespan(&weights, &start, o.concurrency.max(1));
    let expected_total: u64 = weights.iter().sum();
    let order: Vec<(usize, u32)> = start.into_iter().map(|i| jobs[i]).collect();
    let order = Arc::new(order);
    let total = order.len();
    let concurrency = o.concurrency.max(1);

    let before = sample();
    let out = rt.block_on(async {
        // Clients are built on the harness runtime, so they share its connection pool.
        let envs = crate::campaign::golden_mock_envs(
            &server,
            &crate::campaign::GoldenInputs {
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
        let sched0 = sched_by_thread(&["tb-harness", "tb-mock"]);
        let pcpu0 = cpu_process();
        let machine0 = machine_cpu();
        let load0 = loadavg();
        server.reset_peak_in_flight();
        let done = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        // Sampler: every 250 ms: resources, attempts started and done, and the model requests
        // the mock holds.
        let sampler = {
            let (done, next, server) = (done.clone(), next.clone(), server.clone());
            tokio::spawn(async move {
                let mut series = Vec::new();
                let mut peak = Sample::default();
                let t0 = Instant::now();
                let mut last = Sample::default();
                for i in 0.. {
                    let s = if i % FD_EVERY == 0 {
                        last = sample();
                        last
                    } else {
                        Sample {
                            rss_kib: rss_kib(),
                            ..last
                        }
                    };
                    peak.rss_kib = peak.rss_kib.max(s.rss_kib);
                    peak.fds = peak.fds.max(s.fds);
                    peak.sockets = peak.sockets.max(s.sockets);
                    let d = done.load(Ordering::Relaxed);
                    let started = next.load(Ordering::Relaxed).min(total);
                    series.push(Point {
                        t: t0.elapsed().as_secs_f64(),
                        done: d,
                        started,
                        in_flight: server.in_flight(),
                        res: s,
                    });
                    if d >= total {
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                (series, peak)
            })
        };
        let t0 = Instant::now();
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
                let mut tally = Tally::default();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&(t, rep)) = order.get(i) else {
                        break;
                    };
                    let rec = attempt(&envs[t], AgentChoice::Model, &tasks[t], rep).await;
                    tally.add(&rec);
                    done.fetch_add(1, Ordering::Relaxed);
                }
                tally
            });
        }
        let mut tally = Tally::default();
        while let Some(r) = workers.join_next().await {
            tally.merge(r?);
        }
        let wall = t0.elapsed().as_secs_f64();
        let cpu1 = cpu_by_thread(&["tb-harness", "tb-mock"]);
        let sched1 = sched_by_thread(&["tb-harness", "tb-mock"]);
        let pcpu = cpu_process() - pcpu0;
        let machine1 = machine_cpu();
        let (series, peak) = sampler.await?;
        Ok::<_, crate::error::BenchError>(Run {
            wall,
            passed: tally.passed,
            errors: tally.errors,
            first_error: tally.first_error,
            harness_cpu: cpu1[0] - cpu0[0],
            mock_cpu: cpu1[1] - cpu0[1],
            process_cpu: pcpu,
            harness_wait: sched1[0].1 - sched0[0].1,
            mock_wait: sched1[1].1 - sched0[1].1,
            machine_busy: machine1.0 - machine0.0,
            machine_total: machine1.1 - machine0.1,
            load: (load0, loadavg()),
            series,
            peak,
        })
    })?;
    let Run {
        wall,
        passed,
        errors,
        first_error,
        harness_cpu,
        mock_cpu,
        process_cpu,
        harness_wait,
        mock_wait,
        machine_busy,
        machine_total,
        load,
        series,
        peak,
    } = out;
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
            series.iter().find(|p| p.done >= want).map(|p| {
                json!({"t_s": round(p.t, 2), "done": p.done, "in_flight": p.in_flight,
                       "rss_mib": round(p.res.rss_kib as f64 / 1024.0, 1),
                       "fds": p.res.fds, "sockets": p.res.sockets})
            })
        })
        .collect();
    // Model requests the mock held while every attempt slot was taken (attempts still
    // queued, none of the first second's start-up): `concurrency` for a harness that keeps
    // every slot waiting on the model.
    let full: Vec<usize> = series
        .iter()
        .filter(|p| p.started < total && p.t >= delay)
        .map(|p| p.in_flight)
        .collect();
    let mean_full = if full.is_empty() {
        None
    } else {
        Some(round(
            full.iter().sum::<usize>() as f64 / full.len() as f64,
            1,
        ))
    };
    // The time from the last attempt's start to the end: the drain.
    let queue_empty_s = series.iter().find(|p| p.started >= total).map(|p| p.t);
    let peak_in_flight = server.peak_in_flight();
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
        "expected_turns": expected_total,
        "start_order": o.order.as_str(),
        // The wall time this start order needs if every turn took exactly the delay: the
        // floor the quantum of whole turns puts above the ideal.
        "planned_s": planned_turns as f64 * delay,
        "seconds": wall,
        "ideal_s": ideal,
        "over_ideal": wall / ideal - 1.0,
        "harness_cpu_s": harness_cpu,
        "mock_cpu_s": mock_cpu,
        "process_cpu_s": process_cpu,
        "harness_cpu_ms_per_attempt": harness_cpu * 1e3 / total.max(1) as f64,
        "harness_cpu_us_per_turn": harness_cpu * 1e6 / turns.max(1) as f64,
        "mock_cpu_us_per_turn": mock_cpu * 1e6 / turns.max(1) as f64,
        // CPU starvation: seconds the threads were ready to run but waited for a CPU, and
        // what the whole machine's CPUs did meanwhile (this process included).
        "harness_runqueue_wait_s": harness_wait,
        "mock_runqueue_wait_s": mock_wait,
        "machine_busy_cpu_s": machine_busy,
        "machine_cpu_s": machine_total,
        "others_busy_cpu_s": (machine_busy - process_cpu).max(0.0),
        "loadavg_start_end": [load.0, load.1],
        "mock_in_flight": {
            "peak": peak_in_flight,
            "mean_while_queued": mean_full,
            "min_while_queued": full.iter().min(),
            "samples_while_queued": full.len(),
        },
        "queue_empty_at_s": queue_empty_s,
        "peak_rss_mib": peak.rss_kib as f64 / 1024.0,
        "peak_fds": peak.fds,
        "peak_sockets": peak.sockets,
        "connections_per_endpoint": tb_llm::connections_per_endpoint(),
        "before": {"rss_mib": before.rss_kib as f64 / 1024.0, "fds": before.fds, "sockets": before.sockets},
        "after": {"rss_mib": after.rss_kib as f64 / 1024.0, "fds": after.fds, "sockets": after.sockets},
        "by_tenth": tenths,
    }))
}

/// One sample of the sampler.
struct Point {
    t: f64,
    done: usize,
    started: usize,
    in_flight: usize,
    res: Sample,
}

/// What the timed run measured.
struct Run {
    wall: f64,
    passed: usize,
    errors: usize,
    first_error: Value,
    harness_cpu: f64,
    mock_cpu: f64,
    process_cpu: f64,
    harness_wait: f64,
    mock_wait: f64,
    machine_busy: f64,
    machine_total: f64,
    load: (f64, f64),
    series: Vec<Point>,
    peak: Sample,
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}
