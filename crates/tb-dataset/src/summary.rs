//! Per-scenario counts for `tb validate`.

use crate::{Check, Dataset, DatasetError, Task};
use serde::Serialize;

/// Counts for one scenario over a set of tasks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScenarioSummary {
    /// Scenario name.
    pub scenario: String,
    /// Servers of its `world_state`, in priority order.
    pub servers: Vec<String>,
    /// Number of tasks.
    pub tasks: usize,
    /// Golden tool calls over all tasks and servers.
    pub golden_calls: usize,
    /// Fewest / most golden calls in one task.
    pub golden_calls_min: usize,
    /// Most golden calls in one task.
    pub golden_calls_max: usize,
    /// Tools the scenario exposes to the agent.
    pub tools: usize,
    /// Tasks calling `validate_database`.
    pub validate_database: usize,
    /// Tasks calling `validate_rubrics_yesno`.
    pub validate_rubrics_yesno: usize,
    /// Tasks calling no known check (they can never fail).
    pub no_checks: usize,
    /// Yes/no rubrics over all tasks.
    pub rubrics_yesno: usize,
}

/// Summarise `tasks` per scenario, in order of first appearance.
pub fn summarize(ds: &Dataset, tasks: &[Task]) -> Result<Vec<ScenarioSummary>, DatasetError> {
    let mut out: Vec<ScenarioSummary> = Vec::new();
    for t in tasks {
        let idx = if let Some(i) = out.iter().position(|s| s.scenario == t.scenario) {
            i
        } else {
            let sc = ds.scenario(&t.scenario)?;
            out.push(ScenarioSummary {
                scenario: t.scenario.clone(),
                servers: sc
                    .servers()
                    .iter()
                    .map(std::string::ToString::to_string)
                    .collect(),
                tasks: 0,
                golden_calls: 0,
                golden_calls_min: usize::MAX,
                golden_calls_max: 0,
                tools: sc.tools.len(),
                validate_database: 0,
                validate_rubrics_yesno: 0,
                no_checks: 0,
                rubrics_yesno: 0,
            });
            out.len() - 1
        };
        let s = &mut out[idx];
        let servers = t.servers();
        let calls: usize = servers.iter().map(|sv| t.golden_calls(sv).len()).sum();
        s.tasks += 1;
        s.golden_calls += calls;
        s.golden_calls_min = s.golden_calls_min.min(calls);
        s.golden_calls_max = s.golden_calls_max.max(calls);
        s.rubrics_yesno += servers
            .iter()
            .map(|sv| t.rubrics_yesno(sv).len())
            .sum::<usize>();
        if t.checks.contains(&Check::ValidateDatabase) {
            s.validate_database += 1;
        }
        if t.checks.contains(&Check::ValidateRubricsYesno) {
            s.validate_rubrics_yesno += 1;
        }
        if t.checks.is_empty() {
            s.no_checks += 1;
        }
    }
    for s in &mut out {
        if s.tasks == 0 {
            s.golden_calls_min = 0;
        }
    }
    Ok(out)
}
