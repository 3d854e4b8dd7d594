//! The reference servers' tool surface, read at run time from the user's thinkingbox-data
//! checkout (`servers/**/*.py`) with a real Python parser (ruff's, RustPython fork).
//!
//! For a server (the name scenarios use, e.g. `sandbox_consulting`) [`read_server_surface`]
//! gives exactly what the reference server's MCP `list_tools()` returns: every tool's name in
//! registration order (toolsets in the order the server module builds them; within a
//! toolset's `tools` package, modules by file name, then members by name), its description
//! (what the tool class's `description` property returns) and its input schema as pydantic
//! v2's `model_json_schema(mode="serialization")` builds it from the request model, after the
//! servers' `get_schema_without_refs` (refs inlined). [`SurfaceTool::agent_input_schema`]
//! is that schema after the framework client's transform (`$ref`s inlined, `$defs`, the
//! top-level `title` and each top-level property's `title` dropped): what the model is shown.
//!
//! The reader evaluates only what it understands (literals, names, imports, enum members,
//! `Field(...)`, `if self._custom_description:` guards...). Anything else is an error naming
//! the file and line, never a silent fallback. [`check_against_declarations`] compares the
//! structure read this way with our own tool declarations (`crates/tb-domains/tools`).

mod check;
mod eval;
mod functions;
mod pydantic;
mod registry;
mod source;

use serde_json::Value;
use std::path::Path;

pub use check::{Mismatch, check_against_declarations};
pub use registry::Toolset;

/// One tool as the reference server lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceTool {
    /// Full tool name (`<namespace>_<name>`).
    pub name: String,
    /// The tool's description, as its `description` property returns it.
    pub description: String,
    /// The MCP `inputSchema` the server lists (pydantic's schema, refs inlined; key order kept).
    pub input_schema: Value,
    /// `input_schema` after the framework client's transform: what the agent's model is given.
    pub agent_input_schema: Value,
    /// The request model's class name.
    pub request_model: String,
    /// The file that defines the request model (relative to the data root).
    pub source: String,
}

/// A server's tool surface.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSurface {
    /// Server name, as scenarios use it in `world_state`.
    pub server: String,
    /// The server's Python module (`tb_business_ops_servers_202606.mcp_sandbox_consulting`).
    pub module: String,
    /// The toolsets the server builds, in order.
    pub toolsets: Vec<Toolset>,
    /// Tools in registration order (the order of `list_tools()`), reserved tools left out.
    pub tools: Vec<SurfaceTool>,
}

/// What can go wrong reading a surface.
#[derive(Debug, thiserror::Error)]
pub enum SurfaceError {
    /// Something in a Python source the reader does not understand, or that is wrong.
    #[error("{file}:{line}: {message}")]
    Source {
        /// File, relative to the data root when inside it.
        file: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A file or folder that cannot be read, or a module that is missing.
    #[error("{path}: {message}")]
    Io {
        /// The path.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The server is not in `servers/servers.yaml`, or its entry is not understood.
    #[error("servers/servers.yaml: {0}")]
    Config(String),
    /// Extracted structure disagrees with our declarations.
    #[error("{}", .0.iter().map(std::string::ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Mismatch(Vec<Mismatch>),
    /// Anything else.
    #[error("{0}")]
    Other(String),
}

/// Whether the data root holds the servers' Python sources (for `--surface auto`).
pub fn has_server_sources(data_root: &Path) -> bool {
    let servers = data_root.join("servers");
    servers.join("servers.yaml").is_file()
        && std::fs::read_dir(&servers).is_ok_and(|rd| {
            rd.filter_map(Result::ok).any(|e| {
                let p = e.path();
                p.is_dir()
                    && std::fs::read_dir(&p).is_ok_and(|rd| {
                        rd.filter_map(Result::ok)
                            .any(|e| e.path().join("__init__.py").is_file())
                    })
            })
        })
}

/// The Python module a server runs (`servers/servers.yaml`: `servers.<name>.command`, the
/// argument after `-m`).
pub fn server_module(data_root: &Path, server: &str) -> Result<String, SurfaceError> {
    let path = data_root.join("servers/servers.yaml");
    let text = std::fs::read_to_string(&path).map_err(|e| SurfaceError::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    })?;
    let doc = tb_dataset::yaml::load(&text).map_err(|e| SurfaceError::Config(e.to_string()))?;
    let entry = doc
        .get("servers")
        .and_then(|s| s.get(server))
        .ok_or_else(|| SurfaceError::Config(format!("no server `{server}`")))?;
    let cmd = entry
        .get("command")
        .and_then(Value::as_array)
        .ok_or_else(|| SurfaceError::Config(format!("server `{server}` has no command list")))?;
    let pos = cmd
        .iter()
        .position(|a| a.as_str() == Some("-m"))
        .ok_or_else(|| {
            SurfaceError::Config(format!("server `{server}`: command has no `-m <module>`"))
        })?;
    cmd.get(pos + 1)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| SurfaceError::Config(format!("server `{server}`: `-m` without a module")))
}

/// Reads a server's tool surface from the checkout at `data_root`.
pub fn read_server_surface(data_root: &Path, server: &str) -> Result<ServerSurface, SurfaceError> {
    let module = server_module(data_root, server)?;
    read_module_surface(data_root, server, &module)
}

/// Reads the tool surface of a server module given by its dotted name.
pub fn read_module_surface(
    data_root: &Path,
    server: &str,
    module: &str,
) -> Result<ServerSurface, SurfaceError> {
    let src = source::Sources::new(data_root)?;
    let ev = eval::Eval { src: &src };
    let p = pydantic::Pydantic::new(&ev);
    module_surface(&ev, &p, server, module)
}

/// Reads several servers' surfaces, parsing each shared module once (what start-up wants).
pub fn read_server_surfaces(
    data_root: &Path,
    servers: &[&str],
) -> Result<Vec<ServerSurface>, SurfaceError> {
    let src = source::Sources::new(data_root)?;
    let ev = eval::Eval { src: &src };
    let p = pydantic::Pydantic::new(&ev);
    servers
        .iter()
        .map(|s| module_surface(&ev, &p, s, &server_module(data_root, s)?))
        .collect()
}

fn module_surface(
    ev: &eval::Eval<'_>,
    p: &pydantic::Pydantic<'_, '_>,
    server: &str,
    module: &str,
) -> Result<ServerSurface, SurfaceError> {
    let reg = registry::Registry { ev };
    let m = ev.src.require(module)?;
    if !m.symbols.contains_key("initialize_sandbox_system")
        && let Some(tools) = functions::function_tools(ev, p, &m)?
    {
        return Ok(ServerSurface {
            server: server.to_string(),
            module: module.to_string(),
            toolsets: Vec::new(),
            tools,
        });
    }
    let toolsets = reg.toolsets(&m)?;
    // The Tool base class is the one of the module that defines SandboxToolsSystem.
    let tool_base = tool_base(ev, &m)?;
    let mut tools: Vec<SurfaceTool> = Vec::new();
    for ts in &toolsets {
        for t in reg.toolset_tools(ts, &tool_base)? {
            let full = match &ts.namespace {
                Some(ns) if !ns.is_empty() => format!("{ns}_{}", t.name),
                _ => t.name.clone(),
            };
            if tools.iter().any(|x| x.name == full) {
                return Err(SurfaceError::Other(format!(
                    "{server}: tool name conflict: `{full}` is registered twice (toolset {})",
                    ts.path
                )));
            }
            tools.push(registry::build_tool(p, full, &t)?);
        }
    }
    Ok(ServerSurface {
        server: server.to_string(),
        module: module.to_string(),
        toolsets,
        tools,
    })
}

fn tool_base(
    ev: &eval::Eval<'_>,
    m: &std::rc::Rc<source::Module>,
) -> Result<source::ClassRef, SurfaceError> {
    let no = || SurfaceError::Source {
        file: m.display.clone(),
        line: 1,
        message: "cannot find the `Tool` base class next to `SandboxToolsSystem`".into(),
    };
    if !m.symbols.contains_key("SandboxToolsSystem") {
        return Err(no());
    }
    let eval::Val::Class(sts) = ev.lookup(m, "SandboxToolsSystem", &m.body[0])? else {
        return Err(no());
    };
    match ev.lookup(&sts.module, "Tool", sts.def())? {
        eval::Val::Class(t) => Ok(t),
        _ => Err(no()),
    }
}

/// The framework client's transform of a listed schema (`jsonschema_dereference`, then
/// `$defs`, the top-level `title` and each top-level property's `title` removed). Key order
/// is kept.
pub fn client_transform(schema: &Value) -> Value {
    let mut s = client_deref(schema, schema, 0);
    if let Value::Object(o) = &mut s {
        o.shift_remove("$defs");
        o.shift_remove("title");
        if let Some(Value::Object(props)) = o.get_mut("properties") {
            for (_, v) in props.iter_mut() {
                if let Value::Object(p) = v {
                    p.shift_remove("title");
                }
            }
        }
    }
    s
}

/// The client's dereference: a `$ref` object is replaced by its target alone (siblings
/// dropped). Listed schemas have no `$ref` left; a dangling or deeply recursive one is left as
/// it is.
fn client_deref(root: &Value, v: &Value, depth: usize) -> Value {
    match v {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref")
                && depth < 64
                && let Some(t) = r.strip_prefix('#').and_then(|p| root.pointer(p))
            {
                return client_deref(root, t, depth + 1);
            }
            Value::Object(
                o.iter()
                    .filter(|(k, _)| *k != "$ref")
                    .map(|(k, v)| (k.clone(), client_deref(root, v, depth + 1)))
                    .collect(),
            )
        }
        Value::Array(a) => {
            Value::Array(a.iter().map(|x| client_deref(root, x, depth + 1)).collect())
        }
        v => v.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn client_transform_as_the_framework() {
        let s = json!({
            "$defs": {"P": {"title": "P", "type": "object", "properties": {"x": {"title": "X", "type": "string"}}}},
            "title": "Top",
            "type": "object",
            "properties": {"p": {"$ref": "#/$defs/P", "description": "dropped with the ref"}, "q": {"title": "Q", "type": "integer"}}
        });
        let t = client_transform(&s);
        assert_eq!(
            serde_json::to_string(&t).unwrap(),
            r#"{"type":"object","properties":{"p":{"type":"object","properties":{"x":{"title":"X","type":"string"}}},"q":{"type":"integer"}}}"#
        );
    }

    #[test]
    fn no_sources_no_reference_surface() {
        let d = tempfile::tempdir().unwrap();
        assert!(!has_server_sources(d.path()));
        std::fs::create_dir_all(d.path().join("servers/dist/pkg")).unwrap();
        std::fs::write(d.path().join("servers/servers.yaml"), "servers: {}\n").unwrap();
        assert!(!has_server_sources(d.path()));
        std::fs::write(d.path().join("servers/dist/pkg/__init__.py"), "").unwrap();
        assert!(has_server_sources(d.path()));
        let e = read_server_surface(d.path(), "x").unwrap_err();
        assert!(matches!(e, SurfaceError::Config(_)), "{e}");
    }
}
