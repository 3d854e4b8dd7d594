//! A loaded data root ([`LoadedRoot`]): every domain, its initial data loaded once on first use,
//! the other servers' bases, the test sources read, and fresh per-task sessions
//! ([`TaskSession`]: one per server the task's scenario initialises).

use crate::episode::PreparedTools;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use tb_core::Task;
use tb_sandbox::{CallOutcome, Clock, DomainError, Loaded, Session, StateError};

/// Errors opening sessions.
#[derive(Debug, thiserror::Error)]
pub enum RootError {
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
    /// A native non-table server could not start (its data or init config).
    #[error("task {task}: {message}")]
    Own {
        /// Task uid.
        task: String,
        /// What failed.
        message: String,
    },
    /// A domain's initial data could not be loaded (on first use).
    #[error("domain {domain}: loading its initial data: {message}")]
    Load {
        /// Domain.
        domain: String,
        /// What failed.
        message: String,
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

/// A domain whose initial data is loaded on first use (start-up of a command that needs one
/// task, or none, does not pay for every domain). Clones share the loaded data.
#[derive(Debug, Clone)]
struct LazyDomain {
    domain: Arc<tb_sandbox::Domain>,
    toolslib: Arc<PathBuf>,
    loaded: Arc<OnceLock<Result<Loaded, String>>>,
}

impl LazyDomain {
    fn get(&self) -> Result<&Loaded, RootError> {
        self.loaded
            .get_or_init(|| self.domain.load(&self.toolslib).map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|message| RootError::Load {
                domain: self.domain.name.clone(),
                message: message.clone(),
            })
    }
}

/// A loaded data root: its domains (each domain's initial data loaded when a session first
/// needs it; [`LoadedRoot::preload`] loads them all), the other servers' bases, the test sources
/// read so far and the agent tool sets built per agent config. It opens [`TaskSession`]s.
#[derive(Debug, Clone)]
pub struct LoadedRoot {
    domains: Vec<LazyDomain>,
    /// Servers that are not table domains (the airline), their base states loaded on first use.
    own: Arc<tb_domains::own_servers::OwnServers>,
    /// Test files read so far (path -> source), for the test-body evaluator.
    test_sources: Arc<Mutex<std::collections::HashMap<std::path::PathBuf, Arc<str>>>>,
    /// The data root.
    data_root: std::path::PathBuf,
    /// The agent tools of in-process sessions, built once per (agent config, scenario,
    /// domains): a session's tool list depends only on its domains.
    agent_tools: Arc<Mutex<Vec<ToolsEntry>>>,
}

/// One entry of [`LoadedRoot`]'s agent-tools cache. It holds its keys, so their pointers
/// stay theirs.
#[derive(Debug)]
struct ToolsEntry {
    agent: Option<Arc<tb_dataset::AgentConfig>>,
    scenario: Option<Arc<tb_dataset::Scenario>>,
    domains: Vec<Arc<tb_sandbox::Domain>>,
    own: Vec<String>,
    tools: Arc<PreparedTools>,
}

fn same<T>(a: Option<&Arc<T>>, b: Option<&Arc<T>>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => Arc::ptr_eq(a, b),
        (None, None) => true,
        _ => false,
    }
}

impl LoadedRoot {
    /// Every domain of `<data_root>/servers/...`; each domain's initial data is loaded on
    /// first use ([`LoadedRoot::preload`] to load all now).
    pub fn load(data_root: &Path) -> Result<Self, RootError> {
        Self::load_domains(data_root, tb_domains::all()?)
    }

    /// [`LoadedRoot::load`] with the domains of a tool surface (see [`crate::surface`]).
    pub fn load_with(
        data_root: &Path,
        surface: &crate::surface::Surface,
    ) -> Result<Self, RootError> {
        let domains = surface.domains().map_err(|e| {
            RootError::Domain(DomainError::Tools {
                domain: "surface".into(),
                message: e.to_string(),
            })
        })?;
        Self::load_domains(data_root, &domains)
    }

    fn load_domains(
        data_root: &Path,
        domains: &[Arc<tb_sandbox::Domain>],
    ) -> Result<Self, RootError> {
        let toolslib = Arc::new(tb_domains::toolslib(data_root));
        let domains = domains
            .iter()
            .map(|d| LazyDomain {
                domain: d.clone(),
                toolslib: toolslib.clone(),
                loaded: Arc::default(),
            })
            .collect();
        Ok(LoadedRoot {
            domains,
            own: Arc::new(tb_domains::own_servers::OwnServers::new(data_root)),
            test_sources: Arc::default(),
            data_root: data_root.to_path_buf(),
            agent_tools: Arc::default(),
        })
    }

    /// A loaded domain by server name.
    pub fn domain(&self, server: &str) -> Option<&Loaded> {
        match self.try_domain(server) {
            Ok(d) => d,
            Err(e) => {
                tracing::error!("{e}");
                None
            }
        }
    }

    /// [`LoadedRoot::domain`], with the error of a domain whose data does not load.
    pub fn try_domain(&self, server: &str) -> Result<Option<&Loaded>, RootError> {
        self.domains
            .iter()
            .find(|d| d.domain.name == server)
            .map(LazyDomain::get)
            .transpose()
    }

    /// Whether a domain of this name exists (without loading its data).
    pub fn has_domain(&self, server: &str) -> bool {
        self.domains.iter().any(|d| d.domain.name == server)
    }

    /// Loads every domain's initial data now (what [`LoadedRoot::load`] defers).
    pub fn preload(&self) -> Result<(), RootError> {
        for d in &self.domains {
            d.get()?;
        }
        Ok(())
    }

    /// A fresh session for a task: each server of its `world_state`, patched.
    pub fn session(&self, task: &Task, clock: Clock) -> Result<TaskSession, RootError> {
        let mut servers = Vec::new();
        let mut own = Vec::new();
        for (server, config) in &task.world_state {
            if self.domain(server).is_none() && tb_domains::own_servers::is_own(server) {
                let s = self
                    .own
                    .open(server, config, &task.uid, clock)
                    .map_err(|message| RootError::Own {
                        task: task.uid.clone(),
                        message,
                    })?;
                own.push(s);
                continue;
            }
            let loaded = self
                .try_domain(server)?
                .ok_or_else(|| self.unknown_server(task, server))?;
            let session = loaded
                .session(config, clock)
                .map_err(|source| RootError::Init {
                    task: task.uid.clone(),
                    source,
                })?;
            servers.push(session);
        }
        Ok(TaskSession { servers, own })
    }

    /// A task made ready for sessions once (at load): each table server's config prepared
    /// ([`Loaded::prepare`]: its data patch validated once, the rows shared by the sessions
    /// opened from it), on `clock`. The domains are loaded now. Unknown servers fail here; a
    /// data patch that does not apply fails each [`LoadedRoot::session_prepared`] as
    /// [`LoadedRoot::session`] fails.
    pub fn prepare(&self, task: &Task, clock: Clock) -> Result<PreparedTask, RootError> {
        let mut parts = Vec::with_capacity(task.world_state.len());
        for (server, config) in &task.world_state {
            if self.domain(server).is_none() && tb_domains::own_servers::is_own(server) {
                parts.push(PreparedPart::Own {
                    server: server.clone(),
                    config: config.clone(),
                });
                continue;
            }
            let loaded = self
                .try_domain(server)?
                .ok_or_else(|| self.unknown_server(task, server))?;
            parts.push(PreparedPart::Table(loaded.prepare(config, clock)));
        }
        Ok(PreparedTask {
            uid: task.uid.clone(),
            clock,
            parts,
        })
    }

    /// A fresh session of a prepared task: the same servers, states and errors as
    /// [`LoadedRoot::session`] on the task and the prepared clock, each table server's state built
    /// from the prepared rows ([`tb_sandbox::Prepared::session`]: no row validated again,
    /// nothing from an earlier session).
    pub fn session_prepared(&self, task: &PreparedTask) -> Result<TaskSession, RootError> {
        let mut servers = Vec::new();
        let mut own = Vec::new();
        for part in &task.parts {
            match part {
                PreparedPart::Table(p) => {
                    servers.push(p.session().map_err(|source| RootError::Init {
                        task: task.uid.clone(),
                        source,
                    })?);
                }
                PreparedPart::Own { server, config } => own.push(
                    self.own
                        .open(server, config, &task.uid, task.clock)
                        .map_err(|message| RootError::Own {
                            task: task.uid.clone(),
                            message,
                        })?,
                ),
            }
        }
        Ok(TaskSession { servers, own })
    }

    fn unknown_server(&self, task: &Task, server: &str) -> RootError {
        RootError::UnknownServer {
            task: task.uid.clone(),
            server: server.to_string(),
            known: self
                .domains
                .iter()
                .map(|d| d.domain.name.as_str())
                .chain(tb_domains::own_servers::SERVERS.iter().copied())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// Whether this sandbox serves `server` (a table domain or an own server).
    pub fn serves(&self, server: &str) -> bool {
        self.domain(server).is_some() || tb_domains::own_servers::is_own(server)
    }

    /// The data root.
    pub fn data_root(&self) -> &Path {
        &self.data_root
    }

    /// A task's test file source (read once per sandbox).
    pub fn test_source(&self, task: &Task) -> Result<(std::path::PathBuf, Arc<str>), String> {
        let path = crate::pybody::test_file_path(&self.data_root, task);
        let mut cache = self
            .test_sources
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(s) = cache.get(&path) {
            return Ok((path, s.clone()));
        }
        let text: Arc<str> = std::fs::read_to_string(&path)
            .map_err(|e| format!("{}: cannot read the test file: {e}", path.display()))?
            .into();
        cache.insert(path.clone(), text.clone());
        Ok((path, text))
    }
}

impl LoadedRoot {
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
                && e.own.len() == session.own.len()
                && e.own.iter().zip(&session.own).all(|(n, s)| n == s.server())
        };
        let mut cache = self
            .agent_tools
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
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
            own: session.own.iter().map(|s| s.server().to_string()).collect(),
            tools: tools.clone(),
        });
        tools
    }
}

/// A task made ready for sessions by [`LoadedRoot::prepare`].
#[derive(Debug, Clone)]
pub struct PreparedTask {
    uid: String,
    clock: Clock,
    /// Per server of the task's `world_state`, in its order.
    parts: Vec<PreparedPart>,
}

#[derive(Debug, Clone)]
enum PreparedPart {
    Table(tb_sandbox::Prepared),
    /// A server that is not a table domain (opened from its config for each session).
    Own {
        server: String,
        config: Value,
    },
}

impl PreparedTask {
    /// The task uid.
    pub fn uid(&self) -> &str {
        &self.uid
    }
}

/// The sessions of one attempt, one per server.
#[derive(Debug, Clone)]
pub struct TaskSession {
    /// Sessions of the table domains, in world_state order.
    pub servers: Vec<Session>,
    /// Sessions of the other servers (the airline), in world_state order.
    pub own: Vec<Box<dyn tb_domains::own_servers::OwnServer>>,
}

impl TaskSession {
    /// Calls a tool. When several servers export the name, the later one wins (as the
    /// reference's scenario tool merge).
    pub fn call(&mut self, tool: &str, args: &Value) -> CallOutcome {
        if let Some(s) = self.own.iter_mut().rev().find(|s| s.has_tool(tool)) {
            return CallOutcome::Reply(s.call_tool(tool, args));
        }
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

    /// Calls a tool and gives the text the agent receives: an own server's exact text, or a
    /// table domain's result as [`CallOutcome::to_text`] shapes it.
    pub fn call_text(&mut self, tool: &str, args: &Value) -> String {
        self.call(tool, args).to_text(tool)
    }

    /// The tool list (MCP shape) of every server, later servers overriding earlier names.
    pub fn tool_list(&self) -> Vec<Value> {
        let mut out: Vec<Value> = Vec::new();
        let lists = self
            .servers
            .iter()
            .map(|s| s.domain.tool_list())
            .chain(self.own.iter().map(|s| s.tool_list()));
        for list in lists {
            for t in list {
                out.retain(|x| x["name"] != t["name"]);
                out.push(t);
            }
        }
        out
    }

    /// Server names.
    pub fn server_names(&self) -> Vec<String> {
        self.servers
            .iter()
            .map(|s| s.domain.name.clone())
            .chain(self.own.iter().map(|s| s.server().to_string()))
            .collect()
    }

    /// Whether a server of this session reports its own effects (its test bodies run in the
    /// evaluator: there is no golden state to compare).
    pub fn has_own_servers(&self) -> bool {
        !self.own.is_empty()
    }

    /// The effects a test body reads, for the own servers (`{server: effects}`).
    pub fn own_effects(&self) -> serde_json::Map<String, Value> {
        self.own
            .iter()
            .filter_map(|s| Some((s.server().to_string(), s.effects()?)))
            .collect()
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
