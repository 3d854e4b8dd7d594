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
//!   a fresh process (see `startup`).
//! - `test_body_us`: one airline test body evaluated in process (see `test_body`).
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
mod tool_calls;

use campaign::latency_figure;
pub use error::BenchError;
use error::{Context, Result, bail};
use memory::{idle_child, rss_kib, sessions_memory};
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

/// The test list `list` names (default: the v1 release list under the data root) and its
/// tasks; an empty list is an error.
pub fn test_list_tasks(
    ds: &tb_dataset::Dataset,
    list: Option<&PathBuf>,
) -> Result<(PathBuf, Vec<Task>)> {
    let list = list.cloned().unwrap_or_else(|| ds.root().join(TEST_LIST));
    let tasks = ds
        .load_test_list(&ds.resolve_test_list(&list))
        .with_context(|| format!("loading the test list {}", list.display()))?;
    if tasks.is_empty() {
        bail!("the test list {} has no tasks", list.display());
    }
    Ok((list, tasks))
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
    let (_, tasks) = test_list_tasks(&ds, a.test_list.as_ref())?;
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
    let b = Bench {
        a,
        l: &l,
        ds: &ds,
        root: &root,
        clock,
    };
    // In the order they are measured; `report` puts the figures in table order.
    let measured = [
        load_figures(&b, load_s),
        replay::replay_figures(&b, rss0)?,
        replay::session_figures(&b)?,
        tool_calls::figures(&b)?,
        memory::idle_figures(&b)?,
        campaign::direct_figures(&b)?,
        mcp::figures(&b)?,
        campaign::llm_figures(&b)?,
        campaign::latency_figures(&b)?,
        audit::figures(&b),
        startup::figures(&b)?,
        test_body::figures(&b)?,
    ];
    report(a, measured)
}

/// What every figure function reads: the options, the loaded benchmark and its clock.
struct Bench<'a> {
    a: &'a BenchOptions,
    l: &'a Loaded,
    ds: &'a tb_dataset::Dataset,
    root: &'a std::path::Path,
    clock: Clock,
}

impl Bench<'_> {
    /// Says on stderr what is measured next (not with `--json`).
    fn progress(&self, what: &str) {
        if !self.a.json {
            eprintln!("bench: {what}");
        }
    }

    fn n_tasks(&self) -> usize {
        self.l.tasks.len()
    }
}

/// What one figure function measured: its figures, entries of the JSON object beside the
/// figures, and lines printed under the table.
#[derive(Default)]
struct Measured {
    figures: Vec<Figure>,
    details: Vec<(&'static str, Value)>,
    lines: Vec<String>,
}

/// The figures in table order.
const FIGURE_ORDER: [&str; 17] = [
    "load_s",
    "replay_all_s",
    "replay_all_materialized_s",
    "per_task_ms_median",
    "session_create_us",
    "tool_call_us",
    "audit_all_s",
    "mcp_call_p50_us",
    "mcp_call_p99_us",
    "idle_sessions_10k_mib",
    "replay_peak_rss_mib",
    "offline_campaign_s",
    "latency_campaign_s",
    "offline_campaign_direct_s",
    "startup_tools_ms",
    "startup_run_test_ms",
    "test_body_us",
];

/// The JSON object's entries after the figures, in order.
const DETAIL_ORDER: [&str; 18] = [
    "session_create_warm_us",
    "session_create_unprepared_us",
    "session_create_p99_us",
    "tool_call_read_us",
    "tool_call_write_us",
    "tool_call_p99_us",
    "per_task_ms_p95",
    "per_task_ms_max",
    "tasks",
    "golden_hashes_vs_traces",
    "idle",
    "campaign_direct",
    "campaign",
    "mcp",
    "latency_campaign",
    "audit",
    "startup",
    "test_body",
];

/// The loading figure (`load_s`).
fn load_figures(b: &Bench<'_>, load_s: f64) -> Measured {
    let n_tasks = b.n_tasks();
    Measured {
        figures: vec![Figure {
            key: "load_s",
            value: Some(load_s),
            unit: "s",
            reference: Some(reference::LOAD_S),
            target: None,
            note: format!(
                "one-time: dataset, {n_tasks} tasks, every domain's initial data (reference: importing the five server modules)"
            ),
        }],
        details: vec![("tasks", json!(n_tasks))],
        lines: Vec::new(),
    }
}

/// Prints the figures: a table with notes, or one JSON object (`--json`).
fn report<const N: usize>(a: &BenchOptions, measured: [Measured; N]) -> Result<ExitCode> {
    let (mut figures, mut details, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for m in measured {
        figures.extend(m.figures);
        details.extend(m.details);
        lines.extend(m.lines);
    }
    figures.sort_by_key(|f| FIGURE_ORDER.iter().position(|k| *k == f.key));
    details.sort_by_key(|(k, _)| DETAIL_ORDER.iter().position(|d| d == k));
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
        for (k, v) in details {
            out.insert(k.into(), v);
        }
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
        for line in &lines {
            println!("{line}");
        }
        println!(
            "\"vs ref\" is reference / ours (times faster or smaller); \"of tgt\" is ours / target (at most 1 meets it)."
        );
    }
    Ok(ExitCode::SUCCESS)
}
