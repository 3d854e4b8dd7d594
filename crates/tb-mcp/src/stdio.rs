//! One session over stdio, for desktop MCP clients: the process is the session. Logs must go
//! to stderr; stdout carries the protocol.

use crate::error::SessionError;
use crate::mcp::SessionHandler;
use crate::registry::{Effects, Registry};
use rmcp::ServiceExt;
use rmcp::service::RoleServer;
use rmcp::transport::IntoTransport;
use std::sync::Arc;

/// Errors serving one session.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The session could not be opened or graded.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The MCP transport failed.
    #[error("MCP transport: {0}")]
    Transport(String),
}

/// Opens a session for `task`, serves it on stdin/stdout until the client disconnects, and
/// returns the session's effects at that point.
pub async fn serve_stdio(registry: Arc<Registry>, task: &str) -> Result<Effects, StdioError> {
    serve_one(registry, task, rmcp::transport::stdio()).await
}

/// Opens a session for `task` and serves it alone on `transport` (stdio, a pipe, a socket)
/// until the client disconnects; then grades it, closes it and returns the effects.
pub async fn serve_one<T, E, A>(
    registry: Arc<Registry>,
    task: &str,
    transport: T,
) -> Result<Effects, StdioError>
where
    T: IntoTransport<RoleServer, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let reg = registry.clone();
    let task_id = task.to_string();
    let slot = tokio::task::spawn_blocking(move || reg.create_for_task(&task_id))
        .await
        .map_err(|e| SessionError::Internal(e.to_string()))??;
    tracing::info!(session = slot.id(), task, "serving one session");
    let handler = SessionHandler::bound(registry.clone(), slot.id().to_string());
    let served = async {
        let running = handler
            .serve(transport)
            .await
            .map_err(|e| StdioError::Transport(e.to_string()))?;
        let reason = running
            .waiting()
            .await
            .map_err(|e| StdioError::Transport(e.to_string()))?;
        tracing::info!(?reason, "client disconnected");
        Ok::<(), StdioError>(())
    }
    .await;
    let effects = registry.effects(&slot, true).await;
    let _ = registry.remove(slot.id());
    served?;
    Ok(effects?)
}
