//! The state engine and the tool runtime of thinkingbox-rs.
//!
//! - [`schema`]: field kinds, models and tables, written as compact text.
//! - [`coerce`]: pydantic-style lax validation into JSON-mode values, with pydantic's messages.
//! - [`state`]: tables of rows, the reference's create/update/delete and data-patch rules,
//!   stable state and its sha256 hash.
//! - [`diff`]: the reference's deep diff.
//! - [`pyjson`]: the state's JSON text and sha256 (Python's `json.dumps` from `tb-python`).
//! - [`runtime`]: domains, sessions, tool calls and their error shapes.
//! - [`tool`]: the vocabulary tool functions are written in (accessors, errors, registration).

pub mod coerce;
pub mod diff;
pub mod pyjson;
pub mod runtime;
pub mod schema;
pub mod state;
pub mod tool;

pub use runtime::{
    Args, CallOutcome, Clock, Domain, DomainError, Loaded, Prepared, ServerSession, Session, Tool,
    ToolReply,
};
pub use state::{Row, SharedRow, State, StateError};
pub use tool::{Fields, Output, ToolError, ToolFn, ToolResult, Tools, wrap};
