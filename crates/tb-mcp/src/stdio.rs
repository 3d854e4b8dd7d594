//! One session over stdio, for desktop MCP clients: the process is the session. Logs must go
//! to stderr; stdout carries the protocol.
//!
//! Every line gets an answer: each line read is checked ([`crate::jsonrpc::check`]) before
//! rmcp sees it, and a line that is not JSON, not UTF-8, too deep, longer than
//! [`MAX_LINE_BYTES`] or not a valid request is answered with its JSON-RPC error on stdout
//! (a too-long line is skipped to its end without being held in memory).

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use crate::error::SessionError;
use crate::mcp::SessionHandler;
use crate::registry::{Effects, Registry};
use rmcp::ServiceExt;
use std::sync::Arc;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};

/// The longest line read (8 MiB, the HTTP body limit); longer ones are answered with a parse
/// error and skipped.
pub const MAX_LINE_BYTES: usize = 8 << 20;

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
    serve_one(registry, task, tokio::io::stdin(), tokio::io::stdout()).await
}

/// Opens a session for `task` and serves it alone on `input` and `output` (stdio, a pipe, a
/// socket), one JSON-RPC message per line, until the client disconnects; then grades it,
/// closes it and returns the effects.
pub async fn serve_one<R, W>(
    registry: Arc<Registry>,
    task: &str,
    input: R,
    output: W,
) -> Result<Effects, StdioError>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let slot = registry.create_for_task(task).await?;
    tracing::info!(session = slot.id(), task, "serving one session");
    let handler = SessionHandler::bound(registry.clone(), slot.id().to_string());
    // rmcp reads checked lines from one pipe and writes its replies to another; one writer
    // task puts its replies and the rejections, line by line, on `output`.
    let (to_rmcp, rmcp_in) = tokio::io::duplex(1 << 16);
    let (rmcp_out, from_rmcp) = tokio::io::duplex(1 << 16);
    let (reject_tx, reject_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let reader = tokio::spawn(read_lines(input, to_rmcp, reject_tx));
    let writer = tokio::spawn(write_lines(from_rmcp, reject_rx, output));
    let served = async {
        let running = handler
            .serve::<_, std::io::Error, _>((rmcp_in, rmcp_out))
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
    reader.abort();
    let _ = writer.await;
    let effects = registry.effects(&slot, true).await;
    let _ = registry.remove(slot.id());
    served?;
    Ok(effects?)
}

/// Reads lines from `input` (at most [`MAX_LINE_BYTES`] each), hands the acceptable ones to
/// rmcp and the rejections to the writer. Ends at end of input (which ends rmcp's input).
async fn read_lines<R: AsyncRead + Unpin>(
    input: R,
    mut to_rmcp: tokio::io::DuplexStream,
    rejects: tokio::sync::mpsc::UnboundedSender<String>,
) {
    let mut input = BufReader::with_capacity(1 << 16, input);
    let mut line: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        let buf = match input.fill_buf().await {
            Ok(b) => b,
            Err(e) => {
                tracing::info!(error = %e, "stdin failed");
                break;
            }
        };
        if buf.is_empty() {
            // End of input: a last line without a newline still counts.
            if !line.is_empty() || too_long {
                finish_line(&line, too_long, &mut to_rmcp, &rejects).await;
            }
            break;
        }
        let (chunk, ended) = match buf.iter().position(|&b| b == b'\n') {
            Some(i) => (buf.get(..i).unwrap_or_default(), Some(i + 1)),
            None => (buf, None),
        };
        if !too_long {
            if line.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                line = Vec::new();
            } else {
                line.extend_from_slice(chunk);
            }
        }
        let used = ended.unwrap_or(buf.len());
        input.consume(used);
        if ended.is_some() {
            if !finish_line(&line, too_long, &mut to_rmcp, &rejects).await {
                break;
            }
            line.clear();
            if line.capacity() > 1 << 20 {
                line = Vec::new();
            }
            too_long = false;
        }
    }
    let _ = to_rmcp.shutdown().await;
}

/// One whole line: to rmcp, or its rejection to the writer. `false` when rmcp is gone.
async fn finish_line(
    line: &[u8],
    too_long: bool,
    to_rmcp: &mut tokio::io::DuplexStream,
    rejects: &tokio::sync::mpsc::UnboundedSender<String>,
) -> bool {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    if too_long {
        let r = crate::jsonrpc::Rejection::parse(format!(
            "Parse error: line longer than {MAX_LINE_BYTES} bytes"
        ));
        return rejects.send(r.to_line()).is_ok();
    }
    if line.iter().all(u8::is_ascii_whitespace) {
        return true;
    }
    match crate::jsonrpc::check(line) {
        Err(r) => rejects.send(r.to_line()).is_ok(),
        Ok(_) => to_rmcp.write_all(line).await.is_ok() && to_rmcp.write_all(b"\n").await.is_ok(),
    }
}

/// Writes rmcp's reply lines and the rejections to `output` until both are done.
async fn write_lines<W: AsyncWrite + Unpin>(
    from_rmcp: tokio::io::DuplexStream,
    mut rejects: tokio::sync::mpsc::UnboundedReceiver<String>,
    mut output: W,
) {
    let mut replies = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let (mut rmcp_open, mut rejects_open) = (true, true);
    while rmcp_open || rejects_open {
        let out: Vec<u8> = tokio::select! {
            r = replies.read_until(b'\n', &mut line), if rmcp_open => match r {
                Ok(0) | Err(_) => { rmcp_open = false; continue; }
                Ok(_) => std::mem::take(&mut line),
            },
            m = rejects.recv(), if rejects_open => match m {
                None => { rejects_open = false; continue; }
                Some(mut t) => { t.push('\n'); t.into_bytes() }
            },
        };
        if output.write_all(&out).await.is_err() || output.flush().await.is_err() {
            break;
        }
    }
}
