//! The run config YAML, as the reference reads it (`ConfigFile`): `orchestrator.agent_model`,
//! `user_model`, `judge_model`, `judge_type`, `user_can_end_conversation`, each model an LLM
//! config with a provider `type` (`aoai`, `aoai_responses`, `anthropic`).
//!
//! Ours on top: `${VAR}` in any string of a model config is replaced by the environment
//! variable (an unset variable is an error naming the file and line), `api_key_env: VAR` is a
//! shorthand for an api-key credential read from the environment, retry budgets and backoff
//! are configurable, and [`ConfigFile::redacted`] gives a copy without secrets for metadata.

use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

/// A config error, naming the file, the line and the field.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{path}:{line}: {message}")]
pub struct ConfigError {
    /// The config file.
    pub path: PathBuf,
    /// 1-based line (0 when unknown).
    pub line: usize,
    /// What is wrong, with the field's dotted name.
    pub message: String,
}

/// A secret string (API key, header value). Its `Debug` and `Display` never show it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// Wraps a secret.
    /// Registers it with [`crate::redact`], so no text leaving the process shows it.
    pub fn new(s: impl Into<String>) -> Self {
        let s = s.into();
        crate::redact::register(&s);
        Secret(s)
    }

    /// The secret itself, for building a request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The provider API of a model config (`type:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Provider {
    /// `aoai`: Chat Completions (Azure OpenAI or any OpenAI-compatible server: vLLM,
    /// OpenRouter, Ollama, ...).
    Chat,
    /// `aoai_responses`: the Responses API.
    Responses,
    /// `anthropic`: the Messages API.
    Anthropic,
}

impl Provider {
    /// The config name.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Chat => "aoai",
            Provider::Responses => "aoai_responses",
            Provider::Anthropic => "anthropic",
        }
    }
}

/// Where the Responses client takes reasoning text from (`reasoning_source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReasoningSource {
    /// Reasoning summaries (`summary: detailed` is requested).
    Summary,
    /// `reasoning_text` content parts (gpt-oss on vLLM).
    Content,
    /// None.
    None,
}

/// Retry budgets and backoff. The defaults are the reference's: 429 unlimited (Retry-After
/// honoured, capped), connect errors 10, timeouts 10, listed server errors 5, delay
/// `base * 2^(n-1)` capped at `max` with full jitter. Ours: malformed replies 2.
#[derive(Debug, Clone, PartialEq)]
pub struct RetryConfig {
    /// 429 retries; negative = unlimited.
    pub max_retries_too_many_requests: i64,
    /// Connect-error retries.
    pub max_retries_connect: i64,
    /// Timeout retries.
    pub max_retries_timeout: i64,
    /// Retries for statuses in `retryable_server_errors` (and read errors when listed).
    pub max_retries_server_error: i64,
    /// Retries of a 2xx reply that is not the API's shape.
    pub max_retries_malformed: i64,
    /// Statuses retried (default 502, 503, 504).
    pub retryable_server_errors: Vec<u16>,
    /// `"read-error"` listed: a connection dropped mid-reply is retried on the server budget.
    pub retry_read_errors: bool,
    /// First backoff delay in seconds (default 1).
    pub backoff_base: f64,
    /// Backoff cap in seconds (default 32); also caps Retry-After.
    pub backoff_max: f64,
}

impl Default for RetryConfig {
    fn default() -> Self {
        RetryConfig {
            max_retries_too_many_requests: -1,
            max_retries_connect: 10,
            max_retries_timeout: 10,
            max_retries_server_error: 5,
            max_retries_malformed: 2,
            retryable_server_errors: vec![502, 503, 504],
            retry_read_errors: false,
            backoff_base: 1.0,
            backoff_max: 32.0,
        }
    }
}

/// Default of [`LlmConfig::max_reply_bytes`]: 32 MiB.
pub const DEFAULT_MAX_REPLY_BYTES: u64 = 32 << 20;

/// Default of [`LlmConfig::max_tool_argument_bytes`]: 1 MiB.
pub const DEFAULT_MAX_TOOL_ARGUMENT_BYTES: u64 = 1 << 20;

/// How the API key is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Credential {
    /// The key.
    pub api_key: Secret,
    /// Header name; `Authorization` (the default) sends `Bearer <key>`, any other header
    /// (`api-key`, `x-api-key`) sends the key as is.
    pub header: String,
}

/// One model: provider, endpoint, sampling, HTTP and retry settings.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmConfig {
    /// Which API.
    pub provider: Provider,
    /// Model / deployment name.
    pub deployment: String,
    /// Azure account (used to build the URL when `endpoint_url` is absent).
    pub account_name: Option<String>,
    /// Full URL of the endpoint.
    pub endpoint_url: Option<String>,
    /// Azure `api-version`.
    pub api_version: String,
    /// Seed.
    pub seed: Option<i64>,
    /// Temperature (default 1.0 for `aoai`/`aoai_responses`, unset for `anthropic`).
    pub temperature: Option<f64>,
    /// Output token cap (default 4096).
    pub max_completion_tokens: u64,
    /// Nucleus sampling (sent only when set).
    pub top_p: Option<f64>,
    /// Top-k (sent only when set; OpenAI-compatible servers such as vLLM accept it).
    pub top_k: Option<u64>,
    /// A reasoning model: reasoning text becomes `think` messages.
    pub is_reasoning: bool,
    /// `low`, `medium`, `high`.
    pub reasoning_effort: Option<String>,
    /// Responses API: where reasoning text comes from.
    pub reasoning_source: ReasoningSource,
    /// Body keys removed before sending (not `messages`/`tools`).
    pub disabled_params: Vec<String>,
    /// Allow several tool calls per reply (default false).
    pub parallel_tool_calls: bool,
    /// Anthropic stop sequences.
    pub stop_sequences: Vec<String>,
    /// Anthropic `thinking`.
    pub thinking: Option<Value>,
    /// Anthropic `output_config`.
    pub output_config: Option<Value>,
    /// Ours: extra keys merged into every request body.
    pub extra_body: Map<String, Value>,
    /// Per-request timeout in seconds (default 60).
    pub timeout: f64,
    /// Ours: the largest reply body read, in bytes (default [`DEFAULT_MAX_REPLY_BYTES`]); a
    /// longer reply is a `ReplyTooLarge` error.
    pub max_reply_bytes: u64,
    /// Ours: the largest argument text of one tool call, in bytes (default
    /// [`DEFAULT_MAX_TOOL_ARGUMENT_BYTES`]); a longer one is answered as an argument error.
    pub max_tool_argument_bytes: u64,
    /// Ours (`reply_rules: lenient`): replies the reference's client stops on are read where
    /// they can be (see `docs/llm.md`); default `reference`, the reference's system errors.
    pub lenient_replies: bool,
    /// Retries.
    pub retry: RetryConfig,
    /// The key, if any.
    pub credential: Option<Credential>,
    /// Extra headers (values are secrets).
    pub headers: Vec<(String, Secret)>,
    /// Where it was defined (`file:line`), for messages.
    pub source: String,
}

impl LlmConfig {
    /// A config for an OpenAI-compatible endpoint with defaults (used by tests and tools).
    pub fn chat(endpoint_url: &str, deployment: &str) -> Self {
        LlmConfig {
            provider: Provider::Chat,
            deployment: deployment.into(),
            account_name: None,
            endpoint_url: Some(endpoint_url.into()),
            api_version: "2024-10-21".into(),
            seed: None,
            temperature: Some(1.0),
            max_completion_tokens: 4096,
            top_p: None,
            top_k: None,
            is_reasoning: false,
            reasoning_effort: None,
            reasoning_source: ReasoningSource::Summary,
            disabled_params: Vec::new(),
            parallel_tool_calls: false,
            stop_sequences: Vec::new(),
            thinking: None,
            output_config: None,
            extra_body: Map::new(),
            timeout: 60.0,
            max_reply_bytes: DEFAULT_MAX_REPLY_BYTES,
            max_tool_argument_bytes: DEFAULT_MAX_TOOL_ARGUMENT_BYTES,
            lenient_replies: false,
            retry: RetryConfig::default(),
            credential: None,
            headers: Vec::new(),
            source: String::new(),
        }
    }

    /// The URL requests go to.
    pub fn url(&self) -> Result<String, String> {
        if let Some(u) = &self.endpoint_url {
            return Ok(u.clone());
        }
        let Some(acc) = &self.account_name else {
            return Err(format!(
                "{}: `endpoint_url` or `account_name` is required",
                self.source
            ));
        };
        Ok(match self.provider {
            Provider::Chat => format!(
                "https://{acc}.openai.azure.com/openai/deployments/{}/chat/completions?api-version={}",
                self.deployment, self.api_version
            ),
            Provider::Responses => format!(
                "https://{acc}.openai.azure.com/openai/responses?api-version={}",
                self.api_version
            ),
            Provider::Anthropic => {
                return Err(format!(
                    "{}: `endpoint_url` is required for type anthropic",
                    self.source
                ));
            }
        })
    }

    /// What a record's provenance says about this model: provider, model and endpoint host
    /// (never keys, headers or query strings).
    pub fn provenance(&self) -> Value {
        let host = self
            .url()
            .ok()
            .map(|u| {
                let no_query = u.split(['?', '#']).next().unwrap_or("").to_string();
                match no_query.split_once("://") {
                    Some((scheme, rest)) => {
                        let hostpart = rest.split('/').next().unwrap_or("");
                        let hostpart = hostpart.rsplit('@').next().unwrap_or(hostpart);
                        format!("{scheme}://{hostpart}")
                    }
                    None => String::new(),
                }
            })
            .unwrap_or_default();
        let mut p = json!({
            "type": self.provider.name(),
            "deployment": self.deployment,
            "endpoint": host,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_completion_tokens": self.max_completion_tokens,
            "reasoning_effort": self.reasoning_effort,
        });
        if self.lenient_replies {
            p["reply_rules"] = json!("lenient");
        }
        p
    }
}

/// The whole config file.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfigFile {
    /// `orchestrator.agent_model` (or the deprecated top-level `agent_model`).
    pub agent_model: Option<LlmConfig>,
    /// `user_model`.
    pub user_model: Option<LlmConfig>,
    /// `judge_model`.
    pub judge_model: Option<LlmConfig>,
    /// `judge_type` (`legacy`; `motivation` is not supported yet and is an error).
    pub judge_type: String,
    /// `user_can_end_conversation`.
    pub user_can_end_conversation: bool,
    /// The file.
    pub path: PathBuf,
    /// Unknown keys (`file:line: unknown key ...`, with a "did you mean"); they are ignored.
    pub warnings: Vec<String>,
    redacted: Value,
}

impl ConfigFile {
    /// Reads and validates a config file.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let src = std::fs::read_to_string(path).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: 0,
            message: format!("cannot read the config file: {e}"),
        })?;
        Self::parse_with(path, &src, &|k| std::env::var(k).ok())
    }

    /// Parses config text; `env` looks variables up (tests pass their own).
    pub fn parse_with(
        path: &Path,
        src: &str,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Result<Self, ConfigError> {
        let mut lines = HashMap::new();
        let v = tb_yaml::load_with_lines(src, Some(&mut lines)).map_err(|e| ConfigError {
            path: path.to_path_buf(),
            line: e.line,
            message: format!("invalid YAML: {}", e.message),
        })?;
        let p = Parser {
            path,
            lines: &lines,
            env,
        };
        let root = match v {
            Value::Object(m) => m,
            Value::Null => Map::new(),
            other => {
                return Err(p.err(
                    "",
                    format!(
                        "the config must be a mapping, found {}",
                        tb_yaml::type_name(&other, true)
                    ),
                ));
            }
        };
        let mut agent_v = root
            .get("orchestrator")
            .and_then(|o| o.get("agent_model"))
            .map(|v| (v, "/orchestrator/agent_model"));
        if let Some(o) = root.get("orchestrator") {
            if !o.is_object() {
                return Err(p.wrong_type("/orchestrator", "orchestrator", "a mapping", o));
            }
            if let Some(t) = o.get("type").filter(|t| t.as_str() != Some("thinkingbox")) {
                return Err(p.err(
                    "/orchestrator/type",
                    format!("`orchestrator.type` must be `thinkingbox`, found {t}"),
                ));
            }
        }
        if let Some(a) = root.get("agent_model") {
            if agent_v.is_some() {
                return Err(p.err("/agent_model", "`agent_model` is deprecated and cannot be given together with `orchestrator.agent_model`".into()));
            }
            tracing::warn!(
                "{}: top-level `agent_model` is deprecated; use `orchestrator.agent_model`",
                path.display()
            );
            agent_v = Some((a, "/agent_model"));
        }
        let model =
            |key: Option<(&Value, &str)>, field: &str| -> Result<Option<LlmConfig>, ConfigError> {
                match key {
                    None | Some((Value::Null, _)) => Ok(None),
                    Some((v, ptr)) => p.llm(v, ptr, field).map(Some),
                }
            };
        let agent_model = model(agent_v, "orchestrator.agent_model")?;
        let user_model = model(
            root.get("user_model").map(|v| (v, "/user_model")),
            "user_model",
        )?;
        let judge_model = model(
            root.get("judge_model").map(|v| (v, "/judge_model")),
            "judge_model",
        )?;
        let judge_type = match root.get("judge_type") {
            None | Some(Value::Null) => "legacy".to_string(),
            Some(Value::String(s)) if s == "legacy" => s.clone(),
            Some(Value::String(s)) if s == "motivation" => {
                return Err(p.err(
                    "/judge_type",
                    "`judge_type: motivation` is not supported yet; use `legacy`".into(),
                ));
            }
            Some(v) => {
                return Err(p.err(
                    "/judge_type",
                    format!("`judge_type` must be `legacy` or `motivation`, found {v}"),
                ));
            }
        };
        let user_can_end_conversation = match root.get("user_can_end_conversation") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(b)) => *b,
            Some(v) => {
                let k = "user_can_end_conversation";
                return Err(p.wrong_type(&format!("/{k}"), k, "a boolean", v));
            }
        };
        let redacted = redact(&Value::Object(root.clone()));
        let warnings = unknown_key_warnings(path, &lines, &root);
        for w in &warnings {
            tracing::warn!("{w}");
        }
        Ok(ConfigFile {
            agent_model,
            user_model,
            judge_model,
            judge_type,
            user_can_end_conversation,
            path: path.to_path_buf(),
            warnings,
            redacted,
        })
    }

    /// The config as written, with every credential key and header value replaced by
    /// `<redacted>` and query strings dropped from URLs: safe for metadata files.
    pub fn redacted(&self) -> &Value {
        &self.redacted
    }
}

/// Replaces secrets in a config value: `api_key`, any value under `headers` or
/// `credential`, and URL query strings.
pub fn redact(v: &Value) -> Value {
    fn walk(v: &Value, secret: bool) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, x)| {
                        let s = secret
                            || matches!(
                                k.as_str(),
                                "api_key"
                                    | "headers"
                                    | "credential"
                                    | "client_secret"
                                    | "password"
                                    | "token"
                            );
                        let keep_type = k == "type" && !secret;
                        (k.clone(), if keep_type { x.clone() } else { walk(x, s) })
                    })
                    .collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(|x| walk(x, secret)).collect()),
            Value::String(s) if secret => {
                if s.starts_with("${") && s.ends_with('}') && !s[2..].contains('$') {
                    Value::String(s.clone())
                } else {
                    Value::String("<redacted>".into())
                }
            }
            Value::String(s) if s.contains("://") && s.contains('?') => {
                Value::String(format!("{}?<redacted>", s.split('?').next().unwrap_or("")))
            }
            other => other.clone(),
        }
    }
    walk(v, false)
}

/// Keys of the config file the reference's `ConfigFile` knows (and `tb` reads).
const ROOT_KEYS: &[&str] = &[
    "orchestrator",
    "agent_model",
    "user_model",
    "judge_model",
    "judge_type",
    "user_can_end_conversation",
    "mcp_proxy",
    "mcp_proxy_timeout",
    "mcp_proxy_use_dns_cache",
];

/// Keys of a model config: the reference's provider configs and ours (retries, `api_key_env`,
/// `extra_body`, `api_key_header`).
const LLM_KEYS: &[&str] = &[
    "type",
    "credential",
    "client_certificate",
    "trust_ca_path",
    "headers",
    "timeout",
    "use_dns_cache",
    "max_retries_server_error",
    "retryable_server_errors",
    "deployment",
    "account_name",
    "endpoint_url",
    "seed",
    "temperature",
    "max_completion_tokens",
    "is_reasoning",
    "reasoning_effort",
    "api_version",
    "disabled_params",
    "parallel_tool_calls",
    "reasoning_source",
    "use_stateful_protocol",
    "top_k",
    "top_p",
    "stop_sequences",
    "thinking",
    "output_config",
    "factory",
    "api_key_env",
    "api_key_header",
    "extra_body",
    "max_retries_too_many_requests",
    "max_retries_connect",
    "max_retries_timeout",
    "max_retries_malformed",
    "retry_backoff_base",
    "retry_backoff_max",
    "max_reply_bytes",
    "max_tool_argument_bytes",
    "reply_rules",
];

const CREDENTIAL_KEYS: &[&str] = &[
    "type",
    "api_key",
    "header",
    "resource",
    "duration",
    "client_id",
    "name",
    "scope",
];

/// Warnings for keys no part of the config reads (typos like `tempreature`).
fn unknown_key_warnings(
    path: &Path,
    lines: &HashMap<String, usize>,
    root: &Map<String, Value>,
) -> Vec<String> {
    use tb_yaml::keys::unknown_keys;
    let mut out = unknown_keys(path, lines, root, "", "", ROOT_KEYS);
    let mut models: Vec<(&Value, String, String)> = Vec::new();
    if let Some(Value::Object(o)) = root.get("orchestrator") {
        out.extend(unknown_keys(
            path,
            lines,
            o,
            "/orchestrator",
            "orchestrator",
            &["type", "agent_model"],
        ));
        if let Some(m) = o.get("agent_model") {
            models.push((
                m,
                "/orchestrator/agent_model".into(),
                "orchestrator.agent_model".into(),
            ));
        }
    }
    for k in ["agent_model", "user_model", "judge_model"] {
        if let Some(m) = root.get(k) {
            models.push((m, format!("/{k}"), k.to_string()));
        }
    }
    for (m, ptr, field) in models {
        let Value::Object(m) = m else { continue };
        out.extend(unknown_keys(path, lines, m, &ptr, &field, LLM_KEYS));
        if let Some(Value::Object(c)) = m.get("credential") {
            out.extend(unknown_keys(
                path,
                lines,
                c,
                &format!("{ptr}/credential"),
                &format!("{field}.credential"),
                CREDENTIAL_KEYS,
            ));
        }
    }
    out
}

struct Parser<'a> {
    path: &'a Path,
    lines: &'a HashMap<String, usize>,
    env: &'a dyn Fn(&str) -> Option<String>,
}

impl Parser<'_> {
    fn line(&self, ptr: &str) -> usize {
        tb_yaml::keys::nearest_line(self.lines, ptr).unwrap_or(0)
    }

    fn err(&self, ptr: &str, message: String) -> ConfigError {
        ConfigError {
            path: self.path.to_path_buf(),
            line: self.line(ptr),
            message,
        }
    }

    /// ``field` must be {want}, found {type}` at `ptr`.
    fn wrong_type(&self, ptr: &str, field: &str, want: &str, found: &Value) -> ConfigError {
        self.err(ptr, tb_yaml::must_be(field, want, found))
    }

    /// The key `k` of the mapping `m` (at `ptr`, named `field`): none when absent or null,
    /// a wrong-type error (`want`: "a string", "a list", ...) when `is` rejects it.
    fn typed<'v>(
        &self,
        m: &'v Map<String, Value>,
        ptr: &str,
        field: &str,
        k: &str,
        want: &str,
        is: fn(&Value) -> bool,
    ) -> Result<Option<&'v Value>, ConfigError> {
        match m.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(x) if is(x) => Ok(Some(x)),
            Some(x) => {
                Err(self.wrong_type(&format!("{ptr}/{k}"), &format!("{field}.{k}"), want, x))
            }
        }
    }

    /// `${VAR}` expansion in a string.
    fn expand(&self, s: &str, ptr: &str, field: &str) -> Result<String, ConfigError> {
        let mut out = String::new();
        let mut rest = s;
        while let Some(i) = rest.find("${") {
            out.push_str(&rest[..i]);
            let after = &rest[i + 2..];
            let Some(j) = after.find('}') else {
                return Err(self.err(
                    ptr,
                    format!("`{field}`: unterminated `${{` in a variable reference"),
                ));
            };
            let name = &after[..j];
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(self.err(
                    ptr,
                    format!("`{field}`: `${{{name}}}` is not a valid variable name"),
                ));
            }
            match (self.env)(name) {
                Some(v) => out.push_str(&v),
                None => {
                    return Err(self.err(
                        ptr,
                        format!(
                            "`{field}` refers to the environment variable {name}, which is not set"
                        ),
                    ));
                }
            }
            rest = &after[j + 1..];
        }
        out.push_str(rest);
        Ok(out)
    }

    fn expand_all(&self, v: &Value, ptr: &str, field: &str) -> Result<Value, ConfigError> {
        Ok(match v {
            Value::String(s) => Value::String(self.expand(s, ptr, field)?),
            Value::Array(a) => {
                let mut out = Vec::with_capacity(a.len());
                for (i, x) in a.iter().enumerate() {
                    out.push(self.expand_all(
                        x,
                        &format!("{ptr}/{i}"),
                        &format!("{field}[{i}]"),
                    )?);
                }
                Value::Array(out)
            }
            Value::Object(m) => {
                let mut out = Map::new();
                for (k, x) in m {
                    out.insert(
                        k.clone(),
                        self.expand_all(x, &format!("{ptr}/{k}"), &format!("{field}.{k}"))?,
                    );
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    fn llm(&self, v: &Value, ptr: &str, field: &str) -> Result<LlmConfig, ConfigError> {
        let Value::Object(_) = v else {
            return Err(self.wrong_type(ptr, field, "a mapping", v));
        };
        let v = self.expand_all(v, ptr, field)?;
        let m = v.as_object().cloned().unwrap_or_default();
        let f = |k: &str| format!("{field}.{k}");
        let at = |k: &str| format!("{ptr}/{k}");
        let get =
            |k: &str, want: &str, is: fn(&Value) -> bool| self.typed(&m, ptr, field, k, want, is);
        let s = |k: &str| -> Result<Option<String>, ConfigError> {
            let x = get(k, "a string", Value::is_string)?;
            Ok(x.and_then(Value::as_str).map(str::to_string))
        };
        let num = |k: &str| -> Result<Option<f64>, ConfigError> {
            Ok(get(k, "a number", Value::is_number)?.and_then(Value::as_f64))
        };
        let int = |k: &str| -> Result<Option<i64>, ConfigError> {
            Ok(get(k, "an integer", Value::is_i64)?.and_then(Value::as_i64))
        };
        let boolean = |k: &str| -> Result<Option<bool>, ConfigError> {
            Ok(get(k, "a boolean", Value::is_boolean)?.and_then(Value::as_bool))
        };
        let strings = |k: &str| -> Result<Vec<String>, ConfigError> {
            let Some(a) = get(k, "a list", Value::is_array)?.and_then(Value::as_array) else {
                return Ok(Vec::new());
            };
            a.iter()
                .enumerate()
                .map(|(i, x)| {
                    x.as_str().map(str::to_string).ok_or_else(|| {
                        self.err(
                            &format!("{}/{i}", at(k)),
                            format!("`{}[{i}]` must be a string", f(k)),
                        )
                    })
                })
                .collect()
        };
        let provider = match s("type")?.as_deref() {
            Some("aoai") => Provider::Chat,
            Some("aoai_responses") => Provider::Responses,
            Some("anthropic") => Provider::Anthropic,
            Some("custom") => return Err(self.err(&at("type"), format!("`{}`: type `custom` (a Python factory) is not supported by tb; use aoai, aoai_responses or anthropic", f("type")))),
            Some(other) => return Err(self.err(&at("type"), format!("`{}` must be one of aoai, aoai_responses, anthropic; found `{other}`", f("type")))),
            None => return Err(self.err(ptr, format!("`{}` is required (aoai, aoai_responses or anthropic)", f("type")))),
        };
        let Some(deployment) = s("deployment")? else {
            return Err(self.err(
                ptr,
                format!(
                    "`{}` is required (the model or deployment name)",
                    f("deployment")
                ),
            ));
        };
        let mut cfg = LlmConfig::chat("", &deployment);
        cfg.provider = provider;
        cfg.endpoint_url = s("endpoint_url")?;
        if let Some(u) = &cfg.endpoint_url {
            crate::redact::register_url(u);
        }
        cfg.account_name = s("account_name")?;
        cfg.source = format!("{}:{}", self.path.display(), self.line(ptr));
        if let Some(x) = s("api_version")? {
            cfg.api_version = x;
        }
        cfg.seed = int("seed")?;
        cfg.temperature = match (num("temperature")?, provider) {
            (Some(t), _) => Some(t),
            (None, Provider::Anthropic) => None,
            (None, _) => Some(1.0),
        };
        if let Some(n) = int("max_completion_tokens")? {
            if n <= 0 {
                return Err(self.err(
                    &at("max_completion_tokens"),
                    format!("`{}` must be positive", f("max_completion_tokens")),
                ));
            }
            cfg.max_completion_tokens = n.cast_unsigned();
        }
        cfg.top_p = num("top_p")?;
        if let Some(tp) = cfg.top_p
            && !(0.0..=1.0).contains(&tp)
        {
            return Err(self.err(
                &at("top_p"),
                format!("`{}` must be between 0.0 and 1.0", f("top_p")),
            ));
        }
        cfg.top_k = match int("top_k")? {
            Some(k) if k < 0 => {
                return Err(self.err(&at("top_k"), format!("`{}` must be >= 0", f("top_k"))));
            }
            k => k.map(i64::cast_unsigned),
        };
        if provider == Provider::Anthropic
            && m.get("temperature").is_some_and(|t| !t.is_null())
            && cfg.top_p.is_some()
        {
            return Err(self.err(
                &at("top_p"),
                format!(
                    "`{}` and `{}` cannot both be set for anthropic",
                    f("temperature"),
                    f("top_p")
                ),
            ));
        }
        cfg.is_reasoning = boolean("is_reasoning")?.unwrap_or(false);
        cfg.reasoning_effort = s("reasoning_effort")?;
        if let Some(e) = &cfg.reasoning_effort
            && !matches!(e.as_str(), "low" | "medium" | "high" | "minimal")
        {
            return Err(self.err(
                &at("reasoning_effort"),
                format!(
                    "`{}` must be low, medium or high, found `{e}`",
                    f("reasoning_effort")
                ),
            ));
        }
        cfg.reasoning_source = match s("reasoning_source")?.as_deref() {
            None | Some("summary") => ReasoningSource::Summary,
            Some("content") => ReasoningSource::Content,
            Some("none") => ReasoningSource::None,
            Some(o) => {
                return Err(self.err(
                    &at("reasoning_source"),
                    format!(
                        "`{}` must be summary, content or none, found `{o}`",
                        f("reasoning_source")
                    ),
                ));
            }
        };
        if boolean("use_stateful_protocol")?.unwrap_or(false) {
            tracing::warn!(
                "{}: `use_stateful_protocol` is not supported; the full conversation is sent",
                cfg.source
            );
        }
        cfg.disabled_params = strings("disabled_params")?;
        if let Some(bad) = cfg
            .disabled_params
            .iter()
            .find(|k| matches!(k.as_str(), "messages" | "tools"))
        {
            return Err(self.err(
                &at("disabled_params"),
                format!("`{}` cannot remove `{bad}`", f("disabled_params")),
            ));
        }
        cfg.lenient_replies = match s("reply_rules")?.as_deref() {
            None | Some("reference") => false,
            Some("lenient") => true,
            Some(o) => {
                return Err(self.err(
                    &at("reply_rules"),
                    format!(
                        "`{}` must be reference or lenient, found `{o}`",
                        f("reply_rules")
                    ),
                ));
            }
        };
        cfg.parallel_tool_calls = boolean("parallel_tool_calls")?.unwrap_or(false);
        cfg.stop_sequences = strings("stop_sequences")?;
        cfg.thinking = m.get("thinking").filter(|v| !v.is_null()).cloned();
        cfg.output_config = m.get("output_config").filter(|v| !v.is_null()).cloned();
        cfg.extra_body = get("extra_body", "a mapping", Value::is_object)?
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        if let Some(t) = num("timeout")? {
            if t <= 0.0 {
                return Err(self.err(
                    &at("timeout"),
                    format!("`{}` must be positive (seconds)", f("timeout")),
                ));
            }
            cfg.timeout = t;
        }
        for (k, slot) in [
            ("max_reply_bytes", &mut cfg.max_reply_bytes),
            ("max_tool_argument_bytes", &mut cfg.max_tool_argument_bytes),
        ] {
            match int(k)? {
                Some(n) if n <= 0 => {
                    return Err(self.err(
                        &at(k),
                        format!("`{}` must be a positive number of bytes", f(k)),
                    ));
                }
                Some(n) => *slot = n.cast_unsigned(),
                None => {}
            }
        }
        // retries
        let r = &mut cfg.retry;
        for (k, slot) in [
            (
                "max_retries_too_many_requests",
                &mut r.max_retries_too_many_requests,
            ),
            ("max_retries_connect", &mut r.max_retries_connect),
            ("max_retries_timeout", &mut r.max_retries_timeout),
            ("max_retries_server_error", &mut r.max_retries_server_error),
            ("max_retries_malformed", &mut r.max_retries_malformed),
        ] {
            if let Some(n) = int(k)? {
                *slot = n;
            }
        }
        if let Some(x) = num("retry_backoff_base")? {
            r.backoff_base = x.max(0.0);
        }
        if let Some(x) = num("retry_backoff_max")? {
            r.backoff_max = x.max(0.0);
        }
        if let Some(list) = m.get("retryable_server_errors").filter(|v| !v.is_null()) {
            let Value::Array(a) = list else {
                return Err(self.err(
                    &at("retryable_server_errors"),
                    format!("`{}` must be a list", f("retryable_server_errors")),
                ));
            };
            r.retryable_server_errors.clear();
            r.retry_read_errors = false;
            for (i, c) in a.iter().enumerate() {
                let code = match c {
                    Value::Number(n) => n
                        .as_u64()
                        .filter(|c| (100..600).contains(c))
                        .and_then(|c| u16::try_from(c).ok()),
                    Value::String(s) if s == "read-error" => {
                        r.retry_read_errors = true;
                        continue;
                    }
                    Value::String(s) => s.parse::<u16>().ok().filter(|c| (100..600).contains(c)),
                    _ => None,
                };
                match code {
                    Some(c) => r.retryable_server_errors.push(c),
                    None => {
                        return Err(self.err(
                            &format!("{}/{i}", at("retryable_server_errors")),
                            format!(
                                "`{}[{i}]` must be an HTTP status or \"read-error\", found {c}",
                                f("retryable_server_errors")
                            ),
                        ));
                    }
                }
            }
        }
        // credentials
        cfg.credential = match m.get("credential") {
            None | Some(Value::Null) => None,
            Some(Value::String(t)) if t == "az-cli" => {
                return Err(self.err(&at("credential"), format!("`{}`: az-cli credentials are not supported by tb; use `{{type: api-key, api_key: ${{VAR}}}}` or `api_key_env`", f("credential"))));
            }
            Some(Value::Object(c)) => {
                let t = c.get("type").and_then(Value::as_str).unwrap_or("api-key");
                if t != "api-key" {
                    return Err(self.err(&at("credential"), format!("`{}`: credential type `{t}` is not supported by tb; use api-key (with `${{VAR}}`), `api_key_env` or `headers`", f("credential.type"))));
                }
                let Some(key) = c.get("api_key").and_then(Value::as_str) else {
                    return Err(self.err(
                        &at("credential"),
                        format!(
                            "`{}` is required for an api-key credential",
                            f("credential.api_key")
                        ),
                    ));
                };
                let header = c
                    .get("header")
                    .and_then(Value::as_str)
                    .unwrap_or("Authorization")
                    .to_string();
                Some(Credential {
                    api_key: Secret::new(key),
                    header,
                })
            }
            Some(x) => {
                return Err(self.wrong_type(&at("credential"), &f("credential"), "a mapping", x));
            }
        };
        let key_header = s("api_key_header")?;
        if key_header.is_some() && cfg.credential.is_some() {
            return Err(self.err(
                &at("api_key_header"),
                format!(
                    "`{}` and `{}` cannot both be given (with a credential, name the header in `{}`)",
                    f("api_key_header"),
                    f("credential"),
                    f("credential.header")
                ),
            ));
        }
        if key_header.is_some() && m.get("api_key_env").is_none_or(Value::is_null) {
            return Err(self.err(
                &at("api_key_header"),
                format!(
                    "`{}` needs `{}` (it names the header of that key)",
                    f("api_key_header"),
                    f("api_key_env")
                ),
            ));
        }
        if let Some(var) = s("api_key_env")? {
            if cfg.credential.is_some() {
                return Err(self.err(
                    &at("api_key_env"),
                    format!(
                        "`{}` and `{}` cannot both be given",
                        f("api_key_env"),
                        f("credential")
                    ),
                ));
            }
            let Some(key) = (self.env)(&var) else {
                return Err(self.err(
                    &at("api_key_env"),
                    format!(
                        "`{}`: the environment variable {var} is not set",
                        f("api_key_env")
                    ),
                ));
            };
            let header = key_header.unwrap_or_else(|| "Authorization".into());
            cfg.credential = Some(Credential {
                api_key: Secret::new(key),
                header,
            });
        }
        cfg.headers = match m.get("headers") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Object(h)) => {
                let mut out = Vec::new();
                for (k, x) in h {
                    let val = match x {
                        Value::String(s) => s.clone(),
                        Value::Number(n) => n.to_string(),
                        _ => {
                            return Err(self.err(
                                &format!("{}/{k}", at("headers")),
                                format!("`{}.{k}` must be a string", f("headers")),
                            ));
                        }
                    };
                    out.push((k.clone(), Secret::new(val)));
                }
                out
            }
            Some(x) => {
                return Err(self.wrong_type(&at("headers"), &f("headers"), "a mapping", x));
            }
        };
        for k in ["client_certificate", "trust_ca_path"] {
            if m.get(k).is_some_and(|v| !v.is_null()) {
                return Err(self.err(&at(k), format!("`{}` is not supported by tb yet", f(k))));
            }
        }
        cfg.url().map_err(|e| {
            self.err(
                ptr,
                e.split_once(": ").map(|x| x.1.to_string()).unwrap_or(e),
            )
        })?;
        Ok(cfg)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> Result<ConfigFile, ConfigError> {
        let env = |k: &str| match k {
            "MY_KEY" => Some("sk-secret-123".to_string()),
            "HOST" => Some("127.0.0.1:9".to_string()),
            _ => None,
        };
        ConfigFile::parse_with(Path::new("cfg.yaml"), src, &env)
    }

    #[test]
    fn reads_the_reference_layout() {
        let c = parse(
            "mcp_proxy: http://x\norchestrator:\n  type: thinkingbox\n  agent_model:\n    type: aoai\n    deployment: m\n    endpoint_url: http://${HOST}/v1/chat/completions\n    credential: {type: api-key, api_key: '${MY_KEY}'}\n    temperature: 0.5\njudge_model:\n  type: anthropic\n  deployment: c\n  endpoint_url: http://h/v1/messages\n  api_key_env: MY_KEY\n  api_key_header: x-api-key\nuser_can_end_conversation: true\n",
        )
        .unwrap();
        let a = c.agent_model.as_ref().unwrap();
        assert_eq!(
            a.endpoint_url.as_deref(),
            Some("http://127.0.0.1:9/v1/chat/completions")
        );
        assert_eq!(
            a.credential.as_ref().unwrap().api_key.expose(),
            "sk-secret-123"
        );
        assert_eq!(a.temperature, Some(0.5));
        let j = c.judge_model.as_ref().unwrap();
        assert_eq!(j.provider, Provider::Anthropic);
        assert_eq!(j.temperature, None);
        assert_eq!(j.credential.as_ref().unwrap().header, "x-api-key");
        assert!(c.user_can_end_conversation);
        let red = serde_json::to_string(c.redacted()).unwrap();
        assert!(!red.contains("sk-secret-123"));
        assert!(!format!("{c:?}").contains("sk-secret-123"));
        assert_eq!(c.warnings, Vec::<String>::new());
    }

    #[test]
    fn the_bundled_configs_have_no_unknown_keys() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/configs");
        let env = |_: &str| Some("x".to_string());
        let mut n = 0;
        for e in std::fs::read_dir(&dir).expect("examples/configs") {
            let p = e.expect("entry").path();
            if p.extension().is_some_and(|x| x == "yaml") {
                let src = std::fs::read_to_string(&p).expect("readable");
                let c = ConfigFile::parse_with(&p, &src, &env).expect("parses");
                assert_eq!(c.warnings, Vec::<String>::new(), "{}", p.display());
                n += 1;
            }
        }
        assert!(n > 0);
    }

    #[test]
    fn unknown_keys_are_warned_with_file_line_and_a_suggestion() {
        let c = parse("orchestrator:\n  type: thinkingbox\n  agent_model:\n    type: aoai\n    deployment: m\n    endpoint_url: http://x\n    tempreature: 0.2\n    credential: {type: api-key, api_key: k, api_kye: z}\njudge_typ: legacy\nuser_model:\n  type: aoai\n  deployment: u\n  endpoint_url: http://x\n  zzz_unrelated: 1\n").unwrap();
        assert_eq!(
            c.warnings,
            vec![
                "cfg.yaml:9: unknown key `judge_typ` (did you mean `judge_type`?); it is ignored",
                "cfg.yaml:7: unknown key `tempreature` in `orchestrator.agent_model` (did you mean `temperature`?); it is ignored",
                "cfg.yaml:8: unknown key `api_kye` in `orchestrator.agent_model.credential` (did you mean `api_key`?); it is ignored",
                "cfg.yaml:14: unknown key `zzz_unrelated` in `user_model`; it is ignored",
            ]
        );
        // The warned values are not secrets' keys, and a key's value is never echoed.
        assert!(!c.warnings.iter().any(|w| w.contains(" z")));
    }

    #[test]
    fn credential_header_is_known_and_api_key_header_beside_a_credential_is_an_error() {
        let c = parse("judge_model:\n  type: anthropic\n  deployment: c\n  endpoint_url: http://h/v1/messages\n  credential: {type: api-key, api_key: k, header: x-api-key}\n").unwrap();
        assert_eq!(c.warnings, Vec::<String>::new());
        assert_eq!(
            c.judge_model.unwrap().credential.unwrap().header,
            "x-api-key"
        );
        let e = parse("judge_model:\n  type: anthropic\n  deployment: c\n  endpoint_url: http://h/v1/messages\n  credential: {type: api-key, api_key: k}\n  api_key_header: x-api-key\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cfg.yaml:6: `judge_model.api_key_header` and `judge_model.credential` cannot both be given (with a credential, name the header in `judge_model.credential.header`)"
        );
        let e = parse("judge_model:\n  type: aoai\n  deployment: c\n  endpoint_url: http://h/v1\n  api_key_header: x-api-key\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cfg.yaml:5: `judge_model.api_key_header` needs `judge_model.api_key_env` (it names the header of that key)"
        );
    }

    #[test]
    fn every_key_the_parser_reads_is_known_to_the_warning_pass() {
        // one model config holding every key `llm` reads (with values it accepts)
        let c = parse(concat!(
            "orchestrator:\n  type: thinkingbox\n  agent_model:\n",
            "    type: aoai\n    deployment: m\n    endpoint_url: http://h/v1\n",
            "    account_name: a\n    api_version: v\n    seed: 1\n    temperature: 0.5\n",
            "    max_completion_tokens: 9\n    top_p: 0.5\n    top_k: 3\n    is_reasoning: true\n",
            "    reasoning_effort: low\n    reasoning_source: content\n",
            "    use_stateful_protocol: false\n    disabled_params: [seed]\n",
            "    parallel_tool_calls: true\n    stop_sequences: [x]\n    thinking: {}\n",
            "    output_config: {}\n    extra_body: {}\n    timeout: 5\n",
            "    max_reply_bytes: 1000\n    max_tool_argument_bytes: 100\n",
            "    reply_rules: lenient\n",
            "    max_retries_too_many_requests: 1\n    max_retries_connect: 1\n",
            "    max_retries_timeout: 1\n    max_retries_server_error: 1\n",
            "    max_retries_malformed: 1\n    retry_backoff_base: 1\n    retry_backoff_max: 2\n",
            "    retryable_server_errors: [500, read-error]\n",
            "    api_key_env: MY_KEY\n    api_key_header: api-key\n    headers: {X-A: b}\n",
            "    use_dns_cache: true\n",
            "judge_model:\n  type: aoai\n  deployment: j\n  endpoint_url: http://h/v1\n",
            "  credential: {type: api-key, api_key: k, header: api-key}\n",
            "judge_type: legacy\nuser_can_end_conversation: true\nmcp_proxy: http://p\n",
            "mcp_proxy_timeout: 3\nmcp_proxy_use_dns_cache: true\n",
        ))
        .unwrap();
        assert_eq!(c.warnings, Vec::<String>::new());
        let a = c.agent_model.unwrap();
        assert_eq!((a.max_reply_bytes, a.max_tool_argument_bytes), (1000, 100));
        assert!(a.lenient_replies);
        assert_eq!(a.provenance()["reply_rules"], "lenient");
        let d = LlmConfig::chat("http://x", "m");
        assert!(!d.lenient_replies);
        assert!(d.provenance().get("reply_rules").is_none());
        let e = parse("judge_model:\n  type: aoai\n  deployment: m\n  endpoint_url: http://x\n  reply_rules: loose\n").unwrap_err();
        assert!(
            e.to_string()
                .contains("must be reference or lenient, found `loose`"),
            "{e}"
        );
        assert_eq!(
            (d.max_reply_bytes, d.max_tool_argument_bytes),
            (32 << 20, 1 << 20)
        );
        let e = parse("judge_model:\n  type: aoai\n  deployment: m\n  endpoint_url: http://x\n  max_reply_bytes: 0\n").unwrap_err();
        assert_eq!(
            e.to_string(),
            "cfg.yaml:5: `judge_model.max_reply_bytes` must be a positive number of bytes"
        );
    }

    #[test]
    fn errors_name_file_line_and_field() {
        let e = parse("orchestrator:\n  agent_model:\n    type: aoai\n    deployment: m\n    endpoint_url: http://x\n    temperature: hot\n").unwrap_err();
        assert_eq!(e.line, 6, "{e}");
        assert!(
            e.to_string()
                .contains("orchestrator.agent_model.temperature"),
            "{e}"
        );
        let e = parse("user_model:\n  type: gemini\n  deployment: m\n").unwrap_err();
        assert!(e.to_string().starts_with("cfg.yaml:2:"), "{e}");
        let e = parse("judge_model:\n  type: aoai\n  deployment: m\n  endpoint_url: ${NOPE}\n")
            .unwrap_err();
        assert!(e.to_string().contains("NOPE"), "{e}");
        assert_eq!(e.line, 4);
        let e = parse("judge_model: [1\n").unwrap_err();
        assert!(e.to_string().contains("invalid YAML"), "{e}");
        let e = parse("judge_model:\n  type: aoai\n  deployment: m\n").unwrap_err();
        assert!(e.to_string().contains("endpoint_url"), "{e}");
    }
}
