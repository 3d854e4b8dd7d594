//! `tb tui`: play a task in the terminal, as the user (a model is the agent), as the agent
//! (you call the tools and answer the simulated user) or watching (a model agent and the
//! simulated user, step by step), with the task's effects and checks at hand.
//!
//! The parts: [`app`] is a state machine fed with events (keys, pastes, the progress and
//! results of [`jobs`]) that never touches the terminal; [`view`] draws it; [`term`] runs it
//! in a real terminal (raw mode, alternate screen, restored on quit and on panic). The work
//! is the project's own: sessions, the episode loop and the simulated user from `tb-eval`,
//! effects from the sandbox's stable diff and the state judge, verdicts from the grader
//! `tb infer` uses, records in the campaign's record format. The
//! [`tb_eval::tools::EpisodeSession`] played on is in process or remote (a task's external tool
//! servers from a servers.yaml, whose effects and verdicts are the servers' own).

pub mod app;
pub mod effects;
pub mod input;
pub mod jobs;
pub mod term;
pub mod view;

pub use app::{App, Play, Setup};
pub use term::run;
