//! Replays recorded golden traces of the reference (`tb-bench-v1/traces/*.jsonl`) through our
//! tools and compares everything: initial state and hash, each call's result, final state and
//! hash, and the deep diff. This is how tool parity is proven.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;
use tb_sandbox::{Clock, Loaded};

/// One recorded call of a trace.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct TraceCall {
    /// Tool name.
    pub tool: String,
    /// Arguments as sent.
    #[serde(default)]
    pub parameters: Value,
    /// Whether the reference's call succeeded.
    #[serde(default)]
    pub ok: bool,
    /// What the reference returned (parsed JSON).
    pub result: Value,
}

/// One line of a trace file.
#[derive(Debug, Clone, Deserialize, Serialize)]
pub struct Trace {
    /// Task uid.
    pub id: String,
    /// Server name.
    pub domain: String,
    /// Hash of the initial stable state.
    pub initial_hash: String,
    /// Initial stable state.
    pub initial_state: Value,
    /// The golden calls with their results.
    pub calls: Vec<TraceCall>,
    /// Stable state after the golden calls.
    pub golden_state: Value,
    /// Its hash.
    pub golden_hash: String,
    /// Deep diff of initial (as result) against golden.
    #[serde(default)]
    pub diff_initial_vs_golden: Option<Value>,
}

/// One thing that differed.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Mismatch {
    /// Task uid.
    pub trace: String,
    /// Index of the call, for call mismatches.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub call: Option<usize>,
    /// Tool of that call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What was compared: `initial_state`, `golden_hash`, `golden_diff`, `call`, `final_state`,
    /// `diff`, `session`.
    pub what: String,
    /// The first differing path and how, as the deep diff reports it.
    pub detail: String,
}

/// Totals over replayed traces.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ReplaySummary {
    /// Traces read.
    pub traces: usize,
    /// Our initial stable state and hash equal the trace's.
    pub initial_match: usize,
    /// Our hash of the trace's golden state equals its golden hash.
    pub golden_hash_match: usize,
    /// Our deep diff of our initial state against the trace's golden state equals the trace's.
    pub golden_diff_match: usize,
    /// Calls replayed.
    pub calls: usize,
    /// Calls whose result equals the recorded one.
    pub calls_match: usize,
    /// Final stable state and hash equal the golden ones.
    pub final_match: usize,
    /// Our deep diff of initial vs our final equals the recorded diff.
    pub diff_match: usize,
    /// Everything that differed.
    pub mismatches: Vec<Mismatch>,
}

impl ReplaySummary {
    /// Whether nothing differed.
    pub fn clean(&self) -> bool {
        self.mismatches.is_empty()
    }
}

fn first_difference(ours: &Value, theirs: &Value) -> String {
    match deep_diff(ours, theirs).into_iter().next() {
        Some(d) => {
            let path = d.get("path").and_then(Value::as_str).unwrap_or("");
            let kind = d.get("type").and_then(Value::as_str).unwrap_or("");
            match (d.get("result"), d.get("golden")) {
                (Some(r), Some(g)) => format!("{path}: {kind} (ours {r}, reference {g})"),
                _ => format!("{path}: {kind}"),
            }
        }
        // Equal under Python equality but not as JSON (e.g. key order is irrelevant here, so
        // this is int vs float in the same place, which deep_diff reports; or NaN).
        None => "values differ".to_string(),
    }
}

/// Replays one trace. `config` is the task's merged `world_state[server]` (its `data_patch`
/// is what matters). Everything found goes into `summary`.
pub fn replay_trace(
    loaded: &Loaded,
    config: &Value,
    clock: Clock,
    trace: &Trace,
    summary: &mut ReplaySummary,
) {
    summary.traces += 1;
    let mismatch = |what: &str, call: Option<(usize, &str)>, detail: String| Mismatch {
        trace: trace.id.clone(),
        call: call.map(|c| c.0),
        tool: call.map(|c| c.1.to_string()),
        what: what.to_string(),
        detail,
    };
    // The trace's own vectors, independent of any tool.
    if hash_stable(&trace.golden_state) == trace.golden_hash {
        summary.golden_hash_match += 1;
    } else {
        summary.mismatches.push(mismatch(
            "golden_hash",
            None,
            "our hash of the trace's golden_state differs".into(),
        ));
    }
    let mut session = match loaded.session(config, clock) {
        Ok(s) => s,
        Err(e) => {
            summary
                .mismatches
                .push(mismatch("session", None, e.to_string()));
            return;
        }
    };
    // How a state differs from the trace's (and its hash), and how our diff between two
    // states differs from the trace's `diff_initial_vs_golden` (none: they agree).
    let state_differs = |ours: &Value, expected: &Value, hash: &str| {
        (ours != expected || hash_stable(ours) != hash).then(|| first_difference(ours, expected))
    };
    let diff_differs = |from: &Value, to: &Value| {
        let expected = trace.diff_initial_vs_golden.as_ref()?;
        let ours = Value::Array(deep_diff(from, to));
        (&ours != expected).then(|| first_difference(&ours, expected))
    };
    let miss = |what: &'static str| move |detail: String| mismatch(what, None, detail);
    let initial = session.state.stable_state();
    let differs = state_differs(&initial, &trace.initial_state, &trace.initial_hash);
    tally(
        &mut summary.initial_match,
        &mut summary.mismatches,
        differs.map(miss("initial_state")),
    );
    let differs = diff_differs(&initial, &trace.golden_state);
    tally(
        &mut summary.golden_diff_match,
        &mut summary.mismatches,
        differs.map(miss("golden_diff")),
    );
    for (i, call) in trace.calls.iter().enumerate() {
        summary.calls += 1;
        let params = if call.parameters.is_null() {
            Value::Object(serde_json::Map::default())
        } else {
            call.parameters.clone()
        };
        let got = session.call(&call.tool, &params).to_json(&call.tool);
        if got == call.result {
            summary.calls_match += 1;
        } else {
            summary.mismatches.push(mismatch(
                "call",
                Some((i, &call.tool)),
                first_difference(&got, &call.result),
            ));
        }
    }
    let final_state = session.state.stable_state();
    let differs = state_differs(&final_state, &trace.golden_state, &trace.golden_hash);
    tally(
        &mut summary.final_match,
        &mut summary.mismatches,
        differs.map(miss("final_state")),
    );
    let differs = diff_differs(&initial, &final_state);
    tally(
        &mut summary.diff_match,
        &mut summary.mismatches,
        differs.map(miss("diff")),
    );
}

/// Counts a check that agrees in `count`, or records its mismatch.
fn tally(count: &mut usize, mismatches: &mut Vec<Mismatch>, mismatch: Option<Mismatch>) {
    match mismatch {
        None => *count += 1,
        Some(m) => mismatches.push(m),
    }
}

/// Reads a trace file (JSON lines). A malformed line is an error naming file and line.
pub fn read_traces(path: &std::path::Path) -> Result<Vec<Trace>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            serde_json::from_str(l)
                .map_err(|e| format!("{}:{}: not a trace line: {e}", path.display(), i + 1))
        })
        .collect()
}
