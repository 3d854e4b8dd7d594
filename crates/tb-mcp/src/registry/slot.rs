//! One open session (a slot): its id, how it was made, the tools it shows, and its session
//! behind a lock.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU8, AtomicU64};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tb_core::Task;
use tb_eval::root::TaskSession;
use tb_eval::tools::EpisodeSession;

/// Where calls of a tool run (per [`ToolSet`], so per task): not yet seen (the first call runs on
/// the blocking pool, under the call timeout), seen fast (inline), or seen slow (blocking pool).
pub(super) const UNSEEN: u8 = 0;
pub(super) const INLINE: u8 = 1;
pub(super) const OFFLOAD: u8 = 2;

/// The tools a session shows: MCP-shaped JSON (`name`, `description`, `inputSchema`), in the
/// order the session's own tool list gives them.
#[derive(Debug)]
pub struct ToolSet {
    list: Vec<Value>,
    /// Visible names, each with where its calls run (`UNSEEN`, `INLINE`, `OFFLOAD`).
    pub(super) names: HashMap<String, AtomicU8>,
}

impl ToolSet {
    pub(super) fn new(list: Vec<Value>) -> Self {
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

/// What a slot's lock guards: its session, in process or on a remote backend (`None` once a
/// remote one is closed). Holding the lock is what makes calls on one session run one at a time.
pub(super) type Live = Option<Box<dyn EpisodeSession>>;

/// One open session.
#[derive(Debug)]
pub struct Slot {
    pub(super) id: String,
    pub(super) origin: Origin,
    pub(super) tools: Arc<ToolSet>,
    /// The in-process session as it was opened (initial states for effects, the servers'
    /// tools for `__reserved__server_tool`); `None` when a remote backend serves the slot.
    pub(super) initial: Option<TaskSession>,
    pub(super) live: Arc<tokio::sync::Mutex<Live>>,
    /// The calls so far, kept when the session logs them (a proxy session made with
    /// `geteffects_proxy_info`); appended while the call still holds the session's lock.
    pub(super) call_log: Mutex<Vec<Value>>,
    pub(super) call_timeout: Duration,
    pub(super) last_used_ms: AtomicU64,
    pub(super) info: Mutex<Map<String, Value>>,
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
        self.initial.is_none()
    }

    /// Whether the session logs its calls (a proxy session made with `geteffects_proxy_info`).
    pub(super) fn logs_calls(&self) -> bool {
        matches!(&self.origin, Origin::Proxy(o) if o.geteffects_proxy_info)
    }

    /// Whether `call_tool` results of this session are forced to JSON.
    pub(super) fn always_json(&self) -> bool {
        matches!(&self.origin, Origin::Proxy(o) if o.always_json_output)
    }

    /// Merges `update` into the session's free-form info and returns it (`session_info`).
    pub fn info(&self, update: &Map<String, Value>) -> Map<String, Value> {
        let mut info = super::lock(&self.info);
        for (k, v) in update {
            info.insert(k.clone(), v.clone());
        }
        info.clone()
    }
}
