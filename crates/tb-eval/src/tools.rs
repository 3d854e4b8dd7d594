//! Tool backends of an episode: the in-process [`TaskSession`], or a remote session (a
//! `tb mcp-start` server, implemented in `tb-mcp`) reached through [`RemoteTools`].

use crate::root::TaskSession;
use serde_json::Value;
use std::future::Future;
use std::pin::Pin;
use tb_core::StateVerdict;

/// A boxed, sendable future.
pub type BoxFut<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What an episode calls tools on.
pub trait ToolBackend: Send {
    /// The tool list, MCP-shaped (`name`, `description`, `inputSchema`).
    fn tool_list(&self) -> Vec<Value>;
    /// Calls a tool and gives the text the agent sees. Tool failures and unknown tools are
    /// `Ok` texts; `Err` is an operational failure (the attempt becomes a system error).
    fn call<'a>(&'a mut self, tool: &'a str, args: &'a Value)
    -> BoxFut<'a, Result<String, String>>;
}

impl ToolBackend for TaskSession {
    fn tool_list(&self) -> Vec<Value> {
        TaskSession::tool_list(self)
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFut<'a, Result<String, String>> {
        let text = TaskSession::call_text(self, tool, args);
        Box::pin(std::future::ready(Ok(text)))
    }
}

/// One remote task session: its tools, then its state verdicts.
pub trait RemoteSession: ToolBackend {
    /// The state verdicts (one per server), as the in-process judge gives them.
    fn verdicts(&mut self) -> BoxFut<'_, Result<Vec<StateVerdict>, String>>;
    /// Per server in priority order, its effects object as a reference server's
    /// `__reserved__geteffects` gives it (what the Session Proxy's `get_effects` returns). The
    /// default shapes [`RemoteSession::verdicts`] so (hashes and diff only).
    fn server_effects(&mut self) -> BoxFut<'_, Result<Vec<(String, Value)>, String>> {
        Box::pin(async move {
            Ok(self
                .verdicts()
                .await?
                .into_iter()
                .map(|v| {
                    let fx = serde_json::json!({
                        "result_db_hash": v.result_hash,
                        "golden_db_hash": v.golden_hash,
                        "diff": v.diff,
                    });
                    (v.server, fx)
                })
                .collect())
        })
    }
    /// What each server's `__reserved__init` returned beyond `status`, by server name
    /// (`session_create`'s reply); the default: nothing.
    fn init_results(&self) -> serde_json::Map<String, Value> {
        serde_json::Map::new()
    }
    /// Calls `tool` on the server `server` itself, past the priority order (the Session
    /// Proxy's `__reserved__server_tool`): `Ok(None)` when that server has no such tool. The
    /// default has no per-server routing.
    fn call_server<'a>(
        &'a mut self,
        server: &'a str,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFut<'a, Result<Option<String>, String>> {
        let _ = (tool, args);
        Box::pin(async move {
            Err(format!(
                "this backend cannot call a tool of server `{server}` directly"
            ))
        })
    }
    /// Ends the session (best effort).
    fn close(self: Box<Self>) -> BoxFut<'static, ()>;
}

/// A source of remote task sessions (e.g. a `tb mcp-start` server).
pub trait RemoteTools: Send + Sync {
    /// Opens a fresh session for the task `task_uid`.
    fn open<'a>(&'a self, task_uid: &'a str) -> BoxFut<'a, Result<Box<dyn RemoteSession>, String>>;
    /// Opens a fresh session for `task`; `Ok(None)` runs the attempt in process instead
    /// (e.g. an external-servers backend for a task whose servers are all native). The
    /// default opens [`RemoteTools::open`] by uid.
    fn open_task<'a>(
        &'a self,
        task: &'a tb_core::Task,
    ) -> BoxFut<'a, Result<Option<Box<dyn RemoteSession>>, String>> {
        Box::pin(async move { self.open(&task.uid).await.map(Some) })
    }
    /// Opens a session the Session Proxy way (`session_create`): raw per-server init
    /// configs in priority order, `session_id` the caller's id (given to servers whose reserved
    /// tools declare it). `Ok(None)` opens it in process instead; the default always does.
    fn open_configs<'a>(
        &'a self,
        session_id: &'a str,
        configs: &'a [(String, Value)],
    ) -> BoxFut<'a, Result<Option<Box<dyn RemoteSession>>, String>> {
        let _ = (session_id, configs);
        Box::pin(std::future::ready(Ok(None)))
    }
    /// Starts what sessions of `tasks` will need ahead of demand (external servers'
    /// `--server-pool`); the default does nothing.
    fn warm(&self, tasks: &[tb_core::Task]) {
        let _ = tasks;
    }
    /// Where the sessions come from (for logs and provenance).
    fn describe(&self) -> String {
        "remote tools".into()
    }
}

impl std::fmt::Debug for dyn RemoteTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RemoteTools")
            .field(&self.describe())
            .finish()
    }
}

/// The session an episode's tools run in: in process (a [`TaskSession`]: its effects are the
/// sandbox's diffs, graded by the in-process judge), or a remote backend's (e.g. a task's
/// external tool servers: its tools are theirs, its verdicts come from their effects, and
/// closing it tears them down). `tb infer`, `tb openenv` and `tb tui` all play on one.
pub enum EpisodeSession {
    /// In process.
    Native(TaskSession),
    /// On a remote backend.
    Remote(Box<dyn RemoteSession>),
}

impl std::fmt::Debug for EpisodeSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EpisodeSession::Native(_) => f.write_str("EpisodeSession::Native"),
            EpisodeSession::Remote(_) => f.write_str("EpisodeSession::Remote"),
        }
    }
}

impl EpisodeSession {
    /// The tool list, MCP-shaped.
    pub fn tool_list(&self) -> Vec<Value> {
        match self {
            EpisodeSession::Native(s) => s.tool_list(),
            EpisodeSession::Remote(r) => r.tool_list(),
        }
    }

    /// What the episode loop calls tools on.
    pub fn tools(&mut self) -> &mut dyn ToolBackend {
        match self {
            EpisodeSession::Native(s) => s,
            EpisodeSession::Remote(r) => r.as_mut(),
        }
    }

    /// The in-process session, if it is one.
    pub fn native(&self) -> Option<&TaskSession> {
        match self {
            EpisodeSession::Native(s) => Some(s),
            EpisodeSession::Remote(_) => None,
        }
    }

    /// Whether a remote backend serves the session.
    pub fn is_remote(&self) -> bool {
        matches!(self, EpisodeSession::Remote(_))
    }

    /// A remote session's state verdicts (its servers' effects: hashes and diff); `None` for
    /// an in-process session (its effects are computed from its state).
    pub async fn remote_verdicts(&mut self) -> Option<Result<Vec<StateVerdict>, String>> {
        match self {
            EpisodeSession::Native(_) => None,
            EpisodeSession::Remote(r) => Some(r.verdicts().await),
        }
    }

    /// Ends the session: a remote one is closed (its servers torn down and reaped); an
    /// in-process one is dropped.
    pub async fn close(self) {
        if let EpisodeSession::Remote(r) = self {
            r.close().await;
        }
    }
}
