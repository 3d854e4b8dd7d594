//! The HTTP side: routes, the `/ws` session loop, the session limit and the idle reaper.

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use crate::env::{ENV_NAME, Options, Shared};
use crate::episode::Environment;
use crate::protocol::{
    ClientFrame, ErrorCode, ErrorFrame, observation_frame, parse_frame, schema, state_frame,
};
use axum::Router;
use axum::extract::State;
use axum::extract::ws::{CloseFrame, Message, WebSocket, WebSocketUpgrade};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json, Response};
use axum::routing::get;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// Frames a client may send while a step is still running (the protocol is one request at a
/// time; a few early frames are queued, more close the session).
const MAX_QUEUED_FRAMES: usize = 8;

/// Stands in the frame queue for a message over the size limit (no client text can be this:
/// a NUL byte never survives JSON parsing of a frame either way).
const TOO_BIG: &str = "\0too big";

#[derive(Debug)]
struct SessionEntry {
    last_ms: AtomicU64,
    busy: AtomicBool,
    cancel: CancellationToken,
}

/// Open sessions, their limit and their last activity.
#[derive(Debug)]
pub struct Sessions {
    max: usize,
    closing: CancellationToken,
    epoch: Instant,
    next: AtomicU64,
    open: Mutex<HashMap<u64, Arc<SessionEntry>>>,
}

/// A session's place in [`Sessions`]; removed on drop.
#[derive(Debug)]
pub struct SessionGuard {
    sessions: Arc<Sessions>,
    id: u64,
    entry: Arc<SessionEntry>,
}

impl Drop for SessionGuard {
    fn drop(&mut self) {
        if let Ok(mut g) = self.sessions.open.lock() {
            g.remove(&self.id);
        }
    }
}

impl SessionGuard {
    fn touch(&self) {
        self.entry
            .last_ms
            .store(self.sessions.now_ms(), Ordering::Relaxed);
    }

    fn busy(&self, b: bool) {
        self.entry.busy.store(b, Ordering::Relaxed);
        self.touch();
    }
}

impl Sessions {
    /// Room for `max` sessions; cancelling `closing` closes them all (server shutdown).
    pub fn new(max: usize, closing: CancellationToken) -> Arc<Self> {
        Arc::new(Sessions {
            max,
            closing,
            epoch: Instant::now(),
            next: AtomicU64::new(1),
            open: Mutex::new(HashMap::new()),
        })
    }

    fn now_ms(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Open sessions.
    pub fn len(&self) -> usize {
        self.open.lock().map_or(0, |g| g.len())
    }

    /// Whether none is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Takes a place, or says how full it is: `Err((active, max))`.
    pub fn open(self: &Arc<Self>) -> Result<SessionGuard, (usize, usize)> {
        let mut g = self.open.lock().map_err(|_| (0, self.max))?;
        if g.len() >= self.max {
            return Err((g.len(), self.max));
        }
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let entry = Arc::new(SessionEntry {
            last_ms: AtomicU64::new(self.now_ms()),
            busy: AtomicBool::new(false),
            cancel: self.closing.child_token(),
        });
        g.insert(id, entry.clone());
        Ok(SessionGuard {
            sessions: self.clone(),
            id,
            entry,
        })
    }

    /// Closes sessions without a frame for `idle` (not those in the middle of a step).
    /// Returns how many were told to close.
    pub fn reap(&self, idle: Duration) -> usize {
        let now = self.now_ms();
        let limit = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        let Ok(g) = self.open.lock() else { return 0 };
        let mut n = 0;
        for e in g.values() {
            if !e.busy.load(Ordering::Relaxed)
                && now.saturating_sub(e.last_ms.load(Ordering::Relaxed)) >= limit
                && !e.cancel.is_cancelled()
            {
                e.cancel.cancel();
                n += 1;
            }
        }
        if n > 0 {
            tracing::info!(count = n, "closing idle sessions");
        }
        n
    }
}

#[derive(Debug, Clone)]
struct AppState {
    shared: Arc<Shared>,
    sessions: Arc<Sessions>,
}

/// The router: `/health`, `/metadata`, `/schema`, `/ready`, `/list_environments`, `/ws`.
/// `POST /reset`, `/step` and `GET /state` are absent (404), as in OpenEnv's production mode.
pub fn router(shared: Arc<Shared>, sessions: Arc<Sessions>) -> Router {
    Router::new()
        .route(
            "/health",
            get(|| async { Json(json!({"status": "healthy"})) }),
        )
        .route("/metadata", get(metadata))
        .route("/schema", get(|| async { Json(schema()) }))
        .route("/ready", get(ready))
        .route(
            "/list_environments",
            get(|| async { Json(json!([ENV_NAME])) }),
        )
        .route("/ws", get(ws))
        .fallback(|| async { (StatusCode::NOT_FOUND, Json(json!({"detail": "Not Found"}))) })
        .with_state(AppState { shared, sessions })
}

async fn metadata(State(s): State<AppState>) -> Json<Value> {
    Json(s.shared.metadata())
}

async fn ready(State(s): State<AppState>) -> Response {
    let (ok, body) = s.shared.readiness();
    let status = if ok {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, Json(body)).into_response()
}

async fn ws(State(s): State<AppState>, upgrade: WebSocketUpgrade) -> Response {
    let max = s.shared.options.max_message_bytes;
    upgrade
        .max_message_size(max)
        .max_frame_size(max)
        .on_upgrade(move |socket| session(socket, s))
}

/// Sends one frame, with every registered secret redacted ([`tb_llm::redact`]).
async fn send_text(socket: &mut WebSocket, text: String) -> bool {
    let text = match tb_llm::redact::redact(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(r) => r,
    };
    socket.send(Message::Text(text.into())).await.is_ok()
}

async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: reason.into(),
        })))
        .await;
}

/// What reading the socket gave.
enum Incoming {
    Text(String),
    Bad,
    Gone,
    Skip,
    /// A frame or message over the size limit: answered with close code 1009.
    TooBig,
}

fn incoming(m: Option<Result<Message, axum::Error>>) -> Incoming {
    match m {
        // tungstenite's capacity errors ("Space limit exceeded: Message too long" / "Frame
        // too long"); axum's error type does not expose the kind otherwise.
        Some(Err(e)) if e.to_string().contains("Space limit exceeded") => Incoming::TooBig,
        None | Some(Err(_) | Ok(Message::Close(_))) => Incoming::Gone,
        Some(Ok(Message::Text(t))) => Incoming::Text(t.to_string()),
        Some(Ok(Message::Binary(b))) => match String::from_utf8(b.to_vec()) {
            Ok(t) => Incoming::Text(t),
            Err(_) => Incoming::Bad,
        },
        Some(Ok(_)) => Incoming::Skip,
    }
}

/// Runs `fut` while still reading the socket (so pings are answered and a disconnect is
/// seen); frames that arrive meanwhile are queued. `None` when the client left.
async fn drive<T>(
    fut: impl Future<Output = T>,
    socket: &mut WebSocket,
    queued: &mut VecDeque<String>,
    closing: &CancellationToken,
) -> Option<T> {
    tokio::pin!(fut);
    let mut reading = true;
    loop {
        tokio::select! {
            r = &mut fut => return Some(r),
            () = closing.cancelled() => return None,
            m = socket.recv(), if reading => match incoming(m) {
                Incoming::Gone => return None,
                Incoming::TooBig => {
                    queued.push_back(TOO_BIG.into());
                    reading = false;
                }
                Incoming::Text(t) => {
                    queued.push_back(t);
                    if queued.len() >= MAX_QUEUED_FRAMES {
                        reading = false;
                    }
                }
                Incoming::Bad => queued.push_back(String::new()),
                Incoming::Skip => {}
            }
        }
    }
}

async fn session(mut socket: WebSocket, s: AppState) {
    let guard = match s.sessions.open() {
        Ok(g) => g,
        Err((active, max)) => {
            let mut e = ErrorFrame::new(
                ErrorCode::CapacityReached,
                format!("Server at capacity: {active}/{max} environments are in use"),
            );
            e.extra.insert("active_sessions".into(), json!(active));
            e.extra.insert("max_sessions".into(), json!(max));
            let _ = send_text(&mut socket, e.to_text()).await;
            close(&mut socket, 1013, "capacity reached").await;
            return;
        }
    };
    tracing::debug!(session = guard.id, "session opened");
    let mut env = Environment::new(s.shared.clone());
    let mut queued: VecDeque<String> = VecDeque::new();
    // Bounded by the client: every iteration consumes one frame or ends the session.
    loop {
        let text = match queued.pop_front() {
            Some(t) => t,
            None => {
                tokio::select! {
                    () = guard.entry.cancel.cancelled() => {
                        let why = if s.sessions.closing.is_cancelled() { "server shutting down" } else { "idle timeout" };
                        close(&mut socket, 1001, why).await;
                        break;
                    }
                    m = socket.recv() => match incoming(m) {
                        Incoming::Gone => break,
                        Incoming::TooBig => TOO_BIG.to_string(),
                        Incoming::Text(t) => t,
                        Incoming::Bad => String::new(),
                        Incoming::Skip => continue,
                    }
                }
            }
        };
        if text == TOO_BIG {
            let max = s.shared.options.max_message_bytes;
            tracing::info!(
                session = guard.id,
                max,
                "message over the size limit: closing"
            );
            close(
                &mut socket,
                1009,
                &format!("message too big: the limit is {max} bytes"),
            )
            .await;
            break;
        }
        guard.busy(true);
        let reply = match parse_frame(&text) {
            Err(e) => Some(e.to_text()),
            Ok(ClientFrame::Close) => break,
            Ok(ClientFrame::State) => Some(state_frame(&env.state())),
            Ok(ClientFrame::Reset(kwargs)) => {
                match drive(
                    env.reset(kwargs),
                    &mut socket,
                    &mut queued,
                    &s.sessions.closing,
                )
                .await
                {
                    Some(Ok(v)) => Some(observation_frame(&v)),
                    Some(Err(e)) => Some(e.to_text()),
                    None => break,
                }
            }
            Ok(ClientFrame::Step(action)) => {
                match drive(
                    env.step(action),
                    &mut socket,
                    &mut queued,
                    &s.sessions.closing,
                )
                .await
                {
                    Some(v) => Some(observation_frame(&v)),
                    None => break,
                }
            }
        };
        guard.busy(false);
        if let Some(r) = reply
            && !send_text(&mut socket, r).await
        {
            break;
        }
        if queued.len() >= MAX_QUEUED_FRAMES {
            let e = ErrorFrame::new(
                ErrorCode::SessionError,
                "Too many frames sent without waiting for replies",
            );
            let _ = send_text(&mut socket, e.to_text()).await;
            close(&mut socket, 1008, "protocol violation").await;
            break;
        }
    }
    env.close();
    tracing::debug!(session = guard.id, "session closed");
}

/// Removes idle sessions periodically (when the options set an idle timeout).
fn spawn_reaper(
    sessions: Arc<Sessions>,
    idle: Option<Duration>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(idle) = idle else { return };
        let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            sessions.reap(idle);
        }
    })
}

/// Serves on `listener` until `shutdown` resolves: loads the data in the background, runs the
/// idle reaper.
pub async fn serve(
    listener: tokio::net::TcpListener,
    shared: Arc<Shared>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cancel = CancellationToken::new();
    let sessions = Sessions::new(shared.options.max_envs.max(1), cancel.clone());
    let loader = {
        let shared = shared.clone();
        tokio::task::spawn_blocking(move || shared.load_data())
    };
    let reaper = spawn_reaper(
        sessions.clone(),
        shared.options.idle_timeout,
        cancel.clone(),
    );
    let limits = shared.options.serve.clone();
    let app = router(shared, sessions.clone());
    let stop = cancel.clone();
    let result = tb_net::serve(listener, app, limits, async move {
        shutdown.await;
        stop.cancel();
    })
    .await;
    cancel.cancel();
    reaper.abort();
    drop(loader);
    result
}

/// A server started with [`spawn`].
#[derive(Debug)]
pub struct RunningServer {
    /// Where it listens.
    pub addr: SocketAddr,
    /// Its shared state (readiness, data).
    pub shared: Arc<Shared>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// `http://addr`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops the server and waits for it.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match (&mut self.task).await {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

impl Drop for RunningServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Starts a server on `addr` in the background (tests, embedding).
pub async fn spawn(addr: SocketAddr, options: Options) -> std::io::Result<RunningServer> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let shared = Shared::new(options);
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, shared.clone(), async move {
        let _ = rx.await;
    }));
    Ok(RunningServer {
        addr: local,
        shared,
        stop: Some(tx),
        task,
    })
}
