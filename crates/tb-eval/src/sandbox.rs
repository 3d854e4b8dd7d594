//! The sandbox of a data root: every domain with its initial data loaded once, and fresh
//! per-task sessions (one per server the task's scenario initialises).

use serde_json::Value;
use std::path::Path;
use std::sync::Arc;
use tb_core::Task;
use tb_sandbox::{CallOutcome, Clock, DomainError, Loaded, Session, StateError};

/// Errors opening sessions.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// A domain could not be built or its initial data loaded.
    #[error(transparent)]
    Domain(#[from] DomainError),
    /// A task names a server we do not have.
    #[error("task {task}: unknown server `{server}` (known: {known})")]
    UnknownServer {
        /// Task uid.
        task: String,
        /// Server.
        server: String,
        /// Known servers.
        known: String,
    },
    /// The task's data patch did not apply.
    #[error("task {task}: {source}")]
    Init {
        /// Task uid.
        task: String,
        /// What failed.
        source: StateError,
    },
}

/// Loaded domains of one data root.
#[derive(Debug, Clone)]
pub struct Sandbox {
    domains: Vec<Loaded>,
}

impl Sandbox {
    /// Loads every domain's initial data from `<data_root>/servers/...`.
    pub fn load(data_root: &Path) -> Result<Self, SandboxError> {
        let toolslib = tb_domains::toolslib(data_root);
        let domains = tb_domains::all()?.iter().map(|d| d.load(&toolslib)).collect::<Result<Vec<_>, _>>()?;
        Ok(Sandbox { domains })
    }

    /// A loaded domain by server name.
    pub fn domain(&self, server: &str) -> Option<&Loaded> {
        self.domains.iter().find(|d| d.domain.name == server)
    }

    /// A fresh session for a task: each server of its `world_state`, patched.
    pub fn session(&self, task: &Task, clock: Clock) -> Result<TaskSession, SandboxError> {
        let mut servers = Vec::new();
        for (server, config) in &task.world_state {
            let loaded = self.domain(server).ok_or_else(|| SandboxError::UnknownServer {
                task: task.uid.clone(),
                server: server.clone(),
                known: self.domains.iter().map(|d| d.domain.name.as_str()).collect::<Vec<_>>().join(", "),
            })?;
            let session = loaded
                .session(config, clock)
                .map_err(|source| SandboxError::Init { task: task.uid.clone(), source })?;
            servers.push(session);
        }
        Ok(TaskSession { servers })
    }
}

/// The sessions of one attempt, one per server.
#[derive(Debug, Clone)]
pub struct TaskSession {
    /// Sessions in world_state order.
    pub servers: Vec<Session>,
}

impl TaskSession {
    /// Calls a tool. When several servers export the name, the later one wins (as the
    /// reference's scenario tool merge).
    pub fn call(&mut self, tool: &str, args: &Value) -> CallOutcome {
        match self.servers.iter_mut().rev().find(|s| s.domain.tool(tool).is_some()) {
            Some(s) => s.call(tool, args),
            None => CallOutcome::UnknownTool(tool.to_string()),
        }
    }

    /// The tool list (MCP shape) of every server, later servers overriding earlier names.
    pub fn tool_list(&self) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        for s in &self.servers {
            for t in s.domain.tool_list() {
                out.retain(|x| x["name"] != t["name"]);
                out.push(t);
            }
        }
        out
    }

    /// Server names.
    pub fn server_names(&self) -> Vec<String> {
        self.servers.iter().map(|s| s.domain.name.clone()).collect()
    }

    /// The server session of a name.
    pub fn server(&self, name: &str) -> Option<&Session> {
        self.servers.iter().find(|s| s.domain.name == name)
    }

    /// Shared handle of the sessions' domains (for listing).
    pub fn domains(&self) -> Vec<Arc<tb_sandbox::Domain>> {
        self.servers.iter().map(|s| s.domain.clone()).collect()
    }
}
