//! Sessions on the real initial data for the unit tests.

pub use crate::testdata::{call, err};
use serde_json::Value;
use tb_sandbox::{Clock, Session};

/// A fresh neobank session on the initial data with `patch` applied (panics without the data:
/// call it from `#[tb_test_support::data_test]`s only).
pub fn session(patch: Value) -> Session {
    crate::testdata::session(super::SERVER, patch, Clock::default())
}
