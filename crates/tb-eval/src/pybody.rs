//! Test bodies through the Python evaluator (`tb-pyeval`): the reference's `TestContext` of an
//! attempt (last response, tool calls with their responses, effects per server) and the
//! outcome of running a test function on it.
//!
//! For the v1 servers the effects are what their `__reserved__geteffects` reports to a test:
//! `result_db_hash`, `golden_db_hash`, the deep `diff`, `rubrics` and, where the task's init
//! has them, `rubrics_yesno` (the states are left out: no published test reads them).

use serde_json::{Map, Value, json};
use tb_core::{Message, StateVerdict, Task};
use tb_sandbox::ServerSession;

/// `x.response`: the last visible (not dummy, not think) assistant text.
pub fn response_of(messages: &[Message]) -> String {
    messages
        .iter()
        .rev()
        .find(|m| m.is_visible_assistant_text())
        .and_then(|m| match m {
            Message::Text { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

/// `x.tool_calls`: every call (end-turn calls included) with its response, paired by id, in
/// the reference's JSON form.
pub fn tool_calls_of(messages: &[Message]) -> Vec<Value> {
    let mut out = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Message::ParallelToolCall { tool_calls, .. } = m else {
            continue;
        };
        for call in tool_calls {
            let response = messages[i + 1..].iter().find_map(|r| match r {
                Message::ToolResponse { id, .. } if *id == call.id => serde_json::to_value(r).ok(),
                _ => None,
            });
            let response = response.unwrap_or_else(|| {
                json!({"T": "ToolResponse", "metadata": {}, "name": call.name, "content": "", "id": call.id})
            });
            out.push(json!({"tool_call": serde_json::to_value(call).unwrap_or(Value::Null), "tool_response": response}));
        }
    }
    out
}

/// The v1 servers' effects for a test, from the state verdicts of an attempt.
pub fn v1_effects(task: &Task, state: &[StateVerdict]) -> Value {
    let mut effects = Map::new();
    for s in state {
        let mut m = Map::new();
        m.insert("result_db_hash".into(), json!(s.result_hash));
        m.insert("golden_db_hash".into(), json!(s.golden_hash));
        m.insert("diff".into(), Value::Array(s.diff.clone()));
        // The server's init config: the scenario's world_state merged with the task's init.
        let init = task.world_state.get(&s.server);
        m.insert(
            "rubrics".into(),
            init.and_then(|i| i.get("rubrics"))
                .cloned()
                .unwrap_or(Value::Null),
        );
        if let Some(r) = init.and_then(|i| i.get("rubrics_yesno")) {
            m.insert("rubrics_yesno".into(), r.clone());
        }
        effects.insert(s.server.clone(), Value::Object(m));
    }
    Value::Object(effects)
}

/// The effects of servers that report their own (`ServerSession::effects`, e.g. the airline),
/// by server name, added to `effects` (a v1 server's entry is kept when it has none).
pub fn add_server_effects(effects: &mut Value, sessions: &[&dyn ServerSession]) {
    if !effects.is_object() {
        *effects = Value::Object(Map::new());
    }
    if let Value::Object(m) = effects {
        for s in sessions {
            if let Some(e) = s.effects() {
                m.insert(s.server().to_string(), e);
            }
        }
    }
}

/// The reference's JSON form of a `TestContext`.
pub fn context(messages: &[Message], effects: Value) -> Value {
    json!({
        "response": response_of(messages),
        "tool_direct_responses": direct_responses_of(messages),
        "effects": effects,
        "tool_calls": tool_calls_of(messages),
        "messages": messages,
        "init_result": {},
        "metadata": {},
    })
}

/// Parses and checks the test file of every task once: each syntax error or construct the
/// evaluator does not support, as `file:line: ...` (before any model is called).
pub fn check_test_files(data_root: &std::path::Path, tasks: &[Task]) -> Vec<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut problems = Vec::new();
    for t in tasks {
        if !seen.insert(t.source.path.clone()) {
            continue;
        }
        let path = test_file_path(data_root, t);
        match tb_pyeval::TestFile::read(&path) {
            Ok(file) => {
                for u in file.unsupported() {
                    problems.push(format!(
                        "{}:{}: not supported by tb's test-body evaluator: {}",
                        path.display(),
                        u.line,
                        u.construct
                    ));
                }
            }
            Err(e) => problems.push(e.to_string()),
        }
    }
    problems
}

/// A task's test file: its source path under the data root, or as given when it is not there
/// (`SourceLoc::path` is relative to the data root when possible).
pub fn test_file_path(data_root: &std::path::Path, task: &Task) -> std::path::PathBuf {
    let under_root = data_root.join(&task.source.path);
    if under_root.is_file() {
        under_root
    } else {
        std::path::PathBuf::from(&task.source.path)
    }
}

/// `x.tool_direct_responses`: the direct responses the session produced (assistant texts
/// tagged `direct`), in order.
pub fn direct_responses_of(messages: &[Message]) -> Vec<Value> {
    messages
        .iter()
        .filter_map(|m| match m {
            Message::Text {
                metadata,
                role,
                content,
            } if role == "assistant"
                && metadata.get("tag").and_then(Value::as_str) == Some("direct") =>
            {
                Some(json!(content))
            }
            _ => None,
        })
        .collect()
}

/// Who answers a test body's `judge` calls.
#[derive(Debug, Clone, Copy)]
pub enum BodyJudge<'a> {
    /// Always the same answer (the recorded reference runs' stub).
    Fixed(bool),
    /// The configured judge model.
    Model {
        /// The judge model.
        client: &'a tb_llm::LlmClient,
        /// Budget of one judge call.
        timeout: Option<std::time::Duration>,
        /// The judge's prompts.
        prompts: &'a crate::prompts::Prompts,
    },
    /// No judge configured: a judge call is the reference's `JudgeException` (a system error).
    None,
}

/// A test body's run: its outcome, every judge call (`[text, question]` or
/// `[first, second, question]`) with its answer, and the judge model's usage.
#[derive(Debug, Clone)]
pub struct BodyRun {
    /// The outcome.
    pub outcome: tb_pyeval::TestOutcome,
    /// The judge calls with their answers.
    pub judge_calls: Vec<(Vec<String>, bool)>,
    /// The judge model's usage.
    pub usage: tb_core::Usage,
}

/// Judge calls one body may make before it is a system error (loops over model output).
pub const MAX_JUDGE_CALLS: usize = 256;

/// Answers the i-th judge call from the answers known so far; the first unknown call is
/// kept as pending and fails the run (which is then repeated with its answer).
struct Replayed<'a> {
    answers: &'a [(Vec<String>, bool)],
    next: usize,
    pending: Option<Vec<String>>,
    fixed: Option<bool>,
    none: bool,
    seen: Vec<(Vec<String>, bool)>,
}

impl Replayed<'_> {
    fn answer(&mut self, call: Vec<String>) -> Result<bool, String> {
        if self.none {
            return Err("no judge model configured (judge_model)".into());
        }
        let i = self.next;
        self.next += 1;
        if let Some(a) = self.fixed {
            self.seen.push((call, a));
            return Ok(a);
        }
        match self.answers.get(i) {
            Some((q, a)) if *q == call => {
                self.seen.push((call, *a));
                Ok(*a)
            }
            _ => {
                if self.pending.is_none() {
                    self.pending = Some(call);
                }
                Err("judge answer pending".into())
            }
        }
    }
}

impl tb_pyeval::Judge for Replayed<'_> {
    fn text_yesno(&mut self, text: &str, question: &str) -> Result<bool, String> {
        self.answer(vec![text.into(), question.into()])
    }
    fn compare_yesno(&mut self, first: &str, second: &str, question: &str) -> Result<bool, String> {
        self.answer(vec![first.into(), second.into(), question.into()])
    }
}

/// The judge's messages for one call: `text_yesno` as the rubric judge asks it; a
/// comparison shows both texts.
fn judge_messages(prompts: &crate::prompts::Prompts, call: &[String]) -> [Message; 2] {
    let esc = |s: &str| s.replace('<', "&lt;").replace('>', "&gt;");
    let user = match call {
        [text, question] => prompts.judge_message(&esc(text), question),
        [first, second, question] => prompts.judge_message(
            &format!(
                "First text:\n{}\n\nSecond text:\n{}",
                esc(first),
                esc(second)
            ),
            question,
        ),
        _ => String::new(),
    };
    [
        Message::text("system", prompts.judge_system.as_str()),
        Message::text("user", user),
    ]
}

/// Runs a task's test body on `ctx` (the reference's JSON `TestContext`, shared: the body
/// reads the effects in place, converting only what it reads), within `limits` (its time
/// budget counts across the whole run, judge calls excepted). The body is evaluated on a
/// blocking thread of its own with a large stack, not on the async worker; each
/// judge-model question suspends it: the run is repeated with the answers so far (bodies
/// are deterministic, so it takes the same path), at most [`MAX_JUDGE_CALLS`] times. A
/// budget that runs out is the test's system error naming it. `Err` when the file cannot be
/// read or the test is missing.
pub async fn run_body(
    path: &std::path::Path,
    source: &str,
    test: &str,
    ctx: &std::sync::Arc<Value>,
    judge: BodyJudge<'_>,
    limits: &tb_pyeval::Limits,
) -> Result<BodyRun, String> {
    let mut answers: Vec<(Vec<String>, bool)> = Vec::new();
    let mut usage = tb_core::Usage::default();
    let mut spent = std::time::Duration::ZERO;
    loop {
        let (outcome, pending, seen) = {
            let path = path.to_path_buf();
            let source = source.to_string();
            let test = test.to_string();
            let ctx = std::sync::Arc::clone(ctx);
            let known = answers.clone();
            let fixed = match judge {
                BodyJudge::Fixed(a) => Some(a),
                _ => None,
            };
            let none = matches!(judge, BodyJudge::None);
            let mut limits = limits.clone();
            limits.time = limits.time.map(|t| t.saturating_sub(spent));
            let started = std::time::Instant::now();
            let run = tokio::task::spawn_blocking(move || {
                tb_pyeval::budget::on_big_stack(move || {
                    let file =
                        tb_pyeval::TestFile::parse(&path, &source).map_err(|e| e.to_string())?;
                    file.check().map_err(|e| e.to_string())?;
                    let mut j = Replayed {
                        answers: &known,
                        next: 0,
                        pending: None,
                        fixed,
                        none,
                        seen: Vec::new(),
                    };
                    let out = file
                        .run_limited(&test, &ctx, &mut j, &limits)
                        .map_err(|e| e.to_string())?;
                    Ok::<_, String>((out, j.pending, j.seen))
                })
                .unwrap_or_else(|| Err("the test-body evaluator's thread failed".into()))
            })
            .await
            .map_err(|e| format!("the test-body evaluator failed: {e}"))??;
            spent += started.elapsed();
            run
        };
        let Some(call) = pending else {
            return Ok(BodyRun {
                outcome,
                judge_calls: seen,
                usage,
            });
        };
        let BodyJudge::Model {
            client,
            timeout,
            prompts,
        } = judge
        else {
            unreachable!("only the model judge leaves a call pending")
        };
        let fail = |e: String| {
            Ok(BodyRun {
                outcome: tb_pyeval::TestOutcome {
                    passed: false,
                    system_error: true,
                    message: format!("JudgeException: Error getting Judge completion: {e}"),
                    lineno: None,
                    line_content: None,
                    reward: 0.0,
                    prints: String::new(),
                },
                judge_calls: answers.clone(),
                usage: usage.clone(),
            })
        };
        if answers.len() >= MAX_JUDGE_CALLS {
            return fail(format!("more than {MAX_JUDGE_CALLS} judge calls"));
        }
        let msgs = judge_messages(prompts, &call);
        let fut = client.complete_messages(&msgs);
        let reply = match timeout {
            Some(d) => match tokio::time::timeout(d, fut).await {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err(format!(
                    "no reply within the message budget of {:.3}s",
                    d.as_secs_f64()
                )),
            },
            None => fut.await.map_err(|e| e.to_string()),
        };
        let c = match reply {
            Ok(c) => c,
            Err(e) => return fail(e),
        };
        usage.add(&c.usage);
        let text = match c.messages.last() {
            Some(Message::Text { content, .. }) => content.clone(),
            _ => String::new(),
        };
        answers.push((call, crate::rubric::parse_yes_no(&text)));
    }
}

/// The reference-shaped test result of a body's outcome.
pub fn test_result_of_body(o: &tb_pyeval::TestOutcome) -> tb_core::TestResult {
    tb_core::TestResult {
        result: o.passed,
        reward: if o.passed { o.reward } else { 0.0 },
        is_system_error: o.system_error,
        tb: o.message.clone(),
        prints: o.prints.clone(),
        lineno: o.lineno.map_or(-1, i64::from),
        line_content: o.line_content.clone().unwrap_or_default(),
        metadata: Map::new(),
    }
}
