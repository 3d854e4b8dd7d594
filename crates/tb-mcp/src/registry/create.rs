//! Opening sessions: for a task (admin surface, `tb mcp-stdio`) or the reference Session Proxy
//! way (`session_create`), each on the registry's remote backend when it has one and takes the
//! session, else in process.

use super::slot::{Origin, ProxyOptions, Slot, ToolSet};
use super::{Registry, lock};
use crate::error::SessionError;
use serde_json::{Map, Value, json};
use std::collections::HashSet;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tb_core::Task;
use tb_eval::root::{PreparedTask, TaskSession};
use tb_eval::tools::EpisodeSession;

/// A task loaded once for its in-process sessions.
pub(super) struct TaskEntry {
    task: Arc<Task>,
    tools: Arc<ToolSet>,
    /// The task made ready for sessions (its data patches validated once, on the registry's
    /// clock): every session of the task opens from it.
    prepared: PreparedTask,
}

impl Registry {
    /// Opens a fresh session for a task (`file.py:function`), with a new random id: on the
    /// remote backend when the registry has one and it takes the task (see
    /// [`Registry::with_remote`]), else in process (on the blocking pool). A remote session
    /// shows the tools its backend lists under the scenario's grant, as an in-process one.
    pub async fn create_for_task(
        self: &Arc<Self>,
        task_id: &str,
    ) -> Result<Arc<Slot>, SessionError> {
        crate::input::check_task_id(task_id).map_err(|message| SessionError::Task {
            task: crate::input::shown(task_id),
            message,
        })?;
        self.check_capacity()?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        if let Some(remote) = self.remote.clone() {
            let uid = task_id.to_string();
            let (task, scenario_tools) = self
                .blocking("loading the task", move |reg| reg.load_task(&uid))
                .await?;
            match remote.open_task(&task).await {
                Ok(Some(session)) => {
                    let list = match granted(task_id, &task, &scenario_tools, session.tool_list()) {
                        Ok(l) => l,
                        Err(e) => {
                            session.close().await;
                            return Err(e);
                        }
                    };
                    let slot = self.install(
                        id,
                        Origin::Task(Arc::new(task)),
                        Arc::new(ToolSet::new(list)),
                        session,
                        None,
                    )?;
                    tracing::info!(session = %slot.id, task = task_id, backend = %remote.describe(), "remote session created");
                    return Ok(slot);
                }
                Ok(None) => {}
                Err(message) => return Err(SessionError::Init(message)),
            }
        }
        let uid = task_id.to_string();
        let slot = self
            .blocking("creating the session", move |reg| {
                let entry = reg.task_entry(&uid)?;
                let session = reg
                    .sandbox
                    .session_prepared(&entry.prepared)
                    .map_err(|e| SessionError::Init(e.to_string()))?;
                reg.install(
                    id,
                    Origin::Task(entry.task.clone()),
                    entry.tools.clone(),
                    Box::new(session),
                    None,
                )
            })
            .await?;
        tracing::info!(session = %slot.id, task = task_id, "session created");
        Ok(slot)
    }

    /// Opens a session the reference Session Proxy way: per-server init configs, the visible
    /// tool names (each must exist), a caller-chosen id, calls bounded by `timeout` too when
    /// given. Returns the slot and the `init_result`.
    ///
    /// On the remote backend first when the registry has one (see [`Registry::with_remote`]):
    /// a session some of whose servers run there (external tool servers from
    /// `tb mcp-start --servers`) is served by it: its servers are started and given their
    /// configs' `__reserved__init`, `init_result` is what those returned, its effects are each
    /// server's own, and it is torn down when the session ends. Otherwise in process (on the
    /// blocking pool), where `init_result` is `{server: {}}` (our servers' init returns nothing
    /// beyond `status`).
    pub async fn create_for_proxy(
        self: &Arc<Self>,
        id: &str,
        options: ProxyOptions,
        available_tools: Vec<String>,
        timeout: Option<Duration>,
    ) -> Result<(Arc<Slot>, Map<String, Value>), SessionError> {
        crate::input::check_session_id(id).map_err(SessionError::BadRequest)?;
        if self.sessions.read().is_ok_and(|s| s.contains_key(id)) {
            return Err(SessionError::Duplicate(id.to_string()));
        }
        self.check_capacity()?;
        let init_result = |inits: &Map<String, Value>, options: &ProxyOptions| {
            options
                .configs
                .iter()
                .map(|(s, _)| {
                    let init = inits.get(s).cloned().unwrap_or_else(|| json!({}));
                    (s.clone(), init)
                })
                .collect::<Map<String, Value>>()
        };
        if let Some(remote) = self.remote.clone() {
            match remote.open_configs(id, &options.configs).await {
                Ok(Some(session)) => {
                    let list = match visible(session.tool_list(), &available_tools) {
                        Ok(l) => l,
                        Err(e) => {
                            session.close().await;
                            return Err(e);
                        }
                    };
                    let init_result = init_result(&session.init_results(), &options);
                    let slot = self.install(
                        id.to_string(),
                        Origin::Proxy(options),
                        Arc::new(ToolSet::new(list)),
                        session,
                        timeout,
                    )?;
                    tracing::info!(session = %slot.id, backend = %remote.describe(), "remote proxy session created");
                    return Ok((slot, init_result));
                }
                Ok(None) => {}
                Err(message) => return Err(SessionError::Init(message)),
            }
        }
        let id = id.to_string();
        let (slot, init_result) = self
            .blocking("session_create", move |reg| {
                let session = reg.proxy_session(&options.configs)?;
                let list = visible(session.tool_list(), &available_tools)?;
                let init_result = init_result(&Map::new(), &options);
                let slot = reg.install(
                    id,
                    Origin::Proxy(options),
                    Arc::new(ToolSet::new(list)),
                    Box::new(session),
                    timeout,
                )?;
                Ok((slot, init_result))
            })
            .await?;
        tracing::info!(session = %slot.id, "proxy session created");
        Ok((slot, init_result))
    }

    /// Runs `f` on the blocking pool (loading a task or opening its state may take a while);
    /// a crash of it is an internal error naming `what`.
    async fn blocking<T: Send + 'static>(
        self: &Arc<Self>,
        what: &'static str,
        f: impl FnOnce(&Registry) -> Result<T, SessionError> + Send + 'static,
    ) -> Result<T, SessionError> {
        let reg = self.clone();
        tokio::task::spawn_blocking(move || f(&reg))
            .await
            .unwrap_or_else(|e| Err(SessionError::Internal(format!("{what} crashed: {e}"))))
    }

    /// Registers `session` under `id`, showing `tools`, its calls bounded by `timeout` too when
    /// given. When the id is taken or the registry full meanwhile, the session never served: it
    /// is closed and the error returned.
    pub(super) fn install(
        &self,
        id: String,
        origin: Origin,
        tools: Arc<ToolSet>,
        session: Box<dyn EpisodeSession>,
        timeout: Option<Duration>,
    ) -> Result<Arc<Slot>, SessionError> {
        let mut call_timeout = self.limits.call_timeout;
        if let Some(t) = timeout.filter(|t| !t.is_zero()) {
            call_timeout = call_timeout.min(t);
        }
        let slot = Arc::new(Slot {
            id,
            origin,
            tools,
            initial: session.in_process().cloned(),
            live: Arc::new(tokio::sync::Mutex::new(Some(session))),
            call_log: Mutex::new(Vec::new()),
            call_timeout,
            last_used_ms: AtomicU64::new(self.now_ms()),
            info: Mutex::new(Map::new()),
        });
        if let Err(e) = self.insert(&slot) {
            self.retire(slot);
            return Err(e);
        }
        Ok(slot)
    }

    fn task_entry(&self, id: &str) -> Result<Arc<TaskEntry>, SessionError> {
        if let Some(e) = lock(&self.tasks).get(id) {
            return Ok(e.clone());
        }
        // The scenario's `tools` list, when it has one, selects what the agent sees; the schemas
        // are the servers' own, exactly as in-process.
        let (task, scenario_tools) = self.load_task(id)?;
        let prepared = self
            .sandbox
            .prepare(&task, self.clock)
            .map_err(|e| SessionError::Init(e.to_string()))?;
        let probe = self
            .sandbox
            .session_prepared(&prepared)
            .map_err(|e| SessionError::Init(e.to_string()))?;
        let list = granted(id, &task, &scenario_tools, probe.tool_list())?;
        let entry = Arc::new(TaskEntry {
            task: Arc::new(task),
            tools: Arc::new(ToolSet::new(list)),
            prepared,
        });
        lock(&self.tasks).insert(id.to_string(), entry.clone());
        Ok(entry)
    }

    /// A task and its scenario's tool names, uncached.
    fn load_task(&self, id: &str) -> Result<(Task, Vec<String>), SessionError> {
        let task = self.dataset.load_task(id).map_err(|e| SessionError::Task {
            task: id.to_string(),
            message: e.to_string(),
        })?;
        let scenario_tools = self
            .dataset
            .scenario(&task.scenario)
            .map(|s| s.tools.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default();
        Ok((task, scenario_tools))
    }

    fn known_servers(&self) -> &str {
        self.known_servers.get_or_init(|| {
            tb_domains::SERVERS
                .iter()
                .filter(|n| self.sandbox.domain(n).is_some())
                .copied()
                .collect::<Vec<_>>()
                .join(", ")
        })
    }

    /// An in-process session of per-server init configs (a proxy session, or its golden twin).
    pub(super) fn proxy_session(
        &self,
        configs: &[(String, Value)],
    ) -> Result<TaskSession, SessionError> {
        let mut servers = Vec::new();
        for (server, config) in configs {
            let loaded =
                self.sandbox
                    .domain(server)
                    .ok_or_else(|| SessionError::UnknownServer {
                        server: server.clone(),
                        known: self.known_servers().to_string(),
                    })?;
            let s = loaded
                .session(config, self.clock)
                .map_err(|e| SessionError::Init(format!("Error calling {server} init: {e}")))?;
            servers.push(s);
        }
        Ok(TaskSession {
            servers,
            own: Vec::new(),
        })
    }
}

/// The tools of `list` the task's scenario grants (all of them when the scenario lists none);
/// a granted tool no server exports is an error.
fn granted(
    id: &str,
    task: &Task,
    scenario_tools: &[String],
    mut list: Vec<Value>,
) -> Result<Vec<Value>, SessionError> {
    if scenario_tools.is_empty() {
        return Ok(list);
    }
    let wanted: HashSet<&str> = scenario_tools.iter().map(String::as_str).collect();
    let exported: HashSet<&str> = list.iter().filter_map(|t| t["name"].as_str()).collect();
    if let Some(missing) = scenario_tools
        .iter()
        .find(|n| !exported.contains(n.as_str()))
    {
        return Err(SessionError::Task {
            task: id.to_string(),
            message: format!(
                "scenario `{}` lists tool `{missing}`, which none of its servers exports",
                task.scenario
            ),
        });
    }
    list.retain(|t| t["name"].as_str().is_some_and(|n| wanted.contains(n)));
    Ok(list)
}

/// The tools of `list` named in `available` (a proxy session's `available_tools`); a name no
/// tool of `list` has is an error.
fn visible(list: Vec<Value>, available: &[String]) -> Result<Vec<Value>, SessionError> {
    if let Some(missing) = available
        .iter()
        .find(|n| !list.iter().any(|t| t["name"] == n.as_str()))
    {
        return Err(SessionError::UnknownTool(missing.clone()));
    }
    let wanted: HashSet<&str> = available.iter().map(String::as_str).collect();
    Ok(list
        .into_iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| wanted.contains(n)))
        .collect())
}
