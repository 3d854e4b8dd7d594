//! Sessions over external servers: per attempt, one server per external server the task
//! names (from its pool), initialised with the task's `world_state` entry, its tools listed
//! and routed like native ones, effects collected for the checks, torn down and reaped.
//! Servers of the task that `tb` has natively run in process beside them.

use crate::config::ServersConfig;
use crate::error::ExternalError;
use crate::pool::{EXIT_GRACE, Leased, ServerPool};
use crate::server::{RESERVED_PREFIX, StartOptions, agent_schema, result_text};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tb_core::{Check, StateVerdict, Task};
use tb_eval::root::{LoadedRoot, TaskSession};
use tb_eval::tools::{BoxFut, EpisodeSession, RemoteTools, ToolBackend};
use tb_sandbox::{CallOutcome, Clock};

/// Which side runs a server when both have it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Prefer {
    /// A native domain of the name runs in process (unless the file says `prefer: external`).
    #[default]
    Native,
    /// The file's server runs, also for names with a native domain.
    External,
}

/// Options of the external backend.
#[derive(Debug, Clone)]
pub struct ExternalOptions {
    /// Start, init and call budgets, and `{python}`.
    pub start: StartOptions,
    /// Which side runs a name both have.
    pub prefer: Prefer,
    /// Idle servers kept ready per server.
    pub pool: usize,
    /// Sessions alive at once per server (a server's `max_concurrency` overrides it).
    pub max_concurrency: usize,
}

impl Default for ExternalOptions {
    fn default() -> Self {
        ExternalOptions {
            start: StartOptions::default(),
            prefer: Prefer::Native,
            pool: 0,
            max_concurrency: 64,
        }
    }
}

/// Where one server of a task runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// In process (a native domain).
    Native,
    /// From servers.yaml.
    External,
    /// Nowhere: neither native nor in the file.
    Unknown,
}

/// Decides where a server runs: the file's server when preferred (globally or by its
/// `prefer: external`), else the native domain, else the file's server.
pub fn route(cfg: &ServersConfig, prefer: Prefer, native: bool, server: &str) -> Route {
    match (cfg.get(server), native) {
        (Some(s), true) if prefer == Prefer::External || s.prefer_external => Route::External,
        (_, true) => Route::Native,
        (Some(_), false) => Route::External,
        (None, false) => Route::Unknown,
    }
}

/// The external tool backend of a run: the servers file, a pool per server, and the native
/// domains for the servers that run in process.
#[derive(Debug)]
pub struct ExternalTools {
    cfg: Arc<ServersConfig>,
    sandbox: Arc<LoadedRoot>,
    clock: Clock,
    opts: ExternalOptions,
    pools: HashMap<String, Arc<ServerPool>>,
    judge: Arc<tb_eval::judge::StateJudge>,
}

impl ExternalTools {
    /// The backend of a servers file.
    pub fn new(
        cfg: ServersConfig,
        sandbox: Arc<LoadedRoot>,
        clock: Clock,
        opts: ExternalOptions,
    ) -> Self {
        let start = Arc::new(opts.start.clone());
        let pools = cfg
            .servers
            .iter()
            .map(|s| {
                let max = s.max_concurrency.unwrap_or(opts.max_concurrency);
                (
                    s.name.clone(),
                    ServerPool::new(s.clone(), start.clone(), opts.pool, max),
                )
            })
            .collect();
        ExternalTools {
            cfg: Arc::new(cfg),
            sandbox,
            clock,
            opts,
            pools,
            judge: Arc::new(tb_eval::judge::StateJudge::new()),
        }
    }

    /// The servers file.
    pub fn config(&self) -> &ServersConfig {
        &self.cfg
    }

    /// Where `server` runs.
    pub fn route(&self, server: &str) -> Route {
        route(
            &self.cfg,
            self.opts.prefer,
            self.sandbox.domain(server).is_some(),
            server,
        )
    }

    /// Whether any server of the task runs externally.
    pub fn is_external(&self, task: &Task) -> bool {
        task.world_state
            .keys()
            .any(|s| self.route(s) == Route::External)
    }

    /// Starts `pool` servers ahead of demand for each server that runs externally for one of
    /// `tasks` (needs a tokio runtime; without one, nothing is started ahead).
    pub fn warm_for(&self, tasks: &[Task]) {
        self.warm_where(|name| tasks.iter().any(|t| t.world_state.contains_key(name)));
    }

    /// Starts `pool` servers ahead of demand for every server of the file that runs
    /// externally (`tb mcp-start`, which has no task list).
    pub fn warm_all(&self) {
        self.warm_where(|_| true);
    }

    fn warm_where(&self, needed: impl Fn(&str) -> bool) {
        if self.opts.pool == 0 {
            return;
        }
        if tokio::runtime::Handle::try_current().is_err() {
            tracing::warn!("--server-pool: no async runtime here; servers start on demand");
            return;
        }
        for (name, p) in &self.pools {
            if needed(name) && self.route(name) == Route::External {
                p.refill();
            }
        }
    }

    /// Servers started so far, per server.
    pub fn started(&self) -> Vec<(String, usize)> {
        let mut v: Vec<_> = self
            .pools
            .iter()
            .map(|(k, p)| {
                (
                    k.clone(),
                    p.started.load(std::sync::atomic::Ordering::Relaxed),
                )
            })
            .collect();
        v.sort();
        v
    }

    /// Shuts every pool's idle servers down (call at the end of a run).
    pub async fn shutdown(&self) {
        for p in self.pools.values() {
            p.close().await;
        }
    }

    /// Opens a session for a task: native servers in process, external ones from their pools
    /// (started, initialised in `world_state` order). A failure tears down what was started.
    pub async fn open_session(&self, task: &Task) -> Result<ExternalSession, ExternalError> {
        self.open_with(task, uuid::Uuid::new_v4().to_string(), false)
            .await
    }

    /// Opens a session the Session Proxy's `session_create` way: raw per-server init configs
    /// in priority order, each server's `__reserved__init` given its config, `session_id` the
    /// caller's. `Ok(None)` when no server of `configs` runs from the file (the caller opens it
    /// in process); a server neither native nor in the file is an error.
    pub async fn open_configs(
        &self,
        session_id: &str,
        configs: &[(String, Value)],
    ) -> Result<Option<ExternalSession>, ExternalError> {
        let uid = format!("session_create:{session_id}");
        let mut external = false;
        for (server, _) in configs {
            match self.route(server) {
                Route::External => external = true,
                Route::Native => {}
                Route::Unknown => {
                    return Err(ExternalError::UnknownServer {
                        task: uid,
                        server: server.clone(),
                        file: self.cfg.file.display().to_string(),
                    });
                }
            }
        }
        if !external {
            return Ok(None);
        }
        let task = Task {
            uid,
            scenario: String::new(),
            query: None,
            user_context: None,
            max_user_sim_turns: None,
            max_agent_sim_turns: None,
            bot_instructions: None,
            init: Map::new(),
            world_state: configs.iter().cloned().collect(),
            raw: Map::new(),
            checks: Vec::new(),
            source: tb_core::task::SourceLoc::default(),
            test_tags: tb_core::tags::TestTags::default(),
        };
        self.open_with(&task, session_id.to_string(), true)
            .await
            .map(Some)
    }

    async fn open_with(
        &self,
        task: &Task,
        session_id: String,
        keep_initial: bool,
    ) -> Result<ExternalSession, ExternalError> {
        let mut native_task = task.clone();
        native_task.world_state.clear();
        let mut slots = Vec::new();
        let mut leases: Vec<(String, Leased)> = Vec::new();
        let mut pending = Vec::new();
        for (server, config) in &task.world_state {
            match self.route(server) {
                Route::Native => {
                    native_task
                        .world_state
                        .insert(server.clone(), config.clone());
                    slots.push(Slot::Native(server.clone()));
                }
                Route::External => {
                    let pool =
                        self.pools.get(server).cloned().ok_or_else(|| {
                            ExternalError::Native(format!("no pool for `{server}`"))
                        })?;
                    // acquired concurrently: starts do not queue behind each other
                    pending.push((
                        server.clone(),
                        tokio::spawn(async move { pool.acquire().await }),
                    ));
                    slots.push(Slot::External(server.clone()));
                }
                Route::Unknown => {
                    return Err(ExternalError::UnknownServer {
                        task: task.uid.clone(),
                        server: server.clone(),
                        file: self.cfg.file.display().to_string(),
                    });
                }
            }
        }
        let names: Vec<String> = pending.iter().map(|(n, _)| n.clone()).collect();
        let mut first_err = None;
        for (name, (_, h)) in names.into_iter().zip(pending) {
            let r = h.await.unwrap_or_else(|e| {
                Err(ExternalError::Server {
                    server: name.clone(),
                    what: "start".into(),
                    message: format!("the start task failed: {e}"),
                })
            });
            match r {
                Ok(l) => leases.push((name, l)),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let Some(e) = first_err {
            for (_, l) in leases {
                l.conn.shutdown(EXIT_GRACE).await;
            }
            return Err(e);
        }
        let native = self
            .sandbox
            .session(&native_task, self.clock)
            .map_err(|e| ExternalError::Native(e.to_string()));
        let native = match native {
            Ok(n) => n,
            Err(e) => {
                for (_, l) in leases {
                    l.conn.shutdown(EXIT_GRACE).await;
                }
                return Err(e);
            }
        };
        let mut session = ExternalSession {
            task: task.clone(),
            native_task,
            initial: keep_initial.then(|| native.clone()),
            native,
            external: leases
                .into_iter()
                .map(|(name, l)| External {
                    name,
                    lease: Some(l),
                    init_result: Value::Object(Map::new()),
                })
                .collect(),
            slots,
            routes: HashMap::new(),
            tool_list: Vec::new(),
            session_id,
            opts: self.opts.start.clone(),
            sandbox: self.sandbox.clone(),
            clock: self.clock,
            judge: self.judge.clone(),
        };
        session.build_tools()?;
        // init in world_state order, as the reference does
        if let Err(e) = session.init_all().await {
            session.close_all().await;
            return Err(e);
        }
        Ok(session)
    }
}

#[derive(Debug, Clone)]
enum Slot {
    Native(String),
    External(String),
}

#[derive(Debug)]
struct External {
    name: String,
    lease: Option<Leased>,
    init_result: Value,
}

#[derive(Debug, Clone, Copy)]
enum Target {
    Native(usize),
    External(usize),
}

/// One attempt's session over native and external servers.
#[derive(Debug)]
pub struct ExternalSession {
    task: Task,
    native_task: Task,
    native: TaskSession,
    /// The native servers right after init (kept for proxy sessions' `initial_db_state`).
    initial: Option<TaskSession>,
    external: Vec<External>,
    slots: Vec<Slot>,
    routes: HashMap<String, Target>,
    tool_list: Vec<Value>,
    session_id: String,
    opts: StartOptions,
    sandbox: Arc<LoadedRoot>,
    clock: Clock,
    judge: Arc<tb_eval::judge::StateJudge>,
}

impl ExternalSession {
    fn ext(&self, name: &str) -> Option<&External> {
        self.external.iter().find(|e| e.name == name)
    }

    /// The session id given to servers whose reserved tools declare `session_id`.
    pub fn session_id(&self) -> &str {
        &self.session_id
    }

    /// What each external server's `__reserved__init` returned (minus `status`).
    pub fn init_results(&self) -> Map<String, Value> {
        self.external
            .iter()
            .map(|e| (e.name.clone(), e.init_result.clone()))
            .collect()
    }

    fn build_tools(&mut self) -> Result<(), ExternalError> {
        let mut list: Vec<Value> = Vec::new();
        let mut routes = HashMap::new();
        for slot in &self.slots {
            match slot {
                Slot::Native(name) => {
                    let (i, s) = self
                        .native
                        .servers
                        .iter()
                        .enumerate()
                        .find(|(_, s)| &s.domain.name == name)
                        .ok_or_else(|| {
                            ExternalError::Native(format!("native server `{name}` missing"))
                        })?;
                    for t in s.domain.tool_list() {
                        let n = t["name"].as_str().unwrap_or_default().to_string();
                        list.retain(|x| x["name"] != t["name"]);
                        list.push(t);
                        routes.insert(n, Target::Native(i));
                    }
                }
                Slot::External(name) => {
                    let (j, e) = self
                        .external
                        .iter()
                        .enumerate()
                        .find(|(_, e)| &e.name == name)
                        .ok_or_else(|| {
                            ExternalError::Native(format!("external server `{name}` missing"))
                        })?;
                    let conn = &e.lease.as_ref().expect("leased until close").conn;
                    for (n, raw) in conn.tools() {
                        if n.starts_with(RESERVED_PREFIX) {
                            continue;
                        }
                        let schema = raw
                            .get("inputSchema")
                            .cloned()
                            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
                        let schema = agent_schema(&schema).map_err(|m| ExternalError::Server {
                            server: name.clone(),
                            what: format!("tools/list: tool `{n}`"),
                            message: m,
                        })?;
                        let t = json!({
                            "name": n,
                            "description": raw.get("description").cloned().unwrap_or(Value::String(String::new())),
                            "inputSchema": schema,
                        });
                        list.retain(|x| x["name"] != t["name"]);
                        list.push(t);
                        routes.insert(n.clone(), Target::External(j));
                    }
                }
            }
        }
        self.tool_list = list;
        self.routes = routes;
        Ok(())
    }

    /// Calls a reserved tool of an external server if it lists it (`None` when it does not),
    /// injecting `session_id` when its schema declares it. `Ok(text)`.
    async fn reserved(
        &self,
        server: &str,
        tool: &str,
        args: Map<String, Value>,
        budget: Duration,
    ) -> Result<Option<String>, ExternalError> {
        let Some(conn) = self
            .ext(server)
            .and_then(|e| e.lease.as_ref())
            .map(|l| &l.conn)
        else {
            return Ok(None);
        };
        reserved_on(conn, &self.session_id, tool, args, budget).await
    }

    async fn init_all(&mut self) -> Result<(), ExternalError> {
        let names: Vec<String> = self
            .slots
            .iter()
            .filter_map(|s| match s {
                Slot::External(n) => Some(n.clone()),
                Slot::Native(_) => None,
            })
            .collect();
        for name in names {
            let config = self
                .task
                .world_state
                .get(&name)
                .cloned()
                .unwrap_or(Value::Null);
            let mut args = Map::new();
            args.insert("config".into(), config);
            let text = self
                .reserved(&name, "__reserved__init", args, self.opts.init_timeout)
                .await?;
            let result = match text {
                None => Map::new(),
                Some(t) => parse_init(&t).map_err(|message| ExternalError::Server {
                    server: name.clone(),
                    what: "__reserved__init".into(),
                    message,
                })?,
            };
            if let Some(e) = self.external.iter_mut().find(|e| e.name == name) {
                e.init_result = Value::Object(result);
            }
        }
        Ok(())
    }

    /// The effects of an external server (`{}` when it has no `__reserved__geteffects` or its
    /// reply is not a JSON object, as the reference).
    pub async fn effects(&self, server: &str) -> Result<Map<String, Value>, ExternalError> {
        let text = self
            .reserved(
                server,
                "__reserved__geteffects",
                Map::new(),
                self.opts.call_timeout,
            )
            .await?;
        let obj = match text.as_deref().map(serde_json::from_str::<Value>) {
            Some(Ok(Value::Object(m))) => m,
            Some(_) => {
                tracing::warn!(
                    "server `{server}`: __reserved__geteffects did not return a JSON object; effects are {{}}"
                );
                Map::new()
            }
            None => Map::new(),
        };
        if obj.get("status").and_then(Value::as_str) == Some("error") {
            return Err(ExternalError::Server {
                server: server.to_string(),
                what: "__reserved__geteffects".into(),
                message: obj
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("status: error")
                    .to_string(),
            });
        }
        Ok(obj)
    }

    /// The state verdicts, one per server in `world_state` order: native ones from the
    /// in-process judge, external ones from the effects' `result_db_hash`, `golden_db_hash`
    /// and `diff` (what the benchmark's `validate_database` reads).
    pub async fn state_verdicts(&self) -> Result<Vec<StateVerdict>, ExternalError> {
        let native = if self.native.servers.is_empty() {
            Vec::new()
        } else {
            self.judge
                .judge(&self.sandbox, &self.native_task, self.clock, &self.native)
                .map_err(|e| ExternalError::Native(e.to_string()))?
        };
        let mut out = Vec::new();
        for slot in &self.slots {
            match slot {
                Slot::Native(name) => {
                    out.extend(native.iter().filter(|v| &v.server == name).cloned());
                }
                Slot::External(name) => {
                    let fx = self.effects(name).await?;
                    let hash = |k: &str| fx.get(k).and_then(Value::as_str).map(str::to_string);
                    match (hash("result_db_hash"), hash("golden_db_hash")) {
                        (Some(result_hash), Some(golden_hash)) => out.push(StateVerdict {
                            server: name.clone(),
                            passed: result_hash == golden_hash,
                            result_hash,
                            golden_hash,
                            diff: fx
                                .get("diff")
                                .and_then(Value::as_array)
                                .cloned()
                                .unwrap_or_default(),
                        }),
                        _ if self.task.checks.contains(&Check::ValidateDatabase) => {
                            return Err(ExternalError::Server {
                                server: name.clone(),
                                what: "__reserved__geteffects".into(),
                                message: "the effects have no `result_db_hash` and `golden_db_hash` strings, which the database check reads".into(),
                            });
                        }
                        _ => {}
                    }
                }
            }
        }
        Ok(out)
    }

    /// Calls a tool: the text the agent sees, or the server's failure.
    pub async fn call_tool(&mut self, tool: &str, args: &Value) -> Result<String, ExternalError> {
        match self.routes.get(tool).copied() {
            Some(Target::Native(i)) => Ok(self.native.servers[i].call(tool, args).to_text(tool)),
            Some(Target::External(j)) => self.call_external(j, tool, args).await,
            None => Ok(CallOutcome::UnknownTool(tool.to_string()).to_text(tool)),
        }
    }

    async fn call_external(
        &self,
        j: usize,
        tool: &str,
        args: &Value,
    ) -> Result<String, ExternalError> {
        let e = &self.external[j];
        let Some(lease) = e.lease.as_ref() else {
            return Err(ExternalError::Server {
                server: e.name.clone(),
                what: format!("tool `{tool}`"),
                message: "the session is closed".into(),
            });
        };
        let args = match args {
            Value::Object(m) => m.clone(),
            Value::Null => Map::new(),
            other => {
                return Ok(CallOutcome::ToolFailed(format!(
                    "arguments must be a JSON object, got {other}"
                ))
                .to_text(tool));
            }
        };
        let r = lease.conn.call(tool, args, self.opts.call_timeout).await?;
        result_text(&e.name, tool, &r)
    }

    /// Calls `tool` of the server `server` itself, past the priority order (the Session
    /// Proxy's `__reserved__server_tool`): `Ok(None)` when the session has no such server or
    /// the server no such tool (reserved tools included: never callable this way).
    pub async fn call_server_tool(
        &mut self,
        server: &str,
        tool: &str,
        args: &Value,
    ) -> Result<Option<String>, ExternalError> {
        if tool.starts_with(RESERVED_PREFIX) {
            return Ok(None);
        }
        if let Some(i) = self
            .native
            .servers
            .iter()
            .position(|s| s.domain.name == server)
        {
            let s = &mut self.native.servers[i];
            if s.domain.tool(tool).is_none() {
                return Ok(None);
            }
            return Ok(Some(s.call(tool, args).to_text(tool)));
        }
        let Some(j) = self.external.iter().position(|e| e.name == server) else {
            return Ok(None);
        };
        let listed = self.external[j]
            .lease
            .as_ref()
            .is_some_and(|l| l.conn.tool(tool).is_some());
        if !listed {
            return Ok(None);
        }
        self.call_external(j, tool, args).await.map(Some)
    }

    /// Per server in `world_state` order, its effects as the reference's servers give them:
    /// an external server's own `__reserved__geteffects` object as is; a native one's
    /// `initial_db_state`, `result_db_state`/`_hash`, `golden_db_state`/`_hash` (the config's
    /// golden calls replayed on a fresh session), `diff`, `rubrics` (and `rubrics_yesno`).
    pub async fn reference_effects(&self) -> Result<Vec<(String, Value)>, ExternalError> {
        let mut native = self.native_reference_effects()?;
        let mut out = Vec::new();
        for slot in &self.slots {
            match slot {
                Slot::Native(name) => {
                    if let Some(i) = native.iter().position(|(n, _)| n == name) {
                        out.push(native.swap_remove(i));
                    }
                }
                Slot::External(name) => {
                    out.push((name.clone(), Value::Object(self.effects(name).await?)));
                }
            }
        }
        Ok(out)
    }

    fn native_reference_effects(&self) -> Result<Vec<(String, Value)>, ExternalError> {
        if self.native.servers.is_empty() {
            return Ok(Vec::new());
        }
        let mut golden = self
            .sandbox
            .session(&self.native_task, self.clock)
            .map_err(|e| ExternalError::Native(e.to_string()))?;
        let mut out = Vec::new();
        for g in &mut golden.servers {
            let name = g.domain.name.clone();
            let config = self.native_task.world_state.get(&name);
            for (tool, params) in config
                .map(tb_core::task::golden_calls_of)
                .unwrap_or_default()
            {
                // as the reference's geteffects: a failing golden call is ignored
                let _ = g.call(&tool, &params);
            }
            let golden_state = g.state.stable_state();
            let result_state = self
                .native
                .server(&name)
                .map_or(Value::Null, |s| s.state.stable_state());
            let initial_state = self
                .initial
                .as_ref()
                .and_then(|i| i.server(&name))
                .map_or(Value::Null, |s| s.state.full_state());
            let mut fx = Map::new();
            fx.insert("initial_db_state".into(), initial_state);
            fx.insert(
                "result_db_hash".into(),
                json!(tb_sandbox::state::hash_stable(&result_state)),
            );
            fx.insert(
                "golden_db_hash".into(),
                json!(tb_sandbox::state::hash_stable(&golden_state)),
            );
            fx.insert(
                "diff".into(),
                Value::Array(tb_sandbox::diff::deep_diff(&result_state, &golden_state)),
            );
            fx.insert("result_db_state".into(), result_state);
            fx.insert("golden_db_state".into(), golden_state);
            fx.insert(
                "rubrics".into(),
                config
                    .and_then(|c| c.get("rubrics"))
                    .cloned()
                    .unwrap_or(Value::Null),
            );
            if let Some(r) = config.and_then(|c| c.get("rubrics_yesno")) {
                fx.insert("rubrics_yesno".into(), r.clone());
            }
            out.push((name, Value::Object(fx)));
        }
        Ok(out)
    }

    /// Tears every external server down (`__reserved__teardown` when listed; failures only
    /// logged), then ends and reaps its process.
    pub async fn close_all(&mut self) {
        let names: Vec<String> = self.external.iter().map(|e| e.name.clone()).collect();
        let budget = self.opts.call_timeout.min(Duration::from_secs(10));
        for name in &names {
            let broken = self
                .ext(name)
                .and_then(|e| e.lease.as_ref())
                .is_none_or(|l| l.conn.is_broken());
            if broken {
                continue;
            }
            if let Err(e) = self
                .reserved(name, "__reserved__teardown", Map::new(), budget)
                .await
            {
                tracing::warn!("{e}");
            }
        }
        for e in &mut self.external {
            if let Some(l) = e.lease.take() {
                let Leased { conn, permit } = l;
                conn.shutdown(EXIT_GRACE).await;
                drop(permit);
            }
        }
    }
}

/// Calls a reserved tool of a server if it lists it (`None` when it does not), injecting
/// `session_id` when its schema declares it.
async fn reserved_on(
    conn: &crate::server::ServerConn,
    session_id: &str,
    tool: &str,
    mut args: Map<String, Value>,
    budget: Duration,
) -> Result<Option<String>, ExternalError> {
    let Some(def) = conn.tool(tool) else {
        return Ok(None);
    };
    if def.pointer("/inputSchema/properties/session_id").is_some() {
        args.insert("session_id".into(), json!(session_id));
    }
    let r = conn.call(tool, args, budget).await?;
    result_text(&conn.name, tool, &r).map(Some)
}

/// A session dropped without [`ExternalSession::close_all`] (e.g. its episode task aborted)
/// still tears its servers down and reaps them, on a task of the current runtime. Without a
/// runtime the processes are killed as their handles drop.
impl Drop for ExternalSession {
    fn drop(&mut self) {
        let leases: Vec<Leased> = self
            .external
            .iter_mut()
            .filter_map(|e| e.lease.take())
            .collect();
        if leases.is_empty() {
            return;
        }
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let session_id = std::mem::take(&mut self.session_id);
        let budget = self.opts.call_timeout.min(Duration::from_secs(10));
        rt.spawn(async move {
            for Leased { conn, permit } in leases {
                if !conn.is_broken()
                    && let Err(e) = reserved_on(
                        &conn,
                        &session_id,
                        "__reserved__teardown",
                        Map::new(),
                        budget,
                    )
                    .await
                {
                    tracing::warn!("{e}");
                }
                conn.shutdown(EXIT_GRACE).await;
                drop(permit);
            }
        });
    }
}

/// Parses `__reserved__init`'s reply: `{}`, or an object with `status: "ok"` (the rest is the
/// init result).
pub fn parse_init(text: &str) -> Result<Map<String, Value>, String> {
    let bad = || {
        let mut t = text.to_string();
        if t.len() > 2000 {
            let mut cut = 2000;
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            t.truncate(cut);
            t.push('…');
        }
        format!("init failed: {t}")
    };
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut m)) => {
            if m.is_empty() {
                return Ok(m);
            }
            match m.remove("status") {
                Some(Value::String(s)) if s == "ok" => Ok(m),
                _ => Err(bad()),
            }
        }
        _ => Err(bad()),
    }
}

impl ToolBackend for ExternalSession {
    fn tool_list(&self) -> Vec<Value> {
        self.tool_list.clone()
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFut<'a, Result<String, String>> {
        Box::pin(async move {
            self.call_tool(tool, args)
                .await
                .map_err(|e| tb_core::error_text(&e))
        })
    }
}

impl EpisodeSession for ExternalSession {
    fn verdicts(&mut self) -> Option<BoxFut<'_, Result<Vec<StateVerdict>, String>>> {
        Some(Box::pin(async move {
            self.state_verdicts()
                .await
                .map_err(|e| tb_core::error_text(&e))
        }))
    }

    fn server_effects(&mut self) -> BoxFut<'_, Result<Vec<(String, Value)>, String>> {
        Box::pin(async move {
            self.reference_effects()
                .await
                .map_err(|e| tb_core::error_text(&e))
        })
    }

    fn init_results(&self) -> Map<String, Value> {
        ExternalSession::init_results(self)
    }

    fn call_server<'a>(
        &'a mut self,
        server: &'a str,
        tool: &'a str,
        args: &'a Value,
    ) -> BoxFut<'a, Result<Option<String>, String>> {
        Box::pin(async move {
            self.call_server_tool(server, tool, args)
                .await
                .map_err(|e| tb_core::error_text(&e))
        })
    }

    fn close(mut self: Box<Self>) -> BoxFut<'static, ()> {
        Box::pin(async move { self.close_all().await })
    }
}

impl RemoteTools for ExternalTools {
    fn open<'a>(
        &'a self,
        task_uid: &'a str,
    ) -> BoxFut<'a, Result<Box<dyn EpisodeSession>, String>> {
        Box::pin(async move {
            Err(format!(
                "task {task_uid}: external servers need the task, not only its id"
            ))
        })
    }

    fn open_task<'a>(
        &'a self,
        task: &'a Task,
    ) -> BoxFut<'a, Result<Option<Box<dyn EpisodeSession>>, String>> {
        Box::pin(async move {
            if !self.is_external(task) {
                // every server native (or unknown: the in-process session reports it)
                return Ok(None);
            }
            self.open_session(task)
                .await
                .map(|s| Some(Box::new(s) as Box<dyn EpisodeSession>))
                .map_err(|e| tb_core::error_text(&e))
        })
    }

    fn open_configs<'a>(
        &'a self,
        session_id: &'a str,
        configs: &'a [(String, Value)],
    ) -> BoxFut<'a, Result<Option<Box<dyn EpisodeSession>>, String>> {
        Box::pin(async move {
            self.open_configs(session_id, configs)
                .await
                .map(|s| s.map(|s| Box::new(s) as Box<dyn EpisodeSession>))
                .map_err(|e| tb_core::error_text(&e))
        })
    }

    fn warm(&self, tasks: &[Task]) {
        self.warm_for(tasks);
    }

    fn describe(&self) -> String {
        format!("external servers from {}", self.cfg.file.display())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn init_replies() {
        assert!(parse_init("{}").unwrap().is_empty());
        assert_eq!(
            parse_init(r#"{"status": "ok", "a": 1}"#).unwrap(),
            json!({"a": 1}).as_object().unwrap().clone()
        );
        assert!(
            parse_init(r#"{"status": "error", "message": "x"}"#)
                .unwrap_err()
                .contains('x')
        );
        assert!(parse_init("not json").is_err());
        assert!(parse_init("[1]").is_err());
        assert!(parse_init(r#"{"a": 1}"#).is_err());
    }

    #[test]
    fn routing() {
        let cfg = ServersConfig::parse(
            std::path::Path::new("s.yaml"),
            "servers:\n  a: {type: mcp-process, command: [x]}\n  b: {type: mcp-process, command: [x], prefer: external}\n",
        )
        .unwrap();
        assert_eq!(route(&cfg, Prefer::Native, true, "a"), Route::Native);
        assert_eq!(route(&cfg, Prefer::External, true, "a"), Route::External);
        assert_eq!(route(&cfg, Prefer::Native, true, "b"), Route::External);
        assert_eq!(route(&cfg, Prefer::Native, false, "a"), Route::External);
        assert_eq!(route(&cfg, Prefer::Native, true, "c"), Route::Native);
        assert_eq!(route(&cfg, Prefer::External, false, "c"), Route::Unknown);
    }
}
