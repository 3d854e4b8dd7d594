//! Re-grading a saved trial record without calling the agent (`tb run-test`): the record's
//! tool calls are replayed in a fresh session (in process, or on the task's remote servers)
//! to rebuild the state, the state is judged, and the rubric answers are taken from the
//! record unless a judge model is configured to ask them again. The verdict comes from
//! [`Verdict::new`], the one pass rule.

use crate::grade::{grade, grade_with, task_rubrics, test_result_of};
use crate::run::RunEnv;
use crate::tools::RemoteTools;
use serde_json::Value;
use std::time::Instant;
use tb_core::{Message, Task, TrialRecord, Verdict};

/// Why a record could not be re-graded.
#[derive(Debug, thiserror::Error)]
pub enum RegradeError {
    /// The task's remote servers could not be opened.
    #[error("{key}: opening its servers: {message}")]
    Open {
        /// The record's key.
        key: String,
        /// What failed.
        message: String,
    },
    /// The in-process session could not be created.
    #[error("{key}: opening its session")]
    Session {
        /// The record's key.
        key: String,
        /// What failed.
        source: crate::root::RootError,
    },
    /// The agent's tool list could not be built (duplicate names).
    #[error("{key}: building the agent's tools: {message}")]
    Tools {
        /// The record's key.
        key: String,
        /// What failed.
        message: String,
    },
}

/// What re-grading one record found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Regraded {
    /// The recorded verdict (`None`: no verdict, a system error).
    pub before: Option<bool>,
    /// The new verdict.
    pub after: Option<bool>,
    /// Tool calls replayed.
    pub replayed: usize,
    /// The task has rubrics that have no answers (none in the record, no judge model).
    pub rubrics_not_judged: bool,
}

/// Re-grades `rec` (of `task`) in place: replays its successful tool calls, judges the
/// state, and keeps its rubric answers unless `env.models.judge` asks them again. With
/// `remote`, tasks it serves are replayed on their remote session.
pub async fn regrade(
    env: &RunEnv,
    remote: Option<&dyn RemoteTools>,
    task: &Task,
    rec: &mut TrialRecord,
) -> Result<Regraded, RegradeError> {
    let before = rec.verdict.as_ref().map(|v| v.passed);
    let key = rec.key.clone();
    let mut ext = match remote {
        Some(r) => r
            .open_task(task)
            .await
            .map_err(|message| RegradeError::Open {
                key: key.clone(),
                message,
            })?,
        None => None,
    };
    let mut session =
        match ext {
            Some(_) => None,
            None => Some(env.sandbox.session(task, env.clock).map_err(|source| {
                RegradeError::Session {
                    key: key.clone(),
                    source,
                }
            })?),
        };
    let tool_list = match (&ext, &session) {
        (Some(x), _) => x.tool_list(),
        (None, Some(s)) => s.tool_list(),
        (None, None) => Vec::new(),
    };
    let scenario_tools = env
        .scenarios
        .get(&task.scenario)
        .map(|s| s.tools.clone())
        .unwrap_or_default();
    let builtins = env
        .agent
        .as_ref()
        .map(|a| a.builtin_tools.clone())
        .unwrap_or_default();
    let tools = crate::episode::AgentTools::build(&builtins, &scenario_tools, &tool_list).map_err(
        |message| RegradeError::Tools {
            key: key.clone(),
            message,
        },
    )?;
    let mut failed = None;
    let mut replayed = 0;
    // The agent's calls in order, but those of an end-turn tool turn.
    let calls = rec.messages.iter().flat_map(|m| match m {
        Message::ParallelToolCall {
            metadata,
            tool_calls,
        } if metadata.get("is_end_turn_tool").is_none() => tool_calls.as_slice(),
        _ => &[],
    });
    for tc in calls {
        let errored = tc
            .metadata
            .get("error")
            .and_then(Value::as_str)
            .is_some_and(|e| !e.is_empty());
        if errored || !tools.names.contains(&tc.name) || tools.end_turn.contains(&tc.name) {
            continue;
        }
        match (&mut ext, &mut session) {
            (Some(x), _) => {
                if failed.is_none()
                    && let Err(e) = x.call(&tc.name, &tc.arguments).await
                {
                    failed = Some(e);
                }
            }
            (None, Some(s)) => {
                s.call_text(&tc.name, &tc.arguments);
            }
            (None, None) => {}
        }
        replayed += 1;
    }
    let old_rubrics = rec
        .verdict
        .as_ref()
        .map(|v| v.rubrics.clone())
        .unwrap_or_default();
    let response = crate::episode::final_response(&rec.messages);
    rec.metadata.remove("rubrics_not_judged");
    // The tags as the reference hydrates them (records of older versions had the scenario
    // in `test_tags.domain`, which the reference's model rejects).
    rec.test_tags = Some(task.test_tags.clone());
    match (ext.take(), &session) {
        (Some(mut x), _) => {
            let t0 = Instant::now();
            let state = match failed {
                Some(e) => Err((crate::episode::TOOL_BACKEND_ERROR, e)),
                None => match x.verdicts() {
                    Some(v) => v.await,
                    None => Err("the session gives no state verdicts".to_string()),
                }
                .map_err(|e| (crate::episode::TOOL_BACKEND_ERROR, e)),
            };
            rec.is_system_error = false;
            grade_with(env, task, state, t0, &response, rec).await;
            x.close().await;
        }
        (None, Some(session)) => grade(env, task, session, &response, rec).await,
        (None, None) => {}
    }
    if env.models.judge.is_none()
        && !old_rubrics.is_empty()
        && let Some(v) = rec.verdict.as_mut()
    {
        rec.metadata.remove("rubrics_not_judged");
        *v = Verdict::new(std::mem::take(&mut v.state), old_rubrics);
        rec.test_result = Some(test_result_of(v));
    }
    let after = rec.verdict.as_ref().map(|v| v.passed);
    let rubrics_not_judged = !task_rubrics(task).is_empty()
        && rec.verdict.as_ref().is_some_and(|v| v.rubrics.is_empty());
    Ok(Regraded {
        before,
        after,
        replayed,
        rubrics_not_judged,
    })
}
