//! Metrics over trial records: the reference's `tb agg` numbers and ours beside them, cost
//! and the Pareto frontier, failure classes and signatures, and reports (text, Markdown,
//! JSON, self-contained HTML with inline SVG charts), one attempt shown in full, and the
//! side-by-side Bayesian comparison of two runs.
//!
//! The rules are on each module and collected in `docs/metrics.md`.

#![warn(missing_docs)]

pub mod agg;
pub mod cost;
pub mod failure;
pub mod format;
pub mod html;
pub mod load;
pub mod sbs;
pub mod show;
pub mod stats;
pub mod surface_mix;

use serde::Serialize;
use std::collections::BTreeMap;

pub use load::{Attempt, Run, parse_line, parse_run, read_run, run_of};

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum MetricsError {
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// A record line is malformed.
    #[error("{file}:{line}: {message}")]
    Line {
        /// The file.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// The price table is malformed.
    #[error("price table: {0}")]
    Prices(String),
    /// An attempt asked for is not in the file.
    #[error("{0}")]
    NotFound(String),
}

/// Everything reported about one file (one model).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModelReport {
    /// The file.
    pub file: String,
    /// The model name.
    pub model: String,
    /// Overall (task-weighted) metrics.
    #[serde(flatten)]
    pub summary: agg::Summary,
    /// The same per domain (`metadata.scenario`).
    pub per_domain: BTreeMap<String, DomainReport>,
    /// Failure classes and signatures over the whole file.
    pub failures: failure::FailureSummary,
    /// Cost, when a price table was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<cost::CostSummary>,
    /// Per-task counts (in first-seen order).
    #[serde(skip)]
    pub tasks: Vec<agg::TaskCounts>,
}

/// One domain of a [`ModelReport`].
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DomainReport {
    /// The metrics of the domain's tasks.
    #[serde(flatten)]
    pub summary: agg::Summary,
    /// Its failures.
    pub failures: failure::FailureSummary,
}

/// Builds the report of one run.
pub fn model_report(run: &Run, prices: Option<&cost::PriceTable>) -> ModelReport {
    let tasks = agg::task_counts(&run.attempts);
    let summary = agg::summarize(&tasks);
    let domain_of: BTreeMap<&str, &str> = tasks
        .iter()
        .map(|t| (t.uid.as_str(), t.domain.as_str()))
        .collect();
    let per_domain = agg::per_domain(&tasks)
        .into_iter()
        .map(|(d, s)| {
            let failures = failure::summarize_failures(
                run.attempts
                    .iter()
                    .filter(|a| domain_of.get(a.uid.as_str()).is_some_and(|x| *x == d)),
            );
            (
                d,
                DomainReport {
                    summary: s,
                    failures,
                },
            )
        })
        .collect();
    let failures = failure::summarize_failures(&run.attempts);
    let cost = prices
        .map(|p| cost::summarize_cost(run, &tasks, summary.pass1, summary.observed_all.count, p));
    ModelReport {
        file: run.file.clone(),
        model: run.model.clone(),
        summary,
        per_domain,
        failures,
        cost,
        tasks,
    }
}

/// Builds the reports of several runs and marks the Pareto frontiers among them.
pub fn model_reports(runs: &[Run], prices: Option<&cost::PriceTable>) -> Vec<ModelReport> {
    let mut out: Vec<ModelReport> = runs.iter().map(|r| model_report(r, prices)).collect();
    mark_frontiers(&mut out);
    out
}

/// Marks the Pareto frontiers (cost per success against pass@1, cost per dependable task
/// against observed k/k) among reports built one by one with [`model_report`].
pub fn mark_frontiers(out: &mut [ModelReport]) {
    let success: Vec<(Option<f64>, f64)> = out
        .iter()
        .map(|m| (m.cost.as_ref().and_then(|c| c.per_success), m.summary.pass1))
        .collect();
    let dependable: Vec<(Option<f64>, f64)> = out
        .iter()
        .map(|m| {
            (
                m.cost.as_ref().and_then(|c| c.per_dependable_task),
                m.summary.observed_all.share,
            )
        })
        .collect();
    let fs = cost::pareto_front(&success);
    let fd = cost::pareto_front(&dependable);
    for (i, m) in out.iter_mut().enumerate() {
        if let Some(c) = &mut m.cost {
            c.frontier_success = fs[i];
            c.frontier_dependable = fd[i];
        }
    }
}
