//! `tb bench` (this crate; the `tb` binary parses its arguments and calls [`run`]):
//! whole-process performance figures, each beside the reference's figure and the
//! design target (DESIGN.md section 8, reference/timing.md).
//!
//! Figures:
//! - `load_s`: one-time loading (dataset, 507 tasks, every domain's initial data).
//! - `replay_all_s`: the reference's timed segment for all 507 tasks, one thread: fresh
//!   session + data patch, initial stable state, the golden calls, golden hash, golden stable
//!   state, deep diff initial vs golden (one hash per server, the golden one, as the
//!   reference's segment). Median of `--passes` passes.
//! - `session_create_us`: one fresh task session (base state + data patch), median: built
//!   from the task prepared at load (`LoadedRoot::prepare`: its data patch validated once);
//!   `session_create_unprepared_us` without that (validating and upserting the patch).
//! - `tool_call_us`: one in-process tool call (validation, tool, result text), median over
//!   every golden call of the benchmark; also split into reads and writes.
//! - `idle_sessions_10k_mib`: VmRSS growth of a fresh process holding 10,000 live sessions
//!   of mixed tasks.
//! - `offline_campaign_s`: 507 x 20 attempts through the episode loop (`attempt::attempt`, a
//!   model agent) against the in-process mock model server playing the golden calls, the
//!   simulated user and the judge mocked too, 64 attempts in flight.
//! - `offline_campaign_direct_s`: the same attempts of the offline golden agent straight
//!   through `attempt_offline` (session, episode, judge, trial record), on every core.
//! - `audit_all_s`: `tb audit` of every task (golden, noop, two more replays, every mutant of
//!   the golden calls, the wall-clock replay), on every core.
//! - `mcp_call_p50_us`, `mcp_call_p99_us`: one `tools/call` of a read tool over MCP Streamable
//!   HTTP on loopback (tb-mcp server in process on its own runtime, the official SDK's client:
//!   rmcp through [`tb_mcp::McpTools`], the one MCP client here). Beside it, `mcp.raw_p50_us`
//!   and `raw_p99_us`: the transport floor, the same `tools/call` as a pre-built JSON-RPC body
//!   POSTed with a plain reqwest client to the same endpoint (no MCP client logic: not a
//!   second MCP client, the HTTP round trip the SDK figure is compared to).
//!
//! - `startup_tools_ms`, `startup_run_test_ms`: `tb tools` and `tb run-test` on one task, each
//!   a fresh process (see [`startup`]).
//! - `test_body_us`: one airline test body evaluated in process (see [`test_body`]).
//!
//! No figure here is asserted anywhere: this is a report, not a test.

mod audit;
mod campaign;
pub mod error;
#[cfg(feature = "mock")]
mod latency_campaign;
mod mcp;
mod memory;
mod replay;
mod startup;
mod test_body;

use audit::audit_all;
use campaign::{campaign, campaign_llm, latency_figure};
pub use error::BenchError;
use error::{Context, Result, bail};
use mcp::mcp_bench;
use memory::{idle_child, idle_memory, rss_kib, sessions_memory};
use replay::{cold_session, replay_pass, trace_hashes};
use serde_json::{Map, Value, json};
use startup::startup_of;
use std::collections::HashMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tb_core::Task;
use tb_eval::attempt::attempt_offline;
use tb_eval::judge::StateJudge;
use tb_eval::offline::OfflineAgent;
use tb_eval::root::LoadedRoot;
use tb_eval::run::AttemptEnv;
use tb_sandbox::Clock;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;

/// The benchmark's test list, relative to the data root.
const TEST_LIST: &str = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

/// Reference figures: the reference's timed segment run side by side with `tb bench` on this
/// machine class (reference/timing.md, "Side by side"; `scripts/reference_timing.sh` retakes
/// them). The 22.4 s first quoted for the replay came from another machine, and machines of one
/// class differ by 3x, so only side-by-side figures make a ratio.
mod reference {
    /// Wall time for all 507 tasks, the best of the side-by-side runs (6.0 to 6.8 s).
    pub const REPLAY_ALL_S: f64 = 6.0;
    /// Median per task in the same runs (p95 19.5 ms).
    pub const PER_TASK_MEDIAN_MS: f64 = 13.3;
    /// p95 per task in the same runs.
    pub const PER_TASK_P95_MS: f64 = 19.5;
    /// Importing the five server modules in the same runs.
    pub const LOAD_S: f64 = 4.0;
    /// Peak RSS of the whole process (130.8 MB) in MiB.
    pub const PEAK_RSS_MIB: f64 = 130.8e6 / 1048576.0;
    /// Creating one proxy session (a process spawn), about 6 s.
    pub const SESSION_CREATE_US: f64 = 6.0e6;
}

/// Design targets on the 2-core machine.
mod target {
    /// Replay of all 507 tasks, one thread.
    pub const REPLAY_ALL_S: f64 = 0.05;
    /// One cold task session.
    pub const SESSION_CREATE_US: f64 = 5.0;
    /// One MCP `tools/call` round trip, median.
    pub const MCP_CALL_P50_US: f64 = 80.0;
    pub const IDLE_SESSIONS_10K_MIB: f64 = 1024.0;
    pub const OFFLINE_CAMPAIGN_S: f64 = 60.0;
}

/// `tb bench` options (the `tb` binary's `bench` arguments; see `tb bench --help`).
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// Data root (the folder holding `dataset/` and `servers/`).
    pub data: PathBuf,
    /// Print one JSON object instead of the table.
    pub json: bool,
    /// Test list (default: the v1 release list of 507 tasks).
    pub test_list: Option<PathBuf>,
    /// The time tools see. The recorded traces were taken at 2026-11-30T12:00:00Z, so golden
    /// hashes can be checked against them.
    pub now: String,
    /// Recorded traces (`tb-bench-v1/traces`) to check the golden hashes against; default:
    /// `<data>/../tb-bench-v1/traces` when it exists.
    pub traces: Option<PathBuf>,
    /// Passes over all tasks for `replay_all_s` (the median pass is reported).
    pub passes: usize,
    /// Live sessions for the idle-memory figure (measured in a child process).
    pub idle_sessions: usize,
    /// Attempts per task in the offline campaign (0 skips it).
    pub campaign_repeat: u32,
    /// Worker threads for the offline campaigns (default: available cores).
    pub threads: Option<usize>,
    /// Attempts in flight in the campaign through the episode loop and the mock model server.
    pub concurrency: usize,
    /// Timed MCP tool calls per client (0 skips the MCP figures).
    pub mcp_calls: usize,
    /// Internal: be the idle-memory child process and hold this many sessions.
    pub idle_child: Option<usize>,
    /// Only measure memory returned after sessions close: open this many MCP registry
    /// sessions at once (round robin over the list), replay each task's golden calls and grade
    /// it, close them all, and print VmRSS before, at the peak, after closing without and
    /// with the collection `tb mcp-start` requests (one JSON object).
    pub sessions_memory: Option<usize>,
    /// Attempts per task in the slow-model campaign `latency_campaign` (0 skips it).
    pub latency_repeat: u32,
    /// The slow mock model's delay before every answer, in milliseconds.
    pub latency_delay_ms: u64,
    /// Attempts in flight in the slow-model campaign.
    pub latency_concurrency: usize,
    /// The order the slow-model campaign starts its attempts in (the campaign scheduler's).
    pub latency_start_order: tb_campaign::schedule::StartOrder,
    /// Measure only `latency_campaign` and print its JSON object.
    pub latency_only: bool,
    /// Measure only the start-up figures and `test_body_us` and print their JSON objects.
    pub startup_only: bool,
    /// Bound on HTTP connections per model endpoint (all model clients share one pool).
    pub connections_per_endpoint: usize,
}

/// The golden calls of one server: (server, [(tool, arguments)]).
type ServerCalls = (String, Vec<(String, Value)>);

/// A golden hash: (task uid, server, hash).
type GoldenHash = (String, String, String);

struct Loaded {
    tasks: Vec<Task>,
    sandbox: std::sync::Arc<LoadedRoot>,
    /// Per task, per server of its world_state: the golden calls.
    calls: Vec<Vec<ServerCalls>>,
    /// Per task, made ready for sessions at load on the bench's clock (each data patch
    /// validated once; `session_create_us` opens sessions from these).
    prepared: Vec<tb_eval::root::PreparedTask>,
}

fn load(a: &BenchOptions) -> Result<(Loaded, tb_dataset::Dataset, PathBuf)> {
    let root = a.data.clone();
    let ds = tb_dataset::Dataset::open(&root)?;
    let sandbox = LoadedRoot::load(ds.root()).with_context(|| {
        format!(
            "loading the tools' initial data under {}",
            ds.root().display()
        )
    })?;
    // Domains load on first use; `load_s` counts loading them all.
    sandbox.preload()?;
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
    // Part of `load_s`: every task's data patch validated once, for the sessions of
    // `session_create_us`.
    let clock = Clock::parse(&a.now).map_err(|e| BenchError::Msg(e.clone()))?;
    let prepared = tasks
        .iter()
        .map(|t| sandbox.prepare(t, clock))
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok((
        Loaded {
            tasks,
            sandbox: std::sync::Arc::new(sandbox),
            calls,
            prepared,
        },
        ds,
        root,
    ))
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
    // A saturating float-to-int cast, clamped to the ranks 1..=len.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "clamped"
    )]
    let rank = ((p * v.len() as f64).ceil() as usize).clamp(1, v.len());
    v[rank - 1]
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
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
    // The decimal exponent of a finite, non-zero f64 is within -324..=308.
    #[allow(clippy::cast_possible_truncation, reason = "a small integral float")]
    let mag = x.abs().log10().floor() as i32;
    round(x, (3 - mag).max(0))
}

/// Runs `tb bench`.
pub fn run(a: &BenchOptions) -> Result<ExitCode> {
    if let Some(n) = a.sessions_memory {
        return sessions_memory(a, n);
    }
    if let Some(n) = a.idle_child {
        return idle_child(a, n);
    }
    let clock = Clock::parse(&a.now).map_err(|e| BenchError::Msg(e.clone()))?;
    tb_llm::set_connections_per_endpoint(a.connections_per_endpoint);
    let (rss0, _) = rss_kib();
    let t_load = Instant::now();
    let (l, ds, root) = load(a)?;
    let load_s = t_load.elapsed().as_secs_f64();
    let n_tasks = l.tasks.len();
    if a.latency_only {
        let v = latency_figure(a, &l, &ds)?;
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
    if a.startup_only {
        let startup = startup_of(&root, &l, &ds)?;
        let body = test_body::test_body_figure(&root, 5)?;
        let v = json!({"startup": startup, "test_body": body});
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
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
        let (times, h) = replay_pass(&l, clock, false)?;
        pass_times.push(t0.elapsed().as_secs_f64());
        per_task_all.extend(times);
        hashes = h;
    }
    // One more pass the long way (stable states as values, whole deep diff), for comparison.
    let t0 = Instant::now();
    let (_, full_hashes) = replay_pass(&l, clock, true)?;
    let replay_materialized_s = t0.elapsed().as_secs_f64();
    if full_hashes != hashes {
        bail!("the materialized replay gave other golden hashes than the streamed one");
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
    let (mut cold_us, mut unprepared_us, mut warm_us) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..20 {
        for (task, prepared) in l.tasks.iter().zip(&l.prepared) {
            let t0 = Instant::now();
            let s = l.sandbox.session_prepared(prepared)?;
            cold_us.push(us(t0.elapsed()));
            drop(std::hint::black_box(s));
            let t0 = Instant::now();
            let s = cold_session(&l, task, clock)?;
            unprepared_us.push(us(t0.elapsed()));
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
    let session_unprepared_us = median(&mut unprepared_us);

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
    let campaign_direct_s = camp.as_ref().and_then(|c| c["seconds"].as_f64());

    // 6. Tool calls over MCP Streamable HTTP on loopback.
    let mcp = if a.mcp_calls > 0 {
        progress("MCP tool calls");
        Some(mcp_bench(a, &l, &root)?)
    } else {
        None
    };
    let mcp_fig = |k: &str| mcp.as_ref().and_then(|m| m[k].as_f64());

    // 7. The offline campaign through the episode loop and the mock model server.
    let camp_llm = if a.campaign_repeat > 0 {
        progress("offline campaign through the episode loop (mock model server)");
        Some(campaign_llm(&l, &ds, a)?).filter(|v| !v.is_null())
    } else {
        None
    };
    let campaign_s = camp_llm.as_ref().and_then(|c| c["seconds"].as_f64());

    // 8. The campaign against a slow model (latency_campaign).
    let latency = latency_figure(a, &l, &ds)?;

    // 9. The audit of the whole list.
    progress("audit of every task");
    let audit = audit_all(&l, clock, a);

    // 10. Start-up of the commands that need one task; one airline test body.
    progress("start-up (fresh processes)");
    let startup = startup_of(&root, &l, &ds)?;
    let startup_fig = |k: &str| startup.as_ref().and_then(|m| m[k].as_f64());
    progress("airline test bodies");
    let body = test_body::test_body_figure(&root, 5)?;

    // Every reported figure, in table order. A new figure: measure it in a function of its
    // own (as `mcp_bench` or `campaign_llm`) and push its `Figure` (and any detail object
    // into the JSON below) here.
    let figures = vec![
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
                "{n_tasks} tasks, one thread: fresh session + patch + golden calls + 2 stable states + golden hash + deep diff; median of {} passes",
                pass_times.len()
            ),
        },
        Figure {
            key: "replay_all_materialized_s",
            value: Some(replay_materialized_s),
            unit: "s",
            reference: Some(reference::REPLAY_ALL_S),
            target: None,
            note: "the same segment with both stable states built as JSON values and diffed whole (what the first version did; tb-eval's judge builds a stable state only on a hash mismatch); one pass".into(),
        },
        Figure {
            key: "per_task_ms_median",
            value: Some(per_task_ms_median),
            unit: "ms",
            reference: Some(reference::PER_TASK_MEDIAN_MS),
            target: None,
            note: format!(
                "p95 {per_task_ms_p95:.3} ms (reference {}), max {per_task_ms_max:.3} ms", reference::PER_TASK_P95_MS
            ),
        },
        Figure {
            key: "session_create_us",
            value: Some(session_create_us),
            unit: "us",
            reference: Some(reference::SESSION_CREATE_US),
            target: Some(target::SESSION_CREATE_US),
            note: format!(
                "median over every task x 20, cold: a session of the task prepared at load (its data patch validated once, in load_s): the base state with the patched tables built anew from the prepared rows, shared by pointer (p99 {session_cold_p99_us:.1} us); without the preparation (copy, validate and upsert the patch): {session_unprepared_us:.2} us; a later session of the same task shares the patched state: {session_warm_us:.2} us (reference: one proxy session, a process spawn)"
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
            key: "audit_all_s",
            value: audit["seconds"].as_f64(),
            unit: "s",
            reference: None,
            target: None,
            note: format!(
                "tb audit of {} tasks on {} threads: golden, noop, 2 more golden replays, the wall-clock replay and {} mutants judged ({} equivalent); the reference has no such check",
                audit["tasks"], audit["threads"], audit["mutants"], audit["equivalent_mutants"]
            ),
        },
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
            note: camp_llm.as_ref().map_or(if cfg!(feature = "mock") { "skipped (--campaign-repeat 0)" } else { "skipped: this tb was built without the `mock` feature (cargo build --release -p tb-cli --features mock)" }.into(), |c| format!(
                "{} attempts ({n_tasks} x {}) through the episode loop (tb_eval::attempt::attempt, model agent) with the in-process mock model server playing the golden calls, mocked user and judge, {} in flight on {} threads: {} passed, {} system errors, {} agent model requests (mock setup {:.2} s, not counted)",
                c["attempts"], a.campaign_repeat, c["concurrency"], c["threads"], c["passed"],
                c["system_errors"], c["agent_requests"], c["setup_s"].as_f64().unwrap_or(0.0)
            )),
        },
        Figure {
            key: "latency_campaign_s",
            value: latency.as_ref().and_then(|c| c["seconds"].as_f64()),
            unit: "s",
            reference: None,
            target: latency.as_ref().and_then(|c| c["ideal_s"].as_f64()).map(|i| i * 1.03),
            note: latency.as_ref().map_or("skipped (--latency-repeat 0, or built without the `mock` feature)".into(), |c| format!(
                "{} attempts ({n_tasks} x {}) against a mock model answering after {} s, {} in flight: ideal (model turns x delay / in flight) {:.2} s for {} turns, {:+.2}% over it; harness CPU {:.2} ms per attempt (mock {:.1} s in all); peak RSS {:.0} MiB, peak {} sockets; {} passed, {} system errors; target: ideal + 3%",
                c["attempts"], a.latency_repeat, c["delay_s"], c["concurrency"],
                c["ideal_s"].as_f64().unwrap_or(0.0), c["model_turns"],
                c["over_ideal"].as_f64().unwrap_or(0.0) * 100.0,
                c["harness_cpu_ms_per_attempt"].as_f64().unwrap_or(0.0),
                c["mock_cpu_s"].as_f64().unwrap_or(0.0),
                c["peak_rss_mib"].as_f64().unwrap_or(0.0), c["peak_sockets"],
                c["passed"], c["system_errors"]
            )),
        },
        Figure {
            key: "offline_campaign_direct_s",
            value: campaign_direct_s,
            unit: "s",
            reference: None,
            target: None,
            note: format!(
                "{n_tasks} x {} attempts of the golden agent straight through attempt_offline (no model loop) on {} threads",
                a.campaign_repeat,
                camp.as_ref()
                    .map_or(0, |c| c["threads"].as_u64().unwrap_or(0))
            ),
        },
        Figure {
            key: "startup_tools_ms",
            value: startup_fig("tools_ms"),
            unit: "ms",
            reference: None,
            target: Some(startup::TARGET_MS),
            note: startup.as_ref().map_or("skipped (no task)".into(), |m| format!(
                "`tb tools --task {}` as a fresh process, median wall of {} runs after a warm-up (--surface auto, the reference's texts from the warm surface cache); with the cache off {} ms, with --surface own {} ms",
                m["task"].as_str().unwrap_or(""), m["runs"], m["tools_uncached_ms"], m["tools_own_surface_ms"]
            )),
        },
        Figure {
            key: "startup_run_test_ms",
            value: startup_fig("run_test_ms"),
            unit: "ms",
            reference: None,
            target: Some(startup::TARGET_MS),
            note: "`tb run-test` of one golden record of the same task (calls replayed, state judged), fresh process, median wall".into(),
        },
        Figure {
            key: "test_body_us",
            value: body.as_ref().and_then(|b| b["median_us"].as_f64()),
            unit: "us",
            reference: Some(test_body::REFERENCE_SUBPROCESS_US),
            target: Some(test_body::TARGET_US),
            note: body.as_ref().map_or("skipped (no tb-bench-v1/airline/traces.jsonl next to the data root)".into(), |b| format!(
                "one airline test body in process (tb-pyeval) on the context of a recorded trace replayed on our airline server (whole state as effects, read lazily), median of {} runs over {} bodies (p90 {} us, max {} us; parsing the test file once {} us, not counted); reference: a fresh test subprocess per test",
                b["runs"], b["bodies"], b["p90_us"], b["max_us"], b["parse_us"]
            )),
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
            "session_create_unprepared_us".into(),
            json!(sig(session_unprepared_us)),
        );
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
        out.insert("campaign_direct".into(), camp.unwrap_or(Value::Null));
        out.insert("campaign".into(), camp_llm.clone().unwrap_or(Value::Null));
        out.insert("mcp".into(), mcp.clone().unwrap_or(Value::Null));
        out.insert(
            "latency_campaign".into(),
            latency.clone().unwrap_or(Value::Null),
        );
        out.insert("audit".into(), audit.clone());
        out.insert("startup".into(), startup.clone().unwrap_or(Value::Null));
        out.insert("test_body".into(), body.clone().unwrap_or(Value::Null));
        out.insert("reference".into(), Value::Object(refs));
        out.insert("speedup_vs_reference".into(), Value::Object(ratios));
        out.insert("targets".into(), Value::Object(targets));
        out.insert("notes".into(), Value::Object(notes));
        out.insert(
            "machine".into(),
            json!({"cores": std::thread::available_parallelism().map_or(1, std::num::NonZero::get)}),
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
                f.of_target().map_or("-".into(), |r| format!("{r:.2}")),
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
                "direct campaign: {}/{} attempts passed, {} bytes of records",
                c["passed"], c["attempts"], c["record_bytes"]
            );
        }
        if let Some(c) = &camp_llm {
            println!(
                "campaign through the episode loop: {}/{} attempts passed, {} system errors",
                c["passed"], c["attempts"], c["system_errors"]
            );
        }
        println!(
            "\"vs ref\" is reference / ours (times faster or smaller); \"of tgt\" is ours / target (at most 1 meets it)."
        );
    }
    Ok(ExitCode::SUCCESS)
}
