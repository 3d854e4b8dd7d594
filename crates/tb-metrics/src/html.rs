//! A self-contained HTML report: inline CSS and inline SVG charts, no script, no external
//! asset, every text escaped.

use crate::ModelReport;
use crate::format::{self, Table};
use std::fmt::Write as _;

/// Escapes text for HTML element content and attribute values. Control characters other than
/// newline and tab (ANSI escapes, NUL...) are shown as their Unicode control pictures
/// (`\u{1b}` as `␛`), so that they are seen rather than passed to the page.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            '\n' | '\t' => o.push(c),
            c if u32::from(c) < 0x20 => {
                o.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{fffd}'));
            }
            '\u{7f}' => o.push('\u{2421}'),
            c if c.is_control() => o.push('\u{fffd}'),
            _ => o.push(c),
        }
    }
    o
}

const PALETTE: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
];

fn color(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

const W: f64 = 680.0;
const H: f64 = 340.0;
const ML: f64 = 56.0;
const MR: f64 = 20.0;
const MT: f64 = 40.0;
const MB: f64 = 64.0;

fn svg_open(title: &str) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" role="img" aria-label="{t}"><title>{t}</title><rect width="{W}" height="{H}" fill="#fff"/>"##,
        t = esc(title)
    )
}

fn legend(models: &[String]) -> String {
    let mut s = String::new();
    let mut x = ML;
    for (i, m) in models.iter().enumerate() {
        let label: String = m.chars().take(28).collect();
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="12" width="12" height="12" fill="{}"/><text x="{:.1}" y="22" font-size="12">{}</text>"#,
            color(i),
            x + 16.0,
            esc(&label)
        );
        x += 28.0 + 7.0 * label.chars().count() as f64;
    }
    s
}

/// Axes with ticks: x and y ranges map to the plot area.
struct Axes {
    x0: f64,
    x1: f64,
    y0: f64,
    y1: f64,
}

impl Axes {
    /// Both axes from 0 to 1 (shares and rates).
    const UNIT: Axes = Axes {
        x0: 0.0,
        x1: 1.0,
        y0: 0.0,
        y1: 1.0,
    };

    fn px(&self, x: f64) -> f64 {
        let span = if self.x1 > self.x0 {
            self.x1 - self.x0
        } else {
            1.0
        };
        ML + (x - self.x0) / span * (W - ML - MR)
    }
    fn py(&self, y: f64) -> f64 {
        let span = if self.y1 > self.y0 {
            self.y1 - self.y0
        } else {
            1.0
        };
        H - MB - (y - self.y0) / span * (H - MT - MB)
    }
    fn draw(&self, xlabel: &str, ylabel: &str, xticks: bool) -> String {
        let mut s = String::new();
        let (ys, yd) = nice_ticks(self.y0, self.y1);
        for y in ys {
            let py = self.py(y);
            let _ = write!(
                s,
                r##"<line x1="{ML}" x2="{:.1}" y1="{py:.1}" y2="{py:.1}" stroke="#e5e5e5"/><text x="{:.1}" y="{:.1}" font-size="11" text-anchor="end">{y:.yd$}</text>"##,
                W - MR,
                ML - 6.0,
                py + 4.0,
            );
        }
        if xticks {
            let (xs, xd) = nice_ticks(self.x0, self.x1);
            for x in xs {
                let px = self.px(x);
                let _ = write!(
                    s,
                    r##"<line x1="{px:.1}" x2="{px:.1}" y1="{MT}" y2="{:.1}" stroke="#f0f0f0"/><text x="{px:.1}" y="{:.1}" font-size="11" text-anchor="middle">{x:.xd$}</text>"##,
                    H - MB,
                    H - MB + 16.0,
                );
            }
        }
        let _ = write!(
            s,
            r##"<line x1="{ML}" x2="{ML}" y1="{MT}" y2="{:.1}" stroke="#333"/><line x1="{ML}" x2="{:.1}" y1="{:.1}" y2="{:.1}" stroke="#333"/><text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">{}</text><text transform="translate(14,{:.1}) rotate(-90)" font-size="12" text-anchor="middle">{}</text>"##,
            H - MB,
            W - MR,
            H - MB,
            H - MB,
            (ML + W - MR) / 2.0,
            H - 12.0,
            esc(xlabel),
            (MT + H - MB) / 2.0,
            esc(ylabel)
        );
        s
    }
}

/// Ticks at 1, 2 or 5 times a power of ten, about five of them over `[lo, hi]`, and the
/// number of decimals that shows them exactly.
fn nice_ticks(lo: f64, hi: f64) -> (Vec<f64>, usize) {
    let span = hi - lo;
    if span.is_nan() || span <= 0.0 || !span.is_finite() {
        return (vec![lo], 2);
    }
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|st| *st >= raw)
        .unwrap_or(10.0 * mag);
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "0 or more, small"
    )]
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let mut out = Vec::new();
    let mut i = (lo / step).ceil();
    while i * step <= hi + step * 1e-9 && out.len() < 50 {
        out.push(i * step);
        i += 1.0;
    }
    (out, decimals.min(6))
}

/// Grouped bars: pass@1 by domain, one bar per model.
pub fn chart_domains(reports: &[ModelReport]) -> String {
    let models: Vec<String> = reports.iter().map(|m| m.model.clone()).collect();
    let mut domains: Vec<String> = reports
        .iter()
        .flat_map(|m| m.per_domain.keys().cloned())
        .collect();
    domains.sort();
    domains.dedup();
    let ax = Axes::UNIT;
    let mut s = svg_open("pass@1 by domain");
    s.push_str(&legend(&models));
    s.push_str(&ax.draw("domain", "pass@1", false));
    let n = domains.len().max(1) as f64;
    let group = (W - ML - MR) / n;
    let bw = (group * 0.8 / models.len().max(1) as f64).min(40.0);
    for (di, d) in domains.iter().enumerate() {
        let gx = ML + group * di as f64 + (group - bw * models.len() as f64) / 2.0;
        for (mi, m) in reports.iter().enumerate() {
            if let Some(r) = m.per_domain.get(d) {
                let v = r.summary.pass1;
                let y = ax.py(v);
                let _ = write!(
                    s,
                    r#"<rect x="{:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{}"><title>{}: {} pass@1 {:.4}</title></rect>"#,
                    gx + bw * mi as f64,
                    bw - 1.0,
                    (ax.py(0.0) - y).max(0.0),
                    color(mi),
                    esc(&m.model),
                    esc(d),
                    v
                );
            }
        }
        let label: String = d.chars().take(28).collect();
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle">{}</text>"#,
            ML + group * (di as f64 + 0.5),
            H - MB + 14.0 + 12.0 * (di % 2) as f64,
            esc(&label)
        );
    }
    s.push_str("</svg>");
    s
}

/// A scatter chart's labels and decorations.
struct ScatterSpec<'a> {
    title: &'a str,
    xlabel: &'a str,
    ylabel: &'a str,
    diagonal: bool,
    frontier: &'a [(f64, f64)],
}

/// A point of a scatter chart.
struct Pt {
    series: usize,
    x: f64,
    y: f64,
    label: String,
    /// Drawn with a ring (on the Pareto frontier).
    ring: bool,
}

fn scatter(spec: ScatterSpec<'_>, models: &[String], pts: &[Pt], ax: &Axes) -> String {
    let ScatterSpec {
        title,
        xlabel,
        ylabel,
        diagonal,
        frontier,
    } = spec;
    let mut s = svg_open(title);
    s.push_str(&legend(models));
    s.push_str(&ax.draw(xlabel, ylabel, true));
    if diagonal {
        let _ = write!(
            s,
            r##"<line x1="{:.1}" y1="{:.1}" x2="{:.1}" y2="{:.1}" stroke="#999" stroke-dasharray="4 4"><title>y = x</title></line>"##,
            ax.px(0.0),
            ax.py(0.0),
            ax.px(1.0),
            ax.py(1.0)
        );
    }
    if frontier.len() > 1 {
        let path: Vec<String> = frontier
            .iter()
            .map(|(x, y)| format!("{:.1},{:.1}", ax.px(*x), ax.py(*y)))
            .collect();
        let _ = write!(
            s,
            r##"<polyline points="{}" fill="none" stroke="#555" stroke-width="1.5" stroke-dasharray="6 3"><title>Pareto frontier</title></polyline>"##,
            path.join(" ")
        );
    }
    for p in pts {
        if p.ring {
            let _ = write!(
                s,
                r##"<circle cx="{:.1}" cy="{:.1}" r="10" fill="none" stroke="#222" stroke-width="1.5"/>"##,
                ax.px(p.x),
                ax.py(p.y)
            );
        }
        let _ = write!(
            s,
            r##"<circle cx="{:.1}" cy="{:.1}" r="6" fill="{}" fill-opacity="0.85" stroke="#222"><title>{}</title></circle>"##,
            ax.px(p.x),
            ax.py(p.y),
            color(p.series),
            esc(&p.label)
        );
    }
    s.push_str("</svg>");
    s
}

/// pass@1 against observed k/k share, per model (and per domain, smaller marks).
pub fn chart_consistency(reports: &[ModelReport]) -> String {
    let models: Vec<String> = reports.iter().map(|m| m.model.clone()).collect();
    let pts: Vec<Pt> = reports
        .iter()
        .enumerate()
        .map(|(i, m)| Pt {
            series: i,
            x: m.summary.pass1,
            y: m.summary.observed_all.share,
            label: format!(
                "{}: pass@1 {:.4}, observed k/k {:.4}",
                m.model, m.summary.pass1, m.summary.observed_all.share
            ),
            ring: false,
        })
        .collect();
    let spec = ScatterSpec {
        title: "pass@1 against observed k/k",
        xlabel: "pass@1",
        ylabel: "observed k/k (share of tasks passing every attempt)",
        diagonal: true,
        frontier: &[],
    };
    scatter(spec, &models, &pts, &Axes::UNIT)
}

/// Breadth (pass@k at the largest k) against consistency (observed k/k).
pub fn chart_breadth(reports: &[ModelReport]) -> String {
    let models: Vec<String> = reports.iter().map(|m| m.model.clone()).collect();
    let pts: Vec<Pt> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let (k, v) = *m.summary.pass_at.0.last()?;
            Some(Pt {
                series: i,
                x: v,
                y: m.summary.observed_all.share,
                label: format!(
                    "{}: pass@{k} {:.4}, observed k/k {:.4}",
                    m.model, v, m.summary.observed_all.share
                ),
                ring: false,
            })
        })
        .collect();
    let spec = ScatterSpec {
        title: "Breadth against consistency",
        xlabel: "breadth: pass@k (largest k)",
        ylabel: "consistency: observed k/k",
        diagonal: true,
        frontier: &[],
    };
    scatter(spec, &models, &pts, &Axes::UNIT)
}

/// pass@k and pass^k curves over k, per model.
pub fn chart_k_curves(reports: &[ModelReport]) -> String {
    let models: Vec<String> = reports.iter().map(|m| m.model.clone()).collect();
    let mut ks: Vec<u64> = reports
        .iter()
        .flat_map(|m| m.summary.pass_at.0.iter().map(|p| p.0))
        .collect();
    ks.sort_unstable();
    ks.dedup();
    let ax = Axes {
        x0: -0.5,
        x1: ks.len() as f64 - 0.5,
        y0: 0.0,
        y1: 1.0,
    };
    let mut s = svg_open("pass@k (solid) and pass^k (dashed) over k");
    s.push_str(&legend(&models));
    s.push_str(&ax.draw("k", "rate", false));
    for (i, k) in ks.iter().enumerate() {
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{k}</text>"#,
            ax.px(i as f64),
            H - MB + 16.0
        );
    }
    for (mi, m) in reports.iter().enumerate() {
        for (map, dash) in [
            (&m.summary.pass_at, ""),
            (&m.summary.pass_hat, r#" stroke-dasharray="5 4""#),
        ] {
            let pts: Vec<(f64, f64)> = ks
                .iter()
                .enumerate()
                .filter_map(|(i, k)| map.get(*k).map(|v| (ax.px(i as f64), ax.py(v))))
                .collect();
            let path: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{}" stroke-width="2"{dash}/>"#,
                path.join(" "),
                color(mi)
            );
            for (x, y) in pts {
                let _ = write!(
                    s,
                    r#"<circle cx="{x:.1}" cy="{y:.1}" r="3" fill="{}"/>"#,
                    color(mi)
                );
            }
        }
    }
    s.push_str("</svg>");
    s
}

fn cost_chart(
    reports: &[ModelReport],
    title: &str,
    xlabel: &str,
    ylabel: &str,
    get: impl Fn(&ModelReport) -> Option<(f64, f64, bool)>,
) -> Option<String> {
    let models: Vec<String> = reports.iter().map(|m| m.model.clone()).collect();
    let pts: Vec<Pt> = reports
        .iter()
        .enumerate()
        .filter_map(|(i, m)| {
            let (x, y, on) = get(m)?;
            let front = if on { " (Pareto frontier)" } else { "" };
            Some(Pt {
                series: i,
                x,
                y,
                label: format!("{}: cost {x:.4}, {ylabel} {y:.4}{front}", m.model),
                ring: on,
            })
        })
        .collect();
    if pts.is_empty() {
        return None;
    }
    let mut frontier: Vec<(f64, f64)> = reports
        .iter()
        .filter_map(|m| get(m).filter(|p| p.2).map(|p| (p.0, p.1)))
        .collect();
    frontier.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let xmax = pts.iter().map(|p| p.x).fold(0.0, f64::max);
    let ax = Axes {
        x0: 0.0,
        x1: if xmax > 0.0 { xmax * 1.1 } else { 1.0 },
        y0: 0.0,
        y1: 1.0,
    };
    let spec = ScatterSpec {
        title,
        xlabel,
        ylabel,
        diagonal: false,
        frontier: &frontier,
    };
    Some(scatter(spec, &models, &pts, &ax))
}

/// Failure signatures: one stacked bar per model (shares of model failures).
pub fn chart_signatures(reports: &[ModelReport]) -> String {
    let sigs = crate::failure::Signature::model_failure_names();
    let h = 60.0 + 34.0 * reports.len() as f64 + 40.0;
    let mut s = format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{h}" viewBox="0 0 {W} {h}" role="img" aria-label="Failure signatures"><title>Failure signatures</title><rect width="{W}" height="{h}" fill="#fff"/>"##
    );
    let mut x = 10.0;
    for (i, g) in sigs.iter().enumerate() {
        let _ = write!(
            s,
            r#"<rect x="{x:.1}" y="12" width="12" height="12" fill="{}"/><text x="{:.1}" y="22" font-size="11">{}</text>"#,
            color(i + 3),
            x + 16.0,
            esc(g)
        );
        x += 24.0 + 6.2 * g.len() as f64;
    }
    let left = 150.0;
    let width = W - left - MR;
    for (mi, m) in reports.iter().enumerate() {
        let y = 44.0 + 34.0 * mi as f64;
        let label: String = m.model.chars().take(20).collect();
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="end">{} ({})</text>"#,
            left - 6.0,
            y + 17.0,
            esc(&label),
            m.failures.model_failures
        );
        let mut cx = left;
        for (i, g) in sigs.iter().enumerate() {
            let v = m.failures.signature_share.get(*g).copied().unwrap_or(0.0);
            if v <= 0.0 {
                continue;
            }
            let w = v * width;
            let _ = write!(
                s,
                r#"<rect x="{cx:.1}" y="{y:.1}" width="{w:.1}" height="24" fill="{}"><title>{}: {} {:.1}%</title></rect>"#,
                color(i + 3),
                esc(&m.model),
                g,
                v * 100.0
            );
            if w > 34.0 {
                let _ = write!(
                    s,
                    r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#fff" text-anchor="middle">{:.0}%</text>"##,
                    cx + w / 2.0,
                    y + 16.0,
                    v * 100.0
                );
            }
            cx += w;
        }
        if m.failures.model_failures == 0 {
            let _ = write!(
                s,
                r##"<text x="{:.1}" y="{:.1}" font-size="11" fill="#666">no model failures</text>"##,
                left + 4.0,
                y + 16.0
            );
        }
    }
    s.push_str("</svg>");
    s
}

/// A table as HTML (title, header, rows, notes), every cell escaped.
pub fn table_html(t: &Table) -> String {
    let mut s = format!(
        "<h3>{}</h3>\n<div class=\"scroll\"><table>\n<thead><tr>",
        esc(&t.title)
    );
    for (i, h) in t.header.iter().enumerate() {
        let _ = write!(
            s,
            "<th{}>{}</th>",
            if t.right[i] { " class=\"num\"" } else { "" },
            esc(h)
        );
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in &t.rows {
        s.push_str("<tr>");
        for (i, c) in r.iter().enumerate() {
            let _ = write!(
                s,
                "<td{}>{}</td>",
                if t.right.get(i).copied().unwrap_or(false) {
                    " class=\"num\""
                } else {
                    ""
                },
                esc(c)
            );
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody></table></div>\n");
    for n in &t.notes {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", esc(n));
    }
    s
}

const CSS: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:24px auto;max-width:1400px;color:#222;padding:0 16px}\
h1{font-size:22px}h2{font-size:18px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}\
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(600px,1fr));gap:16px}.chart{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px;background:#fff}.chart svg{max-width:100%;height:auto}\
.chart p{margin:4px 0 0;font-size:12px;color:#555;max-width:680px}\
.scroll{overflow-x:auto}table{border-collapse:collapse;font-size:12px;margin-bottom:4px}\
th,td{border:1px solid #ddd;padding:3px 8px;white-space:nowrap}th{background:#f4f4f4}td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
tr:nth-child(even) td{background:#fafafa}.note{font-size:12px;color:#555;margin:2px 0}.meta{font-size:12px;color:#555}";

/// The start of a page in the report's style: doctype, head with the inline CSS, `<body>`
/// and the `<h1>` title. Close it with `</body></html>`.
pub fn page_head(title: &str) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{}</title><style>{CSS}</style></head><body>\n",
        esc(title)
    );
    let _ = writeln!(s, "<h1>{}</h1>", esc(title));
    s
}

/// The whole report.
pub fn report_html(reports: &[ModelReport], title: &str) -> String {
    let mut s = page_head(title);
    s.push_str("<p class=\"meta\">Files: ");
    s.push_str(
        &reports
            .iter()
            .map(|m| format!("{} ({})", esc(&m.model), esc(&m.file)))
            .collect::<Vec<_>>()
            .join(", "),
    );
    s.push_str("</p>\n<h2>Charts</h2>\n<div class=\"charts\">\n");
    let mut chart = |svg: String, caption: &str| {
        let _ = writeln!(
            s,
            "<figure class=\"chart\">{svg}<p>{}</p></figure>",
            esc(caption)
        );
    };
    chart(
        chart_domains(reports),
        "pass@1 (mean over tasks of c/n) per domain and model.",
    );
    chart(
        chart_consistency(reports),
        "pass@1 against the share of tasks that passed every recorded attempt; the dashed line is y = x (retention 1).",
    );
    chart(
        chart_breadth(reports),
        "Breadth (pass@k at the largest reported k) against consistency (observed k/k).",
    );
    chart(
        chart_k_curves(reports),
        "The reference's pass@k (solid) and pass^k = (c/n)^k (dashed) over k.",
    );
    if let Some(c) = cost_chart(
        reports,
        "Cost per success",
        "cost per success",
        "pass@1",
        |m| {
            m.cost
                .as_ref()
                .and_then(|c| Some((c.per_success?, m.summary.pass1, c.frontier_success)))
        },
    ) {
        chart(
            c,
            "Cost per successful attempt against pass@1; ringed points are on the Pareto frontier (joined by the dashed line).",
        );
    }
    if let Some(c) = cost_chart(
        reports,
        "Cost per dependable task",
        "cost per dependable task",
        "observed k/k",
        |m| {
            m.cost.as_ref().and_then(|c| {
                Some((
                    c.per_dependable_task?,
                    m.summary.observed_all.share,
                    c.frontier_dependable,
                ))
            })
        },
    ) {
        chart(
            c,
            "Cost of all attempts per task passing k of k, against observed k/k; ringed points are on the Pareto frontier.",
        );
    }
    chart(
        chart_signatures(reports),
        "Failure signatures as shares of failed attempts that are not system errors (count in brackets).",
    );
    s.push_str("</div>\n<h2>Tables</h2>\n");
    for t in format::tables(reports) {
        s.push_str(&table_html(&t));
    }
    s.push_str("<p class=\"note\">Rules: docs/metrics.md. Reference numbers follow tb agg; ours are labelled as such.</p>\n</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_numbers() {
        assert_eq!(
            nice_ticks(0.0, 1.0),
            (vec![0.0, 0.2, 0.4, 0.600_000_000_000_000_1, 0.8, 1.0], 1)
        );
        let (t, d) = nice_ticks(0.0, 0.126);
        assert_eq!(d, 2);
        assert_eq!(t, vec![0.0, 0.05, 0.1]);
        assert_eq!(nice_ticks(1.0, 1.0), (vec![1.0], 2));
        assert_eq!(
            esc("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
        assert_eq!(
            esc("\u{1b}[31mred\u{0}\n\t\u{7f}\u{85}"),
            "␛[31mred␀\n\t␡\u{fffd}"
        );
    }
}
