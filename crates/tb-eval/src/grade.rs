//! Grading a finished attempt: the state verdicts (the judge's in process, the servers'
//! remote), the task's Python test body for servers that report their own effects, the
//! rubric judge, and the reference-shaped test result of a verdict. Depends on the run and
//! the record skeleton, never on how the attempt was played.

use crate::record::error_json;
use crate::run::RunEnv;
use crate::tools::EpisodeSession;
use serde_json::{Map, Value, json};
use std::time::Instant;
use tb_core::{Check, Task, TestResult, TrialRecord, Verdict};

/// `json.dumps(v, ensure_ascii=False, indent=11)`.
fn dumps_indent11(v: &Value) -> String {
    tb_python::json::dumps_indented(v, 11, false)
}

/// The message of the v1 test files' database assertion (`validate_database`): both hashes,
/// then each difference with its path, type, and the result's and golden's JSON (indented by
/// 11, cut at 500 characters).
pub fn database_mismatch_text(s: &tb_core::StateVerdict) -> String {
    let mut m = format!(
        "Database hash after test execution does not match expected golden hash\nResult hash: {}\nGolden hash: {}\n",
        s.result_hash, s.golden_hash
    );
    if !s.diff.is_empty() {
        m.push_str(&format!("\nFound {} difference(s):\n", s.diff.len()));
        let field = |d: &Value, k: &str| match d.get(k) {
            Some(Value::String(t)) => t.clone(),
            Some(v) => tb_python::py_str(v),
            None => "N/A".into(),
        };
        let cut = |t: String| t.chars().take(500).collect::<String>();
        for (i, d) in s.diff.iter().enumerate() {
            m.push_str(&format!(
                "\n{}. Path: {}\n   Type: {}\n   Result:  {}\n   Golden:  {}\n",
                i + 1,
                field(d, "path"),
                field(d, "type"),
                cut(dumps_indent11(d.get("result").unwrap_or(&Value::Null))),
                cut(dumps_indent11(d.get("golden").unwrap_or(&Value::Null)))
            ));
        }
    }
    m
}

/// The reference-shaped test result of a verdict: the v1 test files' assertion message of
/// the first check that failed (the database check, else the first rubric not met).
pub fn test_result_of(v: &Verdict) -> TestResult {
    let failing: Vec<String> = v
        .state
        .iter()
        .filter(|s| !s.passed)
        .take(1)
        .map(|s| format!("AssertionError: {}\n", database_mismatch_text(s)))
        .chain(
            v.rubrics
                .iter()
                .filter(|r| !r.passed)
                .map(|r| format!("AssertionError: Rubric yesno failed: {}\n", r.rubric)),
        )
        .take(1)
        .collect();
    TestResult {
        result: v.passed,
        reward: if v.passed { 1.0 } else { 0.0 },
        is_system_error: false,
        tb: failing.join("\n"),
        prints: String::new(),
        lineno: -1,
        line_content: String::new(),
        // the reference's test runner always sets it (null: yes/no answers carry no motivation)
        metadata: Map::from_iter([("judge_motivation".to_string(), Value::Null)]),
    }
}

/// The rubrics of a task's servers, if its test checks them.
pub fn task_rubrics(task: &Task) -> Vec<String> {
    if task.checks.contains(&Check::ValidateRubricsYesno) {
        task.servers()
            .iter()
            .flat_map(|s| task.rubrics_yesno(s))
            .collect()
    } else {
        Vec::new()
    }
}

/// Grades a finished in-process session: the state verdict from the judge, then the rubrics
/// (see [`grade_with`]).
pub async fn grade(
    env: &RunEnv,
    task: &Task,
    session: &crate::root::TaskSession,
    response: &str,
    rec: &mut TrialRecord,
) {
    let t0 = Instant::now();
    if session.has_own_servers() {
        let judge = match &env.models.judge {
            Some(client) => crate::pybody::BodyJudge::Model {
                client,
                timeout: env.message_timeout,
                prompts: &env.models.prompts,
            },
            None => crate::pybody::BodyJudge::None,
        };
        grade_body(env, task, session, judge, t0, rec).await;
        return;
    }
    let state = env
        .judge
        .judge(&env.sandbox, task, env.clock, session)
        .map_err(|e| ("SessionError", tb_core::error_text(&e)));
    grade_with(env, task, state, t0, response, rec).await;
}

/// Grades a finished in-process session whose servers report their own effects (the
/// airline): the task's Python test body runs in the evaluator on the attempt's
/// `TestContext` (response, tool calls, effects: the own servers' effects beside the state
/// verdicts of any table domains), `judge` answering its judge calls.
pub async fn grade_body(
    env: &RunEnv,
    task: &Task,
    session: &crate::root::TaskSession,
    judge: crate::pybody::BodyJudge<'_>,
    t0: Instant,
    rec: &mut TrialRecord,
) {
    let state = match env.judge.judge(&env.sandbox, task, env.clock, session) {
        Ok(s) => s,
        Err(e) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json("SessionError", &e.to_string()));
            return;
        }
    };
    let mut effects = crate::pybody::v1_effects(task, &state);
    if let Value::Object(m) = &mut effects {
        m.extend(session.own_effects());
    }
    let ctx = std::sync::Arc::new(crate::pybody::context(&rec.messages, effects));
    let test = task.uid.rsplit(':').next().unwrap_or("");
    let run = match env.sandbox.test_source(task) {
        Ok((path, source)) => {
            // The attempt's budget (`--attempt-timeout`) is the body's too, else its default.
            let limits = tb_pyeval::Limits {
                time: Some(
                    env.attempt_timeout
                        .unwrap_or(tb_pyeval::budget::DEFAULT_TIME),
                ),
                ..tb_pyeval::Limits::default()
            };
            crate::pybody::run_body(&path, &source, test, &ctx, judge, &limits).await
        }
        Err(e) => Err(e),
    };
    rec.metadata
        .insert("time_test".into(), json!(t0.elapsed().as_secs_f64()));
    let run = match run {
        Ok(r) => r,
        Err(e) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json("TestFileError", &e));
            return;
        }
    };
    rec.usage_by_role.judge.add(&run.usage);
    if !run.judge_calls.is_empty() {
        rec.metadata.insert(
            "judge_calls".into(),
            json!(
                run.judge_calls
                    .iter()
                    .map(|(q, a)| json!({"call": q, "answer": a}))
                    .collect::<Vec<_>>()
            ),
        );
    }
    rec.test_result = Some(crate::pybody::test_result_of_body(&run.outcome));
    rec.verdict = Some(Verdict {
        passed: run.outcome.passed,
        state,
        rubrics: Vec::new(),
    });
}

/// Grades a finished session from its state verdicts (in-process: the judge's; remote: the
/// server's), then (for rubric tasks, when a judge is configured) one yes/no question per
/// rubric on the final response. A judge failure is a test error
/// (`test_result.is_system_error`), as in the reference; a state failure (`Err((kind,
/// message))`) is a system error. `time_test` counts from `t0`.
pub async fn grade_with(
    env: &RunEnv,
    task: &Task,
    state: Result<Vec<tb_core::StateVerdict>, (&str, String)>,
    t0: Instant,
    response: &str,
    rec: &mut TrialRecord,
) {
    let state = match state {
        Ok(s) => s,
        Err((kind, message)) => {
            rec.is_system_error = true;
            rec.metadata
                .insert("error".into(), error_json(kind, &message));
            return;
        }
    };
    let rubrics = task_rubrics(task);
    let mut verdict = Verdict::new(state, Vec::new());
    let mut test_error = None;
    // The reference's test checks the database first: a failed check ends it, no judge asked.
    let state_passed = verdict.state.iter().all(|s| s.passed);
    if !rubrics.is_empty() && state_passed {
        match &env.models.judge {
            None => {
                rec.metadata
                    .insert("rubrics_not_judged".into(), json!(rubrics.len()));
            }
            Some(j) => {
                match crate::rubric::judge_rubrics(
                    j,
                    response,
                    &rubrics,
                    env.message_timeout,
                    &env.models.prompts,
                )
                .await
                {
                    Ok((rv, usage)) => {
                        rec.usage_by_role.judge.add(&usage);
                        verdict = Verdict::new(verdict.state, rv);
                    }
                    Err(e) => test_error = Some(e),
                }
            }
        }
    }
    rec.metadata
        .insert("time_test".into(), json!(t0.elapsed().as_secs_f64()));
    let mut tr = test_result_of(&verdict);
    if !tr.result
        && let Ok((_, source)) = env.sandbox.test_source(task)
    {
        // the line of the test file whose assertion failed, as the reference reports it
        let marker = if state_passed {
            "assert judge.text_yesno(x.response, rubric)"
        } else {
            "assert False, error_msg"
        };
        if let Some((i, line)) = source
            .lines()
            .enumerate()
            .find(|(_, l)| l.trim_start().starts_with(marker))
        {
            tr.lineno = i64::try_from(i + 1).unwrap_or(-1);
            tr.line_content = line.to_string();
        }
    }
    if let Some(e) = test_error {
        tr.result = false;
        tr.reward = 0.0;
        tr.is_system_error = true;
        tr.tb = format!("JudgeException: judge model: {e}");
        rec.metadata
            .insert("test_error".into(), error_json(e.kind(), &e.to_string()));
        verdict.passed = false;
    }
    rec.test_result = Some(tr);
    rec.verdict = Some(verdict);
}

/// Grades a finished session of any kind: in process with [`grade`]; on a remote backend
/// (`tb infer` over a `tb mcp-start` or external servers, `tb openenv` and `tb tui` episodes)
/// with the state verdicts the session gives, its failure to give them a tool-backend system
/// error.
pub async fn grade_session(
    env: &RunEnv,
    task: &Task,
    session: &mut dyn EpisodeSession,
    response: &str,
    rec: &mut TrialRecord,
) {
    if let Some(s) = session.in_process() {
        return grade(env, task, s, response, rec).await;
    }
    let t0 = Instant::now();
    let state = match session.verdicts() {
        Some(verdicts) => verdicts.await,
        None => Err("the session gives no state verdicts".to_string()),
    }
    .map_err(|e| (crate::episode::TOOL_BACKEND_ERROR, e));
    grade_with(env, task, state, t0, response, rec).await;
}
