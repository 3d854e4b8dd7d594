//! Errors of the session registry, each with the HTTP status it maps to.

use std::time::Duration;

/// Why a session operation was refused or failed. Every variant's text is meant for the caller.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// No session with this id (never created, deleted, or reaped after idling).
    #[error("unknown session `{0}` (never created, deleted, or removed after idling)")]
    UnknownSession(String),
    /// A session with this id already exists.
    #[error("Session already exists: `{0}`")]
    Duplicate(String),
    /// The server holds its maximum number of sessions.
    #[error("session limit reached ({max} open sessions): delete sessions or raise --max-sessions")]
    Full {
        /// The limit.
        max: usize,
    },
    /// The task id could not be resolved or loaded.
    #[error("cannot load task `{task}`: {message}")]
    Task {
        /// The id as given.
        task: String,
        /// What went wrong.
        message: String,
    },
    /// The sandbox could not open the session (unknown server, bad data patch).
    #[error("{0}")]
    Init(String),
    /// A request names a server this build does not have.
    #[error("Server {server} does not exist (known: {known})")]
    UnknownServer {
        /// Requested server.
        server: String,
        /// Known servers.
        known: String,
    },
    /// A requested visible tool is not exported by any of the session's servers.
    #[error("Tool {0} does not exist")]
    UnknownTool(String),
    /// The tool call (or effects computation) did not finish in time.
    #[error("Tool call timed out after {} seconds", .0.as_secs_f64())]
    Timeout(Duration),
    /// A previous call on the same session is still running (it timed out and has not ended).
    #[error(
        "session `{0}` is busy: a previous call is still running (it exceeded the call timeout)"
    )]
    Busy(String),
    /// The request itself is malformed.
    #[error("{0}")]
    BadRequest(String),
    /// The session's remote backend failed (an external tool server gone, hung or answering
    /// garbage): the session cannot go on.
    #[error("tool server failure: {0}")]
    Backend(String),
    /// A bug or a crashed tool; the session may be unusable.
    #[error("internal error: {0}")]
    Internal(String),
}

impl SessionError {
    /// The HTTP status this error answers with on the admin surface.
    pub fn status(&self) -> u16 {
        match self {
            SessionError::UnknownSession(_) => 404,
            SessionError::Duplicate(_) => 409,
            SessionError::Full { .. } => 503,
            SessionError::Task { .. }
            | SessionError::Init(_)
            | SessionError::UnknownServer { .. }
            | SessionError::UnknownTool(_)
            | SessionError::BadRequest(_) => 400,
            SessionError::Timeout(_) => 504,
            SessionError::Busy(_) => 409,
            SessionError::Internal(_) => 500,
            SessionError::Backend(_) => 502,
        }
    }
}
