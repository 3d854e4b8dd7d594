//! `tb run-test FILE`: re-grades saved records without calling the agent: each record's tool
//! calls are replayed in a fresh session to rebuild the state, the state is judged, and the
//! rubric answers are taken from the record (or asked again when `-c` gives a judge model).

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tb_core::Message;
use tb_eval::infer::{Dump, Models, RunEnv};

/// `tb run-test` arguments.
#[derive(Debug, Args)]
pub struct RunTestArgs {
    /// Trial records (JSONL).
    pub file: PathBuf,
    /// Only this line (1-based).
    #[arg(long)]
    pub line: Option<usize>,
    /// Data root; defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Run config whose `judge_model` asks the rubrics again (default: the record's answers).
    #[arg(short = 'c', long)]
    pub config: Option<PathBuf>,
    /// Write the re-graded records here (JSONL).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// The time tools see (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    pub now: Option<String>,
    /// What the model is shown (tool surface; the judge's prompts when it is asked again).
    #[command(flatten)]
    pub shown: crate::common::SurfaceArgs,
    #[command(flatten)]
    pub servers: crate::common::ServerArgs,
}

/// Runs `tb run-test`.
pub fn run(a: &RunTestArgs) -> Result<ExitCode> {
    let records: Vec<tb_core::TrialRecord> = if let Some(n) = a.line {
        vec![crate::pp_cmd::read_record(&a.file, Some(n))?]
    } else {
        let text = std::fs::read_to_string(&a.file)
            .with_context(|| format!("reading {}", a.file.display()))?;
        text.lines()
            .enumerate()
            .filter(|(_, l)| !l.trim().is_empty())
            .map(|(i, l)| {
                serde_json::from_str(l)
                    .with_context(|| format!("{}:{}: not a trial record", a.file.display(), i + 1))
            })
            .collect::<Result<_>>()?
    };
    let root = crate::common::data_root(&a.data)?;
    let surface = a.shown.surface(&root)?;
    let prompts = a.shown.prompts()?;
    let (ds, sandbox) = crate::common::open_with(&root, &surface)?;
    let clock = crate::common::clock(&a.now)?;
    let judge = match &a.config {
        Some(p) => {
            let cfg = tb_llm::ConfigFile::load(p)?;
            match &cfg.judge_model {
                Some(j) => Some(tb_llm::LlmClient::new(j)?),
                None => bail!("{}: no `judge_model` to ask the rubrics", p.display()),
            }
        }
        None => None,
    };
    let mut scenarios = HashMap::new();
    let mut tasks = Vec::new();
    for r in &records {
        let t = ds.load_task(&r.uid)?;
        if !scenarios.contains_key(&t.scenario) {
            scenarios.insert(t.scenario.clone(), ds.scenario(&t.scenario)?);
        }
        tasks.push(t);
    }
    let sandbox = Arc::new(sandbox);
    let external = a.servers.backend(sandbox.clone(), clock)?;
    let env = RunEnv {
        sandbox,
        judge: Arc::new(tb_eval::judge::StateJudge::new()),
        clock,
        agent_name: String::new(),
        agent: ds.agent("think").ok(),
        scenarios,
        models: Models {
            agent: None,
            user: None,
            judge,
            prompts,
        },
        user_can_end: false,
        message_timeout: None,
        attempt_timeout: None,
        dump: Dump::default(),
        provenance: Default::default(),
    };
    let mut out = match &a.output {
        Some(p) => Some(std::io::BufWriter::new(
            std::fs::File::create(p).with_context(|| format!("creating {}", p.display()))?,
        )),
        None => None,
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (mut same, mut changed) = (0, 0);
    for (mut rec, task) in records.into_iter().zip(tasks) {
        let before = rec.verdict.as_ref().map(|v| v.passed);
        // the task's external servers (--servers), else the in-process session
        let mut ext = match &external {
            Some(x) if x.is_external(&task) => Some(
                rt.block_on(x.open_session(&task))
                    .with_context(|| format!("{}: opening its servers", rec.key))?,
            ),
            _ => None,
        };
        let mut session = match ext {
            Some(_) => None,
            None => Some(env.sandbox.session(&task, env.clock)?),
        };
        let tool_list = match (&ext, &session) {
            (Some(x), _) => tb_eval::tools::ToolBackend::tool_list(x),
            (None, Some(s)) => s.tool_list(),
            (None, None) => Vec::new(),
        };
        let mut failed = None;
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
        let tools = tb_eval::episode::AgentTools::build(&builtins, &scenario_tools, &tool_list)
            .map_err(anyhow::Error::msg)?;
        let mut replayed = 0;
        for m in &rec.messages {
            let Message::ParallelToolCall {
                metadata,
                tool_calls,
            } = m
            else {
                continue;
            };
            if metadata.get("is_end_turn_tool").is_some() {
                continue;
            }
            for tc in tool_calls {
                let errored = tc
                    .metadata
                    .get("error")
                    .and_then(Value::as_str)
                    .is_some_and(|e| !e.is_empty());
                if !errored && tools.names.contains(&tc.name) && !tools.end_turn.contains(&tc.name)
                {
                    match (&mut ext, &mut session) {
                        (Some(x), _) => {
                            if failed.is_none()
                                && let Err(e) = rt.block_on(x.call_tool(&tc.name, &tc.arguments))
                            {
                                failed = Some(e.to_string());
                            }
                        }
                        (None, Some(s)) => {
                            s.call_text(&tc.name, &tc.arguments);
                        }
                        (None, None) => {}
                    }
                    replayed += 1;
                }
            }
        }
        let old_rubrics = rec
            .verdict
            .as_ref()
            .map(|v| v.rubrics.clone())
            .unwrap_or_default();
        let response = tb_eval::episode::final_response(&rec.messages);
        rec.metadata.remove("rubrics_not_judged");
        // The tags as the reference hydrates them (records of older versions had the
        // scenario in `test_tags.domain`, which the reference's model rejects).
        rec.test_tags = Some(task.test_tags.clone());
        match (ext.take(), &session) {
            (Some(mut x), _) => {
                let t0 = std::time::Instant::now();
                let state = match failed {
                    Some(e) => Err((tb_eval::episode::TOOL_BACKEND_ERROR, e)),
                    None => rt
                        .block_on(x.state_verdicts())
                        .map_err(|e| (tb_eval::episode::TOOL_BACKEND_ERROR, e.to_string())),
                };
                rec.is_system_error = false;
                rt.block_on(tb_eval::infer::grade_with(
                    &env, &task, state, t0, &response, &mut rec,
                ));
                rt.block_on(x.close_all());
            }
            (None, Some(session)) => rt.block_on(tb_eval::infer::grade(
                &env, &task, session, &response, &mut rec,
            )),
            (None, None) => {}
        }
        if env.models.judge.is_none()
            && !old_rubrics.is_empty()
            && let Some(v) = rec.verdict.as_mut()
        {
            rec.metadata.remove("rubrics_not_judged");
            v.passed = v.state.iter().all(|s| s.passed) && old_rubrics.iter().all(|r| r.passed);
            v.rubrics = old_rubrics;
            rec.test_result = Some(tb_eval::infer::test_result_of(v));
        }
        let after = rec.verdict.as_ref().map(|v| v.passed);
        if after == before {
            same += 1;
        } else {
            changed += 1;
        }
        println!(
            "{} {}: {} ({} call(s) replayed){}",
            match after {
                Some(true) => "PASS",
                Some(false) => "FAIL",
                None => "ERROR",
            },
            rec.key,
            if after == before {
                "as recorded"
            } else {
                "CHANGED"
            },
            replayed,
            if !tb_eval::infer::task_rubrics(&task).is_empty()
                && rec.verdict.as_ref().is_some_and(|v| v.rubrics.is_empty())
            {
                "; rubrics not judged (no answers in the record, no -c judge)"
            } else {
                ""
            }
        );
        if let Some(w) = out.as_mut() {
            serde_json::to_writer(&mut *w, &rec)?;
            w.write_all(b"\n")?;
        }
    }
    if let Some(w) = out.as_mut() {
        w.flush()?;
    }
    if let Some(x) = &external {
        rt.block_on(x.shutdown());
    }
    println!("{same} record(s) graded as recorded, {changed} changed");
    Ok(ExitCode::SUCCESS)
}
