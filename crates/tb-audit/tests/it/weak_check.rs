//! The audit on a tiny dataset of our own (tests/fixtures/weakcheck) whose first task has a
//! deliberately weak check: the ticket it opens is judged without its subject and
//! description (unstable fields the state hash leaves out).

use std::path::PathBuf;
use tb_audit::{AuditOptions, AuditReport, Mutation, Severity, render};
use tb_eval::root::LoadedRoot;
use tb_sandbox::Clock;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/weakcheck")
}

fn run(threads: usize) -> AuditReport {
    let root = root();
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let tasks = ds.load_test_list(&root.join("testlist.yaml")).unwrap();
    assert_eq!(tasks.len(), 5);
    let sandbox = LoadedRoot::load(&root).unwrap();
    let opts = AuditOptions {
        clock: Clock::default(),
        wall: Clock::parse("2026-12-01T09:00:00Z").unwrap(),
        threads,
    };
    tb_audit::audit(&sandbox, &tasks, &opts)
}

fn task<'a>(r: &'a AuditReport, id: &str) -> &'a tb_audit::TaskAudit {
    r.tasks
        .iter()
        .find(|t| t.id == id)
        .unwrap_or_else(|| panic!("{id} not audited"))
}

#[test]
fn the_weak_check_is_named_with_its_task_call_and_argument() {
    let r = run(2);
    assert!(r.golden_ok());
    assert_eq!(r.summary.golden_pass, 5);
    let weak = task(&r, "weak_retail.py:test_w001_open_ticket");
    assert!(weak.golden_pass && !weak.noop_pass && weak.deterministic);
    let args: Vec<&str> = weak
        .blind_spots
        .iter()
        .filter(|b| b.mutation == Mutation::Argument)
        .map(|b| b.argument.as_deref().unwrap())
        .collect();
    assert_eq!(args, ["item.subject", "item.description"]);
    let b = &weak.blind_spots[0];
    assert_eq!((b.call, b.tool.as_str()), (1, "zendesk_create_item"));
    assert_eq!(b.from, Some(serde_json::json!("Lamp arrived broken")));
    assert!(
        b.unchecked.iter().any(|p| p.contains("subject")),
        "{:?}",
        b.unchecked
    );
    // The other arguments (status, priority, requester) are caught, so are drop and duplicate.
    assert!(weak.mutants_caught >= 4, "{weak:?}");
    assert!(weak.sensitivity.unwrap() < 1.0);
    let f = weak
        .findings
        .iter()
        .find(|f| f.check == "sensitivity")
        .unwrap();
    assert_eq!(f.severity, Severity::Warning);
    insta::assert_snapshot!(f.detail, @r#"2 of 8 mutants pass although the state differs: item.subject of call 1 (zendesk_create_item): "Lamp arrived broken" -> "Lamp arrived broken (altered)" [unchecked: zendesk_tickets[2].subject]; item.description of call 1 (zendesk_create_item): "The shade of the lamp is cracked." -> "The shade of the lamp is cracked. (altered)" [unchecked: zendesk_tickets[2].description]"#);

    // A strong check: every mutant of the cancellation that changes the state is caught.
    let strong = task(&r, "weak_retail.py:test_w004_close_ticket");
    assert!(strong.blind_spots.is_empty(), "{:?}", strong.blind_spots);
    assert_eq!(strong.sensitivity, Some(1.0));
    // Swapping the two updates gives the same end state: an equivalent mutant, not judged.
    assert!(strong.equivalent_mutants >= 1);

    // Read-only tasks pass without work, and are flagged; they share a query.
    for id in [
        "weak_retail.py:test_w003_status_only",
        "weak_retail.py:test_w005_status_other_order",
    ] {
        let t = task(&r, id);
        assert!(t.noop_pass && t.golden_pass);
        assert_eq!(t.mutants, 0);
        assert_eq!(t.sensitivity, None);
        assert!(t.findings.iter().any(|f| f.check == "noop"));
        assert!(t.findings.iter().any(|f| f.check == "look_alike"));
    }
    assert_eq!(
        r.summary.noop_pass,
        [
            "weak_retail.py:test_w003_status_only",
            "weak_retail.py:test_w005_status_other_order"
        ]
    );
    assert!(r.summary.tasks_with_blind_spots >= 1);
}

#[test]
fn json_shape_and_thread_count_do_not_change_the_result() {
    let one = run(1);
    let two = run(2);
    assert_eq!(one, two);
    let j = render::to_json(&two);
    for t in j["tasks"].as_array().unwrap() {
        for k in [
            "id",
            "golden_pass",
            "noop_pass",
            "mutants",
            "mutants_caught",
            "sensitivity",
            "blind_spots",
            "findings",
        ] {
            assert!(t.get(k).is_some(), "task lacks {k}");
        }
        for b in t["blind_spots"].as_array().unwrap() {
            for k in ["mutation", "call", "tool", "argument"] {
                assert!(b.get(k).is_some(), "blind spot lacks {k}");
            }
        }
        for f in t["findings"].as_array().unwrap() {
            for k in ["check", "severity", "detail"] {
                assert!(f.get(k).is_some(), "finding lacks {k}");
            }
        }
    }
    assert_eq!(j["summary"]["tasks"], 5);
    let html = render::to_html(&two, "audit <fixture>");
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("audit &lt;fixture&gt;"));
    assert!(html.contains("item.subject"));
}

#[test]
fn table_output() {
    insta::assert_snapshot!(render::to_text(&run(2)));
}
