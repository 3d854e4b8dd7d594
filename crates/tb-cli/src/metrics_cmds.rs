//! `tb agg`, `tb report`, `tb show`, `tb sbs`: reading trial records and reporting on them.

use clap::Args;

/// `tb agg` arguments.
#[derive(Debug, Args)]
pub struct AggArgs {
    /// Trial-record files (JSONL), one per model.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
}

/// `tb agg`: not implemented yet.
pub fn agg(_a: &AggArgs) -> anyhow::Result<()> {
    anyhow::bail!("tb agg is not implemented yet")
}
