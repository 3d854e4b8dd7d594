//! tb-pyeval's integration tests: the recorded reference verdicts of every published test file
//! with Python bodies (the Airline Tau-Bench release and the four setup-check files), replayed
//! through the evaluator with the judge answering yes and then no; plus unsupported-construct
//! errors on small files of our own.

mod recorded;
mod unsupported;

use std::path::PathBuf;

/// `../shared` beside the workspace, or `$TB_SHARED`. None (with a loud message) when missing
/// outside CI; a panic in CI.
pub fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("TB_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    if p.join("tb-bench-v1/airline").is_dir() && p.join("thinkingbox-data/dataset").is_dir() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "benchmark data not found at {} (set TB_SHARED); CI needs it",
        p.display()
    );
    eprintln!(
        "SKIPPED: benchmark data not found at {}; set TB_SHARED",
        p.display()
    );
    None
}
