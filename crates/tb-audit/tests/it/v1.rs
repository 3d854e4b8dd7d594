//! The audit of the published ThinkingBox-Bench v1.0 (needs the benchmark data: ignored
//! without it, a failure in CI).

use tb_audit::AuditOptions;
use tb_eval::root::LoadedRoot;
use tb_sandbox::Clock;

#[tb_test_support::data_test]
#[test]
fn v1_golden_passes_everywhere_and_the_noop_pass_is_flagged() {
    let root = tb_test_support::data();
    let ds = tb_dataset::Dataset::open(&root).unwrap();
    let tasks = ds
        .load_test_list(&root.join(tb_test_support::V1_TEST_LIST))
        .unwrap();
    assert_eq!(tasks.len(), 507);
    let sandbox = LoadedRoot::load(&root).unwrap();
    let opts = AuditOptions {
        clock: Clock::default(),
        wall: Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap(),
        threads: 2,
    };
    let r = tb_audit::audit(&sandbox, &tasks, &opts);
    assert_eq!(r.summary.golden_pass, 507, "{:?}", r.summary.golden_fail);
    assert!(r.golden_ok());
    assert!(r.summary.nondeterministic.is_empty());
    let he017 = "sandbox_neobank_support_v1_group1.py:test_he_017";
    assert!(r.summary.noop_pass.iter().any(|t| t == he017));
    let t = r.tasks.iter().find(|t| t.id == he017).unwrap();
    assert!(t.noop_pass);
    assert!(t.findings.iter().any(|f| f.check == "noop"));

    // The warranty of ST009_005 expired on 2026-03-20: on the later clock the coverage check
    // answers otherwise, before the golden trajectory files the claim.
    let st = r
        .tasks
        .iter()
        .find(|t| t.id == "sandbox_external_retail_group1.py:test_case_ST009_005")
        .unwrap();
    assert!(st.clock.reads_clock);
    assert_eq!(st.clock.tools, ["check_warranty_coverage"]);
    assert!(st.findings.iter().any(|f| f.check == "clock"));

    // Every task has a sensitivity (or none, for tasks without state-changing calls) in the
    // JSON, and the blind spots are there.
    let j = tb_audit::render::to_json(&r);
    let jt = j["tasks"].as_array().unwrap();
    assert_eq!(jt.len(), 507);
    for (a, t) in r.tasks.iter().zip(jt) {
        assert_eq!(t["id"], a.id.as_str());
        assert!(t.get("sensitivity").is_some());
        assert_eq!(t["sensitivity"].is_null(), a.mutants == 0, "{}", a.id);
        assert_eq!(
            t["blind_spots"].as_array().unwrap().len(),
            a.blind_spots.len()
        );
    }
    assert!(r.summary.mutants > 1000);
    assert_eq!(
        r.summary.blind_spots,
        r.tasks.iter().map(|t| t.blind_spots.len()).sum::<usize>()
    );
    eprintln!("{}", tb_audit::render::summary_lines(&r).join("\n"));
}
