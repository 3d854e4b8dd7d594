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
    let sandbox = Sandbox::load(ds.root()).with_context(|| format!("loading the tools' initial data under {}", ds.root().display()))?;
    Ok((ds, sandbox))
}

/// `--now` parsed, else the default pinned clock.
pub fn clock(now: &Option<String>) -> Result<tb_sandbox::Clock> {
    match now {
        Some(s) => tb_sandbox::Clock::parse(s).map_err(anyhow::Error::msg),
        None => Ok(tb_sandbox::Clock::default()),
    }
}
