//! `tb bench`: whole-process performance figures, each beside the reference's figure and the
//! design target (DESIGN.md section 8, reference/timing.md).
//!
//! Figures:
//! - `load_s`: one-time loading (dataset, 507 tasks, every domain's initial data).
//! - `replay_all_s`: the reference's timed segment for all 507 tasks, one thread: fresh
//!   session + data patch, initial stable state and hash, the golden calls, golden stable
//!   state and hash, deep diff initial vs golden. Median of `--passes` passes.
//! - `session_create_us`: one fresh task session (base state + data patch), median.
//! - `tool_call_us`: one in-process tool call (validation, tool, result text), median over
//!   every golden call of the benchmark; also split into reads and writes.
//! - `idle_sessions_10k_mib`: VmRSS growth of a fresh process holding 10,000 live sessions
//!   of mixed tasks.
//! - `offline_campaign_s`: 507 x 20 attempts of the offline golden agent through
//!   `attempt_offline` (session, episode, judge, trial record), on every core.
//! - `mcp_call_p50_us`, `mcp_call_p99_us`: pending (the MCP server is not built yet).
//!
//! No figure here is asserted anywhere: this is a report, not a test.

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tb_core::Task;
use tb_eval::infer::{AttemptEnv, attempt_offline};
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;
use tb_eval::sandbox::Sandbox;
use tb_sandbox::Clock;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;

/// The benchmark's test list, relative to the data root.
const TEST_LIST: &str = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

/// Reference figures (reference/timing.md and DESIGN.md section 8).
mod reference {
    /// Wall time for all 507 tasks, best of two runs (22.4 s and 23.4 s).
    pub const REPLAY_ALL_S: f64 = 22.4;
    /// Median per task, best of two runs (36.6 ms and 39.2 ms).
    pub const PER_TASK_MEDIAN_MS: f64 = 36.6;
    /// Importing the five server modules (11.4 s in the timed run; 7.9 to 24 s seen).
    pub const LOAD_S: f64 = 11.4;
    /// Peak RSS of the whole process (130.8 MB) in MiB.
    pub const PEAK_RSS_MIB: f64 = 130.8e6 / 1048576.0;
    /// Creating one proxy session (a process spawn), about 6 s.
    pub const SESSION_CREATE_US: f64 = 6.0e6;
}

/// Design targets on the 2-core machine (DESIGN.md section 8 and issue 13).
mod target {
    pub const REPLAY_ALL_S: f64 = 0.2;
    pub const SESSION_CREATE_US: f64 = 50.0;
    pub const MCP_CALL_P50_US: f64 = 200.0;
    pub const IDLE_SESSIONS_10K_MIB: f64 = 1024.0;
    pub const OFFLINE_CAMPAIGN_S: f64 = 60.0;
}

/// `tb bench` arguments.
#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Data root (the folder holding `dataset/` and `servers/`); defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
    /// Test list (default: the v1 release list of 507 tasks).
    #[arg(long)]
    pub test_list: Option<PathBuf>,
    /// The time tools see. The recorded traces were taken at 2026-11-30T12:00:00Z, so golden
    /// hashes can be checked against them.
    #[arg(long, default_value = "2026-11-30T12:00:00Z")]
    pub now: String,
    /// Recorded traces (`tb-bench-v1/traces`) to check the golden hashes against; default:
    /// `<data>/../tb-bench-v1/traces` when it exists.
    #[arg(long)]
    pub traces: Option<PathBuf>,
    /// Passes over all tasks for `replay_all_s` (the median pass is reported).
    #[arg(long, default_value_t = 5)]
    pub passes: usize,
    /// Live sessions for the idle-memory figure (measured in a child process).
    #[arg(long, default_value_t = 10_000)]
    pub idle_sessions: usize,
    /// Attempts per task in the offline campaign (0 skips it).
    #[arg(long, default_value_t = 20)]
    pub campaign_repeat: u32,
    /// Worker threads for the offline campaign (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Internal: be the idle-memory child process and hold this many sessions.
    #[arg(long, hide = true)]
    pub idle_child: Option<usize>,
}

/// The golden calls of one server: (server, [(tool, arguments)]).
type ServerCalls = (String, Vec<(String, Value)>);

/// A golden hash: (task uid, server, hash).
type GoldenHash = (String, String, String);

struct Loaded {
    tasks: Vec<Task>,
    sandbox: Sandbox,
    /// Per task, per server of its world_state: the golden calls.
    calls: Vec<Vec<ServerCalls>>,
}

fn load(a: &BenchArgs) -> Result<(Loaded, tb_dataset::Dataset, PathBuf)> {
    let root = crate::common::data_root(&a.data)?;
    let (ds, sandbox) = crate::common::open(&root)?;
    let list = a
        .test_list
        .clone()
        .unwrap_or_else(|| ds.root().join(TEST_LIST));
    let tasks = ds
        .load_test_list(&ds.resolve_test_list(&list))
        .with_context(|| format!("loading the test list {}", list.display()))?;
    if tasks.is_empty() {
        bail!("the test list {} has no tasks", list.display());
    }
    let calls = tasks
        .iter()
        .map(|t| {
            t.servers()
                .into_iter()
                .map(|s| {
                    let c = t.golden_calls(&s);
                    (s, c)
                })
                .collect()
        })
        .collect();
    Ok((
        Loaded {
            tasks,
            sandbox,
            calls,
        },
        ds,
        root,
    ))
}

/// VmRSS and VmHWM of this process in KiB, from /proc/self/status.
fn rss_kib() -> (Option<u64>, Option<u64>) {
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

fn median(v: &mut [f64]) -> f64 {
    percentile(v, 0.5)
}

/// Nearest-rank percentile of `v` (sorted in place).
fn percentile(v: &mut [f64], p: f64) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(f64::total_cmp);
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A fresh session of every server of a task, built without the shared patched state (the
/// tables are copied and patched now, as the reference builds a fresh system per task).
fn cold_session(l: &Loaded, task: &Task, clock: Clock) -> Result<Vec<tb_sandbox::Session>> {
    task.world_state
        .iter()
        .map(|(server, config)| {
            let loaded = l
                .sandbox
                .domain(server)
                .with_context(|| format!("task {}: unknown server {server}", task.uid))?;
            loaded
                .session_uncached(config, clock)
                .with_context(|| format!("task {}", task.uid))
        })
        .collect()
}

/// One pass of the reference's timed segment over every task. Returns per-task times (s) and
/// the golden hashes (task uid, server, hash).
fn replay_pass(l: &Loaded, clock: Clock) -> Result<(Vec<f64>, Vec<GoldenHash>)> {
    let mut times = Vec::with_capacity(l.tasks.len());
    let mut hashes = Vec::new();
    for (task, calls) in l.tasks.iter().zip(&l.calls) {
        let t0 = Instant::now();
        let mut servers = cold_session(l, task, clock)?;
        let mut out = Vec::with_capacity(calls.len());
        for (s, (server, calls)) in servers.iter_mut().zip(calls) {
            let initial = s.state.stable_state();
            let initial_hash = hash_stable(&initial);
            for (tool, params) in calls {
                std::hint::black_box(s.call(tool, params));
            }
            let golden = s.state.stable_state();
            let golden_hash = hash_stable(&golden);
            let diff = deep_diff(&initial, &golden);
            std::hint::black_box((&initial_hash, &diff));
            out.push((server, golden_hash));
        }
        times.push(t0.elapsed().as_secs_f64());
        for (server, h) in out {
            hashes.push((task.uid.clone(), server.clone(), h));
        }
    }
    Ok((times, hashes))
}

/// Golden hashes recorded in the trace files under `dir`: (task id, server) -> hash.
fn trace_hashes(dir: &std::path::Path) -> Result<HashMap<(String, String), String>> {
    let mut out = HashMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for t in tb_eval::replay::read_traces(&f).map_err(anyhow::Error::msg)? {
            out.insert((t.id, t.domain), t.golden_hash);
        }
    }
    Ok(out)
}

/// The idle-memory child: load, then hold `n` fresh sessions of mixed tasks; print JSON.
fn idle_child(a: &BenchArgs, n: usize) -> Result<ExitCode> {
    let (l, _, _) = load(a)?;
    let clock = Clock::parse(&a.now).map_err(anyhow::Error::msg)?;
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

fn idle_memory(a: &BenchArgs) -> Result<Value> {
    let exe = std::env::current_exe().context("locating the tb binary")?;
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("bench")
        .arg("--idle-child")
        .arg(a.idle_sessions.to_string())
        .arg("--now")
        .arg(&a.now);
    if let Some(d) = &a.data {
        cmd.arg("--data").arg(d);
    }
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

fn campaign(
    l: &Loaded,
    ds: &tb_dataset::Dataset,
    root: &std::path::Path,
    a: &BenchArgs,
) -> Result<Value> {
    // As `tb infer` runs it: default clock, the `think` agent's instructions, scenario bot
    // instructions, a golden-state cache shared by all attempts; each record is serialized
    // to JSON (counted, not written to disk).
    let clock = Clock::default();
    let mut bot = HashMap::new();
    for t in &l.tasks {
        if !bot.contains_key(&t.scenario) {
            let s = ds.scenario(&t.scenario)?;
            bot.insert(
                t.scenario.clone(),
                s.bot_instructions.clone().unwrap_or_default(),
            );
        }
    }
    let agent_cfg = ds.agent("think").ok();
    let mut provenance = Map::new();
    provenance.insert("tb_version".into(), json!(env!("CARGO_PKG_VERSION")));
    provenance.insert("data_root".into(), json!(root.display().to_string()));
    provenance.insert("agent".into(), json!("golden"));
    let judge = StateJudge::new();
    let env = AttemptEnv {
        sandbox: &l.sandbox,
        judge: &judge,
        clock,
        agent_instructions: agent_cfg.as_ref().map(|c| c.system_instructions.as_str()),
        bot_instructions: &bot,
        provenance: &provenance,
    };
    let repeat = a.campaign_repeat as usize;
    let total = l.tasks.len() * repeat;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let next = AtomicUsize::new(0);
    let passed = AtomicUsize::new(0);
    let bytes = AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    // Repetition-major, as `tb infer` orders attempts.
                    let (rep, t) = (i / l.tasks.len(), i % l.tasks.len());
                    let rec = attempt_offline(&env, OfflineAgent::Golden, &l.tasks[t], rep as u32);
                    if rec.verdict.as_ref().is_some_and(|v| v.passed) {
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                    let line = serde_json::to_vec(&rec).unwrap_or_default();
                    bytes.fetch_add(line.len() + 1, Ordering::Relaxed);
                }
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    Ok(json!({
        "attempts": total,
        "passed": passed.load(Ordering::Relaxed),
        "threads": threads,
        "record_bytes": bytes.load(Ordering::Relaxed),
        "seconds": secs,
    }))
}

/// One reported figure.
struct Figure {
    key: &'static str,
    value: Option<f64>,
    unit: &'static str,
    reference: Option<f64>,
    target: Option<f64>,
    note: String,
}

impl Figure {
    /// Reference / ours: how many times faster (or smaller) we are.
    fn vs_reference(&self) -> Option<f64> {
        match (self.value, self.reference) {
            (Some(v), Some(r)) if v > 0.0 => Some(r / v),
            _ => None,
        }
    }
    /// Ours / target: at most 1 meets the target.
    fn of_target(&self) -> Option<f64> {
        match (self.value, self.target) {
            (Some(v), Some(t)) if t > 0.0 => Some(v / t),
            _ => None,
        }
    }
}

fn round(x: f64, digits: i32) -> f64 {
    let p = 10f64.powi(digits);
    (x * p).round() / p
}

/// Significant-figure rounding for JSON output.
fn sig(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    let mag = x.abs().log10().floor() as i32;
    round(x, (3 - mag).max(0))
}

/// Runs `tb bench`.
pub fn run(a: &BenchArgs) -> Result<ExitCode> {
    if let Some(n) = a.idle_child {
        return idle_child(a, n);
    }
    let clock = Clock::parse(&a.now).map_err(anyhow::Error::msg)?;
    let (rss0, _) = rss_kib();
    let t_load = Instant::now();
    let (l, ds, root) = load(a)?;
    let load_s = t_load.elapsed().as_secs_f64();
    let n_tasks = l.tasks.len();
    let progress = |what: &str| {
        if !a.json {
            eprintln!("bench: {what}");
        }
    };

    // 1. All tasks replayed and hashed, one thread.
    progress("replaying all tasks");
    let mut pass_times = Vec::new();
    let mut per_task_all = Vec::new();
    let mut hashes = Vec::new();
    for _ in 0..a.passes.max(1) {
        let t0 = Instant::now();
        let (times, h) = replay_pass(&l, clock)?;
        pass_times.push(t0.elapsed().as_secs_f64());
        per_task_all.extend(times);
        hashes = h;
    }
    let replay_all_s = median(&mut pass_times.clone());
    let per_task_ms_median = median(&mut per_task_all.clone()) * 1e3;
    let per_task_ms_p95 = percentile(&mut per_task_all.clone(), 0.95) * 1e3;
    let per_task_ms_max = percentile(&mut per_task_all, 1.0) * 1e3;
    let (_, hwm) = rss_kib();
    let traces_dir = a.traces.clone().or_else(|| {
        let d = root.join("../tb-bench-v1/traces");
        d.is_dir().then_some(d)
    });
    let hash_check = match &traces_dir {
        Some(d) => {
            let want = trace_hashes(d)?;
            let matched = hashes
                .iter()
                .filter(|(t, s, h)| want.get(&(t.clone(), s.clone())) == Some(h))
                .count();
            json!({"traces": d.display().to_string(), "matched": matched, "of": hashes.len()})
        }
        None => Value::Null,
    };

    // 2. Fresh sessions, every task several times.
    progress("fresh sessions");
    let (mut cold_us, mut warm_us) = (Vec::new(), Vec::new());
    for _ in 0..20 {
        for task in &l.tasks {
            let t0 = Instant::now();
            let s = cold_session(&l, task, clock)?;
            cold_us.push(us(t0.elapsed()));
            drop(std::hint::black_box(s));
            let t0 = Instant::now();
            let s = l.sandbox.session(task, clock)?;
            warm_us.push(us(t0.elapsed()));
            drop(std::hint::black_box(s));
        }
    }
    let session_create_us = median(&mut cold_us);
    let session_cold_p99_us = percentile(&mut cold_us, 0.99);
    let session_warm_us = median(&mut warm_us);

    // 3. In-process tool calls: every golden call, timed alone (validation, tool, result text).
    progress("tool calls");
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        for (task, calls) in l.tasks.iter().zip(&l.calls) {
            let mut servers = l.sandbox.session(task, clock)?.servers;
            for (s, (_, calls)) in servers.iter_mut().zip(calls) {
                for (tool, params) in calls {
                    let w0 = s.state.writes();
                    let t0 = Instant::now();
                    let text = s.call(tool, params).to_text(tool);
                    let dt = us(t0.elapsed());
                    std::hint::black_box(text);
                    if s.state.writes() == w0 {
                        reads.push(dt);
                    } else {
                        writes.push(dt);
                    }
                }
            }
        }
    }
    let n_calls = (reads.len() + writes.len()) / 5;
    let mut all_calls: Vec<f64> = reads.iter().chain(&writes).copied().collect();
    let tool_call_us = median(&mut all_calls);
    let tool_call_p99_us = percentile(&mut all_calls, 0.99);
    let read_us = median(&mut reads);
    let write_us = median(&mut writes);

    // 4. Idle sessions, in a fresh process.
    progress("idle sessions (child process)");
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

    // 5. Offline campaign.
    let camp = if a.campaign_repeat > 0 {
        progress("offline campaign");
        Some(campaign(&l, &ds, &root, a)?)
    } else {
        None
    };
    let campaign_s = camp.as_ref().and_then(|c| c["seconds"].as_f64());

    let figures = [
        Figure {
            key: "load_s",
            value: Some(load_s),
            unit: "s",
            reference: Some(reference::LOAD_S),
            target: None,
            note: format!(
                "one-time: dataset, {n_tasks} tasks, every domain's initial data (reference: importing the five server modules)"
            ),
        },
        Figure {
            key: "replay_all_s",
            value: Some(replay_all_s),
            unit: "s",
            reference: Some(reference::REPLAY_ALL_S),
            target: Some(target::REPLAY_ALL_S),
            note: format!(
                "{n_tasks} tasks, one thread: fresh session + patch + golden calls + 2 stable states + 2 hashes + deep diff; median of {} passes",
                pass_times.len()
            ),
        },
        Figure {
            key: "per_task_ms_median",
            value: Some(per_task_ms_median),
            unit: "ms",
            reference: Some(reference::PER_TASK_MEDIAN_MS),
            target: None,
            note: format!(
                "p95 {per_task_ms_p95:.3} ms (reference 78.0), max {per_task_ms_max:.3} ms"
            ),
        },
        Figure {
            key: "session_create_us",
            value: Some(session_create_us),
            unit: "us",
            reference: Some(reference::SESSION_CREATE_US),
            target: Some(target::SESSION_CREATE_US),
            note: format!(
                "median over every task x 20, cold: base state + copy and patch of the tables the patch touches (p99 {session_cold_p99_us:.1} us); a later session of the same task shares the patched state: {session_warm_us:.2} us (reference: one proxy session, a process spawn)"
            ),
        },
        Figure {
            key: "tool_call_us",
            value: Some(tool_call_us),
            unit: "us",
            reference: None,
            target: None,
            note: format!(
                "median of {n_calls} golden calls x 5, in process (validation + tool + result text): reads {read_us:.2} us, writes {write_us:.2} us, p99 {tool_call_p99_us:.1} us; the reference does not time calls alone"
            ),
        },
        Figure {
            key: "mcp_call_p50_us",
            value: None,
            unit: "us",
            reference: None,
            target: Some(target::MCP_CALL_P50_US),
            note: "pending: the MCP Streamable HTTP server is not built yet".into(),
        },
        Figure {
            key: "mcp_call_p99_us",
            value: None,
            unit: "us",
            reference: None,
            target: None,
            note: "pending: the MCP Streamable HTTP server is not built yet".into(),
        },
        Figure {
            key: "idle_sessions_10k_mib",
            value: idle_mib,
            unit: "MiB",
            reference: Some(reference::PEAK_RSS_MIB),
            target: Some(target::IDLE_SESSIONS_10K_MIB),
            note: format!(
                "VmRSS growth of a fresh process holding {} sessions of mixed tasks (round robin over the list; sessions of one task share its patched tables copy-on-write; scaled to 10,000); reference column: ONE reference process's peak RSS",
                a.idle_sessions
            ),
        },
        Figure {
            key: "replay_peak_rss_mib",
            value: hwm.map(|k| k as f64 / 1024.0),
            unit: "MiB",
            reference: Some(reference::PEAK_RSS_MIB),
            target: None,
            note: format!(
                "VmHWM of this process after loading and replaying (RSS before loading {:.1} MiB)",
                rss0.unwrap_or(0) as f64 / 1024.0
            ),
        },
        Figure {
            key: "offline_campaign_s",
            value: campaign_s,
            unit: "s",
            reference: None,
            target: Some(target::OFFLINE_CAMPAIGN_S),
            note: format!(
                "{n_tasks} x {} attempts of the golden agent through attempt_offline on {} threads; NOT yet through the LLM episode loop and the mock model server (pending)",
                a.campaign_repeat,
                camp.as_ref()
                    .map_or(0, |c| c["threads"].as_u64().unwrap_or(0))
            ),
        },
    ];

    if a.json {
        let mut out = Map::new();
        for f in &figures {
            out.insert(
                f.key.into(),
                f.value.map(sig).map_or(Value::Null, |v| json!(v)),
            );
        }
        let mut refs = Map::new();
        let mut ratios = Map::new();
        let mut targets = Map::new();
        let mut notes = Map::new();
        for f in &figures {
            refs.insert(
                f.key.into(),
                f.reference.map(sig).map_or(Value::Null, |v| json!(v)),
            );
            ratios.insert(
                f.key.into(),
                f.vs_reference().map(sig).map_or(Value::Null, |v| json!(v)),
            );
            if let Some(t) = f.target {
                targets.insert(
                    f.key.into(),
                    json!({"target": t, "of_target": f.of_target().map(sig)}),
                );
            }
            notes.insert(f.key.into(), json!(f.note));
        }
        out.insert("session_create_warm_us".into(), json!(sig(session_warm_us)));
        out.insert(
            "session_create_p99_us".into(),
            json!(sig(session_cold_p99_us)),
        );
        out.insert("tool_call_read_us".into(), json!(sig(read_us)));
        out.insert("tool_call_write_us".into(), json!(sig(write_us)));
        out.insert("tool_call_p99_us".into(), json!(sig(tool_call_p99_us)));
        out.insert("per_task_ms_p95".into(), json!(sig(per_task_ms_p95)));
        out.insert("per_task_ms_max".into(), json!(sig(per_task_ms_max)));
        out.insert("tasks".into(), json!(n_tasks));
        out.insert("golden_hashes_vs_traces".into(), hash_check);
        out.insert("idle".into(), idle.unwrap_or(Value::Null));
        out.insert("campaign".into(), camp.unwrap_or(Value::Null));
        out.insert("reference".into(), Value::Object(refs));
        out.insert("speedup_vs_reference".into(), Value::Object(ratios));
        out.insert("targets".into(), Value::Object(targets));
        out.insert("notes".into(), Value::Object(notes));
        out.insert(
            "pending".into(),
            json!(["mcp_call_p50_us", "mcp_call_p99_us", "offline_campaign_s through the LLM episode loop and the mock model server at concurrency 64"]),
        );
        out.insert(
            "machine".into(),
            json!({"cores": std::thread::available_parallelism().map_or(1, |n| n.get())}),
        );
        println!("{}", serde_json::to_string_pretty(&Value::Object(out))?);
    } else {
        println!(
            "{:<24} {:>12} {:>14} {:>12} {:>10} {:>8}",
            "figure", "ours", "reference", "vs ref", "target", "of tgt"
        );
        let num = |v: Option<f64>, unit: &str| {
            v.map_or("-".to_string(), |v| format!("{} {unit}", sig(v)))
        };
        for f in &figures {
            println!(
                "{:<24} {:>12} {:>14} {:>12} {:>10} {:>8}",
                f.key,
                f.value
                    .map_or("pending".to_string(), |v| format!("{} {}", sig(v), f.unit)),
                num(f.reference, f.unit),
                f.vs_reference()
                    .map_or("-".into(), |r| format!("{}x", sig(r))),
                num(f.target, f.unit),
                f.of_target().map_or("-".into(), |r| format!("{:.2}", r)),
            );
            println!("    {}", f.note);
        }
        match &hash_check {
            Value::Null => println!("golden hashes: no traces to check against (--traces DIR)"),
            v => println!(
                "golden hashes equal to the recorded traces: {}/{}",
                v["matched"], v["of"]
            ),
        }
        if let Some(c) = &camp {
            println!(
                "campaign: {}/{} attempts passed, {} bytes of records",
                c["passed"], c["attempts"], c["record_bytes"]
            );
        }
        println!(
            "\"vs ref\" is reference / ours (times faster or smaller); \"of tgt\" is ours / target (at most 1 meets it)."
        );
    }
    Ok(ExitCode::SUCCESS)
}
