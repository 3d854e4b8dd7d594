//! The audit figure: `tb audit` of every task (`audit_all_s`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// `tb audit` of every task on every core (or `--threads`): seconds and what it judged.
pub(super) fn audit_all(l: &Loaded, clock: Clock, a: &BenchOptions) -> Value {
    let opts = tb_audit::AuditOptions {
        clock,
        threads: a.threads.unwrap_or_else(|| {
            std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
        }),
        ..tb_audit::AuditOptions::default()
    };
    let t0 = Instant::now();
    let r = tb_audit::audit(&l.sandbox, &l.tasks, &opts);
    let seconds = t0.elapsed().as_secs_f64();
    json!({
        "seconds": seconds,
        "threads": opts.threads,
        "tasks": r.summary.tasks,
        "golden_pass": r.summary.golden_pass,
        "mutants": r.summary.mutants,
        "equivalent_mutants": r.summary.equivalent_mutants,
        "blind_spots": r.summary.blind_spots,
    })
}
