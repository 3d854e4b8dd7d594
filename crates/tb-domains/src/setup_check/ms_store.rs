//! `ms_store`: three fixed texts, read at run time from the checkout's server source.

use crate::own_servers::OwnServer;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::LazyLock;
use tb_sandbox::{Args, ServerSession, ToolError, ToolReply, ToolResult, Tools, pyjson};

/// The server name.
pub const MS_STORE: &str = "ms_store";

/// The `ms_store` server's source, relative to the data root.
pub const MS_STORE_SOURCE: &str = "servers/thinkingbox_tools/thinkingbox_tools/mcp_ms_store.py";

/// `ms_store`'s tools and the module constants their texts come from.
const MS_STORE_TOOLS: &[(&str, &str, &str)] = &[
    (
        "shovels_at_ms_store",
        "SHOVELS_AT_MS_STORE",
        "The shovels the store sells.",
    ),
    (
        "ms_store_hours",
        "MS_STORE_HOURS",
        "The store's opening hours.",
    ),
    (
        "ms_store_location",
        "MS_STORE_LOCATION",
        "Where the stores are.",
    ),
];

/// One attempt's `ms_store` server: fixed texts, no state, effects `{"effects": []}`.
#[derive(Debug, Clone)]
pub struct MsStore {
    texts: std::sync::Arc<Vec<(String, String)>>,
}

impl MsStore {
    /// Reads the tools' texts from the checkout's server source (`MS_STORE_SOURCE`).
    pub fn load(data_root: &Path) -> Result<MsStore, String> {
        let path = data_root.join(MS_STORE_SOURCE);
        let src = std::fs::read_to_string(&path).map_err(|e| {
            format!(
                "{}: cannot read the ms_store server: {e} (its answers are read from the \
                     server's source: point --data or THINKINGBOX_DATA at a full checkout of \
                     microsoft/thinkingbox-data)",
                path.display()
            )
        })?;
        let items = tb_dataset::py_assignments(&src)
            .map_err(|e| format!("{}:{}: {}", path.display(), e.line, e.message))?;
        let mut texts = Vec::new();
        for (tool, constant, _) in MS_STORE_TOOLS {
            let v = items
                .iter()
                .find(|a| a.name == *constant && a.function.is_none())
                .and_then(|a| match &a.value {
                    tb_dataset::PyValue::Str(s) => Some(s.clone()),
                    _ => None,
                })
                .ok_or_else(|| {
                    format!(
                        "{}: no string constant `{constant}` (the text of `{tool}`)",
                        path.display()
                    )
                })?;
            texts.push(((*tool).to_string(), v));
        }
        Ok(MsStore {
            texts: std::sync::Arc::new(texts),
        })
    }
}

impl MsStore {
    /// A tool's answer: its fixed text.
    fn answer(&self, tool: &str) -> ToolResult {
        let (_, text) = self
            .texts
            .iter()
            .find(|(t, _)| t == tool)
            .ok_or_else(ToolError::raised)?;
        Ok(json!({"status": "ok", "response": text}))
    }
}

/// The `ms_store` tool functions: each answers its own text.
fn ms_store_functions() -> &'static Tools<MsStore> {
    static T: LazyLock<Tools<MsStore>> = LazyLock::new(|| {
        let mut t = Tools::new();
        for (tool, _, _) in MS_STORE_TOOLS {
            t.add(tool, move |s: &mut MsStore, _: &Args| s.answer(tool));
        }
        t
    });
    &T
}

impl ServerSession for MsStore {
    fn server(&self) -> &str {
        MS_STORE
    }

    fn call_tool(&mut self, name: &str, _args: &Value) -> ToolReply {
        let Some(run) = ms_store_functions().get(name) else {
            return ToolReply::error(format!("Unknown tool: {name}"));
        };
        ToolReply::ok(match run.call(self, &Args::new()) {
            Ok(v) => pyjson::dumps(&v, pyjson::Layout::Default),
            Err(e) => e.bang_text(),
        })
    }

    fn effects(&self) -> Option<Value> {
        Some(json!({"effects": []}))
    }
}

impl OwnServer for MsStore {
    fn tool_list(&self) -> Vec<Value> {
        MS_STORE_TOOLS
            .iter()
            .map(|(name, _, desc)| {
                json!({"name": name, "description": desc,
                       "inputSchema": {"type": "object", "properties": {}}})
            })
            .collect()
    }

    fn has_tool(&self, name: &str) -> bool {
        MS_STORE_TOOLS.iter().any(|(n, _, _)| *n == name)
    }
}
