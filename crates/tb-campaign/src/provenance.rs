//! Provenance of a campaign: what a result depends on, as hashes anyone can recompute.
//!
//! - the **bundle hash**: sha256 over every dataset file the run read (test list, test-case
//!   files, scenarios, agent YAML) and every initial-data file the tools load, in sorted
//!   path order; each file contributes its path (relative to the data root, `/`-separated),
//!   a NUL, its length as 8 big-endian bytes and its bytes;
//! - the **config hash**: sha256 of the run settings that decide outcomes (the config with
//!   secrets removed, the agent, the clock, the budgets) as canonical JSON (object keys
//!   sorted, no spaces);
//! - the **test-list hash**: sha256 of the task ids in run order, one per line;
//! - git commits of the data root (when it is inside a checkout).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Every file a run over `ds` depends on: the dataset files read so far
/// ([`tb_dataset::Dataset::loaded_files`]) and each domain's initial-data files under the
/// data root, sorted and deduplicated.
pub fn bundle_files(ds: &tb_dataset::Dataset) -> Vec<PathBuf> {
    let mut files = ds.loaded_files();
    let toolslib = tb_domains::toolslib(ds.root());
    if let Ok(domains) = tb_domains::all() {
        for d in domains {
            for t in d.layout().tables() {
                let (dir, stem) = t.file.rsplit_once('/').unwrap_or(("", &t.file));
                let p = toolslib
                    .join(dir)
                    .join("initial_data")
                    .join(format!("{stem}.json"));
                if p.is_file() {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The name a bundle file is hashed under: its path relative to `root` with `/`
/// separators, or `external/<file name>` for a file outside the root (a test list kept
/// elsewhere), so that the hash does not depend on where the data is mounted.
pub fn bundle_name(root: &Path, file: &Path) -> String {
    match file.strip_prefix(root) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => format!(
            "external/{}",
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    }
}

/// The bundle hash of `files` under `root` (see the module docs), `sha256:<hex>`.
pub fn bundle_hash(root: &Path, files: &[PathBuf]) -> std::io::Result<String> {
    let mut named: Vec<(String, &PathBuf)> =
        files.iter().map(|f| (bundle_name(root, f), f)).collect();
    named.sort();
    let mut h = Sha256::new();
    for (name, path) in named {
        let bytes = std::fs::read(path)?;
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(&bytes);
    }
    Ok(format!("sha256:{}", tb_core::digest::hex(&h.finalize())))
}

/// `v` as canonical JSON: object keys sorted at every level, no whitespace.
pub fn canonical_json(v: &Value) -> String {
    tb_sandbox::pyjson::sort_keys(v).to_string()
}

/// sha256 of the canonical JSON of `v`, `sha256:<hex>`.
pub fn json_hash(v: &Value) -> String {
    format!(
        "sha256:{}",
        tb_core::sha256_hex(canonical_json(v).as_bytes())
    )
}

/// sha256 of the task ids, one per line, `sha256:<hex>`.
pub fn test_list_hash<S: AsRef<str>>(ids: &[S]) -> String {
    let mut h = Sha256::new();
    for id in ids {
        h.update(id.as_ref().as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{}", tb_core::digest::hex(&h.finalize()))
}

/// The git state of the checkout holding `dir`, if any: `{commit, dirty, toplevel}`
/// (`dirty` when files under `dir` differ from the commit). None when `dir` is not in a
/// git work tree or `git` is not installed.
pub fn git_state(dir: &Path) -> Option<Value> {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"])?;
    let toplevel = git(&["rev-parse", "--show-toplevel"]).unwrap_or_default();
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no", "--", "."]).map(|s| !s.is_empty());
    Some(serde_json::json!({"commit": commit, "dirty": dirty, "toplevel": toplevel}))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 0, "c": 1}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"c": 1, "d": 0}]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"c":1,"d":0}]},"b":1}"#
        );
        assert_eq!(json_hash(&a), json_hash(&b));
        assert_ne!(json_hash(&a), json_hash(&json!({"b": 2})));
    }

    #[test]
    fn bundle_hash_depends_on_names_and_bytes_not_on_the_mount_point() {
        let d1 = tempfile::tempdir().unwrap();
        let d2 = tempfile::tempdir().unwrap();
        for d in [&d1, &d2] {
            std::fs::create_dir_all(d.path().join("dataset")).unwrap();
            std::fs::write(d.path().join("dataset/a.yaml"), "a: 1\n").unwrap();
            std::fs::write(d.path().join("b.json"), "[]").unwrap();
        }
        let files =
            |d: &tempfile::TempDir| vec![d.path().join("b.json"), d.path().join("dataset/a.yaml")];
        let h1 = bundle_hash(d1.path(), &files(&d1)).unwrap();
        assert_eq!(h1, bundle_hash(d2.path(), &files(&d2)).unwrap());
        std::fs::write(d2.path().join("b.json"), "[1]").unwrap();
        assert_ne!(h1, bundle_hash(d2.path(), &files(&d2)).unwrap());
        assert_eq!(
            bundle_name(d1.path(), &d1.path().join("dataset/a.yaml")),
            "dataset/a.yaml"
        );
        assert_eq!(
            bundle_name(d1.path(), Path::new("/elsewhere/list.yaml")),
            "external/list.yaml"
        );
        assert!(bundle_hash(d1.path(), &[d1.path().join("missing")]).is_err());
    }

    #[test]
    fn test_list_hash_is_order_sensitive() {
        assert_ne!(test_list_hash(&["a", "b"]), test_list_hash(&["b", "a"]));
        assert_eq!(test_list_hash(&["a", "b"]), test_list_hash(&["a", "b"]));
    }
}

/// Where a run's tools run (recorded in the provenance, not in the config hash: every
/// backend runs the same engine, so the verdicts are meant to be the same).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolsBackend {
    /// In this process.
    InProcess,
    /// A `tb mcp-start` server at this address.
    Mcp(String),
    /// External servers from this file, with the `--prefer` rule.
    External {
        /// The servers file.
        servers: PathBuf,
        /// `--prefer`.
        prefer: String,
    },
}

impl ToolsBackend {
    fn to_json(&self) -> Value {
        match self {
            ToolsBackend::InProcess => serde_json::json!({"backend": "in-process"}),
            ToolsBackend::Mcp(addr) => serde_json::json!({"backend": "mcp", "server": addr}),
            ToolsBackend::External { servers, prefer } => serde_json::json!({
                "backend": "external",
                "servers": servers.display().to_string(),
                "prefer": prefer,
            }),
        }
    }
}

/// What a `tb infer` run's results depend on, as the caller knows it.
#[derive(Debug, Clone, Copy)]
pub struct RunInputs<'a> {
    /// `tb`'s version.
    pub tb_version: &'a str,
    /// The commit `tb` was built from.
    pub tb_commit: &'a str,
    /// The data root as given.
    pub data_root: &'a Path,
    /// The dataset (every file read so far).
    pub ds: &'a tb_dataset::Dataset,
    /// The task ids in run order.
    pub ids: &'a [&'a str],
    /// Where the test list came from (`None`: the default list).
    pub test_list: Option<&'a Path>,
    /// The run config.
    pub config: Option<&'a tb_llm::ConfigFile>,
    /// The agent's name.
    pub agent: &'a str,
    /// The tools' clock.
    pub clock: &'a tb_sandbox::Clock,
    /// Budget of one model call.
    pub message_timeout: Option<std::time::Duration>,
    /// Budget of one attempt.
    pub attempt_timeout: Option<std::time::Duration>,
    /// The tool surface the model is shown.
    pub surface: &'a tb_eval::surface::Surface,
    /// The prompts.
    pub prompts: &'a tb_eval::prompts::Prompts,
    /// The campaign a shard belongs to (`tb campaign run`).
    pub campaign: Option<&'a Value>,
    /// Where the tools run.
    pub tools: &'a ToolsBackend,
}

/// A run's provenance (what each record carries) and the hashes a resume or merge checks.
#[derive(Debug, Clone)]
pub struct RunProvenance {
    /// The record's `provenance` object.
    pub provenance: Map<String, Value>,
    /// The bundle's files (see [`bundle_files`]).
    pub bundle: Vec<PathBuf>,
    /// The dataset's root (the bundle's names are relative to it).
    pub bundle_root: PathBuf,
    /// [`bundle_hash`] of them.
    pub bundle_hash: String,
    /// The config hash.
    pub config_hash: String,
    /// The run config with secrets removed (`null` without one).
    pub setup_config: Value,
}

/// Builds the provenance of a run (hashing the bundle's files).
pub fn run_provenance(i: &RunInputs<'_>) -> std::io::Result<RunProvenance> {
    use serde_json::json;
    let root = i.ds.root();
    let bundle = bundle_files(i.ds);
    let bundle_hash = bundle_hash(root, &bundle)?;
    let setup_config = i.config.map_or(Value::Null, |c| c.redacted().clone());
    let config_hash = json_hash(&json!({
        "setup_config": setup_config,
        "agent": i.agent,
        "clock": i.clock.now_iso(),
        "message_timeout": i.message_timeout.map(|d| d.as_secs_f64()),
        "attempt_timeout": i.attempt_timeout.map(|d| d.as_secs_f64()),
        // what the model is shown: a resume or merge never mixes surfaces or prompts
        "shown": {
            "surface": i.surface.kind.name(),
            "tools_sha256": i.surface.server_hashes(),
            "prompts_sha256": i.prompts.provenance()["sha256"],
        },
    }));
    let mut p = Map::new();
    p.insert("tb_version".into(), json!(i.tb_version));
    p.insert("tb_commit".into(), json!(i.tb_commit));
    p.insert("data_root".into(), json!(i.data_root.display().to_string()));
    p.insert(
        "data_git".into(),
        git_state(i.data_root).unwrap_or(Value::Null),
    );
    p.insert("agent".into(), json!(i.agent));
    p.insert("clock".into(), json!(i.clock.now_iso()));
    p.insert("bundle_hash".into(), json!(bundle_hash));
    p.insert("bundle_files".into(), json!(bundle.len()));
    p.insert("config_hash".into(), json!(config_hash));
    p.insert(
        "test_list".into(),
        json!({
            "source": i.test_list.map(|p| p.display().to_string()),
            "tasks": i.ids.len(),
            "hash": test_list_hash(i.ids),
        }),
    );
    let mut names = Map::new();
    if let Some(cfg) = i.config {
        for (role, key, c) in [
            ("agent", "agent_model", &cfg.agent_model),
            ("user", "user_model", &cfg.user_model),
            ("judge", "judge_model", &cfg.judge_model),
        ] {
            if let Some(c) = c {
                names.insert(role.into(), json!(c.deployment));
                p.insert(key.into(), c.provenance());
            }
        }
    }
    p.insert("models".into(), Value::Object(names));
    if let Some(c) = i.campaign {
        p.insert("campaign".into(), c.clone());
    }
    // What the model was shown: the tool surface (with the sha256 of each server's tool
    // list) and the prompts (with the sha256 of each).
    p.insert("surface".into(), i.surface.provenance());
    p.insert("prompts".into(), i.prompts.provenance());
    p.insert("tools".into(), i.tools.to_json());
    Ok(RunProvenance {
        provenance: p,
        bundle,
        bundle_root: root.to_path_buf(),
        bundle_hash,
        config_hash,
        setup_config,
    })
}

/// The run manifest of `tb infer` (written at the start and again at the end): the
/// provenance, the agent's, user's and judge's configuration, the test list and one entry
/// per session (the first run and each resume).
#[derive(Debug, Clone, Copy)]
pub struct RunManifest<'a> {
    /// The run's provenance.
    pub run: &'a RunProvenance,
    /// The run's environment (agent, prompts, provenance).
    pub env: &'a tb_eval::run::RunEnv,
    /// The task ids in run order.
    pub ids: &'a [&'a str],
    /// Attempts per task.
    pub repeat: u32,
    /// The shard (`i/n`).
    pub shard: Option<crate::Shard>,
    /// Planned attempt keys.
    pub keys: usize,
    /// The output files.
    pub files: &'a crate::CampaignFiles,
}

impl RunManifest<'_> {
    /// The manifest with these sessions; `complete` is `None` while the run is going.
    pub fn to_json(&self, sessions: &[Value], complete: Option<bool>) -> Value {
        let env = self.env;
        serde_json::json!({
            "setup_config": self.run.setup_config,
            "agent": env.agent_name,
            "agent_config": env.agent.as_ref().map(|c| serde_json::json!({"system_instructions": c.system_instructions, "builtin_tools": c.builtin_tools})),
            "user_config": {"system_prompt": if env.user_can_end { &env.models.prompts.user_system_with_end } else { &env.models.prompts.user_system }},
            "judge_config": {"system_prompt": env.models.prompts.judge_system},
            "provenance": env.provenance,
            "test_list": self.ids,
            "repeat": self.repeat,
            "shard": self.shard.map(|s| s.to_string()),
            "keys": self.keys,
            "output": self.files.output.display().to_string(),
            "errors_output": self.files.errors.display().to_string(),
            "bundle": self.run.bundle.iter().map(|p| bundle_name(&self.run.bundle_root, p)).collect::<Vec<_>>(),
            "run_start_dt": sessions.first().and_then(|s| s.get("started")).cloned().unwrap_or(Value::Null),
            "complete": complete,
            "sessions": sessions,
        })
    }
}
