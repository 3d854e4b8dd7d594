//! `tb run-test FILE`: re-grades saved records without calling the agent
//! ([`tb_eval::regrade`]: the record's tool calls replayed in a fresh session, the state
//! judged, the rubric answers taken from the record or asked again when `-c` gives a judge
//! model). This file reads the records and prints one line per record.

use anyhow::{Context, Result, bail};
use clap::Args;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use tb_eval::run::{Dump, Models, RunEnv};

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
        provenance: serde_json::Map::default(),
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
    let remote = external
        .as_deref()
        .map(|x| x as &dyn tb_eval::tools::RemoteTools);
    for (mut rec, task) in records.into_iter().zip(tasks) {
        let r = rt.block_on(tb_eval::regrade::regrade(&env, remote, &task, &mut rec))?;
        if r.after == r.before {
            same += 1;
        } else {
            changed += 1;
        }
        println!(
            "{} {}: {} ({} call(s) replayed){}",
            match r.after {
                Some(true) => "PASS",
                Some(false) => "FAIL",
                None => "ERROR",
            },
            rec.key,
            if r.after == r.before {
                "as recorded"
            } else {
                "CHANGED"
            },
            r.replayed,
            if r.rubrics_not_judged {
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
