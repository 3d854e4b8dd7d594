//! tb-cli's integration tests, one harness (one binary to build and link) with a module per
//! area.

/// The `tb` binary under test.
const TB: &str = env!("CARGO_BIN_EXE_tb");

/// `tb` with `args` ([`tb_test_support::tb`]): its exit code and its output.
fn tb(args: &[&str]) -> (i32, String) {
    tb_test_support::tb(TB, args, &[])
}

mod audit;
mod broken_pipe;
mod campaign;
mod campaign_plan;
mod common;
mod docs;
mod example;
mod external_servers;
mod external_sessions;
mod hostile_bodies;
mod reference_records;
mod reference_requests;
mod reply_cases;
mod secrets_and_auth;
mod slurm;
mod terminal_output;
mod tui_tmux;
mod usage;
mod validate_hostile;
