//! Agents that need no model: `golden` replays the task's golden calls and ends; `noop` ends at
//! once. They check the benchmark itself (golden must pass every state check, noop must fail
//! every task that asks for a change) and exercise the whole pipeline without a key.

use crate::root::TaskSession;
use serde_json::{Map, Value, json};
use tb_core::{FinishReason, Message, Task, ToolCall};

/// An offline agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OfflineAgent {
    /// Replays the golden calls, then says `<DONE>`.
    Golden,
    /// Says `<DONE>` without doing anything.
    Noop,
}

impl OfflineAgent {
    /// By name (`golden`, `noop`).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "golden" => Some(OfflineAgent::Golden),
            "noop" => Some(OfflineAgent::Noop),
            _ => None,
        }
    }

    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            OfflineAgent::Golden => "golden",
            OfflineAgent::Noop => "noop",
        }
    }
}

/// What an episode produced.
#[derive(Debug, Clone)]
pub struct Episode {
    /// The conversation (after the system prompts).
    pub messages: Vec<Message>,
    /// Why it ended.
    pub finish_reason: FinishReason,
    /// The last visible assistant text (what rubric judges read).
    pub response: String,
}

/// Runs an offline agent against a task's session.
pub fn run_offline(agent: OfflineAgent, task: &Task, session: &mut TaskSession) -> Episode {
    let mut messages = Vec::new();
    if let Some(q) = &task.query {
        messages.push(Message::text("user", q.clone()));
    }
    if agent == OfflineAgent::Golden {
        let mut n = 0usize;
        for server in session.server_names() {
            for (tool, params) in task.golden_calls(&server) {
                n += 1;
                let id = format!("call_golden_{n}");
                messages.push(Message::ParallelToolCall {
                    metadata: Map::new(),
                    tool_calls: vec![ToolCall {
                        metadata: Map::new(),
                        name: tool.clone(),
                        arguments: params.clone(),
                        id: id.clone(),
                    }],
                });
                let outcome = session.call(&tool, &params);
                messages.push(Message::ToolResponse {
                    metadata: Map::new(),
                    name: tool.clone(),
                    content: outcome.to_text(&tool),
                    id,
                });
            }
        }
    }
    let response = "<DONE>".to_string();
    let mut meta = Map::new();
    meta.insert("is_done".into(), Value::Bool(true));
    meta.insert("tag".into(), json!("text"));
    messages.push(Message::Text {
        metadata: meta,
        role: "assistant".into(),
        content: response.clone(),
    });
    Episode {
        messages,
        finish_reason: FinishReason::Done,
        response,
    }
}

/// An offline agent as an [`crate::episode::Agent`], so it runs through the same episode
/// loop as a model: golden plays one golden call per reply, then `<DONE>`; noop says
/// `<DONE>` at once.
#[derive(Debug, Clone)]
pub struct OfflinePlayer {
    calls: Vec<(String, Value)>,
    next: usize,
}

impl OfflineAgent {
    /// The player of this agent for a task (golden calls of every server, in world_state order).
    pub fn player(self, task: &Task) -> OfflinePlayer {
        let calls = match self {
            OfflineAgent::Golden => task
                .servers()
                .iter()
                .flat_map(|s| task.golden_calls(s))
                .collect(),
            OfflineAgent::Noop => Vec::new(),
        };
        OfflinePlayer { calls, next: 0 }
    }
}

impl crate::episode::Agent for OfflinePlayer {
    fn observe(&mut self, _msgs: &[Message]) {}

    fn reply(
        &mut self,
    ) -> crate::episode::BoxFuture<'_, Result<crate::episode::AgentReply, tb_llm::LlmError>> {
        let msg = if let Some((tool, params)) = self.calls.get(self.next) {
            self.next += 1;
            Message::ParallelToolCall {
                metadata: Map::new(),
                tool_calls: vec![ToolCall {
                    metadata: Map::new(),
                    name: tool.clone(),
                    arguments: params.clone(),
                    id: format!("call_golden_{}", self.next),
                }],
            }
        } else {
            let mut meta = Map::new();
            meta.insert("tag".into(), json!("text"));
            Message::Text {
                metadata: meta,
                role: "assistant".into(),
                content: "<DONE>".into(),
            }
        };
        Box::pin(async move {
            Ok(crate::episode::AgentReply {
                messages: vec![msg],
                usage: None,
            })
        })
    }
}
