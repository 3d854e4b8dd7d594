//! Sessions, episodes, judges, offline agents, and replay of recorded reference traces.
//!
//! Data flows one way: a [`tb_core::Task`] opens a [`sandbox::TaskSession`], an agent runs an
//! episode in it, the [`judge::StateJudge`] compares its final state with the golden one, and
//! [`infer`] turns all of it into a [`tb_core::TrialRecord`].

pub mod episode;
pub mod infer;
pub mod judge;
pub mod offline;
pub mod prompts;
pub mod pybody;
pub mod regrade;
pub mod replay;
pub mod rubric;
pub mod sandbox;
pub mod script_replay;
pub mod surface;
pub mod surface_cache;
pub mod tools;
pub mod user_sim;
pub mod view;
