//! Side by side: per-task changes between a baseline run and a candidate run, with the
//! reference's Bayesian comparison.
//!
//! Per task, as the reference's `tb sbs`: the shown success rate is `passed / runs`; the
//! posteriors are Jeffreys Beta(0.5 + passed, 0.5 + n − passed) with `n = runs − errors`
//! (decode and test errors are removed here, unlike `tb agg`); tasks whose runs are all
//! errors on both sides are skipped; with `n = 0` on a side the probabilities are 0.
//! `P(p_cand > p_base)` is given twice: the reference's 200-point Gauss–Legendre value, and
//! an accurate one; `P(p_cand − p_base > lift)` is the deterministic integral that the
//! reference estimates by Monte Carlo.
//!
//! Ours: a task is *better* when the accurate `P(p_cand > p_base) ≥ 0.95`, *worse* when it
//! is `≤ 0.05`, else *no clear change*; the overall pass@1 change over the tasks in both runs
//! has a paired, task-clustered standard error `sd(d_i)/sqrt(T)`.

use crate::agg::{TaskCounts, task_counts};
use crate::format::{Table, f4};
use crate::load::Run;
use crate::stats;
use serde::Serialize;
use std::collections::HashMap;

/// One side's counts for a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Side {
    /// Records.
    pub runs: u64,
    /// Passes.
    pub passed: u64,
    /// Test results that are false.
    pub failed: u64,
    /// Decode errors, missing test results, test errors.
    pub errors: u64,
}

impl Side {
    fn of(t: &TaskCounts) -> Self {
        Side {
            runs: t.runs,
            passed: t.passed,
            failed: t.failed,
            errors: t.errors,
        }
    }
    /// `passed / runs` (0 for no runs), as the reference shows it.
    pub fn rate(&self) -> f64 {
        if self.runs > 0 {
            self.passed as f64 / self.runs as f64
        } else {
            0.0
        }
    }
    /// Runs without errors (the posterior's n).
    pub fn n(&self) -> u64 {
        self.runs.saturating_sub(self.errors)
    }
}

/// The change of one task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Change {
    /// `P(p_cand > p_base) ≥ 0.95`.
    Better,
    /// `P(p_cand > p_base) ≤ 0.05`.
    Worse,
    /// In between.
    NoClearChange,
}

/// One task compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskComparison {
    /// The task.
    pub uid: String,
    /// Baseline counts.
    pub baseline: Side,
    /// Candidate counts.
    pub candidate: Side,
    /// Jeffreys 95% interval of the baseline (over runs without errors).
    pub baseline_ci: [f64; 2],
    /// Jeffreys 95% interval of the candidate.
    pub candidate_ci: [f64; 2],
    /// Reference: `P(p_cand > p_base)` by 200-point Gauss–Legendre.
    pub prob_better_reference: f64,
    /// Ours: the same probability, accurately integrated.
    pub prob_better: f64,
    /// `P(p_cand − p_base > lift)`.
    pub prob_lift: f64,
    /// Ours: the verdict.
    pub change: Change,
}

/// The comparison of two runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SbsReport {
    /// The lift threshold (a fraction).
    pub lift: f64,
    /// Tasks in both runs (not skipped), most likely worse first.
    pub tasks: Vec<TaskComparison>,
    /// Tasks only in the baseline.
    pub only_baseline: Vec<String>,
    /// Tasks only in the candidate.
    pub only_candidate: Vec<String>,
    /// Tasks skipped because every run on both sides was an error.
    pub all_errors: Vec<String>,
    /// Tasks better / worse / no clear change.
    pub better: u64,
    /// See `better`.
    pub worse: u64,
    /// See `better`.
    pub no_clear_change: u64,
    /// pass@1 (errors as failures) of the baseline over the compared tasks.
    pub baseline_pass1: f64,
    /// Same for the candidate.
    pub candidate_pass1: f64,
    /// `candidate_pass1 − baseline_pass1`.
    pub delta: f64,
    /// Paired task-clustered standard error of `delta` (None for fewer than two tasks).
    pub delta_se: Option<f64>,
}

/// Compares two runs task by task.
pub fn compare(baseline: &Run, candidate: &Run, lift: f64) -> SbsReport {
    let base = task_counts(&baseline.attempts);
    let cand = task_counts(&candidate.attempts);
    let base_idx: HashMap<&str, &TaskCounts> = base.iter().map(|t| (t.uid.as_str(), t)).collect();
    let cand_uids: std::collections::HashSet<&str> = cand.iter().map(|t| t.uid.as_str()).collect();
    let mut out = SbsReport {
        lift,
        tasks: Vec::new(),
        only_baseline: base
            .iter()
            .filter(|t| !cand_uids.contains(t.uid.as_str()))
            .map(|t| t.uid.clone())
            .collect(),
        only_candidate: cand
            .iter()
            .filter(|t| !base_idx.contains_key(t.uid.as_str()))
            .map(|t| t.uid.clone())
            .collect(),
        all_errors: Vec::new(),
        better: 0,
        worse: 0,
        no_clear_change: 0,
        baseline_pass1: 0.0,
        candidate_pass1: 0.0,
        delta: 0.0,
        delta_se: None,
    };
    let mut diffs = Vec::new();
    let (mut pb, mut pc) = (Vec::new(), Vec::new());
    for c in &cand {
        let Some(b) = base_idx.get(c.uid.as_str()) else {
            continue;
        };
        let (sb, sc) = (Side::of(b), Side::of(c));
        if sc.errors == sc.runs && sb.errors == sb.runs {
            out.all_errors.push(c.uid.clone());
            continue;
        }
        let (na, nb) = (sc.n(), sb.n());
        let (prob_ref, prob, prob_lift, ci_b, ci_c) = if na == 0 || nb == 0 {
            (0.0, 0.0, 0.0, [0.0, 0.0], [0.0, 0.0])
        } else {
            let (bl, bh) = stats::jeffreys_interval(sb.passed, nb, 0.95);
            let (cl, ch) = stats::jeffreys_interval(sc.passed, na, 0.95);
            (
                stats::prob_a_gt_b_reference(sc.passed, na, sb.passed, nb),
                stats::prob_lift_gt(sc.passed, na, sb.passed, nb, 0.0),
                stats::prob_lift_gt(sc.passed, na, sb.passed, nb, lift),
                [bl, bh],
                [cl, ch],
            )
        };
        let change = if na == 0 || nb == 0 {
            Change::NoClearChange
        } else if prob >= 0.95 {
            Change::Better
        } else if prob <= 0.05 {
            Change::Worse
        } else {
            Change::NoClearChange
        };
        match change {
            Change::Better => out.better += 1,
            Change::Worse => out.worse += 1,
            Change::NoClearChange => out.no_clear_change += 1,
        }
        pb.push(sb.rate());
        pc.push(sc.rate());
        diffs.push(sc.rate() - sb.rate());
        out.tasks.push(TaskComparison {
            uid: c.uid.clone(),
            baseline: sb,
            candidate: sc,
            baseline_ci: ci_b,
            candidate_ci: ci_c,
            prob_better_reference: prob_ref,
            prob_better: prob,
            prob_lift,
            change,
        });
    }
    out.tasks.sort_by(|a, b| {
        a.prob_better
            .total_cmp(&b.prob_better)
            .then_with(|| a.uid.cmp(&b.uid))
    });
    out.baseline_pass1 = stats::mean(&pb).unwrap_or(0.0);
    out.candidate_pass1 = stats::mean(&pc).unwrap_or(0.0);
    out.delta = out.candidate_pass1 - out.baseline_pass1;
    out.delta_se = stats::sample_sd(&diffs).map(|sd| sd / (diffs.len() as f64).sqrt());
    out
}

/// The per-task table.
pub fn sbs_table(r: &SbsReport, baseline: &str, candidate: &str) -> Table {
    let header: Vec<String> = [
        "task".to_string(),
        "baseline run/pass/fail/err".into(),
        "candidate run/pass/fail/err".into(),
        "baseline success% [95% CI]".into(),
        "candidate success% [95% CI]".into(),
        "P(cand>base) ref".into(),
        "P(cand>base)".into(),
        format!("P(cand-base>{:.1}%)", r.lift * 100.0),
        "change".into(),
    ]
    .to_vec();
    let right = vec![false, true, true, true, true, true, true, true, false];
    let counts = |s: &Side| format!("{}/{}/{}/{}", s.runs, s.passed, s.failed, s.errors);
    let pct = |s: &Side, ci: [f64; 2]| {
        format!(
            "{:.2}% [{:.2}%, {:.2}%]",
            s.rate() * 100.0,
            ci[0] * 100.0,
            ci[1] * 100.0
        )
    };
    let rows = r
        .tasks
        .iter()
        .map(|t| {
            vec![
                t.uid.clone(),
                counts(&t.baseline),
                counts(&t.candidate),
                pct(&t.baseline, t.baseline_ci),
                pct(&t.candidate, t.candidate_ci),
                format!("{:.2}%", t.prob_better_reference * 100.0),
                format!("{:.2}%", t.prob_better * 100.0),
                format!("{:.2}%", t.prob_lift * 100.0),
                match t.change {
                    Change::Better => "better".into(),
                    Change::Worse => "worse".into(),
                    Change::NoClearChange => "-".into(),
                },
            ]
        })
        .collect();
    let mut notes = vec![
        format!(
            "{} tasks compared: {} better, {} worse, {} no clear change (better/worse: P(cand>base) >= 0.95 / <= 0.05).",
            r.tasks.len(),
            r.better,
            r.worse,
            r.no_clear_change
        ),
        format!(
            "pass@1 {} -> {}: {} (paired SE {}).",
            f4(r.baseline_pass1),
            f4(r.candidate_pass1),
            format_args!("{:+.4}", r.delta),
            r.delta_se.map_or_else(|| "-".into(), f4)
        ),
    ];
    if !r.only_baseline.is_empty() {
        notes.push(format!("only in baseline: {}", r.only_baseline.len()));
    }
    if !r.only_candidate.is_empty() {
        notes.push(format!("only in candidate: {}", r.only_candidate.len()));
    }
    if !r.all_errors.is_empty() {
        notes.push(format!(
            "skipped (all runs errors on both sides): {}",
            r.all_errors.len()
        ));
    }
    notes.push("P(cand>base) ref: the reference's 200-point Gauss-Legendre value; P(cand>base): accurate; the lift probability is the exact integral the reference samples.".into());
    Table {
        title: format!("Side by side: baseline {baseline} vs candidate {candidate}"),
        header,
        rows,
        right,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::parse_run;
    use serde_json::json;

    fn recs(spec: &[(&str, &[Option<bool>])]) -> Run {
        let mut lines = Vec::new();
        for (uid, outcomes) in spec {
            for o in *outcomes {
                let v = match o {
                    Some(p) => {
                        json!({"uid": uid, "test_result": {"result": p, "reward": 0.0}, "is_system_error": false})
                    }
                    None => {
                        json!({"uid": uid, "test_result": null, "is_system_error": true, "metadata": {"error": {"message": "x"}}})
                    }
                };
                lines.push(v.to_string());
            }
        }
        parse_run("f", "f", &lines.join("\n")).unwrap()
    }

    #[test]
    fn compares_tasks() {
        let t = Some(true);
        let f = Some(false);
        let base = recs(&[
            ("a", &[f, f, f, f, f, f, f, f, f, f]),
            ("b", &[t, t, t]),
            ("c", &[None, None]),
            ("d", &[t]),
        ]);
        let cand = recs(&[
            ("a", &[t, t, t, t, t, t, t, t, t, t]),
            ("b", &[t, t, None]),
            ("c", &[None]),
            ("e", &[t]),
        ]);
        let r = compare(&base, &cand, 0.03);
        assert_eq!(r.only_baseline, ["d"]);
        assert_eq!(r.only_candidate, ["e"]);
        assert_eq!(r.all_errors, ["c"]);
        assert_eq!(r.tasks.len(), 2);
        let a = r.tasks.iter().find(|t| t.uid == "a").unwrap();
        assert_eq!(a.change, Change::Better);
        assert!(a.prob_better > 0.999 && a.prob_lift > 0.999);
        let b = r.tasks.iter().find(|t| t.uid == "b").unwrap();
        // Errors removed from n: 2/2 against 3/3.
        assert_eq!((b.candidate.n(), b.baseline.n()), (2, 3));
        assert_eq!(b.change, Change::NoClearChange);
        assert_eq!((r.better, r.worse, r.no_clear_change), (1, 0, 1));
        // pass@1 with errors as failures: base (0 + 1)/2, cand (1 + 2/3)/2.
        assert!((r.delta - (f64::midpoint(1.0, 2.0 / 3.0) - 0.5)).abs() < 1e-12);
        assert!(r.delta_se.is_some());
        let t = sbs_table(&r, "A", "B");
        assert_eq!(t.rows.len(), 2);
        assert!(t.notes[0].contains("1 better"));
        // Swapped: worse.
        let r = compare(&cand, &base, 0.03);
        assert_eq!(r.worse, 1);
        assert_eq!(r.tasks[0].uid, "a");
    }
}
