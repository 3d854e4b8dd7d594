//! The slow work the app asks for (model turns, the simulated user, grading), as values the
//! app hands out and gets back: [`Job::run`] does the work with the project's episode, user
//! simulator and grader, reporting progress (each message, the session after each tool call)
//! through a [`Sink`], and returns a [`Done`] the app takes back in.

use serde_json::Value;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use tb_core::{FinishReason, Message, Task, TrialRecord};
use tb_eval::episode::{Agent, AgentReply, AgentTools, BoxFuture, EpisodeSpec, EpisodeState};
use tb_eval::infer::RunEnv;
use tb_eval::sandbox::TaskSession;
use tb_eval::tools::{BoxFut, ToolBackend};
use tb_eval::user_sim::UserTurn;
use tb_llm::{LlmClient, LlmError};

/// What a running job reports as it goes.
#[derive(Debug, Clone)]
pub enum Progress {
    /// A message joined the conversation (observed by the agent, or replied by it).
    Message(Message),
    /// The session after a tool call (for the effects pane).
    Session(TaskSession),
}

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
}

impl std::fmt::Debug for Job {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Job::AgentTurn(_) => "Job::AgentTurn",
            Job::Episode(_) => "Job::Episode",
            Job::User(_) => "Job::User",
            Job::Test(_) => "Job::Test",
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
    pub session: TaskSession,
    /// The conversation so far.
    pub st: EpisodeState,
    /// Messages the agent has not seen yet (the user message of this turn).
    pub observe: Vec<Message>,
    /// The pause gate (episodes).
    pub gate: Gate,
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
}

/// Grading (and saving).
pub struct TestJob {
    /// The run's environment.
    pub env: RunEnv,
    /// The task whose checks run.
    pub task: Task,
    /// The session to grade (a copy).
    pub session: TaskSession,
    /// The record skeleton to fill (messages, usage, metadata of the session).
    pub record: TrialRecord,
    /// Where to write the record, if anywhere.
    pub save: Option<PathBuf>,
}

/// A finished job.
pub enum Done {
    /// An agent turn or an episode ended.
    Turn {
        /// The agent, back.
        agent: Box<dyn Agent>,
        /// The session, back.
        session: TaskSession,
        /// The conversation.
        st: EpisodeState,
        /// `Ok(Some(reason))` when an episode ended; `Err` on an endpoint or tool failure.
        result: Result<Option<FinishReason>, String>,
    },
    /// The simulated user answered (or failed).
    User(Result<UserTurn, String>),
    /// The verdict of a `/test` or `/save`.
    Test {
        /// The graded record.
        record: Box<TrialRecord>,
        /// Where it was written, or why it could not be.
        saved: Option<Result<PathBuf, String>>,
    },
}

impl std::fmt::Debug for Done {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Done::Turn { result, .. } => write!(f, "Done::Turn({result:?})"),
            Done::User(r) => write!(f, "Done::User({:?})", r.as_ref().map(|u| &u.message)),
            Done::Test { record, saved } => {
                write!(f, "Done::Test({:?}, {saved:?})", record.verdict)
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

/// The in-process session, reporting itself after each tool call.
struct Reporting<'a> {
    session: &'a mut TaskSession,
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
        let text = self.session.call_text(tool, args);
        (self.sink)(Progress::Session(self.session.clone()));
        Box::pin(std::future::ready(Ok(text)))
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
                let r = match j.timeout {
                    Some(d) => match tokio::time::timeout(d, fut).await {
                        Ok(r) => r.map_err(|e| e.to_string()),
                        Err(_) => Err(format!(
                            "no reply within the message budget of {:.1}s",
                            d.as_secs_f64()
                        )),
                    },
                    None => fut.await.map_err(|e| e.to_string()),
                };
                Done::User(r)
            }
            Job::Test(j) => {
                let TestJob {
                    env,
                    task,
                    session,
                    mut record,
                    save,
                } = *j;
                let response = tb_eval::episode::final_response(&record.messages);
                tb_eval::infer::grade(&env, &task, &session, &response, &mut record).await;
                let saved = save.map(|p| {
                    tb_eval::campaign::write_new(&p, std::slice::from_ref(&record))
                        .map(|()| p)
                        .map_err(|e| e.to_string())
                });
                Done::Test {
                    record: Box::new(record),
                    saved,
                }
            }
        }
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
        session: &mut session,
        sink,
    };
    let result = if episode {
        tb_eval::episode::run_episode(&spec, &mut agent, &mut backend, &mut st)
            .await
            .map(Some)
    } else {
        tb_eval::episode::run_agent_turn(&spec, &mut agent, &mut backend, &mut st)
            .await
            .map(|()| None)
    };
    Done::Turn {
        agent: agent.inner,
        session,
        st,
        result: result.map_err(|e| e.to_string()),
    }
}
