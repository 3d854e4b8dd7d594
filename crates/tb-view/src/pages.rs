//! The pages, rendered on the server. Every text that comes from a record goes through
//! [`esc`]; numbers and tb-metrics' tables and charts come from tb-metrics.

use crate::model::{RunView, Snapshot, Status};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tb_core::Message;
use tb_metrics::failure::{self, is_empty_content, is_error_content};
use tb_metrics::format::{self, f4, money};
use tb_metrics::html;

/// Escapes record text for HTML: tb-metrics' escaping (control characters shown as their
/// Unicode pictures).
pub fn esc(s: &str) -> String {
    html::esc(s)
}

/// Longest text shown in one block of an attempt page; the rest is in the attempt's JSON.
pub const MAX_BLOCK_CHARS: usize = 200_000;

/// Percent-encodes a URL query value.
pub fn url_enc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            o.push(char::from(b));
        } else {
            let _ = write!(o, "%{b:02X}");
        }
    }
    o
}

/// How a page is put together: served (the CSS and script are the server's files) or
/// standalone (inlined, for a report file with no server).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shell {
    /// Served by `tb view`.
    Served,
    /// One self-contained file.
    Standalone,
}

fn head(title: &str, page: &str, generation: u64, shell: Shell) -> String {
    let mut s = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    s.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">");
    let _ = write!(s, "<title>{} · tb view</title>", esc(title));
    match shell {
        Shell::Served => s.push_str(
            "<link rel=\"stylesheet\" href=\"/assets/view.css\"><script src=\"/assets/view.js\" defer></script>",
        ),
        Shell::Standalone => {
            let _ = write!(s, "<style>{}</style>", crate::CSS);
        }
    }
    let _ = writeln!(
        s,
        "</head><body data-page=\"{page}\" data-generation=\"{generation}\">"
    );
    s
}

fn nav(snap: &Snapshot, current: Option<usize>) -> String {
    let mut s =
        String::from("<nav><a href=\"/\" class=\"brand\">tb view</a><a href=\"/\">Runs</a>");
    for r in &snap.runs {
        let _ = write!(
            s,
            "<a href=\"/runs/{}/tasks\"{}>{} tasks</a>",
            r.index,
            if current == Some(r.index) {
                " class=\"here\""
            } else {
                ""
            },
            esc(&r.run.model)
        );
    }
    if snap.runs.len() >= 2 {
        s.push_str("<a href=\"/compare/0/1\">Compare</a>");
    }
    s.push_str("<span id=\"live\" class=\"live\"></span></nav>\n<main>\n");
    s
}

const FOOT: &str = "</main></body></html>\n";

/// A page saying what went wrong.
pub fn error_page(title: &str, what: &str) -> String {
    let mut s = head(title, "error", 0, Shell::Served);
    let _ = write!(
        s,
        "<nav><a href=\"/\" class=\"brand\">tb view</a><a href=\"/\">Runs</a></nav><main><h1>{}</h1><p>{}</p>",
        esc(title),
        esc(what)
    );
    s.push_str(FOOT);
    s
}

fn file_state(r: &RunView) -> String {
    let mut s = String::new();
    if let Some(u) = &r.unreadable {
        let _ = write!(s, "<p class=\"bad\">cannot read: {}</p>", esc(u));
    }
    if r.writing {
        s.push_str("<p class=\"note\">the last line is still being written</p>");
    }
    if !r.bad.is_empty() {
        let _ = write!(
            s,
            "<details class=\"bad\" open><summary>{} line{} that are not records</summary><ul>",
            r.bad.len(),
            if r.bad.len() == 1 { "" } else { "s" }
        );
        for b in r.bad.iter().take(200) {
            let _ = write!(
                s,
                "<li>line {}: {}</li>",
                b.line,
                esc(&clip(&b.message, 300))
            );
        }
        if r.bad.len() > 200 {
            let _ = write!(s, "<li>… and {} more</li>", r.bad.len() - 200);
        }
        s.push_str("</ul></details>");
    }
    s
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut o: String = s.chars().take(max).collect();
    o.push('…');
    o
}

fn pct_interval(p: f64, se: Option<f64>) -> String {
    match se {
        Some(se) => format!(
            "{} [{}, {}]",
            f4(p),
            f4((p - 1.96 * se).max(0.0)),
            f4((p + 1.96 * se).min(1.0))
        ),
        None => f4(p),
    }
}

/// The runs page: one row per run, the per-domain table, tb report's charts and tables.
pub fn runs_page(snap: &Snapshot) -> String {
    let mut s = head("Runs", "runs", snap.generation, Shell::Served);
    s.push_str(&nav(snap, None));
    s.push_str("<h1>Runs</h1>\n");
    let mut t = String::from(
        "<div class=\"scroll\"><table id=\"runs\"><thead><tr><th>model</th><th>file</th><th class=\"num\">tasks</th><th class=\"num\">attempts</th><th class=\"num\">pass@1 [95%, task-clustered]</th><th class=\"num\">mean pass (ref) [Jeffreys 95%]</th><th class=\"num\">pass@k (ref)</th><th class=\"num\">pass^k (ref)</th><th class=\"num\">observed k/k</th><th class=\"num\">never solved</th><th class=\"num\">retention</th><th class=\"num\">system errors</th>",
    );
    if snap.priced {
        t.push_str(
            "<th class=\"num\">cost / success</th><th class=\"num\">cost / dependable task</th>",
        );
    }
    t.push_str("</tr></thead><tbody>\n");
    for (r, m) in snap.runs.iter().zip(&snap.reports) {
        let su = &m.summary;
        let k = su.pass_at.0.last().map(|p| p.0);
        let at_k = |map: &tb_metrics::agg::KMap| match k {
            Some(k) => format!("k={k}: {}", map.get(k).map_or_else(|| "-".into(), f4)),
            None => "-".into(),
        };
        let _ = write!(
            t,
            "<tr><td><a href=\"/runs/{i}/tasks\">{model}</a></td><td>{file}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{} [{}, {}]</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}/{}</td><td class=\"num\">{}/{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            su.tasks,
            su.attempts,
            pct_interval(su.pass1, su.pass1_se.task_clustered),
            f4(su.mean_pass),
            f4(su.mean_pass_ci[0]),
            f4(su.mean_pass_ci[1]),
            at_k(&su.pass_at),
            at_k(&su.pass_hat),
            su.observed_all.count,
            su.tasks,
            su.never_solved.count,
            su.tasks,
            su.retention.map_or_else(|| "-".into(), f4),
            su.system_errors,
            i = r.index,
            model = esc(&m.model),
            file = esc(&m.file),
        );
        if snap.priced {
            let c = m.cost.as_ref();
            let _ = write!(
                t,
                "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                money(c.and_then(|c| c.per_success)),
                money(c.and_then(|c| c.per_dependable_task))
            );
        }
        t.push_str("</tr>\n");
    }
    t.push_str("</tbody></table></div>\n");
    s.push_str(&t);
    for r in &snap.runs {
        let st = file_state(r);
        if !st.is_empty() {
            let _ = write!(s, "<h3>{}</h3>{st}", esc(&r.run.file));
        }
    }
    if snap.runs.len() >= 2 {
        s.push_str("<h2>Compare</h2><ul class=\"pairs\">");
        for a in &snap.runs {
            for b in &snap.runs {
                if a.index < b.index {
                    let _ = write!(
                        s,
                        "<li><a href=\"/compare/{}/{}\">{} → {}</a></li>",
                        a.index,
                        b.index,
                        esc(&a.run.model),
                        esc(&b.run.model)
                    );
                }
            }
        }
        s.push_str("</ul>\n");
    }
    s.push_str("<h2>Per domain</h2>\n");
    s.push_str(&html::table_html(&format::domain_table(&snap.reports)));
    s.push_str("<h2>Charts</h2>\n<div class=\"charts\">");
    for svg in [
        html::chart_domains(&snap.reports),
        html::chart_consistency(&snap.reports),
        html::chart_breadth(&snap.reports),
        html::chart_k_curves(&snap.reports),
        html::chart_signatures(&snap.reports),
    ] {
        let _ = write!(s, "<figure class=\"chart\">{svg}</figure>");
    }
    s.push_str("</div>\n<h2>All tables</h2>\n<details><summary>the tables of tb report</summary>");
    for t in format::tables(&snap.reports) {
        s.push_str(&html::table_html(&t));
    }
    s.push_str("</details>\n");
    s.push_str(FOOT);
    s
}

/// The tasks page: the grid is drawn by the script from `/api/runs/{run}/tasks`.
pub fn tasks_page(snap: &Snapshot, run: usize) -> String {
    let r = &snap.runs[run];
    let mut s = head(
        &format!("{} tasks", r.run.model),
        "tasks",
        snap.generation,
        Shell::Served,
    );
    s.push_str(&nav(snap, Some(run)));
    let _ = write!(
        s,
        "<h1>Tasks of {} <span class=\"meta\">{}</span></h1>{}",
        esc(&r.run.model),
        esc(&r.run.file),
        file_state(r)
    );
    let _ = write!(
        s,
        r#"<form id="filters" class="filters" data-run="{run}">
<label>search <input type="search" name="q" placeholder="task id or query"></label>
<label>domain <select name="domain"><option value="">all</option></select></label>
<label>test file <select name="file"><option value="">all</option></select></label>
<label>status <select name="status"><option value="">any</option><option value="pass">has a pass</option><option value="fail">has a failure</option><option value="rubric">has a rubric failure</option><option value="error">has a system error</option></select></label>
<label>consistency <select name="consistency"><option value="">any</option><option value="all">k of k</option><option value="flaky">flaky</option><option value="never">never solved</option></select></label>
<label>signature <select name="sig"><option value="">any</option></select></label>
<label>tool <select name="tool"><option value="">any</option></select></label>
<label>sort <select name="sort"><option value="">file order</option><option value="consistency">consistency</option><option value="uid">task id</option></select></label>
</form>
<p class="legend"><span class="cell s-pass">✓</span> passed <span class="cell s-fail">✗</span> failed <span class="cell s-rubric">R</span> rubric failed <span class="cell s-error">!</span> system error · <span id="count"></span></p>
<div class="scroll"><table id="grid"><thead><tr><th>task</th><th>domain</th><th class="num">passed</th><th>attempts</th><th>query</th></tr></thead><tbody><tr><td colspan="5">loading…</td></tr></tbody></table></div>
"#
    );
    s.push_str(FOOT);
    s
}

fn status_badge(st: Status) -> String {
    format!(
        "<span class=\"badge s-{}\">{}</span>",
        st.name(),
        st.label()
    )
}

fn short(v: &Value) -> String {
    match v {
        Value::String(s) => format!("{s:?}"),
        other => other.to_string(),
    }
}

fn diff_class(kind: &str) -> (&'static str, &'static str) {
    if kind.starts_with("present in result") {
        ("extra", "extra effect")
    } else if kind.starts_with("missing in result") {
        ("missing", "missing effect")
    } else if kind == "length mismatch" {
        ("length", "row count")
    } else {
        ("wrong", "wrong value")
    }
}

fn diff_table(diff: &[Value], nothing_changed: bool) -> String {
    let mut s = String::from(
        "<table class=\"diff\"><thead><tr><th>path</th><th>finding</th><th>result</th><th>golden</th></tr></thead><tbody>",
    );
    for e in diff {
        let path = e.get("path").and_then(Value::as_str).unwrap_or("root");
        let kind = e.get("type").and_then(Value::as_str).unwrap_or("");
        // As tb-metrics counts them: with no state-changing call, every difference is an
        // effect of the golden calls that the attempt did not make.
        let (cls, label) = if nothing_changed {
            ("missing", "missing effect")
        } else {
            diff_class(kind)
        };
        let cell = |k: &str| {
            e.get(k)
                .map_or_else(String::new, |v| esc(&clip(&short(v), 2000)))
        };
        let _ = write!(
            s,
            "<tr class=\"d-{cls}\"><td class=\"path\">{}</td><td>{label}<br><span class=\"meta\">{}</span></td><td>{}</td><td>{}</td></tr>",
            esc(path),
            esc(kind),
            cell("result"),
            cell("golden")
        );
    }
    s.push_str("</tbody></table>");
    s
}

fn pre(text: &str) -> String {
    match text.char_indices().nth(MAX_BLOCK_CHARS) {
        None => format!("<pre>{}</pre>", esc(text)),
        Some((cut, _)) => format!(
            "<pre>{}</pre><p class=\"note\">… {} more characters (the whole text is in the attempt's JSON)</p>",
            esc(&text[..cut]),
            text[cut..].chars().count()
        ),
    }
}

fn kv_table(rows: &[(String, String)]) -> String {
    let mut s = String::from("<table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{}</th><td>{}</td></tr>", esc(k), esc(v));
    }
    s.push_str("</tbody></table>");
    s
}

fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The body of one attempt: verdict, failure, diff, rubrics, usage, timings, conversation,
/// provenance. `link_base` prefixes links to other attempts of the same run.
pub fn attempt_body(r: &RunView, i: usize, priced: bool) -> String {
    let a = &r.run.attempts[i];
    let info = &r.info[i];
    let mut s = String::new();
    let rep = a.repetition.map_or_else(|| "?".into(), |x| x.to_string());
    let _ = write!(
        s,
        "<section class=\"attempt\" data-status=\"{}\"><h2 class=\"uid\">{} <span class=\"meta\">repetition {rep} · line {} · {}</span> {}</h2>",
        info.status.name(),
        esc(&a.uid),
        a.line,
        esc(a.domain.as_deref().unwrap_or("-")),
        status_badge(info.status)
    );
    // Verdict and test message.
    s.push_str("<h3>Verdict</h3>");
    let mut rows = vec![("finish reason".to_string(), a.finish_reason.clone())];
    if let Some(t) = &a.test_result {
        rows.push((
            "test result".into(),
            format!(
                "{}{}",
                if t.result { "passed" } else { "failed" },
                if t.is_system_error {
                    " (test system error)"
                } else {
                    ""
                }
            ),
        ));
        if let Some(l) = t.lineno.filter(|l| *l >= 0) {
            rows.push(("test line".into(), format!("{l}: {}", t.line_content)));
        }
    } else {
        rows.push(("test result".into(), "none (not graded)".into()));
    }
    if let Some(e) = a.metadata.get("error") {
        rows.push(("error".into(), value_text(e)));
    }
    if let Some(e) = a.metadata.get("test_error") {
        rows.push(("test error".into(), value_text(e)));
    }
    s.push_str(&kv_table(&rows));
    if let Some(t) = &a.test_result
        && !t.tb.is_empty()
    {
        let _ = write!(s, "<h4>Test message</h4>{}", pre(&clip(&t.tb, 20_000)));
    }
    // Failure signature.
    if let Some(f) = &info.failure {
        let c = &f.classes;
        let _ = write!(
            s,
            "<h3>Failure</h3><p class=\"signature\">signature <b class=\"sig\">{}</b> · clean termination {} · wrong values {} · extra effects {} · missing effects {} · rubrics failed {}</p>",
            f.signature.name(),
            if f.clean_termination { "yes" } else { "no" },
            c.wrong_value,
            c.extra_effect,
            c.missing_effect,
            c.rubric_failed
        );
        if !f.unrecovered_tools.is_empty() {
            let _ = write!(
                s,
                "<p>unrecovered tool errors or empty lookups: {}</p>",
                esc(&f.unrecovered_tools.join(", "))
            );
        }
    }
    // State against golden.
    s.push_str("<h3>Database against golden</h3>");
    let nothing_changed = !failure::calls(&a.messages).iter().any(|c| c.state_changing);
    match &a.verdict {
        None => s.push_str(
            "<p class=\"note\">no verdict in this record: the state diff is not available</p>",
        ),
        Some(v) => {
            for sv in &v.state {
                if sv.passed {
                    let _ = write!(
                        s,
                        "<p class=\"ok\">{}: matches golden (hash {})</p>",
                        esc(&sv.server),
                        esc(sv.result_hash.get(..12).unwrap_or(&sv.result_hash))
                    );
                } else {
                    let _ = write!(
                        s,
                        "<p class=\"bad\">{}: differs (result {} vs golden {}), {} finding{}</p>{}",
                        esc(&sv.server),
                        esc(sv.result_hash.get(..12).unwrap_or(&sv.result_hash)),
                        esc(sv.golden_hash.get(..12).unwrap_or(&sv.golden_hash)),
                        sv.diff.len(),
                        if sv.diff.len() == 1 { "" } else { "s" },
                        diff_table(&sv.diff, nothing_changed)
                    );
                }
            }
            if !v.rubrics.is_empty() {
                s.push_str("<h3>Rubrics</h3><table class=\"rubrics\"><thead><tr><th>question</th><th>judge</th><th>answer</th></tr></thead><tbody>");
                for rb in &v.rubrics {
                    let _ = write!(
                        s,
                        "<tr class=\"{}\"><td>{}</td><td>{}</td><td>{}</td></tr>",
                        if rb.passed { "ok" } else { "bad" },
                        esc(&rb.rubric),
                        if rb.passed { "yes" } else { "no" },
                        esc(&rb.answer)
                    );
                }
                s.push_str("</tbody></table>");
            }
        }
    }
    // Usage, cost, timings.
    s.push_str("<h3>Usage</h3><table class=\"usage\"><thead><tr><th>role</th><th class=\"num\">input</th><th class=\"num\">cached</th><th class=\"num\">output</th><th class=\"num\">reasoning</th>");
    if priced {
        s.push_str("<th class=\"num\">cost</th>");
    }
    s.push_str("</tr></thead><tbody>");
    let u = a.role_usage();
    for (role, us, cost) in [
        ("agent", &u.agent, info.cost.map(|c| c.agent)),
        ("user", &u.user, info.cost.map(|c| c.user)),
        ("judge", &u.judge, info.cost.map(|c| c.judge)),
    ] {
        let _ = write!(
            s,
            "<tr><td>{role}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>",
            us.input_tokens,
            us.input_tokens_details.cached_tokens,
            us.output_tokens,
            us.output_tokens_details.reasoning_tokens
        );
        if priced {
            let _ = write!(s, "<td class=\"num\">{}</td>", money(cost));
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    let timings: Vec<(String, String)> = a
        .metadata
        .iter()
        .filter(|(k, _)| k.starts_with("time_"))
        .map(|(k, v)| {
            (
                k.trim_start_matches("time_").replace('_', " "),
                v.as_f64()
                    .map_or_else(|| value_text(v), |x| format!("{x:.3} s")),
            )
        })
        .collect();
    if !timings.is_empty() {
        s.push_str("<h3>Timings</h3>");
        s.push_str(&kv_table(&timings));
    }
    // Conversation.
    s.push_str(&conversation(&a.messages));
    // Provenance and metadata.
    let prov: Vec<(String, String)> = a
        .provenance
        .iter()
        .map(|(k, v)| (k.clone(), value_text(v)))
        .collect();
    s.push_str("<h3>Provenance</h3>");
    if prov.is_empty() {
        s.push_str("<p class=\"note\">none in this record</p>");
    } else {
        s.push_str(&kv_table(&prov));
    }
    let meta: Vec<(String, String)> = a
        .metadata
        .iter()
        .filter(|(k, _)| !k.starts_with("time_"))
        .map(|(k, v)| (k.clone(), value_text(v)))
        .collect();
    if !meta.is_empty() {
        s.push_str("<details><summary>metadata</summary>");
        s.push_str(&kv_table(&meta));
        s.push_str("</details>");
    }
    s.push_str("</section>");
    s
}

fn flag(m: &serde_json::Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn conversation(messages: &[Message]) -> String {
    let calls = failure::calls(messages);
    let changing: BTreeMap<&str, bool> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.state_changing))
        .collect();
    let mut s = format!(
        "<h3>Conversation <span class=\"meta\">{} messages</span> <button type=\"button\" class=\"toggle-all\">expand all</button></h3><ol class=\"timeline\">",
        messages.len()
    );
    for m in messages {
        match m {
            Message::Text {
                metadata,
                role,
                content,
            } => {
                let tag = metadata
                    .get("tag")
                    .and_then(Value::as_str)
                    .unwrap_or("text");
                let simulated = flag(metadata, "is_user_llm");
                let mut label = match role.as_str() {
                    "assistant" => "agent".to_string(),
                    other => other.to_string(),
                };
                if tag != "text" {
                    label.push_str(" · ");
                    label.push_str(tag);
                }
                if simulated {
                    label.push_str(" · simulated user");
                }
                let open = role != "system" && tag != "think";
                let _ = write!(
                    s,
                    "<li class=\"msg r-{}{}\"><details{}><summary><span class=\"role\">{}</span> <span class=\"preview\">{}</span></summary>{}</details></li>",
                    esc(role),
                    if simulated { " simulated" } else { "" },
                    if open { " open" } else { "" },
                    esc(&label),
                    esc(&clip(content.lines().next().unwrap_or(""), 120)),
                    pre(content)
                );
            }
            Message::ParallelToolCall {
                metadata,
                tool_calls,
            } => {
                let end = flag(metadata, "is_end_turn_tool");
                for c in tool_calls {
                    let mut tags = Vec::new();
                    if end {
                        tags.push("end turn".to_string());
                    }
                    if changing.get(c.id.as_str()).copied().unwrap_or(false) {
                        tags.push("state-changing".into());
                    }
                    if let Some(e) = c.metadata.get("error").filter(|e| !e.is_null()) {
                        tags.push(format!("argument error: {}", value_text(e)));
                    }
                    let args = serde_json::to_string_pretty(&c.arguments)
                        .unwrap_or_else(|_| c.arguments.to_string());
                    let _ = write!(
                        s,
                        "<li class=\"msg call\"><details open><summary><span class=\"role\">tool call</span> <code>{}</code> <span class=\"meta\">id {}</span> {}</summary>{}</details></li>",
                        esc(&c.name),
                        esc(&c.id),
                        tags.iter()
                            .map(|t| format!("<span class=\"tag\">{}</span>", esc(t)))
                            .collect::<String>(),
                        pre(&args)
                    );
                }
            }
            Message::ToolResponse {
                name, content, id, ..
            } => {
                let flag = if is_error_content(content) {
                    "<span class=\"tag bad\">error</span>"
                } else if is_empty_content(content) {
                    "<span class=\"tag\">empty</span>"
                } else {
                    ""
                };
                let _ = write!(
                    s,
                    "<li class=\"msg result\"><details{}><summary><span class=\"role\">tool result</span> <code>{}</code> <span class=\"meta\">id {} · {} chars</span> {flag}</summary>{}</details></li>",
                    if content.len() <= 2000 { " open" } else { "" },
                    esc(name),
                    esc(id),
                    content.chars().count(),
                    pre(content)
                );
            }
        }
    }
    s.push_str("</ol>");
    s
}

/// The attempt page, with links to the previous and next attempt and the next failure.
pub fn attempt_page(snap: &Snapshot, run: usize, i: usize) -> String {
    let r = &snap.runs[run];
    let a = &r.run.attempts[i];
    let mut s = head(&a.uid, "attempt", snap.generation, Shell::Served);
    s.push_str(&nav(snap, Some(run)));
    let p = r.pos[i];
    let link = |j: usize| format!("/runs/{run}/attempts/{}", r.run.attempts[j].line);
    let prev = p.checked_sub(1).map(|q| link(r.order[q]));
    let next = r.order.get(p + 1).map(|&j| link(j));
    let next_fail = r.order[p + 1..]
        .iter()
        .chain(&r.order[..p])
        .find(|&&j| r.info[j].status != Status::Pass)
        .map(|&j| link(j));
    s.push_str("<p class=\"stepper\">");
    for (id, label, href) in [
        ("prev", "← previous (k)", prev),
        ("next", "next (j) →", next),
        ("next-failure", "next failure (n)", next_fail),
    ] {
        match href {
            Some(h) => {
                let _ = write!(s, "<a id=\"{id}\" href=\"{h}\">{label}</a> ");
            }
            None => {
                let _ = write!(s, "<span class=\"off\">{label}</span> ");
            }
        }
    }
    let _ = write!(
        s,
        "· <a href=\"/runs/{run}/tasks?q={}\">this task in the grid</a> · <a href=\"/api/runs/{run}/attempts/{}\">JSON</a> · attempt {} of {}</p>",
        url_enc(&a.uid),
        a.line,
        p + 1,
        r.order.len()
    );
    s.push_str(&attempt_body(r, i, snap.priced));
    s.push_str(FOOT);
    s
}

fn first_attempt(r: &RunView, uid: &str, prefer_fail: bool) -> Option<usize> {
    let mut of: Vec<usize> = r
        .order
        .iter()
        .copied()
        .filter(|&i| r.run.attempts[i].uid == uid)
        .collect();
    if prefer_fail {
        of.sort_by_key(|&i| r.info[i].status == Status::Pass);
    } else {
        of.sort_by_key(|&i| r.info[i].status != Status::Pass);
    }
    of.first().copied()
}

/// The compare page: what `tb sbs` computes, the tasks whose outcome flipped first.
pub fn compare_page(snap: &Snapshot, a: usize, b: usize) -> String {
    let (ra, rb) = (&snap.runs[a], &snap.runs[b]);
    let rep = tb_metrics::sbs::compare(&ra.run, &rb.run, crate::api::LIFT);
    let mut s = head("Compare", "compare", snap.generation, Shell::Served);
    s.push_str(&nav(snap, None));
    let _ = write!(
        s,
        "<h1>Compare <span class=\"meta\">baseline</span> {} <span class=\"meta\">→ candidate</span> {}</h1>",
        esc(&ra.run.model),
        esc(&rb.run.model)
    );
    if snap.runs.len() > 2 {
        s.push_str("<p>pairs: ");
        for x in &snap.runs {
            for y in &snap.runs {
                if x.index != y.index {
                    let _ = write!(
                        s,
                        "<a href=\"/compare/{}/{}\">{}→{}</a> ",
                        x.index, y.index, x.index, y.index
                    );
                }
            }
        }
        s.push_str("</p>");
    }
    let _ = write!(
        s,
        "<p>pass@1 {} → {} (Δ {}{}) · better {} · worse {} · no clear change {} · <a href=\"/compare/{b}/{a}\">swap</a> · <a href=\"/api/compare/{a}/{b}\">JSON</a></p>",
        f4(rep.baseline_pass1),
        f4(rep.candidate_pass1),
        f4(rep.delta),
        rep.delta_se
            .map_or_else(String::new, |se| format!(" ± {}", f4(se))),
        rep.better,
        rep.worse,
        rep.no_clear_change
    );
    let flipped = |t: &tb_metrics::sbs::TaskComparison| {
        (t.baseline.passed == 0) != (t.candidate.passed == 0)
            || (t.baseline.passed == t.baseline.runs) != (t.candidate.passed == t.candidate.runs)
    };
    let row = |t: &tb_metrics::sbs::TaskComparison| {
        format!(
            "<tr><td><a class=\"pair\" href=\"/compare/{a}/{b}/task?uid={}\">{}</a></td><td class=\"num\">{}/{}</td><td class=\"num\">{}/{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
            url_enc(&t.uid),
            esc(&t.uid),
            t.baseline.passed,
            t.baseline.runs,
            t.candidate.passed,
            t.candidate.runs,
            f4(t.prob_better),
            match t.change {
                tb_metrics::sbs::Change::Better => "better",
                tb_metrics::sbs::Change::Worse => "worse",
                tb_metrics::sbs::Change::NoClearChange => "no clear change",
            }
        )
    };
    const HEAD: &str = "<thead><tr><th>task</th><th class=\"num\">baseline passed</th><th class=\"num\">candidate passed</th><th class=\"num\">P(candidate better)</th><th>change</th></tr></thead>";
    let flips: Vec<&_> = rep.tasks.iter().filter(|t| flipped(t)).collect();
    let _ = write!(
        s,
        "<h2>Tasks that flipped <span class=\"meta\">{} (never passed ↔ passed, or every attempt ↔ not every attempt)</span></h2><table id=\"flipped\">{HEAD}<tbody>",
        flips.len()
    );
    for t in &flips {
        s.push_str(&row(t));
    }
    s.push_str("</tbody></table>");
    let _ = write!(
        s,
        "<details><summary>all {} tasks in both runs</summary><table>{HEAD}<tbody>",
        rep.tasks.len()
    );
    for t in &rep.tasks {
        s.push_str(&row(t));
    }
    s.push_str("</tbody></table></details>");
    for (label, list) in [
        ("only in the baseline", &rep.only_baseline),
        ("only in the candidate", &rep.only_candidate),
        ("system errors on both sides", &rep.all_errors),
    ] {
        if !list.is_empty() {
            let _ = write!(s, "<p>{label}: {}</p>", esc(&list.join(", ")));
        }
    }
    s.push_str(FOOT);
    s
}

/// One task of two runs side by side: in each run, its first failing attempt if any (else its
/// first attempt).
pub fn pair_page(snap: &Snapshot, a: usize, b: usize, uid: &str) -> String {
    let mut s = head(uid, "pair", snap.generation, Shell::Served);
    s.push_str(&nav(snap, None));
    let _ = write!(
        s,
        "<h1>{} <span class=\"meta\"><a href=\"/compare/{a}/{b}\">back to the comparison</a></span></h1><div class=\"pair\">",
        esc(uid)
    );
    for (k, side) in [(a, "baseline"), (b, "candidate")] {
        let r = &snap.runs[k];
        let _ = write!(
            s,
            "<div class=\"side\"><h2>{side}: {}</h2>",
            esc(&r.run.model)
        );
        match first_attempt(r, uid, true) {
            Some(i) => {
                let _ = write!(
                    s,
                    "<p><a href=\"/runs/{k}/attempts/{}\">open this attempt</a></p>{}",
                    r.run.attempts[i].line,
                    attempt_body(r, i, snap.priced)
                );
            }
            None => s.push_str("<p class=\"note\">this run has no attempt of the task</p>"),
        }
        s.push_str("</div>");
    }
    s.push_str("</div>");
    s.push_str(FOOT);
    s
}

/// See [`crate::report_attempts`].
pub fn report_attempts(
    runs: Vec<tb_metrics::Run>,
    prices: Option<&tb_metrics::cost::PriceTable>,
    set: crate::AttemptSet,
) -> (String, usize) {
    // The viewer's style without its page layout (the report keeps its own).
    let css: String = crate::CSS
        .lines()
        .filter(|l| {
            !["body{", "main{", "nav{", "nav ", "h1{", ".live{"]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .collect();
    let mut s = format!("<style>{css}</style>\n<h2>Attempts</h2>\n");
    let mut n = 0;
    for (k, run) in runs.into_iter().enumerate() {
        let r = RunView::new(
            k,
            std::sync::Arc::new(run),
            prices,
            crate::model::FileState::default(),
        );
        let chosen: Vec<usize> = r
            .order
            .iter()
            .copied()
            .filter(|&i| set == crate::AttemptSet::All || r.info[i].status != Status::Pass)
            .collect();
        let _ = write!(
            s,
            "<h3>{} <span class=\"meta\">{} · {} attempt{}</span></h3><p class=\"legend\">",
            esc(&r.run.model),
            esc(&r.run.file),
            chosen.len(),
            if chosen.len() == 1 { "" } else { "s" }
        );
        for &i in &chosen {
            let a = &r.run.attempts[i];
            let st = r.info[i].status;
            let _ = write!(
                s,
                "<a class=\"cell s-{}\" href=\"#a-{k}-{}\" title=\"{} · repetition {}\">{}</a>",
                st.name(),
                a.line,
                esc(&a.uid),
                a.repetition.map_or_else(|| "?".into(), |x| x.to_string()),
                match st {
                    Status::Pass => "✓",
                    Status::Fail => "✗",
                    Status::Rubric => "R",
                    Status::Error => "!",
                }
            );
        }
        s.push_str("</p>\n");
        for &i in &chosen {
            let _ = writeln!(
                s,
                "<div id=\"a-{k}-{}\" class=\"report-attempt\"><p class=\"meta\">{}</p>{}</div>",
                r.run.attempts[i].line,
                esc(&r.run.model),
                attempt_body(&r, i, prices.is_some())
            );
            n += 1;
        }
    }
    (s, n)
}
