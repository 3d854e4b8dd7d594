//! One session over stdio, for desktop MCP clients: the process is the session. Logs must go
//! to stderr; stdout carries the protocol.

use crate::error::SessionError;
use crate::mcp::SessionHandler;
use crate::registry::{Effects, Registry};
use rmcp::ServiceExt;
use std::sync::Arc;

/// Errors serving over stdio.
#[derive(Debug, thiserror::Error)]
pub enum StdioError {
    /// The session could not be opened or graded.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The MCP transport failed.
    #[error("MCP over stdio: {0}")]
    Transport(String),
}

/// Opens a session for `task`, serves it on stdin/stdout until the client disconnects, and
/// returns the session's effects at that point.
pub async fn serve_stdio(registry: Arc<Registry>, task: &str) -> Result<Effects, StdioError> {
    let reg = registry.clone();
    let task_id = task.to_string();
    let slot = tokio::task::spawn_blocking(move || reg.create_for_task(&task_id))
        .await
        .map_err(|e| SessionError::Internal(e.to_string()))??;
    tracing::info!(session = slot.id(), task, "serving one session on stdio");
    let handler = SessionHandler::bound(registry.clone(), slot.id().to_string());
    let running = handler
        .serve(rmcp::transport::stdio())
        .await
        .map_err(|e| StdioError::Transport(e.to_string()))?;
    let reason = running
        .waiting()
        .await
        .map_err(|e| StdioError::Transport(e.to_string()))?;
    tracing::info!(?reason, "stdio client disconnected");
    let effects = registry.effects(&slot, true).await?;
    let _ = registry.remove(slot.id());
    Ok(effects)
}
