//! The MCP face of a session, on the official Rust SDK (`rmcp`): `tools/list` shows exactly the
//! session's tools, `tools/call` runs one in the session's sandbox. Nothing else is exposed:
//! no reserved tools, no effects, no other session.
//!
//! Which session a request belongs to: a handler made for stdio is bound to one session; over
//! HTTP the session comes from the URL (`/mcp/{session}`, see [`BoundSession`]) or, as the
//! reference's proxy does it, from the `X-TB-Session-Id` header on `/mcp`.

use crate::registry::{Registry, Slot};
use rmcp::ServerHandler;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use serde_json::Value;
use std::sync::Arc;
use tb_sandbox::CallOutcome;

/// The header that selects a session on the shared `/mcp` endpoint (as the reference's proxy).
pub const SESSION_HEADER: &str = "x-tb-session-id";

/// A request extension naming the session a URL is bound to (`/mcp/{session}`).
#[derive(Debug, Clone)]
pub struct BoundSession(pub String);

/// The MCP server handler. Cheap to clone; all state lives in the [`Registry`].
#[derive(Debug, Clone)]
pub struct SessionHandler {
    registry: Arc<Registry>,
    bound: Option<String>,
}

impl SessionHandler {
    /// A handler that finds the session per request (HTTP).
    pub fn routed(registry: Arc<Registry>) -> Self {
        SessionHandler {
            registry,
            bound: None,
        }
    }

    /// A handler bound to one session (stdio).
    pub fn bound(registry: Arc<Registry>, session: String) -> Self {
        SessionHandler {
            registry,
            bound: Some(session),
        }
    }

    /// The session of an HTTP request (its URL's, else its `X-TB-Session-Id` header's), or the
    /// bound one.
    fn session_of(&self, parts: Option<&axum::http::request::Parts>) -> Result<String, ErrorData> {
        if let Some(s) = &self.bound {
            return Ok(s.clone());
        }
        if let Some(b) = parts.and_then(|p| p.extensions.get::<BoundSession>()) {
            return Ok(b.0.clone());
        }
        parts
            .and_then(|p| p.headers.get(SESSION_HEADER))
            .and_then(|v| v.to_str().ok())
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .ok_or_else(|| {
                ErrorData::invalid_params(
                    "no session: connect to /mcp/{session} (the mcp_url the admin API returned) or send the X-TB-Session-Id header",
                    None,
                )
            })
    }

    fn slot_of(&self, parts: Option<&axum::http::request::Parts>) -> Result<Arc<Slot>, ErrorData> {
        let id = self.session_of(parts)?;
        self.registry
            .get(&id)
            .map_err(|e| ErrorData::invalid_params(e.to_string(), None))
    }

    fn slot(&self, ctx: &RequestContext<RoleServer>) -> Result<Arc<Slot>, ErrorData> {
        self.slot_of(ctx.extensions.get::<axum::http::request::Parts>())
    }

    /// `tools/call` for the session of an HTTP request (`parts`; `None` when bound).
    pub(crate) async fn call_tool_for(
        &self,
        parts: Option<&axum::http::request::Parts>,
        request: CallToolRequestParams,
    ) -> Result<CallToolResult, ErrorData> {
        let slot = self.slot_of(parts)?;
        let args = Value::Object(request.arguments.unwrap_or_default());
        let outcome = self
            .registry
            .call(&slot, &request.name, args)
            .await
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(call_result(&request.name, outcome))
    }
}

/// The MCP result for a tool outcome: the text exactly as in-process
/// ([`CallOutcome::to_text`]), `structuredContent` when that text is a JSON object (as the
/// reference's proxy synthesizes it; the outcome's value is moved there, not copied). Tool
/// failures keep `isError: false`, as the reference's servers answer; an unknown tool is
/// `isError: true` with `Unknown tool: 'name'`. The result's `_meta` names the outcome (see
/// [`crate::client::OUTCOME_META`]).
pub fn call_result(tool: &str, outcome: CallOutcome) -> CallToolResult {
    let meta = crate::client::outcome_meta(&outcome);
    let mut r = match outcome {
        CallOutcome::UnknownTool(name) => {
            CallToolResult::error(vec![ContentBlock::text(format!("Unknown tool: '{name}'"))])
        }
        CallOutcome::Reply(reply) => {
            // An own server's text as it sent it; structured when it is a JSON object, as the
            // proxy synthesizes it for any server.
            let structured = serde_json::from_str::<Value>(&reply.text)
                .ok()
                .filter(Value::is_object);
            let content = vec![ContentBlock::text(reply.text)];
            let mut r = if reply.is_error {
                CallToolResult::error(content)
            } else {
                CallToolResult::success(content)
            };
            r.structured_content = structured;
            r
        }
        outcome => {
            let text = outcome.to_text(tool);
            let structured = match outcome {
                CallOutcome::Ok(v) if v.is_object() => Some(v.into_value()),
                CallOutcome::ToolFailed(_) => Some(outcome.to_json(tool)),
                _ => None,
            };
            let mut r = CallToolResult::success(vec![ContentBlock::text(text)]);
            r.structured_content = structured;
            r
        }
    };
    r.meta = Some(meta);
    r
}

impl ServerHandler for SessionHandler {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("thinkingbox-rs", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "Tools of one ThinkingBox task sandbox. Every call changes only this session's state.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let slot = self.slot(&ctx)?;
        let tools = slot
            .tools()
            .list()
            .iter()
            .map(|t| {
                serde_json::from_value::<Tool>(t.clone()).map_err(|e| {
                    ErrorData::internal_error(
                        format!("tool {} does not convert: {e}", t["name"]),
                        None,
                    )
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call_tool_for(ctx.extensions.get::<axum::http::request::Parts>(), request)
            .await
            .map(Into::into)
    }
}
