//! Shared data types of thinkingbox-rs: tasks, conversation messages, trial records and
//! verdicts. No IO lives here.

pub mod record;
pub mod tags;
pub mod task;

pub use record::{
    FinishReason, Message, RubricVerdict, StateVerdict, TestResult, TestTags, ToolCall,
    TrialRecord, Usage, UsageByRole, Verdict, attempt_key,
};
pub use task::{Check, SourceLoc, Task};
