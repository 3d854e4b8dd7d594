//! What an episode plays on: [`ToolBackend`] (its tools), [`EpisodeSession`] (the tools, then
//! what grading needs: the in-process [`TaskSession`], or a remote backend's session), and
//! [`RemoteTools`] (where remote sessions come from: a `tb mcp-start` server, implemented in
//! `tb-mcp`, or external tool servers, in `tb-external`).

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

/// The session an episode plays on, whatever holds it: one attempt's tools, then what grading
/// needs. In process it is a [`TaskSession`] ([`EpisodeSession::in_process`]: its state is
/// graded by the in-process judge and shown as diffs); on a remote backend (a task's external
/// tool servers, a `tb mcp-start` server) its tools are the backend's, its verdicts come from the
/// servers' effects, and closing it tears them down. `tb infer`, `tb openenv`, `tb tui` and
/// `tb mcp-start`'s sessions all hold one.
pub trait EpisodeSession: ToolBackend {
    /// The in-process session, when this is one; `None` on a remote backend.
    fn in_process(&self) -> Option<&TaskSession> {
        None
    }
    /// [`EpisodeSession::in_process`], mutable.
    fn in_process_mut(&mut self) -> Option<&mut TaskSession> {
        None
    }
    /// A remote session's state verdicts (one per server), as the in-process judge gives them;
    /// `None` in process, where the judge computes them from the session's state.
    fn verdicts(&mut self) -> Option<BoxFut<'_, Result<Vec<StateVerdict>, String>>>;
    /// Per server in priority order, its effects object as a reference server's
    /// `__reserved__geteffects` gives it (what the Session Proxy's `get_effects` returns). The
    /// default shapes [`EpisodeSession::verdicts`] so (hashes and diff only).
    fn server_effects(&mut self) -> BoxFut<'_, Result<Vec<(String, Value)>, String>> {
        let Some(verdicts) = self.verdicts() else {
            return Box::pin(std::future::ready(Err(
                "an in-process session's effects are computed from its state".to_string(),
            )));
        };
        Box::pin(async move {
            Ok(verdicts
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
    /// Ends the session (best effort): a remote one's servers are torn down and reaped.
    fn close(self: Box<Self>) -> BoxFut<'static, ()>;
}

impl EpisodeSession for TaskSession {
    fn in_process(&self) -> Option<&TaskSession> {
        Some(self)
    }
    fn in_process_mut(&mut self) -> Option<&mut TaskSession> {
        Some(self)
    }
    fn verdicts(&mut self) -> Option<BoxFut<'_, Result<Vec<StateVerdict>, String>>> {
        None
    }
    fn close(self: Box<Self>) -> BoxFut<'static, ()> {
        Box::pin(std::future::ready(()))
    }
}

impl std::fmt::Debug for dyn EpisodeSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.in_process().is_some() {
            "EpisodeSession(in process)"
        } else {
            "EpisodeSession(remote)"
        })
    }
}

/// A source of remote task sessions (e.g. a `tb mcp-start` server).
pub trait RemoteTools: Send + Sync {
    /// Opens a fresh session for the task `task_uid`.
    fn open<'a>(&'a self, task_uid: &'a str)
    -> BoxFut<'a, Result<Box<dyn EpisodeSession>, String>>;
    /// Opens a fresh session for `task`; `Ok(None)` runs the attempt in process instead
    /// (e.g. an external-servers backend for a task whose servers are all native). The
    /// default opens [`RemoteTools::open`] by uid.
    fn open_task<'a>(
        &'a self,
        task: &'a tb_core::Task,
    ) -> BoxFut<'a, Result<Option<Box<dyn EpisodeSession>>, String>> {
        Box::pin(async move { self.open(&task.uid).await.map(Some) })
    }
    /// Opens a session the Session Proxy way (`session_create`): raw per-server init
    /// configs in priority order, `session_id` the caller's id (given to servers whose reserved
    /// tools declare it). `Ok(None)` opens it in process instead; the default always does.
    fn open_configs<'a>(
        &'a self,
        session_id: &'a str,
        configs: &'a [(String, Value)],
    ) -> BoxFut<'a, Result<Option<Box<dyn EpisodeSession>>, String>> {
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
