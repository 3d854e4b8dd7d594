//! The yes/no rubric judge of the 30 rubric tasks: one fresh two-message conversation per
//! rubric on the final response, parsed with the reference's rule (yes iff the first or the
//! last word is "yes"). Every rubric must hold; the first one not met ends the judging.

use tb_core::{Message, RubricVerdict, Usage};
use tb_llm::{LlmClient, LlmError};

/// The judge's system prompt (legacy yes/no mode), in our words.
pub const JUDGE_SYSTEM: &str = "You are an evaluator. You will read a message, shown between <message> and </message> tags, and then a question about that message.\nReply with exactly one word: Yes or No.";

/// The judge's user message: the response with `<` and `>` escaped, inside `<message>` tags,
/// followed by the question.
pub fn judge_prompt(response: &str, question: &str) -> String {
    format!(
        "<message>\n{}\n</message>\n{question}",
        response.replace('<', "&lt;").replace('>', "&gt;")
    )
}

/// The reference's parse rule: replace `. , ; :` and newlines by spaces, split on
/// whitespace; yes iff the first or the last token is `yes` (any case).
pub fn parse_yes_no(text: &str) -> bool {
    let cleaned: String = text
        .chars()
        .map(|c| {
            if matches!(c, '.' | ',' | ';' | ':' | '\n') {
                ' '
            } else {
                c
            }
        })
        .collect();
    let tokens: Vec<&str> = cleaned.split_whitespace().collect();
    match (tokens.first(), tokens.last()) {
        (Some(f), Some(l)) => f.eq_ignore_ascii_case("yes") || l.eq_ignore_ascii_case("yes"),
        _ => false,
    }
}

/// Asks the judge the rubrics about `response`, in order, up to the first one not met (the
/// reference's test asserts each in turn, so a failing rubric ends the test). Returns the
/// verdicts of the rubrics asked and the judge's summed usage, or the first judge error.
pub async fn judge_rubrics(
    client: &LlmClient,
    response: &str,
    rubrics: &[String],
    timeout: Option<std::time::Duration>,
    prompts: &crate::prompts::Prompts,
) -> Result<(Vec<RubricVerdict>, Usage), LlmError> {
    let mut out = Vec::with_capacity(rubrics.len());
    let mut usage = Usage::default();
    for r in rubrics {
        let msgs = [
            Message::text("system", prompts.judge_system.as_str()),
            Message::text(
                "user",
                prompts.judge_message(&response.replace('<', "&lt;").replace('>', "&gt;"), r),
            ),
        ];
        let fut = client.complete_messages(&msgs);
        let c = match timeout {
            Some(d) => tokio::time::timeout(d, fut)
                .await
                .map_err(|_| LlmError::Timeout {
                    secs: d.as_secs_f64(),
                    endpoint: "judge model (message budget)".into(),
                    attempts: 0,
                })??,
            None => fut.await?,
        };
        usage.add(&c.usage);
        let answer = match c.messages.last() {
            Some(Message::Text { content, .. }) => content.clone(),
            _ => String::new(),
        };
        let passed = parse_yes_no(&answer);
        out.push(RubricVerdict {
            rubric: r.clone(),
            passed,
            answer,
        });
        if !passed {
            break;
        }
    }
    Ok((out, usage))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yes_no_rule() {
        assert!(parse_yes_no("Yes"));
        assert!(parse_yes_no("yes."));
        assert!(parse_yes_no("The answer is: YES"));
        assert!(parse_yes_no("Yes, but no"));
        assert!(!parse_yes_no("No"));
        assert!(!parse_yes_no("yes!"));
        assert!(!parse_yes_no("I think yes it is"));
        assert!(!parse_yes_no(""));
        assert!(parse_yes_no("well;\nyes"));
        assert_eq!(
            judge_prompt("a <DONE>", "q?"),
            "<message>\na &lt;DONE&gt;\n</message>\nq?"
        );
    }
}
