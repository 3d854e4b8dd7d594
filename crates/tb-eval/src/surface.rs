//! The tool surface the agent (and any MCP client) is shown: which texts and schemas, in
//! which order.
//!
//! - `own`: our declarations (`tb-domains`), in the reference's registration order and with
//!   the reference's schema structure, in our own words.
//! - `reference`: the reference's own tool list (order, descriptions, input schemas after the
//!   framework client's transform), read at run time from the user's thinkingbox-data
//!   checkout (`servers/**/*.py`).
//! - a surface file: tool lists recorded earlier (`tb tools --export surface` writes one),
//!   for a surface pinned across runs or machines without the servers' sources.
//! - `auto` (default): `reference` when the data root holds the servers' Python sources and a
//!   reader is available, else `own`.
//!
//! The reader of the servers' Python sources is the `tb-pysurface` crate; what it extracts is
//! checked against our declarations before it is used (a mismatch names tool and parameter).
//! A surface file's lists are checked against the declarations too (every declared tool
//! listed once, nothing else).

use serde_json::{Map, Value, json};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tb_sandbox::Domain;

/// `--surface`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SurfaceMode {
    /// The reference's texts from the data checkout.
    Reference,
    /// Our own texts.
    Own,
    /// `reference` when the checkout holds the servers' sources, else `own`.
    #[default]
    Auto,
    /// Tool lists recorded in a surface file.
    File(PathBuf),
}

impl std::str::FromStr for SurfaceMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "reference" => Ok(SurfaceMode::Reference),
            "own" => Ok(SurfaceMode::Own),
            "auto" => Ok(SurfaceMode::Auto),
            "" => Err("empty surface (reference, own, auto or a surface file)".into()),
            path => Ok(SurfaceMode::File(PathBuf::from(path))),
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
    /// A surface file's.
    File,
}

impl SurfaceKind {
    /// `reference`, `own` or `file`.
    pub fn name(self) -> &'static str {
        match self {
            SurfaceKind::Reference => "reference",
            SurfaceKind::Own => "own",
            SurfaceKind::File => "file",
        }
    }
}

/// The key of a surface file that holds the lists, by server.
const FILE_SERVERS: &str = "servers";

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
    /// For a surface file: its path and the sha256 of its bytes.
    pub file: Option<(PathBuf, String)>,
    /// Why `auto` picked what it picked (`None` when the surface was named).
    pub picked_because: Option<String>,
    /// Per server (in `tb_domains::SERVERS` order): its tool list.
    pub servers: Vec<(String, Arc<Vec<Value>>)>,
    /// The sha256 of lists whose hash is already known (from the surface cache), by the list
    /// it was taken of: [`Surface::server_hashes`] uses it only for that same `Arc`.
    known_sha256: Vec<(Arc<Vec<Value>>, String)>,
}

impl Surface {
    /// Resolves `mode` against a data root. The reference surface comes from the user's
    /// surface cache when it holds the lists of this checkout and executable
    /// ([`crate::surface_cache`]), else it is read from the checkout and cached.
    pub fn resolve(mode: &SurfaceMode, data_root: &Path) -> Result<Surface, SurfaceError> {
        Self::resolve_with_cache(
            mode,
            data_root,
            crate::surface_cache::cache_dir().as_deref(),
        )
    }

    /// [`Surface::resolve`] with the surface cache in `cache` (`None`: no cache, the
    /// servers' sources are always read).
    pub fn resolve_with_cache(
        mode: &SurfaceMode,
        data_root: &Path,
        cache: Option<&Path>,
    ) -> Result<Surface, SurfaceError> {
        let mut picked_because = None;
        let kind = match mode {
            SurfaceMode::Own => SurfaceKind::Own,
            SurfaceMode::Reference => {
                if !reader::has_server_sources(data_root) {
                    return Err(SurfaceError(format!(
                        "`reference` reads the servers' Python sources, and {} has none (this \
                         looks like the benchmark's data only); point --data or \
                         THINKINGBOX_DATA at a full checkout of microsoft/thinkingbox-data, or \
                         give a surface file written by `tb tools --export surface`",
                        data_root.join("servers").display()
                    )));
                }
                SurfaceKind::Reference
            }
            SurfaceMode::File(path) => return Surface::from_file(path, data_root),
            SurfaceMode::Auto => {
                if reader::available() && reader::has_server_sources(data_root) {
                    picked_because = Some(format!(
                        "the servers' sources are under {}",
                        data_root.join("servers").display()
                    ));
                    SurfaceKind::Reference
                } else {
                    picked_because = Some(format!(
                        "no servers' sources under {}",
                        data_root.join("servers").display()
                    ));
                    SurfaceKind::Own
                }
            }
        };
        let mut servers = Vec::new();
        let mut known_sha256 = Vec::new();
        match kind {
            // a file returned above
            SurfaceKind::Own | SurfaceKind::File => {
                let domains = tb_domains::all().map_err(|e| SurfaceError(e.to_string()))?;
                for d in domains {
                    servers.push((d.name.clone(), Arc::new(d.tool_list())));
                }
            }
            SurfaceKind::Reference => {
                if !reader::available() {
                    return Err(SurfaceError(reader::UNAVAILABLE.into()));
                }
                // The reference's lists replace ours: the domains as declared, not shaped.
                let domains = tb_domains::declared().map_err(|e| SurfaceError(e.to_string()))?;
                let lists = match cache
                    .and_then(|dir| crate::surface_cache::key(data_root).map(|k| (dir, k)))
                {
                    Some((dir, key)) => {
                        let names: Vec<&str> = domains.iter().map(|d| d.name.as_str()).collect();
                        let hit = crate::surface_cache::load(dir, data_root, &key).filter(|l| {
                            l.iter()
                                .map(|(n, _, _)| n.as_str())
                                .eq(names.iter().copied())
                        });
                        if let Some(l) = hit {
                            l
                        } else {
                            let l =
                                crate::surface_cache::hashed(read_reference(data_root, domains)?);
                            crate::surface_cache::store(dir, data_root, &key, &l);
                            l
                        }
                    }
                    None => read_reference(data_root, domains)?
                        .into_iter()
                        .map(|(n, l)| (n, String::new(), l))
                        .collect(),
                };
                for (n, h, l) in lists {
                    let l = Arc::new(l);
                    if !h.is_empty() {
                        known_sha256.push((l.clone(), h));
                    }
                    servers.push((n, l));
                }
            }
        }
        Ok(Surface {
            kind,
            reader: (kind == SurfaceKind::Reference).then_some(reader::NAME),
            data_commit: crate::prompts::git_head(data_root),
            file: None,
            picked_because,
            servers,
            known_sha256,
        })
    }

    /// The surface recorded in a surface file (`{"servers": {"<server>": [tool, ...]}}`, each
    /// tool as the agent is given it: `name`, `description`, and `inputSchema` after the
    /// framework client's [`client_transform`]), checked against our declarations: every
    /// declared server and tool, nothing else.
    pub fn from_file(path: &Path, data_root: &Path) -> Result<Surface, SurfaceError> {
        let fail = |m: String| SurfaceError(format!("surface file {}: {m}", path.display()));
        let bytes = std::fs::read(path).map_err(|e| {
            fail(format!(
                "{e} (give reference, own, auto, or a surface file written by \
                 `tb tools --export surface`)"
            ))
        })?;
        let doc: Value = serde_json::from_slice(&bytes).map_err(|e| fail(e.to_string()))?;
        let Some(Value::Object(by_server)) = doc.get(FILE_SERVERS) else {
            return Err(fail(format!("no `{FILE_SERVERS}` object")));
        };
        let domains = tb_domains::declared().map_err(|e| SurfaceError(e.to_string()))?;
        if let Some(extra) = by_server
            .keys()
            .find(|k| !domains.iter().any(|d| &d.name == *k))
        {
            return Err(fail(format!(
                "`{FILE_SERVERS}.{extra}` is not a known server"
            )));
        }
        let mut servers = Vec::new();
        for d in domains {
            let list = by_server
                .get(&d.name)
                .ok_or_else(|| fail(format!("no tool list for server `{}`", d.name)))?;
            let tools = list.as_array().ok_or_else(|| {
                fail(format!(
                    "`{FILE_SERVERS}.{}` is not a list of tools",
                    d.name
                ))
            })?;
            for (i, t) in tools.iter().enumerate() {
                let at = format!("`{FILE_SERVERS}.{}[{i}]`", d.name);
                let o = t
                    .as_object()
                    .ok_or_else(|| fail(format!("{at} is not an object")))?;
                for (key, ok) in [
                    ("name", o.get("name").is_some_and(Value::is_string)),
                    (
                        "description",
                        o.get("description").is_some_and(Value::is_string),
                    ),
                    (
                        "inputSchema",
                        o.get("inputSchema").is_some_and(Value::is_object),
                    ),
                ] {
                    if !ok {
                        return Err(fail(format!("{at}.{key} is missing or of the wrong type")));
                    }
                }
            }
            let list = Arc::new(tools.clone());
            d.with_listing_shared(list.clone())
                .map_err(|e| fail(e.to_string()))?;
            servers.push((d.name.clone(), list));
        }
        let sha = tb_core::sha256_hex(&bytes);
        Ok(Surface {
            kind: SurfaceKind::File,
            reader: None,
            data_commit: crate::prompts::git_head(data_root),
            file: Some((path.to_path_buf(), sha)),
            picked_because: None,
            servers,
            known_sha256: Vec::new(),
        })
    }

    /// The surface as a surface file holds it (what `tb tools --export surface` writes).
    pub fn to_file_json(&self) -> Value {
        let servers: Map<String, Value> = self
            .servers
            .iter()
            .map(|(n, l)| (n.clone(), Value::Array(l.as_ref().clone())))
            .collect();
        json!({ FILE_SERVERS: servers })
    }

    /// One line saying which surface this is and, for `auto`, why.
    pub fn describe(&self) -> String {
        let mut s = format!("tool surface: {}", self.kind.name());
        if let Some((p, _)) = &self.file {
            s.push_str(&format!(" ({})", p.display()));
        }
        if let Some(why) = &self.picked_because {
            s.push_str(&format!(" (auto: {why})"));
        }
        s
    }

    /// Our own surface (no data root needed).
    pub fn own() -> Result<Surface, SurfaceError> {
        let domains = tb_domains::all().map_err(|e| SurfaceError(e.to_string()))?;
        Ok(Surface {
            kind: SurfaceKind::Own,
            reader: None,
            data_commit: "unknown".into(),
            file: None,
            picked_because: None,
            servers: domains
                .iter()
                .map(|d| (d.name.clone(), Arc::new(d.tool_list())))
                .collect(),
            known_sha256: Vec::new(),
        })
    }

    /// The domains showing this surface.
    pub fn domains(&self) -> Result<Vec<Arc<Domain>>, SurfaceError> {
        match self.kind {
            SurfaceKind::Own => Ok(tb_domains::all()
                .map_err(|e| SurfaceError(e.to_string()))?
                .to_vec()),
            // The reference's (or a file's) lists replace ours: the domains as declared, not
            // shaped.
            SurfaceKind::Reference | SurfaceKind::File => tb_domains::declared()
                .map_err(|e| SurfaceError(e.to_string()))?
                .iter()
                .map(|d| {
                    let list = self
                        .servers
                        .iter()
                        .find(|(n, _)| *n == d.name)
                        .map(|(_, l)| l.clone())
                        .ok_or_else(|| {
                            SurfaceError(format!("no tool list for server {}", d.name))
                        })?;
                    d.with_listing_shared(list)
                        .map(Arc::new)
                        .map_err(|e| SurfaceError(e.to_string()))
                })
                .collect(),
        }
    }

    /// The sha256 of each server's tool list as clients get it (compact JSON, in order).
    /// A list loaded from the surface cache has its hash stored there (taken of the same
    /// compact JSON when the cache was written, under the cache's checksum).
    pub fn server_hashes(&self) -> Map<String, Value> {
        self.servers
            .iter()
            .map(|(n, l)| {
                let known = self
                    .known_sha256
                    .iter()
                    .find(|(k, _)| Arc::ptr_eq(k, l))
                    .map(|(_, h)| h.clone());
                let h = known.unwrap_or_else(|| crate::surface_cache::list_sha256(l));
                (n.clone(), json!(h))
            })
            .collect()
    }

    /// For the run manifest and records.
    pub fn provenance(&self) -> Value {
        let mut p = json!({
            "surface": self.kind.name(),
            "reader": self.reader,
            "data_commit": self.data_commit,
            "tools_sha256": self.server_hashes(),
        });
        if let Some((path, sha)) = &self.file {
            p["file"] = json!(path.display().to_string());
            p["file_sha256"] = json!(sha);
        }
        p
    }
}

/// Every domain's reference tool list, read from the checkout's server sources (and checked
/// against our declarations), in `domains` order.
fn read_reference(
    data_root: &Path,
    domains: &[Arc<Domain>],
) -> Result<crate::surface_cache::Lists, SurfaceError> {
    domains
        .iter()
        .map(|d| {
            let s = reader::read_server_surface(data_root, d)
                .map_err(|e| SurfaceError(format!("server {}: {e}", d.name)))?;
            let list: Vec<Value> = s
                .tools
                .into_iter()
                .map(|t| {
                    json!({"name": t.name, "description": t.description, "inputSchema": t.input_schema})
                })
                .collect();
            Ok((d.name.clone(), list))
        })
        .collect()
}

/// The reader of the reference's surface. Swap for `tb_pysurface` here (and nowhere else).
/// The reference surface, read from the data checkout's server sources by `tb-pysurface`;
/// the structure it extracts is checked against our own tool declarations first, so a data
/// repository whose schemas changed is an error naming the tool and parameter.
mod reader {
    use serde_json::Value;
    use std::path::Path;

    pub use tb_pysurface::has_server_sources;

    /// What [`super::Surface::reader`] records.
    pub const NAME: &str = "tb-pysurface";

    /// Why `reference` is not possible (never: the reader is built in).
    pub const UNAVAILABLE: &str = "the reference surface reader is not available";

    /// Whether a reader is available.
    pub fn available() -> bool {
        true
    }

    /// A tool as the reference server lists it, after the framework client's transform.
    #[derive(Debug, Clone, PartialEq)]
    pub struct SurfaceTool {
        pub name: String,
        pub description: String,
        pub input_schema: Value,
    }

    /// One server's surface, tools in registration order.
    #[derive(Debug, Clone, PartialEq)]
    pub struct ServerSurface {
        pub server: String,
        pub module: String,
        pub tools: Vec<SurfaceTool>,
    }

    /// Reads one server's surface and checks it against our declarations of its domain.
    pub fn read_server_surface(
        data_root: &Path,
        domain: &tb_sandbox::Domain,
    ) -> Result<ServerSurface, tb_pysurface::SurfaceError> {
        let s = tb_pysurface::read_server_surface(data_root, &domain.name)?;
        tb_pysurface::check_against_declarations(&s, domain)?;
        Ok(ServerSurface {
            server: s.server,
            module: s.module,
            tools: s
                .tools
                .into_iter()
                .map(|t| SurfaceTool {
                    name: t.name,
                    description: t.description,
                    input_schema: t.agent_input_schema,
                })
                .collect(),
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
        assert_eq!(
            "x.json".parse::<SurfaceMode>().unwrap(),
            SurfaceMode::File("x.json".into())
        );
        assert!("".parse::<SurfaceMode>().is_err());
    }
}
