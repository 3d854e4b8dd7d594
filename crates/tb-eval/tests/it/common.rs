//! Shared by the parity tests: finds the shared data, loads tasks and traces of one domain
//! without the dataset loader (the tasks' `init` blocks come from `tb-bench-v1/tasks`).
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use tb_eval::replay::{ReplaySummary, Trace, read_traces, replay_trace};
use tb_sandbox::Clock;

/// The shared folder (`$TB_SHARED`, else `shared` beside the workspace); panics when missing,
/// so call it from `#[tb_test_support::shared_test]`s only.
pub fn shared() -> PathBuf {
    tb_test_support::shared()
}

/// Replays every trace file whose name starts with `server`, at the recorded-results clock.
pub fn replay_domain(server: &str) -> ReplaySummary {
    let shared = shared();
    let domain = tb_domains::by_name(server).unwrap().unwrap();
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .unwrap();
    let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).unwrap();
    let mut summary = ReplaySummary::default();
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("tb-bench-v1/traces"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name().unwrap().to_string_lossy().starts_with(server)
                && p.extension().is_some_and(|e| e == "jsonl")
        })
        .collect();
    files.sort();
    for f in files {
        let tasks_file = shared
            .join("tb-bench-v1/tasks")
            .join(f.file_name().unwrap());
        let tasks: Vec<Value> = std::fs::read_to_string(&tasks_file)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        for trace in read_traces(&f).unwrap() {
            let task = tasks
                .iter()
                .find(|t| t["id"] == trace.id.as_str())
                .expect("task for trace");
            let config = &task["init"][server];
            replay_trace(&loaded, config, clock, &trace, &mut summary);
        }
    }
    summary
}

/// Prints a summary and its first mismatches.
pub fn report(server: &str, s: &ReplaySummary) {
    eprintln!(
        "{server}: traces {} initial {} golden_hash {} golden_diff {} calls {}/{} final {} diff {}",
        s.traces,
        s.initial_match,
        s.golden_hash_match,
        s.golden_diff_match,
        s.calls_match,
        s.calls,
        s.final_match,
        s.diff_match
    );
    let mut shown: Vec<&tb_eval::replay::Mismatch> = s
        .mismatches
        .iter()
        .filter(|m| m.what != "call")
        .take(20)
        .collect();
    shown.extend(s.mismatches.iter().filter(|m| m.what == "call").take(20));
    for m in shown {
        eprintln!(
            "  {} {:?} {:?} {}: {}",
            m.trace, m.call, m.tool, m.what, m.detail
        );
    }
}

/// Asserts that the state engine alone (no tools) reproduces the trace vectors.
pub fn assert_state_vectors(server: &str) {
    let s = replay_domain(server);
    report(server, &s);
    assert!(s.traces > 0);
    assert_eq!(s.initial_match, s.traces, "initial states");
    assert_eq!(s.golden_hash_match, s.traces, "golden hashes");
    assert_eq!(s.golden_diff_match, s.traces, "golden diffs");
}

/// Asserts full parity for a domain: every call, final state and diff.
pub fn assert_full_parity(server: &str, expected_traces: usize) {
    let s = replay_domain(server);
    report(server, &s);
    assert_eq!(s.traces, expected_traces);
    assert!(s.clean(), "{} mismatches", s.mismatches.len());
    assert_eq!(s.final_match, expected_traces);
}

pub type _T = Trace;

/// The published v1 benchmark, loaded once for a test: its 507 tasks, the domains and an
/// offline attempt environment on the default clock.
pub struct V1 {
    pub root: PathBuf,
    pub tasks: Vec<tb_core::Task>,
    pub sandbox: tb_eval::root::LoadedRoot,
    pub judge: tb_eval::judge::StateJudge,
    bot: std::collections::HashMap<String, String>,
    provenance: serde_json::Map<String, Value>,
}

impl V1 {
    pub fn load(shared: &std::path::Path) -> V1 {
        let root = shared.join("thinkingbox-data");
        let ds = tb_dataset::Dataset::open(&root).unwrap();
        let tasks = ds
            .load_test_list(&root.join(tb_test_support::V1_TEST_LIST))
            .unwrap();
        assert_eq!(tasks.len(), 507);
        let sandbox = tb_eval::root::LoadedRoot::load(&root).unwrap();
        V1 {
            root,
            tasks,
            sandbox,
            judge: tb_eval::judge::StateJudge::new(),
            bot: std::collections::HashMap::new(),
            provenance: serde_json::Map::new(),
        }
    }

    pub fn env(&self) -> tb_eval::run::AttemptEnv<'_> {
        tb_eval::run::AttemptEnv {
            sandbox: &self.sandbox,
            judge: &self.judge,
            clock: tb_sandbox::Clock::default(),
            agent_instructions: None,
            bot_instructions: &self.bot,
            provenance: &self.provenance,
        }
    }
}

/// Prints what replaying the scripts of `what` gave (traces, matching calls, effects,
/// verdicts and finish reasons) and asserts that nothing mismatched.
pub fn report_scripts(what: &str, s: &tb_eval::script_replay::ScriptSummary) {
    eprintln!(
        "{what}: {} traces, calls {}/{}, effects {}/{}, verdicts {}/{}, finish {}",
        s.traces,
        s.calls_match,
        s.calls,
        s.effects_match,
        s.effects,
        s.verdicts_match,
        s.verdicts,
        s.finish_match
    );
    let shown: Vec<String> = s.mismatches.iter().map(|m| format!("{m:?}")).collect();
    assert!(s.mismatches.is_empty(), "{}", shown.join("\n"));
}
