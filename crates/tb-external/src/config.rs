//! `servers.yaml`, in the reference's format:
//!
//! ```yaml
//! use_internal_servers: true        # accepted; tb has no framework-internal servers to add
//! servers:
//!   my_shop:
//!     type: mcp-process             # a stdio child process, one per session
//!     command: ["{python}", "-m", "my_shop.server"]
//!     env: {MY_SHOP_MODE: test}
//!     cwd: /optional/working/dir  # relative: from this file's folder
//!     pass_env: [MY_SHOP_TOKEN]     # ours: tb's variables passed on beside the minimal set
//!   remote_crm:
//!     type: mcp-remote              # an MCP endpoint; one MCP session per tb session
//!     transport: streamable-http
//!     endpoint: http://127.0.0.1:9000/mcp
//!     headers: {Authorization: "Bearer ..."}
//!     timeout: 60
//!   legacy_crm:
//!     type: mcp-remote              # the legacy HTTP+SSE transport (MCP 2024-11-05)
//!     transport: sse
//!     endpoint: http://127.0.0.1:9001/sse
//!     headers: {X-Api-Key: "..."}
//! ```
//!
//! `{python}` in a command is replaced by `--python PATH` (default `python3`) and
//! `{env[NAME]}` by the environment variable, as the reference's `str.format` does; `{{`/`}}`
//! are literal braces. `type: streamable-http` (or `sse`) with `url` is accepted as a short
//! form of `mcp-remote` with that transport. Keys of ours (the reference ignores unknown keys): `prefer: external`
//! (run this server from the file even when `tb` has a native domain of the same name),
//! `max_concurrency` (sessions of this server alive at once) and `pass_env`.
//!
//! A process server's environment is not tb's: only `PATH`, `HOME`, `LANG`, `LANGUAGE`,
//! `LC_*`, `TMPDIR` and `PYTHONPATH`, the variables `pass_env` names, and its `env` (model keys never reach
//! a server unless named).

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A `servers.yaml` problem, with the file and line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}:{line}: {message}", file.display())]
pub struct ConfigError {
    /// The file.
    pub file: PathBuf,
    /// 1-based line (1 when the problem is the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerKind {
    /// `mcp-process`: a child process speaking MCP over stdio, started per session.
    Process {
        /// Program and arguments, placeholders not yet substituted.
        command: Vec<String>,
        /// Extra environment.
        env: Vec<(String, String)>,
        /// Working directory.
        cwd: Option<PathBuf>,
        /// Ours: names of tb's environment variables passed on, beside the minimal set
        /// (`PATH`, `HOME`, `LANG`, `LANGUAGE`, `LC_*`, `TMPDIR`, `PYTHONPATH`).
        pass_env: Vec<String>,
    },
    /// `mcp-remote` with `transport: streamable-http`.
    StreamableHttp {
        /// The MCP endpoint URL.
        endpoint: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
        /// Per-request timeout of the connection, seconds (reference default 60).
        timeout: Option<f64>,
    },
    /// `mcp-remote` with `transport: sse`: the legacy HTTP+SSE transport (an event stream
    /// from a GET of `url`, messages POSTed to the endpoint its first event names).
    Sse {
        /// The SSE URL (the event stream's).
        url: String,
        /// Headers sent with the GET and every POST.
        headers: Vec<(String, String)>,
        /// Budget of each POST and of the wait for the endpoint event, seconds (default 60).
        timeout: Option<f64>,
    },
}

/// One server of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerSpec {
    /// Its name (the key under `servers`, the name tasks use in `world_state`).
    pub name: String,
    /// How it is reached.
    pub kind: ServerKind,
    /// Ours: run it from the file even when a native domain has the name.
    pub prefer_external: bool,
    /// Ours: sessions of this server alive at once.
    pub max_concurrency: Option<usize>,
    /// Line of its key in the file.
    pub line: usize,
}

impl ServerSpec {
    /// `mcp-process`, `mcp-remote (streamable-http)` or `mcp-remote (sse)`, for messages.
    pub fn type_label(&self) -> &'static str {
        match self.kind {
            ServerKind::Process { .. } => "mcp-process",
            ServerKind::StreamableHttp { .. } => "mcp-remote (streamable-http)",
            ServerKind::Sse { .. } => "mcp-remote (sse)",
        }
    }
}

/// A parsed `servers.yaml`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ServersConfig {
    /// The file it came from.
    pub file: PathBuf,
    /// `use_internal_servers` as written (default true; tb adds nothing for it).
    pub use_internal_servers: bool,
    /// Servers in file order.
    pub servers: Vec<ServerSpec>,
    /// Keys tb does not know (the reference ignores them too): `(line, text)`.
    pub warnings: Vec<(usize, String)>,
}

impl ServersConfig {
    /// Reads and checks a `servers.yaml`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
            file: path.to_path_buf(),
            line: 1,
            message: format!("cannot read: {e}"),
        })?;
        Self::parse(path, &text)
    }

    /// Parses the text of a `servers.yaml` (`path` is for messages).
    pub fn parse(path: &Path, text: &str) -> Result<Self, ConfigError> {
        let mut lines = HashMap::new();
        let root =
            tb_dataset::yaml::load_with_lines(text, Some(&mut lines)).map_err(|e| ConfigError {
                file: path.to_path_buf(),
                line: e.line,
                message: format!("invalid YAML: {}", e.message),
            })?;
        let p = Parser {
            file: path,
            lines: &lines,
            text,
        };
        let mut out = ServersConfig {
            file: path.to_path_buf(),
            use_internal_servers: true,
            ..Default::default()
        };
        let root = match root {
            Value::Null => return Ok(out),
            Value::Object(m) => m,
            _ => return Err(p.err("", "the file must be a mapping with a `servers` key")),
        };
        for (k, v) in &root {
            let ptr = format!("/{}", escape(k));
            match k.as_str() {
                "use_internal_servers" => {
                    out.use_internal_servers = v.as_bool().ok_or_else(|| {
                        p.err(&ptr, "`use_internal_servers` must be true or false")
                    })?;
                }
                "servers" => {}
                _ => out
                    .warnings
                    .push((p.line(&ptr), format!("unknown key `{k}` (ignored)"))),
            }
        }
        match root.get("servers") {
            None | Some(Value::Null) => {}
            Some(Value::Object(servers)) => {
                for (name, spec) in servers {
                    out.servers.push(p.server(name, spec, &mut out.warnings)?);
                }
            }
            Some(_) => {
                return Err(p.err("/servers", "`servers` must be a mapping of name -> server"));
            }
        }
        Ok(out)
    }

    /// The server of a name.
    pub fn get(&self, name: &str) -> Option<&ServerSpec> {
        self.servers.iter().find(|s| s.name == name)
    }
}

fn escape(k: &str) -> String {
    k.replace('~', "~0").replace('/', "~1")
}

struct Parser<'a> {
    file: &'a Path,
    lines: &'a HashMap<String, usize>,
    text: &'a str,
}

impl Parser<'_> {
    /// The line of a mapping key: a block mapping's value starts on the line after its key,
    /// so look back from the value's line for the line that writes `key:`.
    fn key_line(&self, ptr: &str, key: &str) -> usize {
        let at = self.line(ptr);
        let lines: Vec<&str> = self.text.lines().collect();
        let quoted = [key.to_string(), format!("\"{key}\""), format!("'{key}'")];
        for l in (1..=at.min(lines.len())).rev() {
            let t = lines[l - 1].trim_start().trim_start_matches("- ");
            if quoted.iter().any(|q| {
                t.strip_prefix(q.as_str())
                    .is_some_and(|r| r.trim_start().starts_with(':'))
            }) {
                return l;
            }
            if at - l > 2 {
                break;
            }
        }
        at
    }

    fn line(&self, ptr: &str) -> usize {
        // the closest enclosing node that has a line
        let mut p = ptr.to_string();
        loop {
            if let Some(l) = self.lines.get(&p) {
                return *l;
            }
            match p.rfind('/') {
                Some(i) => p.truncate(i),
                None => return 1,
            }
        }
    }

    fn err(&self, ptr: &str, message: impl Into<String>) -> ConfigError {
        ConfigError {
            file: self.file.to_path_buf(),
            line: self.line(ptr),
            message: message.into(),
        }
    }

    fn string_map(
        &self,
        ptr: &str,
        v: &Value,
        what: &str,
    ) -> Result<Vec<(String, String)>, ConfigError> {
        match v {
            Value::Null => Ok(Vec::new()),
            Value::Object(m) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    // pydantic's lax str would refuse numbers too; say what to write
                    _ => Err(self.err(
                        &format!("{ptr}/{}", escape(k)),
                        format!("{what} `{k}` must be a string (quote it)"),
                    )),
                })
                .collect(),
            _ => Err(self.err(ptr, format!("`{what}` must be a mapping of strings"))),
        }
    }

    fn server(
        &self,
        name: &str,
        spec: &Value,
        warnings: &mut Vec<(usize, String)>,
    ) -> Result<ServerSpec, ConfigError> {
        let ptr = format!("/servers/{}", escape(name));
        let at = |k: &str| format!("{ptr}/{k}");
        let key_line = self.key_line(&ptr, name);
        let here = |message: String| ConfigError {
            file: self.file.to_path_buf(),
            line: key_line,
            message,
        };
        let Value::Object(m) = spec else {
            return Err(here(format!(
                "server `{name}`: must be a mapping with a `type`"
            )));
        };
        let ty = match m.get("type") {
            Some(Value::String(t)) => t.as_str(),
            Some(_) => {
                return Err(self.err(
                    &at("type"),
                    format!("server `{name}`: `type` must be a string"),
                ));
            }
            None => {
                return Err(here(format!(
                    "server `{name}`: missing `type` (mcp-process or mcp-remote)"
                )));
            }
        };
        let mut known: Vec<&str> = vec!["type", "name", "prefer", "max_concurrency"];
        let kind = match ty {
            "mcp-process" => {
                known.extend(["command", "env", "cwd", "transport", "pass_env"]);
                let command = match m.get("command") {
                    None | Some(Value::Null) => {
                        return Err(here(format!(
                            "server `{name}`: type mcp-process needs a `command` (a list: program, arguments)"
                        )));
                    }
                    Some(Value::Array(a)) => a
                        .iter()
                        .enumerate()
                        .map(|(i, v)| {
                            v.as_str().map(str::to_string).ok_or_else(|| {
                                self.err(
                                    &format!("{}/{i}", at("command")),
                                    format!(
                                        "server `{name}`: every `command` item must be a string"
                                    ),
                                )
                            })
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    Some(_) => {
                        return Err(self.err(
                            &at("command"),
                            format!(
                                "server `{name}`: `command` must be a list (program, arguments)"
                            ),
                        ));
                    }
                };
                if command.is_empty() {
                    return Err(self.err(
                        &at("command"),
                        format!("server `{name}`: `command` is empty"),
                    ));
                }
                if let Some(t) = m.get("transport").filter(|t| !t.is_null())
                    && t.as_str() != Some("stdio")
                {
                    return Err(self.err(
                        &at("transport"),
                        format!("server `{name}`: an mcp-process speaks stdio only (got {t})"),
                    ));
                }
                let env =
                    self.string_map(&at("env"), m.get("env").unwrap_or(&Value::Null), "env")?;
                let cwd = match m.get("cwd") {
                    None | Some(Value::Null) => None,
                    // ours: a relative `cwd` is taken from the servers file's folder
                    Some(Value::String(s)) => Some(match self.file.parent() {
                        Some(dir) if Path::new(s).is_relative() => dir.join(s),
                        _ => PathBuf::from(s),
                    }),
                    Some(_) => {
                        return Err(self.err(
                            &at("cwd"),
                            format!("server `{name}`: `cwd` must be a string"),
                        ));
                    }
                };
                let pass_env = match m.get("pass_env") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .enumerate()
                        .map(|(i, v)| match v.as_str() {
                            Some(n) if !n.is_empty() && !n.contains(['=', '\0']) => {
                                Ok(n.to_string())
                            }
                            _ => Err(self.err(
                                &format!("{}/{i}", at("pass_env")),
                                format!(
                                    "server `{name}`: every `pass_env` item must be a variable name"
                                ),
                            )),
                        })
                        .collect::<Result<Vec<_>, _>>()?,
                    Some(_) => {
                        return Err(self.err(
                            &at("pass_env"),
                            format!("server `{name}`: `pass_env` must be a list of variable names"),
                        ));
                    }
                };
                ServerKind::Process {
                    command,
                    env,
                    cwd,
                    pass_env,
                }
            }
            "mcp-remote" | "streamable-http" | "sse" => {
                known.extend([
                    "endpoint",
                    "url",
                    "headers",
                    "timeout",
                    "transport",
                    "credential",
                ]);
                let transport = match (ty, m.get("transport")) {
                    ("mcp-remote", None | Some(Value::Null)) => "streamable-http",
                    ("mcp-remote", Some(Value::String(t))) => t.as_str(),
                    ("mcp-remote", Some(_)) => {
                        return Err(self.err(
                            &at("transport"),
                            format!("server `{name}`: `transport` must be a string"),
                        ));
                    }
                    (short, _) => short,
                };
                let sse = match transport {
                    "streamable-http" => false,
                    "sse" => true,
                    t => {
                        return Err(self.err(
                            &at("transport"),
                            format!(
                                "server `{name}`: unknown transport `{t}` (streamable-http or sse)"
                            ),
                        ));
                    }
                };
                if m.get("credential").is_some_and(|c| !c.is_null()) {
                    return Err(self.err(
                        &at("credential"),
                        format!("server `{name}`: `credential` (interactive Azure login) is not supported; pass a token in `headers`"),
                    ));
                }
                let endpoint = match m.get("endpoint").or_else(|| m.get("url")) {
                    Some(Value::String(s)) if !s.trim().is_empty() => s.clone(),
                    _ => {
                        return Err(here(format!(
                            "server `{name}`: type {ty} needs an `endpoint` (the {} URL)",
                            if sse { "SSE" } else { "MCP" }
                        )));
                    }
                };
                if !(endpoint.starts_with("http://") || endpoint.starts_with("https://")) {
                    return Err(self.err(
                        &at(if m.contains_key("endpoint") { "endpoint" } else { "url" }),
                        format!("server `{name}`: endpoint `{endpoint}` must be an http:// or https:// URL"),
                    ));
                }
                let headers = self.string_map(
                    &at("headers"),
                    m.get("headers").unwrap_or(&Value::Null),
                    "header",
                )?;
                let timeout = match m.get("timeout") {
                    None | Some(Value::Null) => None,
                    Some(v) => match v.as_f64() {
                        Some(t) if t > 0.0 && t.is_finite() => Some(t),
                        _ => return Err(self.err(
                            &at("timeout"),
                            format!(
                                "server `{name}`: `timeout` must be a positive number of seconds"
                            ),
                        )),
                    },
                };
                if sse {
                    ServerKind::Sse {
                        url: endpoint,
                        headers,
                        timeout,
                    }
                } else {
                    ServerKind::StreamableHttp {
                        endpoint,
                        headers,
                        timeout,
                    }
                }
            }
            other => {
                return Err(self.err(
                    &at("type"),
                    format!("server `{name}`: unknown type `{other}` (mcp-process, mcp-remote, streamable-http or sse)"),
                ));
            }
        };
        let prefer_external = match m.get("prefer") {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) if s == "external" => true,
            Some(Value::String(s)) if s == "native" => false,
            Some(_) => {
                return Err(self.err(
                    &at("prefer"),
                    format!("server `{name}`: `prefer` must be `native` or `external`"),
                ));
            }
        };
        let max_concurrency = match m.get("max_concurrency") {
            None | Some(Value::Null) => None,
            Some(v) => match v.as_u64() {
                Some(n) if n > 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => {
                    return Err(self.err(
                        &at("max_concurrency"),
                        format!("server `{name}`: `max_concurrency` must be a positive integer"),
                    ));
                }
            },
        };
        for k in m.keys() {
            if !known.contains(&k.as_str()) {
                warnings.push((
                    self.line(&at(&escape(k))),
                    format!("server `{name}`: unknown key `{k}` (ignored)"),
                ));
            }
        }
        Ok(ServerSpec {
            name: name.to_string(),
            kind,
            prefer_external,
            max_concurrency,
            line: key_line,
        })
    }
}

/// Substitutes `{python}` and `{env[NAME]}` in one command item; `{{` and `}}` are braces.
pub fn substitute(item: &str, python: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut rest = item;
    while let Some(i) = rest.find(['{', '}']) {
        out.push_str(&rest[..i]);
        let c = rest.as_bytes()[i];
        let after = &rest[i + 1..];
        if c == b'}' {
            if let Some(a) = after.strip_prefix('}') {
                out.push('}');
                rest = a;
                continue;
            }
            return Err(format!("`{item}`: single `}}` (write `}}}}` for a brace)"));
        }
        if let Some(a) = after.strip_prefix('{') {
            out.push('{');
            rest = a;
            continue;
        }
        let Some(end) = after.find('}') else {
            return Err(format!("`{item}`: `{{` without `}}`"));
        };
        let field = &after[..end];
        if field == "python" {
            out.push_str(python);
        } else if let Some(var) = field.strip_prefix("env[").and_then(|f| f.strip_suffix(']')) {
            match std::env::var(var) {
                Ok(v) => out.push_str(&v),
                Err(_) => return Err(format!("`{item}`: environment variable {var} is not set")),
            }
        } else {
            return Err(format!(
                "`{item}`: unknown placeholder `{{{field}}}` (known: {{python}}, {{env[NAME]}})"
            ));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<ServersConfig, ConfigError> {
        ServersConfig::parse(Path::new("servers.yaml"), text)
    }

    #[test]
    fn reference_file_parses() {
        let text = "use_internal_servers: true\nservers:\n  a:\n    type: mcp-process\n    command: [\"{python}\", \"-m\", \"pkg.a\"]\n    env:\n      TYPESENSE_API_KEY: \"Fake\"\n  b:\n    type: mcp-remote\n    endpoint: http://127.0.0.1:1/mcp\n    headers: {X-Key: k}\n";
        let c = parse(text).unwrap();
        assert_eq!(c.servers.len(), 2);
        assert_eq!(c.servers[0].line, 3);
        assert_eq!(
            c.servers[0].kind,
            ServerKind::Process {
                command: vec!["{python}".into(), "-m".into(), "pkg.a".into()],
                env: vec![("TYPESENSE_API_KEY".into(), "Fake".into())],
                cwd: None,
                pass_env: Vec::new(),
            }
        );
        assert_eq!(c.servers[1].line, 8);
        assert!(
            matches!(&c.servers[1].kind, ServerKind::StreamableHttp { endpoint, headers, .. } if endpoint == "http://127.0.0.1:1/mcp" && headers.len() == 1)
        );
        assert!(c.warnings.is_empty());
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse("servers:\n  a:\n    type: mcp-proc\n").unwrap_err();
        assert_eq!(
            (e.line, e.message.contains("unknown type `mcp-proc`")),
            (3, true),
            "{e}"
        );
        let e = parse("servers:\n  a:\n    type: mcp-process\n    env: {}\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(e.message.contains("needs a `command`"), "{e}");
        let e = parse("servers:\n  a:\n    type: mcp-process\n    command: [x, 3]\n").unwrap_err();
        assert!(e.message.contains("must be a string"), "{e}");
        let e = parse("servers:\n  a:\n    type: sse\n    headers: {K: v}\n").unwrap_err();
        assert_eq!(e.line, 2, "{e}");
        assert!(
            e.message.contains("needs an `endpoint` (the SSE URL)"),
            "{e}"
        );
        let e =
            parse("servers:\n  a:\n    type: mcp-remote\n    transport: sse\n    endpoint: /sse\n")
                .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(
            e.message.contains("must be an http:// or https:// URL"),
            "{e}"
        );
        let e = parse("servers:\n  a:\n    type: mcp-remote\n    transport: websocket\n    endpoint: http://x/\n")
            .unwrap_err();
        assert_eq!(e.line, 4, "{e}");
        assert!(e.message.contains("unknown transport `websocket`"), "{e}");
        let e =
            parse("servers:\n  a:\n    type: sse\n    url: http://x/sse\n    headers: {K: 1}\n")
                .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        assert!(e.message.contains("header `K` must be a string"), "{e}");
        let e = parse("servers:\n  a:\n    type: mcp-remote\n").unwrap_err();
        assert!(e.message.contains("needs an `endpoint`"), "{e}");
        let e = parse("servers: [1]\n").unwrap_err();
        assert_eq!(e.line, 1);
        let e = parse("servers:\n  a: [\n").unwrap_err();
        assert!(e.message.starts_with("invalid YAML"), "{e}");
        assert_eq!(e.to_string().split(':').next(), Some("servers.yaml"));
    }

    #[test]
    fn sse_servers() {
        let c = parse("servers:\n  a:\n    type: sse\n    url: http://127.0.0.1:1/sse\n    headers: {X-Key: k}\n    timeout: 5\n  b:\n    type: mcp-remote\n    transport: sse\n    endpoint: https://h/sse\n").unwrap();
        assert_eq!(
            c.servers[0].kind,
            ServerKind::Sse {
                url: "http://127.0.0.1:1/sse".into(),
                headers: vec![("X-Key".into(), "k".into())],
                timeout: Some(5.0)
            }
        );
        assert_eq!(c.servers[0].type_label(), "mcp-remote (sse)");
        assert_eq!(c.servers[1].line, 7);
        assert_eq!(
            c.servers[1].kind,
            ServerKind::Sse {
                url: "https://h/sse".into(),
                headers: vec![],
                timeout: None
            }
        );
        assert!(c.warnings.is_empty(), "{:?}", c.warnings);
    }

    #[test]
    fn unknown_keys_warn() {
        let c = parse("servers:\n  a:\n    type: mcp-process\n    command: [x]\n    colour: red\n")
            .unwrap();
        assert_eq!(
            c.warnings,
            vec![(5, "server `a`: unknown key `colour` (ignored)".to_string())]
        );
    }

    #[test]
    fn placeholders() {
        assert_eq!(substitute("{python}", "/py").unwrap(), "/py");
        assert_eq!(substitute("a{{b}}c", "/py").unwrap(), "a{b}c");
        // A variable every test process has (setting one would need `unsafe`).
        let path = std::env::var("PATH").expect("PATH is set");
        assert_eq!(
            substitute("x={env[PATH]}", "/py").unwrap(),
            format!("x={path}")
        );
        assert!(
            substitute("{pyton}", "/py")
                .unwrap_err()
                .contains("unknown placeholder")
        );
        assert!(substitute("{python", "/py").is_err());
        assert!(substitute("}", "/py").is_err());
    }
}
