//! The legacy MCP "HTTP with SSE" client transport (MCP spec 2024-11-05), which rmcp no longer
//! ships, on rmcp's [`Transport`] abstraction.
//!
//! The client opens `GET <url>` (`Accept: text/event-stream`); the server's first event is
//! `event: endpoint` whose data is the URI (relative ones are resolved against the SSE URL) to
//! POST each client message to, one JSON-RPC message a request (answered 2xx); the server's
//! messages (responses, notifications, requests) arrive as `event: message` events.
//!
//! Hostile servers: the endpoint event has a deadline; an event (everything between two blank
//! lines) is bounded in size; the endpoint must have the SSE URL's origin (the configured
//! headers, which may hold secrets, go to that origin only, as the Python SDK also insists); a
//! `message` that is not JSON-RPC, an oversized event, a broken or ended stream close the
//! transport, so pending calls fail at once (with the reason kept in [`CloseReason`]) instead
//! of waiting for their timeout. Header values are never logged nor put in an error.

use reqwest::header::{ACCEPT, CACHE_CONTROL, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::service::RoleClient;
use rmcp::transport::Transport;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Largest event (the bytes between two blank lines) accepted by default: 32 MiB.
pub const MAX_EVENT_BYTES: usize = 32 << 20;

/// How much of a failed POST's answer goes into the error.
const ERROR_BODY_BYTES: usize = 400;

/// Messages buffered between the stream reader and rmcp's service loop.
const CHANNEL: usize = 64;

/// A failure of the SSE transport.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SseError {
    /// The SSE URL or the endpoint URI is not a usable URL.
    #[error("bad URL `{url}`: {message}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why.
        message: String,
    },
    /// The GET of the event stream failed.
    #[error("GET of the event stream: {0}")]
    Connect(String),
    /// The GET was answered with a non-2xx status.
    #[error("GET of the event stream answered HTTP {status}{}", fmt_body(.body))]
    Status {
        /// The status code.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// The GET answer is not an event stream.
    #[error("the answer is not an event stream (content-type `{0}`); is this the SSE URL?")]
    NotEventStream(String),
    /// No `endpoint` event within the deadline.
    #[error("no `endpoint` event within {0:.1}s")]
    EndpointTimeout(f64),
    /// The stream ended before its `endpoint` event.
    #[error("the event stream ended before its `endpoint` event")]
    NoEndpoint,
    /// The endpoint event named a URI of another origin.
    #[error(
        "the `endpoint` event names `{endpoint}`, whose origin is not the SSE URL's ({origin}); refused"
    )]
    ForeignEndpoint {
        /// The resolved endpoint.
        endpoint: String,
        /// The SSE URL's origin.
        origin: String,
    },
    /// An event larger than the limit.
    #[error("an event is larger than {0} bytes")]
    EventTooLarge(usize),
    /// A POST of a message failed.
    #[error("POST of a message to {url}: {message}")]
    Post {
        /// The endpoint.
        url: String,
        /// Why.
        message: String,
    },
    /// A POST of a message was answered with a non-2xx status.
    #[error("POST of a message to {url} answered HTTP {status}{}", fmt_body(.body))]
    PostStatus {
        /// The endpoint.
        url: String,
        /// The status code.
        status: u16,
        /// The start of the answer's body.
        body: String,
    },
    /// A message could not be serialised.
    #[error("cannot serialise a message: {0}")]
    Serialise(String),
}

fn fmt_body(body: &str) -> String {
    if body.trim().is_empty() {
        String::new()
    } else {
        format!(": {}", body.trim())
    }
}

/// One dispatched server-sent event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// `event:` field (`message` when absent).
    pub event: String,
    /// `data:` lines joined with `\n`.
    pub data: String,
}

/// An incremental `text/event-stream` parser (the WHATWG rules: lines end in CRLF, LF or CR;
/// `:` starts a comment; `field: value`, one leading space dropped; a blank line dispatches
/// the event if it has data), with a bound on the bytes of one event.
#[derive(Debug)]
pub struct SseParser {
    max_event: usize,
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
    /// Bytes since the last blank line.
    size: usize,
    /// The previous byte was a CR (a following LF belongs to it).
    after_cr: bool,
    /// At the stream's start (a UTF-8 BOM is dropped there).
    at_start: bool,
}

impl SseParser {
    /// A parser refusing events over `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        SseParser {
            max_event,
            line: Vec::new(),
            event: String::new(),
            data: String::new(),
            has_data: false,
            size: 0,
            after_cr: false,
            at_start: true,
        }
    }

    /// Feeds a chunk of the stream; complete events are appended to `out`.
    pub fn feed(&mut self, mut chunk: &[u8], out: &mut Vec<Event>) -> Result<(), SseError> {
        if self.at_start && !chunk.is_empty() {
            // the BOM may be split over chunks; only a whole one at the very start is dropped
            if let Some(rest) = chunk.strip_prefix(b"\xEF\xBB\xBF") {
                chunk = rest;
            }
            self.at_start = false;
        }
        for &b in chunk {
            if self.after_cr {
                self.after_cr = false;
                if b == b'\n' {
                    continue;
                }
            }
            match b {
                b'\r' | b'\n' => {
                    self.after_cr = b == b'\r';
                    self.end_line(out);
                }
                _ => {
                    self.size += 1;
                    if self.size > self.max_event {
                        return Err(SseError::EventTooLarge(self.max_event));
                    }
                    self.line.push(b);
                }
            }
        }
        Ok(())
    }

    fn end_line(&mut self, out: &mut Vec<Event>) {
        if self.line.is_empty() {
            self.size = 0;
            let event = std::mem::take(&mut self.event);
            let mut data = std::mem::take(&mut self.data);
            if std::mem::take(&mut self.has_data) {
                if data.ends_with('\n') {
                    data.pop();
                }
                out.push(Event {
                    event: if event.is_empty() {
                        "message".into()
                    } else {
                        event
                    },
                    data,
                });
            }
            return;
        }
        let line = String::from_utf8_lossy(&self.line).into_owned();
        self.line.clear();
        if line.starts_with(':') {
            return;
        }
        let (field, value) = match line.split_once(':') {
            Some((f, v)) => (f, v.strip_prefix(' ').unwrap_or(v)),
            None => (line.as_str(), ""),
        };
        match field {
            "event" => self.event = value.to_string(),
            "data" => {
                self.data.push_str(value);
                self.data.push('\n');
                self.has_data = true;
            }
            // `id` and `retry` matter for reconnection, which this transport does not do
            _ => {}
        }
    }
}

/// Why a transport closed (empty while it is open), shared with the connection so a failed
/// call can say more than "transport closed".
#[derive(Debug, Clone, Default)]
pub struct CloseReason(Arc<Mutex<Option<String>>>);

impl CloseReason {
    pub(crate) fn set(&self, reason: String) {
        let mut r = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if r.is_none() {
            *r = Some(reason);
        }
    }

    /// The reason, once closed.
    pub fn get(&self) -> Option<String> {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }
}

/// Budgets and bounds of the transport.
#[derive(Debug, Clone)]
pub struct SseOptions {
    /// From the GET to the `endpoint` event.
    pub endpoint_timeout: Duration,
    /// One POST of a message.
    pub post_timeout: Duration,
    /// Largest event accepted.
    pub max_event_bytes: usize,
}

impl Default for SseOptions {
    fn default() -> Self {
        SseOptions {
            endpoint_timeout: Duration::from_mins(1),
            post_timeout: Duration::from_mins(1),
            max_event_bytes: MAX_EVENT_BYTES,
        }
    }
}

/// A connected legacy-SSE transport: the event stream read by a task of its own, messages
/// POSTed to the endpoint. Dropping or closing it ends the stream.
pub struct SseTransport {
    http: reqwest::Client,
    post_url: reqwest::Url,
    post_timeout: Duration,
    rx: tokio::sync::mpsc::Receiver<ServerJsonRpcMessage>,
    reader: tokio::task::JoinHandle<()>,
    reason: CloseReason,
}

fn origin(u: &reqwest::Url) -> String {
    u.origin().ascii_serialization()
}

impl SseTransport {
    /// Opens the event stream at `url` with `http` (whose default headers go with the GET and
    /// every POST) and waits for the `endpoint` event.
    pub async fn connect(
        http: reqwest::Client,
        url: &str,
        opts: &SseOptions,
    ) -> Result<Self, SseError> {
        let sse_url = reqwest::Url::parse(url).map_err(|e| SseError::Url {
            url: url.to_string(),
            message: e.to_string(),
        })?;
        let mut parser = SseParser::new(opts.max_event_bytes);
        let opened = async {
            let mut resp = http
                .get(sse_url.clone())
                .header(ACCEPT, "text/event-stream")
                .header(CACHE_CONTROL, "no-cache")
                .send()
                .await
                .map_err(|e| SseError::Connect(tb_core::error_text(&e)))?;
            if !resp.status().is_success() {
                let status = resp.status().as_u16();
                return Err(SseError::Status {
                    status,
                    body: body_start(&mut resp).await,
                });
            }
            let ct = resp
                .headers()
                .get(CONTENT_TYPE)
                .and_then(|v| v.to_str().ok())
                .unwrap_or("")
                .to_string();
            if !ct
                .split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
            {
                return Err(SseError::NotEventStream(ct));
            }
            let mut events = Vec::new();
            loop {
                let chunk = resp
                    .chunk()
                    .await
                    .map_err(|e| SseError::Connect(tb_core::error_text(&e)))?
                    .ok_or(SseError::NoEndpoint)?;
                parser.feed(&chunk, &mut events)?;
                if let Some(i) = events.iter().position(|e| e.event == "endpoint") {
                    for e in events.drain(..i) {
                        tracing::warn!(
                            "SSE {sse_url}: a `{}` event before the endpoint (ignored)",
                            e.event
                        );
                    }
                    let endpoint = events.remove(0).data;
                    return Ok((resp, endpoint, events));
                }
            }
        };
        let (resp, endpoint, rest) =
            tokio::time::timeout(opts.endpoint_timeout, opened)
                .await
                .map_err(|_| SseError::EndpointTimeout(opts.endpoint_timeout.as_secs_f64()))??;
        let post_url = sse_url.join(endpoint.trim()).map_err(|e| SseError::Url {
            url: endpoint.clone(),
            message: e.to_string(),
        })?;
        if origin(&post_url) != origin(&sse_url) {
            return Err(SseError::ForeignEndpoint {
                endpoint: post_url.to_string(),
                origin: origin(&sse_url),
            });
        }
        tracing::debug!("SSE {sse_url}: messages go to {post_url}");
        let (tx, rx) = tokio::sync::mpsc::channel(CHANNEL);
        let reason = CloseReason::default();
        let reader = tokio::spawn(read_stream(resp, parser, rest, tx, reason.clone()));
        Ok(SseTransport {
            http,
            post_url,
            post_timeout: opts.post_timeout,
            rx,
            reader,
            reason,
        })
    }

    /// Where messages are POSTed.
    pub fn post_url(&self) -> &reqwest::Url {
        &self.post_url
    }

    /// Why the transport closed, shared (empty while open).
    pub fn close_reason(&self) -> CloseReason {
        self.reason.clone()
    }
}

// by hand: the client's default headers (the servers file's, maybe secrets) stay out of it
impl std::fmt::Debug for SseTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SseTransport")
            .field("post_url", &self.post_url.as_str())
            .field("closed", &self.reason.get())
            .finish_non_exhaustive()
    }
}

impl Drop for SseTransport {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

/// The first bytes of an answer's body (never more: a hostile server may send gigabytes).
async fn body_start(resp: &mut reqwest::Response) -> String {
    let mut buf = Vec::new();
    while buf.len() < ERROR_BODY_BYTES {
        match resp.chunk().await {
            Ok(Some(c)) => buf.extend_from_slice(&c),
            _ => break,
        }
    }
    let mut s = String::from_utf8_lossy(&buf).into_owned();
    if s.len() > ERROR_BODY_BYTES {
        let mut cut = ERROR_BODY_BYTES;
        while !s.is_char_boundary(cut) {
            cut -= 1;
        }
        s.truncate(cut);
        s.push('…');
    }
    s
}

/// Parses a `message` event: one JSON-RPC message (or a batch of them).
fn messages(data: &str) -> Result<Vec<ServerJsonRpcMessage>, String> {
    if data.trim_start().starts_with('[') {
        serde_json::from_str(data).map_err(|e| e.to_string())
    } else {
        serde_json::from_str(data)
            .map(|m| vec![m])
            .map_err(|e| e.to_string())
    }
}

/// Reads the event stream until it ends, fails or the transport is dropped; dropping `tx`
/// closes the transport.
async fn read_stream(
    mut resp: reqwest::Response,
    mut parser: SseParser,
    mut events: Vec<Event>,
    tx: tokio::sync::mpsc::Sender<ServerJsonRpcMessage>,
    reason: CloseReason,
) {
    let why = 'read: loop {
        for e in events.drain(..) {
            match e.event.as_str() {
                "message" => match messages(&e.data) {
                    Ok(ms) => {
                        for m in ms {
                            if tx.send(m).await.is_err() {
                                break 'read "the transport was closed".to_string();
                            }
                        }
                    }
                    Err(err) => {
                        break 'read format!("a `message` event is not a JSON-RPC message: {err}");
                    }
                },
                "endpoint" => tracing::debug!("SSE: a second `endpoint` event (ignored)"),
                other => tracing::debug!("SSE: event `{other}` (ignored)"),
            }
        }
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if let Err(e) = parser.feed(&chunk, &mut events) {
                    break e.to_string();
                }
            }
            Ok(None) => break "the server ended the event stream".to_string(),
            Err(e) => break format!("reading the event stream: {}", tb_core::error_text(&e)),
        }
    };
    tracing::debug!("SSE stream closed: {why}");
    reason.set(why);
}

impl Transport<RoleClient> for SseTransport {
    type Error = SseError;

    fn name() -> std::borrow::Cow<'static, str> {
        "SseTransport".into()
    }

    fn send(
        &mut self,
        item: ClientJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let http = self.http.clone();
        let url = self.post_url.clone();
        let timeout = self.post_timeout;
        async move {
            let body = serde_json::to_vec(&item).map_err(|e| SseError::Serialise(e.to_string()))?;
            let mut resp = http
                .post(url.clone())
                .timeout(timeout)
                .header(CONTENT_TYPE, "application/json")
                .body(body)
                .send()
                .await
                .map_err(|e| SseError::Post {
                    url: url.to_string(),
                    message: tb_core::error_text(&e),
                })?;
            if !resp.status().is_success() {
                return Err(SseError::PostStatus {
                    url: url.to_string(),
                    status: resp.status().as_u16(),
                    body: body_start(&mut resp).await,
                });
            }
            Ok(())
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ServerJsonRpcMessage>> + Send {
        self.rx.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.reader.abort();
        self.reason.set("closed by the client".into());
        self.rx.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_all(text: &[u8], max: usize) -> Result<Vec<Event>, SseError> {
        let mut p = SseParser::new(max);
        let mut out = Vec::new();
        p.feed(text, &mut out)?;
        Ok(out)
    }

    fn ev(event: &str, data: &str) -> Event {
        Event {
            event: event.into(),
            data: data.into(),
        }
    }

    #[test]
    fn events_fields_and_line_ends() {
        let text =
            b"\xEF\xBB\xBF: a comment\r\nevent: endpoint\r\ndata: /messages/?session_id=1\r\n\r\n\
data:{\"a\":1}\n\n\
event:message\rdata: line one\rdata:  two\r\r\
id: 7\nretry: 10\nno-colon\n\n\
data\n\n";
        assert_eq!(
            parse_all(text, 1 << 10).unwrap(),
            vec![
                ev("endpoint", "/messages/?session_id=1"),
                ev("message", "{\"a\":1}"),
                ev("message", "line one\n two"),
                ev("message", ""),
            ]
        );
        // an event without data is not dispatched, and its type does not leak into the next
        assert_eq!(
            parse_all(b"event: endpoint\n\ndata: x\n\n", 100).unwrap(),
            vec![ev("message", "x")]
        );
        // no blank line yet: nothing dispatched
        assert_eq!(parse_all(b"data: x\n", 100).unwrap(), vec![]);
    }

    #[test]
    fn any_chunking_gives_the_same_events() {
        let text: &[u8] = b"event: endpoint\r\ndata: /m?s=\xC3\xA9\r\n\r\n: ping\r\n\r\ndata: {\"x\": [1,\r\ndata: 2]}\r\n\r\nevent: message\rdata: z\r\r";
        let whole = parse_all(text, 1 << 10).unwrap();
        assert_eq!(whole.len(), 3);
        assert_eq!(whole[0].data, "/m?s=é");
        for i in 0..=text.len() {
            for j in i..=text.len() {
                let mut p = SseParser::new(1 << 10);
                let mut out = Vec::new();
                for part in [&text[..i], &text[i..j], &text[j..]] {
                    p.feed(part, &mut out).unwrap();
                }
                assert_eq!(out, whole, "split at {i}, {j}");
            }
        }
    }

    #[test]
    fn events_are_bounded() {
        // 10 bytes of data line fit in 16; the limit counts every line of one event
        assert!(parse_all(b"data: 0123\n\ndata: 0123\n\n", 16).is_ok());
        assert_eq!(
            parse_all(b"data: 0123\ndata: 4567\ndata: 89ab\n\n", 16),
            Err(SseError::EventTooLarge(16))
        );
        // a line that never ends is refused too
        let mut p = SseParser::new(64);
        let mut out = Vec::new();
        let mut failed = false;
        for _ in 0..100 {
            if p.feed(b"xxxxxxxxxx", &mut out).is_err() {
                failed = true;
                break;
            }
        }
        assert!(failed);
    }

    #[test]
    fn message_data() {
        let one = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(messages(one).unwrap().len(), 1);
        assert_eq!(messages(&format!("[{one},{one}]")).unwrap().len(), 2);
        assert!(messages("{not json").is_err());
        assert!(messages(r#"{"jsonrpc":"2.0"}"#).is_err());
    }
}
