//! A scripted model server, for tests, benches and `tb bench` (never in the shipped binary): one axum server on
//! `127.0.0.1:0` that speaks Chat Completions (`/{role}/v1/chat/completions`), the Responses
//! API (`/{role}/v1/responses`) and Anthropic Messages (`/{role}/v1/messages`). Each `role`
//! (any path segment: `agent`, `user`, `judge`, ...) answers from its own [`Script`], which
//! sees the request as a provider-neutral [`MockRequest`]. Faults (statuses, malformed bodies,
//! delays) can be queued per role and are served before the script answers.
//!
//! ```no_run
//! # async fn demo() {
//! use tb_mock_model::{MockServer, Reply, Api};
//! let server = MockServer::start().await.unwrap();
//! server.set_script("agent", |_r: &tb_mock_model::MockRequest| Reply::Text("hi <DONE>".into()));
//! let url = server.url("agent", Api::Chat);
//! # }
//! ```

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Which wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    /// Chat Completions.
    Chat,
    /// Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

impl Api {
    fn path(self) -> &'static str {
        match self {
            Api::Chat => "v1/chat/completions",
            Api::Responses => "v1/responses",
            Api::Anthropic => "v1/messages",
        }
    }

    /// The config `type` for this API.
    pub fn config_type(self) -> &'static str {
        match self {
            Api::Chat => "aoai",
            Api::Responses => "aoai_responses",
            Api::Anthropic => "anthropic",
        }
    }
}

/// One entry of a conversation, provider-neutral.
#[derive(Debug, Clone, PartialEq)]
pub enum Turn {
    /// A user text.
    User(String),
    /// An assistant text.
    Assistant(String),
    /// Assistant tool calls: (id, name, arguments).
    ToolCalls(Vec<(String, String, Value)>),
    /// A tool result.
    ToolResult {
        /// Call id.
        id: String,
        /// Text.
        content: String,
    },
}

/// A request as scripts see it.
#[derive(Debug, Clone, PartialEq)]
pub struct MockRequest {
    /// Wire format.
    pub api: Api,
    /// System text (all system/developer messages joined by newlines).
    pub system: String,
    /// The conversation after the system messages.
    pub turns: Vec<Turn>,
    /// Tool names offered.
    pub tools: Vec<String>,
    /// The raw body.
    pub body: Value,
}

impl MockRequest {
    /// Tool calls made so far.
    pub fn tool_calls_so_far(&self) -> usize {
        self.turns
            .iter()
            .map(|t| {
                if let Turn::ToolCalls(c) = t {
                    c.len()
                } else {
                    0
                }
            })
            .sum()
    }

    /// The last user text.
    pub fn last_user(&self) -> Option<&str> {
        self.turns.iter().rev().find_map(|t| {
            if let Turn::User(s) = t {
                Some(s.as_str())
            } else {
                None
            }
        })
    }

    /// Tool results so far, in order.
    pub fn tool_results(&self) -> Vec<&str> {
        self.turns
            .iter()
            .filter_map(|t| {
                if let Turn::ToolResult { content, .. } = t {
                    Some(content.as_str())
                } else {
                    None
                }
            })
            .collect()
    }
}

/// What a script answers.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    /// A text message.
    Text(String),
    /// Tool calls (name, arguments).
    Calls(Vec<(String, Value)>),
    /// One tool call with raw argument text (may be invalid JSON).
    RawCall {
        /// Tool name.
        name: String,
        /// Argument text as sent.
        arguments: String,
    },
    /// Reasoning then text (reasoning goes where the API puts it).
    ThinkThenText(String, String),
}

/// A scripted model.
pub trait Script: Send + Sync {
    /// The reply to a request.
    fn reply(&self, req: &MockRequest) -> Reply;
}

impl<F: Fn(&MockRequest) -> Reply + Send + Sync> Script for F {
    fn reply(&self, req: &MockRequest) -> Reply {
        self(req)
    }
}

/// Plays a fixed list of tool calls, one per reply, then a closing text.
#[derive(Debug, Clone)]
pub struct ToolPlayer {
    /// The calls, in order.
    pub calls: Vec<(String, Value)>,
    /// The final text (e.g. `All set. <DONE>`).
    pub closing: String,
}

impl Script for ToolPlayer {
    fn reply(&self, req: &MockRequest) -> Reply {
        match self.calls.get(req.tool_calls_so_far()) {
            Some(c) => Reply::Calls(vec![c.clone()]),
            None => Reply::Text(self.closing.clone()),
        }
    }
}

/// A simulated user that answers from the context it is shown: it finds the text after a
/// `USER_CONTEXT` marker line in the last user message and repeats its first line.
#[derive(Debug, Clone, Default)]
pub struct ContextUser;

impl Script for ContextUser {
    fn reply(&self, req: &MockRequest) -> Reply {
        let text = req.last_user().unwrap_or("");
        let ctx = text.split_once("USER_CONTEXT").map_or("", |(_, rest)| rest);
        let line = ctx
            .lines()
            .skip(1)
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("I don't know.");
        Reply::Text(line.to_string())
    }
}

/// A fault served instead of the script's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Fault {
    /// An HTTP status with an optional `Retry-After` and a body.
    Status {
        /// Status code.
        status: u16,
        /// `Retry-After` header.
        retry_after: Option<String>,
        /// Body.
        body: String,
    },
    /// A 200 whose body is given as is (not the API's shape).
    Malformed(String),
    /// Wait this long, then answer normally (to trigger client timeouts).
    Delay(Duration),
}

/// A request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Role (path segment).
    pub role: String,
    /// API.
    pub api: Api,
    /// Headers (lower-case names).
    pub headers: Vec<(String, String)>,
    /// Body.
    pub body: Value,
}

/// How a [`MockServer`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MockOptions {
    /// Keep every request (role, API, headers, body) for [`MockServer::requests`]. Without
    /// it the server keeps only the number of requests per role ([`MockServer::count`]),
    /// for long runs whose bodies (the whole conversation and every tool schema, each
    /// request) would otherwise pile up in memory.
    pub keep_requests: bool,
    /// Parse the tools' schemas: `body["tools"]` of a [`MockRequest`] (and of a kept
    /// request) is the list as sent. Without it the server reads only each tool's name
    /// ([`MockRequest::tools`]), the body has no `tools` key, and `tools`, when present,
    /// must be a list of objects. The schemas are most of an agent request's bytes.
    pub tool_schemas: bool,
    /// Wait this long before every answer (a slow model; zero: answer at once). The wait
    /// is a timer, not a busy thread: thousands of requests can wait at once.
    pub reply_delay: Duration,
    /// Give scripts the request body as JSON ([`MockRequest::body`]). Without it (and
    /// without [`MockOptions::keep_requests`], which keeps bodies), scripts see the parsed
    /// request only (system text, turns, tool names: the same as with it) and `body` is
    /// `Null`; a Chat Completions body is then read straight into turns, not built as a
    /// JSON tree first, and its other keys are skipped.
    pub body: bool,
}

impl Default for MockOptions {
    fn default() -> Self {
        MockOptions {
            keep_requests: true,
            tool_schemas: true,
            reply_delay: Duration::ZERO,
            body: true,
        }
    }
}

impl MockOptions {
    /// For long runs: keeps counts, not requests, and reads tool names, not schemas.
    pub fn lean() -> Self {
        MockOptions {
            keep_requests: false,
            tool_schemas: false,
            reply_delay: Duration::ZERO,
            body: true,
        }
    }

    /// For campaigns: [`MockOptions::lean`], and scripts see the parsed request, not its
    /// body ([`MockOptions::body`] off).
    pub fn campaign() -> Self {
        MockOptions {
            body: false,
            ..MockOptions::lean()
        }
    }

    /// These options with a delay before every answer ([`MockOptions::reply_delay`]).
    #[must_use]
    pub fn with_reply_delay(mut self, d: Duration) -> Self {
        self.reply_delay = d;
        self
    }
}

#[derive(Default)]
struct Inner {
    scripts: HashMap<String, Arc<dyn Script>>,
    faults: HashMap<String, VecDeque<Fault>>,
    requests: Vec<Recorded>,
    counts: HashMap<String, usize>,
    counter: u64,
}

/// The server's state: its options, what changes under the lock, and the gauge of requests
/// being answered.
struct Shared {
    options: MockOptions,
    inner: Mutex<Inner>,
    /// Requests received (body read) and not yet answered: what the server is holding, e.g.
    /// waiting out [`MockOptions::reply_delay`].
    in_flight: AtomicUsize,
    /// The most requests in flight at once so far.
    peak_in_flight: AtomicUsize,
    /// Tool lists read so far (lean servers).
    tool_sets: ToolSets,
}

/// Counts one request in flight while it lives.
struct InFlight<'a>(&'a Shared);

impl<'a> InFlight<'a> {
    fn enter(s: &'a Shared) -> Self {
        let now = s.in_flight.fetch_add(1, Ordering::Relaxed) + 1;
        s.peak_in_flight.fetch_max(now, Ordering::Relaxed);
        InFlight(s)
    }
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The running server. Dropping it stops it.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: tokio::task::JoinHandle<()>,
}

impl std::fmt::Debug for MockServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(m: &Mutex<Inner>) -> std::sync::MutexGuard<'_, Inner> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl MockServer {
    /// Starts a server on `127.0.0.1:0` that keeps every request
    /// ([`MockOptions::default`]).
    pub async fn start() -> std::io::Result<MockServer> {
        MockServer::start_with(MockOptions::default()).await
    }

    /// Starts a server on `127.0.0.1:0` with these options.
    #[allow(clippy::unused_async)] // async like `start`, so callers need not care which
    pub async fn start_with(options: MockOptions) -> std::io::Result<MockServer> {
        let shared = Arc::new(Shared {
            options,
            inner: Mutex::new(Inner::default()),
            in_flight: AtomicUsize::new(0),
            peak_in_flight: AtomicUsize::new(0),
            tool_sets: ToolSets::default(),
        });
        let app = Router::new()
            .route("/{role}/v1/chat/completions", post(chat))
            .route("/{role}/v1/responses", post(responses))
            .route("/{role}/v1/messages", post(messages))
            .with_state(shared.clone());
        // A deep accept queue: thousands of clients may connect at once (tokio's `bind`
        // listens with a backlog of 1024; a full queue drops SYNs, which clients resend only
        // after a second). The kernel caps it at net.core.somaxconn.
        let socket = tokio::net::TcpSocket::new_v4()?;
        socket.bind(SocketAddr::from(([127, 0, 0, 1], 0)))?;
        let listener = socket.listen(8192)?;
        let addr = listener.local_addr()?;
        let task = tokio::spawn(serve(listener, app));
        Ok(MockServer { addr, shared, task })
    }

    /// The server address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The endpoint URL of a role for an API.
    pub fn url(&self, role: &str, api: Api) -> String {
        format!("http://{}/{role}/{}", self.addr, api.path())
    }

    /// Sets (replaces) a role's script.
    pub fn set_script(&self, role: &str, script: impl Script + 'static) {
        lock(&self.shared.inner)
            .scripts
            .insert(role.to_string(), Arc::new(script));
    }

    /// Queues a fault for a role's next request.
    pub fn push_fault(&self, role: &str, fault: Fault) {
        lock(&self.shared.inner)
            .faults
            .entry(role.to_string())
            .or_default()
            .push_back(fault);
    }

    /// Every request received so far (none when the server does not keep them, see
    /// [`MockOptions::keep_requests`]).
    pub fn requests(&self) -> Vec<Recorded> {
        lock(&self.shared.inner).requests.clone()
    }

    /// Requests received and not yet answered, now (a slow model holds each for its
    /// [`MockOptions::reply_delay`]): sampled over a run, how many requests the clients keep
    /// outstanding.
    pub fn in_flight(&self) -> usize {
        self.shared.in_flight.load(Ordering::Relaxed)
    }

    /// The most requests in flight at once since the server started (or since
    /// [`MockServer::reset_peak_in_flight`]).
    pub fn peak_in_flight(&self) -> usize {
        self.shared.peak_in_flight.load(Ordering::Relaxed)
    }

    /// Restarts [`MockServer::peak_in_flight`] from the requests in flight now.
    pub fn reset_peak_in_flight(&self) {
        self.shared
            .peak_in_flight
            .store(self.in_flight(), Ordering::Relaxed);
    }

    /// Requests received for a role (kept or not).
    pub fn count(&self, role: &str) -> usize {
        lock(&self.shared.inner)
            .counts
            .get(role)
            .copied()
            .unwrap_or(0)
    }
}

/// Most bytes a connection reads at once (hyper's `max_buf_size`; its default is ~400 KB).
/// An agent request is ~100 KB, mostly tool schemas: with hyper's default, every connection
/// that ever carried one keeps a read buffer that large while idle, and a campaign with
/// thousands of attempts in flight keeps thousands of connections. Read in 16 KiB pieces,
/// the body is gathered once by the handler's extractor.
const READ_BUF_BYTES: usize = 16 * 1024;

/// Serves `app` on `listener`, one task per connection (HTTP/1.1, keep-alive, TCP_NODELAY,
/// reads of at most [`READ_BUF_BYTES`]).
async fn serve(listener: tokio::net::TcpListener, app: Router) {
    loop {
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // EMFILE and the like: back off instead of spinning.
                tracing::warn!(error = %e, "mock server: accept failed");
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let _ = stream.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .max_buf_size(READ_BUF_BYTES)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

type ServerState = Arc<Shared>;

async fn chat(
    State(s): State<ServerState>,
    Path(role): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    handle(s, role, Api::Chat, headers, body).await
}

async fn responses(
    State(s): State<ServerState>,
    Path(role): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    handle(s, role, Api::Responses, headers, body).await
}

async fn messages(
    State(s): State<ServerState>,
    Path(role): Path<String>,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    handle(s, role, Api::Anthropic, headers, body).await
}

async fn handle(
    s: ServerState,
    role: String,
    api: Api,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let _in_flight = InFlight::enter(&s);
    // The body's bytes (with every tool schema: most of an agent request) are dropped once
    // parsed, and the reply is built before the wait: what a request holds while the slow
    // model "thinks" is the reply's few hundred bytes.
    let keep_body = s.options.body || s.options.keep_requests;
    let parsed = if s.options.tool_schemas {
        serde_json::from_slice::<Value>(&body)
            .ok()
            .map(|v| (v, None, None))
    } else {
        let chat_turns = api == Api::Chat && !keep_body;
        parse_without_schemas(&body, &role, &s.tool_sets, chat_turns)
            .map(|b| (Value::Object(b.rest), Some(b.tool_names), b.chat))
    };
    drop(body);
    let Some((body, tool_names, chat)) = parsed else {
        return (
            StatusCode::BAD_REQUEST,
            "{\"error\":\"the body is not JSON\"}",
        )
            .into_response();
    };
    // what is kept is built before taking the lock
    let recorded = s.options.keep_requests.then(|| Recorded {
        role: role.clone(),
        api,
        headers: headers
            .iter()
            .map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or("").to_string()))
            .collect(),
        body: body.clone(),
    });
    drop(headers);
    let (fault, script, n) = {
        let mut g = lock(&s.inner);
        if let Some(r) = recorded {
            g.requests.push(r);
        }
        match g.counts.get_mut(&role) {
            Some(c) => *c += 1,
            None => {
                g.counts.insert(role.clone(), 1);
            }
        }
        g.counter += 1;
        let n = g.counter;
        (
            g.faults.get_mut(&role).and_then(VecDeque::pop_front),
            g.scripts.get(&role).cloned(),
            n,
        )
    };
    match fault {
        Some(Fault::Status {
            status,
            retry_after,
            body,
        }) => {
            let mut resp = (
                StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                body,
            )
                .into_response();
            if let Some(ra) = retry_after
                && let Ok(v) = ra.parse()
            {
                resp.headers_mut().insert("retry-after", v);
            }
            return resp;
        }
        Some(Fault::Malformed(text)) => {
            return (StatusCode::OK, [("content-type", "application/json")], text).into_response();
        }
        Some(Fault::Delay(d)) => tokio::time::sleep(d).await,
        None => {}
    }
    let response = match script {
        None => (
            StatusCode::NOT_FOUND,
            format!("{{\"error\":\"no script for role {role}\"}}"),
        )
            .into_response(),
        Some(script) => {
            let mut req = match chat {
                Some((system, turns)) => MockRequest {
                    api,
                    system,
                    turns,
                    tools: Vec::new(),
                    body: Value::Null,
                },
                None => parse_owned(api, body),
            };
            if !keep_body {
                req.body = Value::Null;
            }
            if let Some(names) = tool_names {
                req.tools = names;
            }
            let reply = script.reply(&req);
            let out = encode(api, &req, reply, n);
            drop(req);
            axum::Json(out).into_response()
        }
    };
    if !s.options.reply_delay.is_zero() {
        tokio::time::sleep(s.options.reply_delay).await;
    }
    response
}

/// The tool lists a lean server has read, kept so that a request carrying the same list
/// again (an agent sends its whole tool list, ~85 KB of schemas, with every turn) is matched
/// byte for byte instead of parsed: a list's JSON text is a complete value, so a body whose
/// bytes at the `tools` value start with that text holds that very list, and its names are
/// the ones read the first time. Per role the list last seen; the distinct lists are shared
/// between roles and bounded ([`MAX_TOOL_SETS`]; past it, lists are parsed every time).
#[derive(Default)]
struct ToolSets {
    inner: Mutex<ToolSetsInner>,
}

#[derive(Default)]
struct ToolSetsInner {
    by_role: HashMap<String, Arc<KnownTools>>,
    distinct: Vec<Arc<KnownTools>>,
}

/// One tool list as sent (its JSON text) and its tools' names.
struct KnownTools {
    json: Vec<u8>,
    names: Vec<String>,
}

/// Most distinct tool lists a lean server remembers.
const MAX_TOOL_SETS: usize = 256;

impl ToolSets {
    fn lock(&self) -> std::sync::MutexGuard<'_, ToolSetsInner> {
        self.inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The list a role sent last.
    fn last(&self, role: &str) -> Option<Arc<KnownTools>> {
        self.lock().by_role.get(role).cloned()
    }

    /// Remembers a list a role sent (read in full), shared with the roles that sent the same.
    fn remember(&self, role: &str, json: &[u8], names: &[String]) {
        let mut g = self.lock();
        let known = match g.distinct.iter().find(|k| k.json == json) {
            Some(k) => k.clone(),
            None if g.distinct.len() < MAX_TOOL_SETS => {
                let k = Arc::new(KnownTools {
                    json: json.to_vec(),
                    names: names.to_vec(),
                });
                g.distinct.push(k.clone());
                k
            }
            None => return,
        };
        match g.by_role.get_mut(role) {
            Some(k) => *k = known,
            None => {
                g.by_role.insert(role.to_string(), known);
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b
        .get(i)
        .is_some_and(|c| matches!(c, b' ' | b'\n' | b'\r' | b'\t'))
    {
        i += 1;
    }
    i
}

/// Reads one JSON value of type `T` starting at `b[i]` (no leading whitespace); returns it
/// and the offset just past it.
fn value_at<'de, T: serde::Deserialize<'de>>(b: &'de [u8], i: usize) -> Option<(T, usize)> {
    let mut stream = serde_json::Deserializer::from_slice(b.get(i..)?).into_iter::<T>();
    let v = stream.next()?.ok()?;
    Some((v, i + stream.byte_offset()))
}

/// Reads a request body of a lean server ([`MockOptions::tool_schemas`] off): every
/// top-level key but `tools` as a `Value`, and of `tools` the names only. A `tools` list the
/// role sent before is recognised by its bytes ([`ToolSets`]) and not parsed again. `None`
/// when the body is not a JSON object.
///
/// With `chat_turns`, the body is a Chat Completions request read for its script only: its
/// `messages` straight into the system text and turns ([`WithoutSchemas::chat`], what
/// [`parse`] gives), every other key skipped (`rest` stays empty).
fn parse_without_schemas(
    body: &[u8],
    role: &str,
    sets: &ToolSets,
    chat_turns: bool,
) -> Option<WithoutSchemas> {
    let mut rest = serde_json::Map::new();
    let mut tool_names = Vec::new();
    let mut chat = chat_turns.then(|| (String::new(), Vec::new()));
    let mut i = skip_ws(body, 0);
    if body.get(i) != Some(&b'{') {
        return None;
    }
    i = skip_ws(body, i + 1);
    if body.get(i) == Some(&b'}') {
        i += 1;
    } else {
        loop {
            if body.get(i) != Some(&b'"') {
                return None;
            }
            let (key, end) = value_at::<std::borrow::Cow<'_, str>>(body, i)?;
            i = skip_ws(body, end);
            if body.get(i) != Some(&b':') {
                return None;
            }
            i = skip_ws(body, i + 1);
            if key == "tools" {
                let last = sets.last(role);
                let after = |n: usize| {
                    let j = skip_ws(body, i + n);
                    matches!(body.get(j), Some(b',' | b'}'))
                };
                match last {
                    Some(k) if body[i..].starts_with(&k.json) && after(k.json.len()) => {
                        tool_names.clone_from(&k.names);
                        i += k.json.len();
                    }
                    _ => {
                        let (tools, end) = value_at::<Option<Vec<NamedTool>>>(body, i)?;
                        tool_names = tools
                            .unwrap_or_default()
                            .into_iter()
                            .filter_map(|t| match t.name {
                                Some(n) => n.as_str().map(str::to_string),
                                None => t.function?.name?.as_str().map(str::to_string),
                            })
                            .collect();
                        if body[i] == b'[' {
                            sets.remember(role, &body[i..end], &tool_names);
                        }
                        i = end;
                    }
                }
            } else if let Some(chat) = &mut chat {
                i = if key == "messages" {
                    let (ChatMessages(msgs), end) = value_at::<ChatMessages>(body, i)?;
                    *chat = chat_turns_of(msgs);
                    end
                } else {
                    value_at::<serde::de::IgnoredAny>(body, i)?.1
                };
            } else {
                let (v, end) = value_at::<Value>(body, i)?;
                rest.insert(key.into_owned(), v);
                i = end;
            }
            i = skip_ws(body, i);
            match body.get(i) {
                Some(b',') => i = skip_ws(body, i + 1),
                Some(b'}') => {
                    i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    (skip_ws(body, i) == body.len()).then_some(WithoutSchemas {
        rest,
        tool_names,
        chat,
    })
}

/// A request body read without its tools' schemas: every other key as a `Value`, and the
/// tools' names (what [`parse`] reads from a full body).
struct WithoutSchemas {
    rest: serde_json::Map<String, Value>,
    tool_names: Vec<String>,
    /// A Chat Completions conversation read straight into (system text, turns).
    chat: Option<(String, Vec<Turn>)>,
}

/// A Chat Completions `messages` value as [`parse`] reads it: a list (anything else reads
/// as no messages) of messages (an element that is not an object reads as a message with no
/// role, which is skipped).
struct ChatMessages(Vec<ChatMessage>);

/// The keys of a Chat Completions message that [`parse`] reads (every other key skipped;
/// of a repeated key the last, as a JSON object keeps it).
#[derive(Default)]
struct ChatMessage {
    role: Option<Value>,
    content: Option<Value>,
    tool_calls: Option<Value>,
    tool_call_id: Option<Value>,
}

impl<'de> serde::Deserialize<'de> for ChatMessages {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ChatMessages;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ChatMessages, A::Error> {
                let mut out = Vec::new();
                while let Some(m) = a.next_element::<ChatMessage>()? {
                    out.push(m);
                }
                Ok(ChatMessages(out))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ChatMessages, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_bool<E>(self, _: bool) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_i64<E>(self, _: i64) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_u64<E>(self, _: u64) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_f64<E>(self, _: f64) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_str<E>(self, _: &str) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
            fn visit_unit<E>(self) -> Result<ChatMessages, E> {
                Ok(ChatMessages(Vec::new()))
            }
        }
        d.deserialize_any(V)
    }
}

impl<'de> serde::Deserialize<'de> for ChatMessage {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = ChatMessage;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ChatMessage, A::Error> {
                let mut m = ChatMessage::default();
                while let Some(k) = a.next_key::<std::borrow::Cow<'de, str>>()? {
                    let slot = match k.as_ref() {
                        "role" => &mut m.role,
                        "content" => &mut m.content,
                        "tool_calls" => &mut m.tool_calls,
                        "tool_call_id" => &mut m.tool_call_id,
                        _ => {
                            a.next_value::<serde::de::IgnoredAny>()?;
                            continue;
                        }
                    };
                    *slot = Some(a.next_value::<Value>()?);
                }
                Ok(m)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut a: A,
            ) -> Result<ChatMessage, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(ChatMessage::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
            fn visit_unit<E>(self) -> Result<ChatMessage, E> {
                Ok(ChatMessage::default())
            }
        }
        d.deserialize_any(V)
    }
}

/// A message's text as [`parse`] reads it (taking the string rather than copying it).
fn take_text(v: Option<Value>) -> String {
    match v {
        Some(Value::String(s)) => s,
        Some(other) => text_of(&other),
        None => String::new(),
    }
}

/// The system text and turns of Chat Completions messages, as [`parse`] gives them.
fn chat_turns_of(msgs: Vec<ChatMessage>) -> (String, Vec<Turn>) {
    let mut system = Vec::new();
    let mut turns = Vec::new();
    for m in msgs {
        let c = take_text(m.content);
        match m.role.as_ref().and_then(Value::as_str).unwrap_or("") {
            "system" | "developer" => system.push(c),
            "user" => turns.push(Turn::User(c)),
            "assistant" => {
                if !c.is_empty() {
                    turns.push(Turn::Assistant(c));
                }
                if let Some(Value::Array(calls)) = &m.tool_calls {
                    turns.push(Turn::ToolCalls(calls.iter().map(chat_call).collect()));
                }
            }
            "tool" => turns.push(Turn::ToolResult {
                id: s(m.tool_call_id.as_ref()),
                content: c,
            }),
            _ => {}
        }
    }
    (system.join("\n"), turns)
}

/// One Chat Completions tool call as (id, name, arguments).
fn chat_call(tc: &Value) -> (String, String, Value) {
    let args = tc
        .pointer("/function/arguments")
        .and_then(Value::as_str)
        .and_then(|s| serde_json::from_str(s).ok())
        .unwrap_or(Value::Null);
    (s(tc.get("id")), s(tc.pointer("/function/name")), args)
}

/// A tool of a request's `tools` list: its `name` (Responses, Anthropic) or `function.name`
/// (Chat); the rest is skipped unread.
#[derive(serde::Deserialize)]
struct NamedTool {
    name: Option<Value>,
    function: Option<NamedFunction>,
}

#[derive(serde::Deserialize)]
struct NamedFunction {
    name: Option<Value>,
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        _ => String::new(),
    }
}

/// Parses a request body of an API into the provider-neutral form.
pub fn parse(api: Api, body: &Value) -> MockRequest {
    parse_owned(api, body.clone())
}

/// [`parse`], keeping the body it is given as the request's `body`.
pub fn parse_owned(api: Api, body: Value) -> MockRequest {
    let (system, turns, tools) = parse_parts(api, &body);
    MockRequest {
        api,
        system,
        turns,
        tools,
        body,
    }
}

fn parse_parts(api: Api, body: &Value) -> (String, Vec<Turn>, Vec<String>) {
    let mut system = Vec::new();
    let mut turns = Vec::new();
    let empty = Vec::new();
    let tools: Vec<String> = body
        .get("tools")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
        .iter()
        .filter_map(|t| {
            t.get("name")
                .or_else(|| t.pointer("/function/name"))
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect();
    match api {
        Api::Chat => {
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
            {
                let c = text_of(m.get("content").unwrap_or(&Value::Null));
                match m.get("role").and_then(Value::as_str).unwrap_or("") {
                    "system" | "developer" => system.push(c),
                    "user" => turns.push(Turn::User(c)),
                    "assistant" => {
                        if !c.is_empty() {
                            turns.push(Turn::Assistant(c));
                        }
                        if let Some(calls) = m.get("tool_calls").and_then(Value::as_array) {
                            turns.push(Turn::ToolCalls(calls.iter().map(chat_call).collect()));
                        }
                    }
                    "tool" => turns.push(Turn::ToolResult {
                        id: s(m.get("tool_call_id")),
                        content: c,
                    }),
                    _ => {}
                }
            }
        }
        Api::Responses => {
            for it in body
                .get("input")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
            {
                match (
                    it.get("type").and_then(Value::as_str),
                    it.get("role").and_then(Value::as_str),
                ) {
                    (Some("function_call"), _) => {
                        let args = it
                            .get("arguments")
                            .and_then(Value::as_str)
                            .and_then(|a| serde_json::from_str(a).ok())
                            .unwrap_or(Value::Null);
                        let call = (s(it.get("call_id")), s(it.get("name")), args);
                        if let Some(Turn::ToolCalls(c)) = turns.last_mut() {
                            c.push(call);
                        } else {
                            turns.push(Turn::ToolCalls(vec![call]));
                        }
                    }
                    (Some("function_call_output"), _) => turns.push(Turn::ToolResult {
                        id: s(it.get("call_id")),
                        content: s(it.get("output")),
                    }),
                    (Some("reasoning"), _) => {}
                    (_, Some("system" | "developer")) => {
                        system.push(text_of(it.get("content").unwrap_or(&Value::Null)));
                    }
                    (_, Some("user")) => turns.push(Turn::User(text_of(
                        it.get("content").unwrap_or(&Value::Null),
                    ))),
                    (_, Some("assistant")) => turns.push(Turn::Assistant(text_of(
                        it.get("content").unwrap_or(&Value::Null),
                    ))),
                    _ => {}
                }
            }
        }
        Api::Anthropic => {
            if let Some(sys) = body.get("system") {
                system.push(text_of(sys));
            }
            for m in body
                .get("messages")
                .and_then(Value::as_array)
                .unwrap_or(&empty)
            {
                let role = m.get("role").and_then(Value::as_str).unwrap_or("");
                for b in m.get("content").and_then(Value::as_array).unwrap_or(&empty) {
                    match b.get("type").and_then(Value::as_str).unwrap_or("") {
                        "text" if role == "user" => turns.push(Turn::User(s(b.get("text")))),
                        "text" => turns.push(Turn::Assistant(s(b.get("text")))),
                        "tool_use" => {
                            let call = (
                                s(b.get("id")),
                                s(b.get("name")),
                                b.get("input").cloned().unwrap_or(Value::Null),
                            );
                            if let Some(Turn::ToolCalls(c)) = turns.last_mut() {
                                c.push(call);
                            } else {
                                turns.push(Turn::ToolCalls(vec![call]));
                            }
                        }
                        "tool_result" => turns.push(Turn::ToolResult {
                            id: s(b.get("tool_use_id")),
                            content: text_of(b.get("content").unwrap_or(&Value::Null)),
                        }),
                        _ => {}
                    }
                }
            }
        }
    }
    (system.join("\n"), turns, tools)
}

fn s(v: Option<&Value>) -> String {
    v.and_then(Value::as_str).unwrap_or("").to_string()
}

fn encode(api: Api, req: &MockRequest, reply: Reply, n: u64) -> Value {
    let base = req.tool_calls_so_far();
    let (think, text, calls): (Option<String>, Option<String>, Vec<(String, String)>) = match reply
    {
        Reply::Text(t) => (None, Some(t), vec![]),
        Reply::ThinkThenText(r, t) => (Some(r), Some(t), vec![]),
        Reply::Calls(c) => (
            None,
            None,
            c.into_iter().map(|(n, a)| (n, a.to_string())).collect(),
        ),
        Reply::RawCall { name, arguments } => (None, None, vec![(name, arguments)]),
    };
    let id = |i: usize| format!("call_{}", base + i + 1);
    let input_tokens = 100 + req.turns.len() as u64;
    match api {
        Api::Chat => {
            let tool_calls: Vec<Value> = calls.iter().enumerate().map(|(i, (name, args))| json!({"id": id(i), "type": "function", "function": {"name": name, "arguments": args}})).collect();
            let mut msg = json!({"role": "assistant", "content": text});
            if let Some(r) = think {
                msg["reasoning_content"] = json!(r);
            }
            if !tool_calls.is_empty() {
                msg["tool_calls"] = Value::Array(tool_calls);
            }
            json!({"id": format!("chatcmpl-{n}"), "object": "chat.completion", "choices": [{"index": 0, "message": msg, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": input_tokens, "completion_tokens": 10, "total_tokens": input_tokens + 10, "prompt_tokens_details": {"cached_tokens": 3}, "completion_tokens_details": {"reasoning_tokens": 2}}})
        }
        Api::Responses => {
            let mut output = Vec::new();
            if let Some(r) = think {
                output.push(json!({"type": "reasoning", "id": format!("rs_{n}"), "summary": [{"type": "summary_text", "text": r}]}));
            }
            if let Some(t) = text {
                output.push(json!({"type": "message", "id": format!("msg_{n}"), "role": "assistant", "content": [{"type": "output_text", "text": t, "logprobs": null}]}));
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                output.push(json!({"type": "function_call", "id": format!("fc_{n}_{i}"), "call_id": id(i), "name": name, "arguments": args}));
            }
            json!({"id": format!("resp_{n}"), "object": "response", "output": output,
                "usage": {"input_tokens": input_tokens, "input_tokens_details": {"cached_tokens": 3}, "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 2}, "total_tokens": input_tokens + 10}})
        }
        Api::Anthropic => {
            let mut content = Vec::new();
            if let Some(r) = think {
                content.push(json!({"type": "thinking", "thinking": r, "signature": "sig"}));
            }
            if let Some(t) = text {
                content.push(json!({"type": "text", "text": t}));
            }
            for (i, (name, args)) in calls.iter().enumerate() {
                let input: Value =
                    serde_json::from_str(args).unwrap_or(Value::String(args.clone()));
                content
                    .push(json!({"type": "tool_use", "id": id(i), "name": name, "input": input}));
            }
            json!({"id": format!("msg_{n}"), "type": "message", "role": "assistant", "content": content,
                "usage": {"input_tokens": input_tokens, "output_tokens": 10, "cache_read_input_tokens": 3}})
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a lean read must give: the body without `tools`, and the names [`parse`] reads.
    fn expected(body: &str) -> (Value, Vec<String>) {
        let mut v: Value = serde_json::from_str(body).unwrap();
        let names = parse(Api::Chat, &v).tools;
        v.as_object_mut().unwrap().remove("tools");
        (v, names)
    }

    fn lean(body: &str, role: &str, sets: &ToolSets) -> Option<(Value, Vec<String>)> {
        parse_without_schemas(body.as_bytes(), role, sets, false)
            .map(|w| (Value::Object(w.rest), w.tool_names))
    }

    #[test]
    fn a_lean_read_is_the_full_read_without_schemas_first_time_and_again() {
        let sets = ToolSets::default();
        let a = r#"{"messages":[{"role":"user","content":"hi \"there\""}],"temperature":0.5,
            "tools":[{"type":"function","function":{"name":"get","parameters":{"x":[1,{"y":"]"}]}}},
                     {"name":"find","description":"a } and a ]"}],"parallel_tool_calls":false}"#;
        let b = r#" { "tools" : [{"name":"other"}] , "seed": 3 } "#;
        for _ in 0..3 {
            assert_eq!(lean(a, "r", &sets), Some(expected(a)));
            assert_eq!(lean(b, "s", &sets), Some(expected(b)));
        }
        // the same role with another list, then a list that starts like the known one
        assert_eq!(lean(b, "r", &sets), Some(expected(b)));
        let longer = r#"{"tools":[{"name":"other"},{"name":"more"}]}"#;
        assert_eq!(lean(longer, "r", &sets), Some(expected(longer)));
        assert_eq!(lean(b, "r", &sets), Some(expected(b)));
        // known lists are shared between roles: one copy of each
        assert_eq!(sets.lock().distinct.len(), 3);
        // no tools, null tools, empty object
        for body in [r#"{"messages":[]}"#, r#"{"tools":null}"#, "{}", " {\n} "] {
            assert_eq!(lean(body, "r", &sets), Some(expected(body)), "{body}");
        }
    }

    #[test]
    fn a_campaign_read_gives_the_turns_of_the_full_read() {
        let sets = ToolSets::default();
        let bodies = [
            r#"{"model":"m","messages":[{"role":"system","content":"be\nbrief"},
                {"role":"developer","content":[{"type":"text","text":"a"},{"text":"b"},{"x":1}]},
                {"role":"user","content":"find \"x\"","name":"u","content":"last wins"},
                {"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function",
                    "function":{"name":"get","arguments":"{\"id\": [1, 2]}"}},
                    {"id":"c2","function":{"name":"bad","arguments":"{not json"}},{"id":3}]},
                {"role":"tool","tool_call_id":"c1","content":"{\"ok\": true}"},
                {"role":"assistant","content":"done","tool_calls":"not a list"},
                {"role":"tool","content":7},
                {"role":"other","content":"x"}, {"content":"no role"}, 5, null, [1], "s"],
                "tools":[{"type":"function","function":{"name":"get"}}],"temperature":0.0}"#,
            r#"{"messages":[]}"#,
            r#"{"messages":null,"seed":1}"#,
            r#"{"messages":{"role":"user"}}"#,
            r#"{"messages":"x"}"#,
            "{}",
        ];
        for body in bodies {
            let v: Value = serde_json::from_str(body).unwrap();
            let full = parse(Api::Chat, &v);
            for _ in 0..2 {
                let w = parse_without_schemas(body.as_bytes(), "r", &sets, true).unwrap();
                assert!(w.rest.is_empty());
                assert_eq!(
                    w.chat,
                    Some((full.system.clone(), full.turns.clone())),
                    "{body}"
                );
                assert_eq!(w.tool_names, full.tools, "{body}");
            }
        }
        // the first body's turns, spelled out
        let full = parse(Api::Chat, &serde_json::from_str(bodies[0]).unwrap());
        assert_eq!(full.system, "be\nbrief\nab");
        assert_eq!(full.turns.len(), 5);
        assert_eq!(full.tool_calls_so_far(), 3);
        assert_eq!(full.last_user(), Some("last wins"));
    }

    #[test]
    fn a_lean_read_refuses_what_is_not_one_json_object() {
        let sets = ToolSets::default();
        let known = r#"{"tools":[{"name":"a"}]}"#;
        assert!(lean(known, "r", &sets).is_some());
        for body in [
            "",
            "[]",
            "{",
            r#"{"tools":[{"name":"a"}]"#,
            r#"{"tools":[{"name":"a"}]]}"#,
            r#"{"tools":[{"name":"a"}] x}"#,
            r#"{"tools":[{"name":"a"}]} {}"#,
            r#"{"tools":[1]}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r"{a:1}",
            r#"{"a":tru}"#,
        ] {
            assert_eq!(lean(body, "r", &sets), None, "{body}");
            assert!(
                serde_json::from_str::<Value>(body).is_err()
                    || body == "[]"
                    || body.contains("[1]"),
                "{body}"
            );
        }
    }
}
