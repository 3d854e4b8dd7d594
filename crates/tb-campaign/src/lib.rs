//! Campaigns: many attempts of tb-eval's attempt loop planned, scheduled, run, resumed, sharded
//! and merged into trial-record files, with the run's provenance.
//!
//! - the campaign itself (this module's items): the plan of attempt keys, the output and
//!   sidecar files, running (offline or with models), resuming and sharding;
//! - [`schedule`]: the order attempts start in;
//! - [`store`]: reading record files back (outcomes, torn lines, merging shards);
//! - [`provenance`]: the run manifest and its hashes (canonical JSON).

mod campaign;
pub mod provenance;
pub mod schedule;
pub mod store;

pub use campaign::*;
