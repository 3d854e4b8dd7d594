//! HTTP serving for `tb`'s servers (`tb mcp-start`, `tb openenv`) that a slow or hostile
//! client cannot wedge.
//!
//! [`serve`] runs an axum [`Router`] on a TCP listener like `axum::serve`, plus:
//!
//! - a **header read timeout** on every request (a dripped or stalled header, and a keep-alive
//!   connection idle past it, is closed);
//! - a **connection cap** below the process's file-descriptor limit. Past the cap, a few more
//!   connections are still taken, with a much shorter header timeout (so `/health` and other
//!   quick requests keep answering while stalled connections hold the regular places); past
//!   that, new connections are closed at once instead of queueing in the kernel;
//! - accept errors (`EMFILE`) back off instead of spinning;
//! - a **lingering close**: a connection dropped while the client is still sending (a body
//!   or WebSocket message over the limit) is shut down for writing and drained for a moment
//!   before it is closed, so the client reads the answer or close frame sent to it instead
//!   of a TCP reset.
//!
//! [`read_body`] reads a request body within a size limit and a **body read timeout**.

use axum::Router;
use axum::body::{Body, Bytes, HttpBody};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;

/// Limits on the connections of one server.
#[derive(Debug, Clone)]
pub struct ServeLimits {
    /// Connections served with the regular header timeout.
    pub max_connections: usize,
    /// Connections taken beyond `max_connections`, each with `busy_header_timeout`; beyond
    /// both, new connections are closed as soon as they are accepted.
    pub overflow_connections: usize,
    /// Longest a request's header may take to arrive (from the connection's start, or from the
    /// end of the previous response on a kept-alive connection).
    pub header_timeout: Duration,
    /// The header timeout of connections past `max_connections`.
    pub busy_header_timeout: Duration,
    /// Longest a request body may take to arrive (for [`read_body`]).
    pub body_timeout: Duration,
}

impl Default for ServeLimits {
    /// Connections: see [`default_max_connections`]; 64 overflow; 10 s header, 1 s header
    /// when busy, 30 s body.
    fn default() -> Self {
        ServeLimits {
            max_connections: default_max_connections(),
            overflow_connections: 64,
            header_timeout: Duration::from_secs(10),
            busy_header_timeout: Duration::from_secs(1),
            body_timeout: Duration::from_secs(30),
        }
    }
}

/// The default connection cap: 4,096, or less when the file-descriptor limit (`ulimit -n`)
/// leaves less room (a quarter of the descriptors stays free for the data files, the overflow
/// connections and the rest of the process), and at least 16.
pub fn default_max_connections() -> usize {
    let fds = fd_limit().unwrap_or(1024);
    let room = fds.saturating_sub(fds / 4).saturating_sub(64 + 64);
    room.clamp(16, 4096)
}

/// The soft `RLIMIT_NOFILE`, when known.
pub fn fd_limit() -> Option<usize> {
    #[cfg(unix)]
    {
        // `None` is `RLIM_INFINITY`.
        let r = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        Some(
            r.current
                .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        )
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Serves `app` on `listener` until `shutdown` resolves, then stops accepting, lets every
/// connection finish its request in flight, and returns.
pub async fn serve(
    listener: TcpListener,
    app: Router,
    limits: ServeLimits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let active = Arc::new(AtomicUsize::new(0));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    // Every connection holds a receiver of `done_rx`; `done_tx.closed()` resolves when all
    // are gone.
    let (done_tx, done_rx) = tokio::sync::watch::channel(());
    let mut shutdown: Pin<Box<dyn Future<Output = ()> + Send>> = Box::pin(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            a = listener.accept() => a,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // EMFILE, ENFILE, ECONNABORTED...: back off a little instead of spinning.
                tracing::warn!(error = %e, "accept failed");
                tokio::select! {
                    () = &mut shutdown => break,
                    () = tokio::time::sleep(Duration::from_millis(50)) => {}
                }
                continue;
            }
        };
        let place = Place::take(&active);
        if place.n > limits.max_connections + limits.overflow_connections {
            tracing::warn!(%peer, open = place.n - 1, "connection refused: too many open connections");
            drop(stream);
            continue;
        }
        let header_timeout = if place.n > limits.max_connections {
            limits.busy_header_timeout
        } else {
            limits.header_timeout
        };
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!(error = %e, "TCP_NODELAY not set");
        }
        let service = TowerToHyperService::new(app.clone());
        let mut stop = stop_rx.clone();
        let done = done_rx.clone();
        tokio::spawn(async move {
            let _place = place;
            let _done = done;
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder
                .serve_connection(TokioIo::new(Lingering(Some(stream))), service)
                .with_upgrades();
            tokio::pin!(conn);
            let stopping = async move {
                let _ = stop.wait_for(|s| *s).await;
            };
            tokio::select! {
                r = conn.as_mut() => {
                    if let Err(e) = r {
                        tracing::debug!(%peer, error = %e, "connection ended");
                    }
                }
                () = stopping => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
    drop(listener);
    let _ = stop_tx.send(true);
    drop(done_rx);
    done_tx.closed().await;
    Ok(())
}

/// One open connection's place in the count; released on drop.
struct Place {
    active: Arc<AtomicUsize>,
    /// The count with this connection.
    n: usize,
}

impl Place {
    fn take(active: &Arc<AtomicUsize>) -> Place {
        let n = active.fetch_add(1, Ordering::AcqRel) + 1;
        Place {
            active: active.clone(),
            n,
        }
    }
}

impl Drop for Place {
    fn drop(&mut self) {
        self.active.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Why a body could not be read.
#[derive(Debug, thiserror::Error)]
pub enum BodyError {
    /// Larger than the limit.
    #[error("request body larger than the limit of {limit} bytes")]
    TooLarge {
        /// The limit, in bytes.
        limit: usize,
    },
    /// Did not arrive in time.
    #[error("request body not received within {} seconds", .0.as_secs_f64())]
    Timeout(Duration),
    /// The connection failed while reading.
    #[error("failed to read the request body: {0}")]
    Read(String),
}

/// Reads a whole body, at most `limit` bytes, within `timeout`.
pub async fn read_body(body: Body, limit: usize, timeout: Duration) -> Result<Bytes, BodyError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(BodyError::TooLarge { limit });
    }
    let read = async move {
        let mut body = body;
        let mut buf: Vec<u8> = Vec::new();
        let mut single: Option<Bytes> = None;
        loop {
            let frame = std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await;
            let Some(frame) = frame else { break };
            let frame = frame.map_err(|e| BodyError::Read(e.to_string()))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let have = single.as_ref().map_or(buf.len(), Bytes::len);
            if have + data.len() > limit {
                return Err(BodyError::TooLarge { limit });
            }
            match single.take() {
                None if buf.is_empty() => single = Some(data),
                None => buf.extend_from_slice(&data),
                Some(first) => {
                    buf.reserve(first.len() + data.len());
                    buf.extend_from_slice(&first);
                    buf.extend_from_slice(&data);
                }
            }
        }
        Ok(single.unwrap_or_else(|| Bytes::from(buf)))
    };
    tokio::time::timeout(timeout, read)
        .await
        .map_err(|_| BodyError::Timeout(timeout))?
}

/// Longest a dropped connection is drained (see [`Lingering`]).
const LINGER: Duration = Duration::from_secs(2);
/// Most bytes drained from a dropped connection.
const LINGER_BYTES: usize = 128 << 20;

/// A connection that, when dropped, sends FIN and drains what the client still sends (for at
/// most [`LINGER`] and [`LINGER_BYTES`]) before closing: closing a socket with unread data
/// makes the kernel send a reset, which can destroy the reply the client has not read yet.
struct Lingering(Option<tokio::net::TcpStream>);

impl Drop for Lingering {
    fn drop(&mut self) {
        let Some(stream) = self.0.take() else { return };
        let Ok(rt) = tokio::runtime::Handle::try_current() else {
            return;
        };
        rt.spawn(async move {
            use tokio::io::{AsyncReadExt, AsyncWriteExt};
            let mut stream = stream;
            let _ = stream.shutdown().await;
            let mut buf = vec![0u8; 64 << 10];
            let mut drained = 0usize;
            let _ = tokio::time::timeout(LINGER, async {
                while drained < LINGER_BYTES {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => break,
                        Ok(n) => drained += n,
                    }
                }
            })
            .await;
        });
    }
}

impl tokio::io::AsyncRead for Lingering {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.0.as_mut() {
            Some(s) => Pin::new(s).poll_read(cx, buf),
            None => std::task::Poll::Ready(Ok(())),
        }
    }
}

impl tokio::io::AsyncWrite for Lingering {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.0.as_mut() {
            Some(s) => Pin::new(s).poll_write(cx, buf),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }

    fn poll_flush(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.0.as_mut() {
            Some(s) => Pin::new(s).poll_flush(cx),
            None => std::task::Poll::Ready(Ok(())),
        }
    }

    fn poll_shutdown(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        match self.0.as_mut() {
            Some(s) => Pin::new(s).poll_shutdown(cx),
            None => std::task::Poll::Ready(Ok(())),
        }
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        match self.0.as_mut() {
            Some(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            None => std::task::Poll::Ready(Err(std::io::ErrorKind::NotConnected.into())),
        }
    }

    fn is_write_vectored(&self) -> bool {
        self.0
            .as_ref()
            .is_some_and(tokio::io::AsyncWrite::is_write_vectored)
    }
}
