//! The reference's recorded verdicts (`tb-bench-v1/airline`, `tb-bench-v1/tools-servers`),
//! reproduced by running the published test bodies on the recorded contexts.

use std::path::Path;

use serde_json::{Map, Value};
use tb_pyeval::{FixedJudge, TestFile};

/// `initial_effects.json.gz`, decompressed with the system's gzip.
fn initial_effects(shared: &Path) -> Value {
    let out = std::process::Command::new("gzip")
        .arg("-dc")
        .arg(shared.join("tb-bench-v1/airline/initial_effects.json.gz"))
        .output()
        .expect("gzip runs");
    assert!(out.status.success(), "gzip -dc failed");
    serde_json::from_slice(&out.stdout).expect("initial effects parse")
}

/// Applies a recorded `effects_diff` (removed, changed in place, added at the end).
fn apply_diff(initial: &Value, diff: &Value) -> Value {
    let mut out = initial.clone();
    let Some(diff) = diff.as_object() else {
        return out;
    };
    for (top, d) in diff {
        let Some(target) = out.get_mut(top) else {
            continue;
        };
        if let Some(rep) = d.get("replace") {
            *target = rep.clone();
            continue;
        }
        let map = target
            .as_object_mut()
            .expect("top-level effects are objects");
        if let Some(removed) = d.get("removed").and_then(Value::as_array) {
            for k in removed {
                map.shift_remove(k.as_str().unwrap());
            }
        }
        if let Some(changed) = d.get("changed").and_then(Value::as_object) {
            for (k, v) in changed {
                map.insert(k.clone(), v.clone());
            }
        }
        if let Some(added) = d.get("added").and_then(Value::as_object) {
            for (k, v) in added {
                map.insert(k.clone(), v.clone());
            }
        }
        assert!(
            d.get("order").is_none(),
            "order entries are not expected in these files"
        );
    }
    out
}

fn context(record: &Value, effects: Value) -> Value {
    let mut ctx = Map::new();
    ctx.insert("response".into(), record["response"].clone());
    ctx.insert("effects".into(), effects);
    ctx.insert(
        "tool_calls".into(),
        record["tool_calls_seen_by_test"].clone(),
    );
    ctx.insert(
        "tool_direct_responses".into(),
        record
            .get("tool_direct_responses")
            .cloned()
            .unwrap_or_else(|| Value::Array(Vec::new())),
    );
    Value::Object(ctx)
}

/// Python set reprs may list strings in another order (their hashes are salted): compare such
/// messages as multisets of characters after the common prefix, which is what the reference's
/// `message_set_order_varies` flag allows.
fn same_message(ours: &str, theirs: &str, set_order_varies: bool) -> bool {
    if ours == theirs {
        return true;
    }
    if !set_order_varies {
        return false;
    }
    let mut a: Vec<char> = ours.chars().collect();
    let mut b: Vec<char> = theirs.chars().collect();
    a.sort_unstable();
    b.sort_unstable();
    a == b
}

#[derive(Default)]
struct Tally {
    records: usize,
    verdicts: usize,
    matched: usize,
    mismatches: Vec<String>,
}

impl Tally {
    /// Prints how many verdicts of `what` matched; asserts that there were `records` records
    /// and no mismatch.
    fn report(&self, what: &str, records: usize) {
        eprintln!(
            "{what}: {}/{} verdicts match over {} records",
            self.matched, self.verdicts, self.records
        );
        assert_eq!(self.records, records);
        assert!(self.mismatches.is_empty(), "{}", self.mismatches.join("\n"));
    }
}

fn check_record(file: &TestFile, record: &Value, ctx: &Value, tally: &mut Tally) {
    let id = record["id"].as_str().unwrap();
    let test = id.split_once(':').unwrap().1;
    tally.records += 1;
    for (answer, key) in [(true, "verdict_judge_yes"), (false, "verdict_judge_no")] {
        let want = &record[key];
        let mut judge = FixedJudge::new(answer);
        let got = file.run(test, ctx, &mut judge).unwrap();
        tally.verdicts += 1;
        let varies = want
            .get("message_set_order_varies")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let want_calls = want["judge_calls"].as_array().map_or(0, Vec::len)
            + want
                .get("judge_other_calls")
                .and_then(Value::as_array)
                .map_or(0, Vec::len);
        let ok = got.passed == want["passed"].as_bool().unwrap()
            && got.system_error == want["system_error"].as_bool().unwrap()
            && same_message(&got.message, want["message"].as_str().unwrap(), varies)
            && judge.calls.len() == want_calls;
        if ok {
            tally.matched += 1;
        } else {
            tally.mismatches.push(format!(
                "{id} [{}] {key}: want passed={} system_error={} message={:?} judge_calls={want_calls}; got passed={} system_error={} message={:?} judge_calls={} (line {:?})",
                record["kind"], want["passed"], want["system_error"], want["message"], got.passed, got.system_error, got.message, judge.calls.len(), got.lineno
            ));
        }
    }
}

#[tb_test_support::shared_test]
#[test]
fn airline_recorded_verdicts_are_reproduced() {
    let shared = crate::shared();
    let data = shared.join("thinkingbox-data/dataset/test_case/airline_tau_bench.py");
    let file = TestFile::read(&data).unwrap();
    file.check().unwrap();
    let initial = initial_effects(&shared);
    let mut tally = Tally::default();
    let text = std::fs::read_to_string(shared.join("tb-bench-v1/airline/traces.jsonl")).unwrap();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let effects = apply_diff(&initial, &record["effects_diff"]);
        let mut all = Map::new();
        all.insert("airline_tau_bench".into(), effects);
        let ctx = context(&record, Value::Object(all));
        check_record(&file, &record, &ctx, &mut tally);
    }
    tally.report("airline", 44);
}

#[tb_test_support::shared_test]
#[test]
fn setup_check_recorded_verdicts_are_reproduced() {
    let shared = crate::shared();
    let mut tally = Tally::default();
    for stem in [
        "banking",
        "banking_email",
        "email_system_org",
        "mcs_defaults",
    ] {
        let path = shared.join(format!("thinkingbox-data/dataset/test_case/{stem}.py"));
        let file = TestFile::read(&path).unwrap();
        file.check().unwrap();
        let text = std::fs::read_to_string(
            shared.join(format!("tb-bench-v1/tools-servers/traces/{stem}.jsonl")),
        )
        .unwrap();
        for line in text.lines() {
            let record: Value = serde_json::from_str(line).unwrap();
            let ctx = context(&record, record["effects"].clone());
            check_record(&file, &record, &ctx, &mut tally);
        }
    }
    tally.report("setup checks", 42);
}
