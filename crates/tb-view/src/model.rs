//! What the pages show, computed once per change of the files: each run's attempts with their
//! status and failure signature, tb-metrics' report of the run, and the order in which the
//! attempt pages step (tasks in first-seen order, each task's attempts by repetition).

use crate::Options;
use crate::store::{BadLine, RunFile};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tb_core::Message;
use tb_metrics::cost::{self, PriceTable, RoleCost};
use tb_metrics::failure::{self, FailureAnalysis};
use tb_metrics::load::RefStatus;
use tb_metrics::{Attempt, ModelReport, Run};

/// An attempt's status in the grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Passed.
    Pass,
    /// Failed its checks (state or test).
    Fail,
    /// The state matched but a rubric was answered no.
    Rubric,
    /// A system error (not the model's failure).
    Error,
}

impl Status {
    /// Of an attempt.
    pub fn of(a: &Attempt) -> Status {
        if a.passed() {
            return Status::Pass;
        }
        if a.is_any_system_error() || a.ref_status() == RefStatus::Error {
            return Status::Error;
        }
        match &a.verdict {
            Some(v) if v.state.iter().all(|s| s.passed) && v.rubrics.iter().any(|r| !r.passed) => {
                Status::Rubric
            }
            _ => Status::Fail,
        }
    }

    /// The short name used in URLs, JSON and CSS classes.
    pub fn name(self) -> &'static str {
        match self {
            Status::Pass => "pass",
            Status::Fail => "fail",
            Status::Rubric => "rubric",
            Status::Error => "error",
        }
    }

    /// The label shown.
    pub fn label(self) -> &'static str {
        match self {
            Status::Pass => "passed",
            Status::Fail => "failed",
            Status::Rubric => "rubric failed",
            Status::Error => "system error",
        }
    }
}

/// One attempt with what the pages need beside the record.
#[derive(Debug, Clone)]
pub struct AttemptInfo {
    /// The grid status.
    pub status: Status,
    /// The failure analysis (failed attempts only).
    pub failure: Option<FailureAnalysis>,
    /// Cost per role, when prices were given.
    pub cost: Option<RoleCost>,
}

/// One run, as of one reading of its file.
#[derive(Debug)]
pub struct RunView {
    /// Its number in URLs.
    pub index: usize,
    /// The records (shared with the file's reader).
    pub run: Arc<Run>,
    /// tb-metrics' report of it.
    pub report: ModelReport,
    /// Per attempt (same order as `run.attempts`).
    pub info: Vec<AttemptInfo>,
    /// Attempt indices in stepping order.
    pub order: Vec<usize>,
    /// Position in `order` of each attempt.
    pub pos: Vec<usize>,
    /// Attempt index by line.
    pub by_line: HashMap<usize, usize>,
    /// Lines that are not records.
    pub bad: Vec<BadLine>,
    /// The last line is still being written.
    pub writing: bool,
    /// The file could not be read.
    pub unreadable: Option<String>,
    /// The file's generation.
    pub generation: u64,
    /// The tasks grid's JSON, built once.
    pub tasks_json: String,
}

/// All runs as of one reading.
#[derive(Debug)]
pub struct Snapshot {
    /// The runs, in the order given.
    pub runs: Vec<Arc<RunView>>,
    /// Their reports with the Pareto frontiers marked among them.
    pub reports: Vec<ModelReport>,
    /// Sum of the files' generations: changes whenever a page would.
    pub generation: u64,
    /// Prices were given.
    pub priced: bool,
}

impl Snapshot {
    /// The attempt of `run` at `line`.
    pub fn attempt(&self, run: usize, line: usize) -> Option<usize> {
        self.runs.get(run)?.by_line.get(&line).copied()
    }
}

/// The files and the last snapshot, shared by the handlers.
#[derive(Debug)]
pub struct Views {
    files: Mutex<Vec<RunFile>>,
    prices: Option<PriceTable>,
    last: Mutex<Option<Arc<Snapshot>>>,
}

impl Views {
    /// Nothing read yet.
    pub fn new(opts: Options) -> Views {
        Views {
            files: Mutex::new(opts.files.iter().map(|p| RunFile::new(p)).collect()),
            prices: opts.prices,
            last: Mutex::new(None),
        }
    }

    /// Reads what the files gained and gives the pages' view of them (the previous one when
    /// nothing changed; only the runs whose files changed are computed again).
    pub fn snapshot(&self) -> Arc<Snapshot> {
        let mut files = self
            .files
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut last = self
            .last
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let stale: Vec<bool> = files.iter().map(RunFile::stale).collect();
        if let Some(s) = last.as_ref()
            && !stale.contains(&true)
        {
            return s.clone();
        }
        // The views of the files about to be read are let go first, so that the reader
        // appends to its run in place instead of copying it (unless a request still holds
        // an older view).
        let mut prev: Vec<Option<Arc<RunView>>> = match last.take() {
            Some(p) => match Arc::try_unwrap(p) {
                Ok(s) => s.runs.into_iter().map(Some).collect(),
                Err(p) => p.runs.iter().cloned().map(Some).collect(),
            },
            None => vec![None; files.len()],
        };
        for (i, f) in files.iter_mut().enumerate() {
            if stale[i] {
                prev[i] = None;
                f.refresh();
            }
        }
        let runs: Vec<Arc<RunView>> = files
            .iter()
            .enumerate()
            .map(|(i, f)| match prev[i].take() {
                Some(r) if r.generation == f.generation => r,
                _ => Arc::new(build_run(i, f, self.prices.as_ref())),
            })
            .collect();
        let mut reports: Vec<ModelReport> = runs.iter().map(|r| r.report.clone()).collect();
        tb_metrics::mark_frontiers(&mut reports);
        let snap = Arc::new(Snapshot {
            generation: files.iter().map(|f| f.generation).sum(),
            runs,
            reports,
            priced: self.prices.is_some(),
        });
        *last = Some(snap.clone());
        snap
    }
}

fn build_run(index: usize, f: &RunFile, prices: Option<&PriceTable>) -> RunView {
    let state = FileState {
        bad: f.bad.clone(),
        writing: f.writing(),
        unreadable: f.unreadable.clone(),
        generation: f.generation,
    };
    RunView::new(index, f.run(), prices, state)
}

/// What the reading of a file said beside its records.
#[derive(Debug, Clone, Default)]
pub struct FileState {
    /// Lines that are not records.
    pub bad: Vec<BadLine>,
    /// The last line is still being written.
    pub writing: bool,
    /// Why the file could not be read, if it could not.
    pub unreadable: Option<String>,
    /// The file's generation.
    pub generation: u64,
}

impl RunView {
    /// The view of `run` (numbered `index` in URLs).
    pub fn new(
        index: usize,
        run: Arc<Run>,
        prices: Option<&PriceTable>,
        state: FileState,
    ) -> RunView {
        build_view(index, run, prices, state)
    }
}

fn build_view(
    index: usize,
    run: Arc<Run>,
    prices: Option<&PriceTable>,
    state: FileState,
) -> RunView {
    let report = tb_metrics::model_report(&run, prices);
    let costs = prices.map(|p| cost::attempt_costs(&run, p).0);
    let info: Vec<AttemptInfo> = run
        .attempts
        .iter()
        .enumerate()
        .map(|(i, a)| AttemptInfo {
            status: Status::of(a),
            failure: failure::analyze(a),
            cost: costs.as_ref().and_then(|c| c.get(i).copied()),
        })
        .collect();
    // Tasks in first-seen order, each task's attempts by repetition then line.
    let mut task_of: HashMap<&str, usize> = HashMap::new();
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, a) in run.attempts.iter().enumerate() {
        let t = *task_of.entry(a.uid.as_str()).or_insert_with(|| {
            groups.push(Vec::new());
            groups.len() - 1
        });
        groups[t].push(i);
    }
    for g in &mut groups {
        g.sort_by_key(|&i| (run.attempts[i].repetition, run.attempts[i].line));
    }
    let order: Vec<usize> = groups.iter().flatten().copied().collect();
    let mut pos = vec![0; order.len()];
    for (p, &i) in order.iter().enumerate() {
        pos[i] = p;
    }
    let by_line = run
        .attempts
        .iter()
        .enumerate()
        .map(|(i, a)| (a.line, i))
        .collect();
    let tasks_json = tasks_json(index, &run, &info, &groups, &state).to_string();
    RunView {
        index,
        report,
        info,
        order,
        pos,
        by_line,
        bad: state.bad,
        writing: state.writing,
        unreadable: state.unreadable,
        generation: state.generation,
        tasks_json,
        run,
    }
}

/// The first user message (the task's query).
pub fn query_of(a: &Attempt) -> Option<&str> {
    a.messages.iter().find_map(|m| match m {
        Message::Text { role, content, .. } if role == "user" => Some(content.as_str()),
        _ => None,
    })
}

/// The names of the tools an attempt called, each once, in first-call order.
pub fn tools_of(a: &Attempt) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    for m in &a.messages {
        if let Message::ParallelToolCall { tool_calls, .. } = m {
            for c in tool_calls {
                if !out.contains(&c.name.as_str()) {
                    out.push(&c.name);
                }
            }
        }
    }
    out
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut o: String = s.chars().take(max).collect();
    o.push('…');
    o
}

fn tasks_json(
    index: usize,
    run: &Run,
    info: &[AttemptInfo],
    groups: &[Vec<usize>],
    f: &FileState,
) -> Value {
    let tasks: Vec<Value> = groups
        .iter()
        .map(|g| {
            let first = &run.attempts[g[0]];
            let mut tools: Vec<&str> = Vec::new();
            for &i in g {
                for t in tools_of(&run.attempts[i]) {
                    if !tools.contains(&t) {
                        tools.push(t);
                    }
                }
            }
            let attempts: Vec<Value> = g
                .iter()
                .map(|&i| {
                    let a = &run.attempts[i];
                    json!([
                        a.line,
                        a.repetition,
                        info[i].status.name(),
                        info[i].failure.as_ref().map(|f| f.signature.name()),
                    ])
                })
                .collect();
            let scenario = first
                .metadata
                .get("test_case_file")
                .and_then(Value::as_str)
                .map_or_else(
                    || first.uid.split(':').next().unwrap_or("").to_string(),
                    str::to_string,
                );
            json!({
                "uid": first.uid,
                "domain": first.domain.as_deref().unwrap_or(tb_metrics::agg::UNKNOWN_DOMAIN),
                "file": scenario,
                "query": clip(query_of(first).unwrap_or(""), 400),
                "tools": tools,
                "passed": g.iter().filter(|&&i| info[i].status == Status::Pass).count(),
                "attempts": attempts,
            })
        })
        .collect();
    json!({
        "run": index,
        "model": run.model,
        "file": run.file,
        "generation": f.generation,
        "writing": f.writing,
        "bad_lines": f.bad,
        "tasks": tasks,
    })
}
