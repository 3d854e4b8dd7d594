//! The audit of one task: golden, determinism, noop, mutants, clock, rubrics.

use crate::mutate::argument_mutations;
use crate::{BlindSpot, ClockCheck, Finding, Mutation, Severity, TaskAudit};
use serde_json::Value;
use tb_core::{Check, Task};
use tb_eval::judge::{Golden, StateJudge};
use tb_eval::offline::{OfflineAgent, run_offline};
use tb_eval::root::LoadedRoot;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::{CallOutcome, Clock, Session, State};

/// What every task's audit shares.
pub(crate) struct Env<'a> {
    pub sandbox: &'a LoadedRoot,
    pub clock: Clock,
    pub wall: Clock,
}

/// Deep-diff paths kept per blind spot.
const UNCHECKED_PATHS: usize = 4;

/// One golden call as replayed: the session just before it, what it gave, whether it wrote.
struct Step {
    before: Session,
    outcome: CallOutcome,
    wrote: bool,
}

fn replay(mut s: Session, calls: &[(String, Value)]) -> (Session, Vec<Step>) {
    let mut steps = Vec::with_capacity(calls.len());
    for (tool, args) in calls {
        let before = s.clone();
        let w0 = s.state.writes();
        let outcome = s.call(tool, args);
        let wrote = s.state.writes() > w0;
        steps.push(Step {
            before,
            outcome,
            wrote,
        });
    }
    (s, steps)
}

fn outcomes(mut s: Session, calls: &[(String, Value)]) -> (Session, Vec<CallOutcome>) {
    let out = calls.iter().map(|(t, a)| s.call(t, a)).collect();
    (s, out)
}

/// What judging one mutant gave.
enum Judged {
    Caught,
    Equivalent,
    Blind(Vec<String>),
}

struct Counts {
    mutants: usize,
    caught: usize,
    equivalent: usize,
    blind: Vec<BlindSpot>,
}

fn finding(check: &'static str, severity: Severity, detail: String) -> Finding {
    Finding {
        check,
        severity,
        detail,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        let head: String = s.chars().take(57).collect();
        format!("{head}...")
    } else {
        s
    }
}

/// Audits one task (look-alikes are added across tasks afterwards).
pub(crate) fn audit_task(env: &Env<'_>, task: &Task) -> TaskAudit {
    let rubrics = if task.checks.contains(&Check::ValidateRubricsYesno) {
        task.servers()
            .iter()
            .map(|s| task.rubrics_yesno(s).len())
            .sum()
    } else {
        0
    };
    let mut a = TaskAudit {
        id: task.uid.clone(),
        domain: task.scenario.clone(),
        golden_pass: false,
        noop_pass: false,
        deterministic: false,
        golden_calls: task
            .servers()
            .iter()
            .map(|s| task.golden_calls(s).len())
            .sum(),
        state_changing_calls: 0,
        mutants: 0,
        mutants_caught: 0,
        equivalent_mutants: 0,
        sensitivity: None,
        blind_spots: Vec::new(),
        clock: ClockCheck::default(),
        rubrics,
        findings: Vec::new(),
    };
    if let Err(e) = audit_into(env, task, &mut a) {
        a.findings.push(finding(
            "session",
            Severity::Error,
            format!("cannot open a session: {e}"),
        ));
    }
    rubric_findings(task, &mut a);
    if task.checks.is_empty() {
        // The hook for test bodies beyond `validate_database` / `validate_rubrics_yesno`:
        // once Python bodies run, audit noop with the judge answering yes and answering no.
        a.findings.push(finding(
            "python_body",
            Severity::Warning,
            "the test body calls neither validate_database nor validate_rubrics_yesno: a Python body, not run yet; its check is not audited".into(),
        ));
    }
    a
}

fn audit_into(
    env: &Env<'_>,
    task: &Task,
    a: &mut TaskAudit,
) -> Result<(), tb_eval::root::RootError> {
    // A judge per task: its golden cache (whole stable states) lives as long as the task's
    // audit, so memory stays flat over a long list.
    let judge = StateJudge::new();
    let golden = judge.golden(env.sandbox, task, env.clock)?;

    // Golden: the offline golden agent, judged as any attempt is.
    let mut s = env.sandbox.session(task, env.clock)?;
    run_offline(OfflineAgent::Golden, task, &mut s);
    let verdicts = judge.judge(env.sandbox, task, env.clock, &s)?;
    a.golden_pass = verdicts.iter().all(|v| v.passed);
    for v in verdicts.iter().filter(|v| !v.passed) {
        let first = v
            .diff
            .first()
            .and_then(|d| d.get("path"))
            .and_then(Value::as_str)
            .unwrap_or("?");
        a.findings.push(finding(
            "golden",
            Severity::Error,
            format!(
                "the golden trajectory fails on {}: {} difference(s), first at {first}",
                v.server,
                v.diff.len()
            ),
        ));
    }

    // Noop: a fresh session, judged.
    let fresh = env.sandbox.session(task, env.clock)?;
    let noop = judge.judge(env.sandbox, task, env.clock, &fresh)?;
    a.noop_pass = noop.iter().all(|v| v.passed);
    if a.noop_pass {
        let detail = if a.golden_calls == 0 {
            "doing nothing passes: the task has no golden calls".to_string()
        } else {
            "doing nothing passes: the golden state equals the initial state".to_string()
        };
        a.findings.push(finding("noop", Severity::Warning, detail));
    }

    // Per server: replays, mutants, clock.
    let wall_fresh = env.sandbox.session(task, env.wall)?;
    let mut deterministic = true;
    let mut counts = Counts {
        mutants: 0,
        caught: 0,
        equivalent: 0,
        blind: Vec::new(),
    };
    let mut noop_wall = true;
    // A state-changing golden call comes at or after a call whose result moves with the clock.
    let mut acts_after = false;
    for g in golden.iter() {
        let Some(start) = fresh.server(&g.server) else {
            continue;
        };
        let calls = task.golden_calls(&g.server);
        let (end, steps) = replay(start.clone(), &calls);
        // Determinism: this replay and one from a cold, unshared copy reach the golden hash.
        let cold = match env.sandbox.domain(&g.server) {
            Some(l) => {
                let config = task.world_state.get(&g.server).cloned().unwrap_or_default();
                l.session_uncached(&config, env.clock)
                    .ok()
                    .map(|s| outcomes(s, &calls).0.state.hash())
            }
            None => None,
        };
        let end_hash = end.state.hash();
        if end_hash != g.hash || cold.as_deref() != Some(g.hash.as_str()) {
            deterministic = false;
        }
        for (i, st) in steps.iter().enumerate() {
            if let CallOutcome::ToolFailed(m) | CallOutcome::UnknownTool(m) = &st.outcome {
                a.findings.push(finding(
                    "golden_call_error",
                    Severity::Warning,
                    format!(
                        "golden call {} ({}) on {} fails, so the golden state lacks its effect: {}",
                        i + 1,
                        calls[i].0,
                        g.server,
                        m.chars().take(160).collect::<String>()
                    ),
                ));
            }
        }
        a.state_changing_calls += steps.iter().filter(|s| s.wrote).count();
        mutants(g, &calls, &steps, &end.state, &mut counts);

        // Clock: the same calls on the wall clock.
        if let Some(ws) = wall_fresh.server(&g.server) {
            let noop_hash = ws.state.hash();
            let (wend, wout) = outcomes(ws.clone(), &calls);
            let whash = wend.state.hash();
            noop_wall &= noop_hash == whash;
            if whash != g.hash {
                a.clock.golden_state_moves = true;
            }
            for (i, (w, st)) in wout.iter().zip(&steps).enumerate() {
                if *w != st.outcome {
                    a.clock.reads_clock = true;
                    acts_after |= steps[i..].iter().any(|s| s.wrote);
                    if !a.clock.tools.contains(&calls[i].0) {
                        a.clock.tools.push(calls[i].0.clone());
                    }
                    if w.is_ok() != st.outcome.is_ok() {
                        a.clock.outcome_flips.push(format!(
                            "call {} ({}) {} on the session clock, {} on the wall clock",
                            i + 1,
                            calls[i].0,
                            if st.outcome.is_ok() {
                                "succeeds"
                            } else {
                                "fails"
                            },
                            if w.is_ok() { "succeeds" } else { "fails" },
                        ));
                    }
                }
            }
        }
    }
    a.deterministic = deterministic;
    if !deterministic {
        a.findings.push(finding(
            "determinism",
            Severity::Error,
            "replays of the golden calls reach different state hashes".into(),
        ));
    }
    a.mutants = counts.mutants;
    a.mutants_caught = counts.caught;
    a.equivalent_mutants = counts.equivalent;
    a.sensitivity = (counts.mutants > 0).then(|| counts.caught as f64 / counts.mutants as f64);
    a.blind_spots = counts.blind;
    if a.state_changing_calls == 0 {
        a.findings.push(finding(
            "sensitivity",
            Severity::Info,
            "no golden call changes the state: nothing to mutate".into(),
        ));
    } else if !a.blind_spots.is_empty() {
        let list: Vec<String> = a
            .blind_spots
            .iter()
            .take(6)
            .map(|b| {
                let what = match (&b.argument, b.swapped_with) {
                    (Some(arg), _) => format!(
                        "{} of call {} ({}): {} -> {}",
                        arg,
                        b.call,
                        b.tool,
                        short(b.from.as_ref().unwrap_or(&Value::Null)),
                        short(b.to.as_ref().unwrap_or(&Value::Null))
                    ),
                    (None, Some(w)) => format!("calls {} and {w} swapped ({})", b.call, b.tool),
                    (None, None) => format!("call {} ({}) {}", b.call, b.tool, b.mutation.name()),
                };
                if b.unchecked.is_empty() {
                    what
                } else {
                    format!("{what} [unchecked: {}]", b.unchecked.join(", "))
                }
            })
            .collect();
        let more = a.blind_spots.len().saturating_sub(6);
        a.findings.push(finding(
            "sensitivity",
            Severity::Warning,
            format!(
                "{} of {} mutants pass although the state differs: {}{}",
                a.blind_spots.len(),
                a.mutants,
                list.join("; "),
                if more > 0 {
                    format!("; {more} more")
                } else {
                    String::new()
                }
            ),
        ));
    }

    // Clock verdict: the reference recomputes the golden state on its own clock, so the
    // verdict moves when doing nothing starts (or stops) passing, or a golden call starts
    // (or stops) failing.
    a.clock.noop_pass_wall = noop_wall;
    a.clock.verdict_changes = noop_wall != a.noop_pass || !a.clock.outcome_flips.is_empty();
    if a.clock.reads_clock {
        let mut detail = format!(
            "golden calls read the clock ({}): their results differ between {} and {}",
            a.clock.tools.join(", "),
            env.clock.now_iso(),
            env.wall.now_iso()
        );
        if !a.clock.outcome_flips.is_empty() {
            detail.push_str(&format!("; {}", a.clock.outcome_flips.join("; ")));
        }
        if noop_wall != a.noop_pass {
            detail.push_str(&format!(
                "; doing nothing {} on the wall clock",
                if noop_wall { "passes" } else { "fails" }
            ));
        }
        if !a.clock.verdict_changes {
            detail.push_str("; the state verdicts stay the same");
        }
        if acts_after {
            detail.push_str(
                "; the golden trajectory changes the state after reading it, so an agent following the policy may act otherwise on the other date",
            );
        }
        let severity = if a.clock.verdict_changes || acts_after {
            Severity::Warning
        } else {
            Severity::Info
        };
        a.findings.push(finding("clock", severity, detail));
    } else if a.clock.verdict_changes {
        a.findings.push(finding(
            "clock",
            Severity::Warning,
            format!(
                "doing nothing {} on the wall clock ({})",
                if noop_wall { "passes" } else { "fails" },
                env.wall.now_iso()
            ),
        ));
    }
    Ok(())
}

/// Where `state` differs from `golden` in any field (the unstable ones included): the first
/// deep-diff paths of the tables that differ; empty when the two are equal. Tables are
/// compared in place, and only differing ones are built as values.
fn unchecked_paths(state: &State, golden: &State) -> Vec<String> {
    let mut ours = serde_json::Map::new();
    let mut theirs = serde_json::Map::new();
    for def in state.layout().tables() {
        let (Ok(a), Ok(b)) = (state.rows(&def.name), golden.rows(&def.name)) else {
            continue;
        };
        let same = a.ptr_eq(&b) || a == b;
        if !same {
            let rows = |r: tb_sandbox::state::Rows<'_>| {
                Value::Array(r.iter().map(|x| Value::Object(x.clone())).collect())
            };
            ours.insert(def.name.clone(), rows(a));
            theirs.insert(def.name.clone(), rows(b));
        }
    }
    if ours.is_empty() {
        return Vec::new();
    }
    let paths: Vec<String> = deep_diff(&Value::Object(ours), &Value::Object(theirs))
        .iter()
        .filter_map(|d| d.get("path").and_then(Value::as_str).map(str::to_string))
        .take(UNCHECKED_PATHS)
        .collect();
    if paths.is_empty() {
        // Equal under the diff's rules (e.g. 1 == 1.0) but not as stored: still a difference.
        vec!["(stored values differ in type only)".into()]
    } else {
        paths
    }
}

/// `head` (if any), then `calls[from..]`.
fn suffix<'a>(
    head: Option<(&'a String, &'a Value)>,
    calls: &'a [(String, Value)],
    from: usize,
) -> Vec<(&'a String, &'a Value)> {
    head.into_iter()
        .chain(calls[from..].iter().map(|(t, a)| (t, a)))
        .collect()
}

/// Builds and judges every mutant of one server's golden calls.
fn mutants(
    g: &Golden,
    calls: &[(String, Value)],
    steps: &[Step],
    golden_end: &State,
    c: &mut Counts,
) {
    let writers: Vec<usize> = (0..steps.len()).filter(|&i| steps[i].wrote).collect();
    let judge = |start: usize, suffix: &[(&String, &Value)]| {
        let mut s = steps[start].before.clone();
        for (t, args) in suffix {
            s.call(t, args);
        }
        if s.state.hash() != g.hash {
            return Judged::Caught;
        }
        let unchecked = unchecked_paths(&s.state, golden_end);
        if unchecked.is_empty() {
            Judged::Equivalent
        } else {
            Judged::Blind(unchecked)
        }
    };
    let mut record = |judged: Judged, spot: BlindSpot| match judged {
        Judged::Caught => {
            c.mutants += 1;
            c.caught += 1;
        }
        Judged::Equivalent => c.equivalent += 1,
        Judged::Blind(unchecked) => {
            c.mutants += 1;
            c.blind.push(BlindSpot { unchecked, ..spot });
        }
    };
    let spot = |mutation, i: usize| BlindSpot {
        mutation,
        call: i + 1,
        tool: calls[i].0.clone(),
        argument: None,
        server: g.server.clone(),
        from: None,
        to: None,
        swapped_with: None,
        unchecked: Vec::new(),
    };
    for (wi, &i) in writers.iter().enumerate() {
        let (tool, args) = &calls[i];
        // Dropped.
        record(
            judge(i, &suffix(None, calls, i + 1)),
            spot(Mutation::Drop, i),
        );
        // Duplicated.
        record(
            judge(i, &suffix(Some((tool, args)), calls, i)),
            spot(Mutation::Duplicate, i),
        );
        // Each argument replaced.
        let input = steps[i]
            .before
            .domain
            .tool(tool)
            .map(|t| t.decl.input.clone());
        for m in argument_mutations(&steps[i].before.state, input.as_deref(), args) {
            let judged = judge(i, &suffix(Some((tool, &m.args)), calls, i + 1));
            record(
                judged,
                BlindSpot {
                    argument: Some(m.path),
                    from: Some(m.from),
                    to: Some(m.to),
                    ..spot(Mutation::Argument, i)
                },
            );
        }
        // Swapped with the next state-changing call.
        if let Some(&j) = writers.get(wi + 1) {
            let mut order: Vec<usize> = (i..calls.len()).collect();
            order.swap(0, j - i);
            let swapped: Vec<(&String, &Value)> =
                order.iter().map(|&k| (&calls[k].0, &calls[k].1)).collect();
            let judged = judge(i, &swapped);
            record(
                judged,
                BlindSpot {
                    swapped_with: Some(j + 1),
                    ..spot(Mutation::Reorder, i)
                },
            );
        }
    }
}

fn rubric_findings(task: &Task, a: &mut TaskAudit) {
    let written: usize = task
        .servers()
        .iter()
        .map(|s| task.rubrics_yesno(s).len())
        .sum();
    let checked = task.checks.contains(&Check::ValidateRubricsYesno);
    let state = task.checks.contains(&Check::ValidateDatabase);
    if !checked {
        if written > 0 {
            a.findings.push(finding(
                "rubrics",
                Severity::Warning,
                format!(
                    "{written} rubric(s) written but the test never checks them: they cannot change the verdict"
                ),
            ));
        }
        return;
    }
    if written == 0 {
        a.findings.push(finding(
            "rubrics",
            Severity::Warning,
            "the test checks rubrics but the task has none: the rubric check always passes".into(),
        ));
        return;
    }
    let detail = if state {
        let mut passing = vec!["the golden one".to_string()];
        if a.noop_pass {
            passing.push("doing nothing".into());
        }
        if !a.blind_spots.is_empty() {
            passing.push(format!("{} blind-spot mutant(s)", a.blind_spots.len()));
        }
        format!(
            "{written} rubric(s): the state check alone decides every audited trajectory except those reaching the golden state ({}); on those the rubrics decide. Not judged: no judge model, and the golden trajectory carries no final message, so whether the rubrics can be met is not checked",
            passing.join(", ")
        )
    } else {
        format!(
            "{written} rubric(s) and no state check: the rubrics alone decide. Not judged: no judge model"
        )
    };
    a.findings.push(finding(
        "rubrics",
        if a.noop_pass || !state {
            Severity::Warning
        } else {
            Severity::Info
        },
        detail,
    ));
}
