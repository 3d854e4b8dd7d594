//! The audit as text tables, JSON and an HTML page in the report's style (tb-metrics'
//! tables and page).

use crate::{AuditReport, Severity, TaskAudit};
use serde_json::Value;
use tb_metrics::format::Table;
use tb_metrics::html::{esc, page_head, table_html};

fn table(title: &str, header: &[&str], right: &[bool]) -> Table {
    Table {
        title: title.into(),
        header: header
            .iter()
            .map(std::string::ToString::to_string)
            .collect(),
        rows: Vec::new(),
        right: right.to_vec(),
        notes: Vec::new(),
    }
}

fn rate(x: Option<f64>) -> String {
    x.map_or("-".into(), |v| format!("{v:.3}"))
}

fn yes(b: bool) -> String {
    if b { "yes" } else { "no" }.into()
}

fn sev_letter(s: Severity) -> char {
    match s {
        Severity::Error => 'E',
        Severity::Warning => 'W',
        Severity::Info => 'I',
    }
}

fn short(v: Option<&Value>) -> String {
    let s = v.map_or(String::new(), Value::to_string);
    if s.chars().count() > 40 {
        format!("{}...", s.chars().take(37).collect::<String>())
    } else {
        s
    }
}

/// Per domain.
pub fn domain_table(r: &AuditReport) -> Table {
    let mut t = table(
        "Audit per domain",
        &[
            "domain",
            "tasks",
            "golden pass",
            "noop pass",
            "mutants",
            "caught",
            "mean sensitivity",
            "blind spots",
            "tasks with blind spots",
            "read clock",
            "errors",
            "warnings",
            "infos",
        ],
        &[
            false, true, true, true, true, true, true, true, true, true, true, true, true,
        ],
    );
    for d in &r.summary.domains {
        t.rows.push(vec![
            d.domain.clone(),
            d.tasks.to_string(),
            d.golden_pass.to_string(),
            d.noop_pass.to_string(),
            d.mutants.to_string(),
            d.mutants_caught.to_string(),
            rate(d.mean_sensitivity),
            d.blind_spots.to_string(),
            d.tasks_with_blind_spots.to_string(),
            d.reads_clock.to_string(),
            d.errors.to_string(),
            d.warnings.to_string(),
            d.infos.to_string(),
        ]);
    }
    t
}

fn finding_codes(a: &TaskAudit) -> String {
    let mut codes: Vec<String> = Vec::new();
    for f in &a.findings {
        let c = format!("{}:{}", f.check, sev_letter(f.severity));
        if !codes.contains(&c) {
            codes.push(c);
        }
    }
    codes.join(" ")
}

/// One row per task.
pub fn task_table(r: &AuditReport) -> Table {
    let mut t = table(
        "Audit per task",
        &[
            "task",
            "golden",
            "noop",
            "deterministic",
            "calls",
            "writes",
            "mutants",
            "caught",
            "sensitivity",
            "blind spots",
            "clock",
            "severity",
            "findings",
        ],
        &[
            false, false, false, false, true, true, true, true, true, true, false, false, false,
        ],
    );
    for a in &r.tasks {
        t.rows.push(vec![
            a.id.clone(),
            if a.golden_pass { "pass" } else { "FAIL" }.into(),
            if a.noop_pass { "PASS" } else { "fail" }.into(),
            yes(a.deterministic),
            a.golden_calls.to_string(),
            a.state_changing_calls.to_string(),
            a.mutants.to_string(),
            a.mutants_caught.to_string(),
            rate(a.sensitivity),
            a.blind_spots.len().to_string(),
            if a.clock.verdict_changes {
                "verdict moves"
            } else if a.clock.reads_clock {
                "reads"
            } else {
                "-"
            }
            .into(),
            a.severity().map_or("-", Severity::name).into(),
            finding_codes(a),
        ]);
    }
    t.notes.push(
        "golden/noop: the state check's verdict of the golden and the do-nothing trajectory; writes: golden calls that change the state; sensitivity = caught / mutants (equivalent mutants excluded); findings: check:E|W|I (error, warning, info)".into(),
    );
    t
}

/// Every finding, most severe first within a task.
pub fn findings_table(r: &AuditReport) -> Table {
    let mut t = table(
        "Findings",
        &["task", "check", "severity", "detail"],
        &[false, false, false, false],
    );
    for a in &r.tasks {
        for f in &a.findings {
            t.rows.push(vec![
                a.id.clone(),
                f.check.into(),
                f.severity.name().into(),
                f.detail.clone(),
            ]);
        }
    }
    if t.rows.is_empty() {
        t.notes.push("no findings".into());
    }
    t
}

/// Every blind spot.
pub fn blind_spot_table(r: &AuditReport) -> Table {
    let mut t = table(
        "Blind spots (mutants that pass although the state differs)",
        &[
            "task",
            "call",
            "tool",
            "mutation",
            "argument",
            "golden",
            "mutant",
            "unchecked",
        ],
        &[false, true, false, false, false, false, false, false],
    );
    for a in &r.tasks {
        for b in &a.blind_spots {
            t.rows.push(vec![
                a.id.clone(),
                b.call.to_string(),
                b.tool.clone(),
                b.mutation.name().into(),
                match (&b.argument, b.swapped_with) {
                    (Some(x), _) => x.clone(),
                    (None, Some(j)) => format!("(swapped with call {j})"),
                    _ => "-".into(),
                },
                short(b.from.as_ref()),
                short(b.to.as_ref()),
                b.unchecked.join(", "),
            ]);
        }
    }
    if t.rows.is_empty() {
        t.notes.push("no blind spots".into());
    }
    t
}

/// The summary lines.
pub fn summary_lines(r: &AuditReport) -> Vec<String> {
    let s = &r.summary;
    let list = |v: &[String]| {
        if v.is_empty() {
            String::new()
        } else {
            format!(": {}", v.join(", "))
        }
    };
    vec![
        format!("tasks                 {}", s.tasks),
        format!(
            "golden passes         {}/{}{}",
            s.golden_pass,
            s.tasks,
            list(&s.golden_fail)
        ),
        format!(
            "deterministic         {}/{}{}",
            s.tasks - s.nondeterministic.len(),
            s.tasks,
            list(&s.nondeterministic)
        ),
        format!(
            "noop passes           {}/{}{}",
            s.noop_pass.len(),
            s.tasks,
            list(&s.noop_pass)
        ),
        format!(
            "mutants               {} judged, {} caught, {} equivalent (not judged); {} tasks without mutants",
            s.mutants, s.mutants_caught, s.equivalent_mutants, s.tasks_without_mutants
        ),
        format!(
            "sensitivity           mean over tasks {}, pooled {}",
            rate(s.mean_sensitivity),
            rate(s.pooled_sensitivity)
        ),
        format!(
            "blind spots           {} in {} tasks ({})",
            s.blind_spots,
            s.tasks_with_blind_spots,
            s.blind_spots_by_mutation
                .iter()
                .map(|(k, v)| format!("{k} {v}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        format!(
            "clock                 {} tasks read it, {} verdicts move (session clock {}, wall clock {}){}",
            s.reads_clock.len(),
            s.clock_verdict_changes.len(),
            s.session_clock,
            s.wall_clock,
            list(&s.clock_verdict_changes)
        ),
        format!(
            "rubrics               {} rubric tasks; {}",
            s.rubric_tasks,
            s.judge
                .as_deref()
                .unwrap_or("no judge model: rubrics not judged")
        ),
    ]
}

/// All tables, in print order.
pub fn tables(r: &AuditReport) -> Vec<Table> {
    vec![
        task_table(r),
        findings_table(r),
        blind_spot_table(r),
        domain_table(r),
    ]
}

/// The text report.
pub fn to_text(r: &AuditReport) -> String {
    let mut out = String::new();
    for t in tables(r) {
        out.push_str(&t.to_text());
        out.push('\n');
    }
    out.push_str("Summary\n");
    for l in summary_lines(r) {
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// The JSON report.
pub fn to_json(r: &AuditReport) -> Value {
    serde_json::to_value(r).unwrap_or(Value::Null)
}

/// A self-contained HTML page.
pub fn to_html(r: &AuditReport, title: &str) -> String {
    let mut s = page_head(title);
    s.push_str("<h2>Summary</h2>\n<ul>\n");
    for l in summary_lines(r) {
        s.push_str(&format!("<li>{}</li>\n", esc(&l)));
    }
    s.push_str("</ul>\n<h2>Tables</h2>\n");
    for t in [
        domain_table(r),
        findings_table(r),
        blind_spot_table(r),
        task_table(r),
    ] {
        s.push_str(&table_html(&t));
    }
    s.push_str("<p class=\"note\">Rules of every check: docs/audit.md.</p>\n</body></html>\n");
    s
}
