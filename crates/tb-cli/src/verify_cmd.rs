//! `tb verify`: is a campaign's output a complete, consistent result? Exit 0 only when every
//! expected key has exactly one verdict, no system error is left without a verdict for its
//! key, and every record carries the same bundle hash and config hash (those of the run
//! manifest, when it is beside the output). Otherwise it lists what is missing, duplicated
//! or inconsistent and exits 1. See docs/campaigns.md.

use anyhow::{Context, Result, bail};
use clap::Args;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tb_campaign::CampaignFiles;
use tb_campaign::store::{Scan, VerifyReport, verify};

/// `tb verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The campaign output (JSONL of records with a verdict).
    pub output: PathBuf,
    /// The test list the campaign ran (YAML list of `file.py:function`); a relative path
    /// not found from here is looked up under --data / $THINKINGBOX_DATA.
    #[arg(long)]
    pub test_list: PathBuf,
    /// Attempts per task.
    #[arg(short = 'r', long)]
    pub repeat: u32,
    /// The errors sidecar; default `<output stem>_errors.jsonl`.
    #[arg(long)]
    pub errors_output: Option<PathBuf>,
    /// Data root, to resolve a relative --test-list.
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Keys to list per problem.
    #[arg(long, default_value_t = 20)]
    pub show: usize,
}

/// Task ids of a test list: each entry `path/file.py:function` as `file.py:function` (the
/// uid records carry).
pub(crate) fn read_test_list<'a>(
    path: &Path,
    data: impl Into<Option<&'a PathBuf>>,
) -> Result<Vec<String>> {
    let data = data.into();
    let mut p = path.to_path_buf();
    if !p.is_file() && p.is_relative() {
        let root = data.cloned().or_else(tb_dataset::default_data_root);
        if let Some(r) = root {
            for base in [r.clone(), r.join("dataset")] {
                if base.join(path).is_file() {
                    p = base.join(path);
                    break;
                }
            }
        }
    }
    let text = std::fs::read_to_string(&p).with_context(|| format!("reading {}", p.display()))?;
    let v = tb_dataset::yaml::load(&text)
        .map_err(|e| anyhow::anyhow!("{}: line {}: {}", p.display(), e.line, e.message))?;
    let Value::Array(items) = v else {
        bail!(
            "{}: a test list is a YAML list of \"file.py:function\"",
            p.display()
        );
    };
    let mut ids = Vec::new();
    for (i, it) in items.iter().enumerate() {
        let Some(s) = it.as_str() else {
            bail!("{}: entry {i} is not a string", p.display());
        };
        let Some((file, func)) = s.rsplit_once(':') else {
            bail!("{}: entry {i} `{s}` is not file.py:function", p.display());
        };
        let base = file.rsplit('/').next().unwrap_or(file);
        ids.push(format!("{base}:{func}"));
    }
    Ok(ids)
}

fn list<T>(out: &mut String, title: &str, items: &[T], show: usize, f: impl Fn(&T) -> String) {
    if items.is_empty() {
        return;
    }
    out.push_str(&format!("{title}: {}\n", items.len()));
    for it in items.iter().take(show) {
        out.push_str(&format!("  {}\n", f(it)));
    }
    if items.len() > show {
        out.push_str(&format!("  ... and {} more\n", items.len() - show));
    }
}

/// The report as text.
pub(crate) fn render(r: &VerifyReport, show: usize) -> String {
    let mut s = format!(
        "{} of {} expected keys have exactly one verdict; {} system error(s) resolved by a rerun\n",
        r.complete, r.expected, r.resolved_errors
    );
    list(
        &mut s,
        "missing",
        &r.missing,
        show,
        std::clone::Clone::clone,
    );
    list(&mut s, "duplicated", &r.duplicated, show, |(k, lines)| {
        format!("{k} (lines {lines:?})")
    });
    list(
        &mut s,
        "system errors not yet rerun (tb infer --resume)",
        &r.unresolved_errors,
        show,
        |(k, t)| format!("{k} ({})", t.join(", ")),
    );
    list(
        &mut s,
        "error records in the output (it must hold verdicts only)",
        &r.errors_in_output,
        show,
        |(k, l)| format!("line {l}: {}", k.as_deref().unwrap_or("?")),
    );
    list(&mut s, "unexpected keys", &r.unexpected, show, |(k, l)| {
        format!("line {l}: {k}")
    });
    list(
        &mut s,
        "unreadable",
        &r.unreadable,
        show,
        std::clone::Clone::clone,
    );
    for (what, seen) in [
        ("bundle hashes", &r.bundle_hashes),
        ("config hashes", &r.config_hashes),
    ] {
        if seen.len() != 1 || seen.contains_key("none") {
            let v: Vec<String> = seen
                .iter()
                .map(|(h, n)| format!("{h}: {n} record(s)"))
                .collect();
            list(&mut s, &format!("inconsistent {what}"), &v, show, |x| {
                x.clone()
            });
        }
    }
    list(&mut s, "manifest", &r.manifest_mismatch, show, |x| {
        x.clone()
    });
    s
}

/// Runs `tb verify`.
pub fn run(a: &VerifyArgs) -> Result<ExitCode> {
    if a.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if !a.output.is_file() {
        bail!("{}: no such file", a.output.display());
    }
    let ids = read_test_list(&a.test_list, &a.data)?;
    let mut expected = BTreeSet::new();
    for id in &ids {
        for r in 0..a.repeat {
            if !expected.insert(tb_core::attempt_key(id, r)) {
                bail!("{}: task {id} is listed twice", a.test_list.display());
            }
        }
    }
    let files = CampaignFiles::new(&a.output, a.errors_output.as_deref());
    let out = Scan::read(&files.output)?;
    let errs = Scan::read(&files.errors)?;
    let manifest: Option<Value> = std::fs::read_to_string(&files.manifest)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok());
    let report = verify(&out, &errs, &expected, manifest.as_ref());
    print!("{}", render(&report, a.show));
    if report.ok() {
        let hash = report
            .bundle_hashes
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        let cfg = report
            .config_hashes
            .keys()
            .next()
            .cloned()
            .unwrap_or_default();
        println!("OK: bundle {hash}, config {cfg}");
        Ok(ExitCode::SUCCESS)
    } else {
        println!("NOT VERIFIED");
        Ok(ExitCode::from(1))
    }
}
