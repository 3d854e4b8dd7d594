//! What the OpenEnv ThinkingBox adapter's own server tests check, where it makes sense against
//! a live server, checked against `tb openenv` on the bundled example over `/ws` and HTTP with
//! the frames the adapter's client sends (every field dumped, `metadata: {}` included).
//!
//! Each test says which behaviour of the adapter's server it mirrors. Behaviours already
//! checked elsewhere: a simulated-user failure ending as a system error without leaking the
//! cause (`ws_protocol::every_frame_type_and_no_hidden_fields`), an end-turn tool in a batch
//! and terminal-turn ordering (`ws_protocol::the_adapter_clients_frames_and_terminal_turns`),
//! `dataset` and `config` reset arguments selecting data and run config (`reset_paths`), a tool
//! backend dying mid-episode (`external_servers`).

use crate::common::*;
use serde_json::{Value, json};

const END: &str = "InjectionAttackInToolResponse";

struct Live {
    _dir: tempfile::TempDir,
    _mock: tb_mock_model::MockServer,
    server: tb_openenv::RunningServer,
    calls: Vec<(String, Value)>,
}

async fn live() -> Live {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    let config = write_config(dir.path(), &mock);
    let server = start_server(tb_openenv::Options::new(example(), Some(config))).await;
    let ds = tb_dataset::Dataset::open(&example()).unwrap();
    let tasks = ds.load_test_list(&example().join("testlist.yaml")).unwrap();
    let calls = golden_calls(tasks.iter().find(|t| t.uid == BS001).unwrap());
    Live {
        _dir: dir,
        _mock: mock,
        server,
        calls,
    }
}

async fn reset(ws: &mut Ws) -> Value {
    let f = ask(ws, json!({"type": "reset", "data": {"test_uid": BS001}})).await;
    assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
    f["data"].clone()
}

async fn step(ws: &mut Ws, action: Value) -> Value {
    let f = ask(ws, json!({"type": "step", "data": action})).await;
    assert_eq!(f["type"], "observation", "{f}");
    f["data"].clone()
}

fn single(name: &str, args: &Value, id: Option<&str>) -> Value {
    json!({"metadata": {}, "type": "call_tool", "tool_name": name, "arguments": args, "call_id": id, "parallel_tool_calls": []})
}

fn batch(children: &[(&str, &Value, &str, Option<&str>)]) -> Value {
    let c: Vec<Value> = children
        .iter()
        .map(|(n, a, id, pe)| json!({"name": n, "arguments": a, "call_id": id, "parse_error": pe}))
        .collect();
    json!({"metadata": {}, "type": "call_tool", "tool_name": null, "arguments": {}, "call_id": null, "parallel_tool_calls": c})
}

fn submit(content: &str) -> Value {
    json!({"metadata": {}, "type": "submit_message", "content": content, "terminal_tool_calls": [], "tool_calls_before_content": false})
}

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn tool_messages(o: &Value) -> Vec<Value> {
    o["observation"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["T"] == "ParallelToolCall" || m["T"] == "ToolResponse")
        .cloned()
        .collect()
}

/// Mirrors: reset shows the task, the agent's built-in tools then the scenario's, and no
/// private state; `list_tools` lists the same tools; one socket keeps one episode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_shows_public_task_and_tools_and_list_tools_agrees() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    let r = reset(&mut ws).await;
    let ob = &r["observation"];
    assert_eq!(ob["task_uid"], BS001);
    assert!(!ob["task"].as_str().unwrap().is_empty());
    let tools = names(&ob["tools"]);
    assert_eq!(tools.first().map(String::as_str), Some(END), "{tools:?}");
    for (t, _) in &l.calls {
        assert!(tools.contains(t), "{t} not in {tools:?}");
    }
    let text = r.to_string();
    for hidden in [
        "user_context",
        "golden",
        "test_code",
        "__tb_test_fn",
        "data_patch",
    ] {
        assert!(!text.contains(hidden), "{hidden} in the reset");
    }
    let listed = step(&mut ws, json!({"metadata": {}, "type": "list_tools"})).await;
    assert_eq!(listed["observation"]["kind"], "tools");
    assert_eq!(listed["observation"]["task_uid"], BS001);
    assert_eq!(listed["observation"]["tools"], ob["tools"]);
    assert_eq!(listed["observation"]["steps_taken"], 0);
    assert_eq!(listed["done"], false);
    let state = ask(&mut ws, json!({"type": "state"})).await;
    assert_eq!(state["data"]["task_uid"], BS001, "{state}");
    assert_eq!(state["data"]["status"], "active");
    l.server.shutdown().await.unwrap();
}

/// Mirrors: a reserved or unknown tool answers `tool_not_found` without ending the episode;
/// a real call echoes its `call_id`; a closing message with `<DONE>` after the right calls
/// passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tools_are_answered_and_call_ids_echoed() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    for name in ["verify", "get_effects", "no_such_tool"] {
        let o = step(&mut ws, single(name, &json!({}), Some("bad-call"))).await;
        assert_eq!(o["done"], false, "{o}");
        assert_eq!(o["observation"]["kind"], "tool");
        assert_eq!(o["observation"]["tool_error"], "tool_not_found");
        assert_eq!(o["observation"]["call_id"], "bad-call");
    }
    for (i, (t, a)) in l.calls.iter().enumerate() {
        let id = format!("call-{i}");
        let o = step(&mut ws, single(t, a, Some(&id))).await;
        assert_eq!(o["observation"]["call_id"], id.as_str(), "{o}");
        assert!(o["observation"].get("tool_error").is_none(), "{o}");
    }
    let o = step(&mut ws, submit("Your order is cancelled. <DONE>")).await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["reward"], 1.0, "{o}");
    assert_eq!(o["observation"]["reward_type"], "pass");
    assert_eq!(o["observation"]["system_error"], false);
    l.server.shutdown().await.unwrap();
}

/// Mirrors: a batch runs its calls in order and answers each by its `call_id`; a call with
/// a parse error is recorded with its error and answered `invalid_args`, never run; the
/// conversation holds one ParallelToolCall then one ToolResponse per call, in order.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_keeps_order_ids_and_parse_errors() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let (t0, a0) = &l.calls[0];
    let pe = "Error: invalid JSON arguments";
    let o = step(
        &mut ws,
        batch(&[
            (t0, a0, "parallel-1", None),
            (t0, &json!({}), "malformed", Some(pe)),
            ("no_such_tool", &json!({}), "parallel-3", None),
        ]),
    )
    .await;
    assert_eq!(o["done"], false, "{o}");
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "tool_batch");
    let results: Vec<(Value, Value)> = ob["tool_results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["call_id"].clone(), r["tool_error"].clone()))
        .collect();
    assert_eq!(
        results,
        vec![
            (json!("parallel-1"), Value::Null),
            (json!("malformed"), json!("invalid_args")),
            (json!("parallel-3"), json!("tool_not_found")),
        ]
    );
    assert_eq!(ob["tool_results"][1]["content"], pe);
    let msgs = tool_messages(&o);
    let kinds: Vec<&str> = msgs.iter().map(|m| m["T"].as_str().unwrap()).collect();
    assert_eq!(
        kinds,
        [
            "ParallelToolCall",
            "ToolResponse",
            "ToolResponse",
            "ToolResponse"
        ]
    );
    assert_eq!(
        msgs[0]["tool_calls"][1]["metadata"]["error"], pe,
        "{}",
        msgs[0]
    );
    let ids: Vec<&str> = msgs[1..]
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["parallel-1", "malformed", "parallel-3"]);
    assert_eq!(ob["steps_taken"], 1);
    l.server.shutdown().await.unwrap();
}

/// Mirrors: a batch holding an end-turn tool ends the episode with `end_turn_tool` in one
/// step and runs none of its calls (so the state-changing sibling has no effect and the
/// task fails).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_with_an_end_turn_tool_runs_no_sibling() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let (last, last_args) = l.calls.last().unwrap();
    let mut pre = Vec::new();
    for (i, (t, a)) in l.calls.iter().enumerate().take(l.calls.len() - 1) {
        pre.push(step(&mut ws, single(t, a, Some(&format!("p{i}")))).await);
    }
    let o = step(
        &mut ws,
        batch(&[
            (last, last_args, "terminal-sibling", None),
            (END, &json!({"reason": "detected"}), "terminal-end", None),
        ]),
    )
    .await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["observation"]["finish_reason"], "end_turn_tool");
    assert_eq!(o["reward"], 0.0, "the sibling ran: {o}");
    assert_eq!(o["observation"]["reward_type"], "fail");
    assert_eq!(o["observation"]["steps_taken"], pre.len() + 1);
    let msgs = tool_messages(&o);
    let last_msg = msgs.last().unwrap();
    assert_eq!(last_msg["T"], "ParallelToolCall", "{last_msg}");
    assert_eq!(last_msg["tool_calls"].as_array().unwrap().len(), 2);
    l.server.shutdown().await.unwrap();
}

/// Mirrors: a closing message without the task's work is a graded fail (reward 0.0), not a
/// system error, with the adapter's test summary.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_check_is_a_plain_zero() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let o = step(&mut ws, submit("Done <DONE>")).await;
    assert_eq!(o["done"], true, "{o}");
    assert_eq!(o["reward"], 0.0);
    let ob = &o["observation"];
    assert_eq!(ob["reward_type"], "fail");
    assert_eq!(ob["system_error"], false);
    assert_eq!(
        ob["test_summary"],
        json!({"passed": false, "graded": true, "is_system_error": false})
    );
    l.server.shutdown().await.unwrap();
}

/// Mirrors: the simulated user answers a plain message; the visible history ends with the
/// agent's text and the user's reply; the harness's `_finish` then grades the episode.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulated_user_answers_and_history_stays_visible() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let o = step(&mut ws, submit("What value?")).await;
    assert_eq!(o["done"], false, "{o}");
    let ob = &o["observation"];
    assert_eq!(ob["kind"], "user");
    assert_eq!(ob["user_message"], USER_REPLY);
    let contents: Vec<&str> = ob["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .collect();
    assert_eq!(contents[contents.len() - 2..], ["What value?", USER_REPLY]);
    let t = step(
        &mut ws,
        json!({"metadata": {}, "type": "_finish", "reason": "harness"}),
    )
    .await;
    assert_eq!(t["done"], true, "{t}");
    assert_eq!(t["observation"]["finish_reason"], "harness");
    assert_eq!(t["observation"]["test_summary"]["graded"], true);
    l.server.shutdown().await.unwrap();
}

/// Mirrors: an episode finalizes once; later actions get the same terminal observation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_episode_finalizes_once() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let first = step(
        &mut ws,
        json!({"metadata": {}, "type": "_finish", "reason": "limit"}),
    )
    .await;
    assert_eq!(first["done"], true, "{first}");
    assert_eq!(first["observation"]["finish_reason"], "limit");
    for again in [
        json!({"metadata": {}, "type": "_finish", "reason": "limit"}),
        json!({"metadata": {}, "type": "_finish", "reason": "harness"}),
        submit("more"),
    ] {
        let o = step(&mut ws, again).await;
        assert_eq!(o, first);
    }
    l.server.shutdown().await.unwrap();
}

/// Mirrors: a second reset on the same socket starts afresh; `close` ends the session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_twice_then_close() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    let (t0, a0) = &l.calls[0];
    step(&mut ws, single(t0, a0, Some("x"))).await;
    let s1 = ask(&mut ws, json!({"type": "state"})).await["data"].clone();
    assert_eq!(s1["step_count"], 1, "{s1}");
    reset(&mut ws).await;
    let s2 = ask(&mut ws, json!({"type": "state"})).await["data"].clone();
    assert_eq!(s2["step_count"], 0, "{s2}");
    assert_eq!(s2["status"], "active");
    assert_ne!(s1["episode_id"], s2["episode_id"]);
    use futures_util::{SinkExt, StreamExt};
    ws.send(tokio_tungstenite::tungstenite::Message::Text(
        json!({"type": "close"}).to_string().into(),
    ))
    .await
    .unwrap();
    let next = tokio::time::timeout(GUARD, ws.next()).await.unwrap();
    assert!(
        !matches!(
            next,
            Some(Ok(tokio_tungstenite::tungstenite::Message::Text(_)))
        ),
        "{next:?}"
    );
    l.server.shutdown().await.unwrap();
}

/// Mirrors: the action schema is strict (non-object arguments, a single call beside a batch
/// are refused) and `/schema` lists three public actions, not `_finish`; the simulation
/// routes `/reset`, `/step`, `/state` are absent; `/ready` reports Typesense as not
/// observable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strict_actions_public_schema_and_readiness() {
    let l = live().await;
    let mut ws = connect(&l.server.url()).await;
    reset(&mut ws).await;
    for bad in [
        json!({"type": "call_tool", "tool_name": "lookup", "arguments": []}),
        json!({"type": "call_tool", "tool_name": "lookup", "parallel_tool_calls": [{"name": "lookup", "call_id": "duplicate-mode"}]}),
    ] {
        let f = ask(&mut ws, json!({"type": "step", "data": bad})).await;
        assert_eq!(f["data"]["code"], "VALIDATION_ERROR", "{f}");
    }
    let (status, body) = http("GET", &format!("{}/schema", l.server.url())).await;
    assert_eq!(status, 200, "{body}");
    let schema: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(schema["action"]["oneOf"].as_array().unwrap().len(), 3);
    assert!(!schema["action"].to_string().contains("_finish"));
    assert!(schema["action"].to_string().contains("submit_message"));
    assert!(!schema["observation"].to_string().contains("user_context"));
    for route in ["reset", "step", "state"] {
        let (status, _) = http("POST", &format!("{}/{route}", l.server.url())).await;
        assert!((400..500).contains(&status), "/{route}: {status}");
    }
    let (status, body) = http("GET", &format!("{}/ready", l.server.url())).await;
    assert_eq!(status, 200, "{body}");
    let ready: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(ready["data"], true);
    assert_eq!(ready["session_proxy"], true);
    assert_eq!(ready["runtime_config"], true);
    assert_eq!(ready["user_model"], true);
    assert_eq!(ready["judge_model"], true);
    assert_eq!(ready["typesense"]["observable"], false);
    assert_eq!(ready["typesense"]["ready"], Value::Null);
    assert!(
        ready["typesense"]["limitation"]
            .as_str()
            .unwrap()
            .contains("not observable")
    );
    l.server.shutdown().await.unwrap();
}

/// Mirrors the not-ready rows of the adapter's readiness table: without a usable run config
/// `/ready` answers 503 and says which part is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn readiness_without_a_run_config() {
    let server = start_server(tb_openenv::Options::new(example(), None)).await;
    let (status, body) = http("GET", &format!("{}/ready", server.url())).await;
    assert_eq!(status, 503, "{body}");
    let ready: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(ready["data"], true);
    assert_eq!(ready["runtime_config"], false);
    assert_eq!(ready["user_model"], false);
    assert_eq!(ready["judge_model"], false);
    server.shutdown().await.unwrap();
}
