//! Runs the airline test bodies on the full initial airline state, for profiling one body at
//! a time (callgrind's `--toggle-collect='tb_pyeval::TestFile::run_shared'` and
//! `--dump-after=` the same function give one count per body run).
//!
//!   TB_SHARED=/work/shared cargo run --release -p tb-pyeval --example body_profile -- [ROUNDS] [INDEX]
//!
//! Prints, per recorded airline context (the 44 traces of `tb-bench-v1/airline`, effects
//! replaced by the initial state as in the `bodies` bench), its test and the median time of
//! ROUNDS runs (default 5); with INDEX only that context runs.

use std::sync::Arc;
use std::time::Instant;

use serde_json::{Map, Value};
use tb_pyeval::{FixedJudge, TestFile};

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(5);
    let only: Option<usize> = args.next().and_then(|a| a.parse().ok());
    let shared =
        std::path::PathBuf::from(std::env::var("TB_SHARED").unwrap_or_else(|_| "../shared".into()));
    let file =
        TestFile::read(&shared.join("thinkingbox-data/dataset/test_case/airline_tau_bench.py"))
            .expect("airline test file (set TB_SHARED)");
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(shared.join("tb-bench-v1/airline/initial_effects.json.gz"))
        .output()
        .expect("gzip");
    let initial: Value = serde_json::from_slice(&out.stdout).expect("initial effects");
    let text =
        std::fs::read_to_string(shared.join("tb-bench-v1/airline/traces.jsonl")).expect("traces");
    let mut contexts = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let r: Value = serde_json::from_str(line).expect("trace line");
        let mut effects = Map::new();
        effects.insert("airline_tau_bench".into(), initial.clone());
        let mut ctx = Map::new();
        ctx.insert("response".into(), r["response"].clone());
        ctx.insert("effects".into(), Value::Object(effects));
        ctx.insert("tool_calls".into(), r["tool_calls_seen_by_test"].clone());
        ctx.insert("tool_direct_responses".into(), Value::Array(Vec::new()));
        let id = r["id"].as_str().unwrap_or_default();
        let test = id.split_once(':').map_or(id, |(_, t)| t).to_string();
        contexts.push((test, Arc::new(Value::Object(ctx))));
    }
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
