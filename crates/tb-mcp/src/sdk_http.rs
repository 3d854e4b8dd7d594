//! An HTTP backend for rmcp's Streamable HTTP client transport
//! ([`rmcp::transport::StreamableHttpClientTransport`]): rmcp's client service, transport worker
//! and message types stay as they are (this is still the official SDK's client); only the HTTP
//! exchange of a `tools/call` POST is done here, with two costs of rmcp's reqwest backend
//! removed:
//!
//! - the endpoint URL is parsed once (rmcp's backend hands the `&str` to `Client::post`, which
//!   parses it on every request);
//! - the reply to a `tools/call` is parsed knowing what it answers: a JSON-RPC response whose
//!   result has only `CallToolResult`'s own fields is read straight into a `CallToolResult`
//!   ([`parse_reply`]); anything else (an error, a notification, a request, a result of
//!   another shape, malformed JSON) is parsed by rmcp's generic `ServerJsonRpcMessage`
//!   deserializer, so what the transport gets is exactly what rmcp's backend would give it.
//!   The generic parse tries the untagged `ServerResult`'s variants in turn and builds an
//!   error for each miss: most of the client's CPU per call.
//!
//! Every other message (initialize, notifications, `tools/list`, GET streams, DELETE) goes to
//! rmcp's own reqwest backend unchanged. The `tools/call` POST mirrors that backend's handling
//! of every status and content type (auth challenges, 202/204, 404 of an expired session, 429
//! and 5xx, JSON-RPC errors on a non-success status, SSE replies) and enforces the same
//! [`StreamableHttpResponseLimits`]; an SSE reply is bounded per event by a limiter of its own
//! (rmcp's is private), which ends the stream with an error instead of rmcp's fatal
//! classification (the transport then ends it as any broken stream).

// Server input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, ClientRequest, ContentBlock, JsonRpcVersion2_0,
    MetaObject, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, HttpStatusError, InsufficientScopeError, SseError, StreamableHttpClient,
    StreamableHttpError, StreamableHttpPostResponse, StreamableHttpResponseLimits,
};
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

type Error = StreamableHttpError<reqwest::Error>;

/// rmcp's Streamable HTTP client backend for one endpoint, on a shared [`reqwest::Client`]
/// (see the module documentation).
#[derive(Clone, Debug)]
pub struct SdkHttpClient {
    http: reqwest::Client,
    /// The endpoint as given and parsed; `None` when it does not parse (reqwest then reports
    /// the error on the request, as rmcp's backend does).
    endpoint: Option<Arc<(String, reqwest::Url)>>,
}

impl SdkHttpClient {
    /// A backend for `uri` (the transport's configured endpoint) on `http`.
    pub fn new(http: reqwest::Client, uri: &str) -> Self {
        let endpoint = reqwest::Url::parse(uri)
            .ok()
            .map(|url| Arc::new((uri.to_string(), url)));
        SdkHttpClient { http, endpoint }
    }

    fn post(&self, uri: &str) -> reqwest::RequestBuilder {
        match &self.endpoint {
            Some(e) if e.0 == uri => self.http.post(e.1.clone()),
            _ => self.http.post(uri),
        }
    }

    /// A `tools/call` POST (see the module documentation): rmcp's reqwest backend's handling,
    /// with the typed reply parse.
    #[allow(
        clippy::too_many_arguments,
        reason = "the trait method's arguments, passed on"
    )]
    async fn post_call(
        &self,
        uri: &str,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_token: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut request = self
            .post(uri)
            .header(ACCEPT, "text/event-stream, application/json");
        if let Some(token) = auth_token {
            request = request.bearer_auth(token);
        }
        for (name, value) in custom_headers {
            if reserved(&name) {
                return Err(StreamableHttpError::ReservedHeaderConflict(
                    name.to_string(),
                ));
            }
            request = request.header(name, value);
        }
        let session_was_attached = session_id.is_some();
        if let Some(session_id) = session_id {
            request = request.header(SESSION_ID, session_id.as_ref());
        }
        let response = request
            .json(&message)
            .send()
            .await
            .map_err(StreamableHttpError::Client)?;
        let status = response.status();
        if let Some(challenge) = challenge(&response, status)? {
            return Err(challenge);
        }
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_was_attached {
            return Err(StreamableHttpError::SessionExpired);
        }
        let content_type = response
            .headers()
            .get(CONTENT_TYPE)
            .map(|ct| String::from_utf8_lossy(ct.as_bytes()).to_string());
        let is_json = content_type
            .as_deref()
            .is_some_and(|ct| media_type_is(ct, JSON_MIME_TYPE));
        let status_error = match (http_status_error(status, response.headers()), is_json) {
            (Some(error), is_json) if !is_json || status == StatusCode::TOO_MANY_REQUESTS => {
                return Err(error.into());
            }
            (error, _) => error,
        };
        let content_length = response.content_length();
        let reply_session = response
            .headers()
            .get(SESSION_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        if !status.is_success() {
            let auth_failure = matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN);
            let body = if is_json && !auth_failure {
                match read_bounded(response, content_length, limits.max_json_response_size).await {
                    Ok(raw) => {
                        let full = String::from_utf8_lossy(&raw);
                        if let Ok(error @ ServerJsonRpcMessage::Error(_)) =
                            serde_json::from_str::<ServerJsonRpcMessage>(&full)
                        {
                            return Ok(StreamableHttpPostResponse::Json(error, reply_session));
                        }
                        tracing::warn!(
                            "HTTP {status}: could not parse JSON body as a JSON-RPC error"
                        );
                        let keep = raw.len().min(limits.max_error_response_size);
                        String::from_utf8_lossy(raw.get(..keep).unwrap_or_default()).into_owned()
                    }
                    Err(error @ StreamableHttpError::ResponseBodyTooLarge { .. }) => {
                        return Err(status_error.map_or(error, StreamableHttpError::from));
                    }
                    Err(StreamableHttpError::Client(_)) => {
                        read_failure(limits.max_error_response_size)
                    }
                    Err(error) => return Err(error),
                }
            } else {
                match read_prefix(response, limits.max_error_response_size).await {
                    Ok(prefix) => String::from_utf8_lossy(&prefix).into_owned(),
                    Err(_) => read_failure(limits.max_error_response_size),
                }
            };
            if let Some(error) = status_error {
                return Err(error.into());
            }
            return Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                format!("HTTP {status}: {body}"),
            )));
        }
        match content_type.as_deref() {
            Some(ct) if media_type_is(ct, EVENT_STREAM_MIME_TYPE) => {
                Ok(StreamableHttpPostResponse::Sse(
                    sse_events(response, limits.max_sse_event_size),
                    reply_session,
                ))
            }
            Some(ct) if media_type_is(ct, JSON_MIME_TYPE) => {
                let body =
                    read_bounded(response, content_length, limits.max_json_response_size).await?;
                match parse_reply(&body) {
                    Ok(parsed) => Ok(StreamableHttpPostResponse::Json(parsed, reply_session)),
                    Err(e) => Err(StreamableHttpError::UnexpectedServerResponse(Cow::Owned(
                        format!(
                            "could not parse JSON response as ServerJsonRpcMessage: {e}: {}",
                            body_preview(&body)
                        ),
                    ))),
                }
            }
            _ => {
                tracing::error!("unexpected content type: {content_type:?}");
                Err(StreamableHttpError::UnexpectedContentType(content_type))
            }
        }
    }
}

const SESSION_ID: &str = "Mcp-Session-Id";
const JSON_MIME_TYPE: &str = "application/json";
const EVENT_STREAM_MIME_TYPE: &str = "text/event-stream";
/// Bytes of an unparsable body kept in the error (as rmcp's backend keeps).
const PREVIEW_BYTES: usize = 256;
const READ_FAILURE: &str = "<failed to read response body>";

/// Headers rmcp's backend refuses as custom headers (`MCP-Protocol-Version` is let through:
/// the transport sets it after initialization).
fn reserved(name: &HeaderName) -> bool {
    ["accept", "mcp-session-id", "last-event-id"]
        .iter()
        .any(|r| name.as_str().eq_ignore_ascii_case(r))
}

fn read_failure(max: usize) -> String {
    READ_FAILURE
        .get(..READ_FAILURE.len().min(max))
        .unwrap_or_default()
        .to_string()
}

/// Whether a `Content-Type` value's essence is `expected` (case-insensitive, parameters
/// ignored).
fn media_type_is(value: &str, expected: &str) -> bool {
    value.split(';').next().is_some_and(|essence| {
        essence
            .trim_matches([' ', '\t'])
            .eq_ignore_ascii_case(expected)
    })
}

/// The auth errors of a 401/403 that carries a `WWW-Authenticate` challenge.
fn challenge(response: &reqwest::Response, status: StatusCode) -> Result<Option<Error>, Error> {
    if !matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN) {
        return Ok(None);
    }
    let Some(header) = response.headers().get(reqwest::header::WWW_AUTHENTICATE) else {
        return Ok(None);
    };
    let header = header.to_str().map_err(|_| {
        StreamableHttpError::UnexpectedServerResponse(Cow::from(
            "invalid www-authenticate header value",
        ))
    })?;
    Ok(Some(if status == StatusCode::UNAUTHORIZED {
        StreamableHttpError::AuthRequired(AuthRequiredError::new(header.to_string()))
    } else {
        StreamableHttpError::InsufficientScope(InsufficientScopeError::new(
            header.to_string(),
            scope_of(header),
        ))
    }))
}

/// The `scope=` parameter of a `WWW-Authenticate` value, quoted or not.
fn scope_of(header: &str) -> Option<String> {
    let at = header.to_ascii_lowercase().find("scope=")? + "scope=".len();
    let value = header.get(at..)?;
    if let Some(quoted) = value.strip_prefix('"') {
        return quoted
            .find('"')
            .and_then(|end| quoted.get(..end))
            .map(str::to_string);
    }
    let end = value
        .find(|c: char| c == ',' || c == ';' || c.is_whitespace())
        .unwrap_or(value.len());
    (end > 0)
        .then(|| value.get(..end).map(str::to_string))
        .flatten()
}

/// Status and a bounded `Retry-After` for 429 and 5xx.
fn http_status_error(status: StatusCode, headers: &HeaderMap) -> Option<HttpStatusError> {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return None;
    }
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| std::str::from_utf8(v.as_bytes()).ok())
        .map(str::to_string);
    Some(HttpStatusError::new(status.as_u16(), retry_after))
}

/// The whole body, refused past `max` bytes (by the declared length before reading, and by
/// the bytes read).
async fn read_bounded(
    mut response: reqwest::Response,
    content_length: Option<u64>,
    max: usize,
) -> Result<Vec<u8>, Error> {
    if content_length.is_some_and(|n| n > max as u64) {
        return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
    }
    let mut body = Vec::with_capacity(
        content_length
            .and_then(|n| usize::try_from(n).ok())
            .unwrap_or(0)
            .min(max),
    );
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(StreamableHttpError::Client)?
    {
        if chunk.len() > max - body.len() {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: max });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

/// At most `max` bytes of the body (a diagnostic; the rest is dropped).
async fn read_prefix(mut response: reqwest::Response, max: usize) -> Result<Vec<u8>, Error> {
    let mut body = Vec::new();
    while body.len() < max {
        let Some(chunk) = response
            .chunk()
            .await
            .map_err(StreamableHttpError::Client)?
        else {
            break;
        };
        let take = chunk.len().min(max - body.len());
        body.extend_from_slice(chunk.get(..take).unwrap_or_default());
    }
    Ok(body)
}

/// A lossy, bounded view of an unparsable body.
fn body_preview(body: &[u8]) -> Cow<'static, str> {
    if body.is_empty() {
        return Cow::Borrowed("<empty>");
    }
    let lossy = String::from_utf8_lossy(body);
    let mut end = lossy.len().min(PREVIEW_BYTES);
    while !lossy.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(lossy.get(..end).unwrap_or_default().to_string())
}

/// An SSE reply as rmcp's transport reads it, each event bounded to `max` raw bytes.
fn sse_events(
    response: reqwest::Response,
    max: usize,
) -> BoxStream<'static, Result<sse_stream::Sse, SseError>> {
    let state = (response, EventLimiter::new(max), false);
    let bytes =
        futures_util::stream::unfold(state, move |(mut response, mut limiter, done)| async move {
            if done {
                return None;
            }
            match response.chunk().await {
                Ok(Some(chunk)) if limiter.observe(&chunk) => {
                    Some((Ok(chunk), (response, limiter, false)))
                }
                Ok(Some(_)) => Some((Err(SseBodyError::TooLarge(max)), (response, limiter, true))),
                Ok(None) => None,
                Err(e) => Some((Err(SseBodyError::Read(e)), (response, limiter, true))),
            }
        });
    sse_stream::SseStream::from_bytes_stream(bytes).boxed()
}

/// Why an SSE reply's bytes stopped.
#[derive(Debug, thiserror::Error)]
enum SseBodyError {
    #[error("SSE event exceeded the maximum size of {0} bytes")]
    TooLarge(usize),
    #[error(transparent)]
    Read(reqwest::Error),
}

/// Counts the bytes an SSE parser keeps for the event being read: the field lines since the
/// last blank line, one joining newline each, comments not kept.
#[derive(Debug)]
struct EventLimiter {
    max: usize,
    kept: usize,
    line: usize,
    comment: bool,
    after_cr: bool,
}

impl EventLimiter {
    fn new(max: usize) -> Self {
        EventLimiter {
            max,
            kept: 0,
            line: 0,
            comment: false,
            after_cr: false,
        }
    }

    /// Whether the event being read is still within the bound after `chunk`.
    fn observe(&mut self, chunk: &[u8]) -> bool {
        for &b in chunk {
            if std::mem::take(&mut self.after_cr) && b == b'\n' {
                continue;
            }
            match b {
                b'\r' | b'\n' => {
                    if self.line == 0 {
                        self.kept = 0;
                    } else if !self.comment {
                        self.kept = self.kept.saturating_add(self.line).saturating_add(1);
                    }
                    self.line = 0;
                    self.comment = false;
                    self.after_cr = b == b'\r';
                }
                _ => {
                    if self.line == 0 {
                        self.comment = b == b':';
                    }
                    self.line = self.line.saturating_add(1);
                }
            }
            if self.kept.saturating_add(self.line) > self.max {
                return false;
            }
        }
        true
    }
}

/// A reply body as rmcp's generic parse reads it (`ServerJsonRpcMessage`), faster for the
/// common reply to a `tools/call`: a JSON-RPC response (`jsonrpc`, `id`, `result`, no `method`
/// or `error`, other top-level keys ignored as rmcp ignores them) whose `result` has only
/// `content`, `structuredContent`, `isError` and `_meta`, each at most once and at least one
/// of the first three, is read straight into a [`CallToolResult`]. That is what the generic
/// parse yields for such a body: none of the untagged `ServerResult` variants before
/// `CallToolResult` can match an object with only those keys (each requires a key it does not
/// have: `supportedVersions`, `protocolVersion`, `completion`, `messages`, `prompts`,
/// `resources`, `resourceTemplates`, `contents`, `resultType`, `tools`, `skills`, `skill`,
/// `action`, `taskId`), and `CallToolResult`'s own deserializer reads these four as done here
/// (`content` and `isError` `null` are absent, `structuredContent` `null` is kept, `_meta`
/// `null` is absent). Any other body, or any error in the typed read, goes to the generic
/// parse, whose result or error is returned as it is.
pub fn parse_reply(body: &[u8]) -> Result<ServerJsonRpcMessage, serde_json::Error> {
    match serde_json::from_slice::<TypedCallReply>(body) {
        Ok(TypedCallReply { id, result }) => Ok(ServerJsonRpcMessage::response(
            ServerResult::CallToolResult(result),
            id,
        )),
        Err(_) => serde_json::from_slice::<ServerJsonRpcMessage>(body),
    }
}

/// A JSON-RPC response carrying a `CallToolResult` (see [`parse_reply`]).
struct TypedCallReply {
    id: RequestId,
    result: CallToolResult,
}

/// Not the typed shape: the generic parse decides.
fn not_typed<E: de::Error>() -> E {
    E::custom("not a plain tools/call reply")
}

impl<'de> serde::Deserialize<'de> for TypedCallReply {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypedCallReply;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON-RPC response")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let (mut version, mut id, mut result) = (false, None, None);
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "jsonrpc" if !version => {
                            map.next_value::<JsonRpcVersion2_0>()?;
                            version = true;
                        }
                        "id" if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                        "result" if result.is_none() => {
                            result = Some(map.next_value::<TypedResult>()?.0);
                        }
                        "jsonrpc" | "id" | "result" | "method" | "error" => {
                            return Err(not_typed());
                        }
                        _ => {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                }
                match (version, id, result) {
                    (true, Some(id), Some(result)) => Ok(TypedCallReply { id, result }),
                    _ => Err(not_typed()),
                }
            }
        }
        d.deserialize_map(V)
    }
}

/// A `CallToolResult` with only its own four keys (see [`parse_reply`]).
struct TypedResult(CallToolResult);

impl<'de> serde::Deserialize<'de> for TypedResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = TypedResult;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a tools/call result")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut content: Option<Option<Vec<ContentBlock>>> = None;
                let mut structured: Option<Value> = None;
                let mut is_error: Option<Option<bool>> = None;
                let mut meta: Option<Option<MetaObject>> = None;
                while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                    match key.as_ref() {
                        "content" if content.is_none() => content = Some(map.next_value()?),
                        "structuredContent" if structured.is_none() => {
                            structured = Some(map.next_value()?);
                        }
                        "isError" if is_error.is_none() => is_error = Some(map.next_value()?),
                        "_meta" if meta.is_none() => meta = Some(map.next_value()?),
                        _ => return Err(not_typed()),
                    }
                }
                let content = content.flatten();
                let is_error = is_error.flatten();
                if content.is_none() && structured.is_none() && is_error.is_none() {
                    return Err(not_typed());
                }
                let mut r = CallToolResult::default();
                r.result_type = None;
                r.content = content.unwrap_or_default();
                r.structured_content = structured;
                r.is_error = is_error;
                r.meta = meta.flatten();
                Ok(TypedResult(r))
            }
        }
        d.deserialize_map(V)
    }
}

impl StreamableHttpClient for SdkHttpClient {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, Error> {
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            StreamableHttpResponseLimits::default(),
        )
        .await
    }

    async fn post_message_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let mut limits = StreamableHttpResponseLimits::default();
        limits.max_sse_event_size = max_sse_event_size;
        self.post_message_with_response_limits(
            uri,
            message,
            session_id,
            auth_header,
            custom_headers,
            limits,
        )
        .await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, Error> {
        let is_call = matches!(
            &message,
            ClientJsonRpcMessage::Request(r) if matches!(r.request, ClientRequest::CallToolRequest(_))
        );
        if is_call {
            self.post_call(
                &uri,
                message,
                session_id,
                auth_header,
                custom_headers,
                limits,
            )
            .await
        } else {
            self.http
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), Error> {
        self.http
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.http
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<sse_stream::Sse, SseError>>, Error> {
        self.http
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::client::outcome_meta;
    use proptest::prelude::*;
    use serde_json::json;
    use tb_sandbox::CallOutcome;

    /// What rmcp's generic parse gives, and what [`parse_reply`] gives, as text (the message
    /// types have no `PartialEq`; `Debug` shows every field, `None` apart from `Some(Null)`).
    fn both(body: &[u8]) -> (String, String) {
        (
            format!("{:?}", serde_json::from_slice::<ServerJsonRpcMessage>(body)),
            format!("{:?}", parse_reply(body)),
        )
    }

    fn typed(body: &[u8]) -> bool {
        serde_json::from_slice::<TypedCallReply>(body).is_ok()
    }

    #[test]
    fn the_servers_own_replies_parse_typed_and_equal_the_generic_parse() {
        let outcomes = [
            CallOutcome::Ok(
                json!({"order_id": "ORD-1", "items": [1, 2.5, null, "é\u{1F600}"]}).into(),
            ),
            CallOutcome::Ok(json!([1, 2]).into()),
            CallOutcome::Ok(json!("text").into()),
            CallOutcome::ToolFailed("no such order".into()),
            CallOutcome::UnknownTool("nope".into()),
        ];
        for (i, outcome) in (0i64..).zip(outcomes) {
            let result = crate::mcp::call_result("get_order", outcome.clone());
            assert_eq!(result.meta, Some(outcome_meta(&outcome)));
            let mut result = ServerResult::CallToolResult(result);
            result.strip_result_type_for_legacy_peer();
            for id in [
                RequestId::Number(i),
                RequestId::String(format!("r{i}").into()),
            ] {
                let msg = ServerJsonRpcMessage::response(result.clone(), id);
                let body = serde_json::to_vec(&msg).unwrap();
                assert!(typed(&body), "{}", String::from_utf8_lossy(&body));
                let (generic, ours) = both(&body);
                assert!(generic.starts_with("Ok(Response"), "{generic}");
                assert_eq!(ours, generic);
            }
        }
    }

    #[test]
    fn other_replies_equal_the_generic_parse() {
        let big = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{}"}}]}}}}"#,
            "z".repeat(1 << 20)
        );
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"structuredContent":{}1{}}}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let bodies: Vec<&[u8]> = vec![
            br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}"#,
            br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"_meta":{"a":1}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"action":"accept","content":{"a":1}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"input_required","content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"extra":1}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"method":"x"}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"error":{"code":1,"message":"m"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[]},"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"content":[]}}"#,
            br#"{"jsonrpc":"1.0","id":1,"result":{"content":[]}}"#,
            br#"{"id":1,"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":1.5,"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":null,"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":18446744073709551615,"result":{"content":[]}}"#,
            br#"{"jsonrpc":"2.0","id":-3,"result":{"isError":null,"content":null}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"isError":"yes"}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"nope"}]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":{"type":"text","text":"a"}}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":1e400}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"a":1,"a":2}}}"#,
            br#"{"jsonrpc":"2.0","id":"x","extra":[1,{"b":2}],"result":{"isError":false,"_meta":null}}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":[1]}"#,
            br#"{"jsonrpc":"2.0","id":1,"result":{"content":["#,
            b"[]",
            b"null",
            b"",
            b"\xff\xfe",
            big.as_bytes(),
            deep.as_bytes(),
        ];
        for body in bodies {
            let (generic, ours) = both(body);
            let shown = String::from_utf8_lossy(body.get(..body.len().min(120)).unwrap());
            assert_eq!(ours, generic, "{shown}");
        }
        assert!(typed(big.as_bytes()));
    }

    /// Values each key may take: valid for some variant or for none.
    fn value() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            Just(json!(true)),
            Just(json!(7)),
            Just(json!("complete")),
            Just(json!("task")),
            Just(json!("accept")),
            Just(json!([])),
            Just(json!([{"type": "text", "text": "t"}])),
            Just(json!([{"type": "text"}])),
            Just(json!({})),
            Just(json!({"a": [1, 2.5]})),
            Just(json!({"io.modelcontextprotocol/subscriptionId": 3})),
            Just(json!({"values": [], "total": 1})),
            Just(json!({"name": "n", "version": "1"})),
        ]
    }

    fn key() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec![
            "content",
            "structuredContent",
            "isError",
            "_meta",
            "resultType",
            "action",
            "tools",
            "messages",
            "taskId",
            "status",
            "createdAt",
            "lastUpdatedAt",
            "completion",
            "contents",
            "protocolVersion",
            "capabilities",
            "serverInfo",
            "prompts",
            "skill",
            "other",
        ])
    }

    fn body() -> impl Strategy<Value = String> {
        let result = prop::collection::vec((key(), value()), 0..6);
        let top = prop::collection::vec(
            (
                prop::sample::select(vec!["jsonrpc", "id", "method", "error", "extra"]),
                value(),
            ),
            0..2,
        );
        (result, top, any::<bool>()).prop_map(|(fields, top, string_id)| {
            // written by hand: duplicate keys kept, in the order drawn
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{}:{v}", json!(k)))
                .collect();
            let id = if string_id { json!("a") } else { json!(4) };
            let mut s = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{{}}}"#,
                fields.join(",")
            );
            for (k, v) in top {
                s.push_str(&format!(",{}:{v}", json!(k)));
            }
            s.push('}');
            s
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn any_reply_parses_as_the_generic_parse_does(b in body()) {
            let (generic, ours) = both(b.as_bytes());
            prop_assert_eq!(ours, generic, "{}", b);
        }
    }

    #[test]
    fn the_sse_limiter_counts_what_the_parser_keeps() {
        let mut l = EventLimiter::new(12);
        assert!(
            l.observe(b"data: 1234\n"),
            "11 kept: the line and its newline"
        );
        assert!(!l.observe(b"data: x\n"));
        let mut l = EventLimiter::new(12);
        assert!(l.observe(b"data: 1234\r\n\r\n: c\ndata: 12\n\n"));
        assert!(l.observe(b"data: 123"));
        assert!(!l.observe(b"45678"));
    }

    #[test]
    fn scopes_are_read_quoted_or_not() {
        assert_eq!(
            scope_of(r#"Bearer error="x", Scope="a b""#).as_deref(),
            Some("a b")
        );
        assert_eq!(
            scope_of("Bearer scope=read:data, x=1").as_deref(),
            Some("read:data")
        );
        assert_eq!(scope_of("Bearer scope="), None);
        assert_eq!(scope_of(r#"Bearer scope="unterminated"#), None);
        assert_eq!(scope_of("Bearer"), None);
    }
}
