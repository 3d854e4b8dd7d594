//! `tb report --attempts`: the attempt pages as one section of the self-contained report.

use crate::fixture;
use tb_view::AttemptSet;

#[test]
fn failed_attempts_go_into_the_report_with_their_anchors_and_no_script() {
    let runs = vec![
        tb_metrics::read_run(&fixture("golden.jsonl")).unwrap(),
        tb_metrics::read_run(&fixture("noop.jsonl")).unwrap(),
    ];
    let failing = runs[1].attempts.iter().filter(|a| !a.passed()).count();
    assert!(failing > 0);
    let (html, n) = tb_view::report_attempts(runs.clone(), None, AttemptSet::Failed);
    assert_eq!(n, failing, "only the noop run has failures");
    assert_eq!(html.matches("class=\"report-attempt\"").count(), failing);
    assert!(html.starts_with("<style>"));
    assert!(!html.contains("<script"));
    assert!(!html.contains("href=\"/"), "no link to a server route");
    let first = runs[1].attempts.iter().find(|a| !a.passed()).unwrap();
    assert!(html.contains(&format!("href=\"#a-1-{}\"", first.line)));
    assert!(html.contains(&format!("id=\"a-1-{}\"", first.line)));
    assert!(html.contains("<b class=\"sig\">no_state_change</b>"));
    let (all, n_all) = tb_view::report_attempts(runs.clone(), None, AttemptSet::All);
    let total: usize = runs.iter().map(|r| r.attempts.len()).sum();
    assert_eq!(n_all, total);
    assert!(all.contains("matches golden"));
}

#[test]
fn hostile_text_in_the_report_is_escaped() {
    let rec = crate::hostile::evil_record("hostile.py:t", 0);
    let run = tb_metrics::parse_run("evil.jsonl", "evil", &rec.to_string()).unwrap();
    let (html, n) = tb_view::report_attempts(vec![run], None, AttemptSet::Failed);
    assert_eq!(n, 1);
    assert!(!html.contains("<script>alert"));
    assert!(!html.contains("<svg onload"));
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
}
