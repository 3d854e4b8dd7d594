//! The pages and the JSON over a real port, on the golden and do-nothing runs of the bundled
//! example: the numbers are tb-metrics' own, each failing attempt has a page with its diff and
//! signature, the grid's JSON holds every attempt, two runs compare.

use crate::{Server, fixture};
use serde_json::Value;

fn runs() -> Vec<std::path::PathBuf> {
    vec![fixture("golden.jsonl"), fixture("noop.jsonl")]
}

#[test]
fn the_runs_page_shows_tb_metrics_numbers_per_run_and_domain() {
    let srv = Server::start(&runs());
    let r = srv.get("/").ok();
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert_eq!(r.header("content-security-policy"), Some(tb_view::CSP));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    let read: Vec<tb_metrics::Run> = runs()
        .iter()
        .map(|p| tb_metrics::read_run(p).unwrap())
        .collect();
    let reports = tb_metrics::model_reports(&read, None);
    for (i, m) in reports.iter().enumerate() {
        let f4 = tb_metrics::format::f4;
        assert!(
            r.body
                .contains(&format!("<a href=\"/runs/{i}/tasks\">{}</a>", m.model)),
            "{}",
            r.body
        );
        assert!(
            r.body.contains(&f4(m.summary.pass1)),
            "pass@1 of {}",
            m.model
        );
        assert!(r.body.contains(&format!(
            "{}/{}",
            m.summary.observed_all.count, m.summary.tasks
        )));
    }
    assert!(r.body.contains("Per domain"));
    assert!(r.body.contains("<svg"), "the charts of tb report");
    assert!(r.body.contains("href=\"/compare/0/1\""));
    // The JSON is tb agg --json's.
    let api = srv.get("/api/runs").ok().json();
    assert_eq!(api["reports"], tb_metrics::format::to_json(&reports));
}

fn tasks(srv: &Server, run: usize) -> Value {
    srv.get(&format!("/api/runs/{run}/tasks")).ok().json()
}

#[test]
fn the_grid_holds_every_attempt_with_status_and_signature() {
    let srv = Server::start(&runs());
    let page = srv.get("/runs/1/tasks").ok();
    assert!(page.body.contains("id=\"grid\""));
    assert!(page.body.contains("data-run=\"1\""));
    let golden = tasks(&srv, 0);
    let noop = tasks(&srv, 1);
    let count = |v: &Value| {
        v["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["attempts"].as_array().unwrap().len())
            .sum::<usize>()
    };
    let n = tb_metrics::read_run(&fixture("noop.jsonl"))
        .unwrap()
        .attempts
        .len();
    assert_eq!(count(&noop), n);
    assert_eq!(count(&golden), n);
    for t in golden["tasks"].as_array().unwrap() {
        for a in t["attempts"].as_array().unwrap() {
            assert_eq!(a[2], "pass", "{t}");
            assert!(a[3].is_null());
        }
    }
    let failed: Vec<&Value> = noop["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["attempts"].as_array().unwrap())
        .filter(|a| a[2] == "fail")
        .collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().all(|a| a[3] == "no_state_change"),
        "{failed:?}"
    );
    let t0 = &noop["tasks"][0];
    assert!(t0["uid"].as_str().unwrap().contains(".py:"));
    assert!(!t0["query"].as_str().unwrap().is_empty());
    assert!(!t0["domain"].as_str().unwrap().is_empty());
}

#[test]
fn an_attempt_page_shows_verdict_diff_signature_and_steps() {
    let srv = Server::start(&runs());
    let noop = tasks(&srv, 1);
    let line = noop["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|t| t["attempts"].as_array().unwrap())
        .find(|a| a[2] == "fail")
        .map(|a| a[0].as_u64().unwrap())
        .unwrap();
    let page = srv.get(&format!("/runs/1/attempts/{line}")).ok();
    let b = &page.body;
    assert!(b.contains("<b class=\"sig\">no_state_change</b>"), "{b}");
    assert!(
        b.contains("class=\"d-missing\""),
        "a missing-effect diff row: {b}"
    );
    assert!(b.contains("differs (result "));
    assert!(b.contains("Test message"));
    assert!(b.contains("<h3>Usage</h3>"));
    assert!(b.contains("<h3>Provenance</h3>"));
    assert!(b.contains("class=\"timeline\""));
    assert!(b.contains("id=\"next-failure\""));
    assert!(b.contains("id=\"next\"") || b.contains("id=\"prev\""));
    let j = srv.get(&format!("/api/runs/1/attempts/{line}")).ok().json();
    assert_eq!(j["status"], "fail");
    assert_eq!(j["failure"]["signature"], "no_state_change");
    assert!(j["messages"].as_array().is_some_and(|m| !m.is_empty()));
    // A passing attempt of the golden run: matches golden.
    let g = srv.get(&format!("/runs/0/attempts/{line}")).ok();
    assert!(g.body.contains("matches golden"), "{}", g.body);
    assert!(!g.body.contains("<h3>Failure</h3>"));
    // Unknown pages and lines.
    assert_eq!(srv.get("/runs/0/attempts/999999").status, 404);
    assert_eq!(srv.get("/runs/7/tasks").status, 404);
    assert_eq!(srv.get("/nope").status, 404);
    assert_eq!(srv.get("/runs/x/tasks").status, 400);
}

#[test]
fn two_runs_compare_with_links_to_both_attempts() {
    let srv = Server::start(&runs());
    let page = srv.get("/compare/1/0").ok();
    let b = &page.body;
    let flipped = b
        .split("<table id=\"flipped\">")
        .nth(1)
        .unwrap()
        .split("</table>")
        .next()
        .unwrap();
    let link = flipped
        .split("href=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .expect("a flipped task with a link");
    assert!(link.starts_with("/compare/1/0/task?uid="), "{link}");
    let pair = srv.get(&link.replace("&amp;", "&")).ok();
    assert_eq!(pair.body.matches("<section class=\"attempt\"").count(), 2);
    assert!(pair.body.contains("data-status=\"fail\""));
    assert!(pair.body.contains("data-status=\"pass\""));
    let api = srv.get("/api/compare/1/0").ok().json();
    assert!(api["better"].as_u64().unwrap() + api["no_clear_change"].as_u64().unwrap() > 0);
    assert_eq!(srv.get("/compare/0/5").status, 404);
}

#[test]
fn only_loopback_host_names_are_answered_unless_asked() {
    let srv = Server::start(&runs());
    assert_eq!(srv.get_host("/", "evil.example").status, 421);
    assert_eq!(srv.get_host("/api/runs", "evil.example:8765").status, 421);
    assert_eq!(srv.get_host("/", "localhost:8765").status, 200);
    assert_eq!(srv.get_host("/", "[::1]:8765").status, 200);
    let open = Server::with(tb_view::Options {
        files: runs(),
        any_host: true,
        ..Default::default()
    });
    assert_eq!(open.get_host("/", "viewer.lan").status, 200);
}

#[test]
fn assets_are_served_from_the_binary() {
    let srv = Server::start(&runs());
    let js = srv.get("/assets/view.js").ok();
    assert!(
        js.header("content-type")
            .unwrap()
            .starts_with("text/javascript")
    );
    assert!(js.body.contains("textContent"));
    assert!(!js.body.contains("innerHTML"), "no HTML built from strings");
    let css = srv.get("/assets/view.css").ok();
    assert!(css.header("content-type").unwrap().starts_with("text/css"));
}
