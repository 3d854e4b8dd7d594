//! The slow work the app asks for (model turns, the simulated user, grading, tool calls on a
//! remote session), as values the app hands out and gets back: [`Job::run`] does the work
//! with the project's episode, user simulator and grader, reporting progress (each message,
//! the effects after each tool call) through a [`Sink`], and returns a [`Done`] the app takes
//! back in. A job holding the session gives it back in its [`Done`], also when [`Stop`]ped.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tb_core::{FinishReason, Message, StateVerdict, Task, ToolCall, TrialRecord};
use tb_eval::episode::{
    Agent, AgentReply, AgentTools, BoxFuture, EpisodeError, EpisodeSpec, EpisodeState,
};
use tb_eval::root::TaskSession;
use tb_eval::run::RunEnv;
use tb_eval::tools::EpisodeSession;
use tb_eval::tools::{BoxFut, ToolBackend};
use tb_eval::user_sim::UserTurn;
use tb_llm::{LlmClient, LlmError};

/// What a running job reports as it goes.
#[derive(Debug, Clone)]
pub enum Progress {
    /// A message joined the conversation (observed by the agent, or replied by it).
    Message(Message),
    /// The in-process session after a tool call (for the effects pane).
    Session(TaskSession),
    /// A remote session's state verdicts after a tool call (its servers' effects).
    Verdicts(Result<Vec<StateVerdict>, String>),
}

/// Why a turn or a tool call failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// What failed, for the person.
    pub message: String,
    /// The tool backend failed (a tool server crashed, hung or answered garbage): the attempt
    /// is a system error. Otherwise a model endpoint failed, and the session goes on.
    pub system: bool,
}

impl From<EpisodeError> for Failure {
    fn from(e: EpisodeError) -> Self {
        Failure {
            system: e.role == "tools",
            message: e.to_string(),
        }
    }
}

/// Asks running jobs to stop (the app quits): each gives back what it holds at once.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<(AtomicBool, tokio::sync::Notify)>);

impl Stop {
    /// Stops every job holding this token, now and later.
    pub fn stop(&self) {
        self.0.0.store(true, Ordering::Release);
        self.0.1.notify_waiters();
    }

    /// Whether stopped.
    pub fn is_stopped(&self) -> bool {
        self.0.0.load(Ordering::Acquire)
    }

    /// Waits until stopped.
    pub async fn stopped(&self) {
        loop {
            let notified = self.0.1.notified();
            if self.is_stopped() {
                return;
            }
            notified.await;
        }
    }

    /// Runs `fut` unless stopped first (`None`: stopped; `fut` is dropped).
    pub async fn run<F: std::future::Future>(&self, fut: F) -> Option<F::Output> {
        tokio::select! {
            biased;
            () = self.stopped() => None,
            r = fut => Some(r),
        }
    }
}

/// The text of a stopped job.
const STOPPED: &str = "stopped: tb tui is quitting";

/// Where progress goes.
pub type Sink = Arc<dyn Fn(Progress) + Send + Sync>;

/// Pause and single steps of a watched episode: the agent waits here before each reply.
#[derive(Debug, Clone, Default)]
pub struct Gate(Arc<(Mutex<GateState>, tokio::sync::Notify)>);

#[derive(Debug, Default)]
struct GateState {
    paused: bool,
    steps: u32,
}

impl Gate {
    fn state(&self) -> std::sync::MutexGuard<'_, GateState> {
        self.0
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Pauses or resumes.
    pub fn set_paused(&self, paused: bool) {
        self.state().paused = paused;
        self.0.1.notify_one();
    }

    /// Whether paused.
    pub fn paused(&self) -> bool {
        self.state().paused
    }

    /// Lets one more agent reply through while paused.
    pub fn step(&self) {
        self.state().steps += 1;
        self.0.1.notify_one();
    }

    /// Waits until running, or a step is granted.
    pub async fn wait(&self) {
        loop {
            {
                let mut s = self.state();
                if !s.paused {
                    return;
                }
                if s.steps > 0 {
                    s.steps -= 1;
                    return;
                }
            }
            self.0.1.notified().await;
        }
    }
}

/// A job for [`Job::run`].
pub enum Job {
    /// One agent turn (the model agent answers the user message it is given).
    AgentTurn(Box<TurnJob>),
    /// A whole episode: the model agent and the simulated user, gated step by step.
    Episode(Box<TurnJob>),
    /// The simulated user writes the next user message.
    User(Box<UserJob>),
    /// Grades the session (and writes it as a trial record when `save` is set).
    Test(Box<TestJob>),
    /// A tool call of the person playing the agent, on a remote session.
    Tool(Box<ToolJob>),
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Job::AgentTurn(_) => "Job::AgentTurn",
            Job::Episode(_) => "Job::Episode",
            Job::User(_) => "Job::User",
            Job::Test(_) => "Job::Test",
            Job::Tool(_) => "Job::Tool",
        })
    }
}

/// An agent turn or a whole episode.
pub struct TurnJob {
    /// The run's environment (models, judge, clock).
    pub env: RunEnv,
    /// The task.
    pub task: Task,
    /// The agent's tools.
    pub tools: AgentTools,
    /// System messages (for the episode).
    pub system: Vec<Message>,
    /// The agent.
    pub agent: Box<dyn Agent>,
    /// The live session.
    pub session: Box<dyn EpisodeSession>,
    /// The conversation so far.
    pub st: EpisodeState,
    /// Messages the agent has not seen yet (the user message of this turn).
    pub observe: Vec<Message>,
    /// The pause gate (episodes).
    pub gate: Gate,
    /// Stops the turn (the session comes back).
    pub stop: Stop,
}

/// A simulated-user turn.
pub struct UserJob {
    /// The user model.
    pub client: LlmClient,
    /// The conversation.
    pub history: Vec<Message>,
    /// What the user knows.
    pub context: String,
    /// The user may end the conversation.
    pub can_end: bool,
    /// Budget of the call.
    pub timeout: Option<std::time::Duration>,
    /// The simulated user's prompts.
    pub prompts: std::sync::Arc<tb_eval::prompts::Prompts>,
    /// Stops the call.
    pub stop: Stop,
}

/// Grading (and saving).
pub struct TestJob {
    /// The run's environment.
    pub env: RunEnv,
    /// The task whose checks run.
    pub task: Task,
    /// The session to grade (given back in [`Done::Test`]).
    pub session: Box<dyn EpisodeSession>,
    /// The record skeleton to fill (messages, usage, metadata of the session).
    pub record: TrialRecord,
    /// Where to write the record, if anywhere.
    pub save: Option<PathBuf>,
    /// The tool backend failed earlier (this message): the record is that system error, not
    /// graded (as `tb infer` records an attempt whose tool server failed).
    pub system_error: Option<String>,
    /// Stops the grading (the session comes back).
    pub stop: Stop,
}

/// A tool call the person makes as the agent, on a remote session.
pub struct ToolJob {
    /// The agent's tools (the scenario's grant).
    pub tools: AgentTools,
    /// The session (given back in [`Done::Tool`]).
    pub session: Box<dyn EpisodeSession>,
    /// The call.
    pub call: ToolCall,
    /// Stops the call (the session comes back).
    pub stop: Stop,
}

/// A finished job.
pub enum Done {
    /// An agent turn or an episode ended.
    Turn {
        /// The agent, back.
        agent: Box<dyn Agent>,
        /// The session, back.
        session: Box<dyn EpisodeSession>,
        /// The conversation.
        st: EpisodeState,
        /// `Ok(Some(reason))` when an episode ended; `Err` on an endpoint or tool failure.
        result: Result<Option<FinishReason>, Failure>,
    },
    /// The simulated user answered (or failed).
    User(Result<UserTurn, String>),
    /// The verdict of a `/test` or `/save`.
    Test {
        /// The session, back.
        session: Box<dyn EpisodeSession>,
        /// The graded record (`None` when stopped).
        record: Option<Box<TrialRecord>>,
        /// Where it was written, or why it could not be.
        saved: Option<Result<PathBuf, String>>,
    },
    /// A tool call of the person ended.
    Tool {
        /// The session, back.
        session: Box<dyn EpisodeSession>,
        /// The call.
        call: ToolCall,
        /// The text the agent sees and a direct response, or the backend's failure.
        result: Result<(String, Option<String>), Failure>,
        /// The remote session's state verdicts after the call (when it succeeded).
        verdicts: Option<Result<Vec<StateVerdict>, String>>,
    },
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Done::Turn { result, .. } => write!(f, "Done::Turn({result:?})"),
            Done::User(r) => write!(f, "Done::User({:?})", r.as_ref().map(|u| &u.message)),
            Done::Test { record, saved, .. } => {
                write!(
                    f,
                    "Done::Test({:?}, {saved:?})",
                    record.as_ref().map(|r| &r.verdict)
                )
            }
            Done::Tool { call, result, .. } => {
                write!(f, "Done::Tool({}, {result:?})", call.name)
            }
        }
    }
}

/// The agent, reporting what it sees and says, waiting at the gate before each reply.
struct Watched {
    inner: Box<dyn Agent>,
    sink: Sink,
    gate: Option<Gate>,
}

impl Agent for Watched {
    fn observe(&mut self, msgs: &[Message]) {
        for m in msgs {
            (self.sink)(Progress::Message(m.clone()));
        }
        self.inner.observe(msgs);
    }

    fn reply(&mut self) -> BoxFuture<'_, Result<AgentReply, LlmError>> {
        Box::pin(async move {
            if let Some(g) = &self.gate {
                g.wait().await;
            }
            let r = self.inner.reply().await;
            if let Ok(r) = &r {
                for m in &r.messages {
                    (self.sink)(Progress::Message(m.clone()));
                }
            }
            r
        })
    }

    fn raw(&self) -> Option<Value> {
        self.inner.raw()
    }
}

/// The session, reporting its effects after each tool call: the in-process session itself,
/// a remote session's verdicts (asked of its servers).
struct Reporting<'a> {
    session: &'a mut dyn EpisodeSession,
    sink: Sink,
}

impl ToolBackend for Reporting<'_> {
    fn tool_list(&self) -> Vec<Value> {
        self.session.tool_list()
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFut<'a, Result<String, String>> {
        Box::pin(async move {
            let r = self.session.call(tool, args).await;
            if let Some(s) = self.session.in_process() {
                (self.sink)(Progress::Session(s.clone()));
            } else if r.is_ok()
                && let Some(v) = self.session.verdicts()
            {
                (self.sink)(Progress::Verdicts(v.await));
            }
            r
        })
    }
}

impl Job {
    /// Does the job.
    pub async fn run(self, sink: Sink) -> Done {
        match self {
            Job::AgentTurn(j) => turn(*j, sink, false).await,
            Job::Episode(j) => turn(*j, sink, true).await,
            Job::User(j) => {
                let fut = tb_eval::user_sim::simulate(
                    &j.client, &j.history, &j.context, j.can_end, &j.prompts,
                );
                let fut = async {
                    match j.timeout {
                        Some(d) => match tokio::time::timeout(d, fut).await {
                            Ok(r) => r.map_err(|e| e.to_string()),
                            Err(_) => Err(format!(
                                "no reply within the message budget of {:.1}s",
                                d.as_secs_f64()
                            )),
                        },
                        None => fut.await.map_err(|e| e.to_string()),
                    }
                };
                let r = j.stop.run(fut).await.unwrap_or_else(|| Err(STOPPED.into()));
                Done::User(r)
            }
            Job::Test(j) => test(*j).await,
            Job::Tool(j) => {
                let ToolJob {
                    tools,
                    mut session,
                    call,
                    stop,
                } = *j;
                let work = async {
                    let r = tb_eval::episode::dispatch(&tools, session.as_mut(), &call)
                        .await
                        .map_err(Failure::from);
                    let verdicts = match (&r, session.verdicts()) {
                        (Ok(_), Some(v)) => Some(v.await),
                        _ => None,
                    };
                    (r, verdicts)
                };
                let (result, verdicts) = stop.run(work).await.unwrap_or_else(|| {
                    (
                        Err(Failure {
                            message: STOPPED.into(),
                            system: false,
                        }),
                        None,
                    )
                });
                Done::Tool {
                    session,
                    call,
                    result,
                    verdicts,
                }
            }
        }
    }
}

/// Grades the session as `tb infer` does: in process with the judge (and the Python test body
/// for servers with their own effects), remote from its servers' state verdicts.
async fn test(j: TestJob) -> Done {
    let TestJob {
        env,
        task,
        mut session,
        mut record,
        save,
        system_error,
        stop,
    } = j;
    let response = tb_eval::episode::final_response(&record.messages);
    let graded = stop
        .run(async {
            if let Some(message) = &system_error {
                let kind = tb_eval::episode::TOOL_BACKEND_ERROR;
                let e = tb_eval::record::system_error_record(&env, &task, 0, kind, message);
                record.is_system_error = true;
                record.finish_reason = FinishReason::Done;
                if let Some(mut err) = e.metadata.get("error").cloned() {
                    if let Value::Object(m) = &mut err {
                        m.insert("role".into(), Value::String("tools".into()));
                    }
                    record.metadata.insert("error".into(), err);
                }
                return;
            }
            tb_eval::grade::grade_session(&env, &task, session.as_mut(), &response, &mut record)
                .await;
        })
        .await;
    if graded.is_none() {
        return Done::Test {
            session,
            record: None,
            saved: None,
        };
    }
    let saved = save.map(|p| {
        tb_campaign::write_new(&p, std::slice::from_ref(&record))
            .map(|()| p)
            .map_err(|e| e.to_string())
    });
    Done::Test {
        session,
        record: Some(Box::new(record)),
        saved,
    }
}

async fn turn(j: TurnJob, sink: Sink, episode: bool) -> Done {
    let TurnJob {
        env,
        task,
        tools,
        system,
        agent,
        mut session,
        mut st,
        observe,
        gate,
        stop,
    } = j;
    let mut agent = Watched {
        inner: agent,
        sink: sink.clone(),
        gate: episode.then_some(gate),
    };
    agent.inner.observe(&observe);
    let spec = EpisodeSpec {
        task: &task,
        system,
        tools: &tools,
        user: if episode {
            env.models.user.as_ref()
        } else {
            None
        },
        user_can_end: env.user_can_end,
        message_timeout: env.message_timeout,
        keep_user_history: false,
        prompts: &env.models.prompts,
    };
    let mut backend = Reporting {
        session: session.as_mut(),
        sink,
    };
    let work = async {
        if episode {
            tb_eval::episode::run_episode(&spec, &mut agent, &mut backend, &mut st)
                .await
                .map(Some)
        } else {
            tb_eval::episode::run_agent_turn(&spec, &mut agent, &mut backend, &mut st)
                .await
                .map(|()| None)
        }
    };
    let result = match stop.run(work).await {
        Some(r) => r.map_err(Failure::from),
        None => Err(Failure {
            message: STOPPED.into(),
            system: false,
        }),
    };
    Done::Turn {
        agent: agent.inner,
        session,
        st,
        result,
    }
}
