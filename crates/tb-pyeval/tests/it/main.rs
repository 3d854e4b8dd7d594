//! tb-pyeval's integration tests: the recorded reference verdicts of every published test file
//! with Python bodies (the Airline Tau-Bench release and the four setup-check files), replayed
//! through the evaluator with the judge answering yes and then no; plus unsupported-construct
//! errors on small files of our own; hostile bodies (deep, slow, large) in their budgets.

mod budgets;
mod cpython;
mod recorded;
mod unsupported;

use std::path::PathBuf;

/// The shared folder (`$TB_SHARED`, else `shared` beside the workspace); panics when missing,
/// so call it from `#[tb_test_support::shared_test]`s only.
pub fn shared() -> PathBuf {
    tb_test_support::shared()
}
