//! The airline test file and its recorded contexts with the full initial airline state as
//! effects (the 44 traces of `tb-bench-v1/airline`), shared by the `bodies` bench and the
//! `body_profile` example.

use std::path::Path;
use std::sync::Arc;

use serde_json::{Map, Value};
use tb_pyeval::TestFile;

/// The airline test file and, per recorded context, its test name and the context with
/// the trace's effects replaced by the initial state (the noop case: the bodies read the full
/// 500-user, 2,000-reservation effects, the heaviest case).
pub fn contexts(shared: &Path) -> (TestFile, Vec<(String, Arc<Value>)>) {
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
    (file, contexts)
}
