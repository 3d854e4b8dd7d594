//! The session registry: every open session's sandbox, its visible tools, and the limits
//! (maximum sessions, idle reaping, per-call timeout) that keep the server responsive.
//!
//! A session is one attempt's backend: a fresh [`TaskSession`] (copy-on-write over the loaded
//! base state, so opening one costs microseconds), the tools the agent may see, and what the
//! evaluator needs for effects. Sessions never share mutable state; each has its own lock, so
//! calls on different sessions run in parallel and calls on one session run one at a time.

use crate::error::SessionError;
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, Instant};
use tb_core::Task;
use tb_core::task::golden_calls_of as golden_calls;
use tb_dataset::Dataset;
use tb_eval::judge::StateJudge;
use tb_eval::sandbox::{Sandbox, TaskSession};
use tb_eval::tools::{RemoteSession, RemoteTools};
use tb_sandbox::diff::deep_diff;
use tb_sandbox::{CallOutcome, Clock};

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

/// A visible tool call that took longer than this once runs on the blocking pool from then on
/// (see [`Registry::call`]).
pub const INLINE_CALL_LIMIT: Duration = Duration::from_millis(1);

/// Where calls of a tool run (per [`ToolSet`], so per task): not yet seen (the first call runs on
/// the blocking pool, under the call timeout), seen fast (inline), or seen slow (blocking pool).
const UNSEEN: u8 = 0;
const INLINE: u8 = 1;
const OFFLOAD: u8 = 2;

/// The tools a session shows: MCP-shaped JSON (`name`, `description`, `inputSchema`), in the
/// order the in-process [`TaskSession::tool_list`] gives them.
#[derive(Debug)]
pub struct ToolSet {
    list: Vec<Value>,
    /// Visible names, each with where its calls run (`UNSEEN`, `INLINE`, `OFFLOAD`).
    names: HashMap<String, AtomicU8>,
}

impl ToolSet {
    fn new(list: Vec<Value>) -> Self {
        let names = list
            .iter()
            .filter_map(|t| {
                t["name"]
                    .as_str()
                    .map(|n| (n.to_string(), AtomicU8::new(UNSEEN)))
            })
            .collect();
        ToolSet { list, names }
    }

    /// The tools, MCP-shaped.
    pub fn list(&self) -> &[Value] {
        &self.list
    }

    /// Whether a tool is visible.
    pub fn contains(&self, name: &str) -> bool {
        self.names.contains_key(name)
    }
}

/// How a session was made.
#[derive(Debug)]
pub enum Origin {
    /// From a task id (admin surface, `tb mcp-stdio`).
    Task(Arc<Task>),
    /// From a reference Session Proxy `session_create` (raw per-server init configs).
    Proxy(ProxyOptions),
}

/// What a reference `session_create` asked for beyond the configs.
#[derive(Debug, Clone, Default)]
pub struct ProxyOptions {
    /// Server name -> init config (`__reserved__init`'s `config`), in priority order.
    pub configs: Vec<(String, Value)>,
    /// Wrap non-JSON results as `{"result": text}`.
    pub always_json_output: bool,
    /// Log every call and add it to `get_effects` under `__reserved__proxy_info`.
    pub geteffects_proxy_info: bool,
}

#[derive(Debug)]
struct Live {
    session: TaskSession,
    call_log: Vec<Value>,
    /// The session's backend when it is not in process (e.g. external tool servers); then
    /// `session` is empty and every call, effects and the close go here.
    remote: Option<Remote>,
}

/// A remote session of a slot.
struct Remote(Box<dyn RemoteSession>);

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RemoteSession")
    }
}

/// One open session.
#[derive(Debug)]
pub struct Slot {
    id: String,
    origin: Origin,
    tools: Arc<ToolSet>,
    initial: TaskSession,
    live: Arc<tokio::sync::Mutex<Live>>,
    /// Served by a remote session (`Live::remote`), not in process.
    remote: bool,
    call_timeout: Duration,
    last_used_ms: AtomicU64,
    info: Mutex<Map<String, Value>>,
}

impl Slot {
    /// The session id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// How it was made.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The task id, when made from a task.
    pub fn task_uid(&self) -> Option<&str> {
        match &self.origin {
            Origin::Task(t) => Some(&t.uid),
            Origin::Proxy(_) => None,
        }
    }

    /// The visible tools.
    pub fn tools(&self) -> &Arc<ToolSet> {
        &self.tools
    }

    /// Whether a remote backend (e.g. external tool servers) serves the session.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// Merges `update` into the session's free-form info and returns it (`session_info`).
    pub fn info(&self, update: &Map<String, Value>) -> Map<String, Value> {
        let mut info = self
            .info
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        for (k, v) in update {
            info.insert(k.clone(), v.clone());
        }
        info.clone()
    }
}

/// Effects of one server of a session: the verdict the evaluator needs, and the states.
#[derive(Debug, Clone)]
pub struct ServerEffects {
    /// Server name.
    pub server: String,
    /// Hash of the live session's stable state.
    pub result_hash: String,
    /// Hash of the golden stable state.
    pub golden_hash: String,
    /// `result_hash == golden_hash`.
    pub passed: bool,
    /// Deep diff of result against golden (empty when they are equal).
    pub diff: Vec<Value>,
    /// Full state right after init (unstable fields included); `Null` when not asked for.
    pub initial_state: Value,
    /// Stable state of the live session; `Null` when not asked for.
    pub result_state: Value,
    /// Stable golden state; `Null` when not asked for.
    pub golden_state: Value,
    /// The init config's `rubrics` (or `null`).
    pub rubrics: Value,
    /// The init config's `rubrics_yesno`, when it has one.
    pub rubrics_yesno: Option<Value>,
    /// The server's own `__reserved__geteffects` object (an external server of a proxy
    /// session), given as is by [`ServerEffects::to_reference_json`].
    pub reference: Option<Value>,
}

impl ServerEffects {
    /// A verdict's effects, with the rubrics of the server's init `config` (no states).
    fn of_verdict(v: tb_core::StateVerdict, config: Option<&Value>) -> Self {
        ServerEffects {
            initial_state: Value::Null,
            result_state: Value::Null,
            golden_state: Value::Null,
            rubrics: config
                .and_then(|c| c.get("rubrics"))
                .cloned()
                .unwrap_or(Value::Null),
            rubrics_yesno: config.and_then(|c| c.get("rubrics_yesno")).cloned(),
            reference: None,
            server: v.server,
            result_hash: v.result_hash,
            golden_hash: v.golden_hash,
            passed: v.passed,
            diff: v.diff,
        }
    }

    /// A server's own effects object (`__reserved__geteffects`): hashes and diff read from it
    /// (`passed` only when both hashes are strings and equal), the object kept as is.
    fn of_reference(server: String, fx: Value) -> Self {
        let text = |k: &str| fx.get(k).and_then(Value::as_str).map(str::to_string);
        let (result_hash, golden_hash) = (text("result_db_hash"), text("golden_db_hash"));
        ServerEffects {
            passed: result_hash.is_some() && result_hash == golden_hash,
            result_hash: result_hash.unwrap_or_default(),
            golden_hash: golden_hash.unwrap_or_default(),
            diff: fx
                .get("diff")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            initial_state: fx.get("initial_db_state").cloned().unwrap_or(Value::Null),
            result_state: fx.get("result_db_state").cloned().unwrap_or(Value::Null),
            golden_state: fx.get("golden_db_state").cloned().unwrap_or(Value::Null),
            rubrics: fx.get("rubrics").cloned().unwrap_or(Value::Null),
            rubrics_yesno: fx.get("rubrics_yesno").cloned(),
            server,
            reference: Some(fx),
        }
    }

    /// The reference server's `__reserved__geteffects` shape.
    pub fn to_reference_json(&self) -> Value {
        if let Some(r) = &self.reference {
            return r.clone();
        }
        let mut m = Map::new();
        m.insert("initial_db_state".into(), self.initial_state.clone());
        m.insert("result_db_state".into(), self.result_state.clone());
        m.insert("result_db_hash".into(), json!(self.result_hash));
        m.insert("golden_db_state".into(), self.golden_state.clone());
        m.insert("golden_db_hash".into(), json!(self.golden_hash));
        m.insert("diff".into(), Value::Array(self.diff.clone()));
        m.insert("rubrics".into(), self.rubrics.clone());
        if let Some(r) = &self.rubrics_yesno {
            m.insert("rubrics_yesno".into(), r.clone());
        }
        Value::Object(m)
    }
}

/// Effects of a whole session.
#[derive(Debug, Clone)]
pub struct Effects {
    /// Per server, in priority order.
    pub servers: Vec<ServerEffects>,
    /// The call log (only for proxy sessions created with `geteffects_proxy_info`).
    pub call_log: Option<Vec<Value>>,
}

impl Effects {
    /// Every server passed.
    pub fn passed(&self) -> bool {
        self.servers.iter().all(|s| s.passed)
    }

    /// The admin surface's JSON: the first server's `result_hash`, `golden_hash`, `diff` and
    /// states at the top level (v1 tasks have one server), `passed` over all servers, and every
    /// server under `servers`.
    pub fn to_admin_json(&self, session: &str, task: Option<&str>) -> Value {
        let first = self.servers.first();
        let server_json = |s: &ServerEffects| {
            json!({
                "server": s.server,
                "result_hash": s.result_hash,
                "golden_hash": s.golden_hash,
                "passed": s.passed,
                "diff": s.diff,
                "initial_state": s.initial_state,
                "result_state": s.result_state,
                "golden_state": s.golden_state,
            })
        };
        json!({
            "session": session,
            "task": task,
            "result_hash": first.map(|s| s.result_hash.clone()),
            "golden_hash": first.map(|s| s.golden_hash.clone()),
            "passed": self.passed(),
            "diff": first.map(|s| s.diff.clone()).unwrap_or_default(),
            "initial_state": first.map_or(Value::Null, |s| s.initial_state.clone()),
            "result_state": first.map_or(Value::Null, |s| s.result_state.clone()),
            "golden_state": first.map_or(Value::Null, |s| s.golden_state.clone()),
            "servers": self.servers.iter().map(server_json).collect::<Vec<_>>(),
        })
    }

    /// The reference Session Proxy's `get_effects` value: `{server: geteffects}` (+ the call log).
    pub fn to_reference_json(&self) -> Value {
        let mut m = Map::new();
        for s in &self.servers {
            m.insert(s.server.clone(), s.to_reference_json());
        }
        if let Some(log) = &self.call_log {
            m.insert(
                "__reserved__proxy_info".into(),
                json!({ "tool_calls": log }),
            );
        }
        Value::Object(m)
    }
}

struct TaskEntry {
    task: Arc<Task>,
    tools: Arc<ToolSet>,
    /// The task made ready for sessions (its data patches validated once, on the registry's
    /// clock): every session of the task opens from it.
    prepared: tb_eval::sandbox::PreparedTask,
}

/// All open sessions of one server, over one loaded data root.
pub struct Registry {
    dataset: Dataset,
    sandbox: Sandbox,
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

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Registry {
    /// Opens a data root (dataset and every domain's initial data).
    pub fn open(data_root: &Path, clock: Clock, limits: Limits) -> Result<Self, SessionError> {
        let dataset = Dataset::open(data_root).map_err(|e| SessionError::Init(e.to_string()))?;
        let sandbox = Sandbox::load(dataset.root()).map_err(|e| {
            SessionError::Init(format!(
                "loading the tools' initial data under {}: {e}",
                dataset.root().display()
            ))
        })?;
        Ok(Self::new(dataset, sandbox, clock, limits))
    }

    /// A registry over an opened dataset and its loaded sandbox.
    pub fn new(dataset: Dataset, sandbox: Sandbox, clock: Clock, limits: Limits) -> Self {
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
    pub fn sandbox(&self) -> &Sandbox {
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

    fn task_entry(&self, id: &str) -> Result<Arc<TaskEntry>, SessionError> {
        if let Some(e) = lock(&self.tasks).get(id) {
            return Ok(e.clone());
        }
        let task = self.dataset.load_task(id).map_err(|e| SessionError::Task {
            task: id.to_string(),
            message: e.to_string(),
        })?;
        // The scenario's `tools` list, when it has one, selects what the agent sees; the schemas
        // are the servers' own, exactly as in-process.
        let scenario_tools: Vec<String> = self
            .dataset
            .scenario(&task.scenario)
            .map(|s| s.tools.iter().map(|t| t.name.clone()).collect())
            .unwrap_or_default();
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

    fn insert(&self, slot: Slot) -> Result<Arc<Slot>, SessionError> {
        let slot = Arc::new(slot);
        self.insert_arc(&slot)?;
        Ok(slot)
    }

    fn insert_arc(&self, slot: &Arc<Slot>) -> Result<(), SessionError> {
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

    fn slot(&self, id: String, origin: Origin, tools: Arc<ToolSet>, session: TaskSession) -> Slot {
        let call_timeout = self.limits.call_timeout;
        Slot {
            id,
            origin,
            tools,
            initial: session.clone(),
            live: Arc::new(tokio::sync::Mutex::new(Live {
                session,
                call_log: Vec::new(),
                remote: None,
            })),
            remote: false,
            call_timeout,
            last_used_ms: AtomicU64::new(self.now_ms()),
            info: Mutex::new(Map::new()),
        }
    }

    /// Opens a fresh session for a task (`file.py:function`), with a new random id.
    pub fn create_for_task(&self, task_id: &str) -> Result<Arc<Slot>, SessionError> {
        crate::input::check_task_id(task_id).map_err(|message| SessionError::Task {
            task: crate::input::shown(task_id),
            message,
        })?;
        self.check_capacity()?;
        let entry = self.task_entry(task_id)?;
        let session = self
            .sandbox
            .session_prepared(&entry.prepared)
            .map_err(|e| SessionError::Init(e.to_string()))?;
        let id = uuid::Uuid::new_v4().simple().to_string();
        let slot = self.slot(
            id,
            Origin::Task(entry.task.clone()),
            entry.tools.clone(),
            session,
        );
        let slot = self.insert(slot)?;
        tracing::info!(session = %slot.id, task = task_id, "session created");
        Ok(slot)
    }

    /// Opens a fresh session for a task: on the remote backend when the registry has one and
    /// it takes the task (see [`Registry::with_remote`]), else in process
    /// ([`Registry::create_for_task`], on the blocking pool). A remote session shows the
    /// tools its backend lists under the scenario's grant, as an in-process one.
    pub async fn create_for_task_async(
        self: &Arc<Self>,
        task_id: &str,
    ) -> Result<Arc<Slot>, SessionError> {
        let in_process = |reg: Arc<Self>, id: String| async move {
            tokio::task::spawn_blocking(move || reg.create_for_task(&id))
                .await
                .unwrap_or_else(|e| {
                    Err(SessionError::Internal(format!(
                        "creating the session crashed: {e}"
                    )))
                })
        };
        let Some(remote) = self.remote.clone() else {
            return in_process(self.clone(), task_id.to_string()).await;
        };
        crate::input::check_task_id(task_id).map_err(|message| SessionError::Task {
            task: crate::input::shown(task_id),
            message,
        })?;
        self.check_capacity()?;
        let reg = self.clone();
        let id = task_id.to_string();
        let (task, scenario_tools) = tokio::task::spawn_blocking(move || reg.load_task(&id))
            .await
            .unwrap_or_else(|e| {
                Err(SessionError::Internal(format!(
                    "loading the task crashed: {e}"
                )))
            })?;
        let session = match remote.open_task(&task).await {
            Ok(Some(s)) => s,
            Ok(None) => return in_process(self.clone(), task_id.to_string()).await,
            Err(message) => return Err(SessionError::Init(message)),
        };
        let list = match granted(task_id, &task, &scenario_tools, session.tool_list()) {
            Ok(l) => l,
            Err(e) => {
                session.close().await;
                return Err(e);
            }
        };
        let slot = self.install_remote(
            uuid::Uuid::new_v4().simple().to_string(),
            Origin::Task(Arc::new(task)),
            list,
            session,
            None,
        )?;
        tracing::info!(session = %slot.id, task = task_id, backend = %remote.describe(), "remote session created");
        Ok(slot)
    }

    /// Registers a session served by a remote backend under `id`: its tools are `list`, its
    /// calls bounded by `timeout` too when given. When the id is taken or the registry full
    /// meanwhile, the session never served: it is closed and the error returned.
    fn install_remote(
        &self,
        id: String,
        origin: Origin,
        list: Vec<Value>,
        session: Box<dyn RemoteSession>,
        timeout: Option<Duration>,
    ) -> Result<Arc<Slot>, SessionError> {
        let empty = || TaskSession {
            servers: Vec::new(),
            own: Vec::new(),
        };
        let mut slot = self.slot(id, origin, Arc::new(ToolSet::new(list)), empty());
        if let Some(t) = timeout.filter(|t| !t.is_zero()) {
            slot.call_timeout = slot.call_timeout.min(t);
        }
        slot.remote = true;
        slot.live = Arc::new(tokio::sync::Mutex::new(Live {
            session: empty(),
            call_log: Vec::new(),
            remote: Some(Remote(session)),
        }));
        let slot = Arc::new(slot);
        if let Err(e) = self.insert_arc(&slot) {
            self.retire(slot);
            return Err(e);
        }
        Ok(slot)
    }

    /// A task and its scenario's tool names, uncached (remote sessions list their own tools).
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

    /// Ends a removed slot: a remote session is closed (its servers torn down and reaped) on
    /// a task [`Registry::shutdown`] waits for; an in-process one is just dropped.
    fn retire(&self, slot: Arc<Slot>) {
        if !slot.remote {
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
                let remote = live.lock().await.remote.take();
                if let Some(Remote(r)) = remote {
                    r.close().await;
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

    /// Opens a session the reference Session Proxy way: per-server init configs, the visible
    /// tool names (each must exist), a caller-chosen id. Returns the slot and the `init_result`
    /// (`{server: {}}`: our servers' init returns nothing beyond `status`).
    pub fn create_for_proxy(
        &self,
        id: &str,
        options: ProxyOptions,
        available_tools: &[String],
        timeout: Option<Duration>,
    ) -> Result<(Arc<Slot>, Map<String, Value>), SessionError> {
        crate::input::check_session_id(id).map_err(SessionError::BadRequest)?;
        if self.sessions.read().is_ok_and(|s| s.contains_key(id)) {
            return Err(SessionError::Duplicate(id.to_string()));
        }
        self.check_capacity()?;
        let session = self.proxy_session(&options.configs)?;
        let all = session.tool_list();
        for name in available_tools {
            if !all.iter().any(|t| t["name"] == name.as_str()) {
                return Err(SessionError::UnknownTool(name.clone()));
            }
        }
        let visible: HashSet<&str> = available_tools.iter().map(String::as_str).collect();
        let list = all
            .into_iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| visible.contains(n)))
            .collect();
        let init_result: Map<String, Value> = options
            .configs
            .iter()
            .map(|(s, _)| (s.clone(), json!({})))
            .collect();
        let mut slot = self.slot(
            id.to_string(),
            Origin::Proxy(options),
            Arc::new(ToolSet::new(list)),
            session,
        );
        if let Some(t) = timeout.filter(|t| !t.is_zero()) {
            slot.call_timeout = slot.call_timeout.min(t);
        }
        let slot = self.insert(slot)?;
        tracing::info!(session = %slot.id, "proxy session created");
        Ok((slot, init_result))
    }

    /// [`Registry::create_for_proxy`], first on the remote backend when the registry has one
    /// (see [`Registry::with_remote`]): a session some of whose servers run there (external
    /// tool servers from `tb mcp-start --servers`) is served by it: its servers are started and
    /// given their configs' `__reserved__init`, `init_result` is what those returned, its
    /// effects are each server's own, and it is torn down when the session ends. Otherwise in
    /// process (on the blocking pool).
    pub async fn create_for_proxy_async(
        self: &Arc<Self>,
        id: &str,
        options: ProxyOptions,
        available_tools: Vec<String>,
        timeout: Option<Duration>,
    ) -> Result<(Arc<Slot>, Map<String, Value>), SessionError> {
        let in_process = |reg: Arc<Self>, id: String, options, tools: Vec<String>| async move {
            tokio::task::spawn_blocking(move || reg.create_for_proxy(&id, options, &tools, timeout))
                .await
                .unwrap_or_else(|e| {
                    Err(SessionError::Internal(format!(
                        "session_create crashed: {e}"
                    )))
                })
        };
        let Some(remote) = self.remote.clone() else {
            return in_process(self.clone(), id.to_string(), options, available_tools).await;
        };
        crate::input::check_session_id(id).map_err(SessionError::BadRequest)?;
        if self.sessions.read().is_ok_and(|s| s.contains_key(id)) {
            return Err(SessionError::Duplicate(id.to_string()));
        }
        self.check_capacity()?;
        let session = match remote.open_configs(id, &options.configs).await {
            Ok(Some(s)) => s,
            Ok(None) => {
                return in_process(self.clone(), id.to_string(), options, available_tools).await;
            }
            Err(message) => return Err(SessionError::Init(message)),
        };
        let all = session.tool_list();
        if let Some(missing) = available_tools
            .iter()
            .find(|n| !all.iter().any(|t| t["name"] == n.as_str()))
        {
            let missing = missing.clone();
            session.close().await;
            return Err(SessionError::UnknownTool(missing));
        }
        let visible: HashSet<&str> = available_tools.iter().map(String::as_str).collect();
        let list = all
            .into_iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| visible.contains(n)))
            .collect();
        let inits = session.init_results();
        let init_result: Map<String, Value> = options
            .configs
            .iter()
            .map(|(s, _)| {
                (
                    s.clone(),
                    inits.get(s).cloned().unwrap_or_else(|| json!({})),
                )
            })
            .collect();
        let slot = self.install_remote(
            id.to_string(),
            Origin::Proxy(options),
            list,
            session,
            timeout,
        )?;
        tracing::info!(session = %slot.id, backend = %remote.describe(), "remote proxy session created");
        Ok((slot, init_result))
    }

    fn proxy_session(&self, configs: &[(String, Value)]) -> Result<TaskSession, SessionError> {
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

    /// The session of an id (and marks it used).
    pub fn get(&self, id: &str) -> Result<Arc<Slot>, SessionError> {
        let slot = self
            .sessions
            .read()
            .ok()
            .and_then(|s| s.get(id).cloned())
            .ok_or_else(|| SessionError::UnknownSession(crate::input::shown(id)))?;
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
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

    async fn lock_live(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<tokio::sync::OwnedMutexGuard<Live>, SessionError> {
        tokio::time::timeout(slot.call_timeout, slot.live.clone().lock_owned())
            .await
            .map_err(|_| SessionError::Busy(slot.id.clone()))
    }

    /// Calls a visible tool. A name the session does not show gives
    /// [`CallOutcome::UnknownTool`]; a call that runs past the call timeout gives
    /// [`SessionError::Timeout`] (the session stays busy until it ends); a tool that panics
    /// gives [`SessionError::Internal`].
    ///
    /// Where it runs: tool calls are in-memory and take microseconds, so handing each one to
    /// the blocking pool (two thread wake-ups) costs more than the call. The first call of a
    /// tool of a task's tool set runs on the blocking pool under the call timeout; once a call
    /// of it finished within [`INLINE_CALL_LIMIT`], later calls run inline on the caller's
    /// task. A tool that once took longer, timed out or panicked runs on the blocking pool,
    /// under the timeout, from then on: a slow tool holds an async worker at most once per
    /// task's tool set, and a tool that never returns never holds one.
    pub async fn call(
        &self,
        slot: &Arc<Slot>,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        let Some(place) = slot.tools.names.get(tool) else {
            return Ok(CallOutcome::UnknownTool(tool.to_string()));
        };
        if slot.remote {
            return self.call_remote(slot, tool, args).await;
        }
        if place.load(Ordering::Relaxed) == INLINE {
            return self.call_inline(slot, place, tool, args).await;
        }
        self.call_any(slot, None, tool, args, Some(place)).await
    }

    /// Calls a tool of one server of the session (the reference's `__reserved__server_tool`,
    /// reachable only through the proxy API). Unknown server or tool gives
    /// [`SessionError::UnknownTool`]. Unlike the reference, the tool must be one the session
    /// grants (its scenario's tools, or the proxy session's `available_tools`): a tool the
    /// grant excludes is refused here as on every other route. Always on the blocking pool,
    /// under the timeout.
    pub async fn call_server_tool(
        &self,
        slot: &Arc<Slot>,
        server: &str,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        if slot.remote {
            return self.call_remote_server_tool(slot, server, tool, args).await;
        }
        let exists = slot
            .initial
            .server(server)
            .is_some_and(|s| s.domain.tool(tool).is_some());
        if !exists {
            return Err(unknown_server_tool(server, tool));
        }
        if !slot.tools.contains(tool) {
            return Err(server_tool_not_granted(server, tool));
        }
        self.call_any(slot, Some(server.to_string()), tool, args, None)
            .await
    }

    /// [`Registry::call_server_tool`] on a remote session: the grant checked here, the server
    /// and tool by the backend.
    async fn call_remote_server_tool(
        &self,
        slot: &Arc<Slot>,
        server: &str,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        if !slot.tools.contains(tool) {
            // not granted (or no such tool at all): refused without asking the server
            return Err(server_tool_not_granted(server, tool));
        }
        let started = Instant::now();
        let mut guard = self.lock_live(slot).await?;
        let remaining = slot.call_timeout.saturating_sub(started.elapsed());
        let Some(Remote(remote)) = guard.remote.as_mut() else {
            return Err(SessionError::Backend("the session is closed".into()));
        };
        let out =
            match tokio::time::timeout(remaining, remote.call_server(server, tool, &args)).await {
                Err(_) => Err(SessionError::Timeout(slot.call_timeout)),
                Ok(Err(message)) => Err(SessionError::Backend(message)),
                Ok(Ok(None)) => Err(unknown_server_tool(server, tool)),
                Ok(Ok(Some(text))) => Ok(CallOutcome::Reply(tb_sandbox::ToolReply::ok(text))),
            };
        self.after_remote_call(slot, guard, tool, args, &out);
        out
    }

    /// What follows a call on a remote session: the call logged for the proxy's
    /// `__reserved__proxy_info` when the session asked for it, the session's lock released,
    /// its last use noted.
    fn after_remote_call(
        &self,
        slot: &Slot,
        mut guard: tokio::sync::OwnedMutexGuard<Live>,
        tool: &str,
        args: Value,
        out: &Result<CallOutcome, SessionError>,
    ) {
        let log_calls = matches!(&slot.origin, Origin::Proxy(o) if o.geteffects_proxy_info);
        if log_calls && let Ok(o) = out {
            let response = o.to_text(tool);
            guard
                .call_log
                .push(json!({"tool_name": tool, "arguments": args, "response": response}));
        }
        drop(guard);
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
    }

    /// A visible tool's call on the session's remote backend, under the call timeout. The
    /// backend's text is the reply; its failure (a server gone, hung or answering garbage) is
    /// [`SessionError::Backend`].
    async fn call_remote(
        &self,
        slot: &Arc<Slot>,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        let started = Instant::now();
        let mut guard = self.lock_live(slot).await?;
        let remaining = slot.call_timeout.saturating_sub(started.elapsed());
        let Some(Remote(remote)) = guard.remote.as_mut() else {
            return Err(SessionError::Backend("the session is closed".into()));
        };
        let out = match tokio::time::timeout(remaining, remote.call(tool, &args)).await {
            Err(_) => {
                tracing::warn!(session = %slot.id, tool, "tool call timed out");
                Err(SessionError::Timeout(slot.call_timeout))
            }
            Ok(Err(message)) => {
                tracing::warn!(session = %slot.id, tool, error = %message, "remote tool call failed");
                Err(SessionError::Backend(message))
            }
            Ok(Ok(text)) => Ok(CallOutcome::Reply(tb_sandbox::ToolReply::ok(text))),
        };
        self.after_remote_call(slot, guard, tool, args, &out);
        tracing::debug!(session = %slot.id, tool, micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX), "tool call");
        out
    }

    /// The effects of a remote session: its backend's state verdicts (no states: the
    /// backend holds them), with the task's rubrics.
    async fn remote_effects(&self, slot: &Arc<Slot>) -> Result<Effects, SessionError> {
        let started = Instant::now();
        let mut guard = self.lock_live(slot).await?;
        let remaining = slot.call_timeout.saturating_sub(started.elapsed());
        let Some(Remote(remote)) = guard.remote.as_mut() else {
            return Err(SessionError::Backend("the session is closed".into()));
        };
        let servers = match &slot.origin {
            // a task session: the verdicts, with the task's rubrics
            Origin::Task(task) => match tokio::time::timeout(remaining, remote.verdicts()).await {
                Err(_) => return Err(SessionError::Timeout(slot.call_timeout)),
                Ok(Err(message)) => return Err(SessionError::Backend(message)),
                Ok(Ok(v)) => v
                    .into_iter()
                    .map(|v| {
                        let config = task.world_state.get(&v.server);
                        ServerEffects::of_verdict(v, config)
                    })
                    .collect(),
            },
            // a proxy session: each server's own effects object, as the reference's proxy
            Origin::Proxy(_) => {
                match tokio::time::timeout(remaining, remote.server_effects()).await {
                    Err(_) => return Err(SessionError::Timeout(slot.call_timeout)),
                    Ok(Err(message)) => return Err(SessionError::Backend(message)),
                    Ok(Ok(v)) => v
                        .into_iter()
                        .map(|(server, fx)| ServerEffects::of_reference(server, fx))
                        .collect(),
                }
            }
        };
        let call_log = matches!(&slot.origin, Origin::Proxy(o) if o.geteffects_proxy_info)
            .then(|| guard.call_log.clone());
        drop(guard);
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Ok(Effects { servers, call_log })
    }

    /// A visible tool's call on the caller's task (see [`Registry::call`]).
    async fn call_inline(
        &self,
        slot: &Arc<Slot>,
        place: &AtomicU8,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        let mut guard = match slot.live.try_lock() {
            Ok(guard) => guard,
            Err(_) => tokio::time::timeout(slot.call_timeout, slot.live.lock())
                .await
                .map_err(|_| SessionError::Busy(slot.id.clone()))?,
        };
        let log_calls = matches!(&slot.origin, Origin::Proxy(o) if o.geteffects_proxy_info);
        let started = Instant::now();
        // A panicking tool is an error, as on the blocking pool; the session goes on.
        let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
            run_call(&mut guard, None, tool, args, log_calls)
        }));
        let took = started.elapsed();
        drop(guard);
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        let out = match ran {
            Ok(outcome) => {
                if took > INLINE_CALL_LIMIT {
                    place.store(OFFLOAD, Ordering::Relaxed);
                    tracing::info!(session = %slot.id, tool, micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX),
                        "slow tool call: later calls of this tool run on the blocking pool");
                }
                Ok(outcome)
            }
            Err(panic) => {
                place.store(OFFLOAD, Ordering::Relaxed);
                let e = panic_message(panic.as_ref());
                tracing::error!(session = %slot.id, tool, error = %e, "tool call crashed");
                Err(SessionError::Internal(format!(
                    "tool `{tool}` crashed: {e}"
                )))
            }
        };
        tracing::debug!(session = %slot.id, tool, micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX), "tool call");
        out
    }

    /// A call on the blocking pool, under the call timeout. With `place`, records where later
    /// calls of this tool run (see [`Registry::call`]).
    async fn call_any(
        &self,
        slot: &Arc<Slot>,
        server: Option<String>,
        tool: &str,
        args: Value,
        place: Option<&AtomicU8>,
    ) -> Result<CallOutcome, SessionError> {
        let started = Instant::now();
        let mut guard = self.lock_live(slot).await?;
        let log_calls = matches!(&slot.origin, Origin::Proxy(o) if o.geteffects_proxy_info);
        let name = tool.to_string();
        let job = tokio::task::spawn_blocking(move || {
            let t0 = Instant::now();
            let outcome = run_call(&mut guard, server.as_deref(), &name, args, log_calls);
            (outcome, t0.elapsed())
        });
        let remaining = slot.call_timeout.saturating_sub(started.elapsed());
        let out = match tokio::time::timeout(remaining, job).await {
            Err(_) => {
                tracing::warn!(session = %slot.id, tool, "tool call timed out");
                Err(SessionError::Timeout(slot.call_timeout))
            }
            Ok(Err(e)) => {
                tracing::error!(session = %slot.id, tool, error = %e, "tool call crashed");
                Err(SessionError::Internal(format!(
                    "tool `{tool}` crashed: {e}"
                )))
            }
            Ok(Ok(done)) => Ok(done),
        };
        // The call ran (or is still running): where later calls of this tool run.
        if let Some(place) = place {
            match &out {
                Ok((_, took)) if *took <= INLINE_CALL_LIMIT => {
                    let _ = place.compare_exchange(
                        UNSEEN,
                        INLINE,
                        Ordering::Relaxed,
                        Ordering::Relaxed,
                    );
                }
                _ => place.store(OFFLOAD, Ordering::Relaxed),
            }
        }
        let out = out.map(|(outcome, _)| outcome);
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        tracing::debug!(session = %slot.id, tool, micros = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX), "tool call");
        out
    }

    /// The session's effects: per server, the live state's hash against the golden one (the
    /// in-process [`StateJudge`] for task sessions, so verdicts are identical), the diff, and,
    /// when `with_states`, the initial, result and golden states.
    pub async fn effects(
        &self,
        slot: &Arc<Slot>,
        with_states: bool,
    ) -> Result<Effects, SessionError> {
        if slot.remote {
            return self.remote_effects(slot).await;
        }
        let (live, call_log) = {
            let guard = self.lock_live(slot).await?;
            (guard.session.clone(), guard.call_log.clone())
        };
        let call_log =
            matches!(&slot.origin, Origin::Proxy(o) if o.geteffects_proxy_info).then_some(call_log);
        let servers = self.compute_effects(slot, &live, with_states)?;
        slot.last_used_ms.store(self.now_ms(), Ordering::Relaxed);
        Ok(Effects { servers, call_log })
    }

    fn compute_effects(
        &self,
        slot: &Slot,
        live: &TaskSession,
        with_states: bool,
    ) -> Result<Vec<ServerEffects>, SessionError> {
        let state_of = |s: &TaskSession, server: &str| {
            s.server(server)
                .map_or(Value::Null, |x| x.state.stable_state())
        };
        let initial_of = |server: &str| {
            if with_states {
                slot.initial
                    .server(server)
                    .map_or(Value::Null, |x| x.state.full_state())
            } else {
                Value::Null
            }
        };
        match &slot.origin {
            Origin::Task(task) => {
                let golden = self
                    .judge
                    .golden(&self.sandbox, task, self.clock)
                    .map_err(|e| SessionError::Internal(e.to_string()))?;
                let verdicts = self
                    .judge
                    .judge(&self.sandbox, task, self.clock, live)
                    .map_err(|e| SessionError::Internal(e.to_string()))?;
                Ok(verdicts
                    .into_iter()
                    .map(|v| {
                        let config = task.world_state.get(&v.server);
                        let mut fx = ServerEffects::of_verdict(v, config);
                        if with_states {
                            fx.initial_state = initial_of(&fx.server);
                            fx.result_state = state_of(live, &fx.server);
                            fx.golden_state = golden
                                .iter()
                                .find(|g| g.server == fx.server)
                                .map_or(Value::Null, tb_eval::judge::Golden::stable_state);
                        }
                        fx
                    })
                    .collect())
            }
            Origin::Proxy(options) => {
                let mut golden = self.proxy_session(&options.configs)?;
                let mut out = Vec::new();
                for ((server, config), g) in options.configs.iter().zip(golden.servers.iter_mut()) {
                    for (tool, params) in golden_calls(config) {
                        // As the reference's geteffects: a failing golden call is ignored.
                        let _ = g.call(&tool, &params);
                    }
                    let golden_state = g.state.stable_state();
                    let golden_hash = tb_sandbox::state::hash_stable(&golden_state);
                    let result_state = state_of(live, server);
                    let result_hash = tb_sandbox::state::hash_stable(&result_state);
                    let diff = deep_diff(&result_state, &golden_state);
                    out.push(ServerEffects {
                        server: server.clone(),
                        passed: result_hash == golden_hash,
                        result_hash,
                        golden_hash,
                        diff,
                        initial_state: initial_of(server),
                        result_state: if with_states {
                            result_state
                        } else {
                            Value::Null
                        },
                        golden_state: if with_states {
                            golden_state
                        } else {
                            Value::Null
                        },
                        rubrics: config.get("rubrics").cloned().unwrap_or(Value::Null),
                        rubrics_yesno: config.get("rubrics_yesno").cloned(),
                        reference: None,
                    });
                }
                Ok(out)
            }
        }
    }

    /// Whether `call_tool` results of this session are forced to JSON.
    pub fn always_json(slot: &Slot) -> bool {
        matches!(&slot.origin, Origin::Proxy(o) if o.always_json_output)
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

/// One call on a live session: of any server's tool (`server`) or of the session's (`None`);
/// logged when the session logs calls.
fn run_call(
    live: &mut Live,
    server: Option<&str>,
    tool: &str,
    args: Value,
    log_calls: bool,
) -> CallOutcome {
    let outcome = match server {
        Some(server) => match live
            .session
            .servers
            .iter_mut()
            .find(|s| s.domain.name == server)
        {
            Some(s) => s.call(tool, &args),
            None => match live
                .session
                .own
                .iter_mut()
                .find(|s| s.server() == server && s.has_tool(tool))
            {
                Some(s) => CallOutcome::Reply(s.call_tool(tool, &args)),
                None => CallOutcome::UnknownTool(tool.to_string()),
            },
        },
        None => live.session.call(tool, &args),
    };
    if log_calls {
        let response = outcome.to_text(tool);
        live.call_log
            .push(json!({"tool_name": tool, "arguments": args, "response": response}));
    }
    outcome
}

/// A caught panic's message, as tokio's `JoinError` words it.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let msg = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    match msg {
        Some(m) => format!("panicked with message {m:?}"),
        None => "panicked".to_string(),
    }
}

/// `__reserved__server_tool` naming a server or tool the session does not have.
fn unknown_server_tool(server: &str, tool: &str) -> SessionError {
    SessionError::UnknownTool(format!(
        "{} > {}",
        crate::input::shown(server),
        crate::input::shown(tool)
    ))
}

/// `__reserved__server_tool` naming a tool outside the session's grant.
fn server_tool_not_granted(server: &str, tool: &str) -> SessionError {
    SessionError::BadRequest(format!(
        "Tool {} > {} is not granted to this session (it is not in the session's tool list)",
        crate::input::shown(server),
        crate::input::shown(tool)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use tb_sandbox::runtime::{Args, ToolError};
    use tb_sandbox::state::State;
    use tb_sandbox::{Domain, Loaded, Session};

    static GATE: Mutex<()> = Mutex::new(());

    fn wait(_: &mut Session, _: &Args) -> Result<Value, ToolError> {
        let _open = lock(&GATE);
        Ok(json!({"waited": true}))
    }

    fn boom(_: &mut Session, _: &Args) -> Result<Value, ToolError> {
        panic!("a tool bug")
    }

    fn slow_slot(reg: &Registry) -> Arc<Slot> {
        let tables = "table items file=x/items id=id forbid\n  id str\n";
        let tools =
            "tool wait\n  | Blocks until the test opens the gate.\ntool boom\n  | Panics.\n";
        let domain = Arc::new(
            Domain::new("slow", &[("slow.tables", tables), ("slow.tools", tools)], {
                let mut t = tb_sandbox::Tools::new();
                t.add("wait", wait).add("boom", boom);
                t
            })
            .unwrap(),
        );
        let loaded = Loaded {
            base: State::empty(domain.layout().clone()),
            domain,
        };
        let session = TaskSession {
            servers: vec![loaded.session(&json!({}), Clock::default()).unwrap()],
            own: Vec::new(),
        };
        let tools = Arc::new(ToolSet::new(session.tool_list()));
        let slot = reg.slot(
            "slow".into(),
            Origin::Proxy(ProxyOptions::default()),
            tools,
            session,
        );
        reg.insert(slot).unwrap()
    }

    fn example() -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
    }

    // Holding the gate across awaits is the point: the tool must not finish while we look.
    #[allow(clippy::await_holding_lock)]
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_call_past_the_timeout_is_refused_and_the_session_stays_busy_until_it_ends() {
        let limits = Limits {
            call_timeout: Duration::from_millis(100),
            ..Limits::default()
        };
        let reg = Registry::open(&example(), Clock::default(), limits).unwrap();
        let slot = slow_slot(&reg);
        let gate = lock(&GATE);
        // The gate is closed, so the tool cannot finish: the timeout must answer.
        let e = reg.call(&slot, "wait", json!({})).await.unwrap_err();
        assert!(matches!(e, SessionError::Timeout(_)), "{e}");
        assert_eq!(e.to_string(), "Tool call timed out after 0.1 seconds");
        // The first call still runs: the next one is refused, not queued forever.
        let e = reg.call(&slot, "wait", json!({})).await.unwrap_err();
        assert!(matches!(e, SessionError::Busy(_)), "{e}");
        assert!(e.to_string().contains("busy"));
        // A busy session is not reaped, even when idle long enough.
        assert!(reg.reap(Duration::ZERO).is_empty());
        drop(gate);
        // Once the stuck call ends, the session serves again (bounded wait).
        let mut answered = None;
        for _ in 0..500 {
            match reg.call(&slot, "wait", json!({})).await {
                Ok(o) => {
                    answered = Some(o);
                    break;
                }
                Err(SessionError::Busy(_) | SessionError::Timeout(_)) => {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
                Err(e) => panic!("{e}"),
            }
        }
        assert_eq!(
            answered,
            Some(CallOutcome::Ok(json!({"waited": true}).into()))
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_crashing_tool_is_an_error_not_a_crash() {
        let reg = Registry::open(&example(), Clock::default(), Limits::default()).unwrap();
        let slot = slow_slot(&reg);
        // The session catches the panic: the agent reads a tool error, never the panic text.
        let out = reg.call(&slot, "boom", json!({})).await.unwrap();
        assert_eq!(
            out,
            CallOutcome::ToolFailed(tb_sandbox::runtime::TOOL_PANIC_ERROR.into())
        );
        assert!(!out.to_text("boom").contains("a tool bug"));
        // The session and the registry go on.
        assert_eq!(
            reg.call(&slot, "nope", json!({})).await.unwrap(),
            CallOutcome::UnknownTool("nope".into())
        );
        assert_eq!(reg.len(), 1);
    }

    /// A remote backend whose sessions answer `remote:<tool>`, fail on `cancel_order`, list
    /// one tool no scenario grants, and count their closes.
    struct FakeRemote {
        tools: Vec<Value>,
        closed: Arc<std::sync::atomic::AtomicUsize>,
    }

    struct FakeSession {
        tools: Vec<Value>,
        closed: Arc<std::sync::atomic::AtomicUsize>,
    }

    impl tb_eval::tools::ToolBackend for FakeSession {
        fn tool_list(&self) -> Vec<Value> {
            self.tools.clone()
        }
        fn call<'a>(
            &'a mut self,
            tool: &'a str,
            _args: &'a Value,
        ) -> tb_eval::tools::BoxFut<'a, Result<String, String>> {
            Box::pin(async move {
                if tool == "cancel_order" {
                    Err("server `fake`: gone".to_string())
                } else {
                    Ok(format!("remote:{tool}"))
                }
            })
        }
    }

    impl RemoteSession for FakeSession {
        fn verdicts(
            &mut self,
        ) -> tb_eval::tools::BoxFut<'_, Result<Vec<tb_core::StateVerdict>, String>> {
            Box::pin(async {
                Ok(vec![tb_core::StateVerdict {
                    server: "fake".into(),
                    passed: true,
                    result_hash: "h".into(),
                    golden_hash: "h".into(),
                    diff: Vec::new(),
                }])
            })
        }
        fn close(self: Box<Self>) -> tb_eval::tools::BoxFut<'static, ()> {
            let closed = self.closed.clone();
            Box::pin(async move {
                closed.fetch_add(1, Ordering::SeqCst);
            })
        }
    }

    impl RemoteTools for FakeRemote {
        fn open<'a>(
            &'a self,
            _task_uid: &'a str,
        ) -> tb_eval::tools::BoxFut<'a, Result<Box<dyn RemoteSession>, String>> {
            Box::pin(async move {
                Ok(Box::new(FakeSession {
                    tools: self.tools.clone(),
                    closed: self.closed.clone(),
                }) as Box<dyn RemoteSession>)
            })
        }
    }

    const BS001: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_remote_session_is_granted_called_graded_and_closed_through_the_registry() {
        let native = Registry::open(&example(), Clock::default(), Limits::default()).unwrap();
        let task = native.dataset.load_task(BS001).unwrap();
        let mut tools = native
            .sandbox
            .session(&task, Clock::default())
            .unwrap()
            .tool_list();
        tools.push(
            json!({"name": "not_granted", "description": "", "inputSchema": {"type": "object"}}),
        );
        let closed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let reg = Arc::new(
            Registry::open(&example(), Clock::default(), Limits::default())
                .unwrap()
                .with_remote(Arc::new(FakeRemote {
                    tools,
                    closed: closed.clone(),
                })),
        );
        let slot = reg.create_for_task_async(BS001).await.unwrap();
        assert!(slot.is_remote());
        // the scenario's grant applies to the backend's list
        assert!(!slot.tools().contains("not_granted"));
        assert!(slot.tools().contains("get_order"));
        assert_eq!(
            reg.call(&slot, "not_granted", json!({})).await.unwrap(),
            CallOutcome::UnknownTool("not_granted".into())
        );
        assert_eq!(
            reg.call(&slot, "get_order", json!({})).await.unwrap(),
            CallOutcome::Reply(tb_sandbox::ToolReply::ok("remote:get_order".into()))
        );
        let e = reg
            .call(&slot, "cancel_order", json!({}))
            .await
            .unwrap_err();
        assert!(matches!(e, SessionError::Backend(_)), "{e}");
        assert_eq!(e.status(), 502);
        let fx = reg.effects(&slot, true).await.unwrap();
        assert!(fx.passed());
        assert_eq!(fx.servers[0].server, "fake");
        // removal closes it; so does shutdown for the ones still open
        let other = reg.create_for_task_async(BS001).await.unwrap();
        reg.remove(slot.id()).unwrap();
        assert!(reg.get(other.id()).is_ok());
        reg.shutdown(Duration::from_secs(10)).await;
        assert_eq!(closed.load(Ordering::SeqCst), 2);
        assert!(reg.is_empty());
    }

    #[test]
    fn golden_calls_skip_entries_without_a_tool() {
        let config = json!({"golden_test_case": {"tool_interactions": [
            {"tool": "a", "parameters": {"x": 1}}, {"parameters": {}}, {"tool": "b"}
        ]}});
        assert_eq!(
            golden_calls(&config),
            vec![
                ("a".to_string(), json!({"x": 1})),
                ("b".to_string(), json!({}))
            ]
        );
        assert!(golden_calls(&json!({"golden_test_case": null})).is_empty());
    }
}
