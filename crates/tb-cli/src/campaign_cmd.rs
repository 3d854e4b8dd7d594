//! `tb campaign`: a sharded campaign on an existing scheduler.
//!
//! `plan` writes a campaign folder: `campaign.json` (name, id, shard count, the `tb infer`
//! options), `testlist.yaml` (the selected tasks), the config copied as `config.yaml`, a
//! Slurm array script or a Kubernetes Indexed Job manifest, and the merge step. `run DIR
//! --shard i` is what each array task runs: `tb infer --shard i/n --resume` into
//! `DIR/shards/shard-<i>.jsonl`, stamped with the campaign, so a killed and requeued task
//! continues by key, and a task run twice is refused while the first holds the output lock
//! and skips everything once it is done. `status` counts done, errored and missing keys per
//! shard from the outputs alone; `merge` merges the shards and verifies the result. See
//! docs/campaigns.md.

use anyhow::{Context, Result, bail};
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tb_campaign::store::Scan;
use tb_campaign::{CampaignFiles, shard_of};

/// `tb campaign` arguments.
#[derive(Debug, Args)]
pub struct CampaignArgs {
    #[command(subcommand)]
    pub command: CampaignCommand,
}

/// The `tb campaign` subcommands.
#[derive(Debug, Subcommand)]
pub enum CampaignCommand {
    /// Write a campaign folder: a Slurm array script or a Kubernetes Indexed Job, and the
    /// merge step. `tb infer` options go after `--`.
    Plan(Box<PlanArgs>),
    /// Run one shard of a campaign (what each array task or Job index runs).
    Run(RunArgs),
    /// Per shard: done, running or stopped, with done, errored and missing keys.
    Status(StatusArgs),
    /// Merge every shard's output into `DIR/merged.jsonl`, then verify it.
    Merge(DirArgs),
}

/// The scheduler to plan for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Scheduler {
    /// A Slurm job array (`sbatch`).
    Slurm,
    /// A Kubernetes Indexed Job (`kubectl apply`).
    K8s,
}

/// `tb campaign plan` arguments.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The scheduler.
    #[arg(long, value_enum)]
    pub scheduler: Scheduler,
    /// Number of shards (array tasks, Job indexes).
    #[arg(long)]
    pub shards: u32,
    /// The campaign folder to write (shared by every shard: a shared file system or volume).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Campaign name (default: the folder's name).
    #[arg(long)]
    pub name: Option<String>,
    /// The `tb` binary the jobs run (default: this one). Slurm only.
    #[arg(long)]
    pub tb: Option<PathBuf>,
    /// Slurm partition.
    #[arg(long)]
    pub partition: Option<String>,
    /// Slurm time limit per array task (e.g. `04:00:00`).
    #[arg(long)]
    pub time: Option<String>,
    /// CPUs per shard (Slurm `--cpus-per-task`, Kubernetes CPU request).
    #[arg(long, default_value_t = 2)]
    pub cpus: u32,
    /// Container image holding `tb` on its PATH. Kubernetes only.
    #[arg(long, default_value = "thinkingbox-rs:latest")]
    pub image: String,
    /// PersistentVolumeClaim holding the data checkout (mounted read-only at /data).
    #[arg(long, default_value = "thinkingbox-data")]
    pub data_claim: String,
    /// PersistentVolumeClaim holding the campaign folder (mounted at /campaign).
    #[arg(long, default_value = "tb-campaign")]
    pub campaign_claim: String,
    /// Secret whose keys become the environment (API keys the config's `${VAR}` name).
    #[arg(long)]
    pub secret: Option<String>,
    /// Job indexes running at once (default: all).
    #[arg(long)]
    pub parallelism: Option<u32>,
    /// Replace a campaign already planned in the folder (its shard outputs must be gone).
    #[arg(long)]
    pub force: bool,
    /// `tb infer` options (after `--`): data, tasks, agent, config, repeat, concurrency, ...
    #[arg(last = true, required = true)]
    pub infer: Vec<String>,
}

/// `tb campaign run` arguments.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The campaign folder.
    pub dir: PathBuf,
    /// The shard, from 0 (`$SLURM_ARRAY_TASK_ID`, `$JOB_COMPLETION_INDEX`).
    #[arg(long)]
    pub shard: u32,
    /// The data root as this machine sees it (default: the one given to `plan`).
    #[arg(long)]
    pub data: Option<PathBuf>,
}

/// `tb campaign status` arguments.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// The campaign folder.
    pub dir: PathBuf,
    /// One JSON object instead of the table.
    #[arg(long)]
    pub json: bool,
}

/// A campaign folder.
#[derive(Debug, Args)]
pub struct DirArgs {
    /// The campaign folder.
    pub dir: PathBuf,
    /// The data root as this machine sees it (default: the one given to `plan`).
    #[arg(long)]
    pub data: Option<PathBuf>,
}

#[derive(Debug, Parser)]
#[command(name = "tb infer")]
struct InferCli {
    #[command(flatten)]
    a: crate::infer_cmd::InferArgs,
}

const MANIFEST: &str = "campaign.json";
const TEST_LIST: &str = "testlist.yaml";
const CONFIG: &str = "config.yaml";

/// Runs `tb campaign`.
pub fn run(a: &CampaignArgs) -> Result<ExitCode> {
    match &a.command {
        CampaignCommand::Plan(p) => plan(p),
        CampaignCommand::Run(r) => run_shard(r),
        CampaignCommand::Status(s) => status(s),
        CampaignCommand::Merge(m) => merge(m),
    }
}

/// The shard output of shard `i` in `dir`.
pub fn shard_output(dir: &Path, i: u32) -> PathBuf {
    dir.join("shards").join(format!("shard-{i}.jsonl"))
}

struct Campaign {
    dir: PathBuf,
    m: Value,
}

impl Campaign {
    fn open(dir: &Path) -> Result<Campaign> {
        let p = dir.join(MANIFEST);
        let text = std::fs::read_to_string(&p)
            .with_context(|| format!("reading {} (not a campaign folder?)", p.display()))?;
        let m: Value =
            serde_json::from_str(&text).with_context(|| format!("{}: not JSON", p.display()))?;
        for k in ["campaign", "id", "shards", "repeat", "infer_args", "data"] {
            if m.get(k).is_none() {
                bail!("{}: no `{k}`", p.display());
            }
        }
        Ok(Campaign {
            dir: dir.to_path_buf(),
            m,
        })
    }
    fn shards(&self) -> u32 {
        // A count beyond u32 is a damaged manifest: read as none.
        self.m["shards"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(0)
    }
    fn repeat(&self) -> u32 {
        self.m["repeat"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
            .unwrap_or(1)
    }
    fn id(&self) -> &str {
        self.m["id"].as_str().unwrap_or("")
    }
    fn stamp(&self) -> Value {
        json!({"name": self.m["campaign"], "id": self.m["id"], "shards": self.m["shards"]})
    }
    fn tasks(&self) -> Result<Vec<String>> {
        crate::verify_cmd::read_test_list(&self.dir.join(TEST_LIST), &None)
    }
    /// Expected keys per shard.
    fn keys(&self) -> Result<Vec<BTreeSet<String>>> {
        let n = self.shards();
        let mut out = vec![BTreeSet::new(); n as usize];
        for r in 0..self.repeat() {
            for t in self.tasks()? {
                let k = tb_core::attempt_key(&t, r);
                out[shard_of(&k, n) as usize].insert(k);
            }
        }
        Ok(out)
    }
}

/// A name fit for a Kubernetes object: lower-case alphanumerics and `-`, at most 50 chars.
fn dns_name(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    out = out.trim_matches('-').to_string();
    out.truncate(50);
    let out = out.trim_end_matches('-').to_string();
    if out.is_empty() {
        "campaign".into()
    } else {
        out
    }
}

fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// A YAML double-quoted scalar holding `s` exactly, on one line: JSON's escapes (which YAML
/// reads as they are), plus the line breaks YAML 1.1 knows and JSON does not escape.
fn yaml_quote(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_default();
    let mut out = String::with_capacity(json.len());
    for c in json.chars() {
        // YAML 1.1 reads these as line breaks (NEL, LS, PS) or refuses them raw (DEL, C1
        // controls, the noncharacters U+FFFE and U+FFFF).
        if matches!(
            c,
            '\u{7f}'..='\u{9f}' | '\u{2028}' | '\u{2029}' | '\u{fffe}' | '\u{ffff}'
        ) {
            let _ = write!(out, "\\u{:04x}", c as u32);
        } else {
            out.push(c);
        }
    }
    out
}

/// The first character of `s` outside `ok`, shown escaped, if any.
fn bad_char(s: &str, ok: impl Fn(char) -> bool) -> Option<String> {
    s.chars()
        .find(|c| !ok(*c))
        .map(|c| c.escape_default().to_string())
}

fn name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || "._-".contains(c)
}

/// A campaign name: letters, digits, `.`, `_`, `-`, at most 100 characters.
fn check_name(name: &str, what: &str) -> Result<()> {
    if name.is_empty() || name.len() > 100 {
        bail!("{what}: a campaign name has 1 to 100 characters");
    }
    if let Some(c) = bad_char(name, name_char) {
        bail!(
            "{what}: `{c}` is not allowed in a campaign name (letters, digits, `.`, `_` and `-` only)"
        );
    }
    Ok(())
}

/// A Slurm partition list: names of letters, digits, `.`, `_`, `-`, separated by commas.
fn check_partition(s: &str) -> Result<()> {
    if s.is_empty()
        || s.len() > 200
        || s.split(',')
            .any(|p| p.is_empty() || !p.chars().all(name_char))
    {
        bail!(
            "--partition `{}`: not a Slurm partition list (names of letters, digits, `.`, `_` and `-`, separated by commas)",
            s.escape_default()
        );
    }
    Ok(())
}

/// A Slurm time limit: `minutes`, `minutes:seconds`, `hours:minutes:seconds`, `days-hours`,
/// `days-hours:minutes`, `days-hours:minutes:seconds`, or `UNLIMITED`/`INFINITE`.
fn check_time(s: &str) -> Result<()> {
    let num = |x: &str| !x.is_empty() && x.len() <= 9 && x.bytes().all(|b| b.is_ascii_digit());
    let ok = if ["unlimited", "infinite"].contains(&s.to_ascii_lowercase().as_str()) {
        true
    } else {
        // `days-` is optional before `hours[:minutes[:seconds]]` (or the minutes forms).
        let (days_ok, rest) = s
            .split_once('-')
            .map_or((true, s), |(days, rest)| (num(days), rest));
        let parts: Vec<&str> = rest.split(':').collect();
        days_ok && parts.len() <= 3 && parts.iter().all(|p| num(p))
    };
    if !ok {
        bail!(
            "--time `{}`: not a Slurm time limit (minutes, minutes:seconds, hours:minutes:seconds, days-hours, days-hours:minutes, days-hours:minutes:seconds, or UNLIMITED)",
            s.escape_default()
        );
    }
    Ok(())
}

/// A Kubernetes object name (DNS subdomain): lower-case letters, digits, `-` and `.`,
/// starting and ending with a letter or digit, at most 253 characters.
fn check_k8s_name(s: &str, what: &str) -> Result<()> {
    let edge = |c: Option<char>| c.is_some_and(|c| c.is_ascii_lowercase() || c.is_ascii_digit());
    let ok = s.len() <= 253
        && edge(s.chars().next())
        && edge(s.chars().last())
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.');
    if !ok {
        bail!(
            "{what} `{}`: not a Kubernetes object name (lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit)",
            s.escape_default()
        );
    }
    Ok(())
}

/// A container image reference: letters, digits and `._-/:@`.
fn check_image(s: &str) -> Result<()> {
    if s.is_empty()
        || s.len() > 500
        || bad_char(s, |c| c.is_ascii_alphanumeric() || "._-/:@".contains(c)).is_some()
    {
        bail!(
            "--image `{}`: not a container image reference (letters, digits and `._-/:@`)",
            s.escape_default()
        );
    }
    Ok(())
}

/// A path written into a script or shown in the plan's instructions: no control characters;
/// for Slurm (it goes unquoted into `#SBATCH --output=`, where `%` is a file-name pattern),
/// only letters, digits and `._-/+,=@~`.
fn check_path(path: &Path, what: &str, slurm: bool) -> Result<()> {
    let Some(s) = path.to_str() else {
        bail!("{what} {}: not valid UTF-8", path.display());
    };
    let bad = if slurm {
        bad_char(s, |c| c.is_ascii_alphanumeric() || "._-/+,=@~".contains(c))
    } else {
        bad_char(s, |c| !c.is_control())
    };
    if let Some(c) = bad {
        bail!(
            "{what} `{}`: `{c}` cannot go into a{} script; use a path of letters, digits and `._-/+,=@~`",
            s.escape_default(),
            if slurm { " Slurm" } else { "" }
        );
    }
    Ok(())
}

/// Every value of the plan that reaches a script or a manifest, checked before anything is
/// written.
fn check_plan_values(p: &PlanArgs) -> Result<()> {
    let slurm = p.scheduler == Scheduler::Slurm;
    if let Some(n) = &p.name {
        check_name(n, "--name")?;
    }
    if let Some(part) = &p.partition {
        check_partition(part)?;
    }
    if let Some(t) = &p.time {
        check_time(t)?;
    }
    check_path(&p.output, "--output", slurm)?;
    if let Some(t) = &p.tb {
        check_path(t, "--tb", false)?;
    }
    if !slurm {
        check_image(&p.image)?;
        check_k8s_name(&p.data_claim, "--data-claim")?;
        check_k8s_name(&p.campaign_claim, "--campaign-claim")?;
        if let Some(secret) = &p.secret {
            check_k8s_name(secret, "--secret")?;
        }
    }
    Ok(())
}

/// Keys whose values are credentials, wherever they are in a config, and (any key) under
/// `headers`.
const SECRET_KEYS: &[&str] = &["api_key", "client_secret", "password", "token"];

/// A `${VAR}` reference and nothing else.
fn is_reference(s: &str) -> bool {
    s.strip_prefix("${")
        .and_then(|r| r.strip_suffix('}'))
        .is_some_and(|v| {
            v.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && v.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// The places (`field`, line) of a config holding a literal credential.
fn literal_secrets(
    v: &Value,
    ptr: &str,
    field: &str,
    secret: bool,
    lines: &std::collections::HashMap<String, usize>,
    out: &mut Vec<(String, usize)>,
) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                let f = if field.is_empty() {
                    k.clone()
                } else {
                    format!("{field}.{k}")
                };
                let s = secret
                    || SECRET_KEYS.contains(&k.as_str())
                    || (k == "headers" && x.is_object());
                let p = format!("{ptr}/{}", k.replace('~', "~0").replace('/', "~1"));
                literal_secrets(x, &p, &f, s, lines, out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                literal_secrets(
                    x,
                    &format!("{ptr}/{i}"),
                    &format!("{field}[{i}]"),
                    secret,
                    lines,
                    out,
                );
            }
        }
        Value::Null => {}
        Value::String(s) if s.is_empty() || is_reference(s) => {}
        _ if secret => out.push((field.to_string(), tb_dataset::keys::line_of(lines, ptr))),
        _ => {}
    }
}

/// Refuses a config that holds a literal key: the campaign folder is copied to every shard,
/// so it gets only `${VAR}` references (the key itself is never shown).
fn check_config_secrets(config: &Path) -> Result<()> {
    let text =
        std::fs::read_to_string(config).with_context(|| format!("reading {}", config.display()))?;
    let mut lines = std::collections::HashMap::new();
    let v = tb_dataset::yaml::load_with_lines(&text, Some(&mut lines)).map_err(|e| {
        anyhow::anyhow!(
            "{}:{}:{}: {}",
            config.display(),
            e.line,
            e.column,
            e.message
        )
    })?;
    let mut found = Vec::new();
    literal_secrets(&v, "", "", false, &lines, &mut found);
    if let Some((field, line)) = found.first() {
        bail!(
            "{}:{line}: `{field}` holds a literal key{}; a campaign folder is shared with every shard and keeps no keys: write it as a reference, e.g. `api_key: ${{OPENAI_API_KEY}}` (or `api_key_env: OPENAI_API_KEY`), and set the variable where the shards run (Kubernetes: --secret)",
            config.display(),
            if found.len() > 1 {
                format!(" (and {} more place(s))", found.len() - 1)
            } else {
                String::new()
            }
        );
    }
    Ok(())
}

fn plan(p: &PlanArgs) -> Result<ExitCode> {
    if p.shards == 0 {
        bail!("--shards must be at least 1");
    }
    check_plan_values(p)?;
    let parsed = InferCli::try_parse_from(
        std::iter::once("tb infer".to_string()).chain(p.infer.iter().cloned()),
    )
    .map_err(|e| anyhow::anyhow!("the `tb infer` options after `--`: {e}"))?
    .a;
    for (set, opt) in [
        (parsed.output.is_some(), "--output"),
        (parsed.errors_output.is_some(), "--errors-output"),
        (parsed.shard.is_some(), "--shard"),
        (parsed.resume, "--resume"),
        (parsed.overwrite, "--overwrite"),
    ] {
        if set {
            bail!("{opt} is set by the campaign: leave it out of the `tb infer` options");
        }
    }
    let dir = &p.output;
    if dir.join(MANIFEST).exists() && !p.force {
        bail!(
            "{} already holds a campaign: pass --force to replace it",
            dir.display()
        );
    }
    if p.force && dir.join("shards").is_dir() {
        let any = std::fs::read_dir(dir.join("shards"))?.next().is_some();
        if any {
            bail!(
                "{} has shard outputs: remove them before planning a new campaign there",
                dir.join("shards").display()
            );
        }
    }
    if let Some(c) = &parsed.config {
        check_config_secrets(c)?;
    }
    let root = crate::common::data_root(&parsed.data)?;
    let root = std::fs::canonicalize(&root).unwrap_or(root);
    let ds = tb_dataset::Dataset::open(&root)?;
    let tasks = crate::infer_cmd::select_tasks(&parsed, &ds)?;
    std::fs::create_dir_all(dir.join("shards"))
        .with_context(|| format!("creating {}", dir.display()))?;
    std::fs::create_dir_all(dir.join("logs"))?;
    let dir = std::fs::canonicalize(dir)?;
    check_path(&dir, "the campaign folder", p.scheduler == Scheduler::Slurm)?;
    let name = if let Some(n) = &p.name {
        n.clone()
    } else {
        let n = dir
            .file_name()
            .map_or_else(|| "campaign".into(), |n| n.to_string_lossy().into_owned());
        check_name(
            &n,
            "the campaign folder's name (the campaign's name by default)",
        )
        .map_err(|e| anyhow::anyhow!("{e}; pass --name"))?;
        n
    };
    // The options each shard passes to `tb infer`: everything but the data root, the task
    // selection (now `testlist.yaml`) and the config (now `config.yaml`).
    let mut rest = Vec::new();
    let mut it = p.infer.iter().peekable();
    let with_value = [
        "--data",
        "--test-list",
        "-n",
        "--name",
        "-i",
        "--inputs",
        "-c",
        "--config",
    ];
    while let Some(arg) = it.next() {
        let flag = arg.split('=').next().unwrap_or(arg);
        if with_value.contains(&flag) {
            if !arg.contains('=') {
                it.next();
            }
            continue;
        }
        rest.push(arg.clone());
    }
    let list: String = tasks
        .iter()
        .map(|t| format!("- {}\n", yaml_quote(&t.uid)))
        .collect();
    std::fs::write(dir.join(TEST_LIST), list)?;
    let config = match &parsed.config {
        Some(c) => {
            std::fs::copy(c, dir.join(CONFIG))
                .with_context(|| format!("copying {}", c.display()))?;
            Some(CONFIG)
        }
        None => None,
    };
    let created = chrono::Utc::now().to_rfc3339();
    let id = {
        use std::hash::{BuildHasher, Hasher};
        let seed = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        let text = format!(
            "{name}\n{created}\n{seed}\n{}\n{:?}",
            dir.display(),
            p.infer
        );
        let h = tb_campaign::provenance::json_hash(&json!(text));
        let hex = h.rsplit(':').next().unwrap_or(&h);
        hex[..16.min(hex.len())].to_string()
    };
    let tb_bin = match &p.tb {
        Some(t) => t.clone(),
        None => std::env::current_exe()?,
    };
    let manifest = json!({
        "campaign": name,
        "id": id,
        "created": created,
        "scheduler": match p.scheduler { Scheduler::Slurm => "slurm", Scheduler::K8s => "k8s" },
        "shards": p.shards,
        "repeat": parsed.repeat,
        "tasks": tasks.len(),
        "data": root.display().to_string(),
        "config": config,
        "infer_args": rest,
        "tb": tb_bin.display().to_string(),
    });
    tb_campaign::store::write_json_atomic(&dir.join(MANIFEST), &manifest)?;
    let c = Campaign {
        dir: dir.clone(),
        m: manifest,
    };
    let per_shard: Vec<usize> = c.keys()?.iter().map(BTreeSet::len).collect();
    let tb_q = sh_quote(&tb_bin.display().to_string());
    let dir_q = sh_quote(&dir.display().to_string());
    let mut next = String::new();
    match p.scheduler {
        Scheduler::Slurm => {
            let (s, m) = slurm_scripts(p, &name, &id, &dir, &tb_q, &dir_q);
            write_script(&dir.join("slurm.sbatch"), &s)?;
            write_script(&dir.join("merge.sh"), &m)?;
            let _ = writeln!(
                next,
                "submit:   JOB=$(sbatch --parsable {dir_q}/slurm.sbatch)"
            );
            let _ = writeln!(next, "watch:    {tb_q} campaign status {dir_q}");
            let _ = writeln!(
                next,
                "merge:    sbatch --dependency=afterok:$JOB {dir_q}/merge.sh   (or run it when the array is done)"
            );
            let _ = writeln!(
                next,
                "a killed or failed task: scontrol requeue $JOB_<i> (it resumes by key)"
            );
        }
        Scheduler::K8s => {
            let job = k8s_manifest(p, &name, &id, false);
            std::fs::write(dir.join("k8s-job.yaml"), job)?;
            std::fs::write(
                dir.join("k8s-merge-job.yaml"),
                k8s_manifest(p, &name, &id, true),
            )?;
            let _ = writeln!(
                next,
                "copy {} onto the volume of claim {:?} (its root is /campaign in the pods),",
                dir.display(),
                p.campaign_claim
            );
            let _ = writeln!(
                next,
                "with the data checkout on claim {:?} (/data).",
                p.data_claim
            );
            let _ = writeln!(next, "submit:   kubectl apply -f {dir_q}/k8s-job.yaml");
            let _ = writeln!(
                next,
                "watch:    tb campaign status <the campaign folder>   (or kubectl get job tb-{})",
                dns_name(&name)
            );
            let _ = writeln!(
                next,
                "merge:    kubectl apply -f {dir_q}/k8s-merge-job.yaml   (when the Job is complete)"
            );
        }
    }
    println!(
        "campaign {name} ({id}): {} task(s) x {} = {} key(s) in {} shard(s) ({}) in {}",
        tasks.len(),
        parsed.repeat,
        per_shard.iter().sum::<usize>(),
        p.shards,
        per_shard
            .iter()
            .map(std::string::ToString::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        dir.display()
    );
    print!("{next}");
    Ok(ExitCode::SUCCESS)
}

/// `slurm.sbatch` and `merge.sh`, from values [`check_plan_values`] has checked (`tb_q` and
/// `dir_q` shell-quoted).
fn slurm_scripts(
    p: &PlanArgs,
    name: &str,
    id: &str,
    dir: &Path,
    tb_q: &str,
    dir_q: &str,
) -> (String, String) {
    let mut s = String::new();
    let _ = writeln!(s, "#!/bin/bash");
    let _ = writeln!(
        s,
        "# Campaign {name} ({id}): {} shard(s), written by `tb campaign plan`.",
        p.shards
    );
    let _ = writeln!(
        s,
        "# Array task i runs shard i of the keys; a requeued task resumes by key."
    );
    let _ = writeln!(s, "#SBATCH --job-name=tb-{}", dns_name(name));
    let _ = writeln!(s, "#SBATCH --array=0-{}", p.shards - 1);
    let _ = writeln!(s, "#SBATCH --cpus-per-task={}", p.cpus);
    let _ = writeln!(s, "#SBATCH --requeue");
    let _ = writeln!(s, "#SBATCH --open-mode=append");
    let _ = writeln!(s, "#SBATCH --output={}/logs/shard-%a.log", dir.display());
    if let Some(part) = &p.partition {
        let _ = writeln!(s, "#SBATCH --partition={part}");
    }
    if let Some(t) = &p.time {
        let _ = writeln!(s, "#SBATCH --time={t}");
    }
    let _ = writeln!(s, "set -euo pipefail");
    let _ = writeln!(
        s,
        "exec {tb_q} campaign run {dir_q} --shard \"$SLURM_ARRAY_TASK_ID\""
    );
    let mut m = String::new();
    let _ = writeln!(m, "#!/bin/bash");
    let _ = writeln!(
        m,
        "# Merge and verify campaign {name} ({id}); run it (or `sbatch --dependency=afterok:JOBID` it) when the array is done."
    );
    let _ = writeln!(m, "#SBATCH --job-name=tb-{}-merge", dns_name(name));
    let _ = writeln!(m, "#SBATCH --output={}/logs/merge.log", dir.display());
    let _ = writeln!(m, "set -euo pipefail");
    let _ = writeln!(m, "exec {tb_q} campaign merge {dir_q}");
    (s, m)
}

fn write_script(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

/// The Indexed Job (or, with `merge`, the one-pod merge Job) as YAML. Strings are written as
/// one-line double-quoted scalars ([`yaml_quote`]), after [`check_plan_values`].
fn k8s_manifest(p: &PlanArgs, name: &str, id: &str, merge: bool) -> String {
    let q = yaml_quote;
    let job = if merge {
        format!("tb-{}-merge", dns_name(name))
    } else {
        format!("tb-{}", dns_name(name))
    };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# Campaign {name} ({id}), written by `tb campaign plan`. {}",
        if merge {
            "Apply when the shard Job is complete: merges the shards and verifies the result."
        } else {
            "Index i runs shard i; a retried pod resumes by key."
        }
    );
    let _ = writeln!(s, "apiVersion: batch/v1");
    let _ = writeln!(s, "kind: Job");
    let _ = writeln!(s, "metadata:");
    let _ = writeln!(s, "  name: {job}");
    let _ = writeln!(s, "  labels:");
    let _ = writeln!(s, "    app.kubernetes.io/name: thinkingbox-rs");
    let _ = writeln!(s, "    thinkingbox-rs/campaign: {}", q(id));
    let _ = writeln!(s, "spec:");
    if merge {
        let _ = writeln!(s, "  completions: 1");
        let _ = writeln!(s, "  backoffLimit: 2");
    } else {
        let _ = writeln!(s, "  completionMode: Indexed");
        let _ = writeln!(s, "  completions: {}", p.shards);
        let _ = writeln!(s, "  parallelism: {}", p.parallelism.unwrap_or(p.shards));
        let _ = writeln!(s, "  backoffLimit: {}", 3 * p.shards);
    }
    let _ = writeln!(s, "  template:");
    let _ = writeln!(s, "    metadata:");
    let _ = writeln!(s, "      labels:");
    let _ = writeln!(s, "        thinkingbox-rs/campaign: {}", q(id));
    let _ = writeln!(s, "    spec:");
    let _ = writeln!(s, "      restartPolicy: Never");
    let _ = writeln!(s, "      containers:");
    let _ = writeln!(
        s,
        "        - name: {}",
        if merge { "merge" } else { "shard" }
    );
    let _ = writeln!(s, "          image: {}", q(&p.image));
    if merge {
        let _ = writeln!(
            s,
            "          args: [\"tb\", \"campaign\", \"merge\", \"/campaign\", \"--data\", \"/data\"]"
        );
    } else {
        let _ = writeln!(
            s,
            "          args: [\"tb\", \"campaign\", \"run\", \"/campaign\", \"--data\", \"/data\", \"--shard\", \"$(JOB_COMPLETION_INDEX)\"]"
        );
        let _ = writeln!(s, "          env:");
        let _ = writeln!(s, "            - name: JOB_COMPLETION_INDEX");
        let _ = writeln!(s, "              valueFrom:");
        let _ = writeln!(s, "                fieldRef:");
        let _ = writeln!(
            s,
            "                  fieldPath: \"metadata.annotations['batch.kubernetes.io/job-completion-index']\""
        );
    }
    if let Some(secret) = &p.secret {
        let _ = writeln!(s, "          envFrom:");
        let _ = writeln!(s, "            - secretRef:");
        let _ = writeln!(s, "                name: {}", q(secret));
    }
    let _ = writeln!(s, "          resources:");
    let _ = writeln!(s, "            requests:");
    let _ = writeln!(s, "              cpu: \"{}\"", p.cpus);
    let _ = writeln!(s, "          volumeMounts:");
    let _ = writeln!(s, "            - name: data");
    let _ = writeln!(s, "              mountPath: /data");
    let _ = writeln!(s, "              readOnly: true");
    let _ = writeln!(s, "            - name: campaign");
    let _ = writeln!(s, "              mountPath: /campaign");
    let _ = writeln!(s, "      volumes:");
    let _ = writeln!(s, "        - name: data");
    let _ = writeln!(s, "          persistentVolumeClaim:");
    let _ = writeln!(s, "            claimName: {}", q(&p.data_claim));
    let _ = writeln!(s, "            readOnly: true");
    let _ = writeln!(s, "        - name: campaign");
    let _ = writeln!(s, "          persistentVolumeClaim:");
    let _ = writeln!(s, "            claimName: {}", q(&p.campaign_claim));
    s
}

/// The campaign ids of the records in `path` (a missing file has none).
pub(crate) fn campaign_ids(path: &Path) -> Result<BTreeSet<Option<String>>> {
    let mut out = BTreeSet::new();
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e).with_context(|| format!("reading {}", path.display())),
    };
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        out.insert(
            v.pointer("/provenance/campaign/id")
                .and_then(Value::as_str)
                .map(str::to_string),
        );
    }
    Ok(out)
}

fn run_shard(r: &RunArgs) -> Result<ExitCode> {
    let c = Campaign::open(&r.dir)?;
    let n = c.shards();
    if r.shard >= n {
        bail!(
            "--shard {}: campaign {} has shards 0 to {}",
            r.shard,
            c.id(),
            n.saturating_sub(1)
        );
    }
    let out = shard_output(&c.dir, r.shard);
    let files = CampaignFiles::new(&out, None);
    for f in [&files.output, &files.errors] {
        for id in campaign_ids(f)? {
            if id.as_deref() != Some(c.id()) {
                bail!(
                    "{} holds records of another campaign ({}), not of {}",
                    f.display(),
                    id.as_deref().unwrap_or("none"),
                    c.id()
                );
            }
        }
    }
    let data = r
        .data
        .clone()
        .unwrap_or_else(|| PathBuf::from(c.m["data"].as_str().unwrap_or_default()));
    let mut argv: Vec<String> = vec![
        "tb infer".into(),
        "--data".into(),
        data.display().to_string(),
        "--test-list".into(),
        c.dir.join(TEST_LIST).display().to_string(),
    ];
    if let Some(cfg) = c.m["config"].as_str() {
        argv.push("--config".into());
        argv.push(c.dir.join(cfg).display().to_string());
    }
    argv.extend(
        c.m["infer_args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string)),
    );
    argv.extend([
        "--output".into(),
        out.display().to_string(),
        "--shard".into(),
        format!("{}/{n}", r.shard),
        "--resume".into(),
    ]);
    let mut a = InferCli::try_parse_from(argv)
        .map_err(|e| anyhow::anyhow!("{}: infer_args: {e}", c.dir.join(MANIFEST).display()))?
        .a;
    a.campaign = Some(c.stamp());
    eprintln!(
        "campaign {} ({}): shard {}/{n} into {}",
        c.m["campaign"].as_str().unwrap_or(""),
        c.id(),
        r.shard,
        out.display()
    );
    crate::infer_cmd::run(&a)
}

/// Is someone writing `path` (holding its lock)?
fn locked(path: &Path) -> bool {
    let Ok(f) = std::fs::OpenOptions::new().read(true).open(path) else {
        return false;
    };
    matches!(f.try_lock(), Err(std::fs::TryLockError::WouldBlock))
}

fn status(s: &StatusArgs) -> Result<ExitCode> {
    let c = Campaign::open(&s.dir)?;
    let keys = c.keys()?;
    let mut rows = Vec::new();
    let mut all_done = true;
    for (i, expected) in keys.iter().enumerate() {
        let files = CampaignFiles::new(&shard_output(&c.dir, u32::try_from(i)?), None);
        let started = files.output.exists();
        let out = Scan::read(&files.output)?;
        let errs = Scan::read(&files.errors)?;
        let mut done = BTreeSet::new();
        let mut dup = 0usize;
        for r in out.records.iter().filter(|r| r.outcome.is_verdict()) {
            if let Some(k) = &r.key
                && expected.contains(k)
                && !done.insert(k.clone())
            {
                dup += 1;
            }
        }
        let errored: BTreeSet<&String> = errs
            .records
            .iter()
            .chain(out.records.iter().filter(|r| !r.outcome.is_verdict()))
            .filter_map(|r| r.key.as_ref())
            .filter(|k| expected.contains(*k) && !done.contains(*k))
            .collect();
        let missing = expected.len() - done.len() - errored.len();
        let running = locked(&files.output);
        let state = if running {
            "running"
        } else if !started {
            "not started"
        } else if done.len() == expected.len() {
            "done"
        } else {
            "stopped"
        };
        if state != "done" || dup > 0 {
            all_done = false;
        }
        rows.push(json!({
            "shard": i, "state": state, "keys": expected.len(), "done": done.len(),
            "errors": errored.len(), "missing": missing, "duplicated": dup,
            "unreadable": out.corrupt.len() + usize::from(out.torn_tail.is_some()),
        }));
    }
    if s.json {
        println!(
            "{}",
            json!({"campaign": c.m["campaign"], "id": c.id(), "shards": rows, "complete": all_done})
        );
    } else {
        println!(
            "campaign {} ({}): {} shard(s)",
            c.m["campaign"].as_str().unwrap_or(""),
            c.id(),
            keys.len()
        );
        println!(
            "{:>5}  {:<11} {:>6} {:>6} {:>6} {:>7}",
            "shard", "state", "keys", "done", "errors", "missing"
        );
        for r in &rows {
            let n = |k: &str| r[k].as_u64().unwrap_or(0);
            println!(
                "{:>5}  {:<11} {:>6} {:>6} {:>6} {:>7}{}",
                n("shard"),
                r["state"].as_str().unwrap_or(""),
                n("keys"),
                n("done"),
                n("errors"),
                n("missing"),
                if r["duplicated"] != json!(0) || r["unreadable"] != json!(0) {
                    format!(
                        "   duplicated {}, unreadable {}",
                        r["duplicated"], r["unreadable"]
                    )
                } else {
                    String::new()
                }
            );
        }
    }
    Ok(if all_done {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn merge(m: &DirArgs) -> Result<ExitCode> {
    let c = Campaign::open(&m.dir)?;
    let inputs: Vec<PathBuf> = (0..c.shards()).map(|i| shard_output(&c.dir, i)).collect();
    let absent: Vec<String> = inputs
        .iter()
        .filter(|p| !p.exists())
        .map(|p| p.display().to_string())
        .collect();
    if !absent.is_empty() {
        bail!(
            "shard output(s) not written yet: {} (see `tb campaign status`)",
            absent.join(", ")
        );
    }
    for p in &inputs {
        for id in campaign_ids(p)? {
            if id.as_deref() != Some(c.id()) {
                bail!(
                    "{} holds records of another campaign ({}), not of {}",
                    p.display(),
                    id.as_deref().unwrap_or("none"),
                    c.id()
                );
            }
        }
    }
    let merged = c.dir.join("merged.jsonl");
    let code = crate::merge_cmd::run(&crate::merge_cmd::MergeArgs {
        inputs,
        output: merged.clone(),
        errors_output: None,
        overwrite: true,
    })?;
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    let data = m
        .data
        .clone()
        .or_else(|| c.m["data"].as_str().map(PathBuf::from));
    crate::verify_cmd::run(&crate::verify_cmd::VerifyArgs {
        output: merged,
        test_list: c.dir.join(TEST_LIST),
        repeat: c.repeat(),
        errors_output: None,
        data,
        show: 20,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_quotes() {
        assert_eq!(dns_name("My Campaign_v1!"), "my-campaign-v1");
        assert_eq!(dns_name("***"), "campaign");
        assert_eq!(sh_quote("/a/b-c.d"), "/a/b-c.d");
        assert_eq!(sh_quote("a b'c"), "'a b'\\''c'");
    }

    #[test]
    fn slurm_times_and_partitions() {
        for t in [
            "30",
            "30:00",
            "04:00:00",
            "2-0",
            "2-12",
            "2-12:30",
            "2-12:30:00",
            "UNLIMITED",
            "infinite",
        ] {
            assert!(check_time(t).is_ok(), "{t}");
        }
        for t in [
            "",
            "1:2:3:4",
            "a",
            "1-",
            "-1",
            "1-2-3",
            "04:00:00\n#SBATCH --x",
            "1 h",
            "$(id)",
        ] {
            assert!(check_time(t).is_err(), "{t:?}");
        }
        for p in ["gpu", "gpu,cpu-long", "a.b_c"] {
            assert!(check_partition(p).is_ok(), "{p}");
        }
        for p in ["", "gpu,", "gpu\nid", "a b", "$(id)", "a'b"] {
            assert!(check_partition(p).is_err(), "{p:?}");
        }
    }

    #[test]
    fn literal_keys_are_found_and_references_are_not() {
        let v = serde_json::json!({
            "agent_model": {"credential": {"type": "api-key", "api_key": "sk-1"}},
            "judge_model": {"api_key": "${JUDGE_KEY}", "headers": {"x-org": "org-1", "auth": "${H}"}},
            "user_model": {"api_key_env": "USER_KEY", "token": null},
        });
        let mut found = Vec::new();
        literal_secrets(
            &v,
            "",
            "",
            false,
            &std::collections::HashMap::new(),
            &mut found,
        );
        let fields: Vec<&str> = found.iter().map(|(f, _)| f.as_str()).collect();
        assert_eq!(
            fields,
            [
                "agent_model.credential.api_key",
                "judge_model.headers.x-org"
            ]
        );
        assert!(is_reference("${A_1}"));
        assert!(!is_reference("${A}x") && !is_reference("x${A}") && !is_reference("${1A}"));
    }

    mod prop {
        use super::super::*;
        use proptest::prelude::*;

        /// Text built from safe pieces and hostile ones: line breaks, quotes, command
        /// substitution, YAML document markers, comment and pattern characters.
        fn hostile() -> impl Strategy<Value = String> {
            let pieces = prop::sample::select(vec![
                "a",
                "Z9",
                ".",
                "_",
                "-",
                "gpu",
                "01",
                ":",
                ",",
                "/",
                "\n",
                "\r",
                "'",
                "\"",
                "$(id)",
                "`id`",
                "\n---\n",
                "--- ",
                " ",
                "%",
                "#",
                "\u{85}",
                "\u{2028}",
                "\u{7f}",
                "\t",
                "\\",
                "{",
                "}",
                "\u{1b}]0;x\u{7}",
            ]);
            prop::collection::vec(pieces, 0..6).prop_map(|v| v.concat())
        }

        /// A valid value (four times in five) or hostile text, so that whole plans are
        /// accepted often enough to check what they write.
        fn or_hostile(valid: &'static str) -> impl Strategy<Value = String> {
            prop_oneof![4 => valid.prop_map(|s| s), 1 => hostile()]
        }

        fn plan_args(
            name: String,
            partition: String,
            time: String,
            image: String,
            claim: String,
            secret: String,
            dir: String,
        ) -> PlanArgs {
            PlanArgs {
                scheduler: Scheduler::Slurm,
                shards: 3,
                output: PathBuf::from(format!("/c/{dir}")),
                name: Some(name),
                tb: None,
                partition: Some(partition),
                time: Some(time),
                cpus: 2,
                image,
                data_claim: claim.clone(),
                campaign_claim: claim,
                secret: Some(secret),
                parallelism: None,
                force: false,
                infer: vec![],
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(512))]

            /// Whatever each field holds, a plan either refuses it or writes scripts and
            /// manifests in which every value stays on its own line, as it was given.
            #[test]
            fn every_field_is_refused_or_kept_in_its_place(
                name in or_hostile("[A-Za-z0-9._-]{1,20}"),
                partition in or_hostile("[a-z]{1,5}(,[a-z0-9_]{1,5}){0,2}"),
                time in or_hostile("(30|04:00:00|2-12:30|UNLIMITED|[0-9]{1,3}:[0-9]{2})"),
                image in or_hostile("[a-z]{1,8}(/[a-z]{1,8})?(:[a-z0-9.]{1,5})?"),
                claim in or_hostile("[a-z0-9]([a-z0-9.-]{0,10}[a-z0-9])?"),
                secret in or_hostile("[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?"),
                dir in or_hostile("[A-Za-z0-9._-]{1,10}"),
            ) {
                let mut p = plan_args(name.clone(), partition.clone(), time.clone(), image.clone(),
                    claim.clone(), secret.clone(), dir.clone());
                for scheduler in [Scheduler::Slurm, Scheduler::K8s] {
                    p.scheduler = scheduler;
                    if check_plan_values(&p).is_err() {
                        continue;
                    }
                    let checked = if scheduler == Scheduler::Slurm {
                        vec![&name, &partition, &time, &dir]
                    } else {
                        vec![&name, &partition, &time, &image, &claim, &secret]
                    };
                    for v in checked {
                        prop_assert!(!v.contains(['\n', '\r', '\'', '"', '$', '`', ' ', '#', '%', '\u{85}', '\u{2028}']), "{:?}", v);
                    }
                    match scheduler {
                        Scheduler::Slurm => {
                            let dir_q = sh_quote(&p.output.display().to_string());
                            let (s, m) = slurm_scripts(&p, &name, "0123", &p.output, "tb", &dir_q);
                            prop_assert_eq!(s.lines().count(), 13);
                            prop_assert_eq!(m.lines().count(), 6);
                            let expected_partition = format!("#SBATCH --partition={partition}");
                            let expected_time = format!("#SBATCH --time={time}");
                            prop_assert!(s.lines().any(|l| l == expected_partition));
                            prop_assert!(s.lines().any(|l| l == expected_time));
                        }
                        Scheduler::K8s => {
                            let y = k8s_manifest(&p, &name, "0123", false);
                            let v = tb_dataset::yaml::load(&y).expect("one YAML document");
                            let c = &v["spec"]["template"]["spec"]["containers"][0];
                            prop_assert_eq!(c["image"].as_str(), Some(image.as_str()));
                            prop_assert_eq!(c["envFrom"][0]["secretRef"]["name"].as_str(), Some(secret.as_str()));
                            let vols = &v["spec"]["template"]["spec"]["volumes"];
                            prop_assert_eq!(vols[0]["persistentVolumeClaim"]["claimName"].as_str(), Some(claim.as_str()));
                            prop_assert!(y.lines().all(|l| !l.starts_with("---")));
                        }
                    }
                }
            }

            /// Any text, quoted for YAML, is read back as that text, from one line.
            #[test]
            fn yaml_quoting_round_trips(s in any::<String>(), h in hostile()) {
                for s in [s, h] {
                    let q = yaml_quote(&s);
                    let breaks = ['\n', '\r', '\u{85}', '\u{2028}', '\u{2029}'];
                    prop_assert!(!q.contains(breaks), "{:?}", q);
                    prop_assert_eq!(tb_dataset::yaml::load(&q), Ok(Value::String(s)));
                }
            }
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(64))]

            /// Any text without NUL, shell-quoted, is one word with that text for bash.
            #[test]
            fn shell_quoting_round_trips_through_bash(s in "[^\u{0}]{0,12}", h in hostile()) {
                for s in [s, h] {
                    let out = std::process::Command::new("bash")
                        .arg("-c")
                        .arg(format!("printf %s {}", sh_quote(&s)))
                        .output()
                        .expect("bash runs");
                    prop_assert_eq!(String::from_utf8_lossy(&out.stdout), s);
                }
            }
        }
    }
}
