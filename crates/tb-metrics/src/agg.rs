//! Aggregation: the reference's `tb agg` numbers and ours, overall and per domain.
//!
//! Tasks are the distinct `uid`s in first-seen order; `n` is a task's number of records and
//! `c` its number of passes under the reference rule (not a system error, a test result, not
//! a test error, `result` true). Errors stay in `n`, so they count as failures everywhere, as
//! in the reference.

use crate::load::{Attempt, RefStatus};
use crate::stats;
use serde::Serialize;
use serde::ser::SerializeMap;
use std::collections::{BTreeMap, HashMap};

/// One task's counts.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskCounts {
    /// The task.
    pub uid: String,
    /// Its domain (`metadata.scenario` of its first record that has one).
    pub domain: String,
    /// Records (`n`).
    pub runs: u64,
    /// Passes (`c`).
    pub passed: u64,
    /// Test results that are false.
    pub failed: u64,
    /// The reference's errors: decode errors, missing test results, test errors.
    pub errors: u64,
    /// System errors: `is_system_error` or `test_result.is_system_error`.
    pub system_errors: u64,
}

/// The domain name used when a record has neither `metadata.scenario` nor `test_tags.domain`.
pub const UNKNOWN_DOMAIN: &str = "(unknown)";

/// Groups attempts by uid, in first-seen order.
pub fn task_counts(attempts: &[Attempt]) -> Vec<TaskCounts> {
    let mut out: Vec<TaskCounts> = Vec::new();
    let mut index: HashMap<&str, usize> = HashMap::new();
    for a in attempts {
        let i = *index.entry(a.uid.as_str()).or_insert_with(|| {
            out.push(TaskCounts {
                uid: a.uid.clone(),
                domain: String::new(),
                runs: 0,
                passed: 0,
                failed: 0,
                errors: 0,
                system_errors: 0,
            });
            out.len() - 1
        });
        let t = &mut out[i];
        if t.domain.is_empty()
            && let Some(d) = &a.domain
        {
            t.domain.clone_from(d);
        }
        t.runs += 1;
        match a.ref_status() {
            RefStatus::Passed => t.passed += 1,
            RefStatus::Failed => t.failed += 1,
            RefStatus::Error => t.errors += 1,
        }
        if a.is_any_system_error() {
            t.system_errors += 1;
        }
    }
    for t in &mut out {
        if t.domain.is_empty() {
            t.domain = UNKNOWN_DOMAIN.to_string();
        }
    }
    out
}

/// Values by k, serialized as a JSON object `{"1": v, "5": v, ...}` in ascending k.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KMap(pub Vec<(u64, f64)>);

impl KMap {
    /// The value at `k`.
    pub fn get(&self, k: u64) -> Option<f64> {
        self.0.iter().find(|(kk, _)| *kk == k).map(|(_, v)| *v)
    }
}

impl Serialize for KMap {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            m.serialize_entry(&k.to_string(), v)?;
        }
        m.end()
    }
}

/// A count and its share of the tasks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct CountShare {
    /// Tasks.
    pub count: u64,
    /// `count / tasks` (0 when there are no tasks).
    pub share: f64,
}

/// Attempts per task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct AttemptCounts {
    /// Fewest records of a task.
    pub min: u64,
    /// Most records of a task.
    pub max: u64,
    /// Every task has the same count.
    pub equal: bool,
    /// Records of the first task (the reference's `runs_per_test`).
    pub first: u64,
}

/// The two standard errors of pass@1.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct Pass1Se {
    /// `sqrt(p(1−p)/N)` over all `N` attempts, with `p` = pass@1.
    pub binomial: Option<f64>,
    /// `sd(p_i)/sqrt(T)` over the `T` tasks' pass rates (sample sd); needs two tasks.
    pub task_clustered: Option<f64>,
}

/// The metrics of a set of tasks (a whole file, or one domain of it).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Distinct tasks.
    pub tasks: u64,
    /// Records.
    pub attempts: u64,
    /// Records per task.
    pub attempts_per_task: AttemptCounts,
    /// Passes (reference rule).
    pub passed: u64,
    /// Test results that are false.
    pub failed: u64,
    /// The reference's errors (decode errors, missing test results, test errors).
    pub errors: u64,
    /// System errors (`is_system_error` or `test_result.is_system_error`), shown separately;
    /// they are among `errors` and count as failures in the reference numbers.
    pub system_errors: u64,
    /// Reference: `Σ passed / Σ runs` (pooled over attempts).
    pub mean_pass: f64,
    /// Reference: the 95% equal-tailed Jeffreys interval of `mean_pass`.
    pub mean_pass_ci: [f64; 2],
    /// Reference pass@k: mean over tasks of `1 − C(n−c,k)/C(n,k)`, for k in {1,5,10,20,50,100}
    /// up to the attempts per task. With unequal attempt counts the reference prints none;
    /// we then compute each task with its own `n`, for k up to the smallest `n`, and set
    /// `reference_omits_pass_k`.
    pub pass_at: KMap,
    /// Reference pass^k: mean over tasks of the plug-in `(c/n)^k` (biased).
    pub pass_hat: KMap,
    /// Ours: mean over tasks of the unbiased every-of-k estimator `C(c,k)/C(n,k)`.
    pub pass_all_unbiased: KMap,
    /// True when attempt counts differ between tasks, so the reference would print no pass@k
    /// or pass^k lines (ours are still given, as described on `pass_at`).
    pub reference_omits_pass_k: bool,
    /// Ours: pass@1 = mean over tasks of `c_i/n_i` (task-weighted).
    pub pass1: f64,
    /// Ours: standard errors of pass@1.
    pub pass1_se: Pass1Se,
    /// Ours: tasks that passed every recorded attempt (observed k/k).
    pub observed_all: CountShare,
    /// Ours: tasks that passed no attempt.
    pub never_solved: CountShare,
    /// Ours: `observed_all.share / pass1` (None when pass@1 is 0).
    pub retention: Option<f64>,
}

/// Computes a [`Summary`] of tasks.
pub fn summarize(tasks: &[TaskCounts]) -> Summary {
    let mut s = Summary {
        tasks: tasks.len() as u64,
        ..Default::default()
    };
    if tasks.is_empty() {
        return s;
    }
    for t in tasks {
        s.attempts += t.runs;
        s.passed += t.passed;
        s.failed += t.failed;
        s.errors += t.errors;
        s.system_errors += t.system_errors;
    }
    let first = tasks[0].runs;
    let min = tasks.iter().map(|t| t.runs).min().unwrap_or(0);
    let max = tasks.iter().map(|t| t.runs).max().unwrap_or(0);
    s.attempts_per_task = AttemptCounts {
        min,
        max,
        equal: min == max,
        first,
    };
    s.reference_omits_pass_k = min != max;
    s.mean_pass = if s.attempts > 0 {
        s.passed as f64 / s.attempts as f64
    } else {
        0.0
    };
    if s.attempts > 0 {
        let (lo, hi) = stats::jeffreys_interval(s.passed, s.attempts, 0.95);
        s.mean_pass_ci = [lo, hi];
    }
    let ks: Vec<u64> = stats::PASS_K
        .iter()
        .map(|&k| u64::from(k))
        .filter(|&k| k <= min)
        .collect();
    for &k in &ks {
        let at: Vec<f64> = tasks
            .iter()
            .filter_map(|t| stats::pass_at_k(t.runs, t.passed, k))
            .collect();
        let hat: Vec<f64> = tasks
            .iter()
            .filter_map(|t| stats::pass_hat_k(t.runs, t.passed, k))
            .collect();
        let all: Vec<f64> = tasks
            .iter()
            .filter_map(|t| stats::pass_all_unbiased(t.runs, t.passed, k))
            .collect();
        s.pass_at.0.push((k, stats::mean(&at).unwrap_or(0.0)));
        s.pass_hat.0.push((k, stats::mean(&hat).unwrap_or(0.0)));
        s.pass_all_unbiased
            .0
            .push((k, stats::mean(&all).unwrap_or(0.0)));
    }
    let rates: Vec<f64> = tasks
        .iter()
        .filter(|t| t.runs > 0)
        .map(|t| t.passed as f64 / t.runs as f64)
        .collect();
    s.pass1 = stats::mean(&rates).unwrap_or(0.0);
    s.pass1_se = Pass1Se {
        binomial: stats::binomial_se(s.pass1, s.attempts),
        task_clustered: stats::sample_sd(&rates).map(|sd| sd / (rates.len() as f64).sqrt()),
    };
    let n = s.tasks as f64;
    let all = tasks
        .iter()
        .filter(|t| t.runs > 0 && t.passed == t.runs)
        .count() as u64;
    let never = tasks.iter().filter(|t| t.passed == 0).count() as u64;
    s.observed_all = CountShare {
        count: all,
        share: all as f64 / n,
    };
    s.never_solved = CountShare {
        count: never,
        share: never as f64 / n,
    };
    s.retention = if s.pass1 > 0.0 {
        Some(s.observed_all.share / s.pass1)
    } else {
        None
    };
    s
}

/// Summaries per domain, by domain name.
pub fn per_domain(tasks: &[TaskCounts]) -> BTreeMap<String, Summary> {
    let mut groups: BTreeMap<String, Vec<TaskCounts>> = BTreeMap::new();
    for t in tasks {
        groups.entry(t.domain.clone()).or_default().push(t.clone());
    }
    groups
        .into_iter()
        .map(|(d, ts)| (d, summarize(&ts)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(uid: &str, domain: &str, runs: u64, passed: u64) -> TaskCounts {
        TaskCounts {
            uid: uid.into(),
            domain: domain.into(),
            runs,
            passed,
            failed: runs - passed,
            errors: 0,
            system_errors: 0,
        }
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn known_answers_equal_counts() {
        // Three tasks x 5 attempts: all pass, all fail, 2 of 5.
        let ts = [t("a", "x", 5, 5), t("b", "x", 5, 0), t("c", "y", 5, 2)];
        let s = summarize(&ts);
        assert_eq!((s.tasks, s.attempts, s.passed), (3, 15, 7));
        assert!(close(s.mean_pass, 7.0 / 15.0));
        assert!(close(s.pass1, (1.0 + 0.0 + 0.4) / 3.0));
        assert_eq!(s.pass_at.0.iter().map(|p| p.0).collect::<Vec<_>>(), [1, 5]);
        // pass@5: task a 1, b 0, c 1 (n−c = 3 < 5)
        assert!(close(s.pass_at.get(5).unwrap(), 2.0 / 3.0));
        assert!(close(s.pass_at.get(1).unwrap(), 1.4 / 3.0));
        // pass^5: 1 + 0 + 0.4^5
        assert!(close(
            s.pass_hat.get(5).unwrap(),
            (1.0 + 0.4f64.powf(5.0)) / 3.0
        ));
        // unbiased every-of-5: 1 + 0 + 0
        assert!(close(s.pass_all_unbiased.get(5).unwrap(), 1.0 / 3.0));
        assert!(close(s.pass_all_unbiased.get(1).unwrap(), s.pass1));
        assert_eq!(
            s.observed_all,
            CountShare {
                count: 1,
                share: 1.0 / 3.0
            }
        );
        assert_eq!(
            s.never_solved,
            CountShare {
                count: 1,
                share: 1.0 / 3.0
            }
        );
        assert!(close(s.retention.unwrap(), (1.0 / 3.0) / (1.4 / 3.0)));
        let p: f64 = 1.4 / 3.0;
        assert!(close(
            s.pass1_se.binomial.unwrap(),
            (p * (1.0 - p) / 15.0).sqrt()
        ));
        let sd = stats::sample_sd(&[1.0, 0.0, 0.4]).unwrap();
        assert!(close(
            s.pass1_se.task_clustered.unwrap(),
            sd / 3.0_f64.sqrt()
        ));
        assert!(!s.reference_omits_pass_k);
        let d = per_domain(&ts);
        assert_eq!(d.keys().collect::<Vec<_>>(), ["x", "y"]);
        assert!(close(d["x"].pass1, 0.5));
        assert_eq!(d["y"].pass1_se.task_clustered, None);
    }

    #[test]
    fn unequal_counts_are_reported_and_k_capped_by_the_smallest() {
        let ts = [t("a", "x", 5, 1), t("b", "x", 3, 3)];
        let s = summarize(&ts);
        assert!(s.reference_omits_pass_k);
        assert_eq!(
            s.attempts_per_task,
            AttemptCounts {
                min: 3,
                max: 5,
                equal: false,
                first: 5
            }
        );
        assert_eq!(s.pass_at.0.iter().map(|p| p.0).collect::<Vec<_>>(), [1]);
        assert!(close(s.pass1, f64::midpoint(0.2, 1.0)));
        assert!(close(s.mean_pass, 4.0 / 8.0));
    }

    #[test]
    fn k_above_runs_and_edge_cases() {
        // Two attempts per task: only k = 1.
        let s = summarize(&[t("a", "x", 2, 2), t("b", "x", 2, 2)]);
        assert_eq!(s.pass_at.0, vec![(1, 1.0)]);
        assert_eq!(s.observed_all.count, 2);
        assert_eq!(s.retention, Some(1.0));
        assert_eq!(s.never_solved.count, 0);
        // All fail: retention undefined.
        let s = summarize(&[t("a", "x", 5, 0)]);
        assert_eq!(s.retention, None);
        assert_eq!(s.pass_at.get(5), Some(0.0));
        assert_eq!(s.pass1_se.binomial, Some(0.0));
        // Nothing at all.
        let s = summarize(&[]);
        assert_eq!(s.tasks, 0);
        assert!(s.pass_at.0.is_empty());
    }

    #[test]
    fn kmap_serializes_as_an_ordered_object() {
        let k = KMap(vec![(1, 0.5), (5, 0.75), (10, 1.0)]);
        assert_eq!(
            serde_json::to_string(&k).unwrap(),
            r#"{"1":0.5,"5":0.75,"10":1.0}"#
        );
    }
}
