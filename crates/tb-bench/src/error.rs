//! The bench's error: a message, or a library error with what was being done.

/// Why a bench run stopped.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A failure described here.
    #[error("{0}")]
    Msg(String),
    /// A library's error.
    #[error(transparent)]
    Other(Box<dyn std::error::Error + Send + Sync>),
    /// A library's error while doing `context`.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// What failed.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// The bench's result.
pub type Result<T, E = BenchError> = std::result::Result<T, E>;

macro_rules! from_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for BenchError {
            fn from(e: $t) -> Self {
                BenchError::Other(Box::new(e))
            }
        }
    )*};
}

from_errors!(
    std::io::Error,
    serde_json::Error,
    std::net::AddrParseError,
    tokio::task::JoinError,
    tb_dataset::DatasetError,
    tb_eval::root::RootError,
    tb_sandbox::DomainError,
    tb_llm::LlmError,
    tb_mcp::SessionError,
    tb_llm::ConfigError,
    tb_mcp::client::ClientError,
);

impl From<String> for BenchError {
    fn from(e: String) -> Self {
        BenchError::Msg(e)
    }
}

/// `bail!(...)`: return a [`BenchError::Msg`].
macro_rules! bail {
    ($($t:tt)*) => { return Err($crate::error::BenchError::Msg(format!($($t)*))) };
}
pub(crate) use bail;

/// Adds what was being done to an error (or names a missing value).
pub(crate) trait Context<T> {
    /// With this context.
    fn context(self, what: impl Into<String>) -> Result<T>;
    /// With a context built on failure.
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: std::error::Error + Send + Sync + 'static> Context<T> for std::result::Result<T, E> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.map_err(|e| BenchError::Context {
            context: what.into(),
            source: Box::new(e),
        })
    }
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| BenchError::Context {
            context: what().into(),
            source: Box::new(e),
        })
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, what: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| BenchError::Msg(what.into()))
    }
    fn with_context<S: Into<String>>(self, what: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| BenchError::Msg(what().into()))
    }
}
