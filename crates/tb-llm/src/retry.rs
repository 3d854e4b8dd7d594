//! Retry budgets and backoff, as the reference's backoff client: separate budgets per failure
//! class, delay `base * 2^(n-1)` capped with full jitter, `Retry-After` (integer seconds)
//! honoured on 429 up to the cap.

use crate::config::RetryConfig;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A failure class with its own budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// HTTP 429.
    TooManyRequests,
    /// Could not connect.
    Connect,
    /// The request timed out.
    Timeout,
    /// A listed server status, or a dropped connection when `read-error` is listed.
    Server,
    /// A 2xx reply that is not the API's shape.
    Malformed,
}

/// Retry counters of one request.
#[derive(Debug, Clone, Default)]
pub struct Budget {
    too_many_requests: i64,
    connect: i64,
    timeout: i64,
    server: i64,
    malformed: i64,
}

impl Budget {
    /// Counts a failure; returns the 1-based retry number if the budget allows a retry.
    pub fn take(&mut self, cfg: &RetryConfig, f: Failure) -> Option<u32> {
        let (n, max) = match f {
            Failure::TooManyRequests => (
                &mut self.too_many_requests,
                cfg.max_retries_too_many_requests,
            ),
            Failure::Connect => (&mut self.connect, cfg.max_retries_connect),
            Failure::Timeout => (&mut self.timeout, cfg.max_retries_timeout),
            Failure::Server => (&mut self.server, cfg.max_retries_server_error),
            Failure::Malformed => (&mut self.malformed, cfg.max_retries_malformed),
        };
        *n += 1;
        if max >= 0 && *n > max {
            None
        } else {
            Some(u32::try_from(*n).unwrap_or(u32::MAX))
        }
    }
}

/// The backoff delay before retry `n` (1-based): `base * 2^(n-1)`, capped, full jitter.
pub fn delay(cfg: &RetryConfig, n: u32) -> Duration {
    let raw = cfg.backoff_base * 2f64.powi(n.saturating_sub(1).min(62).cast_signed());
    let capped = raw.min(cfg.backoff_max).max(0.0);
    Duration::from_secs_f64(capped * unit_random())
}

/// The delay before a 429 retry: the backoff delay, or the integer `Retry-After` if larger,
/// capped at `backoff_max`. An unparsable `Retry-After` is ignored.
pub fn delay_429(cfg: &RetryConfig, n: u32, retry_after: Option<&str>) -> Duration {
    let d = delay(cfg, n);
    match retry_after.and_then(|s| s.trim().parse::<u64>().ok()) {
        Some(secs) => d.max(Duration::from_secs_f64(
            (secs as f64).min(cfg.backoff_max).max(0.0),
        )),
        None => d,
    }
}

/// A uniform number in [0, 1) (xorshift, seeded from the clock; jitter needs no more).
fn unit_random() -> f64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0x9E37_79B9_7F4A_7C15, |d| {
                u64::try_from(d.as_nanos() & u128::from(u64::MAX)).unwrap_or(0)
            })
            | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    (x >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_are_separate_and_negative_is_unlimited() {
        let cfg = RetryConfig {
            max_retries_server_error: 2,
            max_retries_too_many_requests: -1,
            ..RetryConfig::default()
        };
        let mut b = Budget::default();
        assert_eq!(b.take(&cfg, Failure::Server), Some(1));
        assert_eq!(b.take(&cfg, Failure::Server), Some(2));
        assert_eq!(b.take(&cfg, Failure::Server), None);
        for i in 1..100 {
            assert_eq!(b.take(&cfg, Failure::TooManyRequests), Some(i));
        }
        assert_eq!(b.take(&cfg, Failure::Timeout), Some(1));
    }

    #[test]
    fn delays_are_capped_and_jittered() {
        let cfg = RetryConfig {
            backoff_base: 1.0,
            backoff_max: 4.0,
            ..RetryConfig::default()
        };
        for n in 1..20 {
            let d = delay(&cfg, n).as_secs_f64();
            assert!((0.0..=4.0).contains(&d));
            if n == 1 {
                assert!(d <= 1.0);
            }
        }
        assert!(delay_429(&cfg, 1, Some("3")).as_secs_f64() >= 3.0);
        assert!(delay_429(&cfg, 1, Some("100")).as_secs_f64() <= 4.0);
        assert!(delay_429(&cfg, 1, Some("soon")).as_secs_f64() <= 1.0);
    }
}
