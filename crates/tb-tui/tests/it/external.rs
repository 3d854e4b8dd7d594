//! The app on a remote session: the task's tool server from a servers.yaml (our small
//! lending-library server on the official MCP Python SDK, `crates/tb-external/tests/fixtures/
//! tiny_library`), started through `tb_external::ExternalTools` as `tb infer --servers` and
//! `tb mcp-start --servers` start it. Listed tools are the scenario's grant of the server's
//! tools; calls reach the server; the effects pane shows the server's effects; `/test` gives
//! the verdict `tb infer --servers --agent golden` gives; a server killed mid-session is a
//! system error (no panic, no hang); every server process is reaped when the session closes.
//!
//! Python: `$TB_PYTHON` (with `mcp`), else target/py-venv from scripts/ci-python-deps.sh;
//! missing, the tests fail under CI (`CI=true`) and are ignored otherwise
//! (`#[needs(python_mcp)]`).

use super::app::{drive, notes, rt, screen, shown, type_line, typed};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tb_eval::run::Models;
use tb_mock_model::{MockServer, ToolPlayer};
use tb_tui::app::{App, AppError, NoteKind};
use tb_tui::view::Theme;
use tb_tui::{Play, Setup};

const LEND: &str = "tiny_library.py:test_tl001_lend";

use tb_test_support::Need;
use tb_test_support::tiny_library::{self, pids_with};

/// A servers.yaml running the library server with `marker` on its command line (to find
/// its processes); its teardown writes the server's pid to `dir/teardown.log`.
fn servers_file(dir: &Path, marker: &str) -> PathBuf {
    tiny_library::servers_file(dir, marker, &teardown_env(dir))
}

/// The server entry's `env` line sending its teardown log to `dir/teardown.log`.
fn teardown_env(dir: &Path) -> String {
    format!(
        "    env: {{TINY_TEARDOWN_LOG: \"{}\"}}\n",
        dir.join("teardown.log").display()
    )
}

/// Whether `pid` is gone from the process table (exited and reaped: a zombie keeps its
/// /proc entry), waiting a bounded while.
fn reaped(pid: i32) -> bool {
    for _ in 0..200 {
        if !Path::new(&format!("/proc/{pid}")).exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    false
}

/// The external backend of `servers` and the setup of task `uid` over the same sandbox.
fn setup(
    servers: &Path,
    py: &Path,
    uid: &str,
    play: Play,
    models: Models,
    call_timeout: Duration,
) -> (Setup, Arc<tb_external::ExternalTools>) {
    let ds = tb_dataset::Dataset::open(&tiny_library::root()).unwrap();
    let sandbox = Arc::new(tb_eval::root::LoadedRoot::load(ds.root()).unwrap());
    let clock = tb_sandbox::Clock::default();
    let opts = tb_external::ExternalOptions {
        start: tb_external::StartOptions {
            python: py.display().to_string(),
            call_timeout,
            ..tb_external::StartOptions::default()
        },
        ..tb_external::ExternalOptions::default()
    };
    let external = Arc::new(tb_external::ExternalTools::new(
        tb_external::ServersConfig::load(servers).unwrap(),
        sandbox.clone(),
        clock,
        opts,
    ));
    let remote = Some(external.clone() as Arc<dyn tb_eval::tools::RemoteTools>);
    let setup = super::app::setup_over(ds, sandbox, clock, uid, play, models, remote);
    (setup, external)
}

fn open(rt: &tokio::runtime::Runtime, setup: Setup) -> (App, Vec<tb_tui::jobs::Job>) {
    rt.block_on(App::open(setup)).unwrap()
}

/// A session on task [`LEND`] over a fresh library server (in `dir`, marked
/// `tb-tui-<name>-<our pid>`) with `play`, `models` and `call_timeout`: the app, its first
/// jobs, the pid of the server's one process and the backend (which must outlive the app).
fn open_on_server(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    name: &str,
    play: Play,
    models: Models,
    call_timeout: Duration,
) -> (
    App,
    Vec<tb_tui::jobs::Job>,
    i32,
    Arc<tb_external::ExternalTools>,
) {
    let py = tb_test_support::need(Need::PythonMcp);
    let marker = format!("tb-tui-{name}-{}", std::process::id());
    let servers = servers_file(dir, &marker);
    let (setup, external) = setup(&servers, &py, LEND, play, models, call_timeout);
    let (app, jobs) = open(rt, setup);
    let pids = pids_with(&marker);
    assert_eq!(
        pids.len(),
        1,
        "one server process for the session: {pids:?}"
    );
    (app, jobs, pids[0], external)
}

/// [`open_on_server`] for a human playing the agent (no models).
fn open_for_agent(
    rt: &tokio::runtime::Runtime,
    dir: &Path,
    name: &str,
    call_timeout: Duration,
) -> (
    App,
    Vec<tb_tui::jobs::Job>,
    i32,
    Arc<tb_external::ExternalTools>,
) {
    open_on_server(rt, dir, name, Play::Agent, Models::default(), call_timeout)
}

fn last_verdict_note(app: &App) -> (NoteKind, String) {
    notes(app)
        .into_iter()
        .rev()
        .find(|(k, t)| {
            matches!(k, NoteKind::Pass | NoteKind::Fail)
                || (*k == NoteKind::Error && t.starts_with("ERROR "))
        })
        .expect("a verdict")
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_remote_session_lists_calls_shows_effects_and_grades_as_tb_infer() {
    let py = tb_test_support::need(Need::PythonMcp);
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-tui-ext-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let (setup, external) = setup(
        &servers,
        &py,
        LEND,
        Play::Agent,
        Models::default(),
        Duration::from_mins(1),
    );
    let infer_env = setup.env.clone();
    let (mut app, jobs) = open(&rt, setup);
    assert!(jobs.is_empty());
    assert!(app.is_remote());
    let pids = pids_with(&marker);
    assert_eq!(
        pids.len(),
        1,
        "one server process for the session: {pids:?}"
    );

    // The scenario's grant of the server's tools: `secret_admin_reset` (listed by the
    // server, not granted) and the reserved tools are not there.
    insta::assert_snapshot!("remote_tool_list", typed(&rt, &mut app, "/tool"));
    // ... and not reachable.
    let denied = typed(&rt, &mut app, r"/tool secret_admin_reset {}");
    assert!(
        denied.starts_with("Error: no tool `secret_admin_reset`"),
        "{denied}"
    );
    // The golden lend is not done yet: the server's effects say what differs.
    assert_eq!(
        app.effects().all_fixed(),
        Some(false),
        "{:?}",
        app.effects()
    );
    let pane = |app: &App| -> String {
        app.effects()
            .lines()
            .into_iter()
            .map(|(_, l)| l)
            .collect::<Vec<_>>()
            .join("\n")
    };
    insta::assert_snapshot!("remote_effects_at_the_start", pane(&app));

    // Calls go to the server; its texts come back as the tool results.
    type_line(&rt, &mut app, r#"/tool get_book {"book_id": "B1"}"#);
    let Some(tb_core::Message::ToolResponse { content, .. }) = app.messages().last().cloned()
    else {
        panic!("a tool response: {:?}", app.messages().last())
    };
    let book: serde_json::Value = serde_json::from_str(&content).unwrap();
    assert_eq!(book["title"], "The Long Afternoon", "{content}");
    type_line(
        &rt,
        &mut app,
        r#"/tool lend_book {"book_id": "B1", "member_id": "M1"}"#,
    );
    assert_eq!(app.effects().all_fixed(), Some(true), "{:?}", app.effects());
    insta::assert_snapshot!("remote_effects_after_the_golden_calls", pane(&app));

    // The verdict, from the server's effects, as `tb infer --servers --agent golden` gives.
    type_line(&rt, &mut app, "/test");
    let (kind, line) = last_verdict_note(&app);
    assert_eq!(kind, NoteKind::Pass, "{line}");
    assert_eq!(
        line,
        format!("PASS {LEND}: the state matches the golden state")
    );
    let (text, _) = screen(&app, 140, 40, Theme { color: false });
    insta::assert_snapshot!("remote_session_screen", text);
    let saved = dir.path().join("tui.jsonl");
    type_line(&rt, &mut app, &format!("/save {}", saved.display()));
    let tui: tb_core::TrialRecord =
        serde_json::from_str(std::fs::read_to_string(&saved).unwrap().trim()).unwrap();
    let task = tb_dataset::Dataset::open(&tiny_library::root())
        .unwrap()
        .load_task(LEND)
        .unwrap();
    let infer = rt.block_on(tb_eval::attempt::attempt_with(
        &infer_env,
        Some(&*external as &dyn tb_eval::tools::RemoteTools),
        tb_eval::run::AgentChoice::Offline(tb_eval::offline::OfflineAgent::Golden),
        &task,
        0,
    ));
    assert!(!infer.is_system_error, "{:?}", infer.metadata.get("error"));
    assert!(!tui.is_system_error);
    assert_eq!(tui.verdict, infer.verdict, "the TUI grades as tb infer");
    assert_eq!(tui.test_result, infer.test_result);
    assert!(tui.verdict.as_ref().is_some_and(|v| v.passed));

    // Closing tears the server down (its teardown ran) and reaps it.
    rt.block_on(app.close());
    assert!(reaped(pids[0]), "the session's server is reaped");
    assert!(pids_with(&marker).is_empty());
    let log = std::fs::read_to_string(dir.path().join("teardown.log")).unwrap_or_default();
    assert!(
        log.lines().any(|l| l == pids[0].to_string()),
        "__reserved__teardown ran on the session's server: {log:?}"
    );
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_killed_server_is_a_system_error_not_a_panic_and_is_reaped() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let (mut app, _, pid, _external) =
        open_for_agent(&rt, dir.path(), "kill", Duration::from_mins(1));
    // The server dies between two calls (as a crash would).
    let killed = std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = typed(&rt, &mut app, r#"/tool get_book {"book_id": "B1"}"#);
    assert!(
        out.starts_with(
            "Error: system error: tool backend: tool `get_book`: server `tiny_library`"
        ),
        "{out}"
    );
    assert!(out.ends_with("A tool server failed: this attempt is a system error, not a model failure (/save FILE records it as one; /quit ends the session)."), "{out}");
    assert!(app.system_error().is_some());
    assert!(app.busy().is_none(), "no hang: the app is ready again");
    let (text, _) = screen(&app, 140, 30, Theme { color: false });
    assert!(
        text.lines()
            .next()
            .unwrap()
            .contains("SYSTEM ERROR (tool server)"),
        "{text}"
    );
    // The checks do not grade it: a system error, also in the saved record.
    type_line(&rt, &mut app, "/test");
    let (kind, line) = last_verdict_note(&app);
    assert_eq!(kind, NoteKind::Error);
    assert!(
        line.starts_with(&format!(
            "ERROR {LEND}: system error (ToolBackendError), not graded: "
        )),
        "{line}"
    );
    let saved = dir.path().join("crashed.jsonl");
    type_line(&rt, &mut app, &format!("/save {}", saved.display()));
    let rec: tb_core::TrialRecord =
        serde_json::from_str(std::fs::read_to_string(&saved).unwrap().trim()).unwrap();
    assert!(rec.is_system_error);
    assert!(rec.verdict.is_none());
    assert_eq!(rec.metadata["error"]["type"], "ToolBackendError");
    rt.block_on(app.close());
    assert!(reaped(pid), "the killed server is reaped");
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_model_agent_plays_on_the_server_and_a_crash_mid_turn_is_a_system_error() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    let server = rt.block_on(MockServer::start()).unwrap();
    let task = tb_dataset::Dataset::open(&tiny_library::root())
        .unwrap()
        .load_task(LEND)
        .unwrap();
    // The golden calls, then the server crashes on the agent's next call.
    let mut calls = task.golden_calls("tiny_library");
    calls.push(("crash_server".to_string(), serde_json::json!({})));
    server.set_script(
        "agent",
        ToolPlayer {
            calls,
            closing: "Lent. <DONE>".into(),
        },
    );
    let models = super::app::models(&server, &["agent"]);
    let (mut app, jobs, pid, _external) = open_on_server(
        &rt,
        dir.path(),
        "model",
        Play::User,
        models,
        Duration::from_mins(1),
    );
    assert_eq!(jobs.len(), 1, "the task's query goes to the agent at once");
    drive(&rt, &mut app, jobs);
    // The golden calls reached the server (its effects, reported after each call, match the
    // golden state), then the crash ended the turn as a system error.
    assert_eq!(app.effects().all_fixed(), Some(true), "{:?}", app.effects());
    let errors: Vec<_> = notes(&app)
        .into_iter()
        .filter(|(k, _)| *k == NoteKind::Error)
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(
        errors[0]
            .1
            .starts_with("system error: tool backend: tool `crash_server`: server `tiny_library`"),
        "{}",
        shown(&errors)
    );
    assert!(app.system_error().is_some());
    assert!(app.busy().is_none());
    rt.block_on(app.close());
    assert!(reaped(pid), "the crashed server is reaped");
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn quitting_stops_a_hung_call_and_reaps_the_server() {
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    // A short call budget: the teardown of the hung server is not answered either.
    let (mut app, _, pid, _external) =
        open_for_agent(&rt, dir.path(), "hang", Duration::from_secs(2));
    for c in "/tool hang_forever {}".chars() {
        app.on_key(crossterm::event::KeyEvent::new(
            crossterm::event::KeyCode::Char(c),
            crossterm::event::KeyModifiers::NONE,
        ));
    }
    let mut jobs = app.on_key(crossterm::event::KeyEvent::new(
        crossterm::event::KeyCode::Enter,
        crossterm::event::KeyModifiers::NONE,
    ));
    assert!(matches!(jobs.as_slice(), [tb_tui::jobs::Job::Tool(_)]));
    assert!(app.busy().is_some());
    let job = jobs.pop().unwrap();
    let running = rt.spawn(job.run(Arc::new(|_| {})));
    std::thread::sleep(Duration::from_millis(200));
    assert!(!running.is_finished(), "the call hangs");
    // Quitting (as term::run does): the job gives the session back at once, which closes.
    app.stop_jobs();
    let done = rt.block_on(running).unwrap();
    assert!(
        app.on_done(done).is_empty(),
        "nothing new starts when quitting"
    );
    assert!(app.should_quit());
    rt.block_on(app.close());
    assert!(reaped(pid), "the hung server is killed and reaped");
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_server_that_does_not_start_is_a_clear_error() {
    let py = tb_test_support::need(Need::PythonMcp);
    let rt = rt();
    let dir = tempfile::tempdir().unwrap();
    // A server whose command prints to stderr and exits.
    let servers = dir.path().join("servers.yaml");
    std::fs::write(
        &servers,
        format!(
            "servers:\n  tiny_library:\n    type: mcp-process\n    command: {}\n{}",
            r#"["{python}", "-c", "import sys; print('no MCP here', file=sys.stderr); sys.exit(3)"]"#,
            teardown_env(dir.path())
        ),
    )
    .unwrap();
    let (setup, _external) = setup(
        &servers,
        &py,
        LEND,
        Play::Agent,
        Models::default(),
        Duration::from_mins(1),
    );
    let Err(err) = rt.block_on(App::open(setup)) else {
        panic!("the server cannot start")
    };
    assert!(matches!(err, AppError::Remote { .. }), "{err:?}");
    let text = tb_test_support::redact(&err.to_string(), &[(dir.path(), "[TMP]")]);
    insta::with_settings!({filters => vec![(r"exited: exit status: \d+", "exited: exit status: [N]")]}, {
        insta::assert_snapshot!("remote_start_failure", text);
    });
}
