//! Text, Markdown and JSON renderings of [`ModelReport`]s: one row per model (and per model and
//! domain), reference numbers and ours in separate, labelled tables.

use crate::ModelReport;
use crate::agg::{KMap, Summary};
use crate::failure::FailureSummary;
use serde_json::Value;

/// Column names as owned strings (a table's header).
fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_string()).collect()
}

/// A table: header, rows, and which columns are right-aligned.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Title.
    pub title: String,
    /// Column names.
    pub header: Vec<String>,
    /// Cells.
    pub rows: Vec<Vec<String>>,
    /// Right-aligned columns.
    pub right: Vec<bool>,
    /// Lines printed under the table.
    pub notes: Vec<String>,
}

impl Table {
    fn new(title: &str, header: Vec<String>) -> Self {
        let right = header.iter().enumerate().map(|(i, _)| i > 0).collect();
        Table {
            title: title.into(),
            header,
            right,
            ..Default::default()
        }
    }

    /// Plain text with aligned columns.
    pub fn to_text(&self) -> String {
        let n = self.header.len();
        // A cell stays on its line: line breaks and tabs in it are shown as `�`.
        let one_line = |c: &str| c.replace(['\n', '\r', '\t'], "\u{fffd}");
        let rows: Vec<Vec<String>> = self
            .rows
            .iter()
            .map(|r| r.iter().map(|c| one_line(c)).collect())
            .collect();
        let header: Vec<String> = self.header.iter().map(|h| one_line(h)).collect();
        let mut w: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
        for r in &rows {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let line = |cells: &[String]| {
            let mut s = String::new();
            for (i, wi) in w.iter().enumerate() {
                let c = cells.get(i).map_or("", String::as_str);
                let pad = wi.saturating_sub(c.chars().count());
                if i > 0 {
                    s.push_str("  ");
                }
                if self.right[i] {
                    s.push_str(&" ".repeat(pad));
                    s.push_str(c);
                } else {
                    s.push_str(c);
                    if i + 1 < n {
                        s.push_str(&" ".repeat(pad));
                    }
                }
            }
            s.trim_end().to_string()
        };
        let mut out = format!("{}\n", one_line(&self.title));
        out.push_str(&line(&header));
        out.push('\n');
        out.push_str(
            &w.iter()
                .map(|x| "-".repeat(*x))
                .collect::<Vec<_>>()
                .join("  "),
        );
        out.push('\n');
        for r in &rows {
            out.push_str(&line(r));
            out.push('\n');
        }
        for note in &self.notes {
            out.push_str(note);
            out.push('\n');
        }
        out
    }

    /// A GitHub-flavoured Markdown table (pipes in cells escaped).
    pub fn to_markdown(&self) -> String {
        let esc = |s: &str| {
            s.replace('|', "\\|")
                .replace(['\n', '\r', '\t'], "\u{fffd}")
        };
        let mut out = format!("### {}\n\n", self.title);
        out.push_str(&format!(
            "| {} |\n",
            self.header
                .iter()
                .map(|h| esc(h))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
        out.push_str(&format!(
            "|{}|\n",
            self.right
                .iter()
                .map(|r| if *r { " ---: " } else { " --- " })
                .collect::<Vec<_>>()
                .join("|")
        ));
        for r in &self.rows {
            out.push_str(&format!(
                "| {} |\n",
                r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(" | ")
            ));
        }
        if !self.notes.is_empty() {
            out.push('\n');
            for n in &self.notes {
                out.push_str(&format!("{}\n", esc(n)));
            }
        }
        out
    }
}

/// A rate with four decimals.
pub fn f4(x: f64) -> String {
    format!("{x:.4}")
}

fn opt4(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), f4)
}

/// Money with four decimals, `-` when undefined.
pub fn money(x: Option<f64>) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.4}"))
}

fn union_ks<'a>(maps: impl Iterator<Item = &'a KMap>) -> Vec<u64> {
    let mut ks: Vec<u64> = maps.flat_map(|m| m.0.iter().map(|p| p.0)).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
}

fn kcell(m: &KMap, k: u64, star: bool) -> String {
    match m.get(k) {
        Some(v) if star => format!("{}*", f4(v)),
        Some(v) => f4(v),
        None => "-".into(),
    }
}

fn attempts_per_task(s: &Summary) -> String {
    if s.attempts_per_task.equal {
        s.attempts_per_task.min.to_string()
    } else {
        format!(
            "{}-{} (unequal)",
            s.attempts_per_task.min, s.attempts_per_task.max
        )
    }
}

const UNEQUAL_NOTE: &str = "* unequal attempt counts: the reference prints no pass@k or pass^k; these use each task's own n, k up to the fewest attempts.";

/// The reference's numbers, one row per model.
pub fn reference_table(reports: &[ModelReport]) -> Table {
    let ks = union_ks(reports.iter().map(|m| &m.summary.pass_at));
    let mut header: Vec<String> = owned(&[
        "model",
        "tasks",
        "attempts/task",
        "attempts",
        "errors",
        "mean pass",
        "95% CI (Jeffreys)",
    ]);
    header.extend(ks.iter().map(|k| format!("pass@{k}")));
    header.extend(ks.iter().map(|k| format!("pass^{k}")));
    let mut t = Table::new(
        "Reference metrics (tb agg rules: errors count as failures)",
        header,
    );
    let mut star_any = false;
    for m in reports {
        let s = &m.summary;
        let star = s.reference_omits_pass_k;
        star_any |= star;
        let mut row = vec![
            m.model.clone(),
            s.tasks.to_string(),
            attempts_per_task(s),
            s.attempts.to_string(),
            s.errors.to_string(),
            f4(s.mean_pass),
            format!("[{}, {}]", f4(s.mean_pass_ci[0]), f4(s.mean_pass_ci[1])),
        ];
        row.extend(ks.iter().map(|k| kcell(&s.pass_at, *k, star)));
        row.extend(ks.iter().map(|k| kcell(&s.pass_hat, *k, star)));
        t.rows.push(row);
    }
    t.notes.push("pass@k = mean over tasks of 1 - C(n-c,k)/C(n,k); pass^k = mean over tasks of (c/n)^k (the reference's plug-in estimator).".into());
    if star_any {
        t.notes.push(UNEQUAL_NOTE.into());
    }
    t
}

/// Our numbers, one row per model.
pub fn ours_table(reports: &[ModelReport]) -> Table {
    let ks = union_ks(reports.iter().map(|m| &m.summary.pass_all_unbiased));
    let mut header: Vec<String> = owned(&["model", "pass@1", "SE binomial", "SE task-clustered"]);
    header.extend(
        ks.iter()
            .filter(|k| **k > 1)
            .map(|k| format!("all-of-{k} C(c,k)/C(n,k)")),
    );
    header.extend(owned(&[
        "observed k/k",
        "never solved",
        "retention",
        "system errors",
    ]));
    let mut t = Table::new(
        "Ours (task-weighted; observed k/k = tasks passing every recorded attempt)",
        header,
    );
    for m in reports {
        let s = &m.summary;
        let mut row = vec![
            m.model.clone(),
            f4(s.pass1),
            opt4(s.pass1_se.binomial),
            opt4(s.pass1_se.task_clustered),
        ];
        row.extend(
            ks.iter()
                .filter(|k| **k > 1)
                .map(|k| kcell(&s.pass_all_unbiased, *k, false)),
        );
        row.push(format!(
            "{}/{} ({})",
            s.observed_all.count,
            s.tasks,
            f4(s.observed_all.share)
        ));
        row.push(format!(
            "{}/{} ({})",
            s.never_solved.count,
            s.tasks,
            f4(s.never_solved.share)
        ));
        row.push(opt4(s.retention));
        row.push(s.system_errors.to_string());
        t.rows.push(row);
    }
    t.notes.push(
        "retention = observed k/k share / pass@1; SE task-clustered = sd(p_i)/sqrt(tasks).".into(),
    );
    t
}

/// One row per model and domain.
pub fn domain_table(reports: &[ModelReport]) -> Table {
    let header: Vec<String> = owned(&[
        "model",
        "domain",
        "tasks",
        "attempts",
        "mean pass (ref)",
        "pass@1",
        "SE task-clustered",
        "pass@k (ref)",
        "pass^k (ref)",
        "all-of-k unbiased",
        "observed k/k",
        "never solved",
        "retention",
        "system errors",
    ]);
    let mut t = Table::new(
        "Per domain (metadata.scenario); k = the largest reported",
        header,
    );
    let mut star_any = false;
    for m in reports {
        for (d, r) in &m.per_domain {
            let s = &r.summary;
            let star = s.reference_omits_pass_k;
            star_any |= star;
            let k = s.pass_at.0.last().map(|p| p.0);
            let cell = |map: &KMap| match k {
                Some(k) => format!("k={k}: {}", kcell(map, k, star)),
                None => "-".into(),
            };
            t.rows.push(vec![
                m.model.clone(),
                d.clone(),
                s.tasks.to_string(),
                s.attempts.to_string(),
                f4(s.mean_pass),
                f4(s.pass1),
                opt4(s.pass1_se.task_clustered),
                cell(&s.pass_at),
                cell(&s.pass_hat),
                cell(&s.pass_all_unbiased),
                format!("{}/{}", s.observed_all.count, s.tasks),
                format!("{}/{}", s.never_solved.count, s.tasks),
                opt4(s.retention),
                s.system_errors.to_string(),
            ]);
        }
    }
    t.right[1] = false;
    if star_any {
        t.notes.push(UNEQUAL_NOTE.into());
    }
    t
}

/// Cost per model, when priced.
pub fn cost_table(reports: &[ModelReport]) -> Option<Table> {
    if reports.iter().all(|m| m.cost.is_none()) {
        return None;
    }
    let header: Vec<String> = owned(&[
        "model",
        "total",
        "per attempt",
        "per success",
        "per dependable task",
        "user share",
        "judge share",
        "frontier (success / dependable)",
        "unpriced roles",
    ]);
    let mut t = Table::new(
        "Cost (in the price table's currency; agent, user and judge tokens)",
        header,
    );
    for m in reports {
        let Some(c) = &m.cost else { continue };
        let yes = |b: bool| if b { "yes" } else { "no" };
        t.rows.push(vec![
            m.model.clone(),
            money(Some(c.total)),
            money(Some(c.per_attempt)),
            money(c.per_success),
            money(c.per_dependable_task),
            f4(c.user_share),
            f4(c.judge_share),
            format!(
                "{} / {}",
                yes(c.frontier_success),
                yes(c.frontier_dependable)
            ),
            if c.unpriced_roles.is_empty() {
                "-".into()
            } else {
                c.unpriced_roles.join(",")
            },
        ]);
    }
    t.notes.push("per success = cost of one attempt per task / (tasks x pass@1); per dependable task = cost of all attempts / tasks passing k of k.".into());
    Some(t)
}

/// Failure classes and signatures per model.
pub fn failure_table(reports: &[ModelReport]) -> Table {
    failure_table_of(reports, false)
}

/// Failure classes and signatures per model and domain.
pub fn failure_domain_table(reports: &[ModelReport]) -> Table {
    failure_table_of(reports, true)
}

fn failure_table_of(reports: &[ModelReport], by_domain: bool) -> Table {
    let mut header: Vec<String> = vec!["model".into()];
    if by_domain {
        header.push("domain".into());
    }
    header.extend(owned(&[
        "failed",
        "system errors",
        "wrong value",
        "extra effect",
        "missing effect",
        "rubric failed",
        "clean termination",
    ]));
    let sigs = crate::failure::Signature::model_failure_names();
    header.extend(owned(&sigs));
    let title = if by_domain {
        "Failures per domain (shares of failed attempts that are not system errors)"
    } else {
        "Failures (shares of failed attempts that are not system errors)"
    };
    let mut t = Table::new(title, header);
    if by_domain {
        t.right[1] = false;
    }
    let mut rows: Vec<(String, Option<&str>, &FailureSummary)> = Vec::new();
    for m in reports {
        if by_domain {
            for (d, r) in &m.per_domain {
                rows.push((m.model.clone(), Some(d.as_str()), &r.failures));
            }
        } else {
            rows.push((m.model.clone(), None, &m.failures));
        }
    }
    for (model, domain, f) in rows {
        let sys = f
            .signature_counts
            .iter()
            .find(|(n, _)| n == "system_error")
            .map_or(0, |p| p.1);
        let mut row = vec![model];
        row.extend(domain.map(str::to_string));
        row.push(f.failed.to_string());
        row.push(sys.to_string());
        for c in [
            "wrong_value",
            "extra_effect",
            "missing_effect",
            "rubric_failed",
        ] {
            row.push(f4(f.class_share.get(c).copied().unwrap_or(0.0)));
        }
        row.push(f4(f.clean_termination_share));
        for s in sigs {
            row.push(f4(f.signature_share.get(s).copied().unwrap_or(0.0)));
        }
        t.rows.push(row);
    }
    t
}

/// All tables in order.
pub fn tables(reports: &[ModelReport]) -> Vec<Table> {
    let mut v = vec![
        reference_table(reports),
        ours_table(reports),
        domain_table(reports),
    ];
    v.extend(cost_table(reports));
    v.push(failure_table(reports));
    v.push(failure_domain_table(reports));
    v
}

/// The text report.
pub fn to_text(reports: &[ModelReport]) -> String {
    render(reports, Table::to_text)
}

/// The Markdown report.
pub fn to_markdown(reports: &[ModelReport]) -> String {
    render(reports, Table::to_markdown)
}

/// Every table rendered by `table`, a blank line between.
fn render(reports: &[ModelReport], table: fn(&Table) -> String) -> String {
    tables(reports)
        .iter()
        .map(table)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One JSON object per input file, as a JSON array.
pub fn to_json(reports: &[ModelReport]) -> Value {
    serde_json::to_value(reports).unwrap_or(Value::Null)
}

/// The reference `tb agg`'s closing lines, character for character (two decimals):
/// `Number of tests`, `Runs per test`, `Total runs`, `Mean per-sample accuracy … (95% CI: …)`,
/// then `Pass@k:` and `Pass^k:` blocks unless attempt counts differ.
pub fn reference_lines(s: &Summary) -> String {
    let mut out = String::new();
    out.push_str(&format!("Number of tests: {}\n", s.tasks));
    out.push_str(&format!(
        "Runs per test: {}\n",
        if s.tasks > 0 {
            s.attempts_per_task.first.cast_signed()
        } else {
            -1
        }
    ));
    out.push_str(&format!("Total runs: {}\n", s.attempts));
    out.push_str(&format!(
        "Mean per-sample accuracy: {:.2} (95% CI: {:.2}-{:.2})\n",
        s.mean_pass, s.mean_pass_ci[0], s.mean_pass_ci[1]
    ));
    if !s.reference_omits_pass_k && !s.pass_at.0.is_empty() {
        out.push_str("Pass@k:\n");
        for (k, v) in &s.pass_at.0 {
            out.push_str(&format!("  pass@{k}: {v:.2}\n"));
        }
        out.push_str("Pass^k:\n");
        for (k, v) in &s.pass_hat.0 {
            out.push_str(&format!("  pass^{k}: {v:.2}\n"));
        }
    }
    out
}
