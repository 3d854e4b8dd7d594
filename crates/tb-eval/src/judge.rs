//! The state judge: an attempt passes the database check when the hash of its final stable
//! state equals the golden hash (fresh session + data patch + the task's golden calls).

use crate::root::{LoadedRoot, RootError, TaskSession};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Mutex;
use tb_core::{StateVerdict, Task};
use tb_sandbox::Clock;
use tb_sandbox::diff::deep_diff;

/// The golden outcome of a task on one server.
///
/// The state is kept as the golden session's tables (shared copy-on-write with the task's
/// patched base state: only the tables the golden calls wrote are its own), not as a built
/// stable state: a stable state as JSON values is several times the size of the tables it
/// comes from, and the cache below keeps one per task.
#[derive(Debug, Clone)]
pub struct Golden {
    /// Server.
    pub server: String,
    /// The state after the golden calls.
    pub state: tb_sandbox::State,
    /// Its hash.
    pub hash: String,
}

impl Golden {
    /// The stable golden state (built on each call).
    pub fn stable_state(&self) -> Value {
        self.state.stable_state()
    }
}

/// Computes and caches golden states (they depend only on the task and the clock).
///
/// Bounded: past [`StateJudge::MAX_TASKS`] entries the cache starts over, so a long-running
/// server that grades many distinct tasks holds at most that many golden states.
#[derive(Debug, Default)]
pub struct StateJudge {
    cache: Mutex<HashMap<String, std::sync::Arc<Vec<Golden>>>>,
}

impl StateJudge {
    /// Golden states kept (tasks x clocks) before the cache starts over.
    pub const MAX_TASKS: usize = 1024;

    /// A judge with an empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The golden states of a task: a fresh session, then every golden call in order; a call
    /// that fails is ignored, as the reference's `geteffects` does.
    pub fn golden(
        &self,
        sandbox: &LoadedRoot,
        task: &Task,
        clock: Clock,
    ) -> Result<std::sync::Arc<Vec<Golden>>, RootError> {
        let key = format!("{}@{}", task.uid, clock.now_iso());
        if let Some(g) = self.cache.lock().ok().and_then(|c| c.get(&key).cloned()) {
            return Ok(g);
        }
        let mut session = sandbox.session(task, clock)?;
        let mut out = Vec::new();
        for s in &mut session.servers {
            let server = s.domain.name.clone();
            for (tool, params) in task.golden_calls(&server) {
                let _ = s.call(&tool, &params);
            }
            let hash = s.state.hash();
            out.push(Golden {
                server,
                state: s.state.clone(),
                hash,
            });
        }
        let g = std::sync::Arc::new(out);
        if let Ok(mut c) = self.cache.lock() {
            if c.len() >= Self::MAX_TASKS {
                c.clear();
            }
            c.insert(key, g.clone());
        }
        Ok(g)
    }

    /// Judges an attempt's final sessions against the golden states.
    pub fn judge(
        &self,
        sandbox: &LoadedRoot,
        task: &Task,
        clock: Clock,
        result: &TaskSession,
    ) -> Result<Vec<StateVerdict>, RootError> {
        let golden = self.golden(sandbox, task, clock)?;
        Ok(golden
            .iter()
            .map(|g| {
                // The hash streams from the tables; the stable state is built only when a
                // diff is needed.
                let session = result.server(&g.server);
                let hash = session.map(|s| s.state.hash()).unwrap_or_default();
                let passed = hash == g.hash;
                // `stable_diff` equals `deep_diff` of the two stable states (tb-sandbox's
                // stable_parity test and property test) and builds only what differs.
                let diff = match session {
                    _ if passed => Vec::new(),
                    Some(s) => s.state.stable_diff(&g.state),
                    None => deep_diff(&Value::Null, &g.stable_state()),
                };
                StateVerdict {
                    server: g.server.clone(),
                    result_hash: hash,
                    golden_hash: g.hash.clone(),
                    passed,
                    diff,
                }
            })
            .collect())
    }
}
