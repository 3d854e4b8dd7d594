//! Servers that are not v1 table domains: they answer tool calls with their own exact texts
//! and report their own effects (`x.effects[server]`), which the test bodies read through the
//! evaluator (`tb-pyeval`). Today: `airline_tau_bench` (the Airline Tau-Bench 26-04 release).
//!
//! Each attempt gets its own server state (a copy of the loaded base state, built once per
//! init config), its ids seeded by the task id and the session clock (see the airline module).

use crate::airline;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use tb_sandbox::{Clock, ServerSession};

/// One attempt's server of this kind.
pub trait OwnServer: ServerSession + std::fmt::Debug + Sync + CloneServer {
    /// The MCP tool list (`name`, `description`, `inputSchema`), in registration order.
    fn tool_list(&self) -> Vec<Value>;
    /// Whether the server has this tool.
    fn has_tool(&self, name: &str) -> bool {
        self.tool_list().iter().any(|t| t["name"] == name)
    }
}

/// A deep copy of a server (sessions are values): what every `Clone` server has.
pub trait CloneServer {
    /// The copy, boxed.
    fn clone_box(&self) -> Box<dyn OwnServer>;
}

impl<T: OwnServer + Clone + 'static> CloneServer for T {
    fn clone_box(&self) -> Box<dyn OwnServer> {
        Box::new(self.clone())
    }
}

impl Clone for Box<dyn OwnServer> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl OwnServer for airline::AirlineSession {
    fn tool_list(&self) -> Vec<Value> {
        airline::Airline::get()
            .map(airline::Airline::tool_list)
            .unwrap_or_default()
    }

    fn has_tool(&self, name: &str) -> bool {
        airline::Airline::get().is_ok_and(|a| a.decls().any(|d| d.name == name))
    }
}

/// The server names handled here.
pub const SERVERS: &[&str] = &[
    airline::SERVER,
    crate::setup_check::BANKING,
    crate::setup_check::MS_STORE,
    crate::setup_check::EMAIL,
];

/// Whether `server` is one of these servers.
pub fn is_own(server: &str) -> bool {
    SERVERS.contains(&server)
}

/// Loaded base states, one per (server, init config), shared by the sessions of a sandbox.
#[derive(Debug, Default)]
pub struct OwnServers {
    data_root: PathBuf,
    airline: Mutex<HashMap<String, airline::Base>>,
    ms_store: Mutex<Option<crate::setup_check::MsStore>>,
}

impl OwnServers {
    /// Servers whose data paths (`$THINKINGBOX_DATA/...`) resolve under `data_root`.
    pub fn new(data_root: &Path) -> Self {
        OwnServers {
            data_root: data_root.to_path_buf(),
            airline: Mutex::default(),
            ms_store: Mutex::default(),
        }
    }

    /// A fresh session of `server` for the task `task_uid` with its init `config`.
    pub fn open(
        &self,
        server: &str,
        config: &Value,
        task_uid: &str,
        clock: Clock,
    ) -> Result<Box<dyn OwnServer>, String> {
        match server {
            airline::SERVER => {
                let key = serde_json::to_string(config).unwrap_or_default();
                let base = {
                    let cache = self
                        .airline
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    cache.get(&key).cloned()
                };
                let base = if let Some(b) = base {
                    b
                } else {
                    let b =
                        airline::Base::load(config, &self.data_root).map_err(|e| e.to_string())?;
                    let mut cache = self
                        .airline
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    cache.entry(key).or_insert(b).clone()
                };
                Ok(Box::new(base.session(task_uid, clock)))
            }
            crate::setup_check::BANKING => {
                Ok(Box::new(crate::setup_check::Banking::init(config, clock)?))
            }
            crate::setup_check::EMAIL => Ok(Box::new(crate::setup_check::Email::init(
                config, task_uid, clock,
            )?)),
            crate::setup_check::MS_STORE => {
                let mut m = self
                    .ms_store
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if m.is_none() {
                    *m = Some(crate::setup_check::MsStore::load(&self.data_root)?);
                }
                Ok(Box::new(m.clone().ok_or("ms_store did not load")?))
            }
            other => Err(format!("`{other}` is not a native non-table server")),
        }
    }
}

/// Shared handle.
pub type SharedOwnServers = Arc<OwnServers>;
