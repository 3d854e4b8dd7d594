//! The HTTP client of one model: builds the request for its provider, sends it with the
//! reference's retry rules, decodes the reply. [`ChatSession`] keeps a provider-native
//! conversation across calls (the agent); [`LlmClient::complete_messages`] runs a one-off
//! conversation (simulated user, judge).

use crate::config::{LlmConfig, Provider};
use crate::retry::{self, Budget, Failure};
use crate::wire::{self, Decoded, ToolSet, ToolSpec};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};
use std::time::{Duration, Instant};
use tb_core::{Message, Usage};
use tokio::sync::Semaphore;

/// Errors of a model call. [`LlmError::kind`] names the class for records.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlmError {
    /// The config cannot be used (bad URL, header, ...).
    #[error("model config: {0}")]
    Config(String),
    /// The conversation cannot be sent to this API.
    #[error("cannot encode the request: {0}")]
    Encode(String),
    /// A non-retryable HTTP status, or a retryable one after its budget.
    #[error("HTTP {status} from {endpoint} after {attempts} attempt(s): {message}")]
    Http {
        /// Status.
        status: u16,
        /// The error text of the reply.
        message: String,
        /// Endpoint (scheme, host and path).
        endpoint: String,
        /// Requests sent.
        attempts: u32,
    },
    /// Timed out after the timeout budget.
    #[error("timed out after {attempts} attempt(s) of {secs}s each at {endpoint}")]
    Timeout {
        /// Per-request timeout.
        secs: f64,
        /// Endpoint.
        endpoint: String,
        /// Requests sent.
        attempts: u32,
    },
    /// Could not connect after the connect budget.
    #[error("cannot connect to {endpoint} after {attempts} attempt(s): {message}")]
    Connect {
        /// Cause.
        message: String,
        /// Endpoint.
        endpoint: String,
        /// Requests sent.
        attempts: u32,
    },
    /// Another transport error (connection reset, ...).
    #[error("request to {endpoint} failed: {message}")]
    Transport {
        /// Cause.
        message: String,
        /// Endpoint.
        endpoint: String,
    },
    /// A reply of the API's shape that the reference's client stops on (not retried): its
    /// text is the reference's (Python's) text of the failure.
    #[error("{message}")]
    Rejected {
        /// The failure's text.
        message: String,
    },
    /// 2xx replies that were not the API's shape, after the malformed budget.
    #[error("{message} (from {endpoint}, {attempts} attempt(s))")]
    Malformed {
        /// What was wrong.
        message: String,
        /// Endpoint.
        endpoint: String,
        /// Requests sent.
        attempts: u32,
    },
}

impl LlmError {
    /// The error class for `metadata.error.type`.
    pub fn kind(&self) -> &'static str {
        match self {
            LlmError::Config(_) => "ModelConfigError",
            LlmError::Encode(_) => "ModelEncodeError",
            LlmError::Http { status: 429, .. } => "RateLimited",
            LlmError::Http { .. } => "HttpError",
            LlmError::Timeout { .. } => "Timeout",
            LlmError::Connect { .. } => "ConnectError",
            LlmError::Transport { .. } => "TransportError",
            LlmError::Malformed { .. } => "MalformedReply",
            LlmError::Rejected { .. } => "RuntimeError",
        }
    }
}

/// One model reply.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    /// The reply as our messages.
    pub messages: Vec<Message>,
    /// Native items to append to the conversation.
    pub native: Vec<Value>,
    /// Usage of this call.
    pub usage: Usage,
    /// Requests sent (1 without retries).
    pub attempts: u32,
    /// Wall time of the call including retries.
    pub elapsed: Duration,
}

/// Installs rustls' `ring` crypto provider once per process (reqwest is built without one).
pub fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// The TLS config of every HTTP client: what reqwest builds by default (the platform's root
/// certificates, TLS 1.2 and 1.3, ALPN h2 then http/1.1), built once per process. Building it
/// reads and parses the system's root store (3 to 5 ms), which reqwest does again for every
/// client it builds (`tb bench` builds one client per task).
fn tls_config() -> Result<rustls::ClientConfig, String> {
    static TLS: OnceLock<Result<rustls::ClientConfig, String>> = OnceLock::new();
    TLS.get_or_init(|| {
        install_crypto_provider();
        let provider = rustls::crypto::CryptoProvider::get_default()
            .cloned()
            .ok_or("no rustls crypto provider is installed")?;
        let verifier = rustls_platform_verifier::Verifier::new(provider.clone())
            .map_err(|e| format!("cannot load the platform's root certificates: {e}"))?;
        let mut tls = rustls::ClientConfig::builder_with_provider(provider)
            .with_protocol_versions(rustls::ALL_VERSIONS)
            .map_err(|e| format!("TLS versions: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        Ok(tls)
    })
    .clone()
}

/// Default bound on connections (requests in flight) per endpoint, see
/// [`set_connections_per_endpoint`].
pub const DEFAULT_CONNECTIONS_PER_ENDPOINT: usize = 4096;

static CONNECTIONS_PER_ENDPOINT: AtomicUsize = AtomicUsize::new(DEFAULT_CONNECTIONS_PER_ENDPOINT);

/// Bounds the connections this process opens to one endpoint (scheme, host and port): every
/// model client of the process shares one HTTP connection pool, and a request holds one of
/// its endpoint's permits while it is in flight, so an HTTP/1.1 endpoint never sees more
/// connections than this. Takes effect for endpoints not yet used; call it before building
/// clients. 0 is taken as 1.
pub fn set_connections_per_endpoint(n: usize) {
    CONNECTIONS_PER_ENDPOINT.store(n.clamp(1, Semaphore::MAX_PERMITS), Ordering::Relaxed);
}

/// The bound of [`set_connections_per_endpoint`].
pub fn connections_per_endpoint() -> usize {
    CONNECTIONS_PER_ENDPOINT.load(Ordering::Relaxed)
}

/// The process-wide gate of one endpoint (`scheme://host:port`).
fn endpoint_gate(origin: &str) -> Arc<Semaphore> {
    static GATES: OnceLock<Mutex<HashMap<String, Arc<Semaphore>>>> = OnceLock::new();
    let mut g = GATES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    g.entry(origin.to_string())
        .or_insert_with(|| Arc::new(Semaphore::new(connections_per_endpoint())))
        .clone()
}

/// The process-wide HTTP client (one connection pool) for a connect timeout and the tokio
/// runtime the client is built on: every model client with that timeout shares it, so
/// connections are reused across attempts, roles and clients of one endpoint. Idle
/// connections per host are kept up to the per-endpoint bound. Keyed by runtime too, because
/// a pooled connection is served by a task of the runtime that opened it and dies with it
/// (tests and `tb bench` run several runtimes in one process).
fn shared_http(connect_timeout: Duration) -> Result<reqwest::Client, String> {
    type Key = (u128, Option<tokio::runtime::Id>);
    static POOLS: OnceLock<Mutex<HashMap<Key, reqwest::Client>>> = OnceLock::new();
    let key = (
        connect_timeout.as_millis(),
        tokio::runtime::Handle::try_current().ok().map(|h| h.id()),
    );
    let mut pools = POOLS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(c) = pools.get(&key) {
        return Ok(c.clone());
    }
    // A process that builds clients on many runtimes (a test binary) keeps only the latest
    // few pools; a dropped pool's clients keep their own handle to it.
    if pools.len() >= 16 {
        pools.clear();
    }
    let tls = tls_config()?;
    let http = reqwest::Client::builder()
        .connect_timeout(connect_timeout)
        .pool_max_idle_per_host(connections_per_endpoint())
        .pool_idle_timeout(Duration::from_secs(90))
        .tcp_nodelay(true)
        // A 3xx is the endpoint's answer, never followed: a redirect to another origin would
        // otherwise be sent the request (and, for some headers, the key) again.
        .redirect(reqwest::redirect::Policy::none())
        .tls_backend_preconfigured(tls)
        .build()
        .map_err(|e| e.to_string())?;
    pools.insert(key, http.clone());
    Ok(http)
}

/// A model client: config, HTTP client, URL.
#[derive(Debug, Clone)]
pub struct LlmClient {
    cfg: Arc<LlmConfig>,
    http: reqwest::Client,
    url: String,
    endpoint: String,
    headers: reqwest::header::HeaderMap,
    gate: Option<Arc<tokio::sync::Semaphore>>,
    /// The endpoint's process-wide connection bound.
    conns: Arc<Semaphore>,
}

impl LlmClient {
    /// Builds a client for a model config.
    pub fn new(cfg: &LlmConfig) -> Result<Self, LlmError> {
        install_crypto_provider();
        let url = cfg.url().map_err(LlmError::Config)?;
        let parsed = reqwest::Url::parse(&url).map_err(|e| {
            LlmError::Config(format!(
                "{}: endpoint URL `{}`: {e}",
                cfg.source,
                strip_query(&url)
            ))
        })?;
        let endpoint = format!(
            "{}://{}{}",
            parsed.scheme(),
            parsed.host_str().unwrap_or(""),
            parsed.port().map(|p| format!(":{p}")).unwrap_or_default()
        ) + parsed.path();
        let mut headers = reqwest::header::HeaderMap::new();
        let bad = |name: &str, e: &dyn std::fmt::Display| {
            LlmError::Config(format!("{}: header `{name}`: {e}", cfg.source))
        };
        for (k, v) in &cfg.headers {
            let name =
                reqwest::header::HeaderName::from_bytes(k.as_bytes()).map_err(|e| bad(k, &e))?;
            let mut val = reqwest::header::HeaderValue::from_str(v.expose())
                .map_err(|_| bad(k, &"the value is not a valid header value"))?;
            val.set_sensitive(true);
            headers.insert(name, val);
        }
        if let Some(c) = &cfg.credential {
            let name = reqwest::header::HeaderName::from_bytes(c.header.as_bytes())
                .map_err(|e| bad(&c.header, &e))?;
            let text = if name == reqwest::header::AUTHORIZATION {
                format!("Bearer {}", c.api_key.expose())
            } else {
                c.api_key.expose().to_string()
            };
            let mut val = reqwest::header::HeaderValue::from_str(&text)
                .map_err(|_| bad(&c.header, &"the key is not a valid header value"))?;
            val.set_sensitive(true);
            if !headers.contains_key(&name) {
                headers.insert(name, val);
            }
        }
        if cfg.provider == Provider::Anthropic && !headers.contains_key("anthropic-version") {
            headers.insert(
                "anthropic-version",
                reqwest::header::HeaderValue::from_static("2023-06-01"),
            );
        }
        let connect_timeout =
            Duration::try_from_secs_f64(cfg.timeout.min(30.0)).unwrap_or(Duration::from_secs(30));
        let http = shared_http(connect_timeout).map_err(|e| {
            LlmError::Config(format!("{}: cannot build the HTTP client: {e}", cfg.source))
        })?;
        let origin = format!(
            "{}://{}:{}",
            parsed.scheme(),
            parsed.host_str().unwrap_or(""),
            parsed.port_or_known_default().unwrap_or(0)
        );
        Ok(LlmClient {
            cfg: Arc::new(cfg.clone()),
            http,
            url,
            endpoint,
            headers,
            gate: None,
            conns: endpoint_gate(&origin),
        })
    }

    /// This client with a concurrency gate: each HTTP request holds one permit of `gate`
    /// while it is in flight (not while it waits to retry). Clients sharing a gate share its
    /// limit; a campaign gives each role its own, so one role cannot take all of an
    /// endpoint's capacity.
    #[must_use]
    pub fn with_gate(mut self, gate: Arc<tokio::sync::Semaphore>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// The config.
    pub fn config(&self) -> &LlmConfig {
        &self.cfg
    }

    /// Encodes tools for this provider.
    pub fn tools(&self, specs: &[ToolSpec]) -> Result<ToolSet, LlmError> {
        wire::encode_tools(self.cfg.provider, specs).map_err(|e| LlmError::Encode(e.0))
    }

    /// Encodes messages as native conversation items.
    pub fn encode(&self, msgs: &[Message]) -> Vec<Value> {
        msgs.iter()
            .flat_map(|m| wire::encode_message(&self.cfg, m))
            .collect()
    }

    /// One call on an explicit conversation without tools (simulated user, judge).
    pub async fn complete_messages(&self, msgs: &[Message]) -> Result<Completion, LlmError> {
        self.complete(&self.encode(msgs), None).await
    }

    /// One call: sends the native conversation (and tools), retrying as configured.
    pub async fn complete(
        &self,
        native: &[Value],
        tools: Option<&ToolSet>,
    ) -> Result<Completion, LlmError> {
        self.complete_with(native, tools, None, None).await
    }

    /// [`LlmClient::complete`], with the tools' JSON already written
    /// (`wire::tools_json(tools)`).
    async fn complete_with(
        &self,
        native: &[Value],
        tools: Option<&ToolSet>,
        tools_json: Option<&bytes::Bytes>,
        native_json: Option<&wire::NativeJson>,
    ) -> Result<Completion, LlmError> {
        // Written once, straight from the borrowed conversation (no copy of it), with the
        // tools' JSON shared, not copied; each attempt sends these same segments.
        let body = wire::request_body_segments(&self.cfg, native, tools, tools_json, native_json)
            .map_err(|e| LlmError::Encode(e.0))?;
        let started = Instant::now();
        let r = &self.cfg.retry;
        let mut budget = Budget::default();
        let mut attempts = 0u32;
        loop {
            attempts += 1;
            let permit = match &self.gate {
                Some(g) => g.acquire().await.ok(),
                None => None,
            };
            // After the role's gate, so a role waiting on its own limit holds no connection.
            let conn = self.conns.acquire().await.ok();
            let req = self.request(&body);
            let (failure, err, retry_after): (Failure, LlmError, Option<String>) =
                match req.send().await {
                    Ok(resp) => {
                        let status = resp.status().as_u16();
                        let retry_after = resp
                            .headers()
                            .get(reqwest::header::RETRY_AFTER)
                            .and_then(|v| v.to_str().ok())
                            .map(str::to_string);
                        if (300..400).contains(&status) {
                            return Err(LlmError::Http {
                                status,
                                message: redirect_text(&resp),
                                endpoint: self.endpoint.clone(),
                                attempts,
                            });
                        }
                        match read_capped(resp, self.cfg.max_reply_bytes).await {
                            Ok(Err(too_large)) => {
                                return Err(LlmError::Malformed {
                                    message: too_large,
                                    endpoint: self.endpoint.clone(),
                                    attempts,
                                });
                            }
                            Ok(Ok(body)) if (200..300).contains(&status) => {
                                match serde_json::from_slice::<Value>(&body)
                                    .map_err(|e| {
                                        wire::DecodeError::Malformed(wire::WireError(format!(
                                            "malformed reply: the body is not JSON ({e})"
                                        )))
                                    })
                                    .and_then(|v| wire::decode(&self.cfg, tools, &v))
                                {
                                    Ok(Decoded {
                                        messages,
                                        native,
                                        usage,
                                    }) => {
                                        return Ok(Completion {
                                            messages,
                                            native,
                                            usage,
                                            attempts,
                                            elapsed: started.elapsed(),
                                        });
                                    }
                                    Err(wire::DecodeError::Rejected(message)) => {
                                        return Err(LlmError::Rejected { message });
                                    }
                                    Err(wire::DecodeError::Malformed(e)) => (
                                        Failure::Malformed,
                                        LlmError::Malformed {
                                            message: e.0,
                                            endpoint: self.endpoint.clone(),
                                            attempts,
                                        },
                                        None,
                                    ),
                                }
                            }
                            Ok(Ok(body)) => {
                                let err = LlmError::Http {
                                    status,
                                    message: error_text(&String::from_utf8_lossy(&body)),
                                    endpoint: self.endpoint.clone(),
                                    attempts,
                                };
                                if status == 429 {
                                    (Failure::TooManyRequests, err, retry_after)
                                } else if r.retryable_server_errors.contains(&status) {
                                    (Failure::Server, err, None)
                                } else {
                                    return Err(err);
                                }
                            }
                            Err(e) => self.transport_failure(e, attempts)?,
                        }
                    }
                    Err(e) => self.transport_failure(e, attempts)?,
                };
            drop(conn);
            drop(permit);
            let Some(n) = budget.take(r, failure) else {
                return Err(err);
            };
            let d = if failure == Failure::TooManyRequests {
                retry::delay_429(r, n, retry_after.as_deref())
            } else {
                retry::delay(r, n)
            };
            tracing::warn!(model = %self.cfg.deployment, "{err}; retry {n} in {:.2}s", d.as_secs_f64());
            tokio::time::sleep(d).await;
        }
    }

    /// The POST of a JSON body (its segments, sent one after the other with their total as
    /// `Content-Length`), with this client's headers and timeout (the headers
    /// `RequestBuilder::json` sets).
    fn request(&self, body: &[bytes::Bytes]) -> reqwest::RequestBuilder {
        let mut req = self
            .http
            .post(&self.url)
            .headers(self.headers.clone())
            .timeout(Duration::from_secs_f64(self.cfg.timeout));
        if !self.headers.contains_key(reqwest::header::CONTENT_TYPE) {
            req = req.header(
                reqwest::header::CONTENT_TYPE,
                reqwest::header::HeaderValue::from_static("application/json"),
            );
        }
        req.body(match body {
            [one] => reqwest::Body::from(one.clone()),
            many => reqwest::Body::wrap(Segments::new(many)),
        })
    }

    fn transport_failure(
        &self,
        e: reqwest::Error,
        attempts: u32,
    ) -> Result<(Failure, LlmError, Option<String>), LlmError> {
        let endpoint = self.endpoint.clone();
        let (timeout, connect, other) = (
            e.is_timeout(),
            e.is_connect(),
            e.is_body() || e.is_request() || e.is_decode(),
        );
        // Without the URL: the error names the endpoint itself.
        let msg = tb_core::error_text(&e.without_url());
        if timeout {
            Ok((
                Failure::Timeout,
                LlmError::Timeout {
                    secs: self.cfg.timeout,
                    endpoint,
                    attempts,
                },
                None,
            ))
        } else if connect {
            Ok((
                Failure::Connect,
                LlmError::Connect {
                    message: msg,
                    endpoint,
                    attempts,
                },
                None,
            ))
        } else if self.cfg.retry.retry_read_errors && other {
            Ok((
                Failure::Server,
                LlmError::Transport {
                    message: msg,
                    endpoint,
                },
                None,
            ))
        } else {
            Err(LlmError::Transport {
                message: msg,
                endpoint,
            })
        }
    }
}

/// Reads a reply body up to `limit` bytes, chunk by chunk: a body announced (by its
/// `Content-Length`) or found longer is `Ok(Err(message))`, read no further than the limit.
async fn read_capped(
    mut resp: reqwest::Response,
    limit: u64,
) -> Result<Result<Vec<u8>, String>, reqwest::Error> {
    let too_large = |what: String| {
        format!(
            "the reply {what} the limit of {limit} bytes ({}, max_reply_bytes); it was not read further",
            human_bytes(limit)
        )
    };
    if let Some(n) = resp.content_length()
        && n > limit
    {
        return Ok(Err(too_large(format!("announces {n} bytes, over"))));
    }
    let first = resp.content_length().unwrap_or(0).min(limit).min(1 << 20);
    let mut body = Vec::with_capacity(usize::try_from(first).unwrap_or(0));
    while let Some(chunk) = resp.chunk().await? {
        if (body.len() + chunk.len()) as u64 > limit {
            return Ok(Err(too_large("is over".into())));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Ok(body))
}

/// `32 MiB`, `1.5 KiB`, `12 bytes`.
fn human_bytes(n: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    if n >= 1 << 30 {
        format!("{} GiB", f / f64::from(1u32 << 30))
    } else if n >= 1 << 20 {
        format!("{} MiB", f / f64::from(1u32 << 20))
    } else if n >= 1 << 10 {
        format!("{} KiB", f / 1024.0)
    } else {
        format!("{n} bytes")
    }
}

/// The message of a 3xx reply: where it points (scheme, host, port and path only) and that
/// redirects are not followed.
fn redirect_text(resp: &reqwest::Response) -> String {
    let target = resp
        .headers()
        .get(reqwest::header::LOCATION)
        .and_then(|v| v.to_str().ok())
        .map(|l| match resp.url().join(l) {
            Ok(u) => format!(
                "{}://{}{}{}",
                u.scheme(),
                u.host_str().unwrap_or(""),
                u.port().map(|p| format!(":{p}")).unwrap_or_default(),
                u.path()
            ),
            Err(_) => "an unreadable Location".into(),
        });
    match target {
        Some(t) => format!(
            "the endpoint redirects to {t}; redirects are not followed (set endpoint_url to the final URL)"
        ),
        None => "a redirect without a Location; redirects are not followed".into(),
    }
}

fn strip_query(u: &str) -> &str {
    u.split('?').next().unwrap_or(u)
}

/// The error text of a non-2xx reply: `error.message`, `error` or the body, shortened.
fn error_text(body: &str) -> String {
    let from_json = serde_json::from_str::<Value>(body).ok().and_then(|v| {
        let e = v.get("error")?;
        Some(match e {
            Value::String(s) => s.clone(),
            Value::Object(o) => o
                .get("message")
                .and_then(Value::as_str)
                .map_or_else(|| e.to_string(), str::to_string),
            other => other.to_string(),
        })
    });
    let mut s = from_json.unwrap_or_else(|| body.trim().to_string());
    if s.len() > 500 {
        let mut cut = 500;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push_str("...");
    }
    s
}

/// A request body of byte segments sent in order: the segments are reference-counted
/// buffers (the tools' JSON of a tool set is one, shared by all its requests), so no
/// request copies them. Its exact size is known, so it is sent with a `Content-Length`.
struct Segments {
    chunks: std::collections::VecDeque<bytes::Bytes>,
    left: u64,
}

impl Segments {
    fn new(parts: &[bytes::Bytes]) -> Self {
        Segments {
            chunks: parts.iter().filter(|b| !b.is_empty()).cloned().collect(),
            left: parts.iter().map(|b| b.len() as u64).sum(),
        }
    }
}

impl http_body::Body for Segments {
    type Data = bytes::Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<http_body::Frame<bytes::Bytes>, Self::Error>>> {
        let next = self.chunks.pop_front();
        if let Some(b) = &next {
            self.left -= b.len() as u64;
        }
        std::task::Poll::Ready(next.map(|b| Ok(http_body::Frame::data(b))))
    }

    fn is_end_stream(&self) -> bool {
        self.chunks.is_empty()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        http_body::SizeHint::with_exact(self.left)
    }
}

/// Tools encoded for one provider, with their JSON written once: what a [`ChatSession`]
/// sends with every request. Conversations with the same tools (e.g. the attempts of one
/// scenario) can share one ([`ChatSession::with_tools`]).
#[derive(Debug)]
pub struct EncodedTools {
    provider: Provider,
    set: ToolSet,
    json: bytes::Bytes,
}

impl EncodedTools {
    /// Encodes tools (builtins and server tools, already de-duplicated) for a provider.
    pub fn new(provider: Provider, specs: &[ToolSpec]) -> Result<Self, LlmError> {
        let set = wire::encode_tools(provider, specs).map_err(|e| LlmError::Encode(e.0))?;
        Ok(EncodedTools {
            provider,
            json: bytes::Bytes::from(wire::tools_json(&set)),
            set,
        })
    }

    /// The provider they are encoded for.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// The encoded tools.
    pub fn set(&self) -> &ToolSet {
        &self.set
    }
}

/// A conversation with one model that keeps the provider-native items across calls (so
/// reasoning items, signatures and the exact assistant messages go back as the API sent
/// them).
#[derive(Debug, Clone)]
pub struct ChatSession {
    client: LlmClient,
    native: Vec<Value>,
    /// `native` written as JSON, item by item as they are added.
    native_json: wire::NativeJson,
    tools: Option<Arc<EncodedTools>>,
}

impl ChatSession {
    /// A new session with tools (builtins and server tools, already de-duplicated).
    pub fn new(client: LlmClient, tools: &[ToolSpec]) -> Result<Self, LlmError> {
        let tools = if tools.is_empty() {
            None
        } else {
            Some(Arc::new(EncodedTools::new(client.cfg.provider, tools)?))
        };
        ChatSession::with_tools(client, tools)
    }

    /// A new session with tools already encoded (`None`: no tools). They must be encoded
    /// for the client's provider.
    pub fn with_tools(
        client: LlmClient,
        tools: Option<Arc<EncodedTools>>,
    ) -> Result<Self, LlmError> {
        if let Some(t) = &tools
            && t.provider != client.cfg.provider
        {
            return Err(LlmError::Encode(format!(
                "the tools are encoded for {:?}, the model's API is {:?}",
                t.provider, client.cfg.provider
            )));
        }
        Ok(ChatSession {
            client,
            native: Vec::new(),
            native_json: wire::NativeJson::default(),
            tools,
        })
    }

    /// Whether the model was given a tool of this name.
    pub fn has_tool(&self, name: &str) -> bool {
        self.tools
            .as_ref()
            .is_some_and(|t| t.set.names.contains(name))
    }

    /// Appends messages that did not come from this model (system, user, tool results).
    pub fn add(&mut self, msgs: &[Message]) {
        let enc = self.client.encode(msgs);
        self.write_json(&enc);
        self.native.extend(enc);
    }

    /// Calls the model on the conversation so far and appends its reply.
    pub async fn complete(&mut self) -> Result<Completion, LlmError> {
        let c = self
            .client
            .complete_with(
                &self.native,
                self.tools.as_ref().map(|t| &t.set),
                self.tools.as_ref().map(|t| &t.json),
                Some(&self.native_json),
            )
            .await?;
        self.write_json(&c.native);
        self.native.extend(c.native.iter().cloned());
        Ok(c)
    }

    /// Writes items about to be appended to `native_json` (Anthropic requests merge the
    /// conversation's messages rather than send them as they are: nothing to write).
    fn write_json(&mut self, items: &[Value]) {
        if self.client.cfg.provider != Provider::Anthropic {
            self.native_json.extend(items);
        }
    }

    /// The provider-native conversation (for `--dump raw`).
    pub fn native(&self) -> &[Value] {
        &self.native
    }

    /// The client.
    pub fn client(&self) -> &LlmClient {
        &self.client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_share_one_tls_config() {
        let a = tls_config().unwrap();
        assert_eq!(a.alpn_protocols, [b"h2".to_vec(), b"http/1.1".to_vec()]);
        assert!(a.enable_sni);
        let b = tls_config().unwrap();
        assert!(Arc::ptr_eq(
            &a.crypto_provider().clone(),
            b.crypto_provider()
        ));
        for url in [
            "https://example.invalid/v1/chat/completions",
            "http://127.0.0.1:9/x",
        ] {
            LlmClient::new(&LlmConfig::chat(url, "m")).unwrap();
        }
    }

    #[test]
    fn sessions_share_tools_encoded_for_their_provider() {
        let spec = ToolSpec {
            name: "f".into(),
            description: "d".into(),
            parameters: serde_json::json!({"type": "object", "properties": {}}),
        };
        let chat = LlmClient::new(&LlmConfig::chat("http://127.0.0.1:9/x", "m")).unwrap();
        let mut cfg = LlmConfig::chat("http://127.0.0.1:9/x", "m");
        cfg.provider = Provider::Anthropic;
        let anthropic = LlmClient::new(&cfg).unwrap();
        let tools =
            Arc::new(EncodedTools::new(Provider::Chat, std::slice::from_ref(&spec)).unwrap());
        let a = ChatSession::with_tools(chat.clone(), Some(tools.clone())).unwrap();
        let b = ChatSession::new(chat, &[spec]).unwrap();
        assert!(a.has_tool("f") && b.has_tool("f") && !a.has_tool("g"));
        assert_eq!(a.tools.as_ref().unwrap().set, b.tools.as_ref().unwrap().set);
        assert_eq!(
            a.tools.as_ref().unwrap().json,
            b.tools.as_ref().unwrap().json
        );
        let e = ChatSession::with_tools(anthropic, Some(tools)).unwrap_err();
        assert_eq!(e.kind(), "ModelEncodeError");
    }
}
