//! The app without a terminal: keys in, jobs run to completion on a runtime, the screen
//! rendered into ratatui's `TestBackend`. On the bundled example (always there) and on a
//! retail task of the benchmark (needs thinkingbox-data: fails in CI without it, skips
//! loudly otherwise). Model-played modes use the scripted mock server of `tb-llm`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tb_eval::run::{Dump, Models, RunEnv};
use tb_mock_model::{Api, MockServer, Reply, ToolPlayer, Turn};
use tb_tui::app::{App, Entry, NoteKind};
use tb_tui::jobs::{Job, Progress};
use tb_tui::view::Theme;
use tb_tui::{Play, Setup};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
}

fn setup(root: &Path, uid: &str, play: Play, models: Models) -> Setup {
    let ds = tb_dataset::Dataset::open(root).unwrap();
    let sandbox = Arc::new(tb_eval::root::LoadedRoot::load(ds.root()).unwrap());
    let clock = tb_sandbox::Clock::default();
    setup_over(ds, sandbox, clock, uid, play, models, None)
}

/// The session of task `uid` of `ds` over `sandbox` with the `think` agent, `models` and a
/// 20 s message budget, its tools from `remote` when given.
pub(crate) fn setup_over(
    ds: tb_dataset::Dataset,
    sandbox: Arc<tb_eval::root::LoadedRoot>,
    clock: tb_sandbox::Clock,
    uid: &str,
    play: Play,
    models: Models,
    remote: Option<Arc<dyn tb_eval::tools::RemoteTools>>,
) -> Setup {
    let task = ds.load_task(uid).unwrap();
    let mut scenarios = std::collections::HashMap::new();
    scenarios.insert(task.scenario.clone(), ds.scenario(&task.scenario).unwrap());
    let env = RunEnv {
        sandbox,
        judge: Arc::new(tb_eval::judge::StateJudge::new()),
        clock,
        agent_name: "think".into(),
        agent: ds.agent("think").ok(),
        scenarios,
        models,
        user_can_end: false,
        message_timeout: Some(std::time::Duration::from_secs(20)),
        attempt_timeout: None,
        dump: Dump::default(),
        provenance: serde_json::Map::default(),
    };
    Setup {
        env,
        task,
        is_task: true,
        play,
        dataset: Some(Arc::new(ds)),
        agent_label: "human".into(),
        notes: Vec::new(),
        remote,
    }
}

/// Runs jobs to completion, feeding their progress and results back (and the jobs those
/// ask for).
pub(crate) fn drive(rt: &tokio::runtime::Runtime, app: &mut App, mut jobs: Vec<Job>) {
    while let Some(job) = jobs.pop() {
        let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
        let s = seen.clone();
        let done = rt.block_on(job.run(Arc::new(move |p| s.lock().unwrap().push(p))));
        for p in seen.lock().unwrap().drain(..) {
            app.on_progress(p);
        }
        jobs.extend(app.on_done(done));
    }
}

fn key(c: KeyCode) -> KeyEvent {
    KeyEvent::new(c, KeyModifiers::NONE)
}

/// Types a line and presses Enter (Esc first for text, as a person would to send it).
pub(crate) fn type_line(rt: &tokio::runtime::Runtime, app: &mut App, s: &str) {
    for c in s.chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    if !s.starts_with('/') {
        app.on_key(key(KeyCode::Esc));
    }
    let jobs = app.on_key(key(KeyCode::Enter));
    drive(rt, app, jobs);
}

pub(crate) fn notes(app: &App) -> Vec<(NoteKind, String)> {
    app.entries()
        .iter()
        .filter_map(|e| match e {
            Entry::Note(k, t) => Some((*k, t.clone())),
            Entry::Msg(_) => None,
        })
        .collect()
}

/// Types a line (as [`type_line`]) and returns the notes it added, one `Kind: text` a line.
pub(crate) fn typed(rt: &tokio::runtime::Runtime, app: &mut App, s: &str) -> String {
    let before = notes(app).len();
    type_line(rt, app, s);
    shown(&notes(app)[before..])
}

pub(crate) fn shown(notes: &[(NoteKind, String)]) -> String {
    notes
        .iter()
        .map(|(k, t)| format!("{k:?}: {t}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub(crate) fn screen(app: &App, w: u16, h: u16, theme: Theme) -> (String, ratatui::buffer::Buffer) {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| tb_tui::view::draw(f, app, theme)).unwrap();
    let buf = t.backend().buffer().clone();
    let mut s = String::new();
    for y in 0..h {
        for x in 0..w {
            s.push_str(buf[(x, y)].symbol());
        }
        s.push('\n');
    }
    (s, buf)
}

pub(crate) fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

fn golden_lines(root: &Path, uid: &str) -> Vec<String> {
    let ds = tb_dataset::Dataset::open(root).unwrap();
    let t = ds.load_task(uid).unwrap();
    t.servers()
        .iter()
        .flat_map(|s| t.golden_calls(s))
        .map(|(tool, p)| format!("/tool {tool} {p}"))
        .collect()
}

const BS001: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

#[test]
fn agent_mode_golden_calls_pass_and_screen_snapshot() {
    let rt = rt();
    let (mut app, jobs) =
        App::new(setup(&example(), BS001, Play::Agent, Models::default())).unwrap();
    assert!(jobs.is_empty(), "no model: nothing to run at the start");
    assert_eq!(app.effects().all_fixed(), Some(false));
    for l in golden_lines(&example(), BS001) {
        type_line(&rt, &mut app, &l);
    }
    assert_eq!(app.effects().all_fixed(), Some(true), "{:?}", app.effects());
    type_line(&rt, &mut app, "/test");
    let n = notes(&app);
    let last = n
        .iter()
        .rev()
        .find(|(k, _)| matches!(k, NoteKind::Pass | NoteKind::Fail))
        .unwrap();
    assert_eq!(last.0, NoteKind::Pass);
    assert!(
        last.1.starts_with("PASS brightside_retail.py:test_bs001"),
        "{}",
        last.1
    );
    type_line(&rt, &mut app, "Your order ORD-5004 is cancelled. <DONE>");
    assert_eq!(app.finished(), Some(tb_core::FinishReason::Done));
    let (text, _) = screen(&app, 140, 40, Theme { color: false });
    insta::assert_snapshot!("agent_mode_after_golden_calls", text);
}

#[test]
fn agent_mode_without_the_last_call_fails_with_the_field() {
    let rt = rt();
    let (mut app, _) = App::new(setup(&example(), BS001, Play::Agent, Models::default())).unwrap();
    let mut calls = golden_lines(&example(), BS001);
    calls.pop();
    for l in calls {
        type_line(&rt, &mut app, &l);
    }
    type_line(&rt, &mut app, "/test");
    let n = notes(&app);
    let i = n.iter().rposition(|(k, _)| *k == NoteKind::Fail).unwrap();
    assert!(
        n[i].1.starts_with("FAIL brightside_retail.py:test_bs001"),
        "{}",
        n[i].1
    );
    let rest: Vec<&str> = n[i + 1..].iter().map(|(_, t)| t.as_str()).collect();
    assert!(
        rest.iter()
            .any(|l| l.trim_start().starts_with("status: is ")),
        "{rest:?}"
    );
    let pane: Vec<String> = app.effects().lines().into_iter().map(|(_, l)| l).collect();
    insta::assert_snapshot!("effects_pane_without_the_last_call", pane.join("\n"));
}

#[test]
fn offline_user_command_and_bad_input() {
    let rt = rt();
    let (mut app, _) = App::new(setup(&example(), BS001, Play::Agent, Models::default())).unwrap();
    insta::assert_snapshot!(typed(&rt, &mut app, "/user"), @"
    Detail: > /user
    Error: No user model is configured (user_model in the config given with -c).
    ");
    insta::assert_snapshot!(typed(&rt, &mut app, "/tool get_order {not json"), @"Error: /tool get_order: the arguments are not valid JSON: key must be a string at line 1 column 2");
    insta::assert_snapshot!(typed(&rt, &mut app, "/tool no_such_tool {}"), @"Error: no tool `no_such_tool`; /tool lists them");
    insta::assert_snapshot!(typed(&rt, &mut app, "/frobnicate"), @"
    Detail: > /frobnicate
    Error: unknown command /frobnicate: /help lists them
    ");
    type_line(&rt, &mut app, "/user context I am Theo.");
    type_line(&rt, &mut app, "/user context");
    assert!(notes(&app).iter().any(|(_, t)| t.trim() == "I am Theo."));
    // Completion: a tool name, then the skeleton of its required arguments.
    for c in "/tool cancel_ord".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(key(KeyCode::Tab));
    assert_eq!(app.input.text(), "/tool cancel_order ");
    app.on_key(key(KeyCode::Tab));
    let text = app.input.text();
    let args: Value = serde_json::from_str(text.trim_start_matches("/tool cancel_order ")).unwrap();
    assert!(args.get("order_id").is_some(), "{text}");
    assert!(
        app.hint().starts_with("cancel_order(order_id: string*"),
        "{}",
        app.hint()
    );
    // A text (not a command) is not sent by Enter alone: it gets a new line.
    app.input.take();
    for c in "hello".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    assert!(app.on_key(key(KeyCode::Enter)).is_empty());
    assert_eq!(app.input.text(), "hello\n");
    // Another task's checks on this state: a task that asks for no change passes.
    app.input.take();
    type_line(
        &rt,
        &mut app,
        "/test brightside_retail.py:test_bs006_order_status_only",
    );
    assert!(
        notes(&app)
            .iter()
            .any(|(k, t)| *k == NoteKind::Pass
                && t.starts_with("PASS brightside_retail.py:test_bs006")),
        "{:?}",
        notes(&app)
    );
    type_line(&rt, &mut app, "/test nope.py:x");
    assert!(
        notes(&app)
            .iter()
            .any(|(k, t)| *k == NoteKind::Error && t.starts_with("/test nope.py:x: "))
    );
    // Control characters pasted (an escape sequence, a bell) are dropped from the input;
    // text from models and tools is made printable by the view (its unit tests).
    app.input.take();
    app.on_paste("clear \u{1b}[2J\u{7} now");
    app.on_key(key(KeyCode::Esc));
    app.on_key(key(KeyCode::Enter));
    let (text, _) = screen(&app, 120, 40, Theme { color: false });
    assert!(!text.contains('\u{1b}') && !text.contains('\u{7}'));
    // (The screen holds this machine's path to the example, wrapped: no snapshot of it.)
    assert!(text.contains("clear [2J now"), "{text}");
    assert!(
        matches!(app.messages().last(), Some(tb_core::Message::Text { role, content, .. }) if role == "assistant" && content == "clear [2J now"),
        "{:?}",
        app.messages().last()
    );
    // Alt+Enter sends text too.
    app.input.take();
    for c in "two\nlines".chars() {
        app.on_key(key(KeyCode::Char(c)));
    }
    app.on_key(KeyEvent::new(KeyCode::Enter, KeyModifiers::ALT));
    assert!(app.input.is_empty());
    assert!(app.messages().iter().any(
        |m| matches!(m, tb_core::Message::Text { role, content, .. } if role == "assistant" && content == "two\nlines")
    ));
    // Ctrl-C quits.
    app.on_key(KeyEvent::new(KeyCode::Char('c'), KeyModifiers::CONTROL));
    assert!(app.should_quit());
}

#[test]
fn saved_record_reads_back_with_the_same_verdict() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _) = App::new(setup(&example(), BS001, Play::Agent, Models::default())).unwrap();
    for l in golden_lines(&example(), BS001) {
        type_line(&rt, &mut app, &l);
    }
    let path = dir.path().join("session.jsonl");
    type_line(&rt, &mut app, &format!("/save {}", path.display()));
    assert!(
        notes(&app)
            .iter()
            .any(|(_, t)| t.starts_with("Saved the session")),
        "{:?}",
        notes(&app)
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let rec: tb_core::TrialRecord = serde_json::from_str(text.trim()).unwrap();
    assert_eq!(rec.verdict.as_ref().map(|v| v.passed), Some(true));
    assert_eq!(rec.key, format!("{BS001}::repeat::0"));
    let run = tb_metrics::load::parse_run("session.jsonl", "session", &text).unwrap();
    let a = tb_metrics::show::find_attempt(&run, BS001, None).unwrap();
    assert!(a.passed());
    // Saving again to the same file is refused (nothing overwritten).
    let again = typed(&rt, &mut app, &format!("/save {}", path.display()));
    insta::assert_snapshot!(tb_test_support::redact(&again, &[(dir.path(), "[TMP]")]), @"
    Detail: > /save [TMP]/session.jsonl
    Error: /save: [TMP]/session.jsonl exists; give a new file
    ");
}

#[test]
fn no_color_means_no_colour() {
    let (app, _) = App::new(setup(&example(), BS001, Play::Agent, Models::default())).unwrap();
    let (_, plain) = screen(&app, 120, 30, Theme { color: false });
    for c in plain.content() {
        assert_eq!(c.fg, ratatui::style::Color::Reset);
        assert_eq!(c.bg, ratatui::style::Color::Reset);
    }
    let (_, coloured) = screen(&app, 120, 30, Theme { color: true });
    assert!(
        coloured
            .content()
            .iter()
            .any(|c| c.fg != ratatui::style::Color::Reset)
    );
    // A narrow terminal stacks the panes; nothing panics on a tiny one.
    let (narrow, _) = screen(&app, 60, 30, Theme { color: false });
    insta::assert_snapshot!("narrow_terminal_stacks_the_panes", narrow);
    let _ = screen(&app, 10, 5, Theme { color: false });
}

fn model_yaml(server: &MockServer, role: &str) -> String {
    format!(
        "type: aoai\ndeployment: mock-{role}\nendpoint_url: {}\ntimeout: 5\nmax_retries_server_error: 0\nmax_retries_connect: 0\nmax_retries_timeout: 0\nmax_retries_too_many_requests: 0\ncredential: {{type: api-key, api_key: sk-test}}\n",
        server.url(role, Api::Chat)
    )
}

/// The models of a session: the mock `server`'s client for each role in `roles` (of
/// `agent`, `user`, `judge`), none for the others.
pub(crate) fn models(server: &MockServer, roles: &[&str]) -> Models {
    let role = |r: &str| roles.contains(&r).then(|| client(server, r));
    Models {
        agent: role("agent"),
        user: role("user"),
        judge: role("judge"),
        prompts: Arc::default(),
    }
}

pub(crate) fn client(server: &MockServer, role: &str) -> tb_llm::LlmClient {
    let cfg: tb_llm::LlmConfig = {
        let yaml = format!(
            "orchestrator:\n  agent_model:\n{}",
            model_yaml(server, role)
                .lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>()
        );
        tb_llm::ConfigFile::parse_with(Path::new("test.yaml"), &yaml, &|_| None)
            .unwrap()
            .agent_model
            .unwrap()
    };
    tb_llm::LlmClient::new(&cfg).unwrap()
}

#[test]
fn user_mode_model_agent_plays_and_survives_a_failing_endpoint() {
    let rt = rt();
    let server = rt.block_on(MockServer::start()).unwrap();
    let ds = tb_dataset::Dataset::open(&example()).unwrap();
    let task = ds.load_task(BS001).unwrap();
    let calls = task.golden_calls(&task.servers()[0]);
    server.set_script(
        "agent",
        ToolPlayer {
            calls,
            closing: "Cancelled. <DONE>".into(),
        },
    );
    // The first request fails: the session goes on, the user message stays.
    server.push_fault(
        "agent",
        tb_mock_model::Fault::Status {
            status: 500,
            retry_after: None,
            body: "boom".into(),
        },
    );
    let models = models(&server, &["agent"]);
    let (mut app, jobs) = {
        let _g = rt.enter();
        App::new(setup(&example(), BS001, Play::User, models)).unwrap()
    };
    assert_eq!(jobs.len(), 1, "the task's query goes to the agent at once");
    drive(&rt, &mut app, jobs);
    let errors: Vec<_> = notes(&app)
        .into_iter()
        .filter(|(k, _)| *k == NoteKind::Error)
        .collect();
    insta::with_settings!({filters => vec![(r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]")]}, {
        insta::assert_snapshot!(shown(&errors), @"Error: agent model: HTTP 500 from http://127.0.0.1:[PORT]/agent/v1/chat/completions after 1 attempt(s): boom. The session goes on: write again, or /user; nothing typed is lost.");
    });
    assert!(
        app.messages()
            .iter()
            .any(|m| matches!(m, tb_core::Message::Text { role, .. } if role == "user"))
    );
    type_line(&rt, &mut app, "Please cancel ORD-5004.");
    assert_eq!(
        app.finished(),
        Some(tb_core::FinishReason::Done),
        "{:?}",
        notes(&app)
    );
    assert_eq!(app.effects().all_fixed(), Some(true));
    type_line(&rt, &mut app, "/test");
    assert!(
        notes(&app)
            .iter()
            .any(|(k, t)| *k == NoteKind::Pass && t.starts_with("PASS"))
    );
    type_line(&rt, &mut app, "/conversation");
    assert!(
        notes(&app)
            .iter()
            .any(|(_, t)| t.starts_with("The agent model's conversation"))
    );
}

#[test]
fn watch_mode_runs_the_episode_with_the_simulated_user() {
    let rt = rt();
    let server = rt.block_on(MockServer::start()).unwrap();
    let ds = tb_dataset::Dataset::open(&example()).unwrap();
    let task = ds.load_task(BS001).unwrap();
    let calls = task.golden_calls(&task.servers()[0]);
    // The agent asks first; after the simulated user's answer it plays the golden calls.
    server.set_script("agent", move |r: &tb_mock_model::MockRequest| {
        let users = r
            .turns
            .iter()
            .filter(|t| matches!(t, Turn::User(_)))
            .count();
        if users < 2 {
            return Reply::Text("Could you confirm the order?".into());
        }
        match calls.get(r.tool_calls_so_far()) {
            Some(c) => Reply::Calls(vec![c.clone()]),
            None => Reply::Text("Cancelled. <DONE>".into()),
        }
    });
    server.set_script("user", tb_mock_model::ContextUser);
    let models = models(&server, &["agent", "user"]);
    let (mut app, jobs) = {
        let _g = rt.enter();
        App::new(setup(&example(), BS001, Play::Watch, models)).unwrap()
    };
    assert!(matches!(jobs.as_slice(), [Job::Episode(_)]));
    let ctrl_p = KeyEvent::new(KeyCode::Char('p'), KeyModifiers::CONTROL);
    app.on_key(ctrl_p);
    assert!(app.paused());
    let (text, _) = screen(&app, 140, 20, Theme { color: false });
    insta::assert_snapshot!("watch_mode_paused", text);
    app.on_key(ctrl_p);
    assert!(!app.paused());
    drive(&rt, &mut app, jobs);
    assert_eq!(
        app.finished(),
        Some(tb_core::FinishReason::Done),
        "{:?}",
        notes(&app)
    );
    assert!(
        app.messages().iter().any(|m| matches!(m, tb_core::Message::Text { metadata, .. } if metadata.get("is_user_llm").is_some())),
        "the simulated user answered"
    );
    assert_eq!(app.effects().all_fixed(), Some(true));
    let (text, _) = screen(&app, 140, 40, Theme { color: false });
    insta::assert_snapshot!("watch_mode_finished", text);
}

#[test]
fn the_gate_pauses_and_steps() {
    let rt = rt();
    let gate = tb_tui::jobs::Gate::default();
    gate.set_paused(true);
    let g = gate.clone();
    let h = rt.spawn(async move { g.wait().await });
    std::thread::sleep(std::time::Duration::from_millis(20));
    assert!(!h.is_finished(), "paused: waits");
    gate.step();
    rt.block_on(h).unwrap();
    let g = gate.clone();
    let h = rt.spawn(async move { g.wait().await });
    gate.set_paused(false);
    rt.block_on(h).unwrap();
}

#[tb_test_support::data_test]
#[test]
fn retail_benchmark_task_in_agent_mode() {
    let root = tb_test_support::data();
    let rt = rt();
    let uid = "sandbox_external_retail_group1.py:test_case_ST002_001";
    let (mut app, _) = App::new(setup(&root, uid, Play::Agent, Models::default())).unwrap();
    let calls = golden_lines(&root, uid);
    assert!(calls.len() >= 2);
    for l in &calls {
        type_line(&rt, &mut app, l);
    }
    type_line(&rt, &mut app, "/test");
    assert!(
        notes(&app)
            .iter()
            .any(|(k, t)| *k == NoteKind::Pass && t.starts_with("PASS "))
    );
    // The effects pane, not the screen: the screen shows the benchmark's conversation text,
    // which is not ours to copy into a snapshot.
    let (text, _) = screen(&app, 200, 50, Theme { color: false });
    assert!(text.contains("to fix: nothing"), "{text}");
    let pane: Vec<String> = app.effects().lines().into_iter().map(|(_, l)| l).collect();
    insta::assert_snapshot!("retail_benchmark_task_effects", pane.join("\n"));
}

#[test]
fn agent_mode_the_simulated_user_answers_from_the_task_context() {
    let rt = rt();
    let server = rt.block_on(MockServer::start()).unwrap();
    server.set_script("user", tb_mock_model::ContextUser);
    let models = models(&server, &["user"]);
    let (mut app, jobs) = {
        let _g = rt.enter();
        App::new(setup(&example(), BS001, Play::Agent, models)).unwrap()
    };
    assert!(jobs.is_empty());
    type_line(&rt, &mut app, "Could you confirm who you are?");
    let last = app.messages().last().cloned();
    match last {
        Some(tb_core::Message::Text {
            role,
            content,
            metadata,
        }) => {
            assert_eq!(role, "user");
            assert!(metadata.get("is_user_llm").is_some());
            assert!(content.contains("Theo Lindqvist"), "{content}");
        }
        other => panic!("expected the simulated user's turn, got {other:?}"),
    }
    // The request carried the task's private context; the agent's tools never saw it.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 1);
    assert!(reqs[0].body.to_string().contains("CUS-1002"));
    // /user asks again explicitly.
    type_line(&rt, &mut app, "/user");
    assert_eq!(server.requests().len(), 2);
}
