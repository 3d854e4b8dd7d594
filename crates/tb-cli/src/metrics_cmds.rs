//! `tb agg`, `tb report`, `tb show`, `tb sbs`: reading trial records and reporting on them.
//! The numbers and rules live in `tb-metrics` (see `docs/metrics.md`).

use crate::common::{eprint_text, print_json, print_text};
use anyhow::{Context, Result, bail};
use clap::{Args, ValueEnum};
use std::io::Read;
use std::path::{Path, PathBuf};
use tb_metrics::cost::PriceTable;
use tb_metrics::{Run, format, html, sbs, show};

/// Output format of `tb agg`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum AggFormat {
    /// Aligned text tables.
    Table,
    /// One JSON object per input file (a JSON array).
    Json,
    /// Markdown tables.
    Markdown,
    /// The reference `tb agg`'s closing lines per file, character for character.
    Reference,
}

/// `tb agg` arguments.
#[derive(Debug, Args)]
pub struct AggArgs {
    /// Trial-record files (JSONL), one per model; `-` reads standard input.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Output format.
    #[arg(
        short = 'f',
        long,
        visible_alias = "output-format",
        value_enum,
        default_value = "table"
    )]
    pub format: AggFormat,
    /// Price table (YAML or JSON): per model `input`, `cached_input`, `output` per million
    /// tokens; see examples/prices.yaml.
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// Print text from the records as it is, control characters and escape sequences
    /// included (by default they are shown as `�`).
    #[arg(long)]
    pub raw: bool,
}

/// `tb report` arguments.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Trial-record files (JSONL), one per model.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The HTML file to write.
    #[arg(short, long, default_value = "report.html")]
    pub output: PathBuf,
    /// Price table (YAML or JSON), for the cost charts.
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// Title of the report.
    #[arg(long, default_value = "ThinkingBox evaluation report")]
    pub title: String,
    /// Also write attempt pages into the report (as `tb view` shows them: conversation,
    /// verdict, diff against golden, rubrics, usage, provenance): the failed ones, or all.
    /// For runs small enough to share as one file.
    #[arg(long, value_enum)]
    pub attempts: Option<ReportAttempts>,
}

/// Which attempts `tb report --attempts` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ReportAttempts {
    /// Attempts that did not pass.
    Failed,
    /// Every attempt.
    All,
}

/// `tb show` arguments.
#[derive(Debug, Args)]
pub struct ShowArgs {
    /// A trial-record file (JSONL).
    pub file: PathBuf,
    /// The task uid (`file.py:function`).
    #[arg(long)]
    pub uid: String,
    /// The repetition (from 0); the first attempt of the uid when omitted.
    #[arg(long)]
    pub repeat: Option<u64>,
    /// Print system prompts and long tool results in full.
    #[arg(long)]
    pub full: bool,
    /// Print text from the records as it is, control characters and escape sequences
    /// included (by default they are shown as `�`).
    #[arg(long)]
    pub raw: bool,
}

/// `tb sbs` arguments.
#[derive(Debug, Args)]
pub struct SbsArgs {
    /// Baseline records (JSONL).
    #[arg(short, long)]
    pub baseline: PathBuf,
    /// Candidate records (JSONL).
    #[arg(short, long)]
    pub candidate: PathBuf,
    /// Lift threshold as a fraction (0.03 = 3 points).
    #[arg(long, default_value_t = 0.03)]
    pub pct_lift: f64,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print text from the records as it is, control characters and escape sequences
    /// included (by default they are shown as `�`).
    #[arg(long)]
    pub raw: bool,
}

fn read_runs(files: &[PathBuf]) -> Result<Vec<Run>> {
    files
        .iter()
        .map(|f| {
            if f.as_os_str() == "-" {
                let mut s = String::new();
                std::io::stdin()
                    .read_to_string(&mut s)
                    .context("reading standard input")?;
                Ok(tb_metrics::parse_run("<stdin>", "stdin", &s)?)
            } else {
                Ok(tb_metrics::read_run(f)?)
            }
        })
        .collect()
}

/// Reads a price table: JSON when the file is `.json` or starts with `{`, else YAML.
pub fn load_prices(path: &Path) -> Result<PriceTable> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let is_json =
        path.extension().is_some_and(|e| e == "json") || text.trim_start().starts_with('{');
    let value = if is_json {
        serde_json::from_str(&text)
            .with_context(|| format!("{}: not valid JSON", path.display()))?
    } else {
        tb_dataset::yaml::load(&text).map_err(|e| {
            anyhow::anyhow!("{}:{}:{}: {}", path.display(), e.line, e.column, e.message)
        })?
    };
    PriceTable::from_value(&value).with_context(|| format!("in {}", path.display()))
}

/// `tb agg`.
pub fn agg(a: &AggArgs) -> Result<()> {
    let runs = read_runs(&a.files)?;
    if let Some(w) = tb_metrics::surface_mix::surface_mix(&runs.iter().collect::<Vec<_>>()) {
        eprint_text(&w);
    }
    let prices = a.prices.as_deref().map(load_prices).transpose()?;
    let reports = tb_metrics::model_reports(&runs, prices.as_ref());
    if reports.iter().all(|r| r.summary.tasks == 0) && a.format != AggFormat::Json {
        println!("No test results to display.");
        return Ok(());
    }
    match a.format {
        AggFormat::Table => print_text(&format::to_text(&reports), a.raw),
        AggFormat::Markdown => print_text(&format::to_markdown(&reports), a.raw),
        AggFormat::Json => print_json(
            &serde_json::to_string_pretty(&format::to_json(&reports))?,
            a.raw,
        ),
        AggFormat::Reference => {
            let mut out = String::new();
            for r in &reports {
                if reports.len() > 1 {
                    // The heading stays one line, raw or not.
                    out.push_str(&std::format!(
                        "== {} ({})\n",
                        tb_core::text::printable_line(&r.model),
                        r.file
                    ));
                }
                out.push_str(&format::reference_lines(&r.summary));
            }
            print_text(&out, a.raw);
        }
    }
    Ok(())
}

/// `tb report`.
pub fn report(a: &ReportArgs) -> Result<()> {
    let runs = read_runs(&a.files)?;
    let prices = a.prices.as_deref().map(load_prices).transpose()?;
    let reports = tb_metrics::model_reports(&runs, prices.as_ref());
    let mut page = html::report_html(&reports, &a.title);
    let mut note = String::new();
    if let Some(which) = a.attempts {
        let set = match which {
            ReportAttempts::Failed => tb_view::AttemptSet::Failed,
            ReportAttempts::All => tb_view::AttemptSet::All,
        };
        let (section, n) = tb_view::report_attempts(runs, prices.as_ref(), set);
        let end = page.rfind("</body>").unwrap_or(page.len());
        page.insert_str(end, &section);
        note = format!(" with {n} attempt page{}", if n == 1 { "" } else { "s" });
    }
    std::fs::write(&a.output, &page).with_context(|| format!("writing {}", a.output.display()))?;
    eprintln!(
        "wrote {}{note} ({:.1} MB)",
        a.output.display(),
        page.len() as f64 / 1e6
    );
    Ok(())
}

/// `tb show`.
pub fn show(a: &ShowArgs) -> Result<()> {
    let run = tb_metrics::read_run(&a.file)?;
    let attempt = show::find_attempt(&run, &a.uid, a.repeat)?;
    print_text(
        &show::render_attempt(attempt, show::ShowOptions { full: a.full }),
        a.raw,
    );
    Ok(())
}

/// `tb sbs`.
pub fn sbs(a: &SbsArgs) -> Result<()> {
    if !a.pct_lift.is_finite() || a.pct_lift.abs() >= 1.0 {
        bail!(
            "--pct-lift must be a fraction between -1 and 1, got {}",
            a.pct_lift
        );
    }
    let base = tb_metrics::read_run(&a.baseline)?;
    let cand = tb_metrics::read_run(&a.candidate)?;
    if let Some(w) = tb_metrics::surface_mix::surface_mix(&[&base, &cand]) {
        eprint_text(&w);
    }
    let r = sbs::compare(&base, &cand, a.pct_lift);
    if a.json {
        print_json(&serde_json::to_string_pretty(&r)?, a.raw);
    } else {
        print_text(
            &sbs::sbs_table(&r, &base.model, &cand.model).to_text(),
            a.raw,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn example_price_table_loads() {
        let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/prices.yaml");
        let t = load_prices(&p).unwrap();
        assert!(!t.models.is_empty());
        assert!(t.models.values().all(|p| p.input >= 0.0 && p.output >= 0.0));
        for m in t.roles.values() {
            assert!(t.models.contains_key(m), "role model {m} has no price");
        }
    }

    #[test]
    fn bad_price_files_are_errors() {
        let dir = std::env::temp_dir().join(format!("tb-prices-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let f = dir.join("p.yaml");
        std::fs::write(&f, "models:\n  m: {input: x, output: 1}\n").unwrap();
        assert!(load_prices(&f).is_err());
        std::fs::write(&f, "models: [\n").unwrap();
        assert!(load_prices(&f).unwrap_err().to_string().contains("p.yaml"));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
