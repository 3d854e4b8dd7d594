//! The trial record: one JSON line per attempt. Its first fields are the reference's
//! `DecodeResult` (so the reference's `tb agg` reads our files); ours follow.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A message of the conversation, tagged by `T` as the reference writes them.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "T")]
pub enum Message {
    /// Text from system, user or assistant. `metadata.tag`: `think`, `text` (default) or `direct`.
    Text {
        /// Extra flags (`tag`, `is_done`, `is_user_llm`, `is_dummy`).
        #[serde(default)]
        metadata: Map<String, Value>,
        /// `system`, `user` or `assistant`.
        role: String,
        /// The text.
        content: String,
    },
    /// One assistant turn's tool calls.
    ParallelToolCall {
        /// Extra flags (`is_end_turn_tool`).
        #[serde(default)]
        metadata: Map<String, Value>,
        /// The calls.
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's answer.
    ToolResponse {
        /// Extra data.
        #[serde(default)]
        metadata: Map<String, Value>,
        /// Tool name.
        name: String,
        /// Text the agent saw.
        content: String,
        /// Call id.
        id: String,
    },
}

impl Message {
    /// A plain text message.
    pub fn text(role: &str, content: impl Into<String>) -> Self {
        Message::Text {
            metadata: Map::new(),
            role: role.into(),
            content: content.into(),
        }
    }

    /// Whether this is visible assistant text (`tag` text or direct, not dummy).
    pub fn is_visible_assistant_text(&self) -> bool {
        match self {
            Message::Text { metadata, role, .. } => {
                role == "assistant"
                    && metadata
                        .get("tag")
                        .and_then(Value::as_str)
                        .unwrap_or("text")
                        != "think"
                    && !metadata
                        .get("is_dummy")
                        .and_then(Value::as_bool)
                        .unwrap_or(false)
            }
            _ => false,
        }
    }
}

/// One tool call inside a [`Message::ParallelToolCall`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "T", rename = "ToolCall")]
pub struct ToolCall {
    /// Extra data (`error` holds an argument parse error).
    #[serde(default)]
    pub metadata: Map<String, Value>,
    /// Tool name.
    pub name: String,
    /// Arguments.
    pub arguments: Value,
    /// Call id.
    pub id: String,
}

/// The test outcome, as the reference's `TestResult`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestResult {
    /// Passed.
    pub result: bool,
    /// 1.0 or 0.0.
    pub reward: f64,
    /// The test itself failed to run (judge down, ...).
    #[serde(default)]
    pub is_system_error: bool,
    /// Why it failed (the assertion message).
    #[serde(default)]
    pub tb: String,
    /// Captured prints.
    #[serde(default)]
    pub prints: String,
    /// Line of the failing assertion in the test file, -1 if none.
    #[serde(default = "minus_one")]
    pub lineno: i64,
    /// Its text.
    #[serde(default)]
    pub line_content: String,
    /// Judge motivations and similar.
    #[serde(default)]
    pub metadata: Map<String, Value>,
}

fn minus_one() -> i64 {
    -1
}

/// Token usage of one model call, in the reference's (OpenAI Responses) naming.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens.
    #[serde(default)]
    pub input_tokens: u64,
    /// `{cached_tokens}`.
    #[serde(default)]
    pub input_tokens_details: InputTokensDetails,
    /// Completion tokens.
    #[serde(default)]
    pub output_tokens: u64,
    /// `{reasoning_tokens}`.
    #[serde(default)]
    pub output_tokens_details: OutputTokensDetails,
    /// Total, if reported.
    #[serde(default)]
    pub total_tokens: Option<u64>,
}

/// Cached prompt tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct InputTokensDetails {
    /// Cached tokens.
    #[serde(default)]
    pub cached_tokens: u64,
}

/// Reasoning tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct OutputTokensDetails {
    /// Reasoning tokens.
    #[serde(default)]
    pub reasoning_tokens: u64,
}

impl Usage {
    /// Adds another call's usage.
    pub fn add(&mut self, o: &Usage) {
        self.input_tokens += o.input_tokens;
        self.input_tokens_details.cached_tokens += o.input_tokens_details.cached_tokens;
        self.output_tokens += o.output_tokens;
        self.output_tokens_details.reasoning_tokens += o.output_tokens_details.reasoning_tokens;
        self.total_tokens = Some(
            self.total_tokens.unwrap_or(0)
                + o.total_tokens.unwrap_or(o.input_tokens + o.output_tokens),
        );
    }
}

/// Usage summed per role: ours (the reference records only the agent's).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UsageByRole {
    /// The agent model.
    #[serde(default)]
    pub agent: Usage,
    /// The simulated user.
    #[serde(default)]
    pub user: Usage,
    /// The judge.
    #[serde(default)]
    pub judge: Usage,
}

pub use crate::tags::TestTags;

/// Why an episode ended: exactly the reference's values, so its `DecodeResult` reads every
/// record. An attempt that ended in a system error (an exception in the reference, our
/// endpoint failures and attempt timeouts) keeps the default `done`, as the reference's do;
/// `metadata.error.type` says what happened (`Timeout`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    /// The agent ended with `<DONE>` (also the value of system-error records).
    /// `timeout` is read as this: records written before it was dropped had it.
    #[default]
    #[serde(alias = "timeout")]
    Done,
    /// The agent called an end-turn tool.
    EndTurnTool,
    /// The agent failed.
    AgentError,
    /// `max_agent_sim_turns` reached.
    AgentLimit,
    /// `max_user_sim_turns` reached.
    UserLimit,
    /// The simulated user ended the conversation.
    UserDone,
    /// No simulated user (or no user context) for a second turn.
    NoUserLlm,
    /// Skipped.
    Skipped,
}

/// The state judge's finding for one server: result hash against golden hash, with the diff.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StateVerdict {
    /// Server.
    pub server: String,
    /// Hash of the attempt's final stable state.
    pub result_hash: String,
    /// Hash of the golden state (fresh session + patch + golden calls).
    pub golden_hash: String,
    /// Equal hashes.
    pub passed: bool,
    /// Deep diff of result against golden (empty when passed).
    pub diff: Vec<Value>,
}

/// One yes/no rubric and the judge's answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RubricVerdict {
    /// The question.
    pub rubric: String,
    /// The judge said yes.
    pub passed: bool,
    /// The judge's raw answer.
    #[serde(default)]
    pub answer: String,
}

/// Ours: the whole verdict of an attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Every check held.
    pub passed: bool,
    /// Per server.
    pub state: Vec<StateVerdict>,
    /// Rubric answers (tasks with `rubrics_yesno`).
    #[serde(default)]
    pub rubrics: Vec<RubricVerdict>,
}

impl Verdict {
    /// The pass rule, written once: an attempt passes when every server's state check held
    /// and every rubric was answered yes (no rubrics: the state alone decides).
    pub fn new(state: Vec<StateVerdict>, rubrics: Vec<RubricVerdict>) -> Self {
        let passed = state.iter().all(|s| s.passed) && rubrics.iter().all(|r| r.passed);
        Self {
            passed,
            state,
            rubrics,
        }
    }
}

/// One attempt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TrialRecord {
    /// `file.py:function`.
    pub uid: String,
    /// The conversation, system prompts first.
    pub messages: Vec<Message>,
    /// The test outcome, null on a system error before grading.
    pub test_result: Option<TestResult>,
    /// Not dumped (null), as the reference by default.
    pub test_context: Option<Value>,
    /// Tags.
    pub test_tags: Option<TestTags>,
    /// Tool list as the agent saw it (only when asked for).
    pub tools: Option<Value>,
    /// Provider-native conversation (only when asked for).
    pub raw_messages: Option<Value>,
    /// Simulated-user calls (only when asked for).
    pub user_llm_history: Option<Value>,
    /// One entry per agent model call.
    pub usage: Vec<Usage>,
    /// `scenario, agent, test_case_file, test_case_name, repetition`, timers, `error`.
    pub metadata: Map<String, Value>,
    /// The attempt failed for operational reasons (not a model failure).
    pub is_system_error: bool,
    /// Why the episode ended.
    pub finish_reason: FinishReason,
    /// Ours: `<uid>::repeat::<n>`.
    pub key: String,
    /// Ours: repetition index from 0.
    pub repetition: u32,
    /// Ours: the verdict with its diff; null on a system error.
    pub verdict: Option<Verdict>,
    /// Ours: usage of agent, user and judge.
    #[serde(default)]
    pub usage_by_role: UsageByRole,
    /// Ours: provenance (tb version, data bundle hash, config hash, models).
    #[serde(default)]
    pub provenance: Map<String, Value>,
}

/// The key of an attempt: `<uid>::repeat::<n>`.
pub fn attempt_key(uid: &str, repetition: u32) -> String {
    format!("{uid}::repeat::{repetition}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pass_rule_needs_every_state_check_and_every_rubric() {
        let state = |passed| StateVerdict {
            server: "s".into(),
            result_hash: "a".into(),
            golden_hash: if passed { "a" } else { "b" }.into(),
            passed,
            diff: Vec::new(),
        };
        let rubric = |passed| RubricVerdict {
            rubric: "r".into(),
            passed,
            answer: String::new(),
        };
        assert!(Verdict::new(vec![state(true), state(true)], Vec::new()).passed);
        assert!(!Verdict::new(vec![state(true), state(false)], Vec::new()).passed);
        assert!(Verdict::new(vec![state(true)], vec![rubric(true), rubric(true)]).passed);
        assert!(!Verdict::new(vec![state(true)], vec![rubric(true), rubric(false)]).passed);
        assert!(!Verdict::new(vec![state(false)], vec![rubric(true)]).passed);
        let v = Verdict::new(vec![state(true)], vec![rubric(false)]);
        assert_eq!((v.state.len(), v.rubrics.len()), (1, 1));
    }

    #[test]
    fn messages_serialize_like_the_reference() {
        let m = Message::ParallelToolCall {
            metadata: Map::new(),
            tool_calls: vec![ToolCall {
                metadata: Map::new(),
                name: "get_order".into(),
                arguments: serde_json::json!({"order_id": "O1"}),
                id: "c1".into(),
            }],
        };
        assert_eq!(
            serde_json::to_string(&m).unwrap(),
            r#"{"T":"ParallelToolCall","metadata":{},"tool_calls":[{"T":"ToolCall","metadata":{},"name":"get_order","arguments":{"order_id":"O1"},"id":"c1"}]}"#
        );
        let back: Message = serde_json::from_str(&serde_json::to_string(&m).unwrap()).unwrap();
        assert_eq!(back, m);
        assert_eq!(
            serde_json::to_string(&FinishReason::NoUserLlm).unwrap(),
            "\"no_user_llm\""
        );
    }
}
