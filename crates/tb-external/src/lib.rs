//! Bring your own tool server: any ThinkingBox-compatible MCP server, registered in a
//! `servers.yaml` as the reference does, runs beside (or instead of) the native domains.
//!
//! The protocol is plain MCP plus three reserved tools the agent never sees:
//! `__reserved__init(config)` (the task's `world_state` entry for the server; replies `{}` or
//! `status: "ok"`), `__reserved__geteffects` (what the checks read: `result_db_hash`,
//! `golden_db_hash`, `diff`, ...) and `__reserved__teardown`.
//!
//! - [`config`]: `servers.yaml` with file:line errors.
//! - [`server`]: one started server (rmcp client on a child's stdio, streamable-http or legacy
//!   SSE), calls with timeouts, shutdown that reaps the process.
//! - [`sse`]: the legacy MCP HTTP+SSE client transport (spec 2024-11-05), which rmcp dropped.
//! - [`pool`]: servers started ahead of demand, concurrency limits per server.
//! - [`session`]: a task's session over native and external servers, the
//!   [`tb_eval::tools::RemoteTools`] the episode loop calls.

pub mod config;
pub mod error;
pub mod pool;
pub mod server;
pub mod session;
pub mod sse;

pub use config::{ConfigError, ServerKind, ServerSpec, ServersConfig};
pub use error::ExternalError;
pub use server::{ServerConn, StartOptions};
pub use session::{ExternalOptions, ExternalSession, ExternalTools, Prefer, Route};
