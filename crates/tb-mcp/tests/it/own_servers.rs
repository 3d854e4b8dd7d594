//! Servers that answer with their own texts (the Airline Tau-Bench release) over the session
//! registry `tb mcp-start` serves: every recorded solution call of the airline traces gives the
//! reference's text, on a session opened by task id as an MCP client opens it.

use crate::common;
use serde_json::Value;
use tb_mcp::Limits;
use tb_sandbox::Clock;

#[tb_test_support::shared_test]
#[tokio::test(flavor = "current_thread")]
async fn airline_calls_over_the_registry_give_the_recorded_texts() {
    let shared = tb_test_support::shared();
    let root = common::shared_data();
    let text = std::fs::read_to_string(shared.join("tb-bench-v1/airline/traces.jsonl")).unwrap();
    let mut sessions = 0;
    let mut calls = 0;
    for line in text.lines() {
        let r: Value = serde_json::from_str(line).unwrap();
        if r["kind"] != "solution" {
            continue;
        }
        let clock = Clock::parse(r["clock"]["now_utc"].as_str().unwrap()).unwrap();
        let reg =
            std::sync::Arc::new(tb_mcp::Registry::open(&root, clock, Limits::default()).unwrap());
        let id = r["id"].as_str().unwrap();
        let slot = reg.create_for_task(id).await.unwrap();
        sessions += 1;
        for c in r["calls"].as_array().unwrap() {
            if c["executed"] != true {
                continue;
            }
            let tool = c["tool"].as_str().unwrap();
            let out = reg
                .call(&slot, tool, c["parameters"].clone())
                .await
                .unwrap();
            assert_eq!(
                out.to_text(tool),
                c["result"].as_str().unwrap(),
                "{id}: {tool}"
            );
            assert_eq!(
                out.is_ok(),
                c["mcp_is_error"] != true,
                "{id}: {tool} isError"
            );
            calls += 1;
        }
        reg.remove(slot.id()).unwrap();
    }
    assert_eq!(sessions, 21);
    assert!(calls > 60, "{calls} calls");
}
