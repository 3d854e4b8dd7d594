//! MCP sessions for any agent: each session is one task's fresh sandbox, reachable over MCP
//! (Streamable HTTP, or stdio for desktop clients) with exactly that task's tools; the evaluator
//! opens, grades and closes sessions through an admin surface the agent never sees; and the
//! reference Session Proxy API lets the Python `tb infer` use this server as its tool backend.
//!
//! - [`registry`]: sessions, limits, effects (verdicts identical to the in-process judge).
//! - [`mcp`]: the MCP server handler (rmcp).
//! - [`http`]: the HTTP application (MCP, admin, Session Proxy API) and the idle reaper.
//! - [`stdio`]: one session over stdio.
//! - [`client`]: [`client::McpTools`], a client that runs a task through a server.
//! - [`sdk_http`]: the HTTP backend of that client's rmcp transport (a `tools/call` reply
//!   parsed as what it answers).

pub mod client;
pub mod error;
pub mod http;
pub mod input;
pub mod jsonrpc;
pub mod mcp;
pub mod registry;
pub mod sdk_http;
pub mod stdio;

pub use client::{McpServer, McpTools, ToolReply};
pub use error::SessionError;
pub use http::{HttpOptions, RunningServer};
pub use registry::{Limits, Registry};
