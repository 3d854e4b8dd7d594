//! `tb pp FILE [--line N]`: pretty-prints one trial record (the conversation, then the
//! verdict with its diff, usage per role, timings and any error).

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;
use std::path::PathBuf;
use tb_core::{Message, TrialRecord};

/// `tb pp` arguments.
#[derive(Debug, Args)]
pub struct PpArgs {
    /// A record file: one-line JSONL, multi-line JSON, or a JSONL with `--line`; `-` = stdin.
    pub file: PathBuf,
    /// Which line of a JSONL (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Print text from the records as it is, control characters and escape sequences
    /// included (by default they are shown as `�`).
    #[arg(long)]
    pub raw: bool,
}

/// Reads one record from a file (see [`PpArgs`]).
pub fn read_record(file: &std::path::Path, line: Option<usize>) -> Result<TrialRecord> {
    let text = if file.as_os_str() == "-" {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
        s
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l))
        .filter(|(_, l)| !l.trim().is_empty())
        .collect();
    let src = match line {
        Some(n) => match text.lines().nth(n.saturating_sub(1)).filter(|_| n > 0) {
            Some(l) if !l.trim().is_empty() => l.to_string(),
            _ => bail!("{}: line {n} holds no record", file.display()),
        },
        None if lines.len() <= 1 => text.clone(),
        None => match serde_json::from_str::<Value>(&text) {
            Ok(_) => text.clone(),
            Err(_) => bail!(
                "{} holds {} records; pick one with --line N",
                file.display(),
                lines.len()
            ),
        },
    };
    serde_json::from_str(&src).with_context(|| {
        format!(
            "{}{}: not a trial record",
            file.display(),
            line.map(|n| format!(":{n}")).unwrap_or_default()
        )
    })
}

fn tag(m: &serde_json::Map<String, Value>) -> &str {
    m.get("tag").and_then(Value::as_str).unwrap_or("text")
}

/// The record as text.
pub fn render(r: &TrialRecord) -> String {
    let mut s = format!(
        "== {}  (repetition {}, finish {:?}{})\n",
        r.uid,
        r.repetition,
        r.finish_reason,
        if r.is_system_error {
            ", SYSTEM ERROR"
        } else {
            ""
        }
    );
    for m in &r.messages {
        match m {
            Message::Text {
                metadata,
                role,
                content,
            } => {
                let mut flags = String::new();
                for f in ["is_done", "is_user_llm", "is_dummy"] {
                    if metadata.get(f).and_then(Value::as_bool) == Some(true) {
                        flags.push_str(&format!(" {f}"));
                    }
                }
                let body = if role == "system" && content.chars().count() > 400 {
                    format!(
                        "{}... ({} chars)",
                        content.chars().take(400).collect::<String>(),
                        content.chars().count()
                    )
                } else {
                    content.clone()
                };
                s.push_str(&format!(
                    "[{role}::{}{flags}]\n{}\n",
                    tag(metadata),
                    body.trim_end()
                ));
            }
            Message::ParallelToolCall {
                tool_calls,
                metadata,
            } => {
                for tc in tool_calls {
                    let args = tc
                        .arguments
                        .as_object()
                        .map(|o| {
                            o.iter()
                                .map(|(k, v)| format!("{k}={v}"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        })
                        .unwrap_or_default();
                    let end = if metadata.get("is_end_turn_tool").is_some() {
                        " (end turn)"
                    } else {
                        ""
                    };
                    match tc.metadata.get("error").and_then(Value::as_str) {
                        Some(e) => {
                            s.push_str(&format!("[assistant::call error]\n{}: {e}\n", tc.name));
                        }
                        None => {
                            s.push_str(&format!("[assistant::call{end}]\n{}({args})\n", tc.name));
                        }
                    }
                }
            }
            Message::ToolResponse { name, content, .. } => {
                s.push_str(&format!("[{name}::result]\n{}\n", content.trim_end()));
            }
        }
    }
    s.push_str("--\n");
    match &r.verdict {
        Some(v) => {
            s.push_str(&format!(
                "verdict: {}\n",
                if v.passed { "PASS" } else { "FAIL" }
            ));
            for st in &v.state {
                s.push_str(&format!(
                    "  state {}: {}\n",
                    st.server,
                    if st.passed {
                        "matches golden".to_string()
                    } else {
                        format!("{} difference(s)", st.diff.len())
                    }
                ));
                for d in st.diff.iter().take(20) {
                    s.push_str(&format!("    {d}\n"));
                }
            }
            for rb in &v.rubrics {
                s.push_str(&format!(
                    "  rubric {}: {} ({})\n",
                    if rb.passed { "yes" } else { "NO" },
                    rb.rubric,
                    rb.answer.trim()
                ));
            }
        }
        None => s.push_str("verdict: none\n"),
    }
    if let Some(t) = r.test_result.as_ref().filter(|t| t.is_system_error) {
        s.push_str(&format!("test error: {}\n", t.tb));
    }
    if let Some(e) = r.metadata.get("error") {
        s.push_str(&format!(
            "error: {} {}\n",
            e.get("type").and_then(Value::as_str).unwrap_or(""),
            e.get("message").and_then(Value::as_str).unwrap_or("")
        ));
    }
    let u = &r.usage_by_role;
    s.push_str(&format!(
        "usage: agent {} in ({} cached) / {} out ({} reasoning) over {} call(s); user {} / {}; judge {} / {}\n",
        u.agent.input_tokens, u.agent.input_tokens_details.cached_tokens, u.agent.output_tokens, u.agent.output_tokens_details.reasoning_tokens, r.usage.len(), u.user.input_tokens, u.user.output_tokens, u.judge.input_tokens, u.judge.output_tokens
    ));
    let timers: Vec<String> = [
        "time_agent",
        "time_user",
        "time_tool",
        "time_test",
        "execution_time",
    ]
    .iter()
    .filter_map(|k| {
        r.metadata
            .get(*k)
            .and_then(Value::as_f64)
            .map(|v| format!("{k} {v:.3}s"))
    })
    .collect();
    if !timers.is_empty() {
        s.push_str(&format!("timings: {}\n", timers.join(", ")));
    }
    s
}

/// Runs `tb pp`.
pub fn run(a: &PpArgs) -> Result<()> {
    crate::common::print_text(
        &tb_llm::redact::redact(&render(&read_record(&a.file, a.line)?)),
        a.raw,
    );
    Ok(())
}
