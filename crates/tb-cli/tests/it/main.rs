//! tb-cli's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod audit;
mod broken_pipe;
mod campaign;
mod campaign_plan;
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
