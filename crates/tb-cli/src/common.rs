//! What several commands share: finding the data root, loading the dataset and the sandbox.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use tb_dataset::Dataset;
use tb_eval::root::LoadedRoot;

/// `--data DIR`, else `THINKINGBOX_DATA`.
/// (`arg` takes the clap field as `&args.data` or `Option<&PathBuf>`.)
pub fn data_root<'a>(arg: impl Into<Option<&'a PathBuf>>) -> Result<PathBuf> {
    arg.into()
        .cloned()
        .or_else(tb_dataset::default_data_root)
        .context(
            "no data root: pass --data DIR (a thinkingbox-data checkout, or a folder in its \
             layout) or set THINKINGBOX_DATA. To get the benchmark:\n  \
             git clone https://github.com/microsoft/thinkingbox-data\n  \
             git -C thinkingbox-data checkout thinkingbox-bench-v1.0\n  \
             export THINKINGBOX_DATA=$PWD/thinkingbox-data",
        )
}

/// Opens the dataset and loads every domain's initial data from the same root.
pub fn open(root: &Path) -> Result<(Dataset, LoadedRoot)> {
    let ds = Dataset::open(root)?;
    let sandbox = LoadedRoot::load(ds.root()).with_context(|| {
        format!(
            "loading the tools' initial data under {}",
            ds.root().display()
        )
    })?;
    Ok((ds, sandbox))
}

/// `--now` parsed, else the default pinned clock.
pub fn clock<'a>(now: impl Into<Option<&'a String>>) -> Result<tb_sandbox::Clock> {
    match now.into() {
        Some(s) => tb_sandbox::Clock::parse(s).map_err(anyhow::Error::msg),
        None => Ok(tb_sandbox::Clock::default()),
    }
}

/// What the model is shown: `--surface` (tool texts and schemas) and `--framework` or
/// `--prompts` (the simulated user's and the judge's prompts). One group, flattened into each
/// command that shows tools or prompts.
#[derive(Debug, Clone, clap::Args)]
pub struct SurfaceArgs {
    /// Tool surface: `reference` (the reference's tool order, descriptions and schemas, read
    /// from the servers' Python sources of a full data checkout), `own` (ours, in the
    /// reference's order and schema structure), `auto` (`reference` when the data root holds
    /// the servers' sources, else `own`), or the path of a surface file (written by
    /// `tb tools --export surface`).
    #[arg(long, default_value = "auto", value_parser = parse_surface)]
    pub surface: tb_eval::surface::SurfaceMode,
    /// A checkout of the reference framework (microsoft/thinkingbox): the simulated user's
    /// and the judge's prompts are read from it (default: our own prompts).
    #[arg(long, env = "THINKINGBOX_FRAMEWORK")]
    pub framework: Option<PathBuf>,
    /// A prompt file (written by `tb tools --export prompts`): the simulated user's and the
    /// judge's prompts, instead of a framework checkout's or ours.
    #[arg(long, value_name = "FILE")]
    pub prompts: Option<PathBuf>,
}

/// `--surface`'s parser.
pub fn parse_surface(s: &str) -> Result<tb_eval::surface::SurfaceMode, String> {
    s.parse()
}

impl SurfaceArgs {
    /// The surface, resolved against the data root; on a checkout of the data repository
    /// (`servers/servers.yaml`), where there is a choice, `auto` says on stderr what it picked.
    pub fn surface(&self, root: &Path) -> Result<tb_eval::surface::Surface> {
        let s = tb_eval::surface::Surface::resolve(&self.surface, root)?;
        if s.picked_because.is_some() && root.join("servers/servers.yaml").is_file() {
            eprintln!("{}", s.describe());
        }
        Ok(s)
    }

    /// The prompts (`--prompts`, else `--framework`, else ours; not both).
    pub fn prompts(&self) -> Result<std::sync::Arc<tb_eval::prompts::Prompts>> {
        let p = match (&self.prompts, &self.framework) {
            (Some(_), Some(f)) => {
                return Err(anyhow::anyhow!(
                    "--prompts and --framework (or THINKINGBOX_FRAMEWORK={}) both name the \
                     prompts; give one",
                    f.display()
                ));
            }
            (Some(file), None) => tb_eval::prompts::Prompts::from_file(file)?,
            (None, f) => tb_eval::prompts::Prompts::resolve(f.as_deref())?,
        };
        Ok(std::sync::Arc::new(p))
    }
}

/// [`open`] with the domains of a tool surface.
pub fn open_with(
    root: &Path,
    surface: &tb_eval::surface::Surface,
) -> Result<(Dataset, LoadedRoot)> {
    let ds = Dataset::open(root)?;
    let sandbox = LoadedRoot::load_with(ds.root(), surface).with_context(|| {
        format!(
            "loading the tools' initial data under {}",
            ds.root().display()
        )
    })?;
    Ok((ds, sandbox))
}
/// External tool servers (`servers.yaml`), shared by the commands that run sessions.
#[derive(Debug, Clone, clap::Args)]
pub struct ServerArgs {
    /// A servers.yaml (the reference's format): tool servers for the tasks' servers that have
    /// no native domain (and, with --prefer external, for those that do). Each attempt starts
    /// its own server per external server.
    #[arg(long, value_name = "FILE")]
    pub servers: Option<PathBuf>,
    /// The interpreter `{python}` stands for in a server's command.
    #[arg(long, value_name = "PATH", default_value = "python3")]
    pub python: String,
    /// Who runs a server that is both native and in --servers: `native` (default) or
    /// `external` (the file's server, e.g. for differential checks).
    #[arg(long, value_name = "SIDE", default_value = "native", value_parser = ["native", "external"])]
    pub prefer: String,
    /// Servers started ahead of demand, per server (kept idle and ready).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub server_pool: usize,
    /// Sessions alive at once per server (a server's `max_concurrency` in the file wins).
    #[arg(long, value_name = "N", default_value_t = 64)]
    pub server_concurrency: usize,
    /// Seconds a server has to start (spawn, MCP initialize, tools/list).
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub server_start_timeout: f64,
    /// Seconds a server's `__reserved__init` may take.
    #[arg(long, value_name = "SECS", default_value_t = 60.0)]
    pub server_init_timeout: f64,
    /// Seconds every other call to a server may take (tools, effects, teardown).
    #[arg(long, value_name = "SECS", default_value_t = 120.0)]
    pub server_call_timeout: f64,
}

impl ServerArgs {
    /// The parsed servers file, if given (its warnings printed).
    pub fn config(&self) -> Result<Option<tb_external::ServersConfig>> {
        let Some(p) = &self.servers else {
            return Ok(None);
        };
        let cfg = tb_external::ServersConfig::load(p)?;
        for (line, w) in &cfg.warnings {
            eprintln!("warning: {}:{line}: {w}", p.display());
        }
        Ok(Some(cfg))
    }

    /// The backend options.
    pub fn options(&self) -> Result<tb_external::ExternalOptions> {
        let secs = |v: f64, flag: &str| {
            if v.is_finite() && v > 0.0 {
                Ok(std::time::Duration::from_secs_f64(v))
            } else {
                anyhow::bail!("{flag} must be a positive number of seconds")
            }
        };
        Ok(tb_external::ExternalOptions {
            start: tb_external::StartOptions {
                python: self.python.clone(),
                start_timeout: secs(self.server_start_timeout, "--server-start-timeout")?,
                init_timeout: secs(self.server_init_timeout, "--server-init-timeout")?,
                call_timeout: secs(self.server_call_timeout, "--server-call-timeout")?,
            },
            prefer: if self.prefer == "external" {
                tb_external::Prefer::External
            } else {
                tb_external::Prefer::Native
            },
            pool: self.server_pool,
            max_concurrency: self.server_concurrency.max(1),
        })
    }

    /// The external backend over `sandbox`, when --servers is given.
    pub fn backend(
        &self,
        sandbox: std::sync::Arc<LoadedRoot>,
        clock: tb_sandbox::Clock,
    ) -> Result<Option<std::sync::Arc<tb_external::ExternalTools>>> {
        let Some(cfg) = self.config()? else {
            if self.prefer == "external" {
                anyhow::bail!("--prefer external needs --servers FILE");
            }
            return Ok(None);
        };
        Ok(Some(std::sync::Arc::new(tb_external::ExternalTools::new(
            cfg,
            sandbox,
            clock,
            self.options()?,
        ))))
    }
}

/// Prints a console command's text: control characters (escape sequences, carriage returns,
/// backspaces) shown as `�` unless `raw` (`--raw`), line breaks and tabs kept.
pub fn print_text(text: &str, raw: bool) {
    if raw {
        print!("{text}");
    } else {
        print!("{}", tb_core::text::printable(text));
    }
}

/// Prints JSON text: unless `raw`, the characters a terminal acts on that JSON leaves raw are
/// written as `\uXXXX` escapes (the value read back is the same).
pub fn print_json(text: &str, raw: bool) {
    if raw {
        println!("{text}");
    } else {
        println!("{}", tb_core::text::printable_json(text));
    }
}

/// A warning or message of a console command on standard error, control characters shown.
pub fn eprint_text(text: &str) {
    eprintln!("{}", tb_core::text::printable(text));
}

/// The published releases, each made on one commit of the data repository: the release's folder
/// under `releases/`, its tag and the tag's commit.
const RELEASE_PINS: [(&str, &str, &str); 2] = [
    (
        "thinkingbox_bench_v1",
        "thinkingbox-bench-v1.0",
        "fcaba4c1a9debec42fda7f15bf29fe6d6b46c431",
    ),
    (
        "dataset_2604_airline_tau_bench",
        "ds-airline-tau-bench-2026-04-v1.0",
        "6ccb2949a1ac5e0579d34691e870c43d6faf3c83",
    ),
];

/// A warning when `list` is a published release's test list and the data checkout at `root` is
/// a git checkout at another commit than the release's tag. Nothing for other lists, and nothing
/// for a folder that is not a git checkout (its commit cannot be told).
pub fn release_pin_warning(root: &Path, list: &Path) -> Option<String> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let (root, list) = (canonical(root), canonical(list));
    let release = list
        .strip_prefix(root.join("releases"))
        .ok()?
        .components()
        .next()?
        .as_os_str()
        .to_str()?
        .to_string();
    let (_, tag, commit) = RELEASE_PINS.iter().find(|(r, _, _)| *r == release)?;
    let head = tb_eval::prompts::git_head(&root);
    if head == "unknown" || head == *commit {
        return None;
    }
    Some(format!(
        "warning: the data checkout {} is at commit {head}, but release `{release}` was published \
         at tag {tag} ({commit}); its results compare with the published ones only there \
         (git -C {} checkout {tag})",
        root.display(),
        root.display()
    ))
}

#[cfg(test)]
mod release_pin_tests {
    use super::release_pin_warning;

    fn checkout(head: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join(".git")).unwrap();
        std::fs::write(d.path().join(".git/HEAD"), format!("{head}\n")).unwrap();
        let rel = d.path().join("releases/thinkingbox_bench_v1");
        std::fs::create_dir_all(&rel).unwrap();
        std::fs::write(rel.join("testlist_thinkingbox_bench_v1.yaml"), "[]\n").unwrap();
        std::fs::write(d.path().join("mine.yaml"), "[]\n").unwrap();
        d
    }

    #[test]
    fn a_release_list_on_another_commit_names_both_commits_and_the_tag() {
        let d = checkout("0123456789abcdef0123456789abcdef01234567");
        let list = d
            .path()
            .join("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml");
        let w = release_pin_warning(d.path(), &list).expect("a warning");
        assert!(
            w.contains("at commit 0123456789abcdef0123456789abcdef01234567"),
            "{w}"
        );
        assert!(
            w.contains("tag thinkingbox-bench-v1.0 (fcaba4c1a9debec42fda7f15bf29fe6d6b46c431)"),
            "{w}"
        );
    }

    #[test]
    fn the_tags_commit_an_unknown_commit_or_another_list_say_nothing() {
        let list = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";
        let at_tag = checkout("fcaba4c1a9debec42fda7f15bf29fe6d6b46c431");
        assert_eq!(
            release_pin_warning(at_tag.path(), &at_tag.path().join(list)),
            None
        );
        let other = checkout("0123456789abcdef0123456789abcdef01234567");
        assert_eq!(
            release_pin_warning(other.path(), &other.path().join("mine.yaml")),
            None
        );
        let no_git = tempfile::tempdir().unwrap();
        let rel = no_git.path().join("releases/thinkingbox_bench_v1");
        std::fs::create_dir_all(&rel).unwrap();
        std::fs::write(rel.join("testlist_thinkingbox_bench_v1.yaml"), "[]\n").unwrap();
        assert_eq!(
            release_pin_warning(no_git.path(), &no_git.path().join(list)),
            None
        );
    }
}
