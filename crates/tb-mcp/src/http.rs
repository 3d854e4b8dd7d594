//! The HTTP server: the agent's MCP endpoints (Streamable HTTP), the evaluator's admin surface,
//! and the reference Session Proxy API, on one listener.
//!
//! | route | who | what |
//! | --- | --- | --- |
//! | `GET /health` | anyone | `OK` |
//! | `/mcp/{session}` | the agent | MCP Streamable HTTP bound to that session (the `mcp_url`) |
//! | `/mcp` | harness | MCP Streamable HTTP, session from the `X-TB-Session-Id` header (as the reference) |
//! | `POST /admin/sessions` `{"task"}` | evaluator | open a session: `{"session", "mcp_url", ...}` |
//! | `GET /admin/sessions` | evaluator | open sessions |
//! | `GET /admin/sessions/{id}/effects[?states=false]` | evaluator | verdict, diff, states |
//! | `DELETE /admin/sessions/{id}` | evaluator | close |
//! | `POST /session_create`, `/list_tools`, `/call_tool`, `/get_effects`, `/session_destroy`, `/session_destroy_all`, `/session_info`, `/garbage_collect` | reference `tb infer` | the Session Proxy API and its `{success, content}` envelope |
//!
//! With a token, everything but `/health` and `/mcp/{session}` needs `Authorization: Bearer
//! <token>`. The session URL is the agent's capability: an unguessable id that reaches exactly
//! one sandbox's tools and nothing else.

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]
// Request helpers return the finished error `Response` as their `Err`: it is built once, on the
// error path, and handed straight back to axum, so its size does not matter.
#![allow(clippy::result_large_err)]

use crate::error::SessionError;
use crate::jsonrpc::kind;
use crate::mcp::{BoundSession, SessionHandler};
use crate::registry::{ProxyOptions, Registry};
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, ErrorData, ProtocolVersion, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tb_sandbox::CallOutcome;
use tokio_util::sync::CancellationToken;

/// How the HTTP server is exposed.
#[derive(Debug, Clone, Default)]
pub struct HttpOptions {
    /// Bearer token for the admin and proxy routes (and the shared `/mcp`); `None`: open.
    pub token: Option<String>,
    /// Accept any `Host` header (needed when binding a non-loopback address); by default only
    /// loopback hosts are accepted on the MCP routes (DNS-rebinding protection).
    pub any_host: bool,
    /// Connection cap and header/body read timeouts.
    pub serve: tb_net::ServeLimits,
}

/// A fresh random bearer token (two v4 UUIDs: 244 random bits, 64 hex characters), for a
/// server that was not given one.
pub fn generate_token() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

#[derive(Clone)]
struct AppState {
    registry: Arc<Registry>,
    token: Option<Arc<str>>,
    body_timeout: Duration,
}

/// The whole application router. `cancel` stops the MCP sessions when cancelled.
pub fn router(registry: Arc<Registry>, options: &HttpOptions, cancel: CancellationToken) -> Router {
    let limits = registry.limits().clone();
    // Stateless Streamable HTTP with JSON replies: a session is bound by the URL (or the
    // `X-TB-Session-Id` header), never by the MCP session id, and the handler sends nothing
    // but the reply, so no MCP session (and no session worker, no SSE stream) is needed. Each
    // POST is answered with one `application/json` body; GET and DELETE answer 405, which
    // clients take as "no standalone stream" and "nothing to end".
    let mut config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .with_max_request_body_bytes(limits.max_body_bytes)
        .with_cancellation_token(cancel);
    if options.any_host {
        config = config.disable_allowed_hosts();
    }
    let factory_registry = registry.clone();
    let mcp = McpRoute {
        rmcp: StreamableHttpService::new(
            move || Ok(SessionHandler::routed(factory_registry.clone())),
            Arc::new(NeverSessionManager::default()),
            config,
        ),
        handler: SessionHandler::routed(registry.clone()),
        any_host: options.any_host,
        max_body_bytes: limits.max_body_bytes,
        body_timeout: options.serve.body_timeout,
    };
    let state = AppState {
        registry,
        token: options.token.as_deref().map(Arc::from),
        body_timeout: options.serve.body_timeout,
    };
    let route = |mcp: &McpRoute| {
        let mcp = mcp.clone();
        any(move |req: Request| async move { mcp.handle(req).await })
    };

    let bound = Router::new()
        .route("/mcp/{session}", route(&mcp))
        .route("/mcp/{session}/", route(&mcp))
        .route_layer(middleware::from_fn_with_state(state.clone(), bind_session));

    let guarded = Router::new()
        .route("/mcp", route(&mcp))
        .route("/admin/sessions", post(admin_create).get(admin_list))
        .route("/admin/sessions/{id}", get(admin_get).delete(admin_delete))
        .route("/admin/sessions/{id}/effects", get(admin_effects))
        .route("/session_create", post(proxy_session_create))
        .route("/session_info", post(proxy_session_info))
        .route("/session_destroy", post(proxy_session_destroy))
        .route("/session_destroy_all", post(proxy_session_destroy_all))
        .route("/call_tool", post(proxy_call_tool))
        .route("/get_effects", post(proxy_get_effects))
        .route("/list_tools", post(proxy_list_tools))
        .route("/garbage_collect", post(proxy_garbage_collect))
        .route_layer(middleware::from_fn_with_state(state.clone(), require_token));

    Router::new()
        .route("/health", get(|| async { "OK" }))
        .merge(bound)
        .merge(guarded)
        .fallback(|| async { admin_error(StatusCode::NOT_FOUND, "no such route".into()) })
        .with_state(state)
}

/// The MCP endpoints: rmcp's Streamable HTTP service, with `tools/call` answered directly.
///
/// Profiled, a `tools/call` through rmcp's stateless service costs about as much CPU on the
/// server as the HTTP exchange itself: the body parsed, a `Peer` and a service loop task made
/// per request, the handler spawned as another task, its reply sent back over a channel. A
/// `tools/call` POST that rmcp would take as it is (loopback `Host` unless any host is allowed,
/// `Accept` with both JSON and SSE, JSON content type, a body within the limit and a declared
/// length, a pre-2026 `MCP-Protocol-Version` or none, no other `Mcp-*` header, no `_meta` but
/// a progress token, and no `inputResponses` or `requestState` in the params) is parsed with
/// rmcp's own message type, handled by the same [`SessionHandler`] code, post-processed as
/// rmcp does for those protocol versions, and answered with rmcp's JSON-RPC reply type and
/// serializer, on the connection's task. Anything else (other methods, other protocol versions, anything unusual) goes to
/// rmcp unchanged (a parsed body is handed on as it came).
#[derive(Clone)]
struct McpRoute {
    rmcp: StreamableHttpService<SessionHandler, NeverSessionManager>,
    handler: SessionHandler,
    any_host: bool,
    max_body_bytes: usize,
    body_timeout: Duration,
}

/// The `Host` names rmcp's default `allowed_hosts` accept (any port).
const LOOPBACK_HOSTS: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

impl McpRoute {
    async fn handle(&self, req: Request) -> Response {
        if req.method() != axum::http::Method::POST || !self.host_ok(req.headers()) {
            return self.forward(req).await;
        }
        let direct = self.direct_call(&req);
        let (parts, body) = req.into_parts();
        let bytes = match tb_net::read_body(body, self.max_body_bytes, self.body_timeout).await {
            Ok(b) => b,
            Err(e) => {
                // A bare status with the reason, as rmcp answers it: no message was read, so
                // there is no id to answer, and clients fail the request on the status.
                let status = match e {
                    tb_net::BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                    tb_net::BodyError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
                    tb_net::BodyError::Read(_) => StatusCode::BAD_REQUEST,
                };
                return (status, e.to_string()).into_response();
            }
        };
        // What rmcp would answer with a bare status or "method not found" is answered here
        // with its JSON-RPC error.
        let message = match crate::jsonrpc::check(&bytes) {
            Ok(m) => m,
            Err(r) => {
                let status = if r.code == crate::jsonrpc::INVALID_PARAMS {
                    StatusCode::OK
                } else {
                    StatusCode::BAD_REQUEST
                };
                return rejection(status, &r);
            }
        };
        let request = match message {
            Some(ClientJsonRpcMessage::Request(r)) if direct => match r.request {
                ClientRequest::CallToolRequest(call)
                    if meta_is_progress_only(
                        call.extensions.get::<rmcp::model::RequestMetaObject>(),
                    ) && call.params.meta.is_none()
                        && call.params.input_responses.is_none()
                        && call.params.request_state.is_none() =>
                {
                    (r.id, call.params)
                }
                _ => {
                    return self
                        .forward(Request::from_parts(parts, Body::from(bytes)))
                        .await;
                }
            },
            _ => {
                return self
                    .forward(Request::from_parts(parts, Body::from(bytes)))
                    .await;
            }
        };
        let (id, params) = request;
        let reply = match self.handler.call_tool_for(Some(&parts), params).await {
            Ok(result) => {
                // What rmcp does to a result for a peer before 2026-07-28.
                let mut result = ServerResult::CallToolResult(result);
                result.strip_result_type_for_legacy_peer();
                result.strip_non_object_output_for_legacy_peer();
                ServerJsonRpcMessage::response(result, id)
            }
            Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
        };
        match serde_json::to_vec(&reply) {
            Ok(body) => (
                [(header::CONTENT_TYPE, "application/json")],
                Bytes::from(body),
            )
                .into_response(),
            Err(e) => {
                let error =
                    ErrorData::internal_error(format!("serialize json response: {e}"), None);
                tracing::error!(%error, "tools/call reply");
                (StatusCode::INTERNAL_SERVER_ERROR, error.message.to_string()).into_response()
            }
        }
    }

    async fn forward(&self, req: Request) -> Response {
        self.rmcp.handle(req).await.map(Body::new)
    }

    /// Whether rmcp would accept the request's `Host` (DNS-rebinding protection): only then
    /// is its body read and checked here.
    fn host_ok(&self, headers: &HeaderMap) -> bool {
        if self.any_host {
            return true;
        }
        let mut hosts = headers.get_all(header::HOST).iter();
        let (Some(host), None) = (hosts.next(), hosts.next()) else {
            return false;
        };
        host.to_str()
            .ok()
            .and_then(|h| axum::http::uri::Authority::try_from(h).ok())
            .is_some_and(|a| LOOPBACK_HOSTS.contains(&a.host()))
    }

    /// Whether rmcp would accept this POST as it is, so that a `tools/call` in its body may be
    /// answered directly (see [`McpRoute`]).
    fn direct_call(&self, req: &Request) -> bool {
        let headers = req.headers();
        let text = |name: header::HeaderName| -> Option<&str> {
            let mut values = headers.get_all(name).iter();
            let first = values.next()?.to_str().ok()?;
            values.next().is_none().then_some(first)
        };
        let Some(accept) = text(header::ACCEPT) else {
            return false;
        };
        let (mut json, mut sse) = (false, false);
        for entry in accept.split(',') {
            match entry.trim() {
                "application/json" => json = true,
                "text/event-stream" => sse = true,
                e if e.contains(['"', ';']) => return false,
                _ => {}
            }
        }
        if !(json && sse) {
            return false;
        }
        let Some(content_type) = text(header::CONTENT_TYPE) else {
            return false;
        };
        let essence = content_type.split(';').next().unwrap_or_default().trim();
        if !essence.eq_ignore_ascii_case("application/json") {
            return false;
        }
        for name in headers.keys() {
            let name = name.as_str();
            if name.starts_with("mcp-")
                && name != "mcp-protocol-version"
                && name != "mcp-session-id"
            {
                return false;
            }
        }
        if headers.contains_key(header::ORIGIN) {
            return false;
        }
        if headers.contains_key(header::HeaderName::from_static("mcp-protocol-version")) {
            let Some(version) = text(header::HeaderName::from_static("mcp-protocol-version"))
            else {
                return false;
            };
            let legacy = ProtocolVersion::KNOWN_VERSIONS
                .iter()
                .any(|v| v.as_str() == version && version < ProtocolVersion::V_2026_07_28.as_str());
            if !legacy {
                return false;
            }
        }
        true
    }
}

/// Whether a `tools/call`'s `_meta` (which rmcp's parser keeps in the request's extensions,
/// not in `params.meta`) is absent or only a valid `progressToken`: what rmcp's client sends
/// with every request. rmcp's server moves it into the request context, which the handler
/// does not read (it sends no progress), so such a call is answered alike on both paths. Any
/// other key (a per-request protocol version, client info, trace context...) may change what
/// rmcp does (it checks a `_meta` protocol version against the header), so it goes to rmcp.
fn meta_is_progress_only(meta: Option<&rmcp::model::RequestMetaObject>) -> bool {
    meta.is_none_or(|m| {
        m.0.0.len() == 1 && m.0.0.contains_key("progressToken") && m.get_progress_token().is_some()
    })
}

/// A JSON-RPC error reply for a message refused before rmcp saw it.
fn rejection(status: StatusCode, r: &crate::jsonrpc::Rejection) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        r.to_line(),
    )
        .into_response()
}

/// Serves the router on `listener` until `shutdown` resolves; runs the idle-session reaper.
pub async fn serve(
    listener: tokio::net::TcpListener,
    registry: Arc<Registry>,
    options: HttpOptions,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let cancel = CancellationToken::new();
    let app = router(registry.clone(), &options, cancel.clone());
    let reaper = spawn_reaper(registry.clone(), cancel.clone());
    let stop = cancel.clone();
    // tb-net sets TCP_NODELAY (small request/response pairs: without it, Nagle plus delayed
    // ACKs add ~40 ms), and bounds connections and header/body read times.
    let result = tb_net::serve(listener, app, options.serve.clone(), async move {
        shutdown.await;
        stop.cancel();
    })
    .await;
    cancel.cancel();
    reaper.abort();
    // remote sessions' servers torn down and reaped before the server ends
    registry.shutdown(SHUTDOWN_GRACE).await;
    result
}

/// How long [`serve`] waits at the end for remote sessions to close.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(15);

/// Starts a server on `addr` in the background (tests, embedding). Returns the bound address
/// and a handle whose [`RunningServer::shutdown`] stops it.
pub async fn spawn(
    addr: SocketAddr,
    registry: Arc<Registry>,
    options: HttpOptions,
) -> std::io::Result<RunningServer> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(serve(listener, registry, options, async move {
        let _ = rx.await;
    }));
    Ok(RunningServer {
        addr: local,
        stop: Some(tx),
        task,
    })
}

/// A server started with [`spawn`].
#[derive(Debug)]
pub struct RunningServer {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<std::io::Result<()>>,
}

impl RunningServer {
    /// `http://addr`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Stops accepting, ends the MCP sessions, and waits for the server to finish.
    pub async fn shutdown(mut self) -> std::io::Result<()> {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        match self.task.await {
            Ok(r) => r,
            Err(e) => Err(std::io::Error::other(e)),
        }
    }
}

/// Removes idle sessions periodically (when the registry's limits set an idle timeout).
pub fn spawn_reaper(
    registry: Arc<Registry>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let Some(idle) = registry.limits().idle_timeout else {
            return;
        };
        let every = (idle / 4).clamp(Duration::from_millis(50), Duration::from_secs(30));
        loop {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(every) => {}
            }
            registry.reap(idle);
        }
    })
}

// ---------------------------------------------------------------------------------------------
// Middleware

async fn bind_session(
    State(state): State<AppState>,
    Path(session): Path<String>,
    mut req: Request,
    next: Next,
) -> Response {
    if let Err(e) = state.registry.get(&session) {
        return admin_error(StatusCode::NOT_FOUND, e.to_string());
    }
    req.extensions_mut().insert(BoundSession(session));
    next.run(req).await
}

async fn require_token(State(state): State<AppState>, req: Request, next: Next) -> Response {
    if let Some(token) = &state.token {
        let given = req
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        if given != Some(token.as_ref()) {
            return (
                StatusCode::UNAUTHORIZED,
                axum::Json(json!({"success": false, "error": "Unauthorized: this route needs Authorization: Bearer <token>"})),
            )
                .into_response();
        }
    }
    next.run(req).await
}

// ---------------------------------------------------------------------------------------------
// Bodies

fn admin_error(status: StatusCode, message: String) -> Response {
    (status, axum::Json(json!({ "error": message }))).into_response()
}

fn session_error(e: &SessionError) -> Response {
    admin_error(
        StatusCode::from_u16(e.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        e.to_string(),
    )
}

/// Reads a JSON object body within the size limit and the body timeout.
async fn read_object(
    state: &AppState,
    body: Body,
) -> Result<Map<String, Value>, (StatusCode, String)> {
    let limit = state.registry.limits().max_body_bytes;
    let bytes: Bytes = tb_net::read_body(body, limit, state.body_timeout)
        .await
        .map_err(|e| {
            let status = match e {
                tb_net::BodyError::TooLarge { .. } => StatusCode::PAYLOAD_TOO_LARGE,
                tb_net::BodyError::Timeout(_) => StatusCode::REQUEST_TIMEOUT,
                tb_net::BodyError::Read(_) => StatusCode::BAD_REQUEST,
            };
            (status, e.to_string())
        })?;
    if bytes.is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(m)) => Ok(m),
        Ok(other) => Err((
            StatusCode::BAD_REQUEST,
            format!("request body must be a JSON object, got {}", kind(&other)),
        )),
        Err(e) => Err((StatusCode::BAD_REQUEST, format!("malformed JSON body: {e}"))),
    }
}

/// ``field `key` must be {want}, got {type}``.
fn wrong_field(key: &str, want: &str, other: &Value) -> String {
    format!("field `{key}` must be {want}, got {}", kind(other))
}

fn str_field<'a>(m: &'a Map<String, Value>, key: &str) -> Result<&'a str, String> {
    match m.get(key) {
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(wrong_field(key, "a string", other)),
        None => Err(format!("missing field `{key}`")),
    }
}

// ---------------------------------------------------------------------------------------------
// Admin surface

fn base_url(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(|h| format!("http://{h}"))
}

async fn admin_create(State(state): State<AppState>, headers: HeaderMap, body: Body) -> Response {
    let m = match read_object(&state, body).await {
        Ok(m) => m,
        Err((s, msg)) => return admin_error(s, msg),
    };
    let task = match str_field(&m, "task") {
        Ok(t) => t.to_string(),
        Err(msg) => {
            return admin_error(
                StatusCode::BAD_REQUEST,
                format!("{msg} (want {{\"task\": \"file.py:function\"}})"),
            );
        }
    };
    let slot = match state.registry.create_for_task(&task).await {
        Ok(slot) => slot,
        Err(e) => return session_error(&e),
    };
    let base = base_url(&headers).unwrap_or_default();
    (
        StatusCode::CREATED,
        axum::Json(json!({
            "session": slot.id(),
            "mcp_url": format!("{base}/mcp/{}", slot.id()),
            "task": slot.task_uid(),
            "tools": slot.tools().list().len(),
        })),
    )
        .into_response()
}

async fn admin_list(State(state): State<AppState>) -> Response {
    let mut ids = state.registry.ids();
    ids.sort();
    let sessions: Vec<Value> = ids
        .iter()
        .filter_map(|id| state.registry.get(id).ok())
        .map(|s| json!({"session": s.id(), "task": s.task_uid()}))
        .collect();
    axum::Json(json!({ "sessions": sessions, "count": sessions.len() })).into_response()
}

async fn admin_get(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.registry.get(&id) {
        Ok(s) => axum::Json(
            json!({"session": s.id(), "task": s.task_uid(), "tools": s.tools().list().len()}),
        )
        .into_response(),
        Err(e) => session_error(&e),
    }
}

#[derive(serde::Deserialize)]
struct EffectsQuery {
    states: Option<bool>,
}

async fn admin_effects(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<EffectsQuery>,
) -> Response {
    let slot = match state.registry.get(&id) {
        Ok(s) => s,
        Err(e) => return session_error(&e),
    };
    match state
        .registry
        .effects(&slot, q.states.unwrap_or(true))
        .await
    {
        Ok(effects) => {
            axum::Json(effects.to_admin_json(slot.id(), slot.task_uid())).into_response()
        }
        Err(e) => session_error(&e),
    }
}

async fn admin_delete(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    match state.registry.remove(&id) {
        Ok(()) => axum::Json(json!({"session": id, "deleted": true})).into_response(),
        Err(e) => session_error(&e),
    }
}

// ---------------------------------------------------------------------------------------------
// The reference Session Proxy API: `{"success": bool, "content": {"type", "value"}}`.

fn ok_text(text: impl Into<String>) -> Response {
    axum::Json(json!({"success": true, "content": {"type": "string", "value": text.into()}}))
        .into_response()
}

fn ok_object(value: Value) -> Response {
    axum::Json(json!({"success": true, "content": {"type": "object", "value": value}}))
        .into_response()
}

fn proxy_error(status: StatusCode, message: impl Into<String>) -> Response {
    (
        status,
        axum::Json(
            json!({"success": false, "content": {"type": "string", "value": message.into()}}),
        ),
    )
        .into_response()
}

fn proxy_session_error(e: &SessionError) -> Response {
    // The reference answers 400 for everything but tool timeouts (504).
    let status = match e {
        SessionError::Timeout(_) => StatusCode::GATEWAY_TIMEOUT,
        SessionError::Full { .. } => StatusCode::SERVICE_UNAVAILABLE,
        SessionError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        SessionError::Backend(_) => StatusCode::BAD_GATEWAY,
        _ => StatusCode::BAD_REQUEST,
    };
    let msg = match e {
        SessionError::UnknownSession(_) => "Session does not exist".to_string(),
        other => other.to_string(),
    };
    proxy_error(status, msg)
}

async fn proxy_body(state: &AppState, body: Body) -> Result<Map<String, Value>, Response> {
    read_object(state, body).await.map_err(|(s, msg)| {
        if s == StatusCode::PAYLOAD_TOO_LARGE || s == StatusCode::REQUEST_TIMEOUT {
            proxy_error(s, msg)
        } else {
            proxy_error(StatusCode::BAD_REQUEST, format!("Invalid input: {msg}"))
        }
    })
}

fn invalid(msg: String) -> Response {
    proxy_error(StatusCode::BAD_REQUEST, format!("Invalid input: {msg}"))
}

fn proxy_slot(
    state: &AppState,
    m: &Map<String, Value>,
) -> Result<Arc<crate::registry::Slot>, Response> {
    let id = str_field(m, "session_id").map_err(invalid)?;
    state.registry.get(id).map_err(|e| proxy_session_error(&e))
}

/// The body of a request naming a session, and that session.
async fn proxy_session_body(
    state: &AppState,
    body: Body,
) -> Result<(Map<String, Value>, Arc<crate::registry::Slot>), Response> {
    let m = proxy_body(state, body).await?;
    let slot = proxy_slot(state, &m)?;
    Ok((m, slot))
}

async fn proxy_session_create(State(state): State<AppState>, body: Body) -> Response {
    let m = match proxy_body(&state, body).await {
        Ok(m) => m,
        Err(r) => return r,
    };
    let parsed = (|| -> Result<_, String> {
        let id = str_field(&m, "session_id")?.to_string();
        let configs = match m.get("server_config") {
            Some(Value::Object(c)) => c
                .iter()
                .map(|(k, v)| match v {
                    Value::Object(_) => Ok((k.clone(), v.clone())),
                    Value::Null => Ok((k.clone(), json!({}))),
                    other => Err(format!(
                        "server_config.{k} must be an object, got {}",
                        kind(other)
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(wrong_field("server_config", "an object", other));
            }
            None => return Err("missing field `server_config`".into()),
        };
        let tools = match m.get("available_tools") {
            Some(Value::Array(a)) => a
                .iter()
                .map(|t| {
                    t.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| "available_tools must be a list of strings".to_string())
                })
                .collect::<Result<Vec<_>, _>>()?,
            Some(other) => {
                return Err(wrong_field("available_tools", "a list", other));
            }
            None => return Err("missing field `available_tools`".into()),
        };
        let timeout = match m.get("timeout") {
            None | Some(Value::Null) => None,
            Some(Value::Number(n)) => Some(crate::input::client_secs(
                "timeout",
                n.as_f64().unwrap_or(f64::INFINITY),
            )?),
            Some(other) => {
                return Err(wrong_field("timeout", "a number", other));
            }
        };
        let flag = |k: &str| -> Result<bool, String> {
            match m.get(k) {
                None | Some(Value::Null) => Ok(false),
                Some(Value::Bool(b)) => Ok(*b),
                Some(other) => Err(wrong_field(k, "a boolean", other)),
            }
        };
        let options = ProxyOptions {
            configs,
            always_json_output: flag("always_json_output")?,
            geteffects_proxy_info: flag("geteffects_proxy_info")?,
        };
        Ok((id, options, tools, timeout))
    })();
    let (id, options, tools, timeout) = match parsed {
        Ok(p) => p,
        Err(msg) => return invalid(msg),
    };
    match state
        .registry
        .create_for_proxy(&id, options, tools, timeout)
        .await
    {
        Ok((_, init_result)) => ok_object(Value::Object(init_result)),
        Err(e) => proxy_session_error(&e),
    }
}

async fn proxy_session_info(State(state): State<AppState>, body: Body) -> Response {
    let (m, slot) = match proxy_session_body(&state, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let update = match m.get("update") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(u)) => u.clone(),
        Some(other) => {
            return invalid(wrong_field("update", "an object", other));
        }
    };
    ok_object(Value::Object(slot.info(&update)))
}

async fn proxy_session_destroy(State(state): State<AppState>, body: Body) -> Response {
    let m = match proxy_body(&state, body).await {
        Ok(m) => m,
        Err(r) => return r,
    };
    let id = match str_field(&m, "session_id") {
        Ok(id) => id,
        Err(msg) => return invalid(msg),
    };
    match state.registry.remove(id) {
        Ok(()) => ok_text("Ok"),
        Err(e) => proxy_session_error(&e),
    }
}

async fn proxy_session_destroy_all(State(state): State<AppState>, body: Body) -> Response {
    if let Err(r) = proxy_body(&state, body).await {
        return r;
    }
    state.registry.remove_all();
    ok_text("Ok")
}

async fn proxy_call_tool(State(state): State<AppState>, body: Body) -> Response {
    let (m, slot) = match proxy_session_body(&state, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let tool = match str_field(&m, "tool_name") {
        Ok(t) => t.to_string(),
        Err(msg) => return invalid(msg),
    };
    let args = match m.get("arguments") {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(v @ Value::Object(_)) => v.clone(),
        Some(other) => {
            return invalid(wrong_field("arguments", "an object", other));
        }
    };
    let result = if tool == "__reserved__server_tool" {
        let server = args
            .get("server_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let inner = args
            .get("tool_name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let inner_args = match args.get("arguments") {
            Some(v @ Value::Object(_)) => v.clone(),
            _ => Value::Object(Map::new()),
        };
        state
            .registry
            .call_server_tool(&slot, &server, &inner, inner_args)
            .await
            .map(|o| (inner, o))
    } else {
        state
            .registry
            .call(&slot, &tool, args)
            .await
            .map(|o| (tool, o))
    };
    match result {
        Ok((name, CallOutcome::UnknownTool(_))) => proxy_error(
            StatusCode::BAD_REQUEST,
            format!("Tool {name} does not exist"),
        ),
        Ok((name, outcome)) => {
            let text = outcome.to_text(&name);
            if Registry::always_json(&slot) && serde_json::from_str::<Value>(&text).is_err() {
                ok_text(serde_json::to_string(&json!({"result": text})).unwrap_or(text))
            } else {
                ok_text(text)
            }
        }
        Err(e) => proxy_session_error(&e),
    }
}

async fn proxy_get_effects(State(state): State<AppState>, body: Body) -> Response {
    let (_, slot) = match proxy_session_body(&state, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    match state.registry.effects(&slot, true).await {
        Ok(e) => ok_object(e.to_reference_json()),
        Err(e) => proxy_session_error(&e),
    }
}

async fn proxy_list_tools(State(state): State<AppState>, body: Body) -> Response {
    let (_, slot) = match proxy_session_body(&state, body).await {
        Ok(r) => r,
        Err(r) => return r,
    };
    let mut tools = Map::new();
    for t in slot.tools().list() {
        if let Some(name) = t["name"].as_str() {
            tools.insert(
                name.to_string(),
                json!({"description": t.get("description").cloned().unwrap_or(Value::Null), "inputSchema": t["inputSchema"]}),
            );
        }
    }
    ok_object(json!({ "tools": tools }))
}

async fn proxy_garbage_collect(State(state): State<AppState>, body: Body) -> Response {
    let m = match proxy_body(&state, body).await {
        Ok(m) => m,
        Err(r) => return r,
    };
    let minutes = match m.get("inactivity_minutes").and_then(Value::as_f64) {
        Some(x) if x.is_finite() && x >= 0.0 => x,
        _ => return invalid("field `inactivity_minutes` must be a non-negative number".into()),
    };
    let Ok(idle) = crate::input::client_secs("inactivity_minutes", minutes * 60.0) else {
        return invalid(format!(
            "field `inactivity_minutes` is too large ({}; at most {} are accepted)",
            crate::input::shown_number(minutes),
            crate::input::MAX_CLIENT_SECS / 60.0
        ));
    };
    let ids = state.registry.reap(idle);
    ok_object(json!({"count": ids.len(), "session_ids": ids}))
}
