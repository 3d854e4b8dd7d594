//! Isolation under load: 1,000 sessions of the same task open at once on one server (loopback),
//! each connected over MCP Streamable HTTP, writing session-specific values in interleaved rounds.
//! Every session's results and final state equal an in-process replay of its own calls, and no
//! two sessions end in the same state.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Arc;
use tb_mcp::client::McpServer;
use tb_mcp::{HttpOptions, Limits, McpTools};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

const SESSIONS: usize = 1000;
const IN_FLIGHT: usize = 64;
const TASK: &str = "brightside_retail.py:test_bs002_change_address_before_shipping";

/// Session `i`'s calls: writes that differ per session, then a read of what it wrote.
fn calls_of(i: usize) -> Vec<(String, Value)> {
    let customer = format!("CUS-100{}", 1 + i % 3);
    vec![
        (
            "add_points_to_balance".into(),
            json!({"customer_id": customer, "points_to_add": 1 + i, "points_reason": "service_recovery"}),
        ),
        (
            "update_order_address".into(),
            json!({"order_id": "ORD-5001", "new_address_line1": format!("{i} Session Street"),
                   "new_address_city": "Portland", "new_address_state": "OR", "new_address_zip": "97232"}),
        ),
        (
            "add_points_to_balance".into(),
            json!({"customer_id": "CUS-1002", "points_to_add": 7 + i % 11, "points_reason": "service_recovery"}),
        ),
        (
            "get_customer_profile".into(),
            json!({"customer_id": customer}),
        ),
        ("get_order".into(), json!({"order_id": "ORD-5001"})),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_sessions_stay_isolated() {
    let root = example_root();
    let inproc = InProcess::open(&root);
    let task = inproc.task(TASK);
    let rounds = calls_of(0).len();

    let registry = registry(&root, Limits::default());
    let server = server(registry.clone(), HttpOptions::default()).await;
    let client = McpServer::new(&server.url()).unwrap();
    let gate = Arc::new(Semaphore::new(IN_FLIGHT));

    // Open every session; all stay open until the end.
    let mut opening = JoinSet::new();
    for i in 0..SESSIONS {
        let (client, gate) = (client.clone(), gate.clone());
        opening.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            (i, client.open(TASK).await.unwrap())
        });
    }
    let mut sessions: Vec<Option<Arc<McpTools>>> = (0..SESSIONS).map(|_| None).collect();
    while let Some(r) = opening.join_next().await {
        let (i, tools) = r.unwrap();
        sessions[i] = Some(Arc::new(tools));
    }
    let sessions: Vec<Arc<McpTools>> = sessions.into_iter().map(Option::unwrap).collect();
    assert_eq!(registry.len(), SESSIONS, "all sessions open at once");
    let ids: HashSet<&str> = sessions.iter().map(|s| s.session()).collect();
    assert_eq!(ids.len(), SESSIONS);

    // Interleave: round r runs every session's r-th call concurrently.
    let mut texts: Vec<Vec<String>> = vec![Vec::new(); SESSIONS];
    for r in 0..rounds {
        let mut round = JoinSet::new();
        for (i, s) in sessions.iter().enumerate() {
            let (s, gate) = (s.clone(), gate.clone());
            round.spawn(async move {
                let _permit = gate.acquire_owned().await.unwrap();
                let (tool, args) = calls_of(i).swap_remove(r);
                (i, s.call(&tool, &args).await.unwrap().text)
            });
        }
        let mut got: Vec<(usize, String)> = Vec::with_capacity(SESSIONS);
        while let Some(x) = round.join_next().await {
            got.push(x.unwrap());
        }
        for (i, text) in got {
            texts[i].push(text);
        }
    }

    // Final states: each equals its own in-process replay; no two sessions share one.
    let mut hashes = HashSet::new();
    let mut grading = JoinSet::new();
    for (i, s) in sessions.iter().enumerate() {
        let (s, gate) = (s.clone(), gate.clone());
        grading.spawn(async move {
            let _permit = gate.acquire_owned().await.unwrap();
            (i, s.effects(false).await.unwrap())
        });
    }
    let mut effects: Vec<(usize, Value)> = Vec::with_capacity(SESSIONS);
    while let Some(x) = grading.join_next().await {
        effects.push(x.unwrap());
    }
    effects.sort_by_key(|(i, _)| *i);
    for (i, e) in &effects {
        let expected = inproc.run(&task, &calls_of(*i));
        assert_eq!(texts[*i], expected.texts, "session {i}: results");
        let hash = e["result_hash"].as_str().unwrap().to_string();
        assert_eq!(hash, expected.hashes[0], "session {i}: final state");
        assert_eq!(e["passed"], false, "session {i} wrote its own values");
        hashes.insert(hash);
    }
    assert_eq!(
        hashes.len(),
        SESSIONS,
        "every session ends in its own state"
    );

    for s in sessions {
        Arc::into_inner(s).unwrap().close().await.unwrap();
    }
    assert_eq!(registry.len(), 0);
    server.shutdown().await.unwrap();
}
