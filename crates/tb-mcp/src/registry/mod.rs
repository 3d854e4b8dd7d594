//! The session registry: every open session, its visible tools, and the limits (maximum
//! sessions, idle reaping, per-call timeout) that keep the server responsive.
//!
//! A session is one attempt's backend, an [`EpisodeSession`](tb_eval::tools::EpisodeSession): a fresh in-process
//! [`TaskSession`](tb_eval::root::TaskSession) (copy-on-write over the loaded base state, so
//! opening one costs microseconds) or a remote backend's session (external tool servers), the
//! tools the agent may see, and what the evaluator needs for effects. Sessions never share
//! mutable state; each has its own lock, so calls on different sessions run in parallel and
//! calls on one session run one at a time.
//!
//! - this module: the table of open sessions, its limits, removal and the idle reaper;
//! - [`slot`]: one open session;
//! - `create`: opening sessions (for a task, or the Session Proxy way);
//! - `call`: tool calls;
//! - [`effects`]: a session's effects.

mod call;
mod create;
pub mod effects;
pub mod slot;
#[cfg(test)]
mod tests;

pub use call::INLINE_CALL_LIMIT;
pub use effects::{Effects, ServerEffects};
pub use slot::{Origin, ProxyOptions, Slot, ToolSet};

use crate::error::SessionError;
use create::TaskEntry;
use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};
use tb_dataset::Dataset;
use tb_eval::judge::StateJudge;
use tb_eval::root::LoadedRoot;
use tb_eval::tools::RemoteTools;
use tb_sandbox::Clock;

/// Limits that turn overload into clear refusals instead of hangs.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Most sessions open at once; creating one more is refused.
    pub max_sessions: usize,
    /// Sessions unused for this long are removed by the reaper (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Largest accepted request body, in bytes (admin, proxy and MCP routes).
    pub max_body_bytes: usize,
    /// Longest a tool call (or an effects computation) may run.
    pub call_timeout: Duration,
}

impl Default for Limits {
    /// 10,000 sessions, 15 idle minutes, 8 MiB bodies, 60 s per call.
    fn default() -> Self {
        Limits {
            max_sessions: 10_000,
            idle_timeout: Some(Duration::from_mins(15)),
            max_body_bytes: 8 << 20,
            call_timeout: Duration::from_mins(1),
        }
    }
}

/// All open sessions of one server, over one loaded data root.
pub struct Registry {
    dataset: Dataset,
    sandbox: LoadedRoot,
    clock: Clock,
    limits: Limits,
    judge: StateJudge,
    epoch: Instant,
    sessions: RwLock<HashMap<String, Arc<Slot>>>,
    tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    known_servers: OnceLock<String>,
    /// Where task sessions come from when not in process (`tb mcp-start --servers`): asked
    /// first for every task session; `Ok(None)` opens it in process.
    remote: Option<Arc<dyn RemoteTools>>,
    /// Closes of remote sessions still running (awaited by [`Registry::shutdown`]).
    closing: tokio_util::task::TaskTracker,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("root", &self.dataset.root())
            .field("sessions", &self.len())
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Opens a data root (dataset and every domain's initial data).
    pub fn open(data_root: &Path, clock: Clock, limits: Limits) -> Result<Self, SessionError> {
        let dataset = Dataset::open(data_root).map_err(|e| SessionError::Init(e.to_string()))?;
        let sandbox = LoadedRoot::load(dataset.root()).map_err(|e| {
            SessionError::Init(format!(
                "loading the tools' initial data under {}: {e}",
                dataset.root().display()
            ))
        })?;
        Ok(Self::new(dataset, sandbox, clock, limits))
    }

    /// A registry over an opened dataset and its loaded sandbox.
    pub fn new(dataset: Dataset, sandbox: LoadedRoot, clock: Clock, limits: Limits) -> Self {
        Registry {
            dataset,
            sandbox,
            clock,
            limits,
            judge: StateJudge::new(),
            epoch: Instant::now(),
            sessions: RwLock::new(HashMap::new()),
            tasks: Mutex::new(HashMap::new()),
            known_servers: OnceLock::new(),
            remote: None,
            closing: tokio_util::task::TaskTracker::new(),
        }
    }

    /// Task sessions are opened on `remote` first (e.g. external tool servers from a
    /// servers.yaml); a task it declines (`Ok(None)`) runs in process as before.
    #[must_use]
    pub fn with_remote(mut self, remote: Arc<dyn RemoteTools>) -> Self {
        self.remote = Some(remote);
        self
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The session clock.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The loaded sandbox.
    pub fn sandbox(&self) -> &LoadedRoot {
        &self.sandbox
    }

    /// Number of open sessions.
    pub fn len(&self) -> usize {
        self.sessions.read().map_or(0, |s| s.len())
    }

    /// No session is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Ids of the open sessions.
    pub fn ids(&self) -> Vec<String> {
        self.sessions
            .read()
            .map(|s| s.keys().cloned().collect())
            .unwrap_or_default()
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Marks a session used now (the reaper's clock).
    fn touch(&self, slot: &Slot) {
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    fn insert(&self, slot: &Arc<Slot>) -> Result<(), SessionError> {
        let mut sessions = self
            .sessions
            .write()
            .map_err(|_| SessionError::Internal("session table lock poisoned".into()))?;
        if sessions.contains_key(&slot.id) {
            return Err(SessionError::Duplicate(slot.id.clone()));
        }
        if sessions.len() >= self.limits.max_sessions {
            return Err(SessionError::Full {
                max: self.limits.max_sessions,
            });
        }
        sessions.insert(slot.id.clone(), slot.clone());
        Ok(())
    }

    fn check_capacity(&self) -> Result<(), SessionError> {
        if self.len() >= self.limits.max_sessions {
            return Err(SessionError::Full {
                max: self.limits.max_sessions,
            });
        }
        Ok(())
    }

    /// Ends a removed slot: a remote session is closed (its servers torn down and reaped) on
    /// a task [`Registry::shutdown`] waits for; an in-process one is just dropped.
    fn retire(&self, slot: Arc<Slot>) {
        if !slot.is_remote() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            // no runtime: the remote session's own drop cleans up
            return;
        };
        let live = slot.live.clone();
        let id = slot.id.clone();
        self.closing.spawn_on(
            async move {
                let session = live.lock().await.take();
                if let Some(s) = session {
                    s.close().await;
                    tracing::debug!(session = %id, "remote session closed");
                }
            },
            &rt,
        );
    }

    /// Closes every session and waits (at most `grace`) until the remote ones are torn down.
    pub async fn shutdown(&self, grace: Duration) {
        self.remove_all();
        self.closing.close();
        if tokio::time::timeout(grace, self.closing.wait())
            .await
            .is_err()
        {
            tracing::warn!("remote sessions still closing at shutdown");
        }
    }

    /// The session of an id (and marks it used).
    pub fn get(&self, id: &str) -> Result<Arc<Slot>, SessionError> {
        let slot = self
            .sessions
            .read()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| SessionError::UnknownSession(crate::input::shown(id)))?;
        self.touch(&slot);
        Ok(slot)
    }

    /// Closes a session.
    pub fn remove(&self, id: &str) -> Result<(), SessionError> {
        let removed = self.sessions.write().ok().and_then(|mut s| s.remove(id));
        match removed {
            Some(slot) => {
                tracing::info!(session = id, "session closed");
                self.retire(slot);
                Ok(())
            }
            None => Err(SessionError::UnknownSession(crate::input::shown(id))),
        }
    }

    /// Closes every session; returns how many were open.
    pub fn remove_all(&self) -> usize {
        let mut s = match self.sessions.write() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let n = s.len();
        let removed: Vec<Arc<Slot>> = s.drain().map(|(_, slot)| slot).collect();
        drop(s);
        for slot in removed {
            self.retire(slot);
        }
        n
    }

    /// Closes sessions unused for at least `idle` (skipping any with a call in progress);
    /// returns their ids.
    pub fn reap(&self, idle: Duration) -> Vec<String> {
        let now = self.now_ms();
        let limit = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let mut s = match self.sessions.write() {
            Ok(s) => s,
            Err(p) => p.into_inner(),
        };
        let stale: Vec<String> = s
            .values()
            .filter(|slot| {
                now.saturating_sub(slot.last_used_ms.load(Ordering::Relaxed)) >= limit
                    && slot.live.try_lock().is_ok()
            })
            .map(|slot| slot.id.clone())
            .collect();
        let removed: Vec<Arc<Slot>> = stale.iter().filter_map(|id| s.remove(id)).collect();
        drop(s);
        for slot in removed {
            self.retire(slot);
        }
        if !stale.is_empty() {
            tracing::info!(count = stale.len(), "removed idle sessions");
        }
        stale
    }

    /// Whether `call_tool` results of this session are forced to JSON.
    pub fn always_json(slot: &Slot) -> bool {
        slot.always_json()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
