//! The sandbox of a data root: every domain with its initial data loaded once, and fresh
//! per-task sessions (one per server the task's scenario initialises).

use crate::episode::PreparedTools;
use serde_json::Value;
use std::path::Path;
use std::sync::{Arc, Mutex};
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
    #[error("task {task}: its data patch did not apply")]
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
    /// The agent tools of in-process sessions, built once per (agent config, scenario,
    /// domains): a session's tool list depends only on its domains.
    agent_tools: Arc<Mutex<Vec<ToolsEntry>>>,
}

/// One entry of [`Sandbox`]'s agent-tools cache. It holds its keys, so their pointers
/// stay theirs.
#[derive(Debug)]
struct ToolsEntry {
    agent: Option<Arc<tb_dataset::AgentConfig>>,
    scenario: Option<Arc<tb_dataset::Scenario>>,
    domains: Vec<Arc<tb_sandbox::Domain>>,
    tools: Arc<PreparedTools>,
}

fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

impl Sandbox {
    /// Loads every domain's initial data from `<data_root>/servers/...`.
    pub fn load(data_root: &Path) -> Result<Self, SandboxError> {
        Self::load_domains(data_root, tb_domains::all()?)
    }

    /// [`Sandbox::load`] with the domains of a tool surface (see [`crate::surface`]).
    pub fn load_with(
        data_root: &Path,
        surface: &crate::surface::Surface,
    ) -> Result<Self, SandboxError> {
        let domains = surface.domains().map_err(|e| {
            SandboxError::Domain(DomainError::Tools {
                domain: "surface".into(),
                message: e.to_string(),
            })
        })?;
        Self::load_domains(data_root, &domains)
    }

    fn load_domains(
        data_root: &Path,
        domains: &[Arc<tb_sandbox::Domain>],
    ) -> Result<Self, SandboxError> {
        let toolslib = tb_domains::toolslib(data_root);
        let domains = domains
            .iter()
            .map(|d| d.load(&toolslib))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Sandbox {
            domains,
            agent_tools: Arc::default(),
        })
    }

    /// A loaded domain by server name.
    pub fn domain(&self, server: &str) -> Option<&Loaded> {
        self.domains.iter().find(|d| d.domain.name == server)
    }

    /// A fresh session for a task: each server of its `world_state`, patched.
    pub fn session(&self, task: &Task, clock: Clock) -> Result<TaskSession, SandboxError> {
        let mut servers = Vec::new();
        for (server, config) in &task.world_state {
            let loaded = self
                .domain(server)
                .ok_or_else(|| SandboxError::UnknownServer {
                    task: task.uid.clone(),
                    server: server.clone(),
                    known: self
                        .domains
                        .iter()
                        .map(|d| d.domain.name.as_str())
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            let session = loaded
                .session(config, clock)
                .map_err(|source| SandboxError::Init {
                    task: task.uid.clone(),
                    source,
                })?;
            servers.push(session);
        }
        Ok(TaskSession { servers })
    }
}

impl Sandbox {
    /// The agent's tools for a session of this sandbox: the agent config's builtins, then
    /// the scenario's tools the session provides ([`crate::episode::AgentTools::build`]),
    /// built on the first call for the same agent config, scenario and domains.
    pub(crate) fn agent_tools(
        &self,
        agent: Option<&Arc<tb_dataset::AgentConfig>>,
        scenario: Option<&Arc<tb_dataset::Scenario>>,
        session: &TaskSession,
    ) -> Arc<PreparedTools> {
        let hit = |e: &ToolsEntry| {
            same(e.agent.as_ref(), agent)
                && same(e.scenario.as_ref(), scenario)
                && e.domains.len() == session.servers.len()
                && e.domains
                    .iter()
                    .zip(&session.servers)
                    .all(|(d, s)| Arc::ptr_eq(d, &s.domain))
        };
        let mut cache = self.agent_tools.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = cache.iter().find(|e| hit(e)) {
            return e.tools.clone();
        }
        let tools = Arc::new(PreparedTools::build(
            agent.map_or(&[][..], |a| &a.builtin_tools),
            scenario.map_or(&[][..], |s| &s.tools),
            &session.tool_list(),
        ));
        // Entries are few (agent configs x scenarios x domain sets, each an `Arc` the dataset
        // hands out once); a caller minting new `Arc`s per attempt would only grow it, so it
        // is bounded.
        if cache.len() >= 1024 {
            cache.clear();
        }
        cache.push(ToolsEntry {
            agent: agent.cloned(),
            scenario: scenario.cloned(),
            domains: session.domains(),
            tools: tools.clone(),
        });
        tools
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
        match self
            .servers
            .iter_mut()
            .rev()
            .find(|s| s.domain.tool(tool).is_some())
        {
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
