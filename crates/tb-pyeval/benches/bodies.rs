//! Test-body evaluation time: every airline test body (21 tasks, 44 recorded contexts, the
//! judge answering yes and no) and the four setup-check files, evaluated in-process.
//! The reference runs each test in a fresh subprocess (`TestScriptSubprocess`), about 1.7 s per
//! test on this machine class.
//!
//!   TB_SHARED=/path/to/shared cargo bench -p tb-pyeval --bench bodies

use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tb_pyeval::{FixedJudge, TestFile};

#[path = "common/airline.rs"]
mod airline;

const REFERENCE_SUBPROCESS_S: f64 = 1.7;

fn main() {
    let shared = std::env::var("TB_SHARED").unwrap_or_else(|_| "../shared".into());
    let shared = std::path::PathBuf::from(shared);
    // Shared (`run_shared`): the effects are read in place, an entry converted when the body
    // reads it.
    let (file, contexts) = airline::contexts(&shared);
    let rounds = 5;
    let (per, runs) = time_bodies(&file, &contexts, rounds);
    // The same bodies on empty effects: the cost of the body alone, without building `x`.
    let small: Vec<(String, Arc<Value>)> = contexts
        .iter()
        .map(|(test, ctx)| {
            let mut small = Value::clone(ctx);
            small["effects"] =
                serde_json::json!({"airline_tau_bench": {"reservations": {}, "users": {}}});
            (test.clone(), Arc::new(small))
        })
        .collect();
    let (small_per, _) = time_bodies(&file, &small, rounds);
    println!(
        "airline test body on empty effects, per test: {:.1} µs",
        small_per * 1e6
    );
    println!(
        "airline test body (context with the full effects + body), per test: {:.1} µs over {runs} runs; reference subprocess per test ~{REFERENCE_SUBPROCESS_S} s ({:.0}x)",
        per * 1e6,
        REFERENCE_SUBPROCESS_S / per
    );
}

/// Runs every body `rounds` times: the mean time per run in seconds, and the number of runs.
fn time_bodies(file: &TestFile, contexts: &[(String, Arc<Value>)], rounds: u32) -> (f64, u32) {
    let t0 = Instant::now();
    let mut runs = 0u32;
    for _ in 0..rounds {
        for (test, ctx) in contexts {
            let mut judge = FixedJudge::new(true);
            std::hint::black_box(file.run_shared(test, ctx, &mut judge).unwrap());
            runs += 1;
        }
    }
    (t0.elapsed().as_secs_f64() / f64::from(runs), runs)
}
