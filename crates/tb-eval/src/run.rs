//! What the attempts of a run share: the loaded sandbox and golden-state cache, the clock,
//! the models, the agent and scenarios, the budgets and record options ([`RunEnv`]; the
//! offline agents' [`AttemptEnv`]), and which agent plays.

use crate::judge::StateJudge;
use crate::offline::OfflineAgent;
use crate::root::LoadedRoot;
use serde_json::{Map, Value};
use tb_sandbox::Clock;

/// What an attempt needs besides the task.
#[derive(Debug)]
pub struct AttemptEnv<'a> {
    /// Loaded domains.
    pub sandbox: &'a LoadedRoot,
    /// Golden-state cache.
    pub judge: &'a StateJudge,
    /// The session clock.
    pub clock: Clock,
    /// The agent's system prompt (agent YAML `system_instructions`), if any.
    pub agent_instructions: Option<&'a str>,
    /// Each scenario's `bot_instructions`, by scenario name.
    pub bot_instructions: &'a std::collections::HashMap<String, String>,
    /// Provenance copied into each record.
    pub provenance: &'a Map<String, Value>,
}

/// The models of a run.
#[derive(Debug, Clone, Default)]
pub struct Models {
    /// The agent under test.
    pub agent: Option<tb_llm::LlmClient>,
    /// The simulated user.
    pub user: Option<tb_llm::LlmClient>,
    /// The rubric judge.
    pub judge: Option<tb_llm::LlmClient>,
    /// The simulated user's and the judge's prompts.
    pub prompts: std::sync::Arc<crate::prompts::Prompts>,
}

/// Optional record fields to fill (`--dump`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Dump {
    /// `tools`: the tool list as the agent saw it.
    pub tools: bool,
    /// `userllm`: every simulated-user exchange.
    pub userllm: bool,
    /// `raw`: the agent's provider-native conversation.
    pub raw: bool,
}

/// Everything attempts of a run share; owned, so attempts can run as concurrent tasks.
#[derive(Debug, Clone)]
pub struct RunEnv {
    /// Loaded domains.
    pub sandbox: std::sync::Arc<LoadedRoot>,
    /// Golden-state cache.
    pub judge: std::sync::Arc<StateJudge>,
    /// The session clock.
    pub clock: Clock,
    /// Agent name (for records).
    pub agent_name: String,
    /// The agent YAML (instructions and builtin tools), if any.
    pub agent: Option<std::sync::Arc<tb_dataset::AgentConfig>>,
    /// Scenarios by name.
    pub scenarios: std::collections::HashMap<String, std::sync::Arc<tb_dataset::Scenario>>,
    /// Models.
    pub models: Models,
    /// `user_can_end_conversation`.
    pub user_can_end: bool,
    /// Budget of one model call (retries included).
    pub message_timeout: Option<std::time::Duration>,
    /// Budget of a whole attempt's episode.
    pub attempt_timeout: Option<std::time::Duration>,
    /// Optional record fields.
    pub dump: Dump,
    /// Provenance copied into each record.
    pub provenance: Map<String, Value>,
}

/// Which agent plays.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentChoice {
    /// The configured agent model.
    Model,
    /// An offline agent.
    Offline(OfflineAgent),
}
