//! LLM episodes over real HTTP against the scripted mock model server: the whole loop
//! (session, agent model, tools, simulated user, state judge, rubric judge, record) with no
//! key. Tasks come from the shared `thinkingbox-data`; the state-changing tasks are picked by
//! replaying golden calls, so the tests stay honest whichever domain tools are implemented.

use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tb_core::{FinishReason, Message, Task, TrialRecord};
use tb_dataset::Dataset;
use tb_eval::attempt::attempt;
use tb_eval::judge::StateJudge;
use tb_eval::root::LoadedRoot;
use tb_eval::run::{AgentChoice, Dump, Models, RunEnv};
use tb_llm::{LlmClient, LlmConfig, Provider, Secret};
use tb_mock_model::{Api, ContextUser, Fault, MockRequest, MockServer, Reply, ToolPlayer, Turn};
use tb_sandbox::Clock;

const SECRET: &str = "sk-THIS-IS-A-TEST-SECRET-0042";

struct Fixture {
    ds: Dataset,
    sandbox: Arc<LoadedRoot>,
    /// (task, index of its last state-changing golden call)
    state_task: (Task, usize),
    rubric_task: Task,
}

fn hashes(s: &tb_eval::root::TaskSession) -> Vec<String> {
    s.servers
        .iter()
        .map(|x| tb_sandbox::state::hash_stable(&x.state.stable_state()))
        .collect()
}

/// The first task (retail preferred) whose golden replay changes the state, with the index
/// of its last state-changing call.
fn pick_state_task(ds: &Dataset, sandbox: &LoadedRoot, tasks: &[Task]) -> Option<(Task, usize)> {
    let clock = Clock::default();
    for scenario in [
        "sandbox_external_retail",
        "sandbox_consulting",
        "sandbox_auto_insurance",
        "sandbox_neobank_support_v1",
        "external_booking_v1",
    ] {
        for t in tasks.iter().filter(|t| {
            t.scenario == scenario && !t.checks.contains(&tb_core::Check::ValidateRubricsYesno)
        }) {
            let Ok(mut s) = sandbox.session(t, clock) else {
                continue;
            };
            let calls: Vec<(String, Value)> = t
                .servers()
                .iter()
                .flat_map(|sv| t.golden_calls(sv))
                .collect();
            let mut last = None;
            for (i, (tool, args)) in calls.iter().enumerate() {
                let before = hashes(&s);
                s.call(tool, args);
                if hashes(&s) != before {
                    last = Some(i);
                }
            }
            if let Some(i) = last {
                let _ = ds;
                return Some((t.clone(), i));
            }
        }
    }
    None
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let root = tb_test_support::data();
        let ds = Dataset::open(&root).unwrap();
        let sandbox = Arc::new(LoadedRoot::load(ds.root()).unwrap());
        let tasks = ds
            .load_test_list(std::path::Path::new(
                "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml",
            ))
            .unwrap();
        let state_task = pick_state_task(&ds, &sandbox, &tasks)
            .expect("no task with a state-changing golden call");
        let rubric_task = tasks
            .iter()
            .find(|t| t.checks.contains(&tb_core::Check::ValidateRubricsYesno))
            .unwrap()
            .clone();
        Fixture {
            ds,
            sandbox,
            state_task,
            rubric_task,
        }
    })
}

fn model(server: &MockServer, role: &str, api: Api) -> LlmClient {
    let mut c = LlmConfig::chat(&server.url(role, api), "mock");
    c.provider = match api {
        Api::Chat => Provider::Chat,
        Api::Responses => Provider::Responses,
        Api::Anthropic => Provider::Anthropic,
    };
    c.retry.backoff_base = 0.001;
    c.retry.backoff_max = 0.005;
    c.retry.max_retries_timeout = 0;
    c.timeout = 5.0;
    c.credential = Some(tb_llm::config::Credential {
        api_key: Secret::new(SECRET),
        header: "Authorization".into(),
    });
    LlmClient::new(&c).unwrap()
}

fn env(f: &Fixture, server: &MockServer, api: Api, task: &Task) -> RunEnv {
    let mut scenarios = HashMap::new();
    scenarios.insert(
        task.scenario.clone(),
        f.ds.scenario(&task.scenario).unwrap(),
    );
    RunEnv {
        sandbox: f.sandbox.clone(),
        judge: Arc::new(StateJudge::new()),
        clock: Clock::default(),
        agent_name: "think".into(),
        agent: Some(f.ds.agent("think").unwrap()),
        scenarios,
        models: Models {
            agent: Some(model(server, "agent", api)),
            user: Some(model(server, "user", api)),
            judge: Some(model(server, "judge", api)),
            ..Default::default()
        },
        user_can_end: false,
        message_timeout: Some(Duration::from_secs(10)),
        attempt_timeout: Some(Duration::from_mins(1)),
        dump: Dump {
            tools: true,
            userllm: true,
            raw: true,
        },
        provenance: serde_json::Map::new(),
    }
}

/// An attempt of `task` by the model agent over `server`'s Chat Completions endpoint.
async fn model_attempt(f: &Fixture, server: &MockServer, task: &Task) -> TrialRecord {
    attempt(
        &env(f, server, Api::Chat, task),
        AgentChoice::Model,
        task,
        0,
    )
    .await
}

/// A mock server whose agent makes `calls`, one a turn, then says `closing`.
async fn player(calls: Vec<(String, Value)>, closing: &str) -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.set_script(
        "agent",
        ToolPlayer {
            calls,
            closing: closing.into(),
        },
    );
    server
}

/// An HTTP error reply with `status`, its `Retry-After` header and `body`.
fn status(status: u16, retry_after: Option<&str>, body: &str) -> Fault {
    Fault::Status {
        status,
        retry_after: retry_after.map(str::to_string),
        body: body.into(),
    }
}

fn golden_calls(t: &Task) -> Vec<(String, Value)> {
    t.servers().iter().flat_map(|s| t.golden_calls(s)).collect()
}

fn no_secret(rec: &TrialRecord) {
    let text = serde_json::to_string(rec).unwrap();
    assert!(!text.contains(SECRET), "the API key leaked into a record");
}

async fn golden_passes(api: Api) {
    let f = fixture();
    let (task, _) = &f.state_task;
    let server = MockServer::start().await.unwrap();
    let calls = golden_calls(task);
    server.set_script(
        "agent",
        ToolPlayer {
            calls: calls.clone(),
            closing: "Everything you asked for is done. <DONE>".into(),
        },
    );
    server.set_script("user", ContextUser);
    let rec = attempt(&env(f, &server, api, task), AgentChoice::Model, task, 0).await;
    assert!(
        !rec.is_system_error,
        "{api:?}: {:?}",
        rec.metadata.get("error")
    );
    assert_eq!(rec.finish_reason, FinishReason::Done);
    let v = rec.verdict.as_ref().unwrap();
    assert!(
        v.passed,
        "{api:?}: golden-playing agent failed {}: {:?}",
        task.uid, v.state
    );
    assert!(rec.test_result.as_ref().unwrap().result);
    assert_eq!(rec.usage.len(), calls.len() + 1);
    assert!(
        rec.usage_by_role.agent.input_tokens > 0
            && rec.usage_by_role.agent.input_tokens_details.cached_tokens > 0
    );
    let responses = rec
        .messages
        .iter()
        .filter(|m| matches!(m, Message::ToolResponse { .. }))
        .count();
    assert_eq!(responses, calls.len());
    assert!(matches!(&rec.messages[0], Message::Text { role, .. } if role == "system"));
    assert!(rec.tools.is_some() && rec.raw_messages.is_some());
    assert!(server.requests().iter().all(|r| {
        r.headers
            .iter()
            .any(|(k, v)| k == "authorization" && v.ends_with(SECRET))
    }));
    no_secret(&rec);
}

/// Attempts of the same task share the agent tools built for its agent config, scenario and
/// domains: what each attempt gives the model (and dumps) is what a fresh build gives.
#[tb_test_support::data_test]
#[tokio::test]
async fn attempts_reuse_the_agent_tools_of_a_fresh_build() {
    let f = fixture();
    let (task, _) = &f.state_task;
    let agent = f.ds.agent("think").unwrap();
    let scenario = f.ds.scenario(&task.scenario).unwrap();
    let session = f.sandbox.session(task, Clock::default()).unwrap();
    let fresh = tb_eval::episode::AgentTools::build(
        &agent.builtin_tools,
        &scenario.tools,
        &session.tool_list(),
    )
    .unwrap();
    let expected: Vec<Value> = fresh
        .specs
        .iter()
        .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.parameters, "direct_response": fresh.direct.get(&t.name), "is_end_turn": fresh.end_turn.contains(&t.name)}))
        .collect();
    for api in [Api::Chat, Api::Anthropic, Api::Chat] {
        let server = player(
            golden_calls(task),
            "Everything you asked for is done. <DONE>",
        )
        .await;
        let rec = attempt(&env(f, &server, api, task), AgentChoice::Model, task, 0).await;
        assert!(rec.verdict.as_ref().is_some_and(|v| v.passed), "{api:?}");
        assert_eq!(rec.tools, Some(Value::Array(expected.clone())), "{api:?}");
        let sent = server.requests()[0].body["tools"].as_array().unwrap().len();
        assert_eq!(sent, fresh.specs.len(), "{api:?}");
    }
}

#[tb_test_support::data_test]
#[tokio::test]
async fn golden_playing_agent_passes_over_chat_completions() {
    golden_passes(Api::Chat).await;
}

#[tb_test_support::data_test]
#[tokio::test]
async fn golden_playing_agent_passes_over_responses() {
    golden_passes(Api::Responses).await;
}

#[tb_test_support::data_test]
#[tokio::test]
async fn golden_playing_agent_passes_over_anthropic_messages() {
    golden_passes(Api::Anthropic).await;
}

#[tb_test_support::data_test]
#[tokio::test]
async fn skipping_the_last_state_change_fails_with_the_missing_effect_in_the_diff() {
    let f = fixture();
    let (task, last) = &f.state_task;
    let server = MockServer::start().await.unwrap();
    let mut calls = golden_calls(task);
    calls.remove(*last);
    server.set_script(
        "agent",
        ToolPlayer {
            calls,
            closing: "Done. <DONE>".into(),
        },
    );
    let rec = model_attempt(f, &server, task).await;
    assert!(!rec.is_system_error);
    let v = rec.verdict.as_ref().unwrap();
    assert!(!v.passed);
    let diff: Vec<&Value> = v.state.iter().flat_map(|s| s.diff.iter()).collect();
    assert!(!diff.is_empty(), "a failed state check must carry its diff");
    let tr = rec.test_result.as_ref().unwrap();
    assert!(!tr.result && !tr.is_system_error && tr.tb.starts_with("AssertionError: Database hash after test execution does not match expected golden hash\nResult hash: "));
}

#[tb_test_support::data_test]
#[tokio::test]
async fn rubric_task_passes_or_fails_on_the_judges_answer() {
    let f = fixture();
    let task = &f.rubric_task;
    let rubrics = tb_eval::grade::task_rubrics(task);
    assert!(!rubrics.is_empty());
    for (answer, expect) in [("Yes.", true), ("No", false)] {
        let server = player(
            golden_calls(task),
            "Here is a summary of what I did. <DONE>",
        )
        .await;
        let a = answer.to_string();
        server.set_script("judge", move |r: &MockRequest| {
            assert!(r.last_user().unwrap().starts_with(
                "<message>\nHere is a summary of what I did. &lt;DONE&gt;\n</message>\n"
            ));
            Reply::Text(a.clone())
        });
        let rec = model_attempt(f, &server, task).await;
        let v = rec.verdict.as_ref().unwrap();
        assert!(v.state.iter().all(|s| s.passed));
        // a rubric not met ends the judging, as the reference's test asserts each in turn
        let asked = if expect { rubrics.len() } else { 1 };
        assert_eq!(v.rubrics.len(), asked);
        assert_eq!(v.passed, expect, "judge said {answer}");
        assert!(
            v.rubrics
                .iter()
                .all(|r| r.passed == expect && r.answer == answer)
        );
        assert_eq!(server.count("judge"), asked);
        let tr = rec.test_result.as_ref().unwrap();
        assert_eq!(tr.metadata["judge_motivation"], serde_json::Value::Null);
        if !expect {
            assert_eq!(
                tr.tb,
                format!("AssertionError: Rubric yesno failed: {}\n", rubrics[0])
            );
            assert!(tr.lineno > 0, "{tr:?}");
            assert!(
                tr.line_content
                    .trim_start()
                    .starts_with("assert judge.text_yesno(")
            );
        }
        assert!(rec.usage_by_role.judge.input_tokens > 0);
    }
}

#[tb_test_support::data_test]
#[tokio::test]
async fn simulated_user_answers_from_context_then_agent_finishes() {
    let f = fixture();
    let (task, _) = &f.state_task;
    let server = MockServer::start().await.unwrap();
    let calls = golden_calls(task);
    server.set_script("agent", move |r: &MockRequest| {
        let users = r
            .turns
            .iter()
            .filter(|t| matches!(t, Turn::User(_)))
            .count();
        if users < 2 {
            return Reply::Text("Could you confirm your details?".into());
        }
        match calls.get(r.tool_calls_so_far()) {
            Some(c) => Reply::Calls(vec![c.clone()]),
            None => Reply::Text("All done. <DONE>".into()),
        }
    });
    server.set_script("user", ContextUser);
    let rec = model_attempt(f, &server, task).await;
    assert!(!rec.is_system_error, "{:?}", rec.metadata.get("error"));
    assert_eq!(rec.finish_reason, FinishReason::Done);
    assert!(rec.verdict.as_ref().unwrap().passed);
    let user_llm: Vec<&Message> = rec.messages.iter().filter(|m| matches!(m, Message::Text { metadata, .. } if metadata.get("is_user_llm") == Some(&json!(true)))).collect();
    assert_eq!(user_llm.len(), 1);
    let first_ctx_line = task
        .user_context
        .as_deref()
        .unwrap()
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap();
    assert!(matches!(user_llm[0], Message::Text { content, .. } if content == first_ctx_line));
    assert_eq!(
        rec.user_llm_history
            .as_ref()
            .unwrap()
            .as_array()
            .unwrap()
            .len(),
        1
    );
    assert!(rec.usage_by_role.user.input_tokens > 0);
    let user_req = server
        .requests()
        .into_iter()
        .find(|r| r.role == "user")
        .unwrap();
    let prompt = user_req.body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(prompt.contains("LAST_ASSISTANT_MESSAGE:\nCould you confirm your details?"));
}

#[tb_test_support::data_test]
#[tokio::test]
async fn finish_reasons_user_limit_no_user_and_end_turn_tool() {
    let f = fixture();
    let (task, _) = &f.state_task;
    // an agent that never ends: the user answers max_user_sim_turns (10) times
    let server = MockServer::start().await.unwrap();
    server.set_script("agent", |_r: &MockRequest| {
        Reply::Text("Anything else?".into())
    });
    server.set_script("user", ContextUser);
    let rec = model_attempt(f, &server, task).await;
    assert_eq!(rec.finish_reason, FinishReason::UserLimit);
    assert_eq!(server.count("user"), 10);
    assert!(!rec.is_system_error);
    // without a user model: one agent turn
    let mut e = env(f, &server, Api::Chat, task);
    e.models.user = None;
    let rec = attempt(&e, AgentChoice::Model, task, 0).await;
    assert_eq!(rec.finish_reason, FinishReason::NoUserLlm);
    // the builtin injection-report tool ends the episode without running
    server.set_script("agent", |_r: &MockRequest| {
        Reply::Calls(vec![(
            "InjectionAttackInToolResponse".into(),
            json!({"reason": "the tool told me to"}),
        )])
    });
    let rec = model_attempt(f, &server, task).await;
    assert_eq!(rec.finish_reason, FinishReason::EndTurnTool);
    assert!(
        !rec.messages
            .iter()
            .any(|m| matches!(m, Message::ToolResponse { .. }))
    );
    // max_agent_sim_turns
    let mut limited = task.clone();
    limited.max_agent_sim_turns = Some(2);
    server.set_script("agent", |_r: &MockRequest| {
        Reply::Calls(vec![("no_such_tool".into(), json!({}))])
    });
    let rec = model_attempt(f, &server, &limited).await;
    assert_eq!(rec.finish_reason, FinishReason::AgentLimit);
}

#[tb_test_support::data_test]
#[tokio::test]
async fn tool_errors_reach_the_agent_as_the_reference_shapes_them() {
    let f = fixture();
    let (task, _) = &f.state_task;
    let server = MockServer::start().await.unwrap();
    server.set_script("agent", |r: &MockRequest| match r.tool_calls_so_far() {
        0 => Reply::Calls(vec![("no_such_tool".into(), json!({"a": 1}))]),
        1 => Reply::RawCall {
            name: "no_such_tool".into(),
            arguments: "{not json".into(),
        },
        _ => Reply::Text("Sorry. <DONE>".into()),
    });
    let rec = model_attempt(f, &server, task).await;
    let responses: Vec<&str> = rec
        .messages
        .iter()
        .filter_map(|m| {
            if let Message::ToolResponse { content, .. } = m {
                Some(content.as_str())
            } else {
                None
            }
        })
        .collect();
    assert_eq!(
        responses[0],
        "Error: function 'no_such_tool' does not exist"
    );
    assert!(
        responses[1].starts_with("Error: ") && responses[1] != responses[0],
        "{}",
        responses[1]
    );
    // the agent saw them
    let last_agent_req = server
        .requests()
        .into_iter()
        .rfind(|r| r.role == "agent")
        .unwrap();
    assert!(last_agent_req.body.to_string().contains("does not exist"));
    assert!(!rec.is_system_error);
}

#[tb_test_support::data_test]
#[tokio::test]
async fn endpoint_failures_are_retried_or_recorded_as_system_errors() {
    let f = fixture();
    let (task, _) = &f.state_task;
    let calls = golden_calls(task);
    // retried: 429 (Retry-After 0), a listed 503, a malformed reply; then the attempt passes
    let server = player(calls.clone(), "Done <DONE>").await;
    server.push_fault("agent", status(429, Some("0"), "{}"));
    server.push_fault("agent", status(503, None, "{}"));
    server.push_fault("agent", Fault::Malformed("{\"choices\": 7}".into()));
    let rec = model_attempt(f, &server, task).await;
    assert!(!rec.is_system_error, "{:?}", rec.metadata.get("error"));
    assert!(rec.verdict.unwrap().passed);
    // not retried: an unlisted 500 -> system error, never a model failure
    for (fault, kind) in [
        (status(500, None, "{\"error\":\"boom\"}"), "HttpError"),
        (Fault::Malformed("garbage".into()), "MalformedReply"),
    ] {
        let server = player(calls.clone(), "Done <DONE>").await;
        server.push_fault("agent", status(429, None, "{}"));
        for _ in 0..3 {
            server.push_fault("agent", fault.clone());
        }
        let rec = model_attempt(f, &server, task).await;
        assert!(rec.is_system_error);
        assert_eq!(
            rec.metadata["error"]["type"], kind,
            "{:?}",
            rec.metadata["error"]
        );
        assert!(rec.verdict.is_none() && rec.test_result.is_none());
        assert!(
            matches!(rec.messages.last(), Some(Message::Text { role, .. }) if role == "user"),
            "partial conversation kept"
        );
        no_secret(&rec);
    }
    // a model call slower than the message budget -> Timeout system error
    let server = player(calls.clone(), "Done <DONE>").await;
    server.push_fault("agent", Fault::Delay(Duration::from_millis(500)));
    let mut e = env(f, &server, Api::Chat, task);
    e.message_timeout = Some(Duration::from_millis(50));
    let rec = attempt(&e, AgentChoice::Model, task, 0).await;
    assert!(rec.is_system_error);
    assert_eq!(
        rec.finish_reason,
        FinishReason::Done,
        "the reference's value"
    );
    assert_eq!(rec.metadata["error"]["type"], "Timeout");
    // the user model failing is a system error too; a judge failure is a test error
    let server = MockServer::start().await.unwrap();
    server.set_script("agent", |_r: &MockRequest| {
        Reply::Text("Which order?".into())
    });
    server.push_fault("user", status(401, None, "{\"error\":\"bad key\"}"));
    let rec = model_attempt(f, &server, task).await;
    assert!(rec.is_system_error);
    assert!(
        rec.metadata["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("user model")
    );
    let rt = &f.rubric_task;
    let server = player(golden_calls(rt), "Done <DONE>").await;
    server.push_fault("judge", status(400, None, "{\"error\":\"nope\"}"));
    let rec = model_attempt(f, &server, rt).await;
    assert!(!rec.is_system_error);
    let tr = rec.test_result.unwrap();
    assert!(tr.is_system_error && !tr.result, "{tr:?}");
}

#[tb_test_support::data_test]
#[tokio::test]
async fn offline_agents_run_through_the_same_loop() {
    let f = fixture();
    let (task, _) = &f.state_task;
    let server = MockServer::start().await.unwrap();
    let e = env(f, &server, Api::Chat, task);
    let g = attempt(
        &e,
        AgentChoice::Offline(tb_eval::offline::OfflineAgent::Golden),
        task,
        0,
    )
    .await;
    assert!(g.verdict.unwrap().passed);
    let n = attempt(
        &e,
        AgentChoice::Offline(tb_eval::offline::OfflineAgent::Noop),
        task,
        1,
    )
    .await;
    assert!(!n.verdict.unwrap().passed);
    assert_eq!(server.requests().len(), 0);
}
