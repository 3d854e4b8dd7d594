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

/// `tb audit` of the whole list (`audit_all_s`).
pub(super) fn figures(b: &Bench<'_>) -> Measured {
    b.progress("audit of every task");
    let audit = audit_all(b.l, b.clock, b.a);
    Measured {
        figures: vec![Figure {
            key: "audit_all_s",
            value: audit["seconds"].as_f64(),
            unit: "s",
            reference: None,
            target: None,
            note: format!(
                "tb audit of {} tasks on {} threads: golden, noop, 2 more golden replays, the wall-clock replay and {} mutants judged ({} equivalent); the reference has no such check",
                audit["tasks"], audit["threads"], audit["mutants"], audit["equivalent_mutants"]
            ),
        }],
        details: vec![("audit", audit)],
        lines: Vec::new(),
    }
}
