//! What the agent is shown for a task (`tb tools`): the system messages and the tool list,
//! exactly as the first agent request carries them for an API.

use crate::root::LoadedRoot;
use serde_json::{Value, json};
use tb_core::{Message, Task};
use tb_llm::{LlmConfig, Provider, wire};

/// The system messages and tools of the task's first agent request, for `provider`, with
/// the agent YAML `agent` (e.g. `think`).
pub fn agent_view(
    sandbox: &LoadedRoot,
    ds: &tb_dataset::Dataset,
    agent: &str,
    task: &Task,
    provider: Provider,
) -> Result<Value, String> {
    let agent_cfg = ds.agent(agent).map_err(|e| tb_core::error_text(&e))?;
    let scenario = ds
        .scenario(&task.scenario)
        .map_err(|e| tb_core::error_text(&e))?;
    let session = sandbox
        .session(task, tb_sandbox::Clock::default())
        .map_err(|e| tb_core::error_text(&e))?;
    let tools = crate::episode::AgentTools::build(
        &agent_cfg.builtin_tools,
        &scenario.tools,
        &crate::tools::ToolBackend::tool_list(&session),
    )?;
    let set = wire::encode_tools(provider, &tools.specs).map_err(|e| e.0)?;
    let system = crate::attempt::system_messages_of(
        Some(agent_cfg.system_instructions.as_str()),
        scenario.bot_instructions.as_deref(),
        task.bot_instructions.as_deref(),
    );
    let mut cfg = LlmConfig::chat("http://localhost/", "agent");
    cfg.provider = provider;
    let native: Vec<Value> = system
        .iter()
        .chain(std::iter::once(&Message::text(
            "user",
            task.query.clone().unwrap_or_default(),
        )))
        .flat_map(|m| wire::encode_message(&cfg, m))
        .collect();
    let body = wire::request_body(&cfg, &native, Some(&set)).map_err(|e| e.0)?;
    let system = match provider {
        Provider::Anthropic => body.get("system").cloned().unwrap_or(json!([])),
        Provider::Chat | Provider::Responses => {
            let key = if provider == Provider::Chat {
                "messages"
            } else {
                "input"
            };
            Value::Array(
                body.get(key)
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter(|m| m.get("role").and_then(Value::as_str) != Some("user"))
                            .cloned()
                            .collect()
                    })
                    .unwrap_or_default(),
            )
        }
    };
    Ok(json!({
        "task": task.uid,
        "system": system,
        "tools": body.get("tools").cloned().unwrap_or(json!([])),
        "missing_tools": tools.missing,
    }))
}
