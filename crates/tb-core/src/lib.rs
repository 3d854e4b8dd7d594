//! Shared data types of thinkingbox-rs: tasks, conversation messages, trial records and
//! verdicts, and the hex digests they carry. No IO lives here.

pub mod digest;
pub mod record;
pub mod tags;
pub mod task;
pub mod text;

pub use digest::sha256_hex;
pub use record::{
    FinishReason, Message, RubricVerdict, StateVerdict, TestResult, TestTags, ToolCall,
    TrialRecord, Usage, UsageByRole, Verdict, attempt_key,
};
pub use task::{Check, SourceLoc, Task};

/// An error and its causes on one line, `top: cause: cause` (for texts that travel as
/// strings: record fields, tool texts, problem lists). Each error's `Display` names only
/// itself; the causes come from [`std::error::Error::source`]. A cause whose text already ends
/// the line (an error of another crate that prints its source itself) is not repeated.
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !out.ends_with(&text) {
            out.push_str(": ");
            out.push_str(&text);
        }
        cause = c.source();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[derive(Debug)]
    struct E(&'static str, Option<Box<E>>);

    impl std::fmt::Display for E {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for E {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|e| e as _)
        }
    }

    #[test]
    fn causes_follow_on_one_line_and_a_printed_source_is_not_repeated() {
        let e = E("reading a.yaml", Some(Box::new(E("not found", None))));
        assert_eq!(error_text(&e), "reading a.yaml: not found");
        // an error that prints its source itself, then that source
        let e = E(
            "connect: refused",
            Some(Box::new(E(
                "refused",
                Some(Box::new(E("os error 111", None))),
            ))),
        );
        assert_eq!(error_text(&e), "connect: refused: os error 111");
        // a cause that only appears inside the line is still a cause
        let e = E("file not found in x", Some(Box::new(E("not found", None))));
        assert_eq!(error_text(&e), "file not found in x: not found");
    }
}
