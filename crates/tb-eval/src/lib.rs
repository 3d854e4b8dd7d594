//! Sessions, episodes, judges, offline agents, and replay of recorded reference traces.
//!
//! Data flows one way: a [`tb_core::Task`] opens a [`root::TaskSession`], an agent runs an
//! episode in it ([`attempt`]), the [`judge::StateJudge`] compares its final state with the
//! golden one and [`grade`] gives the verdict and test result, and [`record`] holds the
//! [`tb_core::TrialRecord`] they fill; [`run`] is what the attempts of a run share.

pub mod attempt;
pub mod episode;
pub mod grade;
pub mod judge;
pub mod offline;
pub mod prompts;
pub mod pybody;
pub mod record;
pub mod regrade;
pub mod replay;
pub mod root;
pub mod rubric;
pub mod run;
pub mod script_replay;
pub mod surface;
pub mod surface_cache;
pub mod tools;
pub mod user_sim;
pub mod view;
