//! Model clients for thinkingbox-rs: the reference's three provider APIs (Chat Completions for
//! Azure OpenAI and any OpenAI-compatible server, the Responses API, Anthropic Messages),
//! hand-written on `reqwest` and `serde_json::Value`, with the reference's retry rules and
//! token usage (cached and reasoning tokens).
//!
//! - [`config`]: the run config YAML (`orchestrator.agent_model`, `user_model`,
//!   `judge_model`, ...), with `${VAR}` expansion and secret redaction;
//! - [`wire`]: encoding and decoding of each API's JSON;
//! - [`retry`]: budgets and backoff;
//! - [`client`]: the HTTP client and a conversation that keeps provider-native items;

#![warn(missing_docs)]

pub mod client;
pub mod config;
pub mod redact;
pub mod retry;
pub mod wire;

pub use client::{
    ChatSession, Completion, DEFAULT_CONNECTIONS_PER_ENDPOINT, EncodedTools, LlmClient, LlmError,
    connections_per_endpoint, install_crypto_provider, set_connections_per_endpoint,
};
pub use config::{ConfigError, ConfigFile, LlmConfig, Provider, RetryConfig, Secret};
pub use wire::{ToolSet, ToolSpec};
