//! The session the app plays on, behind one interface: in process (a [`TaskSession`]: its
//! effects are the sandbox's diffs, it is graded by the judge `tb infer` uses), or remote (a
//! [`RemoteSession`] of `tb-eval`, e.g. the task's external tool servers from a servers.yaml
//! started through `tb-external`: its tools are the servers', its effects and verdicts come from
//! their `__reserved__geteffects`, and closing it tears the servers down and reaps them).

use serde_json::Value;
use tb_core::StateVerdict;
use tb_eval::sandbox::TaskSession;
use tb_eval::tools::{RemoteSession, ToolBackend};

/// A task's live session.
pub enum Session {
    /// In process.
    Native(TaskSession),
    /// On a remote backend (external tool servers).
    Remote(Box<dyn RemoteSession>),
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Session::Native(_) => f.write_str("Session::Native"),
            Session::Remote(_) => f.write_str("Session::Remote"),
        }
    }
}

impl Session {
    /// The tool list, MCP-shaped.
    pub fn tool_list(&self) -> Vec<Value> {
        match self {
            Session::Native(s) => s.tool_list(),
            Session::Remote(r) => r.tool_list(),
        }
    }

    /// What the episode loop calls tools on.
    pub fn backend(&mut self) -> &mut dyn ToolBackend {
        match self {
            Session::Native(s) => s,
            Session::Remote(r) => r.as_mut(),
        }
    }

    /// The in-process session, if it is one.
    pub fn native(&self) -> Option<&TaskSession> {
        match self {
            Session::Native(s) => Some(s),
            Session::Remote(_) => None,
        }
    }

    /// Whether a remote backend serves the session.
    pub fn is_remote(&self) -> bool {
        matches!(self, Session::Remote(_))
    }

    /// A remote session's state verdicts (its servers' effects: hashes and diff); `None` for
    /// an in-process session (its effects are computed from its state).
    pub async fn remote_verdicts(&mut self) -> Option<Result<Vec<StateVerdict>, String>> {
        match self {
            Session::Native(_) => None,
            Session::Remote(r) => Some(r.verdicts().await),
        }
    }

    /// Ends the session: a remote one's servers are torn down and their processes reaped.
    pub async fn close(self) {
        if let Session::Remote(r) = self {
            r.close().await;
        }
    }
}
