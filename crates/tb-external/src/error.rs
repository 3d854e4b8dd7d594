//! Errors of external servers. Every one of them is operational: the attempt becomes a system
//! error (errors sidecar), never a model failure.

/// An external server failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExternalError {
    /// A server failed at a step (start, init, a call, effects, ...).
    #[error("server `{server}`: {what}: {message}")]
    Server {
        /// Server name.
        server: String,
        /// The step.
        what: String,
        /// Why.
        message: String,
    },
    /// A task names a server that is neither native nor in servers.yaml.
    #[error("task {task}: server `{server}` is neither a native domain nor in {file}")]
    UnknownServer {
        /// Task uid.
        task: String,
        /// Server.
        server: String,
        /// The servers file (or "no --servers file").
        file: String,
    },
    /// A native part of the session could not be built.
    #[error("{0}")]
    Native(String),
}
