//! Loads all 507 ThinkingBox-Bench v1.0 tasks and compares them with the reference extraction
//! in `shared/tb-bench-v1/tasks/*.jsonl`.
//!
//! Data: `$THINKINGBOX_DATA`, else `<workspace>/../shared/thinkingbox-data`; the reference
//! records: `$TB_SHARED/tb-bench-v1`, else `<workspace>/../shared/tb-bench-v1`. Missing data fails
//! the test when `CI` is set and is skipped loudly otherwise.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tb_dataset::{Check, Dataset, merge_init_config};

const LIST: &str = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

/// The shared folder (panics when missing; call from `#[tb_test_support::shared_test]`s only).
fn shared() -> PathBuf {
    tb_test_support::shared()
}

/// The thinkingbox-data checkout (panics when missing; call from `#[tb_test_support::data_test]`s only).
fn data_root() -> PathBuf {
    let root = tb_test_support::data();
    assert!(
        root.join(LIST).is_file(),
        "no {LIST} under {}",
        root.display()
    );
    root
}

fn reference_records() -> HashMap<String, Map<String, Value>> {
    let dir = shared().join("tb-bench-v1/tasks");
    let mut out = HashMap::new();
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    for e in entries.filter_map(Result::ok) {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let text = std::fs::read_to_string(&p).expect("read jsonl");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let v: Value = serde_json::from_str(line).expect("jsonl line");
            let Value::Object(m) = v else {
                panic!("not an object in {}", p.display())
            };
            let id = m["id"].as_str().expect("id").to_string();
            out.insert(id, m);
        }
    }
    out
}

fn check_name(c: Check) -> &'static str {
    match c {
        Check::ValidateDatabase => "validate_database",
        Check::ValidateRubricsYesno => "validate_rubrics_yesno",
    }
}

#[tb_test_support::shared_test]
#[test]
fn all_507_tasks_match_the_reference_extraction() {
    let root = data_root();
    let ds = Dataset::open(&root).expect("open dataset");
    let tasks = ds.load_test_list(Path::new(LIST)).expect("load test list");
    assert_eq!(tasks.len(), 507);
    let reference = reference_records();
    assert_eq!(reference.len(), 507);

    let mut equal = 0;
    let mut diffs = Vec::new();
    for t in &tasks {
        let Some(rec) = reference.get(&t.uid) else {
            diffs.push(format!("{}: no reference record", t.uid));
            continue;
        };
        let mut expected = rec.clone();
        expected.remove("id");
        let checks = expected.remove("_checks").expect("_checks");
        let ours: Vec<Value> = t
            .checks
            .iter()
            .map(|c| Value::from(check_name(*c)))
            .collect();
        let raw_ok = Value::Object(t.raw.clone()) == Value::Object(expected.clone());
        let checks_ok = checks == Value::Array(ours.clone());
        if raw_ok && checks_ok {
            equal += 1;
        } else {
            diffs.push(format!(
                "{}: raw equal {raw_ok}, checks equal {checks_ok} (ours {ours:?}, reference {checks})",
                t.uid
            ));
        }

        // Hydration: the typed fields and world_state.
        assert_eq!(t.scenario, rec["scenario"], "{}", t.uid);
        assert_eq!(t.query.as_deref(), rec["query"].as_str(), "{}", t.uid);
        assert_eq!(
            t.user_context.as_deref(),
            rec["user_context"].as_str(),
            "{}",
            t.uid
        );
        assert_eq!(t.max_user_sim_turns, Some(10));
        assert_eq!(t.max_agent_sim_turns, None);
        assert_eq!(Value::Object(t.init.clone()), rec["init"], "{}", t.uid);
        let sc = ds.scenario(&t.scenario).expect("scenario");
        let merged = merge_init_config(&sc.world_state, &t.init).expect("merge");
        assert_eq!(t.world_state, merged, "{}", t.uid);
        // v1: one server named like the scenario; the merge keeps the scenario's sources and
        // adds the task's data patch and golden calls.
        assert_eq!(t.servers(), vec![t.scenario.clone()], "{}", t.uid);
        let ws = &t.world_state[&t.scenario];
        assert_eq!(
            ws["sources"], sc.world_state[&t.scenario]["sources"],
            "{}",
            t.uid
        );
        assert_eq!(
            ws["data_patch"], rec["init"][&t.scenario]["data_patch"],
            "{}",
            t.uid
        );
        assert!(!t.golden_calls(&t.scenario).is_empty(), "{}", t.uid);
        assert!(
            t.source.line > 0
                && std::path::Path::new(&t.source.path)
                    .extension()
                    .is_some_and(|e| e == "py"),
            "{}",
            t.uid
        );
    }
    assert!(
        diffs.is_empty(),
        "{} differ:\n{}",
        diffs.len(),
        diffs.join("\n")
    );
    assert_eq!(equal, 507, "{equal} of 507 equal");
    eprintln!("bench v1: {equal}/507 tasks equal to the reference extraction");

    // Provenance lists every file read: the list, 7 test files, 5 scenarios.
    let files = ds.loaded_files();
    assert_eq!(
        files
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "py"))
            .count(),
        7
    );
    assert_eq!(files.len(), 1 + 7 + 5, "{files:?}");

    // Summary for `tb validate`.
    let summary = tb_dataset::summarize(&ds, &tasks).expect("summary");
    assert_eq!(summary.len(), 5);
    assert_eq!(summary.iter().map(|s| s.tasks).sum::<usize>(), 507);
    assert_eq!(summary.iter().map(|s| s.golden_calls).sum::<usize>(), 3102);
    assert_eq!(
        summary.iter().map(|s| s.validate_database).sum::<usize>(),
        507
    );
    assert_eq!(
        summary
            .iter()
            .map(|s| s.validate_rubrics_yesno)
            .sum::<usize>(),
        30
    );
    assert!(
        summary.iter().all(|s| (27..=38).contains(&s.tools)),
        "{summary:?}"
    );
}

#[tb_test_support::data_test]
#[test]
fn every_scenario_and_the_agent_load() {
    let root = data_root();
    let ds = Dataset::open(&root.join("dataset")).expect("open the dataset dir itself");
    let names = ds.scenario_names().expect("names");
    assert_eq!(names.len(), 10);
    for n in &names {
        let s = ds.scenario(n).unwrap_or_else(|e| panic!("{e}"));
        assert!(!s.world_state.is_empty(), "{n}");
    }
    let a = ds.agent("think").expect("agent");
    assert!(a.system_instructions.contains("<DONE>"));
    assert_eq!(a.builtin_tools.len(), 1);
    assert!(a.builtin_tools[0].is_end_turn);
    // The other test files of the data repo parse too (all functions, not only listed ones).
    for f in [
        "banking.py",
        "banking_email.py",
        "email_system_org.py",
        "mcs_defaults.py",
        "airline_tau_bench.py",
    ] {
        let tasks = ds.tasks_in_file(f).unwrap_or_else(|e| panic!("{e}"));
        assert!(!tasks.is_empty(), "{f}");
    }
    // The base files hold 15 functions more than the list uses.
    assert_eq!(
        ds.tasks_in_file("external_booking_v1_group1.py")
            .expect("booking")
            .len(),
        89 + 15
    );
}
