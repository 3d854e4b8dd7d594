//! `tb tools --task ID`: prints, as JSON, exactly the system messages and the tool list the
//! agent gets in its first request for an API (for audits and diffs between surfaces).
//! `tb tools --export surface|prompts`: prints the resolved tool surface or prompts as a
//! surface or prompt file, for `--surface FILE` and `--prompts FILE`.

use anyhow::{Result, anyhow};
use clap::Args;
use std::path::PathBuf;
use std::process::ExitCode;

/// `tb tools` arguments.
#[derive(Debug, Args)]
pub struct ToolsArgs {
    /// The task (`file.py:function`).
    #[arg(long, required_unless_present = "export")]
    pub task: Option<String>,
    /// Print the resolved tool surface (`surface`) or prompts (`prompts`) as a file that
    /// `--surface FILE` or `--prompts FILE` reads, instead of a task's first request.
    #[arg(long, value_name = "WHAT", value_parser = ["surface", "prompts"], conflicts_with = "task")]
    pub export: Option<String>,
    /// The API whose encoding to show: `chat`, `responses` or `anthropic`.
    #[arg(long, default_value = "chat")]
    pub api: String,
    /// The agent YAML under `dataset/agent/`.
    #[arg(short = 'a', long, default_value = "think")]
    pub agent: String,
    /// Data root; defaults to $THINKINGBOX_DATA.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// What the model is shown (tool surface).
    #[command(flatten)]
    pub shown: crate::common::SurfaceArgs,
}

/// Runs `tb tools`.
pub fn run(a: &ToolsArgs) -> Result<ExitCode> {
    let provider = match a.api.as_str() {
        "chat" => tb_llm::Provider::Chat,
        "responses" => tb_llm::Provider::Responses,
        "anthropic" => tb_llm::Provider::Anthropic,
        other => {
            return Err(anyhow!(
                "unknown --api `{other}` (chat, responses or anthropic)"
            ));
        }
    };
    if a.export.as_deref() == Some("prompts") {
        let p = a.shown.prompts()?;
        println!("{}", serde_json::to_string_pretty(&p.to_file_json())?);
        return Ok(ExitCode::SUCCESS);
    }
    let root = crate::common::data_root(&a.data)?;
    let surface = a.shown.surface(&root)?;
    if a.export.is_some() {
        println!("{}", serde_json::to_string_pretty(&surface.to_file_json())?);
        return Ok(ExitCode::SUCCESS);
    }
    let task_id = a.task.as_deref().unwrap_or_default();
    let (ds, sandbox) = crate::common::open_with(&root, &surface)?;
    let task = ds.load_task(task_id)?;
    let mut view = tb_eval::view::agent_view(&sandbox, &ds, &a.agent, &task, provider)
        .map_err(anyhow::Error::msg)?;
    view["api"] = serde_json::json!(a.api);
    view["surface"] = surface.provenance();
    println!("{}", serde_json::to_string_pretty(&view)?);
    Ok(ExitCode::SUCCESS)
}
