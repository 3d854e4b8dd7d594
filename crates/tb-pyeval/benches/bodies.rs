//! Test-body evaluation time: every airline test body (21 tasks, 44 recorded contexts, the
//! judge answering yes and no) and the four setup-check files, evaluated in-process.
//! The reference runs each test in a fresh subprocess (`TestScriptSubprocess`), about 1.7 s per
//! test on this machine class.
//!
//!   TB_SHARED=/path/to/shared cargo bench -p tb-pyeval --bench bodies

use std::time::Instant;

use serde_json::{Map, Value};
use tb_pyeval::{FixedJudge, TestFile};

const REFERENCE_SUBPROCESS_S: f64 = 1.7;

fn main() {
    let shared = std::env::var("TB_SHARED").unwrap_or_else(|_| "../shared".into());
    let shared = std::path::PathBuf::from(shared);
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
    // The noop contexts (effects equal the initial ones): the bodies then read the full
    // 500-user, 2,000-reservation effects, the heaviest case. Shared (`run_shared`): the
    // effects are read in place, an entry converted when the body reads it.
    let mut contexts = Vec::new();
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        let mut effects = Map::new();
        effects.insert("airline_tau_bench".into(), initial.clone());
        let mut ctx = Map::new();
        ctx.insert("response".into(), r["response"].clone());
        ctx.insert("effects".into(), Value::Object(effects));
        ctx.insert("tool_calls".into(), r["tool_calls_seen_by_test"].clone());
        let test = r["id"]
            .as_str()
            .unwrap()
            .split_once(':')
            .unwrap()
            .1
            .to_string();
        contexts.push((test, std::sync::Arc::new(Value::Object(ctx))));
    }
    let rounds = 5;
    let t0 = Instant::now();
    let mut runs = 0u32;
    for _ in 0..rounds {
        for (test, ctx) in &contexts {
            let mut judge = FixedJudge::new(true);
            let outcome = file.run_shared(test, ctx, &mut judge).unwrap();
            std::hint::black_box(outcome);
            runs += 1;
        }
    }
    let per = t0.elapsed().as_secs_f64() / f64::from(runs);
    // The same bodies on empty effects: the cost of the body alone, without building `x`.
    let small: Vec<(String, std::sync::Arc<Value>)> = contexts
        .iter()
        .map(|(test, ctx)| {
            let mut small = Value::clone(ctx);
            small["effects"] =
                serde_json::json!({"airline_tau_bench": {"reservations": {}, "users": {}}});
            (test.clone(), std::sync::Arc::new(small))
        })
        .collect();
    let t1 = Instant::now();
    let mut small_runs = 0u32;
    for _ in 0..rounds {
        for (test, ctx) in &small {
            let mut judge = FixedJudge::new(true);
            std::hint::black_box(file.run_shared(test, ctx, &mut judge).unwrap());
            small_runs += 1;
        }
    }
    println!(
        "airline test body on empty effects, per test: {:.1} µs",
        t1.elapsed().as_secs_f64() / f64::from(small_runs) * 1e6
    );
    println!(
        "airline test body (context with the full effects + body), per test: {:.1} µs over {runs} runs; reference subprocess per test ~{REFERENCE_SUBPROCESS_S} s ({:.0}x)",
        per * 1e6,
        REFERENCE_SUBPROCESS_S / per
    );
}
