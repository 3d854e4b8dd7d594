//! Invariants of the estimators, checked on random inputs.

use proptest::prelude::*;
use tb_metrics::agg::{TaskCounts, summarize};
use tb_metrics::stats::*;

proptest! {
    #[test]
    fn pass_at_k_is_monotone_in_k_and_bounds_the_others(n in 1u64..60, c_frac in 0.0f64..=1.0) {
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0..=n")]
        let c = ((n as f64) * c_frac).round() as u64;
        let mut prev = 0.0;
        for k in 1..=n {
            let at = pass_at_k(n, c, k).unwrap();
            let hat = pass_hat_k(n, c, k).unwrap();
            let all = pass_all_unbiased(n, c, k).unwrap();
            prop_assert!((0.0..=1.0 + 1e-12).contains(&at));
            prop_assert!(at + 1e-12 >= prev, "pass@k not monotone at k={}", k);
            prop_assert!(hat <= at + 1e-12, "pass^k > pass@k at k={}", k);
            prop_assert!(all <= hat + 1e-12, "C(c,k)/C(n,k) > (c/n)^k at k={}", k);
            prev = at;
        }
        let p = c as f64 / n as f64;
        prop_assert!((pass_at_k(n, c, 1).unwrap() - p).abs() < 1e-12);
        prop_assert!((pass_all_unbiased(n, c, 1).unwrap() - p).abs() < 1e-12);
        prop_assert_eq!(pass_at_k(n, c, n + 1), None);
    }

    #[test]
    fn beta_quantiles_invert_the_cdf(k in 0u64..200, extra in 0u64..200, p in 0.001f64..0.999) {
        let n = k + extra;
        let (a, b) = jeffreys_params(k, n);
        let x = beta_inc_inv(a, b, p);
        prop_assert!((0.0..=1.0).contains(&x));
        prop_assert!((beta_inc(a, b, x) - p).abs() < 1e-9, "I({}) = {} for p {}", x, beta_inc(a, b, x), p);
        let (lo, hi) = jeffreys_interval(k, n, 0.95);
        prop_assert!(lo < hi);
    }

    #[test]
    fn summary_invariants(tasks in prop::collection::vec((1u64..12, 0.0f64..=1.0), 1..30)) {
        let ts: Vec<TaskCounts> = tasks.iter().enumerate().map(|(i, (n, f))| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "0..=n")]
            let c = ((*n as f64) * f).round() as u64;
            TaskCounts { uid: format!("t{i}"), domain: "d".into(), runs: *n, passed: c, failed: n - c, errors: 0, system_errors: 0 }
        }).collect();
        let s = summarize(&ts);
        prop_assert!(s.observed_all.share <= s.pass1 + 1e-12);
        prop_assert!(s.pass1 <= 1.0 - s.never_solved.share + 1e-12);
        for (k, at) in &s.pass_at.0 {
            prop_assert!(s.pass_hat.get(*k).unwrap() <= at + 1e-12);
            prop_assert!(s.pass_all_unbiased.get(*k).unwrap() <= s.pass_hat.get(*k).unwrap() + 1e-12);
        }
        prop_assert!(s.pass_at.0.windows(2).all(|w| w[0].1 <= w[1].1 + 1e-12));
        if let Some(r) = s.retention { prop_assert!((0.0..=1.0 + 1e-12).contains(&r)); }
        prop_assert!((s.mean_pass_ci[0]..=s.mean_pass_ci[1]).contains(&s.mean_pass) || s.passed == 0 || s.passed == s.attempts);
    }

    #[test]
    fn lift_probability_decreases_with_the_threshold(ka in 0u64..20, kb in 0u64..20, e1 in 0.0f64..0.5, e2 in 0.0f64..0.5) {
        let (lo, hi) = if e1 <= e2 { (e1, e2) } else { (e2, e1) };
        let p_lo = prob_lift_gt(ka, 20, kb, 20, lo);
        let p_hi = prob_lift_gt(ka, 20, kb, 20, hi);
        prop_assert!(p_hi <= p_lo + 1e-9);
        let sym = prob_lift_gt(ka, 20, kb, 20, 0.0) + prob_lift_gt(kb, 20, ka, 20, 0.0);
        prop_assert!((sym - 1.0).abs() < 1e-7, "P(A>B)+P(B>A) = {}", sym);
    }
}
