//! `tb`: run, grade and report ThinkingBox benchmarks from one binary.

mod audit_cmd;
mod bench_cmd;
mod campaign_cmd;
mod common;
mod infer_cmd;
mod mcp_cmd;
mod merge_cmd;
mod metrics_cmds;
mod openenv_cmd;
mod pp_cmd;
mod replay_cmd;
mod run_test_cmd;
mod tools_cmd;
mod tui_cmd;
mod validate_cmd;
mod verify_cmd;
mod view_cmd;

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

/// Run, grade and report tool-using LLM agents on ThinkingBox benchmarks, in one binary.
#[derive(Debug, Parser)]
#[command(
    name = "tb",
    version,
    about,
    long_about = None,
    after_help = "Examples:\n  tb infer --data examples/brightside --test-list examples/brightside/testlist.yaml --agent golden --repeat 3 --output out/brightside.jsonl\n  tb agg out/brightside.jsonl\n\nGuide: README.md and docs/ in the source tree."
)]
struct Cli {
    /// Log filter (also RUST_LOG), e.g. `info` or `tb_eval=debug`.
    #[arg(long, global = true, env = "TB_LOG", default_value = "warn")]
    log: String,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load a test list and every file it needs; print a per-scenario summary.
    Validate(validate_cmd::ValidateArgs),
    /// Replay recorded reference traces through our tools and compare everything.
    Replay(replay_cmd::ReplayArgs),
    /// Run attempts of tasks with an agent and write one trial record per attempt.
    Infer(Box<infer_cmd::InferArgs>),
    /// Check that a campaign's output is complete and consistent (every key once, with a
    /// verdict; same bundle and config hash).
    Verify(verify_cmd::VerifyArgs),
    /// Merge shard outputs (`tb infer --shard i/n`) into one, refusing duplicates.
    Merge(merge_cmd::MergeArgs),
    /// Sharded campaigns on a scheduler: plan (Slurm array, Kubernetes Indexed Job), run a
    /// shard, status, merge and verify.
    Campaign(campaign_cmd::CampaignArgs),
    /// Serve MCP sessions (Streamable HTTP), the admin surface and the Session Proxy API.
    McpStart(mcp_cmd::McpStartArgs),
    /// Serve one task session over MCP stdio (for desktop MCP clients).
    McpStdio(mcp_cmd::McpStdioArgs),
    /// Serve OpenEnv environments (`/ws`): the client plays the agent; tools, simulated user
    /// and judges run here.
    Openenv(openenv_cmd::OpenenvArgs),
    /// Pretty-print one trial record.
    Pp(pp_cmd::PpArgs),
    /// Re-grade saved trial records without model calls (replays their tool calls).
    RunTest(run_test_cmd::RunTestArgs),
    /// Aggregate trial records: pass@1, pass@k, pass^k, per domain.
    Agg(metrics_cmds::AggArgs),
    /// Write a self-contained HTML report with charts and tables.
    Report(metrics_cmds::ReportArgs),
    /// Show one attempt: conversation, tool calls and results, database changes vs golden.
    Show(metrics_cmds::ShowArgs),
    /// Compare a baseline and a candidate run task by task (Bayesian).
    Sbs(metrics_cmds::SbsArgs),
    /// Browse runs in the browser: runs, tasks x attempts, each attempt's conversation and
    /// state diff, two runs compared; follows files still being written.
    View(view_cmd::ViewArgs),
    /// Play a task in the terminal: as the user, as the agent, or watching, with its
    /// effects and checks at hand.
    Tui(Box<tui_cmd::TuiArgs>),
    /// Performance figures beside the reference's (replay, sessions, tool calls, memory).
    Bench(bench_cmd::BenchArgs),
    /// Print the system messages and tool list the agent gets for a task, as JSON.
    Tools(tools_cmd::ToolsArgs),
    /// Check the benchmark itself: golden and do-nothing trajectories, mutants of the golden
    /// calls (blind spots of the check), clock dependence, look-alike tasks, rubric notes.
    Audit(audit_cmd::AuditArgs),
    /// Print a shell completion script for tb on stdout.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print tb's man page (roff) on stdout.
    Man,
}

/// Each command's examples, shown after its help (`tb help <command>`, the man page).
const EXAMPLES: &[(&str, &[&str])] = &[
    (
        "validate",
        &[
            "tb validate --data examples/brightside --test-list examples/brightside/testlist.yaml",
            "tb validate --test-list $THINKINGBOX_DATA/releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml",
        ],
    ),
    (
        "replay",
        &["tb replay --now 2026-11-30T12:00:00Z tb-bench-v1/traces/*.jsonl"],
    ),
    (
        "infer",
        &[
            "tb infer --data examples/brightside --test-list examples/brightside/testlist.yaml --agent golden --repeat 3 --output out/brightside.jsonl",
            "tb infer -c examples/configs/vllm.yaml --agent think --test-list $LIST --repeat 4 --output out/run.jsonl",
        ],
    ),
    (
        "verify",
        &["tb verify out/run.jsonl --test-list $LIST --repeat 4"],
    ),
    (
        "merge",
        &["tb merge shard-0.jsonl shard-1.jsonl -o out/run.jsonl"],
    ),
    (
        "campaign",
        &[
            "tb campaign plan --scheduler slurm --shards 16 --output runs/m -- -c config.yaml --agent think --test-list $LIST --repeat 20",
            "tb campaign status runs/m",
        ],
    ),
    (
        "mcp-start",
        &["tb mcp-start --data examples/brightside --port 7111 --token-file token.txt"],
    ),
    (
        "mcp-stdio",
        &[
            "tb mcp-stdio --data examples/brightside --task brightside_retail.py:test_bs001_cancel_unshipped_order",
        ],
    ),
    (
        "openenv",
        &["tb openenv -c config.yaml --test-list $LIST --port 8000"],
    ),
    ("pp", &["tb pp out/brightside.jsonl --line 1"]),
    (
        "run-test",
        &["tb run-test out/brightside.jsonl --data examples/brightside"],
    ),
    (
        "agg",
        &[
            "tb agg out/brightside.jsonl",
            "tb agg out/a.jsonl out/b.jsonl --prices examples/prices.yaml",
        ],
    ),
    (
        "report",
        &["tb report out/a.jsonl out/b.jsonl --output report.html"],
    ),
    (
        "show",
        &[
            "tb show out/brightside.jsonl --uid brightside_retail.py:test_bs001_cancel_unshipped_order",
        ],
    ),
    (
        "sbs",
        &["tb sbs --baseline out/a.jsonl --candidate out/b.jsonl"],
    ),
    (
        "view",
        &[
            "tb view out/golden.jsonl out/noop.jsonl --open",
            "tb view runs/m/merged.jsonl --prices examples/prices.yaml --port 9000",
        ],
    ),
    (
        "tui",
        &[
            "tb tui --data examples/brightside -n brightside_retail.py:test_bs001_cancel_unshipped_order --play agent",
            "tb tui -c config.yaml -n FILE.py:TEST --play watch",
        ],
    ),
    ("bench", &["tb bench", "tb bench --json --startup-only"]),
    (
        "tools",
        &[
            "tb tools --task sandbox_consulting_group1.py:test_csa_001 --api anthropic",
            "tb tools --export surface > surface.json",
        ],
    ),
    (
        "audit",
        &[
            "tb audit --data examples/brightside --test-list examples/brightside/testlist.yaml",
            "tb audit --format html --output audit.html",
        ],
    ),
    (
        "completions",
        &[
            "tb completions bash > ~/.local/share/bash-completion/completions/tb",
            "tb completions zsh > ~/.zfunc/_tb",
            "tb completions fish > ~/.config/fish/completions/tb.fish",
        ],
    ),
    ("man", &["tb man > tb.1 && man ./tb.1"]),
];

/// The command line: [`Cli`] with each command's [`EXAMPLES`] after its help.
fn command() -> clap::Command {
    EXAMPLES
        .iter()
        .fold(Cli::command(), |cli, (name, examples)| {
            cli.mut_subcommand(name, |c| {
                c.after_help(format!("Examples:\n  {}", examples.join("\n  ")))
            })
        })
}

/// mimalloc instead of glibc malloc: sessions, tool calls and the judge allocate and free many
/// small rows and strings; see docs/performance.md.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::from_arg_matches(&command().get_matches()).unwrap_or_else(|e| e.exit());
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_new(&cli.log)
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        // Every log line leaves the process redacted (registered secrets, URL userinfo).
        .with_writer(tb_llm::redact::RedactingLine::default)
        .init();
    install_broken_pipe_hook();
    let run = std::panic::AssertUnwindSafe(|| dispatch(&cli));
    let result = match std::panic::catch_unwind(run) {
        Ok(result) => result,
        // The reader of stdout went away (`tb replay | head`): not an error of tb. Unwinding
        // has closed (and flushed) what was open; stop with the shell's status for SIGPIPE.
        Err(payload) if is_broken_pipe(payload.as_ref()) => return ExitCode::from(141),
        Err(payload) => std::panic::resume_unwind(payload),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // Errors quote file contents and record fields: control characters are shown.
            let report = error_report(&e);
            eprint!(
                "{}",
                tb_core::text::printable(&tb_llm::redact::redact(&report))
            );
            ExitCode::from(2)
        }
    }
}

/// Runs the command `cli` names.
fn dispatch(cli: &Cli) -> anyhow::Result<ExitCode> {
    match &cli.command {
        Command::Validate(a) => validate_cmd::run(a),
        Command::Replay(a) => replay_cmd::run(a),
        Command::Infer(a) => infer_cmd::run(a),
        Command::Verify(a) => verify_cmd::run(a),
        Command::Merge(a) => merge_cmd::run(a),
        Command::Campaign(a) => campaign_cmd::run(a),
        Command::Openenv(a) => openenv_cmd::run(a),
        Command::Pp(a) => pp_cmd::run(a).map(|()| ExitCode::SUCCESS),
        Command::RunTest(a) => run_test_cmd::run(a),
        Command::McpStart(a) => mcp_cmd::start(a),
        Command::McpStdio(a) => mcp_cmd::stdio(a),
        Command::Agg(a) => metrics_cmds::agg(a).map(|()| ExitCode::SUCCESS),
        Command::Report(a) => metrics_cmds::report(a).map(|()| ExitCode::SUCCESS),
        Command::Show(a) => metrics_cmds::show(a).map(|()| ExitCode::SUCCESS),
        Command::Sbs(a) => metrics_cmds::sbs(a).map(|()| ExitCode::SUCCESS),
        Command::View(a) => view_cmd::run(a),
        Command::Bench(a) => bench_cmd::run(a),
        Command::Tui(a) => tui_cmd::run(a),
        Command::Tools(a) => tools_cmd::run(a),
        Command::Audit(a) => audit_cmd::run(a),
        Command::Completions { shell } => {
            let mut cmd = command();
            clap_complete::generate(*shell, &mut cmd, "tb", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
        Command::Man => {
            match clap_mangen::Man::new(command()).render(&mut std::io::stdout()) {
                Ok(()) => Ok(ExitCode::SUCCESS),
                // The reader went away (`tb man | head`), as for every other command.
                Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(ExitCode::from(141)),
                Err(e) => Err(anyhow::Error::new(e).context("writing the man page")),
            }
        }
    }
}

/// `println!` panics when stdout is a pipe whose reader has gone (Rust ignores SIGPIPE). Such a
/// panic prints nothing; every other panic is reported as usual.
fn install_broken_pipe_hook() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !is_broken_pipe(info.payload()) {
            report(info);
        }
    }));
}

/// Whether a panic is `print!`'s on a closed pipe (std's message: "failed printing to stdout:
/// Broken pipe (os error 32)").
fn is_broken_pipe(payload: &(dyn std::any::Any + Send)) -> bool {
    let text = payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("");
    text.starts_with("failed printing to std") && text.contains("Broken pipe")
}

/// The error as `tb` prints it: the top message, then one `caused by:` line per cause
/// (each error's text names only itself; its cause comes from `source()`).
pub(crate) fn error_report(e: &anyhow::Error) -> String {
    let mut out = format!("error: {e}\n");
    for cause in e.chain().skip(1) {
        out.push_str(&format!("  caused by: {cause}\n"));
    }
    out
}

/// The error and its causes on one line (`top: cause: cause`), for lists of problems.
pub(crate) fn error_text(e: &anyhow::Error) -> String {
    tb_core::error_text(e.as_ref())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every command has examples, and every example names a command there is.
    #[test]
    fn every_command_has_examples() {
        let cmd = command();
        cmd.clone().debug_assert();
        for sub in cmd.get_subcommands().filter(|c| c.get_name() != "help") {
            let help = sub.get_after_help().map(ToString::to_string);
            assert!(
                help.is_some_and(|h| h.starts_with("Examples:\n  tb ")),
                "{} has no examples",
                sub.get_name()
            );
        }
        for (name, _) in EXAMPLES {
            assert!(cmd.find_subcommand(name).is_some(), "no command {name}");
        }
    }

    /// A dataset file that cannot be read, under a command's context: three lines, each
    /// cause once.
    #[test]
    fn error_chain_snapshot() {
        let io = std::io::Error::new(std::io::ErrorKind::NotFound, "No such file or directory");
        let e = anyhow::Error::new(tb_dataset::DatasetError::Io {
            path: "data/dataset/agents/think.yaml".into(),
            source: io,
        })
        .context("opening the data root data");
        insta::assert_snapshot!(error_report(&e), @r"
        error: opening the data root data
          caused by: data/dataset/agents/think.yaml: cannot read
          caused by: No such file or directory
        ");
        assert_eq!(
            error_text(&e),
            "opening the data root data: data/dataset/agents/think.yaml: cannot read: No such file or directory"
        );
    }
}
