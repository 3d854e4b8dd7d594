//! The Airline Tau-Bench 26-04 reference traces (`tb-bench-v1/airline/traces.jsonl`) replayed
//! on our airline server: every recorded call's exact result text, the effects hash
//! (`sha256(json.dumps(effects, sort_keys=True))`) and, through the test-body evaluator on our
//! effects, both recorded verdicts (judge always yes, always no).

use crate::common;

use serde_json::{Map, Value, json};
use tb_domains::airline::{self, Base};
use tb_eval::pybody;
use tb_eval::script_replay::effects_sha256;
use tb_pyeval::{FixedJudge, TestFile};
use tb_sandbox::ServerSession;

#[tb_test_support::shared_test]
#[test]
fn airline_traces_replay_exactly() {
    let shared = common::shared();
    let root = shared.join("thinkingbox-data");
    let config = json!({
        "flights": "$THINKINGBOX_DATA/support/tau_bench/airline_data/flights.json",
        "reservations": "$THINKINGBOX_DATA/support/tau_bench/airline_data/reservations.json",
        "users": "$THINKINGBOX_DATA/support/tau_bench/airline_data/users.json",
    });
    let base = Base::load(&config, &root).expect("airline data loads");
    let file = TestFile::read(&root.join("dataset/test_case/airline_tau_bench.py")).unwrap();
    file.check().unwrap();
    let text = std::fs::read_to_string(shared.join("tb-bench-v1/airline/traces.jsonl")).unwrap();
    let (
        mut records,
        mut calls,
        mut calls_match,
        mut effects_match,
        mut verdicts,
        mut verdicts_match,
    ) = (0, 0, 0, 0, 0, 0);
    let mut mismatches = Vec::new();
    for line in text.lines() {
        let record: Value = serde_json::from_str(line).unwrap();
        let id = record["id"].as_str().unwrap();
        records += 1;
        let mut session = base.session(id, airline::default_clock());
        let recorded = record["calls"].as_array().unwrap();
        let script_calls: Vec<&Value> = record["script"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s.get("call").is_some())
            .collect();
        assert_eq!(script_calls.len(), recorded.len(), "{id}: script vs calls");
        let mut ours = Vec::new();
        for (step, want) in script_calls.iter().zip(recorded) {
            if want["executed"] == json!(false) {
                // End-turn tools are never executed by the framework.
                ours.push(None);
                continue;
            }
            let tool = step["call"].as_str().unwrap();
            let reply = session.call_tool(tool, &step["args"]);
            calls += 1;
            if reply.text == want["result"].as_str().unwrap()
                && reply.is_error == want["mcp_is_error"].as_bool().unwrap()
            {
                calls_match += 1;
            } else {
                mismatches.push(format!(
                    "{id} [{}] {tool}: want {:?}, got {:?}",
                    record["kind"], want["result"], reply.text
                ));
            }
            ours.push(Some(reply.text));
        }
        let generated: Vec<Value> = session.generated.iter().map(|u| json!(u)).collect();
        assert_eq!(json!(generated), record["generated_uuid4"], "{id}: uuid4s");
        let mut effects = Value::Object(Map::new());
        pybody::add_server_effects(&mut effects, &[&session as &dyn ServerSession]);
        if effects_sha256(&effects["airline_tau_bench"])
            == record["effects_sha256"].as_str().unwrap()
        {
            effects_match += 1;
        } else {
            mismatches.push(format!("{id} [{}]: effects hash differs", record["kind"]));
        }
        // The test's view: the recorded reply and calls, with our results and our effects.
        let mut tool_calls = record["tool_calls_seen_by_test"].clone();
        for (tc, text) in tool_calls.as_array_mut().unwrap().iter_mut().zip(&ours) {
            if let Some(t) = text {
                tc["tool_response"]["content"] = json!(t);
            }
        }
        let ctx = json!({
            "response": record["response"],
            "effects": effects,
            "tool_calls": tool_calls,
            "tool_direct_responses": [],
        });
        let test = id.split_once(':').unwrap().1;
        for (answer, key) in [(true, "verdict_judge_yes"), (false, "verdict_judge_no")] {
            let want = &record[key];
            let mut judge = FixedJudge::new(answer);
            let got = file.run(test, &ctx, &mut judge).unwrap();
            verdicts += 1;
            if got.passed == want["passed"].as_bool().unwrap()
                && got.system_error == want["system_error"].as_bool().unwrap()
                && got.message == want["message"].as_str().unwrap()
            {
                verdicts_match += 1;
            } else {
                mismatches.push(format!(
                    "{id} [{}] {key}: want {} {:?}, got {} {:?}",
                    record["kind"], want["passed"], want["message"], got.passed, got.message
                ));
            }
        }
    }
    eprintln!(
        "airline replay: {records} records; calls {calls_match}/{calls}; effects {effects_match}/{records}; verdicts {verdicts_match}/{verdicts}"
    );
    assert_eq!(records, 44);
    assert!(calls > 0);
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}
