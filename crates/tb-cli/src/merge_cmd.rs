//! `tb merge`: combines shard outputs (`tb infer --shard i/n`) into one output, refusing
//! duplicates, conflicting records and shards run on other data or configs. Each input's
//! errors sidecar (`<stem>_errors.jsonl`) is merged into the output's. See
//! docs/campaigns.md.

use anyhow::{Result, bail};
use clap::Args;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::ExitCode;
use tb_campaign::CampaignFiles;

/// `tb merge` arguments.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard outputs (JSONL).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// The merged output.
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// The merged errors sidecar; default `<output stem>_errors.jsonl`.
    #[arg(long)]
    pub errors_output: Option<PathBuf>,
    /// Replace an existing output.
    #[arg(long)]
    pub overwrite: bool,
}

/// Runs `tb merge`.
pub fn run(a: &MergeArgs) -> Result<ExitCode> {
    let files = CampaignFiles::new(&a.output, a.errors_output.as_deref());
    if files.output.exists() && !a.overwrite {
        bail!(
            "{} exists: pass --overwrite to replace it",
            files.output.display()
        );
    }
    let inputs: Vec<(PathBuf, PathBuf)> = a
        .inputs
        .iter()
        .map(|p| {
            let f = CampaignFiles::new(p, None);
            (f.output, f.errors)
        })
        .collect();
    // Shards of one campaign only: every record's `provenance.campaign.id` (set by `tb
    // campaign run`) must be the same, or absent from all.
    let mut campaigns = std::collections::BTreeMap::new();
    for (out, errs) in &inputs {
        for p in [out, errs] {
            for id in crate::campaign_cmd::campaign_ids(p)? {
                campaigns
                    .entry(id)
                    .or_insert_with(|| p.display().to_string());
            }
        }
    }
    if campaigns.len() > 1 {
        let list: Vec<String> = campaigns
            .iter()
            .map(|(id, f)| format!("{} (e.g. {f})", id.as_deref().unwrap_or("no campaign")))
            .collect();
        bail!(
            "the inputs belong to different campaigns: {}; nothing written",
            list.join(", ")
        );
    }
    let runs: Vec<tb_metrics::Run> = inputs
        .iter()
        .filter(|(o, _)| o.exists())
        .filter_map(|(o, _)| tb_metrics::read_run(o).ok())
        .collect();
    if let Some(w) = tb_metrics::surface_mix::surface_mix(&runs.iter().collect::<Vec<_>>()) {
        eprintln!("{w}");
    }
    let report = tb_campaign::store::merge(&inputs, &files.output, &files.errors)?;
    // The manifest: the shards' provenance (equal, or the merge was refused) and their
    // manifests.
    let shards: Vec<Value> = a
        .inputs
        .iter()
        .map(|p| {
            let m = CampaignFiles::new(p, None).manifest;
            std::fs::read_to_string(&m)
                .ok()
                .and_then(|t| serde_json::from_str::<Value>(&t).ok())
                .unwrap_or(Value::Null)
        })
        .collect();
    let first = shards.iter().find(|m| !m.is_null());
    let manifest = json!({
        "merged_from": a.inputs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "provenance": first.and_then(|m| m.get("provenance")).cloned().unwrap_or(Value::Null),
        "test_list": first.and_then(|m| m.get("test_list")).cloned().unwrap_or(Value::Null),
        "repeat": first.and_then(|m| m.get("repeat")).cloned().unwrap_or(Value::Null),
        "setup_config": first.and_then(|m| m.get("setup_config")).cloned().unwrap_or(Value::Null),
        "records": report.records,
        "errors": report.errors,
        "shards": shards,
    });
    tb_campaign::store::write_json_atomic(&files.manifest, &manifest)?;
    println!(
        "merged {} input(s): {} record(s) into {}, {} error record(s) into {}",
        a.inputs.len(),
        report.records,
        files.output.display(),
        report.errors,
        files.errors.display()
    );
    Ok(ExitCode::SUCCESS)
}
