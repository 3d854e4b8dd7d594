//! Runs the airline test bodies on the full initial airline state, for profiling one body at
//! a time (callgrind's `--toggle-collect='tb_pyeval::TestFile::run_shared'` and
//! `--dump-after=` the same function give one count per body run).
//!
//!   TB_SHARED=/work/shared cargo run --release -p tb-pyeval --example body_profile -- [ROUNDS] [INDEX]
//!
//! Prints, per recorded airline context (the 44 traces of `tb-bench-v1/airline`, effects
//! replaced by the initial state as in the `bodies` bench), its test and the median time of
//! ROUNDS runs (default 5); with INDEX only that context runs.

use std::time::Instant;

use tb_pyeval::FixedJudge;

#[path = "../benches/common/airline.rs"]
mod airline;

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let only: Option<usize> = args.next().and_then(|a| a.parse().ok());
    let shared =
        std::path::PathBuf::from(std::env::var("TB_SHARED").unwrap_or_else(|_| "../shared".into()));
    let (file, contexts) = airline::contexts(&shared);
    for (i, (test, ctx)) in contexts.iter().enumerate() {
        if only.is_some_and(|o| o != i) {
            continue;
        }
        let mut times = Vec::new();
        let mut verdict = String::new();
        for _ in 0..rounds.max(1) {
            let mut judge = FixedJudge::new(true);
            let t0 = Instant::now();
            let outcome = file.run_shared(test, ctx, &mut judge).expect("run");
            times.push(t0.elapsed().as_secs_f64() * 1e6);
            verdict = format!("{} {}", outcome.passed, outcome.message);
        }
        times.sort_by(f64::total_cmp);
        let median = times[times.len() / 2];
        let verdict: String = verdict.chars().take(60).collect();
        println!("{i:2} {median:10.1} us  {test}  {verdict}");
    }
}
