//! The tool surface the agent (and any MCP client) is shown: which texts and schemas, in
//! which order.
//!
//! - `own`: our declarations (`tb-domains`), in the reference's registration order and with
//!   the reference's schema structure, in our own words.
//! - `reference`: the reference's own tool list (order, descriptions, input schemas after the
//!   framework client's transform), read at run time from the user's thinkingbox-data
//!   checkout (`servers/**/*.py`).
//! - `auto` (default): `reference` when the data root holds the servers' Python sources and a
//!   reader is available, else `own`.
//!
//! The reader of the servers' Python sources is the `tb-pysurface` crate. Until it is wired
//! in, [`standin`] stands in for it: it reads the reference's recorded `list_tools()` output
//! (`tb-bench-v1/tools/<server>.json`) from the folder named by `TB_SURFACE_STANDIN`, behind
//! the same shape. **It is a test/dev stand-in**, not a way to get the reference's texts
//! from a user's checkout; without `TB_SURFACE_STANDIN`, `reference` is an error and `auto`
//! picks `own`.

use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::Arc;
use tb_sandbox::Domain;

/// `--surface`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SurfaceMode {
    /// The reference's texts from the data checkout.
    Reference,
    /// Our own texts.
    Own,
    /// `reference` when the checkout holds the servers' sources, else `own`.
    #[default]
    Auto,
}

impl std::str::FromStr for SurfaceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "reference" => Ok(SurfaceMode::Reference),
            "own" => Ok(SurfaceMode::Own),
            "auto" => Ok(SurfaceMode::Auto),
            _ => Err(format!("unknown surface `{s}` (reference, own or auto)")),
        }
    }
}

/// Which surface a run uses, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SurfaceKind {
    /// The reference's texts.
    Reference,
    /// Ours.
    Own,
}

impl SurfaceKind {
    /// `reference` or `own`.
    pub fn name(self) -> &'static str {
        match self {
            SurfaceKind::Reference => "reference",
            SurfaceKind::Own => "own",
        }
    }
}

/// A surface that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tool surface: {0}")]
pub struct SurfaceError(pub String);

/// The resolved surface: per server, the MCP-shaped tool list clients see.
#[derive(Debug, Clone)]
pub struct Surface {
    /// Which one.
    pub kind: SurfaceKind,
    /// What produced the reference texts (`tb-pysurface`, or the stand-in), `None` for own.
    pub reader: Option<&'static str>,
    /// The data checkout's git HEAD commit, or `unknown`.
    pub data_commit: String,
    /// Per server (in `tb_domains::SERVERS` order): its tool list.
    pub servers: Vec<(String, Arc<Vec<Value>>)>,
}

impl Surface {
    /// Resolves `mode` against a data root.
    pub fn resolve(mode: SurfaceMode, data_root: &Path) -> Result<Surface, SurfaceError> {
        let kind = match mode {
            SurfaceMode::Own => SurfaceKind::Own,
            SurfaceMode::Reference => SurfaceKind::Reference,
            SurfaceMode::Auto => {
                if reader::available() && reader::has_server_sources(data_root) {
                    SurfaceKind::Reference
                } else {
                    SurfaceKind::Own
                }
            }
        };
        let domains = tb_domains::all().map_err(|e| SurfaceError(e.to_string()))?;
        let mut servers = Vec::new();
        match kind {
            SurfaceKind::Own => {
                for d in domains {
                    servers.push((d.name.clone(), Arc::new(d.tool_list())));
                }
            }
            SurfaceKind::Reference => {
                if !reader::available() {
                    return Err(SurfaceError(reader::UNAVAILABLE.into()));
                }
                for d in domains {
                    let s = reader::read_server_surface(data_root, &d.name)
                        .map_err(|e| SurfaceError(format!("server {}: {e}", d.name)))?;
                    let list: Vec<Value> = s
                        .tools
                        .into_iter()
                        .map(|t| {
                            json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
                        })
                        .collect();
                    servers.push((d.name.clone(), Arc::new(list)));
                }
            }
        }
        Ok(Surface {
            kind,
            reader: (kind == SurfaceKind::Reference).then_some(reader::NAME),
            data_commit: crate::prompts::git_head(data_root),
            servers,
        })
    }

    /// Our own surface (no data root needed).
    pub fn own() -> Result<Surface, SurfaceError> {
        let domains = tb_domains::all().map_err(|e| SurfaceError(e.to_string()))?;
        Ok(Surface {
            kind: SurfaceKind::Own,
            reader: None,
            data_commit: "unknown".into(),
            servers: domains
                .iter()
                .map(|d| (d.name.clone(), Arc::new(d.tool_list())))
                .collect(),
        })
    }

    /// The domains showing this surface.
    pub fn domains(&self) -> Result<Vec<Arc<Domain>>, SurfaceError> {
        let all = tb_domains::all().map_err(|e| SurfaceError(e.to_string()))?;
        match self.kind {
            SurfaceKind::Own => Ok(all.to_vec()),
            SurfaceKind::Reference => all
                .iter()
                .map(|d| {
                    let list = self
                        .servers
                        .iter()
                        .find(|(n, _)| *n == d.name)
                        .map(|(_, l)| l.as_ref().clone())
                        .ok_or_else(|| {
                            SurfaceError(format!("no tool list for server {}", d.name))
                        })?;
                    d.with_listing(list)
                        .map(Arc::new)
                        .map_err(|e| SurfaceError(e.to_string()))
                })
                .collect(),
        }
    }

    /// The sha256 of each server's tool list as clients get it (compact JSON, in order).
    pub fn server_hashes(&self) -> Map<String, Value> {
        self.servers
            .iter()
            .map(|(n, l)| {
                let bytes = serde_json::to_vec(l.as_ref()).unwrap_or_default();
                (n.clone(), json!(crate::prompts::sha256_hex(&bytes)))
            })
            .collect()
    }

    /// For the run manifest and records.
    pub fn provenance(&self) -> Value {
        json!({
            "surface": self.kind.name(),
            "reader": self.reader,
            "data_commit": self.data_commit,
            "tools_sha256": self.server_hashes(),
        })
    }
}

/// The reader of the reference's surface. Swap for `tb_pysurface` here (and nowhere else).
mod reader {
    pub use super::standin::{has_server_sources, read_server_surface};

    /// What [`super::Surface::reader`] records.
    pub const NAME: &str = super::standin::NAME;

    /// Why `reference` is not possible.
    pub const UNAVAILABLE: &str = super::standin::UNAVAILABLE;

    /// Whether a reader is available.
    pub fn available() -> bool {
        super::standin::available()
    }
}

/// TEST/DEV STAND-IN for `tb-pysurface` (see the module docs): the same API, reading the
/// reference's recorded `list_tools()` output from `$TB_SURFACE_STANDIN/<server>.json`
/// (`tb-bench-v1/tools/`), with the framework client's schema transform applied.
pub mod standin {
    use serde_json::Value;
    use std::path::{Path, PathBuf};

    /// What the provenance records for this reader.
    pub const NAME: &str = "stand-in: tb-bench-v1/tools (TB_SURFACE_STANDIN)";

    /// Why `reference` cannot run without the stand-in's folder.
    pub const UNAVAILABLE: &str = "the reference surface reader (tb-pysurface) is not built in yet; for development, set TB_SURFACE_STANDIN to a tb-bench-v1/tools folder";

    /// A tool as the reference server lists it, after the framework client's transform.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SurfaceTool {
        /// Name.
        pub name: String,
        /// Description.
        pub description: String,
        /// Input schema.
        pub input_schema: Value,
    }

    /// One server's surface.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ServerSurface {
        /// Server name.
        pub server: String,
        /// Python module of the server.
        pub module: String,
        /// Tools, in registration order.
        pub tools: Vec<SurfaceTool>,
    }

    /// Reading failed.
    #[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
    #[error("{0}")]
    pub struct SurfaceError(pub String);

    fn folder() -> Option<PathBuf> {
        std::env::var_os("TB_SURFACE_STANDIN").map(PathBuf::from)
    }

    /// Whether the stand-in's folder is configured.
    pub fn available() -> bool {
        folder().is_some()
    }

    /// Whether the data root holds the servers' Python sources (`servers/**/*.py`).
    pub fn has_server_sources(data_root: &Path) -> bool {
        fn walk(p: &Path, depth: usize) -> bool {
            if depth > 8 {
                return false;
            }
            let Ok(rd) = std::fs::read_dir(p) else {
                return false;
            };
            for e in rd.flatten() {
                let path = e.path();
                let Ok(ft) = e.file_type() else { continue };
                if ft.is_file() && path.extension().is_some_and(|x| x == "py") {
                    return true;
                }
                if ft.is_dir() && walk(&path, depth + 1) {
                    return true;
                }
            }
            false
        }
        walk(&data_root.join("servers"), 0)
    }

    /// The server's surface from the recorded tool list.
    pub fn read_server_surface(
        _data_root: &Path,
        server: &str,
    ) -> Result<ServerSurface, SurfaceError> {
        let dir = folder().ok_or_else(|| SurfaceError(UNAVAILABLE.into()))?;
        let path = dir.join(format!("{server}.json"));
        let text = std::fs::read_to_string(&path)
            .map_err(|e| SurfaceError(format!("{}: {e}", path.display())))?;
        let v: Value = serde_json::from_str(&text)
            .map_err(|e| SurfaceError(format!("{}: {e}", path.display())))?;
        let tools = v
            .get("tools")
            .and_then(Value::as_array)
            .ok_or_else(|| SurfaceError(format!("{}: no `tools` list", path.display())))?;
        let mut out = Vec::new();
        for t in tools {
            let name = t.get("name").and_then(Value::as_str).unwrap_or("");
            let schema = t.get("input_schema").cloned().ok_or_else(|| {
                SurfaceError(format!("{}: tool {name}: no input_schema", path.display()))
            })?;
            out.push(SurfaceTool {
                name: name.to_string(),
                description: t
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                input_schema: super::client_transform(schema)
                    .map_err(|e| SurfaceError(format!("{}: tool {name}: {e}", path.display())))?,
            });
        }
        Ok(ServerSurface {
            server: server.to_string(),
            module: v
                .get("server_module")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            tools: out,
        })
    }
}

/// The framework client's transform of a server's input schema: every `$ref` replaced by a
/// copy of its target (a `$ref` node's other keys dropped), `$defs` removed, the top-level
/// `title` and each top-level property's `title` removed.
pub fn client_transform(schema: Value) -> Result<Value, String> {
    fn resolve<'a>(root: &'a Value, ptr: &str) -> Option<&'a Value> {
        let rest = ptr.strip_prefix("#/")?;
        let mut node = root;
        for p in rest.split('/') {
            let p = p.replace("~1", "/").replace("~0", "~");
            node = node.as_object()?.get(&p)?;
        }
        Some(node)
    }
    fn walk(root: &Value, node: &Value, visiting: &mut Vec<String>) -> Result<Value, String> {
        if visiting.len() > 64 {
            return Err("schema nesting too deep".into());
        }
        match node {
            Value::Object(m) => {
                if let Some(r) = m.get("$ref") {
                    let r = r.as_str().ok_or("`$ref` is not a string")?.to_string();
                    if visiting.contains(&r) {
                        return Err(format!("circular reference {r}"));
                    }
                    let target = resolve(root, &r).ok_or(format!("missing definition {r}"))?;
                    visiting.push(r);
                    let out = walk(root, target, visiting);
                    visiting.pop();
                    return out;
                }
                let mut out = Map::new();
                for (k, v) in m {
                    out.insert(k.clone(), walk(root, v, visiting)?);
                }
                Ok(Value::Object(out))
            }
            Value::Array(a) => a
                .iter()
                .map(|x| walk(root, x, visiting))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            v => Ok(v.clone()),
        }
    }
    let mut out = walk(&schema, &schema, &mut Vec::new())?;
    if let Value::Object(m) = &mut out {
        m.shift_remove("$defs");
        m.shift_remove("title");
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            for (_, p) in props.iter_mut() {
                if let Value::Object(p) = p {
                    p.shift_remove("title");
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transform_inlines_refs_and_drops_titles() {
        let s = json!({"$defs": {"A": {"title": "A", "type": "object", "properties": {"x": {"title": "X", "type": "string"}}}},
            "properties": {"a": {"$ref": "#/$defs/A", "description": "dropped"}, "b": {"title": "B", "type": "integer"}},
            "title": "In", "type": "object"});
        let t = client_transform(s).unwrap();
        assert_eq!(
            t,
            json!({"properties": {"a": {"type": "object", "properties": {"x": {"title": "X", "type": "string"}}}, "b": {"type": "integer"}}, "type": "object"})
        );
        let circ = json!({"$defs": {"N": {"properties": {"n": {"$ref": "#/$defs/N"}}}}, "properties": {"n": {"$ref": "#/$defs/N"}}});
        assert!(client_transform(circ).unwrap_err().contains("circular"));
        assert!(client_transform(json!({"properties": {"a": {"$ref": "#/$defs/Z"}}})).is_err());
    }

    #[test]
    fn modes_parse() {
        assert_eq!("auto".parse::<SurfaceMode>().unwrap(), SurfaceMode::Auto);
        assert!("x".parse::<SurfaceMode>().is_err());
    }
}
