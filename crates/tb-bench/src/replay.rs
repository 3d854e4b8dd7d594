//! The replay figures: every task's golden calls replayed and hashed (`replay_all_s`), and one
//! fresh task session (`session_create_us`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// A fresh session of every server of a task, built without the shared patched state (the
/// tables are copied and patched now, as the reference builds a fresh system per task).
pub(super) fn cold_session(
    l: &Loaded,
    task: &Task,
    clock: Clock,
) -> Result<Vec<tb_sandbox::Session>> {
    task.world_state
        .iter()
        .map(|(server, config)| {
            let loaded = l
                .sandbox
                .domain(server)
                .with_context(|| format!("task {}: unknown server {server}", task.uid))?;
            loaded
                .session_uncached(config, clock)
                .with_context(|| format!("task {}", task.uid))
        })
        .collect()
}

/// One pass of the reference's timed segment over every task. Returns per-task times (s) and
/// the golden hashes (task uid, server, hash). `materialize`: build both stable states as
/// JSON values and diff them whole (as the judge does), instead of hashing and diffing
/// straight from the tables.
pub(super) fn replay_pass(
    l: &Loaded,
    clock: Clock,
    materialize: bool,
) -> Result<(Vec<f64>, Vec<GoldenHash>)> {
    let mut times = Vec::with_capacity(l.tasks.len());
    let mut hashes = Vec::new();
    for (task, calls) in l.tasks.iter().zip(&l.calls) {
        let t0 = Instant::now();
        let mut servers = cold_session(l, task, clock)?;
        let mut out = Vec::with_capacity(calls.len());
        for (s, (server, calls)) in servers.iter_mut().zip(calls) {
            let golden_hash = if materialize {
                let initial = s.state.stable_state();
                for (tool, params) in calls {
                    std::hint::black_box(s.call(tool, params));
                }
                let golden = s.state.stable_state();
                let golden_hash = hash_stable(&golden);
                let diff = deep_diff(&initial, &golden);
                std::hint::black_box(&diff);
                golden_hash
            } else {
                // The initial state is kept as the state itself (its tables shared, copied on
                // write); the hash streams from the tables; the diff builds and compares only
                // the tables the calls changed. The outputs are the full computation's
                // (tb-sandbox's stable_parity test checks it on every trace). One hash, the
                // golden one, as the reference's segment computes.
                let initial = s.state.clone();
                for (tool, params) in calls {
                    std::hint::black_box(s.call(tool, params));
                }
                let golden_hash = s.state.hash();
                let diff = initial.stable_diff(&s.state);
                std::hint::black_box(&diff);
                golden_hash
            };
            out.push((server, golden_hash));
        }
        times.push(t0.elapsed().as_secs_f64());
        for (server, h) in out {
            hashes.push((task.uid.clone(), server.clone(), h));
        }
    }
    Ok((times, hashes))
}

/// Golden hashes recorded in the trace files under `dir`: (task id, server) -> hash.
pub(super) fn trace_hashes(dir: &std::path::Path) -> Result<HashMap<(String, String), String>> {
    let mut out = HashMap::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for f in files {
        for t in tb_eval::replay::read_traces(&f).map_err(|e| BenchError::Msg(e.clone()))? {
            out.insert((t.id, t.domain), t.golden_hash);
        }
    }
    Ok(out)
}
