//! Records in the reference's own writer shape (DecodeResult fields only): our aggregation
//! gives the numbers the reference's formulas give. Expected values come from
//! `tests/fixtures/gen_reference_shape.py`, which writes the fixture and evaluates the
//! reference formulas (framework.md section 8) in Python.

use tb_metrics::agg::{summarize, task_counts};
use tb_metrics::format::reference_lines;

fn fixture() -> tb_metrics::Run {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/reference_shape.jsonl");
    tb_metrics::read_run(&p).expect("fixture reads")
}

#[test]
fn same_numbers_as_the_reference_formulas() {
    let run = fixture();
    assert_eq!(run.attempts.len(), 30);
    assert!(
        run.attempts
            .iter()
            .all(|a| a.verdict.is_none() && a.usage_by_role.is_none())
    );
    let tasks = task_counts(&run.attempts);
    let s = summarize(&tasks);
    assert_eq!((s.tasks, s.attempts, s.passed), (6, 30, 12));
    // One decode error and one test error: errors in the reference's sense, and system errors.
    assert_eq!((s.errors, s.system_errors), (2, 2));
    assert_eq!(s.mean_pass, 0.4);
    assert!(
        (s.mean_pass_ci[0] - 0.240_485_915_614_538_66).abs() < 1e-12,
        "{:?}",
        s.mean_pass_ci
    );
    assert!(
        (s.mean_pass_ci[1] - 0.577_799_730_966_293_8).abs() < 1e-12,
        "{:?}",
        s.mean_pass_ci
    );
    // Same operations in the same order as the reference: equal to the last bit.
    assert_eq!(
        s.pass_at.0,
        vec![(1, 0.400_000_000_000_000_1), (5, 0.833_333_333_333_333_4)]
    );
    assert_eq!(
        s.pass_hat.0,
        vec![(1, 0.400_000_000_000_000_1), (5, 0.181_440_000_000_000_05)]
    );
    assert!(!s.reference_omits_pass_k);
    assert_eq!(
        reference_lines(&s),
        "Number of tests: 6\nRuns per test: 5\nTotal runs: 30\nMean per-sample accuracy: 0.40 (95% CI: 0.24-0.58)\nPass@k:\n  pass@1: 0.40\n  pass@5: 0.83\nPass^k:\n  pass^1: 0.40\n  pass^5: 0.18\n"
    );
}

#[test]
fn unequal_counts_drop_the_reference_pass_k_lines_but_not_ours() {
    let run = fixture();
    // Drop the last record: one task now has 4 attempts.
    let mut attempts = run.attempts.clone();
    attempts.pop();
    let s = summarize(&task_counts(&attempts));
    assert!(s.reference_omits_pass_k);
    assert!(!reference_lines(&s).contains("Pass@k"));
    assert_eq!(s.attempts_per_task.min, 4);
    assert_eq!(s.pass_at.0.len(), 1, "ours: k up to the fewest attempts");
}

/// The figures of a model's JSON report, also in each of its domains.
const FIGURES: &[&str] = &[
    "tasks",
    "attempts",
    "mean_pass",
    "pass_at",
    "pass_hat",
    "pass_all_unbiased",
    "observed_all",
    "never_solved",
    "retention",
    "pass1_se",
    "system_errors",
];

#[test]
fn json_has_the_documented_keys() {
    let run = fixture();
    let reports = tb_metrics::model_reports(std::slice::from_ref(&run), None);
    let v = tb_metrics::format::to_json(&reports);
    let o = v[0].as_object().unwrap();
    let whole = ["file", "model", "per_domain", "failures"];
    for k in whole.iter().chain(FIGURES) {
        assert!(o.contains_key(*k), "missing {k}");
    }
    assert!(!o.contains_key("cost"));
    assert_eq!(v[0]["model"], "reference_shape");
    assert_eq!(v[0]["pass_at"]["5"], 0.833_333_333_333_333_4);
    let d = v[0]["per_domain"]["sandbox_neobank_support_v1"]
        .as_object()
        .unwrap();
    for k in FIGURES {
        assert!(d.contains_key(*k), "per_domain missing {k}");
    }
    assert_eq!(d["system_errors"], 2);
}
