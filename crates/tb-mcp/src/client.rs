//! A client for a `tb mcp-start` server: opens a task session through the admin surface, drives
//! its tools over MCP Streamable HTTP (the official SDK's client), and reads the effects.
//!
//! ```no_run
//! # async fn demo() -> Result<(), tb_mcp::client::ClientError> {
//! use tb_mcp::client::McpTools;
//! let tools = McpTools::connect("mcp://127.0.0.1:7111", "brightside_retail.py:test_bs001_cancel_unshipped_order").await?;
//! let names: Vec<_> = tools.tool_list().iter().map(|t| t["name"].clone()).collect();
//! let reply = tools.call("get_order", &serde_json::json!({"order_id": "ORD-5004"})).await?;
//! println!("{names:?} {}", reply.text);
//! let verdicts = tools.verdicts().await?;
//! tools.close().await?;
//! # let _ = verdicts; Ok(()) }
//! ```

use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};
use std::time::Duration;
use tb_core::StateVerdict;
use tb_sandbox::CallOutcome;

/// Meta key the server sets on tool results: `ok`, `tool_failed` or `unknown_tool`.
pub const OUTCOME_META: &str = "thinkingbox/outcome";

/// Client errors. None of them is a tool error: those come back as [`ToolReply`]s.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The server address is not `mcp://HOST:PORT` or `http://HOST:PORT`.
    #[error("invalid MCP server address `{0}` (want mcp://HOST:PORT or http://HOST:PORT)")]
    BadAddress(String),
    /// The admin request did not reach the server or its reply was unreadable.
    #[error("{what}")]
    Http {
        /// Which request.
        what: String,
        /// Why.
        source: reqwest::Error,
    },
    /// The admin surface refused.
    #[error("{what}: HTTP {status}: {message}")]
    Admin {
        /// Which request.
        what: String,
        /// HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The MCP connection or a request on it failed (session gone, timeout, transport).
    #[error("MCP {what}: {message}")]
    Mcp {
        /// Which request.
        what: String,
        /// Why.
        message: String,
    },
    /// Tool arguments must be a JSON object over MCP.
    #[error("arguments of `{tool}` must be a JSON object, got {got}")]
    BadArguments {
        /// Tool.
        tool: String,
        /// What was given.
        got: String,
    },
}

/// A tool call's result, as the in-process session would give it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolReply {
    /// The text the agent sees: identical to [`CallOutcome::to_text`] in-process.
    pub text: String,
    /// The outcome.
    pub outcome: CallOutcome,
}

/// A connection to one `tb mcp-start` server; cheap to clone, shares one HTTP connection pool.
#[derive(Debug, Clone)]
pub struct McpServer {
    http: reqwest::Client,
    base: String,
    token: Option<String>,
}

impl McpServer {
    /// A server at `mcp://HOST:PORT` (or `http://HOST:PORT`, with an optional path prefix).
    pub fn new(address: &str) -> Result<Self, ClientError> {
        let rest = address
            .strip_prefix("mcp://")
            .or_else(|| address.strip_prefix("http://"))
            .ok_or_else(|| ClientError::BadAddress(address.to_string()))?;
        let rest = rest.trim_end_matches('/');
        if rest.is_empty() || rest.contains(char::is_whitespace) {
            return Err(ClientError::BadAddress(address.to_string()));
        }
        // reqwest may be built with `rustls-no-provider` elsewhere in the workspace: make sure a
        // provider is installed before the first client is built (no-op when one already is).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_idle_timeout(Duration::from_secs(30))
            .build()
            .map_err(|source| ClientError::Http {
                what: "building the HTTP client".into(),
                source,
            })?;
        Ok(McpServer {
            http,
            base: format!("http://{rest}"),
            token: None,
        })
    }

    /// Sends `Authorization: Bearer <token>` on admin requests.
    #[must_use]
    pub fn with_token(mut self, token: Option<String>) -> Self {
        self.token = token;
        self
    }

    /// `http://HOST:PORT`.
    pub fn base_url(&self) -> &str {
        &self.base
    }

    fn admin(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let req = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(t) => req.bearer_auth(t),
            None => req,
        }
    }

    async fn admin_json(
        &self,
        what: &str,
        req: reqwest::RequestBuilder,
    ) -> Result<Value, ClientError> {
        let resp = req.send().await.map_err(|source| ClientError::Http {
            what: what.to_string(),
            source,
        })?;
        let status = resp.status();
        let body: Value = resp.json().await.map_err(|source| ClientError::Http {
            what: what.to_string(),
            source,
        })?;
        if !status.is_success() {
            return Err(ClientError::Admin {
                what: what.to_string(),
                status: status.as_u16(),
                message: body["error"].as_str().unwrap_or_default().to_string(),
            });
        }
        Ok(body)
    }

    /// Opens a fresh session for `task` and connects to it over MCP.
    pub async fn open(&self, task: &str) -> Result<McpTools, ClientError> {
        let what = format!("creating a session for {task}");
        let created = self
            .admin_json(
                &what,
                self.admin(reqwest::Method::POST, "/admin/sessions")
                    .json(&json!({ "task": task })),
            )
            .await?;
        let session = created["session"].as_str().unwrap_or_default().to_string();
        let mcp_url = created["mcp_url"].as_str().unwrap_or_default().to_string();
        match self.connect_mcp(&session, &mcp_url).await {
            Ok(t) => Ok(t),
            Err(e) => {
                let _ = self.delete(&session).await;
                Err(e)
            }
        }
    }

    async fn connect_mcp(&self, session: &str, mcp_url: &str) -> Result<McpTools, ClientError> {
        let mcp_err = |what: &str, e: &dyn std::fmt::Display| ClientError::Mcp {
            what: what.to_string(),
            message: e.to_string(),
        };
        // rmcp's transport on tb-mcp's backend: the URL parsed once, a `tools/call` reply read
        // as a `CallToolResult` (see `crate::sdk_http`).
        let transport = StreamableHttpClientTransport::with_client(
            crate::sdk_http::SdkHttpClient::new(self.http.clone(), mcp_url),
            StreamableHttpClientTransportConfig::with_uri(mcp_url.to_string()),
        );
        let client = ().serve(transport).await.map_err(|e| mcp_err("initialize", &e))?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| mcp_err("tools/list", &e))?;
        let tools = tools
            .iter()
            .map(serde_json::to_value)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| mcp_err("tools/list", &e))?;
        Ok(McpTools {
            server: self.clone(),
            session: session.to_string(),
            mcp_url: mcp_url.to_string(),
            client,
            tools,
        })
    }

    async fn delete(&self, session: &str) -> Result<(), ClientError> {
        self.admin_json(
            &format!("deleting session {session}"),
            self.admin(
                reqwest::Method::DELETE,
                &format!("/admin/sessions/{session}"),
            ),
        )
        .await
        .map(|_| ())
    }
}

/// One task session on a `tb mcp-start` server: the tools over MCP, the effects over admin.
#[derive(Debug)]
pub struct McpTools {
    server: McpServer,
    session: String,
    mcp_url: String,
    client: RunningService<RoleClient, ()>,
    tools: Vec<Value>,
}

impl McpTools {
    /// Opens a session for `task` on the server at `address` (`mcp://HOST:PORT`).
    pub async fn connect(address: &str, task: &str) -> Result<Self, ClientError> {
        McpServer::new(address)?.open(task).await
    }

    /// The session id.
    pub fn session(&self) -> &str {
        &self.session
    }

    /// The session's MCP endpoint.
    pub fn mcp_url(&self) -> &str {
        &self.mcp_url
    }

    /// The tools as `tools/list` gave them, MCP-shaped (`name`, `description`, `inputSchema`),
    /// as [`tb_eval::root::TaskSession::tool_list`] gives them in-process.
    pub fn tool_list(&self) -> &[Value] {
        &self.tools
    }

    /// Calls a tool. Tool failures and unknown tools are [`ToolReply`]s, as in-process.
    pub async fn call(&self, tool: &str, args: &Value) -> Result<ToolReply, ClientError> {
        let Value::Object(obj) = args else {
            return Err(ClientError::BadArguments {
                tool: tool.to_string(),
                got: args.to_string(),
            });
        };
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(obj.clone());
        let result = self
            .client
            .call_tool(params)
            .await
            .map_err(|e| ClientError::Mcp {
                what: format!("tools/call {tool}"),
                message: e.to_string(),
            })?;
        Ok(reply_from(tool, result))
    }

    /// The effects as the admin surface gives them (`result_hash`, `golden_hash`, `passed`,
    /// `diff`, states, and `servers`). `with_states: false` leaves the states out (cheaper).
    pub async fn effects(&self, with_states: bool) -> Result<Value, ClientError> {
        let path = format!(
            "/admin/sessions/{}/effects{}",
            self.session,
            if with_states { "" } else { "?states=false" }
        );
        self.server
            .admin_json(
                &format!("effects of session {}", self.session),
                self.server.admin(reqwest::Method::GET, &path),
            )
            .await
    }

    /// The state verdicts (one per server), as the in-process judge gives them.
    pub async fn verdicts(&self) -> Result<Vec<StateVerdict>, ClientError> {
        let effects = self.effects(false).await?;
        Ok(verdicts_of(&effects))
    }

    /// Ends the MCP connection and deletes the session.
    pub async fn close(self) -> Result<(), ClientError> {
        let McpTools {
            server,
            session,
            client,
            ..
        } = self;
        let _ = client.cancel().await;
        server.delete(&session).await
    }
}

/// The [`StateVerdict`]s of an admin effects reply.
pub fn verdicts_of(effects: &Value) -> Vec<StateVerdict> {
    effects["servers"]
        .as_array()
        .map(|servers| {
            servers
                .iter()
                .map(|s| StateVerdict {
                    server: s["server"].as_str().unwrap_or_default().to_string(),
                    result_hash: s["result_hash"].as_str().unwrap_or_default().to_string(),
                    golden_hash: s["golden_hash"].as_str().unwrap_or_default().to_string(),
                    passed: s["passed"].as_bool().unwrap_or(false),
                    diff: s["diff"].as_array().cloned().unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// [`reply_of`] for a result that is no longer needed: a result the server marked `ok` whose
/// `structuredContent` is an object written exactly as the text (the in-process text of that
/// value, as tb-mcp's server sends it) gives that value without parsing the text again (the
/// text parses to that very value: the writer's numbers and strings read back exactly);
/// anything else goes through [`reply_of`].
pub fn reply_from(tool: &str, mut result: CallToolResult) -> ToolReply {
    let ok = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(OUTCOME_META))
        .is_some_and(|m| m.as_str() == Some("ok"));
    if ok
        && matches!(result.structured_content, Some(Value::Object(_)))
        && let Some(text) = result.content.iter().find_map(|c| c.as_text())
    {
        let outcome = CallOutcome::Ok(result.structured_content.take().unwrap_or_default().into());
        if outcome.to_text(tool) == text.text {
            return ToolReply {
                text: text.text.clone(),
                outcome,
            };
        }
        if let CallOutcome::Ok(v) = outcome {
            result.structured_content = Some(v.into_value());
        }
    }
    reply_of(tool, &result)
}

/// Turns an MCP tool result back into the in-process outcome and text.
pub fn reply_of(tool: &str, result: &CallToolResult) -> ToolReply {
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    let marked = result
        .meta
        .as_ref()
        .and_then(|m| m.0.get(OUTCOME_META))
        .and_then(Value::as_str)
        .map(str::to_string);
    let unknown = marked.as_deref() == Some("unknown_tool")
        || (marked.is_none() && result.is_error == Some(true) && text.starts_with("Unknown tool"));
    if unknown {
        let outcome = CallOutcome::UnknownTool(tool.to_string());
        return ToolReply {
            text: outcome.to_text(tool),
            outcome,
        };
    }
    let parsed: Option<Value> = serde_json::from_str(&text).ok();
    let failed = match marked.as_deref() {
        Some(m) => m == "tool_failed",
        None => parsed.as_ref().is_some_and(|v| {
            v.as_object().is_some_and(|o| {
                o.len() == 2
                    && o.get("error").is_some_and(Value::is_string)
                    && o.get("tool").is_some()
            })
        }),
    };
    let outcome = match parsed {
        Some(v) if failed => {
            CallOutcome::ToolFailed(v["error"].as_str().unwrap_or_default().to_string())
        }
        Some(v) => CallOutcome::Ok(v.into()),
        None => CallOutcome::Ok(Value::String(text.clone()).into()),
    };
    ToolReply { text, outcome }
}

/// Builds the result meta the server attaches (`{"thinkingbox/outcome": kind}`).
pub(crate) fn outcome_meta(outcome: &CallOutcome) -> rmcp::model::MetaObject {
    let kind = match outcome {
        CallOutcome::Ok(_) => "ok",
        CallOutcome::ToolFailed(_) => "tool_failed",
        CallOutcome::UnknownTool(_) => "unknown_tool",
        CallOutcome::Reply(r) if r.is_error => "reply_error",
        CallOutcome::Reply(_) => "reply",
    };
    let mut m = serde_json::Map::new();
    m.insert(OUTCOME_META.into(), json!(kind));
    rmcp::model::MetaObject(m)
}

impl tb_eval::tools::ToolBackend for McpTools {
    fn tool_list(&self) -> Vec<Value> {
        self.tools.clone()
    }

    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        args: &'a Value,
    ) -> tb_eval::tools::BoxFut<'a, Result<String, String>> {
        Box::pin(async move {
            McpTools::call(self, tool, args)
                .await
                .map(|r| r.text)
                .map_err(|e| tb_core::error_text(&e))
        })
    }
}

impl tb_eval::tools::EpisodeSession for McpTools {
    fn verdicts(
        &mut self,
    ) -> Option<tb_eval::tools::BoxFut<'_, Result<Vec<StateVerdict>, String>>> {
        Some(Box::pin(async move {
            McpTools::verdicts(self)
                .await
                .map_err(|e| tb_core::error_text(&e))
        }))
    }

    fn close(self: Box<Self>) -> tb_eval::tools::BoxFut<'static, ()> {
        Box::pin(async move {
            let session = self.session.clone();
            if let Err(e) = McpTools::close(*self).await {
                tracing::warn!("closing MCP session {session}: {e}");
            }
        })
    }
}

impl tb_eval::tools::RemoteTools for McpServer {
    fn open<'a>(
        &'a self,
        task_uid: &'a str,
    ) -> tb_eval::tools::BoxFut<'a, Result<Box<dyn tb_eval::tools::EpisodeSession>, String>> {
        Box::pin(async move {
            McpServer::open(self, task_uid)
                .await
                .map(|t| Box::new(t) as Box<dyn tb_eval::tools::EpisodeSession>)
                .map_err(|e| tb_core::error_text(&e))
        })
    }

    fn describe(&self) -> String {
        format!("MCP server {}", self.base)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rmcp::model::ContentBlock;

    fn json_value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(Value::from),
            prop_oneof![
                Just(-0.0f64),
                Just(1e16),
                Just(5.0),
                Just(1e-7),
                Just(1.5e300)
            ]
            .prop_map(Value::from),
            any::<String>().prop_map(Value::from),
            "[\\x00-\\x1f\"\\\\/\u{7f}-\u{ffff}]{0,6}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((any::<String>(), inner), 0..6)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn object() -> impl Strategy<Value = Value> {
        prop::collection::vec((any::<String>(), json_value()), 0..6)
            .prop_map(|kv| Value::Object(kv.into_iter().collect()))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1000))]
        /// The server's result for an `ok` object gives, without the text parse, what the text
        /// parse gives; a result whose `structuredContent` is not the text's value is read
        /// from the text.
        #[test]
        fn a_structured_ok_result_reads_as_its_text_does(v in object(), w in object()) {
            let result = crate::mcp::call_result("t", CallOutcome::Ok(v.into()));
            prop_assert_eq!(reply_from("t", result.clone()), reply_of("t", &result));
            let mut other = result.clone();
            other.structured_content = Some(w);
            prop_assert_eq!(reply_from("t", other.clone()), reply_of("t", &other));
        }
    }

    #[test]
    fn other_results_read_as_before() {
        let mut results = vec![
            crate::mcp::call_result("t", CallOutcome::ToolFailed("no".into())),
            crate::mcp::call_result("t", CallOutcome::UnknownTool("t".into())),
            crate::mcp::call_result("t", CallOutcome::Ok(serde_json::json!([1, 2]).into())),
            crate::mcp::call_result("t", CallOutcome::Ok(serde_json::json!("s").into())),
        ];
        // marked ok, structured, but the text is not JSON / is another value / is missing
        let mut r =
            crate::mcp::call_result("t", CallOutcome::Ok(serde_json::json!({"a": 1}).into()));
        r.content = vec![ContentBlock::text("not json")];
        results.push(r.clone());
        r.content = vec![ContentBlock::text("{\"a\": 2}")];
        results.push(r.clone());
        r.content = vec![];
        results.push(r.clone());
        r.meta = None;
        results.push(r);
        for r in results {
            assert_eq!(reply_from("t", r.clone()), reply_of("t", &r), "{r:?}");
        }
    }
}
