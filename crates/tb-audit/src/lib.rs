//! `tb audit`: checks of the benchmark itself, before anyone trusts its numbers.
//!
//! For every task of a list: the golden trajectory passes and is deterministic; doing nothing
//! fails; mutants of the golden trajectory (each state-changing call dropped, duplicated, each
//! of its arguments replaced by another plausible value, neighbouring state-changing calls
//! swapped) are judged, and a mutant that still passes is a blind spot of the check; tools
//! whose results depend on the clock, and whether the verdict moves with it; look-alike tasks;
//! notes on rubric tasks. Rules and the meaning of each finding: `docs/audit.md`.
//!
//! Everything here replays in process: the whole v1 benchmark audits in seconds.

pub mod mutate;
pub mod render;
mod task;

use serde::Serialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use tb_core::Task;
use tb_eval::root::LoadedRoot;
use tb_sandbox::Clock;

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing; nothing is wrong by itself.
    Info,
    /// The task or its check is weaker than it looks.
    Warning,
    /// The task is broken: its golden trajectory does not pass, or not reliably.
    Error,
}

impl Severity {
    /// `error`, `warning`, `info`.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One finding of one check on one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Finding {
    /// The check (`golden`, `determinism`, `golden_call_error`, `noop`, `sensitivity`,
    /// `clock`, `look_alike`, `rubrics`, `python_body`, `session`).
    pub check: &'static str,
    /// Its severity.
    pub severity: Severity,
    /// What was found, in a sentence.
    pub detail: String,
}

/// What a mutant changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mutation {
    /// A state-changing call left out.
    Drop,
    /// A state-changing call made twice in a row.
    Duplicate,
    /// One argument of a state-changing call replaced.
    Argument,
    /// A state-changing call swapped with the next state-changing call.
    Reorder,
}

impl Mutation {
    /// `drop`, `duplicate`, `argument`, `reorder`.
    pub fn name(self) -> &'static str {
        match self {
            Mutation::Drop => "drop",
            Mutation::Duplicate => "duplicate",
            Mutation::Argument => "argument",
            Mutation::Reorder => "reorder",
        }
    }
}

/// A mutant of the golden trajectory that the check lets pass although the backend ends in
/// another state.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BlindSpot {
    /// What was mutated.
    pub mutation: Mutation,
    /// The golden call (1-based position in the server's golden calls).
    pub call: usize,
    /// Its tool.
    pub tool: String,
    /// The argument replaced (`item.subject`), for argument mutants.
    pub argument: Option<String>,
    /// The server.
    pub server: String,
    /// The golden value of the argument.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<serde_json::Value>,
    /// The value the mutant used.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub to: Option<serde_json::Value>,
    /// For reorders: the call it was swapped with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub swapped_with: Option<usize>,
    /// Where the mutant's full state (unstable fields included) differs from the golden
    /// one: what the check does not look at (the first few deep-diff paths).
    pub unchecked: Vec<String>,
}

/// The clock check of one task.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ClockCheck {
    /// Some golden call's result differs between the session clock and the wall clock.
    pub reads_clock: bool,
    /// The tools of those calls.
    pub tools: Vec<String>,
    /// Golden calls that succeed on one clock and fail on the other.
    pub outcome_flips: Vec<String>,
    /// The golden end state differs between the clocks.
    pub golden_state_moves: bool,
    /// Doing nothing passes on the wall clock (judged against the wall-clock golden state,
    /// as the reference computes it).
    pub noop_pass_wall: bool,
    /// The verdict of the golden or the do-nothing trajectory differs between the clocks.
    pub verdict_changes: bool,
}

/// Everything the audit found about one task.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TaskAudit {
    /// Task uid.
    pub id: String,
    /// Its scenario (the domain).
    pub domain: String,
    /// The golden agent's attempt passes the state check.
    pub golden_pass: bool,
    /// The do-nothing agent's attempt passes the state check.
    pub noop_pass: bool,
    /// Two more replays of the golden calls (one through the shared patched state, one from
    /// a cold copy) reach the golden hash.
    pub deterministic: bool,
    /// Golden calls (all servers).
    pub golden_calls: usize,
    /// Golden calls that wrote to the state.
    pub state_changing_calls: usize,
    /// Mutants judged (equivalent mutants excluded).
    pub mutants: usize,
    /// Mutants the check fails.
    pub mutants_caught: usize,
    /// Mutants whose full state equals the golden one: no state check can tell them apart.
    pub equivalent_mutants: usize,
    /// `mutants_caught / mutants`; none without mutants.
    pub sensitivity: Option<f64>,
    /// Mutants that pass although the state differs.
    pub blind_spots: Vec<BlindSpot>,
    /// The clock check.
    pub clock: ClockCheck,
    /// Rubrics the test checks.
    pub rubrics: usize,
    /// Findings, most severe first.
    pub findings: Vec<Finding>,
}

impl TaskAudit {
    /// The most severe finding's severity.
    pub fn severity(&self) -> Option<Severity> {
        self.findings.iter().map(|f| f.severity).max()
    }
}

/// Per-domain figures.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DomainSummary {
    /// Domain (scenario).
    pub domain: String,
    /// Tasks.
    pub tasks: usize,
    /// Golden passes.
    pub golden_pass: usize,
    /// Do-nothing passes.
    pub noop_pass: usize,
    /// Mutants judged.
    pub mutants: usize,
    /// Mutants caught.
    pub mutants_caught: usize,
    /// Mean of the tasks' sensitivities (tasks with mutants).
    pub mean_sensitivity: Option<f64>,
    /// Blind spots.
    pub blind_spots: usize,
    /// Tasks with at least one blind spot.
    pub tasks_with_blind_spots: usize,
    /// Tasks reading the clock.
    pub reads_clock: usize,
    /// Findings by severity.
    pub errors: usize,
    /// Warnings.
    pub warnings: usize,
    /// Infos.
    pub infos: usize,
}

/// Figures over all tasks.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Tasks audited.
    pub tasks: usize,
    /// Golden passes.
    pub golden_pass: usize,
    /// Tasks whose golden trajectory fails (the gate).
    pub golden_fail: Vec<String>,
    /// Tasks whose golden replays disagree.
    pub nondeterministic: Vec<String>,
    /// Tasks the do-nothing agent passes.
    pub noop_pass: Vec<String>,
    /// Mutants judged.
    pub mutants: usize,
    /// Mutants caught.
    pub mutants_caught: usize,
    /// Equivalent mutants (not judged).
    pub equivalent_mutants: usize,
    /// `mutants_caught / mutants` over all tasks.
    pub pooled_sensitivity: Option<f64>,
    /// Mean of the tasks' sensitivities.
    pub mean_sensitivity: Option<f64>,
    /// Tasks with no state-changing golden call (no mutants).
    pub tasks_without_mutants: usize,
    /// Blind spots.
    pub blind_spots: usize,
    /// Tasks with at least one blind spot.
    pub tasks_with_blind_spots: usize,
    /// Blind spots per mutation kind.
    pub blind_spots_by_mutation: BTreeMap<&'static str, usize>,
    /// Tasks reading the clock.
    pub reads_clock: Vec<String>,
    /// Tasks whose verdict moves with the clock.
    pub clock_verdict_changes: Vec<String>,
    /// The session clock the audit used.
    pub session_clock: String,
    /// The wall clock it compared with.
    pub wall_clock: String,
    /// Rubric tasks.
    pub rubric_tasks: usize,
    /// The rubric judge: none in this version (rubrics are not judged).
    pub judge: Option<String>,
    /// Findings per check and severity.
    pub findings: BTreeMap<&'static str, BTreeMap<&'static str, usize>>,
    /// Per domain.
    pub domains: Vec<DomainSummary>,
}

/// The whole audit.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AuditReport {
    /// Per task, in list order.
    pub tasks: Vec<TaskAudit>,
    /// Over all tasks.
    pub summary: Summary,
}

impl AuditReport {
    /// Whether every golden trajectory passes (the gate for benchmark authors).
    pub fn golden_ok(&self) -> bool {
        self.summary.golden_fail.is_empty()
    }
}

/// Audit options.
#[derive(Debug, Clone, Copy)]
pub struct AuditOptions {
    /// The clock sessions run on (the tasks' pinned time).
    pub clock: Clock,
    /// The other clock of the clock check (normally the wall clock).
    pub wall: Clock,
    /// Worker threads (at least one).
    pub threads: usize,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            clock: Clock::default(),
            wall: Clock::at(chrono::Utc::now()),
            threads: std::thread::available_parallelism().map_or(1, std::num::NonZero::get),
        }
    }
}

/// Audits `tasks` on `sandbox`.
pub fn audit(sandbox: &LoadedRoot, tasks: &[Task], opts: &AuditOptions) -> AuditReport {
    let env = task::Env {
        sandbox,
        clock: opts.clock,
        wall: opts.wall,
    };
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, TaskAudit)>> = Mutex::new(Vec::with_capacity(tasks.len()));
    let threads = opts.threads.clamp(1, tasks.len().max(1));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut mine = Vec::new();
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(t) = tasks.get(i) else { break };
                    mine.push((i, task::audit_task(&env, t)));
                }
                done.lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .extend(mine);
            });
        }
    });
    let mut done = done
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    done.sort_by_key(|(i, _)| *i);
    let mut audits: Vec<TaskAudit> = done.into_iter().map(|(_, a)| a).collect();
    look_alikes(tasks, &mut audits);
    for a in &mut audits {
        a.findings
            .sort_by(|x, y| y.severity.cmp(&x.severity).then(x.check.cmp(y.check)));
    }
    let summary = summarize(&audits, opts);
    AuditReport {
        tasks: audits,
        summary,
    }
}

/// Whitespace-collapsed, lower-cased query.
fn query_key(q: &str) -> String {
    q.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// Tasks sharing a query, or a golden trajectory (non-empty), get a look-alike finding
/// naming the others; a task equal to another in query, trajectory and initial state is a
/// duplicate (warning).
fn look_alikes(tasks: &[Task], audits: &mut [TaskAudit]) {
    let mut by_query: HashMap<String, Vec<usize>> = HashMap::new();
    let mut by_calls: HashMap<String, Vec<usize>> = HashMap::new();
    let mut by_world: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, t) in tasks.iter().enumerate() {
        if let Some(q) = t.query.as_deref().filter(|q| !q.trim().is_empty()) {
            by_query.entry(query_key(q)).or_default().push(i);
        }
        let calls: Vec<(String, Vec<(String, serde_json::Value)>)> = t
            .servers()
            .into_iter()
            .map(|s| {
                let c = t.golden_calls(&s);
                (s, c)
            })
            .filter(|(_, c)| !c.is_empty())
            .collect();
        if !calls.is_empty() {
            let key = serde_json::to_string(&calls).unwrap_or_default();
            by_calls.entry(key).or_default().push(i);
        }
        let world = serde_json::to_string(&(&t.query, &t.world_state)).unwrap_or_default();
        by_world.entry(world).or_default().push(i);
    }
    let names = |ids: &[usize], me: usize| {
        ids.iter()
            .filter(|&&j| j != me)
            .map(|&j| tasks[j].uid.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut groups: Vec<(usize, &'static str, String)> = Vec::new();
    for ids in by_world.values().filter(|v| v.len() > 1) {
        for &i in ids {
            groups.push((i, "dup", names(ids, i)));
        }
    }
    for ids in by_query.values().filter(|v| v.len() > 1) {
        for &i in ids {
            groups.push((i, "query", names(ids, i)));
        }
    }
    for ids in by_calls.values().filter(|v| v.len() > 1) {
        for &i in ids {
            groups.push((i, "calls", names(ids, i)));
        }
    }
    groups.sort();
    let mut dup: Vec<bool> = vec![false; tasks.len()];
    for (i, kind, others) in groups {
        let (severity, detail) = match kind {
            "dup" => {
                dup[i] = true;
                (
                    Severity::Warning,
                    format!("same query, golden calls and initial state as {others}"),
                )
            }
            _ if dup[i] => continue,
            "query" => (Severity::Info, format!("same query as {others}")),
            _ => (Severity::Info, format!("same golden calls as {others}")),
        };
        audits[i].findings.push(Finding {
            check: "look_alike",
            severity,
            detail,
        });
    }
}

fn mean(v: impl Iterator<Item = f64>) -> Option<f64> {
    let (mut s, mut n) = (0.0, 0usize);
    for x in v {
        s += x;
        n += 1;
    }
    (n > 0).then(|| s / n as f64)
}

fn summarize(audits: &[TaskAudit], opts: &AuditOptions) -> Summary {
    let ids = |f: &dyn Fn(&TaskAudit) -> bool| {
        audits
            .iter()
            .filter(|a| f(a))
            .map(|a| a.id.clone())
            .collect::<Vec<_>>()
    };
    let mutants: usize = audits.iter().map(|a| a.mutants).sum();
    let caught: usize = audits.iter().map(|a| a.mutants_caught).sum();
    let mut findings: BTreeMap<&'static str, BTreeMap<&'static str, usize>> = BTreeMap::new();
    let mut by_mutation: BTreeMap<&'static str, usize> = BTreeMap::new();
    for a in audits {
        for f in &a.findings {
            *findings
                .entry(f.check)
                .or_default()
                .entry(f.severity.name())
                .or_default() += 1;
        }
        for b in &a.blind_spots {
            *by_mutation.entry(b.mutation.name()).or_default() += 1;
        }
    }
    let mut domains: Vec<DomainSummary> = Vec::new();
    for a in audits {
        let d = if let Some(i) = domains.iter_mut().position(|d| d.domain == a.domain) {
            &mut domains[i]
        } else {
            domains.push(DomainSummary {
                domain: a.domain.clone(),
                ..Default::default()
            });
            domains.last_mut().expect("just pushed")
        };
        d.tasks += 1;
        d.golden_pass += usize::from(a.golden_pass);
        d.noop_pass += usize::from(a.noop_pass);
        d.mutants += a.mutants;
        d.mutants_caught += a.mutants_caught;
        d.blind_spots += a.blind_spots.len();
        d.tasks_with_blind_spots += usize::from(!a.blind_spots.is_empty());
        d.reads_clock += usize::from(a.clock.reads_clock);
        for f in &a.findings {
            match f.severity {
                Severity::Error => d.errors += 1,
                Severity::Warning => d.warnings += 1,
                Severity::Info => d.infos += 1,
            }
        }
    }
    for d in &mut domains {
        d.mean_sensitivity = mean(
            audits
                .iter()
                .filter(|a| a.domain == d.domain)
                .filter_map(|a| a.sensitivity),
        );
    }
    domains.sort_by(|a, b| a.domain.cmp(&b.domain));
    Summary {
        tasks: audits.len(),
        golden_pass: audits.iter().filter(|a| a.golden_pass).count(),
        golden_fail: ids(&|a| !a.golden_pass),
        nondeterministic: ids(&|a| !a.deterministic),
        noop_pass: ids(&|a| a.noop_pass),
        mutants,
        mutants_caught: caught,
        equivalent_mutants: audits.iter().map(|a| a.equivalent_mutants).sum(),
        pooled_sensitivity: (mutants > 0).then(|| caught as f64 / mutants as f64),
        mean_sensitivity: mean(audits.iter().filter_map(|a| a.sensitivity)),
        tasks_without_mutants: audits.iter().filter(|a| a.mutants == 0).count(),
        blind_spots: audits.iter().map(|a| a.blind_spots.len()).sum(),
        tasks_with_blind_spots: audits.iter().filter(|a| !a.blind_spots.is_empty()).count(),
        blind_spots_by_mutation: by_mutation,
        reads_clock: ids(&|a| a.clock.reads_clock),
        clock_verdict_changes: ids(&|a| a.clock.verdict_changes),
        session_clock: opts.clock.now_iso(),
        wall_clock: opts.wall.now_iso(),
        rubric_tasks: audits.iter().filter(|a| a.rubrics > 0).count(),
        judge: None,
        findings,
        domains,
    }
}
