//! The app: a state machine fed with events (keys, pastes, job progress and results) that
//! asks for [`Job`]s and never touches the terminal. Everything `tb tui` does is decided
//! here; [`crate::view`] draws it and [`crate::term`] runs it in a terminal.

use crate::effects::Effects;
use crate::input::Input;
use crate::jobs::{Done, Failure, Gate, Job, Progress, Stop, TestJob, ToolJob, TurnJob, UserJob};
use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use tb_core::{FinishReason, Message, Task, ToolCall};
use tb_eval::episode::{Agent, AgentTools, EpisodeState, ModelAgent};
use tb_eval::root::TaskSession;
use tb_eval::run::RunEnv;
use tb_eval::tools::EpisodeSession;
use tb_eval::tools::RemoteTools;

/// The session the app plays on, in process or remote.
type Played = Box<dyn EpisodeSession>;

mod commands;
pub use commands::{COMMANDS, signature, skeleton};

/// Who the person at the keyboard plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Play {
    /// The user: the configured model is the agent.
    User,
    /// The agent: the person calls the tools and answers the (simulated) user.
    Agent,
    /// Nobody: the model agent and the simulated user play, step by step.
    Watch,
}

impl Play {
    /// `user`, `agent` or `watch`.
    pub fn name(self) -> &'static str {
        match self {
            Play::User => "user",
            Play::Agent => "agent",
            Play::Watch => "watch",
        }
    }
}

/// Everything loaded before the app starts.
#[derive(Debug)]
pub struct Setup {
    /// The loaded data root, judge, clock, agent config, scenarios and models.
    pub env: RunEnv,
    /// The task (for `-s SCENARIO`, a task of the scenario without checks).
    pub task: Task,
    /// Whether `task` is a task of the dataset (with checks and a golden state).
    pub is_task: bool,
    /// Who plays.
    pub play: Play,
    /// The dataset, for `/test FILE.py:TEST`.
    pub dataset: Option<Arc<tb_dataset::Dataset>>,
    /// The agent config's name (for records).
    pub agent_label: String,
    /// Notes shown at the start.
    pub notes: Vec<String>,
    /// A remote backend for the task's session (e.g. external tool servers from a
    /// servers.yaml, `tb_external::ExternalTools`): the session is opened there by
    /// [`App::open`] (a task it does not take runs in process).
    pub remote: Option<Arc<dyn RemoteTools>>,
}

/// Errors starting the app.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// The task's session could not be opened.
    #[error(transparent)]
    Session(#[from] tb_eval::root::RootError),
    /// The agent's tools could not be built.
    #[error("the agent's tools: {0}")]
    Tools(String),
    /// A model is needed but not configured, or cannot be used.
    #[error("{0}")]
    Model(String),
    /// The remote session could not be opened (a tool server did not start or init).
    #[error("opening the session on {backend}: {message}")]
    Remote {
        /// The backend (`RemoteTools::describe`).
        backend: String,
        /// What failed.
        message: String,
    },
}

/// How a note is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoteKind {
    /// Information from `tb`.
    Info,
    /// Something went wrong (the session goes on).
    Error,
    /// A passing verdict.
    Pass,
    /// A failing verdict.
    Fail,
    /// Detail lines (diffs, schemas, raw messages).
    Detail,
}

/// One entry of the conversation pane.
#[derive(Debug, Clone, PartialEq)]
pub enum Entry {
    /// The message at this index of the conversation.
    Msg(usize),
    /// A note from `tb`.
    Note(NoteKind, String),
}

/// The app.
pub struct App {
    env: RunEnv,
    task: Task,
    is_task: bool,
    play: Play,
    dataset: Option<Arc<tb_dataset::Dataset>>,
    agent_label: String,
    /// The live session (`None` while a job holds it).
    session: Option<Box<dyn EpisodeSession>>,
    /// The in-process session's initial state (for its changes); `None` for a remote one.
    initial: Option<TaskSession>,
    /// Whether the session is remote (its effects come from its servers).
    remote: bool,
    /// The tool backend failed: the attempt is a system error.
    system_error: Option<String>,
    /// Stops the running jobs when the app quits.
    stop: Stop,
    tools: AgentTools,
    system: Vec<Message>,
    /// The conversation (`None` while a job holds it).
    st: Option<EpisodeState>,
    /// The model agent (`None` in `--play agent`, or while a job holds it).
    agent: Option<Box<dyn Agent>>,
    user_context: String,
    user_turns: u64,
    entries: Vec<Entry>,
    /// Messages reported by the running job, not yet in `st`.
    live: Vec<Message>,
    /// What a running job is doing.
    busy: Option<String>,
    finished: Option<FinishReason>,
    effects: Effects,
    /// The input box.
    pub input: Input,
    esc_pending: bool,
    /// Lines scrolled up from the bottom of the conversation (0: follow).
    pub scroll: usize,
    /// Lines scrolled down in the effects pane.
    pub effects_scroll: usize,
    /// Tool results folded to one line.
    pub fold: bool,
    gate: Gate,
    next_call: u64,
    quit: bool,
    hint_override: Option<String>,
    told_no_user: bool,
}

impl std::fmt::Debug for App {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("App")
            .field("task", &self.task.uid)
            .field("play", &self.play)
            .field("busy", &self.busy)
            .finish_non_exhaustive()
    }
}

/// What the view needs to know of a message.
pub fn visible(m: &Message) -> bool {
    !matches!(m, Message::Text { role, .. } if role == "system")
}

impl App {
    /// Builds the app on an in-process session, and the jobs to start with (the first agent
    /// turn in `--play user` when the task has a query; the episode in `--play watch`). A
    /// setup with a remote backend is opened with [`App::open`].
    pub fn new(setup: Setup) -> Result<(App, Vec<Job>), AppError> {
        if let Some(r) = &setup.remote {
            return Err(AppError::Remote {
                backend: r.describe(),
                message: "a remote session opens asynchronously: use App::open".into(),
            });
        }
        let session = setup.env.sandbox.session(&setup.task, setup.env.clock)?;
        App::build(setup, Box::new(session), None).map_err(|(e, _)| e)
    }

    /// [`App::new`], the session opened on the setup's remote backend when it has one and
    /// takes the task (its servers started and initialised; a failure is
    /// [`AppError::Remote`]), else in process. A failure after the remote session opened
    /// closes it (its servers torn down and reaped) before returning.
    pub async fn open(mut setup: Setup) -> Result<(App, Vec<Job>), AppError> {
        let opened = match setup.remote.take() {
            Some(r) => match r.open_task(&setup.task).await {
                Ok(s) => s,
                Err(message) => {
                    return Err(AppError::Remote {
                        backend: r.describe(),
                        message,
                    });
                }
            },
            None => None,
        };
        let Some(remote) = opened else {
            return App::new(setup);
        };
        let mut session = remote;
        let verdicts = match session.verdicts() {
            Some(v) => Some(v.await),
            None => None,
        };
        match App::build(setup, session, verdicts) {
            Ok(r) => Ok(r),
            Err((e, session)) => {
                session.close().await;
                Err(e)
            }
        }
    }

    /// The app on an opened session (`verdicts`: a remote session's first effects).
    #[allow(
        clippy::result_large_err,
        reason = "the session comes back on failure, to be closed"
    )]
    fn build(
        setup: Setup,
        session: Box<dyn EpisodeSession>,
        verdicts: Option<Result<Vec<tb_core::StateVerdict>, String>>,
    ) -> Result<(App, Vec<Job>), (AppError, Played)> {
        let Setup {
            env,
            task,
            is_task,
            play,
            dataset,
            agent_label,
            notes,
            remote: _,
        } = setup;
        let initial = session.in_process().cloned();
        let remote = initial.is_none();
        let scenario = env.scenarios.get(&task.scenario).cloned();
        let tools = match AgentTools::build(
            env.agent.as_ref().map_or(&[][..], |a| &a.builtin_tools),
            scenario.as_ref().map_or(&[][..], |s| &s.tools),
            &session.tool_list(),
        ) {
            Ok(t) => t,
            Err(e) => return Err((AppError::Tools(e), session)),
        };
        let system = tb_eval::attempt::system_messages_of(
            env.agent.as_ref().map(|a| a.system_instructions.as_str()),
            scenario
                .as_ref()
                .and_then(|s| s.bot_instructions.as_deref()),
            task.bot_instructions.as_deref(),
        );
        let agent: Option<Box<dyn Agent>> = match play {
            Play::Agent => None,
            Play::User | Play::Watch => {
                let Some(client) = env.models.agent.clone() else {
                    return Err((
                        AppError::Model(format!(
                            "--play {} needs an agent model: give -c CONFIG.yaml with orchestrator.agent_model (--play agent needs none)",
                            play.name()
                        )),
                        session,
                    ));
                };
                match ModelAgent::new(client, &tools.specs) {
                    Ok(a) => Some(Box::new(a)),
                    Err(e) => {
                        return Err((AppError::Model(format!("the agent model: {e}")), session));
                    }
                }
            }
        };
        let user_context = task.user_context.clone().unwrap_or_default();
        let mut app = App {
            env,
            task,
            is_task,
            play,
            dataset,
            agent_label,
            session: Some(session),
            initial,
            remote,
            system_error: None,
            stop: Stop::default(),
            tools,
            system,
            st: Some(EpisodeState::default()),
            agent,
            user_context,
            user_turns: 0,
            entries: Vec::new(),
            live: Vec::new(),
            busy: None,
            finished: None,
            effects: Effects::default(),
            input: Input::default(),
            esc_pending: false,
            scroll: 0,
            effects_scroll: 0,
            fold: true,
            gate: Gate::default(),
            next_call: 0,
            quit: false,
            hint_override: None,
            told_no_user: false,
        };
        match verdicts {
            Some(v) => app.remote_effects(v),
            None => app.refresh_effects(None),
        }
        for n in notes {
            app.note(NoteKind::Info, n);
        }
        app.note(
            NoteKind::Info,
            format!(
                "{} tools; /help lists the commands. {}",
                app.tools.specs.len(),
                match play {
                    Play::User => "You are the user: type the customer's turns (Esc+Enter or Alt+Enter sends), or /user.",
                    Play::Agent => "You are the agent: call tools with /tool NAME {json}, answer the user with text (Esc+Enter or Alt+Enter sends).",
                    Play::Watch => "Watching the agent and the simulated user: Ctrl-P pauses or resumes, Ctrl-N steps while paused.",
                }
            ),
        );
        let mut jobs = Vec::new();
        let query = app.task.query.clone().filter(|q| !q.is_empty());
        match play {
            Play::Watch => {
                let st = app.st.take().unwrap_or_default();
                let session = app.session.take().expect("session at start");
                let agent = app.agent.take().expect("model agent in watch");
                jobs.push(Job::Episode(Box::new(TurnJob {
                    env: app.env.clone(),
                    task: app.task.clone(),
                    tools: app.tools.clone(),
                    system: app.system.clone(),
                    agent,
                    session,
                    st,
                    observe: Vec::new(),
                    gate: app.gate.clone(),
                    stop: app.stop.clone(),
                })));
                app.busy = Some("the agent and the simulated user are playing".into());
            }
            Play::User | Play::Agent => {
                let system = app.system.clone();
                app.push_messages(system.clone());
                if let Some(a) = app.agent.as_mut() {
                    a.observe(&system);
                }
                if let Some(q) = query {
                    jobs.extend(app.user_says(Message::text("user", q)));
                } else if play == Play::Agent {
                    app.note(
                        NoteKind::Info,
                        "This task has no query: wait for /user, or write first.".into(),
                    );
                }
            }
        }
        Ok((app, jobs))
    }

    // ---- accessors for the view -------------------------------------------------------

    /// The task.
    pub fn task(&self) -> &Task {
        &self.task
    }

    /// What is played, for the title: the task id, or the scenario.
    pub fn title(&self) -> String {
        if self.is_task {
            self.task.uid.clone()
        } else {
            format!("scenario {}", self.task.scenario)
        }
    }

    /// Who plays.
    pub fn play(&self) -> Play {
        self.play
    }

    /// The conversation pane's entries.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The messages of the conversation (as last known).
    pub fn messages(&self) -> &[Message] {
        self.st.as_ref().map_or(&[][..], |s| &s.messages)
    }

    /// Messages reported by the running job.
    pub fn live(&self) -> &[Message] {
        &self.live
    }

    /// What the app is waiting for, if anything.
    pub fn busy(&self) -> Option<&str> {
        self.busy.as_deref()
    }

    /// Why the episode ended, if it did.
    pub fn finished(&self) -> Option<FinishReason> {
        self.finished
    }

    /// The effects.
    pub fn effects(&self) -> &Effects {
        &self.effects
    }

    /// Whether the app should end.
    pub fn should_quit(&self) -> bool {
        self.quit
    }

    /// Whether the watched episode is paused.
    pub fn paused(&self) -> bool {
        self.gate.paused()
    }

    /// Whether a task (with checks) is being played.
    pub fn is_task(&self) -> bool {
        self.is_task
    }

    /// The agent's tools.
    pub fn tools(&self) -> &AgentTools {
        &self.tools
    }

    /// Whether the session is remote (external tool servers).
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// The tool backend's failure, when a tool server failed: the attempt is a system error.
    pub fn system_error(&self) -> Option<&str> {
        self.system_error.as_deref()
    }

    // ---- the end ----------------------------------------------------------------------

    /// Asks the running jobs to stop (when quitting): each comes back at once with what it
    /// holds, and [`App::on_done`] takes it back without starting anything new.
    pub fn stop_jobs(&mut self) {
        self.quit = true;
        self.stop.stop();
    }

    /// Ends the session: a remote one's servers are torn down and their processes reaped.
    /// (Call after the running jobs came back: a job's session is closed when it drops.)
    pub async fn close(&mut self) {
        if let Some(s) = self.session.take() {
            s.close().await;
        }
    }

    // ---- events -----------------------------------------------------------------------

    /// A key.
    pub fn on_key(&mut self, k: KeyEvent) -> Vec<Job> {
        if k.kind == KeyEventKind::Release {
            return Vec::new();
        }
        let esc = std::mem::take(&mut self.esc_pending);
        self.hint_override = None;
        let ctrl = k.modifiers.contains(KeyModifiers::CONTROL);
        let alt = k.modifiers.contains(KeyModifiers::ALT);
        match k.code {
            KeyCode::Char('c') if ctrl => self.quit = true,
            KeyCode::Char('d') if ctrl && self.input.is_empty() => self.quit = true,
            KeyCode::Char('p') if ctrl && self.play == Play::Watch => {
                let p = !self.gate.paused();
                self.gate.set_paused(p);
            }
            KeyCode::Char('n') if ctrl && self.play == Play::Watch => self.gate.step(),
            KeyCode::Char('o') if ctrl => self.fold = !self.fold,
            KeyCode::Char('u') if ctrl => self.input.kill_to_start(),
            KeyCode::Char('w') if ctrl => self.input.kill_word(),
            KeyCode::Char('a') if ctrl => self.input.home(),
            KeyCode::Char('e') if ctrl => self.input.end(),
            KeyCode::Char(_) if ctrl => {}
            KeyCode::Char(c) if !alt => self.input.insert(c),
            KeyCode::Esc => self.esc_pending = true,
            KeyCode::Enter => {
                let one_line_command =
                    self.input.text().starts_with('/') && !self.input.text().contains('\n');
                if esc || alt || one_line_command {
                    return self.submit();
                }
                if !self.input.is_empty() {
                    self.input.insert('\n');
                }
            }
            KeyCode::Backspace => self.input.backspace(),
            KeyCode::Delete => self.input.delete(),
            KeyCode::Left => self.input.left(),
            KeyCode::Right => self.input.right(),
            KeyCode::Home => self.input.home(),
            KeyCode::End => self.input.end(),
            KeyCode::Up => {
                if self.input.on_first_line() {
                    self.input.history_prev();
                } else {
                    self.input.up();
                }
            }
            KeyCode::Down => {
                if self.input.on_last_line() {
                    self.input.history_next();
                } else {
                    self.input.down();
                }
            }
            KeyCode::PageUp => self.scroll += 10,
            KeyCode::PageDown => self.scroll = self.scroll.saturating_sub(10),
            KeyCode::F(7) => self.effects_scroll = self.effects_scroll.saturating_sub(5),
            KeyCode::F(8) => self.effects_scroll += 5,
            KeyCode::Tab => self.complete(),
            _ => {}
        }
        Vec::new()
    }

    /// A paste (bracketed paste): inserted as typed, line breaks kept.
    pub fn on_paste(&mut self, s: &str) {
        self.esc_pending = false;
        self.input.insert_str(s);
    }

    /// Progress of the running job.
    pub fn on_progress(&mut self, p: Progress) {
        match p {
            Progress::Message(m) => {
                if visible(&m) {
                    self.live.push(m);
                }
            }
            Progress::Session(s) => self.refresh_effects(Some(&s)),
            Progress::Verdicts(v) => self.remote_effects(v),
        }
    }

    /// A job ended.
    pub fn on_done(&mut self, d: Done) -> Vec<Job> {
        self.busy = None;
        self.live.clear();
        if self.stop.is_stopped() {
            // quitting: take back what the job held, start nothing
            match d {
                Done::Turn {
                    agent, session, st, ..
                } => {
                    self.agent = Some(agent);
                    self.session = Some(session);
                    self.st = Some(st);
                }
                Done::Test { session, .. } | Done::Tool { session, .. } => {
                    self.session = Some(session);
                }
                Done::User(_) => {}
            }
            return Vec::new();
        }
        match d {
            Done::Turn {
                agent,
                session,
                st,
                result,
            } => {
                self.agent = Some(agent);
                self.session = Some(session);
                let before = self.entries_msg_len();
                self.st = Some(st);
                let n = self.messages().len();
                for i in before..n {
                    if visible(&self.messages()[i]) {
                        self.entries.push(Entry::Msg(i));
                    }
                }
                self.refresh_effects(None);
                match result {
                    Err(f) if f.system => self.system_failure(&f),
                    Err(Failure { message: e, .. }) => self.note(
                        NoteKind::Error,
                        format!(
                            "{e}. The session goes on: write again, or /user; nothing typed is lost."
                        ),
                    ),
                    Ok(Some(reason)) => {
                        self.finished = Some(reason);
                        self.note(
                            NoteKind::Info,
                            format!(
                                "The episode ended ({}). /test checks the state, /save FILE keeps it.",
                                reason_text(reason)
                            ),
                        );
                    }
                    Ok(None) => {
                        if let Some(r) = tb_eval::episode::should_end(self.messages()) {
                            self.finished = Some(r);
                            self.note(
                                NoteKind::Info,
                                format!(
                                    "The agent ended the conversation ({}). /test checks the state.",
                                    reason_text(r)
                                ),
                            );
                        }
                    }
                }
                Vec::new()
            }
            Done::User(r) => match r {
                Err(e) => {
                    self.note(
                        NoteKind::Error,
                        format!("the user model failed: {e}. The session goes on."),
                    );
                    Vec::new()
                }
                Ok(turn) => {
                    if let Some(st) = self.st.as_mut() {
                        st.user_usage.add(&turn.usage);
                    }
                    self.user_turns += 1;
                    self.user_says(turn.message)
                }
            },
            Done::Test {
                session,
                record,
                saved,
            } => {
                self.session = Some(session);
                let Some(record) = record else {
                    return Vec::new();
                };
                if self.remote
                    && let Some(v) = &record.verdict
                {
                    // the verdicts just asked of the servers are their latest effects
                    self.remote_effects(Ok(v.state.clone()));
                }
                self.show_verdict(&record);
                match saved {
                    Some(Ok(p)) => self.note(
                        NoteKind::Info,
                        format!(
                            "Saved the session as a trial record to {} (tb show, tb run-test, tb agg read it).",
                            p.display()
                        ),
                    ),
                    Some(Err(e)) => self.note(NoteKind::Error, format!("/save: {e}")),
                    None => {}
                }
                Vec::new()
            }
            Done::Tool {
                session,
                call,
                result,
                verdicts,
            } => {
                self.session = Some(session);
                match result {
                    Ok((content, direct)) => self.tool_answered(&call, content, direct),
                    Err(f) if f.system => self.system_failure(&f),
                    Err(f) => self.note(NoteKind::Error, f.message),
                }
                if let Some(v) = verdicts {
                    self.remote_effects(v);
                }
                Vec::new()
            }
        }
    }

    /// The tool backend failed (a tool server crashed, hung or answered garbage): the
    /// attempt is a system error, never a model failure.
    fn system_failure(&mut self, f: &Failure) {
        self.system_error = Some(f.message.clone());
        self.note(
            NoteKind::Error,
            format!(
                "system error: {}. A tool server failed: this attempt is a system error, not a model failure (/save FILE records it as one; /quit ends the session).",
                f.message
            ),
        );
    }

    fn entries_msg_len(&self) -> usize {
        self.messages().len()
    }

    // ---- conversation -----------------------------------------------------------------

    fn note(&mut self, kind: NoteKind, text: String) {
        self.entries.push(Entry::Note(kind, text));
        self.scroll = 0;
    }

    fn push_messages(&mut self, msgs: Vec<Message>) {
        let Some(st) = self.st.as_mut() else {
            return;
        };
        for m in msgs {
            let show = visible(&m);
            st.messages.push(m);
            if show {
                self.entries.push(Entry::Msg(st.messages.len() - 1));
            }
        }
        self.scroll = 0;
    }

    /// A user message joins: the agent model answers it (`--play user`), or it waits for
    /// the person (`--play agent`).
    fn user_says(&mut self, msg: Message) -> Vec<Job> {
        let done = self.env.user_can_end
            && matches!(&msg, Message::Text { metadata, .. } if metadata.get("is_done") == Some(&json!(true)));
        self.push_messages(vec![msg.clone()]);
        if done {
            self.finished = Some(FinishReason::UserDone);
            self.note(
                NoteKind::Info,
                "The user ended the conversation. /test checks the state.".into(),
            );
            return Vec::new();
        }
        match self.play {
            Play::User => self.agent_turn(msg),
            _ => Vec::new(),
        }
    }

    fn agent_turn(&mut self, msg: Message) -> Vec<Job> {
        let (Some(agent), Some(session), Some(st)) =
            (self.agent.take(), self.session.take(), self.st.take())
        else {
            self.note(NoteKind::Error, "no agent model to answer".into());
            return Vec::new();
        };
        self.busy = Some("the agent is working".into());
        vec![Job::AgentTurn(Box::new(TurnJob {
            env: self.env.clone(),
            task: self.task.clone(),
            tools: self.tools.clone(),
            system: self.system.clone(),
            agent,
            session,
            st,
            observe: vec![msg],
            gate: self.gate.clone(),
            stop: self.stop.clone(),
        }))]
    }

    /// The effects of the in-process session (`live`, else the app's); a remote session's
    /// come with its verdicts ([`App::remote_effects`]).
    fn refresh_effects(&mut self, live: Option<&TaskSession>) {
        let Some(initial) = &self.initial else {
            return;
        };
        let Some(s) = live.or(self.session.as_ref().and_then(|s| s.in_process())) else {
            return;
        };
        self.effects = Effects::compute(&self.env, &self.task, self.is_task, initial, s);
    }

    /// The effects of the remote session from its servers' state verdicts.
    fn remote_effects(&mut self, v: Result<Vec<tb_core::StateVerdict>, String>) {
        self.effects = Effects::from_verdicts(
            v.as_deref().map_err(String::as_str),
            self.is_task,
            &self.effects,
        );
    }

    /// Submits the input box.
    pub fn submit(&mut self) -> Vec<Job> {
        let text = self.input.text();
        if text.trim().is_empty() {
            return Vec::new();
        }
        let trimmed = text.trim();
        if let Some(cmd) = trimmed.strip_prefix('/') {
            let cmd = cmd.to_string();
            self.input.take();
            self.scroll = 0;
            // A tool call shows itself (→ NAME {args}); other commands are echoed.
            let is_call = cmd
                .strip_prefix("tool ")
                .is_some_and(|r| r.trim().contains(char::is_whitespace));
            if !is_call {
                self.note(NoteKind::Detail, format!("> /{cmd}"));
            }
            return self.command(&cmd);
        }
        if self.busy.is_some() {
            self.hint_override = Some(format!(
                "busy ({}): your text stays in the box",
                self.busy.as_deref().unwrap_or("")
            ));
            return Vec::new();
        }
        match self.play {
            Play::Watch => {
                self.hint_override =
                    Some("watching: only slash commands here (your text stays in the box)".into());
                Vec::new()
            }
            Play::User => {
                let t = self.input.take();
                self.user_turns += 1;
                self.user_says(Message::text("user", t.trim_end().to_string()))
            }
            Play::Agent => {
                if self.finished.is_some() {
                    self.hint_override = Some(
                        "the episode has ended: /test, /save FILE or /quit (your text stays)"
                            .into(),
                    );
                    return Vec::new();
                }
                let t = self.input.take();
                let t = t.trim_end().to_string();
                let mut m = Message::text("assistant", t.clone());
                let done = tb_eval::episode::is_done_text(&t);
                if done && let Message::Text { metadata, .. } = &mut m {
                    metadata.insert("is_done".into(), json!(true));
                }
                if let Some(st) = self.st.as_mut() {
                    st.agent_turns += 1;
                }
                self.push_messages(vec![m]);
                if done {
                    self.finished = Some(FinishReason::Done);
                    self.note(
                        NoteKind::Info,
                        "You ended the conversation (<DONE>). /test checks the state, /save FILE keeps it."
                            .into(),
                    );
                    return Vec::new();
                }
                self.simulated_user(false)
            }
        }
    }

    /// Asks the simulated user for the next user turn. `explicit`: asked with `/user`.
    fn simulated_user(&mut self, explicit: bool) -> Vec<Job> {
        let Some(client) = self.env.models.user.clone() else {
            if explicit {
                self.note(
                    NoteKind::Error,
                    "No user model is configured (user_model in the config given with -c).".into(),
                );
            } else if !self.told_no_user {
                self.told_no_user = true;
                self.note(
                    NoteKind::Info,
                    "No user model is configured: the user will not answer (/user context and a user_model in -c CONFIG make one). /test checks the state."
                        .into(),
                );
            }
            return Vec::new();
        };
        if self.user_context.is_empty() {
            self.note(
                NoteKind::Error,
                "The simulated user has no context: set one with /user context TEXT.".into(),
            );
            return Vec::new();
        }
        let max_user = self
            .task
            .max_user_sim_turns
            .unwrap_or(tb_dataset::DEFAULT_MAX_USER_SIM_TURNS);
        if !explicit && self.user_turns > max_user {
            self.finished = Some(FinishReason::UserLimit);
            self.note(
                NoteKind::Info,
                format!("The user's turns are used up ({max_user}). /test checks the state."),
            );
            return Vec::new();
        }
        self.busy = Some("the simulated user is writing".into());
        vec![Job::User(Box::new(UserJob {
            client,
            history: self.messages().to_vec(),
            context: self.user_context.clone(),
            can_end: self.env.user_can_end,
            timeout: self.env.message_timeout,
            prompts: self.env.models.prompts.clone(),
            stop: self.stop.clone(),
        }))]
    }

    // ---- commands ---------------------------------------------------------------------

    fn conversation(&mut self) {
        if self.busy.is_some() {
            self.note(
                NoteKind::Error,
                "busy: wait until the current turn ends".into(),
            );
            return;
        }
        let raw = self.agent.as_ref().and_then(|a| a.raw());
        match raw {
            Some(Value::Array(items)) => {
                self.note(
                    NoteKind::Info,
                    format!("The agent model's conversation ({} messages):", items.len()),
                );
                for it in items {
                    self.note(NoteKind::Detail, it.to_string());
                }
            }
            Some(other) => self.note(NoteKind::Detail, other.to_string()),
            None => {
                self.note(
                    NoteKind::Info,
                    "No agent model here (you are the agent); the conversation as recorded:".into(),
                );
                let lines: Vec<String> = self
                    .messages()
                    .iter()
                    .map(|m| serde_json::to_string(m).unwrap_or_default())
                    .collect();
                for l in lines {
                    self.note(NoteKind::Detail, l);
                }
            }
        }
    }

    /// Calls a tool as the agent would: the call and its response join the conversation,
    /// the effects follow. On a remote session the call is a job (its server answers).
    fn call_tool(&mut self, name: &str, arguments: Value) -> Vec<Job> {
        if self.session.is_none() {
            self.note(NoteKind::Error, "busy: the session is in use".into());
            return Vec::new();
        }
        self.next_call += 1;
        let tc = ToolCall {
            metadata: Map::new(),
            name: name.to_string(),
            arguments,
            id: format!("tui_call_{}", self.next_call),
        };
        let end_turn = self.tools.end_turn.contains(name);
        let mut meta = Map::new();
        if end_turn {
            meta.insert("is_end_turn_tool".into(), json!(true));
        }
        let mut tc_meta = tc.clone();
        if end_turn {
            tc_meta
                .metadata
                .insert("is_end_turn_tool".into(), json!(true));
        }
        if let Some(st) = self.st.as_mut() {
            st.agent_turns += 1;
        }
        self.push_messages(vec![Message::ParallelToolCall {
            metadata: meta,
            tool_calls: vec![tc_meta.clone()],
        }]);
        if end_turn {
            if let Some(st) = self.st.as_mut() {
                st.tool_calls.push((tc_meta, String::new()));
            }
            self.finished = Some(FinishReason::EndTurnTool);
            self.note(
                NoteKind::Info,
                format!("{name} ends the turn: the episode has ended. /test checks the state."),
            );
            return Vec::new();
        }
        let Some(session) = self.session.as_mut() else {
            return Vec::new();
        };
        if session.in_process().is_none() {
            let Some(session) = self.session.take() else {
                return Vec::new();
            };
            self.busy = Some(format!("calling {name} on its server"));
            return vec![Job::Tool(Box::new(ToolJob {
                tools: self.tools.clone(),
                session,
                call: tc,
                stop: self.stop.clone(),
            }))];
        }
        let fut = tb_eval::episode::dispatch(&self.tools, session.as_mut(), &tc);
        let outcome = now_or_never(fut);
        let (content, direct) = match outcome {
            Some(Ok(r)) => r,
            Some(Err(e)) => (format!("{e}"), None),
            None => ("the in-process tool did not finish".to_string(), None),
        };
        self.tool_answered(&tc, content, direct);
        self.refresh_effects(None);
        Vec::new()
    }

    /// A tool call's response joins the conversation (and a direct response after it).
    fn tool_answered(&mut self, tc: &ToolCall, content: String, direct: Option<String>) {
        if let Some(st) = self.st.as_mut() {
            st.tool_calls.push((tc.clone(), content.clone()));
        }
        let mut msgs = vec![Message::ToolResponse {
            metadata: Map::new(),
            name: tc.name.clone(),
            content,
            id: tc.id.clone(),
        }];
        if let Some(d) = direct {
            let mut meta = Map::new();
            meta.insert("tag".into(), json!("direct"));
            msgs.push(Message::Text {
                metadata: meta,
                role: "assistant".into(),
                content: d,
            });
        }
        self.push_messages(msgs);
    }

    fn test(&mut self, task_ref: &str, save: Option<PathBuf>) -> Vec<Job> {
        if self.busy.is_some() {
            self.note(
                NoteKind::Error,
                "busy: wait until the current turn ends".into(),
            );
            return Vec::new();
        }
        let task = if task_ref.is_empty() {
            if !self.is_task && save.is_none() {
                self.note(
                    NoteKind::Error,
                    "No checks here (a scenario, not a task): use /test FILE.py:TEST".into(),
                );
                return Vec::new();
            }
            self.task.clone()
        } else {
            if self.remote {
                self.note(
                    NoteKind::Error,
                    format!("/test {task_ref}: the tool servers grade the task they were started for; /test without a task runs its checks"),
                );
                return Vec::new();
            }
            let Some(ds) = &self.dataset else {
                self.note(NoteKind::Error, "no dataset to load the task from".into());
                return Vec::new();
            };
            match ds.load_task(task_ref) {
                Ok(t) => t,
                Err(e) => {
                    self.note(NoteKind::Error, format!("/test {task_ref}: {e}"));
                    return Vec::new();
                }
            }
        };
        if let Some(p) = &save
            && p.exists()
        {
            self.note(
                NoteKind::Error,
                format!("/save: {} exists; give a new file", p.display()),
            );
            return Vec::new();
        }
        let Some(session) = self.session.take() else {
            self.note(NoteKind::Error, "busy: the session is in use".into());
            return Vec::new();
        };
        let record = self.record(&task);
        self.busy = Some(if save.is_some() { "saving" } else { "testing" }.into());
        vec![Job::Test(Box::new(TestJob {
            env: self.env.clone(),
            task,
            session,
            record,
            save,
            system_error: self.system_error.clone(),
            stop: self.stop.clone(),
        }))]
    }

    /// The session as a trial record skeleton (the grader fills the verdict).
    fn record(&self, task: &Task) -> tb_core::TrialRecord {
        let mut rec = tb_eval::record::blank_record(
            &self.env,
            task,
            0,
            tb_eval::record::base_metadata(task, &self.agent_label, 0),
        );
        rec.metadata.insert(
            "tui".into(),
            json!({"play": self.play.name(), "tool_calls": self.st.as_ref().map_or(0, |s| s.tool_calls.len())}),
        );
        if let Some(st) = &self.st {
            rec.messages.clone_from(&st.messages);
            rec.usage.clone_from(&st.agent_usage);
            for u in &st.agent_usage {
                rec.usage_by_role.agent.add(u);
            }
            rec.usage_by_role.user.add(&st.user_usage);
        }
        rec.finish_reason = self.finished.unwrap_or(FinishReason::Done);
        rec
    }

    fn show_verdict(&mut self, rec: &tb_core::TrialRecord) {
        let Some(v) = &rec.verdict else {
            let err = rec.metadata.get("error");
            let text = |k: &str| err.and_then(|e| e.get(k)).and_then(Value::as_str);
            let message = text("message").unwrap_or("no verdict").to_string();
            if rec.is_system_error {
                self.note(
                    NoteKind::Error,
                    format!(
                        "ERROR {}: system error ({}), not graded: {message}",
                        rec.uid,
                        text("type").unwrap_or("unknown")
                    ),
                );
            } else {
                self.note(
                    NoteKind::Fail,
                    format!("FAIL {} (error: {message})", rec.uid),
                );
            }
            return;
        };
        let test_error = rec.test_result.as_ref().filter(|t| t.is_system_error);
        let state_diffs: usize = v.state.iter().map(|s| s.diff.len()).sum();
        let mut line = format!("{} {}", if v.passed { "PASS" } else { "FAIL" }, rec.uid);
        if v.state.iter().all(|s| s.passed) {
            line.push_str(": the state matches the golden state");
        } else {
            line.push_str(&format!(
                ": {state_diffs} difference(s) from the golden state"
            ));
        }
        if let Some(n) = rec.metadata.get("rubrics_not_judged") {
            line.push_str(&format!(
                "; {n} rubric(s) not judged (no judge_model configured)"
            ));
        }
        let failed_rubrics = v.rubrics.iter().filter(|r| !r.passed).count();
        if !v.rubrics.is_empty() {
            line.push_str(&format!(
                "; rubrics {}/{} met",
                v.rubrics.len() - failed_rubrics,
                v.rubrics.len()
            ));
        }
        self.note(
            if v.passed {
                NoteKind::Pass
            } else {
                NoteKind::Fail
            },
            line,
        );
        if let Some(t) = test_error {
            self.note(NoteKind::Error, format!("test error: {}", t.tb));
        }
        for s in &v.state {
            if s.passed {
                continue;
            }
            let known = self.effects.servers.iter().find(|x| x.server == s.server);
            for (_, l) in crate::effects::fix_lines(&s.server, &s.diff, known) {
                self.note(NoteKind::Detail, l);
            }
        }
        for r in v.rubrics.iter().filter(|r| !r.passed) {
            self.note(NoteKind::Detail, format!("  rubric not met: {}", r.rubric));
        }
    }

    // ---- completion and hints ---------------------------------------------------------

    fn complete(&mut self) {
        let text = self.input.text();
        if text.contains('\n') || !text.starts_with('/') {
            return;
        }
        if !text.contains(' ') {
            let cands = commands::command_words(&text);
            self.complete_from(&text, &cands, "");
            return;
        }
        if let Some(rest) = text.strip_prefix("/tool ") {
            match rest.split_once(' ') {
                None => {
                    let names: Vec<&str> = self
                        .tools
                        .specs
                        .iter()
                        .map(|t| t.name.as_str())
                        .filter(|n| n.starts_with(rest))
                        .collect();
                    let names: Vec<String> = names.into_iter().map(str::to_string).collect();
                    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
                    self.complete_from(rest, &refs, "/tool ");
                }
                Some((name, args)) if args.trim().is_empty() => {
                    if let Some(t) = self.tools.specs.iter().find(|t| t.name == name) {
                        let skel = skeleton(&t.parameters);
                        self.input.set(&format!("/tool {name} {skel}"));
                    }
                }
                _ => {}
            }
        }
    }

    fn complete_from(&mut self, typed: &str, cands: &[&str], prefix: &str) {
        match cands {
            [] => self.hint_override = Some("no completion".into()),
            [one] => self.input.set(&format!("{prefix}{one} ")),
            many => {
                let mut common = many[0].to_string();
                for c in &many[1..] {
                    while !c.starts_with(common.as_str()) {
                        common.pop();
                    }
                }
                if common.len() > typed.len() {
                    self.input.set(&format!("{prefix}{common}"));
                }
                let shown: Vec<&str> = many.iter().take(12).copied().collect();
                self.hint_override = Some(format!(
                    "{}{}",
                    shown.join("  "),
                    if many.len() > 12 {
                        format!("  (+{} more)", many.len() - 12)
                    } else {
                        String::new()
                    }
                ));
            }
        }
    }

    /// The hint line above the input box.
    pub fn hint(&self) -> String {
        if let Some(h) = &self.hint_override {
            return h.clone();
        }
        let text = self.input.text();
        if let Some(rest) = text.strip_prefix("/tool ") {
            let name = rest.split(' ').next().unwrap_or("");
            if let Some(t) = self.tools.specs.iter().find(|t| t.name == name) {
                let first = t
                    .description
                    .split(['\n', '.'])
                    .map(str::trim)
                    .find(|s| !s.is_empty())
                    .unwrap_or("");
                return format!("{}  {first}", signature(&t.name, &t.parameters));
            }
            let names: Vec<&str> = self
                .tools
                .specs
                .iter()
                .map(|t| t.name.as_str())
                .filter(|n| n.starts_with(name))
                .take(10)
                .collect();
            return format!("tools: {}  (Tab completes)", names.join("  "));
        }
        if text.starts_with('/') && !text.contains(' ') {
            let c = commands::command_words(&text);
            return c.join("  ");
        }
        match (self.play, self.busy.as_deref()) {
            (_, Some(b)) => format!("{b}..."),
            (Play::Agent, None) => {
                "/tool NAME {json} calls a tool; text answers the user (Esc+Enter sends)".into()
            }
            (Play::User, None) => "write as the customer (Esc+Enter sends), or /user".into(),
            (Play::Watch, None) => "slash commands only; Ctrl-P pause/resume".into(),
        }
    }
}

fn reason_text(r: FinishReason) -> &'static str {
    match r {
        FinishReason::Done => "<DONE>",
        FinishReason::EndTurnTool => "an end-turn tool",
        FinishReason::AgentError => "agent error",
        FinishReason::AgentLimit => "the agent's turns are used up",
        FinishReason::UserLimit => "the user's turns are used up",
        FinishReason::UserDone => "the user ended it",
        FinishReason::NoUserLlm => "no simulated user to answer",
        FinishReason::Skipped => "skipped",
    }
}

/// Polls a future once: the in-process session's tool calls are ready at once.
fn now_or_never<F: std::future::Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    match f.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(v) => Some(v),
        std::task::Poll::Pending => None,
    }
}
