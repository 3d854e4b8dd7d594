//! Scenario and agent YAML, typed as the reference validates them (pydantic models
//! `ScenarioConfig`, `ToolDefOverride`, `AgentConfig`, `ToolDef`), with unknown keys kept.

use crate::DatasetError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// One entry of a scenario's `tools`: a tool the agent may see, with optional overrides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOverride {
    /// Tool name as the server exports it.
    pub name: String,
    /// Replaces the tool's description.
    pub override_description: Option<String>,
    /// Replaces parameter descriptions (`param -> text`).
    pub override_arg_description: Option<Map<String, Value>>,
    /// Format string filled from the JSON result, emitted as an extra assistant message.
    pub direct_response: Option<String>,
    /// Calling it ends the episode (the tool is not executed).
    pub is_end_turn: bool,
    /// Keys the reference ignores, kept as written.
    pub extra: Map<String, Value>,
    /// The entry's line in the scenario file (1-based; 0 when not read from a file).
    #[serde(default, skip_serializing)]
    pub line: usize,
}

/// `dataset/scenario/<name>.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scenario {
    /// The file's stem.
    pub name: String,
    /// Server name -> init config, in priority order.
    pub world_state: Map<String, Value>,
    /// Tools visible to the agent.
    pub tools: Vec<ToolOverride>,
    /// The scenario's bot instructions (policy manual).
    pub bot_instructions: Option<String>,
    /// Tags as written (a mapping, or a list of `kind:value` strings).
    pub tags: Value,
    /// The tags parsed as the reference parses them (the defaults of its tests' `test_tags`).
    #[serde(default)]
    pub test_tags: tb_core::TestTags,
    /// Fixtures: name -> `{type, ...kwargs}`.
    pub fixtures: Map<String, Value>,
    /// Free-form metadata.
    pub metadata: Map<String, Value>,
    /// The whole file as loaded (all keys, including unknown ones).
    pub raw: Map<String, Value>,
    /// The file it came from.
    pub path: PathBuf,
    /// Unknown keys (`file:line: unknown key ...`, with a "did you mean"); they are ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// A builtin tool of the agent (`builtin_tools` entries).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolDef {
    /// Tool name.
    pub name: String,
    /// Description shown to the model.
    pub description: String,
    /// JSON schema of the arguments.
    pub input_schema: Map<String, Value>,
    /// Format string for a direct response.
    pub direct_response: Option<String>,
    /// Calling it ends the episode.
    pub is_end_turn: bool,
}

/// `dataset/agent/<name>.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentConfig {
    /// The file's stem.
    pub name: String,
    /// The agent's system prompt.
    pub system_instructions: String,
    /// Builtin tools (never dispatched to a server).
    pub builtin_tools: Vec<ToolDef>,
    /// The whole file as loaded.
    pub raw: Map<String, Value>,
    /// The file it came from.
    pub path: PathBuf,
    /// Unknown keys (`file:line: unknown key ...`, with a "did you mean"); they are ignored.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// Typed field access with errors naming file, line and field.
pub(crate) struct Fields<'a> {
    pub path: &'a Path,
    pub lines: &'a HashMap<String, usize>,
    /// 1-based line used when a pointer has no recorded line.
    pub base_line: usize,
}

impl Fields<'_> {
    pub(crate) fn line_of(&self, ptr: &str) -> usize {
        tb_yaml::keys::nearest_line(self.lines, ptr).unwrap_or(self.base_line)
    }

    pub(crate) fn invalid(&self, ptr: &str, message: String) -> DatasetError {
        DatasetError::Invalid {
            path: self.path.to_path_buf(),
            line: self.line_of(ptr),
            message,
        }
    }

    fn wrong(&self, ptr: &str, field: &str, want: &str, got: &Value) -> DatasetError {
        self.invalid(ptr, tb_yaml::must_be(field, want, got))
    }

    /// The required top-level `key`, `want` (as `pick` takes it).
    fn req<T: Clone>(
        &self,
        raw: &Map<String, Value>,
        key: &str,
        want: &str,
        pick: fn(&Value) -> Option<&T>,
    ) -> Result<T, DatasetError> {
        match raw.get(key) {
            Some(v) => pick(v)
                .cloned()
                .ok_or_else(|| self.wrong(&format!("/{key}"), key, want, v)),
            None => Err(self.invalid("", format!("`{key}` is required"))),
        }
    }

    /// Warnings for the keys of `m` (at `ptr`, named `name` in messages) not in `known`.
    fn unknown_keys(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        name: &str,
        known: &[&str],
    ) -> Vec<String> {
        crate::keys::unknown_keys(self.path, self.lines, m, ptr, name, known)
    }

    /// Item `i` of the top-level list `list`: its pointer and its mapping.
    fn item<'v>(
        &self,
        list: &str,
        i: usize,
        v: &'v Value,
    ) -> Result<(String, &'v Map<String, Value>), DatasetError> {
        let ptr = format!("/{list}/{i}");
        match v {
            Value::Object(m) => Ok((ptr, m)),
            _ => Err(self.wrong(&ptr, &format!("{list}[{i}]"), "a mapping", v)),
        }
    }

    pub(crate) fn req_str(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        field: &str,
        key: &str,
    ) -> Result<String, DatasetError> {
        match m.get(key) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(v) => Err(self.wrong(&format!("{ptr}/{key}"), field, "a string", v)),
            None => Err(self.invalid(ptr, format!("`{field}` is required"))),
        }
    }

    pub(crate) fn opt_str(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        field: &str,
        key: &str,
    ) -> Result<Option<String>, DatasetError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(v) => Err(self.wrong(&format!("{ptr}/{key}"), field, "a string or null", v)),
        }
    }

    pub(crate) fn opt_bool(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        field: &str,
        key: &str,
    ) -> Result<bool, DatasetError> {
        match m.get(key) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.wrong(&format!("{ptr}/{key}"), field, "a boolean", v)),
        }
    }

    pub(crate) fn opt_map(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        field: &str,
        key: &str,
    ) -> Result<Option<Map<String, Value>>, DatasetError> {
        match m.get(key) {
            None => Ok(None),
            Some(Value::Object(o)) => Ok(Some(o.clone())),
            Some(v) => Err(self.wrong(&format!("{ptr}/{key}"), field, "a mapping", v)),
        }
    }

    pub(crate) fn opt_uint(
        &self,
        m: &Map<String, Value>,
        ptr: &str,
        field: &str,
        key: &str,
    ) -> Result<Option<u64>, DatasetError> {
        match m.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Number(n)) if n.as_u64().is_some() => Ok(n.as_u64()),
            Some(v) => Err(self.wrong(&format!("{ptr}/{key}"), field, "a non-negative integer", v)),
        }
    }
}

/// A config file opened: its fields, its top-level mapping, the warnings for unknown keys.
type ConfigFile<'a> = (Fields<'a>, Map<String, Value>, Vec<String>);

/// A config file's fields, its top-level mapping, and the warnings for keys not in `known`.
/// `what`: the file, for the error when the top level is not a mapping.
fn config_file<'a>(
    path: &'a Path,
    lines: &'a HashMap<String, usize>,
    v: Value,
    what: &str,
    known: &[&str],
) -> Result<ConfigFile<'a>, DatasetError> {
    let f = Fields {
        path,
        lines,
        base_line: 1,
    };
    let raw = root_map(&f, v, what)?;
    let warnings = crate::keys::unknown_keys(path, lines, &raw, "", "", known);
    Ok((f, raw, warnings))
}

fn root_map(f: &Fields, v: Value, what: &str) -> Result<Map<String, Value>, DatasetError> {
    match v {
        Value::Object(m) => Ok(m),
        other => Err(f.invalid(
            "",
            format!(
                "{what} must be a mapping at the top level, found {}",
                tb_yaml::type_name(&other, true)
            ),
        )),
    }
}

impl Scenario {
    pub(crate) fn from_value(
        name: &str,
        path: &Path,
        v: Value,
        lines: &HashMap<String, usize>,
    ) -> Result<Scenario, DatasetError> {
        let (f, raw, mut warnings) = config_file(
            path,
            lines,
            v,
            "a scenario file",
            &[
                "world_state",
                "tools",
                "bot_instructions",
                "tags",
                "fixtures",
                "metadata",
            ],
        )?;
        let world_state = f.req(&raw, "world_state", "a mapping", Value::as_object)?;
        let tools_v = f.req(&raw, "tools", "a list", Value::as_array)?;
        let mut tools = Vec::with_capacity(tools_v.len());
        for (i, t) in tools_v.iter().enumerate() {
            let (ptr, m) = f.item("tools", i, t)?;
            let field = |k: &str| format!("tools[{i}].{k}");
            let override_arg_description = match m.get("override_arg_description") {
                None | Some(Value::Null) => None,
                Some(Value::Object(o)) => {
                    for (k, d) in o {
                        if !d.is_string() {
                            return Err(f.wrong(
                                &format!("{ptr}/override_arg_description/{k}"),
                                &field(&format!("override_arg_description.{k}")),
                                "a string",
                                d,
                            ));
                        }
                    }
                    Some(o.clone())
                }
                Some(v) => {
                    return Err(f.wrong(
                        &format!("{ptr}/override_arg_description"),
                        &field("override_arg_description"),
                        "a mapping",
                        v,
                    ));
                }
            };
            let known = [
                "name",
                "override_description",
                "override_arg_description",
                "direct_response",
                "is_end_turn",
            ];
            warnings.extend(f.unknown_keys(m, &ptr, &format!("tools[{i}]"), &known));
            tools.push(ToolOverride {
                line: f.line_of(&ptr),
                name: f.req_str(m, &ptr, &field("name"), "name")?,
                override_description: f.opt_str(
                    m,
                    &ptr,
                    &field("override_description"),
                    "override_description",
                )?,
                override_arg_description,
                direct_response: f.opt_str(
                    m,
                    &ptr,
                    &field("direct_response"),
                    "direct_response",
                )?,
                is_end_turn: f.opt_bool(m, &ptr, &field("is_end_turn"), "is_end_turn")?,
                extra: m
                    .iter()
                    .filter(|(k, _)| !known.contains(&k.as_str()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            });
        }
        let tags = raw.get("tags").cloned().unwrap_or(Value::Null);
        if !matches!(tags, Value::Null | Value::Object(_) | Value::Array(_)) {
            return Err(f.wrong("/tags", "tags", "a mapping or a list", &tags));
        }
        let test_tags =
            tb_core::TestTags::parse(raw.get("tags")).map_err(|e| f.invalid("/tags", e))?;
        let fixtures = f
            .opt_map(&raw, "", "fixtures", "fixtures")?
            .unwrap_or_default();
        for (k, fx) in &fixtures {
            let ptr = format!("/fixtures/{k}");
            let Value::Object(m) = fx else {
                return Err(f.wrong(&ptr, &format!("fixtures.{k}"), "a mapping", fx));
            };
            f.req_str(m, &ptr, &format!("fixtures.{k}.type"), "type")?;
        }
        Ok(Scenario {
            name: name.to_string(),
            world_state,
            tools,
            bot_instructions: f.opt_str(&raw, "", "bot_instructions", "bot_instructions")?,
            tags,
            test_tags,
            fixtures,
            metadata: f
                .opt_map(&raw, "", "metadata", "metadata")?
                .unwrap_or_default(),
            path: path.to_path_buf(),
            raw,
            warnings: crate::keys::capped(warnings),
        })
    }

    /// Names of the tools the agent may see, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// Servers of `world_state`, in priority order.
    pub fn servers(&self) -> Vec<&str> {
        self.world_state.keys().map(String::as_str).collect()
    }
}

impl AgentConfig {
    pub(crate) fn from_value(
        name: &str,
        path: &Path,
        v: Value,
        lines: &HashMap<String, usize>,
    ) -> Result<AgentConfig, DatasetError> {
        let (f, raw, mut warnings) = config_file(
            path,
            lines,
            v,
            "an agent file",
            &[
                "system_instructions",
                "builtin_tools",
                "parallel_tool_calls",
                "inject_after_user",
                "inject_after_tool",
            ],
        )?;
        let tools_v = f.req(&raw, "builtin_tools", "a list", Value::as_array)?;
        let mut builtin_tools = Vec::new();
        for (i, t) in tools_v.iter().enumerate() {
            let (ptr, m) = f.item("builtin_tools", i, t)?;
            let field = |k: &str| format!("builtin_tools[{i}].{k}");
            warnings.extend(f.unknown_keys(
                m,
                &ptr,
                &format!("builtin_tools[{i}]"),
                &[
                    "name",
                    "description",
                    "input_schema",
                    "direct_response",
                    "is_end_turn",
                ],
            ));
            let input_schema = match m.get("input_schema") {
                Some(Value::Object(o)) => o.clone(),
                Some(v) => {
                    return Err(f.wrong(
                        &format!("{ptr}/input_schema"),
                        &field("input_schema"),
                        "a mapping",
                        v,
                    ));
                }
                None => {
                    return Err(f.invalid(&ptr, format!("`{}` is required", field("input_schema"))));
                }
            };
            builtin_tools.push(ToolDef {
                name: f.req_str(m, &ptr, &field("name"), "name")?,
                description: f.req_str(m, &ptr, &field("description"), "description")?,
                input_schema,
                direct_response: f.opt_str(
                    m,
                    &ptr,
                    &field("direct_response"),
                    "direct_response",
                )?,
                is_end_turn: f.opt_bool(m, &ptr, &field("is_end_turn"), "is_end_turn")?,
            });
        }
        Ok(AgentConfig {
            name: name.to_string(),
            system_instructions: f.req_str(
                &raw,
                "",
                "system_instructions",
                "system_instructions",
            )?,
            builtin_tools,
            path: path.to_path_buf(),
            raw,
            warnings: crate::keys::capped(warnings),
        })
    }
}
