//! What several commands share: finding the data root, loading the dataset and the sandbox.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use tb_dataset::Dataset;
use tb_eval::sandbox::Sandbox;

/// `--data DIR`, else `THINKINGBOX_DATA`.
pub fn data_root(arg: &Option<PathBuf>) -> Result<PathBuf> {
    arg.clone()
        .or_else(tb_dataset::default_data_root)
        .context("no data root: pass --data DIR (a thinkingbox-data checkout, or a folder in its layout) or set THINKINGBOX_DATA")
}

/// Opens the dataset and loads every domain's initial data from the same root.
pub fn open(root: &Path) -> Result<(Dataset, Sandbox)> {
    let ds = Dataset::open(root)?;
    let sandbox = Sandbox::load(ds.root()).with_context(|| {
        format!(
            "loading the tools' initial data under {}",
            ds.root().display()
        )
    })?;
    Ok((ds, sandbox))
}

/// `--now` parsed, else the default pinned clock.
pub fn clock(now: &Option<String>) -> Result<tb_sandbox::Clock> {
    match now {
        Some(s) => tb_sandbox::Clock::parse(s).map_err(anyhow::Error::msg),
        None => Ok(tb_sandbox::Clock::default()),
    }
}

/// What the model is shown: `--surface` (tool texts and schemas) and `--framework` (the
/// simulated user's and the judge's prompts). One group, flattened into each command that
/// shows tools or prompts.
#[derive(Debug, Clone, clap::Args)]
pub struct SurfaceArgs {
    /// Tool surface: `reference` (the reference's tool order, descriptions and schemas, read
    /// from the data checkout's server sources), `own` (ours, in the reference's order and
    /// schema structure), or `auto` (`reference` when the data root holds the servers'
    /// Python sources, else `own`).
    #[arg(long, default_value = "auto", value_parser = parse_surface)]
    pub surface: tb_eval::surface::SurfaceMode,
    /// A checkout of the reference framework (microsoft/thinkingbox): the simulated user's
    /// and the judge's prompts are read from it (default: our own prompts).
    #[arg(long, env = "THINKINGBOX_FRAMEWORK")]
    pub framework: Option<PathBuf>,
}

fn parse_surface(s: &str) -> Result<tb_eval::surface::SurfaceMode, String> {
    s.parse()
}

impl SurfaceArgs {
    /// The surface, resolved against the data root.
    pub fn surface(&self, root: &Path) -> Result<tb_eval::surface::Surface> {
        Ok(tb_eval::surface::Surface::resolve(self.surface, root)?)
    }

    /// The prompts (`--framework`, else ours).
    pub fn prompts(&self) -> Result<std::sync::Arc<tb_eval::prompts::Prompts>> {
        Ok(std::sync::Arc::new(tb_eval::prompts::Prompts::resolve(
            self.framework.as_deref(),
        )?))
    }
}

/// [`open`] with the domains of a tool surface.
pub fn open_with(root: &Path, surface: &tb_eval::surface::Surface) -> Result<(Dataset, Sandbox)> {
    let ds = Dataset::open(root)?;
    let sandbox = Sandbox::load_with(ds.root(), surface).with_context(|| {
        format!(
            "loading the tools' initial data under {}",
            ds.root().display()
        )
    })?;
    Ok((ds, sandbox))
}
