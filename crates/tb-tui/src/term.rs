//! Running the app in a terminal: raw mode and the alternate screen, restored when the app
//! ends, on an error and on a panic; keys, pastes and resizes in; jobs on a tokio runtime,
//! their progress and results back through a channel. When the app ends (also on a terminal
//! error) the running jobs are stopped, give back the session, and the session is closed: a
//! remote session's tool servers are torn down and reaped before `run` returns.

use crate::app::{App, Setup};
use crate::jobs::{Done, Job, Progress, Sink};
use crate::view::{Theme, draw};
use crossterm::event::{self, DisableBracketedPaste, EnableBracketedPaste, Event};
use crossterm::execute;
use crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use std::io::IsTerminal;
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Errors running the app.
#[derive(Debug, thiserror::Error)]
pub enum TuiError {
    /// The app could not start.
    #[error(transparent)]
    App(#[from] crate::app::AppError),
    /// Not a terminal, or the terminal failed.
    #[error("terminal: {0}")]
    Terminal(String),
}

enum Msg {
    Progress(Progress),
    Done(Done),
}

/// Puts the terminal back: raw mode off, main screen, cursor shown.
fn restore() {
    let _ = disable_raw_mode();
    let _ = execute!(
        std::io::stdout(),
        DisableBracketedPaste,
        LeaveAlternateScreen,
        crossterm::cursor::Show
    );
}

struct Restore;

impl Drop for Restore {
    fn drop(&mut self) {
        restore();
    }
}

/// How long quitting waits for the stopped jobs to give back what they hold.
const STOP_WAIT: Duration = Duration::from_secs(10);
/// How long closing the session may take (a remote session's teardown and reaping have
/// their own budgets; this bounds them all).
const CLOSE_WAIT: Duration = Duration::from_secs(30);

fn spawn(rt: &tokio::runtime::Runtime, tx: &mpsc::Sender<Msg>, job: Job) {
    let ptx = tx.clone();
    let sink: Sink = Arc::new(move |p| {
        let _ = ptx.send(Msg::Progress(p));
    });
    let tx = tx.clone();
    rt.spawn(async move {
        let done = job.run(sink).await;
        let _ = tx.send(Msg::Done(done));
    });
}

/// Runs `tb tui` until the person quits.
pub fn run(setup: Setup) -> Result<(), TuiError> {
    if !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        return Err(TuiError::Terminal(
            "tb tui needs an interactive terminal (stdin and stdout)".into(),
        ));
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| TuiError::Terminal(format!("starting the runtime: {e}")))?;
    if let Some(r) = &setup.remote {
        eprintln!("tb tui: opening the session on {}", r.describe());
    }
    let (mut app, jobs) = rt.block_on(App::open(setup))?;
    let (tx, rx) = mpsc::channel::<Msg>();
    let mut running = 0usize;
    let result = in_terminal(&rt, &mut app, jobs, &tx, &rx, &mut running);
    // The end (quit or a terminal error): stop the jobs, take back what they hold, close
    // the session (a remote one's servers torn down and reaped).
    app.stop_jobs();
    let deadline = Instant::now() + STOP_WAIT;
    while running > 0 {
        match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(Msg::Done(d)) => {
                running -= 1;
                app.on_done(d);
            }
            Ok(Msg::Progress(_)) => {}
            Err(_) => break,
        }
    }
    if app.is_remote() {
        eprintln!("tb tui: closing the session (tearing the tool servers down)");
    }
    let _ = rt.block_on(async { tokio::time::timeout(CLOSE_WAIT, app.close()).await });
    drop(app);
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// The app in the terminal until the person quits (or the terminal fails): the terminal is
/// restored when this returns.
fn in_terminal(
    rt: &tokio::runtime::Runtime,
    app: &mut App,
    jobs: Vec<Job>,
    tx: &mpsc::Sender<Msg>,
    rx: &mpsc::Receiver<Msg>,
    running: &mut usize,
) -> Result<(), TuiError> {
    let theme = Theme::from_env();

    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        restore();
        previous(info);
    }));
    enable_raw_mode().map_err(|e| TuiError::Terminal(e.to_string()))?;
    let restore = Restore;
    execute!(
        std::io::stdout(),
        EnterAlternateScreen,
        EnableBracketedPaste
    )
    .map_err(|e| TuiError::Terminal(e.to_string()))?;
    let mut terminal = Terminal::new(CrosstermBackend::new(std::io::stdout()))
        .map_err(|e| TuiError::Terminal(e.to_string()))?;
    // For the terminal test of the panic hook (crates/tb-cli/tests/it/tui_tmux.rs): a panic
    // with the terminal in raw mode must leave it restored.
    assert!(
        std::env::var_os("TB_TUI_TEST_PANIC").is_none_or(|v| v != "1"),
        "TB_TUI_TEST_PANIC=1: a panic with the terminal in raw mode"
    );

    for j in jobs {
        *running += 1;
        spawn(rt, tx, j);
    }
    let mut dirty = true;
    let mut last_draw = Instant::now();
    loop {
        if dirty || last_draw.elapsed() > Duration::from_millis(500) {
            terminal
                .draw(|f| draw(f, app, theme))
                .map_err(|e| TuiError::Terminal(e.to_string()))?;
            dirty = false;
            last_draw = Instant::now();
        }
        if event::poll(Duration::from_millis(30)).map_err(|e| TuiError::Terminal(e.to_string()))? {
            let jobs = match event::read().map_err(|e| TuiError::Terminal(e.to_string()))? {
                Event::Key(k) => app.on_key(k),
                Event::Paste(s) => {
                    app.on_paste(&s);
                    Vec::new()
                }
                Event::Resize(..) => {
                    let _ = terminal.autoresize();
                    Vec::new()
                }
                _ => Vec::new(),
            };
            for j in jobs {
                *running += 1;
                spawn(rt, tx, j);
            }
            dirty = true;
        }
        while let Ok(m) = rx.try_recv() {
            match m {
                Msg::Progress(p) => app.on_progress(p),
                Msg::Done(d) => {
                    *running -= 1;
                    for j in app.on_done(d) {
                        *running += 1;
                        spawn(rt, tx, j);
                    }
                }
            }
            dirty = true;
        }
        if app.should_quit() {
            break;
        }
    }
    drop(terminal);
    drop(restore);
    Ok(())
}
