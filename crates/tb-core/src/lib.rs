//! Shared data types of thinkingbox-rs: tasks, conversation messages, trial records and
//! verdicts. No IO lives here.

pub mod record;
pub mod tags;
pub mod task;
pub mod text;

pub use record::{
    FinishReason, Message, RubricVerdict, StateVerdict, TestResult, TestTags, ToolCall,
    TrialRecord, Usage, UsageByRole, Verdict, attempt_key,
};
pub use task::{Check, SourceLoc, Task};

/// An error and its causes on one line, `top: cause: cause` (for texts that travel as
/// strings: record fields, tool texts). Each error's `Display` names only itself; the
/// causes come from [`std::error::Error::source`].
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        out.push_str(": ");
        out.push_str(&c.to_string());
        cause = c.source();
    }
    out
}
