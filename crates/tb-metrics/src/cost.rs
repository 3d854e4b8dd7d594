//! Cost: a price table, the cost of attempts from the usage of all three roles, cost per
//! success, cost per dependable task, and the Pareto frontier.
//!
//! Cost of one call = `(input − cached) × input + cached × cached_input + output × output`,
//! prices in currency units per million tokens; `cached_input` defaults to `input`.
//! Reasoning tokens are part of `output_tokens` (as providers bill them) and not added again.
//! Usage per role comes from `usage_by_role`; the agent falls back to the reference's `usage`
//! list. Which model served a role: `provenance.models.<role>` (a name, or an object with
//! `model`/`name`), else `provenance.<role>_model`, else the price table's `roles.<role>`,
//! else (agent only) the run's model name.

use crate::MetricsError;
use crate::agg::TaskCounts;
use crate::load::{Attempt, Run};
use serde::Serialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use tb_core::Usage;

/// Prices of one model, per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Price {
    /// Uncached input tokens.
    pub input: f64,
    /// Cached input tokens (defaults to `input`).
    pub cached_input: f64,
    /// Output tokens (reasoning included).
    pub output: f64,
}

/// A price table: prices by model, and which models serve the user and judge roles when the
/// records do not say.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PriceTable {
    /// Prices by model name.
    pub models: BTreeMap<String, Price>,
    /// Model name by role (`agent`, `user`, `judge`).
    pub roles: BTreeMap<String, String>,
}

fn num(v: &Value, model: &str, key: &str) -> Result<Option<f64>, MetricsError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_f64() {
            Some(f) if f.is_finite() && f >= 0.0 => Ok(Some(f)),
            _ => Err(MetricsError::Prices(format!(
                "model {model}: `{key}` must be a non-negative number, got {x}"
            ))),
        },
    }
}

impl PriceTable {
    /// Reads the parsed file (YAML or JSON): `{models: {NAME: {input, cached_input?, output}},
    /// roles?: {user: NAME, judge: NAME}}`; a file without `models` is read as the model map.
    pub fn from_value(v: &Value) -> Result<Self, MetricsError> {
        let obj = v
            .as_object()
            .ok_or_else(|| MetricsError::Prices("the price file must be a mapping".into()))?;
        let models_v = match obj.get("models") {
            Some(m) => m,
            None => v,
        };
        let models_o = models_v.as_object().ok_or_else(|| {
            MetricsError::Prices("`models` must be a mapping of model name to prices".into())
        })?;
        let mut t = PriceTable::default();
        for (name, p) in models_o {
            if name == "roles" && obj.get("models").is_none() {
                continue;
            }
            if !p.is_object() {
                return Err(MetricsError::Prices(format!(
                    "model {name}: expected a mapping with input, cached_input, output"
                )));
            }
            let input = num(p, name, "input")?.ok_or_else(|| {
                MetricsError::Prices(format!("model {name}: `input` is required"))
            })?;
            let output = num(p, name, "output")?.ok_or_else(|| {
                MetricsError::Prices(format!("model {name}: `output` is required"))
            })?;
            let cached_input = num(p, name, "cached_input")?.unwrap_or(input);
            t.models.insert(
                name.clone(),
                Price {
                    input,
                    cached_input,
                    output,
                },
            );
        }
        if let Some(r) = obj.get("roles") {
            let r = r.as_object().ok_or_else(|| {
                MetricsError::Prices("`roles` must be a mapping of role to model".into())
            })?;
            for (role, m) in r {
                let m = m.as_str().ok_or_else(|| {
                    MetricsError::Prices(format!("roles.{role} must be a model name"))
                })?;
                t.roles.insert(role.clone(), m.to_string());
            }
        }
        Ok(t)
    }

    /// Parses JSON text.
    pub fn from_json_str(s: &str) -> Result<Self, MetricsError> {
        let v: Value =
            serde_json::from_str(s).map_err(|e| MetricsError::Prices(format!("not JSON: {e}")))?;
        Self::from_value(&v)
    }
}

/// The cost of usage at a price.
pub fn usage_cost(u: &Usage, p: &Price) -> f64 {
    let cached = u.input_tokens_details.cached_tokens.min(u.input_tokens);
    let fresh = u.input_tokens - cached;
    (fresh as f64 * p.input + cached as f64 * p.cached_input + u.output_tokens as f64 * p.output)
        / 1e6
}

/// Cost split by role.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct RoleCost {
    /// Agent.
    pub agent: f64,
    /// Simulated user.
    pub user: f64,
    /// Judge.
    pub judge: f64,
}

impl RoleCost {
    /// Sum of the roles.
    pub fn total(&self) -> f64 {
        self.agent + self.user + self.judge
    }
}

/// The cost figures of one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CostSummary {
    /// The model priced for each role (`null` when unknown).
    pub models: BTreeMap<String, Option<String>>,
    /// Roles that used tokens but have no price; their cost is counted as 0 and the figures
    /// are then lower bounds.
    pub unpriced_roles: Vec<String>,
    /// Total over all attempts.
    pub total: f64,
    /// Total by role.
    pub by_role: RoleCost,
    /// `by_role.user / total` (0 when total is 0).
    pub user_share: f64,
    /// `by_role.judge / total`.
    pub judge_share: f64,
    /// Mean cost of an attempt.
    pub per_attempt: f64,
    /// Σ over tasks of the mean cost of one attempt of the task.
    pub one_attempt_per_task: f64,
    /// `one_attempt_per_task / (tasks × pass@1)`: expected cost of one success (None when
    /// nothing passed).
    pub per_success: Option<f64>,
    /// `total / tasks passing k of k` (None when no task passed every attempt).
    pub per_dependable_task: Option<f64>,
    /// On the frontier of (per_success, pass@1) among the compared runs.
    pub frontier_success: bool,
    /// On the frontier of (per_dependable_task, observed k/k share).
    pub frontier_dependable: bool,
}

fn role_model(run: &Run, prices: &PriceTable, role: &str) -> Option<String> {
    let from_prov = run.attempts.iter().find_map(|a| {
        let p = &a.provenance;
        let direct = p.get("models").and_then(|m| m.get(role));
        let named = |v: &Value| match v {
            Value::String(s) if !s.is_empty() => Some(s.clone()),
            Value::Object(o) => o
                .get("model")
                .or_else(|| o.get("name"))
                .and_then(Value::as_str)
                .map(str::to_string),
            _ => None,
        };
        direct
            .and_then(named)
            .or_else(|| p.get(&format!("{role}_model")).and_then(named))
    });
    from_prov
        .or_else(|| prices.roles.get(role).cloned())
        .or_else(|| (role == "agent").then(|| run.model.clone()))
}

/// Per-attempt cost by role, and the roles that used tokens without a price.
pub fn attempt_costs(
    run: &Run,
    prices: &PriceTable,
) -> (Vec<RoleCost>, BTreeMap<String, Option<String>>, Vec<String>) {
    let roles = ["agent", "user", "judge"];
    let models: BTreeMap<String, Option<String>> = roles
        .iter()
        .map(|r| (r.to_string(), role_model(run, prices, r)))
        .collect();
    let price = |r: &str| {
        models
            .get(r)
            .cloned()
            .flatten()
            .and_then(|m| prices.models.get(&m).copied())
    };
    let (pa, pu, pj) = (price("agent"), price("user"), price("judge"));
    let mut unpriced = Vec::new();
    let mut out = Vec::with_capacity(run.attempts.len());
    for a in &run.attempts {
        let u = a.role_usage();
        let mut c = RoleCost::default();
        for (role, usage, p, slot) in [
            ("agent", &u.agent, pa, &mut c.agent),
            ("user", &u.user, pu, &mut c.user),
            ("judge", &u.judge, pj, &mut c.judge),
        ] {
            match p {
                Some(p) => *slot = usage_cost(usage, &p),
                None if usage.input_tokens + usage.output_tokens > 0
                    && !unpriced.iter().any(|x| x == role) =>
                {
                    unpriced.push(role.to_string());
                }
                None => {}
            }
        }
        out.push(c);
    }
    (out, models, unpriced)
}

/// The cost summary of a run, given its tasks' counts, pass@1 and observed k/k count.
pub fn summarize_cost(
    run: &Run,
    tasks: &[TaskCounts],
    pass1: f64,
    observed_all: u64,
    prices: &PriceTable,
) -> CostSummary {
    let (costs, models, unpriced_roles) = attempt_costs(run, prices);
    cost_from_attempts(
        &run.attempts,
        &costs,
        tasks,
        pass1,
        observed_all,
        models,
        unpriced_roles,
    )
}

fn cost_from_attempts(
    attempts: &[Attempt],
    costs: &[RoleCost],
    tasks: &[TaskCounts],
    pass1: f64,
    observed_all: u64,
    models: BTreeMap<String, Option<String>>,
    unpriced_roles: Vec<String>,
) -> CostSummary {
    let mut s = CostSummary {
        models,
        unpriced_roles,
        ..Default::default()
    };
    let mut per_task: HashMap<&str, (f64, u64)> = HashMap::new();
    for (a, c) in attempts.iter().zip(costs) {
        s.by_role.agent += c.agent;
        s.by_role.user += c.user;
        s.by_role.judge += c.judge;
        let e = per_task.entry(a.uid.as_str()).or_default();
        e.0 += c.total();
        e.1 += 1;
    }
    s.total = s.by_role.total();
    if s.total > 0.0 {
        s.user_share = s.by_role.user / s.total;
        s.judge_share = s.by_role.judge / s.total;
    }
    if !attempts.is_empty() {
        s.per_attempt = s.total / attempts.len() as f64;
    }
    s.one_attempt_per_task = tasks
        .iter()
        .filter_map(|t| per_task.get(t.uid.as_str()))
        .map(|(c, n)| c / *n as f64)
        .sum();
    let successes = tasks.len() as f64 * pass1;
    s.per_success = (successes > 0.0).then(|| s.one_attempt_per_task / successes);
    s.per_dependable_task = (observed_all > 0).then(|| s.total / observed_all as f64);
    s
}

/// Which points are on the Pareto frontier of (cost, accuracy): a point is off it when
/// another point is no more expensive and at least as accurate, and strictly better in one
/// of the two. Points without a cost (`None`) are never on it.
pub fn pareto_front(points: &[(Option<f64>, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|(c, acc)| {
            let Some(c) = c else { return false };
            !points.iter().any(|(c2, acc2)| {
                c2.is_some_and(|c2| c2 <= *c && *acc2 >= *acc && (c2 < *c || *acc2 > *acc))
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agg::task_counts;
    use crate::load::parse_run;
    use serde_json::json;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn price_table_shapes_and_errors() {
        let t = PriceTable::from_value(
            &json!({"models": {"m": {"input": 2.0, "output": 8.0}}, "roles": {"judge": "j"}}),
        )
        .unwrap();
        assert_eq!(
            t.models["m"],
            Price {
                input: 2.0,
                cached_input: 2.0,
                output: 8.0
            }
        );
        assert_eq!(t.roles["judge"], "j");
        let t =
            PriceTable::from_value(&json!({"m": {"input": 1, "cached_input": 0.5, "output": 4}}))
                .unwrap();
        assert_eq!(t.models["m"].cached_input, 0.5);
        assert!(
            PriceTable::from_value(&json!({"m": {"input": -1, "output": 1}}))
                .unwrap_err()
                .to_string()
                .contains('m')
        );
        assert!(PriceTable::from_value(&json!({"m": {"output": 1}})).is_err());
        assert!(PriceTable::from_value(&json!([1])).is_err());
        assert!(PriceTable::from_json_str("{").is_err());
    }

    #[test]
    fn usage_cost_counts_cached_tokens_at_their_price() {
        let u: Usage = serde_json::from_value(json!({"input_tokens": 1_000_000, "input_tokens_details": {"cached_tokens": 400_000}, "output_tokens": 500_000, "output_tokens_details": {"reasoning_tokens": 100_000}})).unwrap();
        let p = Price {
            input: 2.0,
            cached_input: 0.5,
            output: 8.0,
        };
        assert!(close(usage_cost(&u, &p), 0.6 * 2.0 + 0.4 * 0.5 + 0.5 * 8.0));
    }

    fn rec(uid: &str, passed: bool, agent_in: u64, judge_in: u64) -> String {
        json!({"uid": uid, "messages": [], "test_result": {"result": passed, "reward": 1.0}, "usage": [{"input_tokens": agent_in, "output_tokens": 0}],
               "usage_by_role": {"judge": {"input_tokens": judge_in}}, "metadata": {}, "is_system_error": false, "finish_reason": "done",
               "provenance": {"models": {"agent": "a", "judge": "j"}}})
        .to_string()
    }

    #[test]
    fn cost_per_success_and_dependable_task() {
        // Two tasks x 2 attempts; every attempt costs 1 (agent) + 0.5 (judge).
        let text = [
            rec("t1", true, 1_000_000, 1_000_000),
            rec("t1", true, 1_000_000, 1_000_000),
            rec("t2", true, 1_000_000, 1_000_000),
            rec("t2", false, 1_000_000, 1_000_000),
        ]
        .join("\n");
        let run = parse_run("f", "f", &text).unwrap();
        let prices = PriceTable::from_value(
            &json!({"a": {"input": 1.0, "output": 0.0}, "j": {"input": 0.5, "output": 0.0}}),
        )
        .unwrap();
        let tasks = task_counts(&run.attempts);
        let c = summarize_cost(&run, &tasks, 0.75, 1, &prices);
        assert!(close(c.total, 6.0));
        assert!(close(c.judge_share, 1.0 / 3.0));
        assert!(close(c.user_share, 0.0));
        assert!(close(c.one_attempt_per_task, 3.0));
        // 3 / (2 x 0.75)
        assert!(close(c.per_success.unwrap(), 2.0));
        // 6 / 1 task passing 2 of 2
        assert!(close(c.per_dependable_task.unwrap(), 6.0));
        assert!(c.unpriced_roles.is_empty());
        // Zero-cost model: costs are 0, not undefined.
        let free = PriceTable::from_value(
            &json!({"a": {"input": 0.0, "output": 0.0}, "j": {"input": 0.0, "output": 0.0}}),
        )
        .unwrap();
        let c = summarize_cost(&run, &tasks, 0.75, 1, &free);
        assert_eq!(
            (c.total, c.per_success, c.per_dependable_task, c.judge_share),
            (0.0, Some(0.0), Some(0.0), 0.0)
        );
        // Nothing passed: undefined.
        let c = summarize_cost(&run, &tasks, 0.0, 0, &prices);
        assert_eq!((c.per_success, c.per_dependable_task), (None, None));
        // No judge price: reported, counted as 0.
        let partial = PriceTable::from_value(&json!({"a": {"input": 1.0, "output": 0.0}})).unwrap();
        let c = summarize_cost(&run, &tasks, 0.75, 1, &partial);
        assert_eq!(c.unpriced_roles, ["judge"]);
        assert!(close(c.total, 4.0));
    }

    #[test]
    fn pareto_frontier() {
        let f = pareto_front(&[
            (Some(1.0), 0.5),
            (Some(2.0), 0.4),
            (Some(2.0), 0.8),
            (None, 0.9),
            (Some(0.0), 0.1),
            (Some(1.0), 0.5),
        ]);
        assert_eq!(f, [true, false, true, false, true, true]);
        assert!(pareto_front(&[]).is_empty());
    }
}
