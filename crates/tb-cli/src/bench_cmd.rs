//! `tb bench`: its arguments; the figures are measured by the `tb-bench` crate.

use anyhow::Result;
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

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
    /// Worker threads for the offline campaigns (default: available cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Attempts in flight in the campaign through the episode loop and the mock model server.
    #[arg(long, default_value_t = 64)]
    pub concurrency: usize,
    /// Timed MCP tool calls per client (0 skips the MCP figures).
    #[arg(long, default_value_t = 2_000)]
    pub mcp_calls: usize,
    /// Attempts per task in the slow-model campaign `latency_campaign` (0 skips it).
    #[arg(long, default_value_t = 20)]
    pub latency_repeat: u32,
    /// The slow mock model's delay before every answer, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    pub latency_delay_ms: u64,
    /// Attempts in flight in the slow-model campaign.
    #[arg(long, default_value_t = 2000)]
    pub latency_concurrency: usize,
    /// The order the slow-model campaign starts its attempts in: `packed` (longest expected
    /// first, packed so the slots end together), `longest-first` or `plan` (as `tb infer
    /// --start-order`).
    #[arg(long, default_value = "packed")]
    pub latency_start_order: tb_campaign::schedule::StartOrder,
    /// Measure only `latency_campaign` and print its JSON object.
    #[arg(long)]
    pub latency_only: bool,
    /// Measure only the start-up figures (fresh `tb tools`/`tb run-test` processes) and
    /// `test_body_us`, and print their JSON objects.
    #[arg(long)]
    pub startup_only: bool,
    /// Bound on HTTP connections per model endpoint (all model clients share one pool).
    #[arg(long, default_value_t = tb_llm::DEFAULT_CONNECTIONS_PER_ENDPOINT)]
    pub connections_per_endpoint: usize,
    /// Internal: be the idle-memory child process and hold this many sessions.
    #[arg(long, hide = true)]
    pub idle_child: Option<usize>,
    /// Only measure memory returned after sessions close: open this many MCP registry
    /// sessions at once (round robin over the list), replay each task's golden calls and grade
    /// it, close them all, and print VmRSS before, at the peak, after closing without and
    /// with the collection `tb mcp-start` requests (one JSON object).
    #[arg(long)]
    pub sessions_memory: Option<usize>,
}

/// Runs `tb bench`.
pub fn run(a: &BenchArgs) -> Result<ExitCode> {
    let opts = tb_bench::BenchOptions {
        data: crate::common::data_root(&a.data)?,
        json: a.json,
        test_list: a.test_list.clone(),
        now: a.now.clone(),
        traces: a.traces.clone(),
        passes: a.passes,
        idle_sessions: a.idle_sessions,
        campaign_repeat: a.campaign_repeat,
        threads: a.threads,
        concurrency: a.concurrency,
        mcp_calls: a.mcp_calls,
        idle_child: a.idle_child,
        sessions_memory: a.sessions_memory,
        latency_repeat: a.latency_repeat,
        latency_delay_ms: a.latency_delay_ms,
        latency_concurrency: a.latency_concurrency,
        latency_start_order: a.latency_start_order,
        latency_only: a.latency_only,
        startup_only: a.startup_only,
        connections_per_endpoint: a.connections_per_endpoint,
    };
    Ok(tb_bench::run(&opts)?)
}
