//! What every environment of a server shares: the data (dataset, loaded domains, the tasks a
//! client may name), the run config (simulated-user and judge models), readiness, and the
//! public metadata. Data loads in the background so `/health` answers at once and `/ready`
//! says why the server is not ready yet.

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tb_core::Task;
use tb_dataset::Dataset;
use tb_eval::judge::StateJudge;
use tb_eval::root::LoadedRoot;
use tb_eval::run::{Models, RunEnv};
use tb_eval::tools::RemoteTools;
use tb_sandbox::Clock;

/// The environment name (`/list_environments`, `/metadata`).
pub const ENV_NAME: &str = "thinkingbox_env";

/// The benchmark label in observation metadata.
pub const BENCHMARK: &str = "thinkingbox_bench";

/// The observation metadata key of our own provenance (beside `execution_provenance`).
pub const OWN_METADATA_KEY: &str = "thinkingbox_rs";

/// `thinkingbox_revision`: names this program, never the reference's Python runtime.
pub const RUNTIME_REVISION: &str = concat!("thinkingbox-rs-", env!("CARGO_PKG_VERSION"));

/// `thinkingbox_source_type`: this program (the reference's runtime says `vcs`, `editable`,
/// `local` or `installed`).
pub const RUNTIME_SOURCE_TYPE: &str = "thinkingbox-rs";

/// The top-level folders of a data root that the data bundle hash covers, with `LICENSE.txt`.
const BUNDLE_TOP_LEVELS: [&str; 4] = ["dataset", "servers", "support", "releases"];

/// The data bundle hash as the OpenEnv adapter computes it: over `LICENSE.txt` and every file
/// under the bundle folders (no `__pycache__`, `.pyc`, `.pyo`), sorted by relative path, each
/// fed as `path \0 bytes \0`. Folders that are absent are skipped; symlinked folders are not
/// followed.
fn bundle_sha256(root: &Path) -> std::io::Result<String> {
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    if root.join("LICENSE.txt").is_file() {
        files.push(("LICENSE.txt".into(), root.join("LICENSE.txt")));
    }
    let mut stack: Vec<(String, PathBuf)> = BUNDLE_TOP_LEVELS
        .iter()
        .map(|t| ((*t).to_string(), root.join(t)))
        .filter(|(_, p)| p.is_dir())
        .collect();
    while let Some((rel, dir)) = stack.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            let path = entry.path();
            let child = format!("{rel}/{name}");
            let kind = entry.file_type()?;
            if kind.is_dir() {
                if name != "__pycache__" {
                    stack.push((child, path));
                }
            } else if path.is_file()
                && !std::path::Path::new(&name)
                    .extension()
                    .is_some_and(|e| e == "pyc" || e == "pyo")
            {
                files.push((child, path));
            }
        }
    }
    files.sort();
    let mut h = Sha256::new();
    for (rel, path) in &files {
        h.update(rel.as_bytes());
        h.update([0u8]);
        h.update(std::fs::read(path)?);
        h.update([0u8]);
    }
    Ok(tb_core::digest::hex(&h.finalize()))
}

/// The data checkout's release tag and commit (`git describe --tags --exact-match`, `git
/// rev-parse HEAD`), each `local` when it cannot be told (not a git checkout, no tag at HEAD,
/// no git).
fn data_release_and_revision(root: &Path) -> (String, String) {
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .env("GIT_TERMINAL_PROMPT", "0")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|s| !s.is_empty() && s.len() <= 256)
    };
    // Only a checkout whose top is this root names the data (not a repository around it).
    let top = git(&["rev-parse", "--show-toplevel"]).map(PathBuf::from);
    let same = match (top.and_then(|t| t.canonicalize().ok()), root.canonicalize()) {
        (Some(t), Ok(r)) => t == r,
        _ => false,
    };
    if !same {
        return ("local".into(), "local".into());
    }
    let release =
        git(&["describe", "--tags", "--exact-match", "HEAD"]).unwrap_or_else(|| "local".into());
    let revision = git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "local".into());
    (release, revision)
}

/// SHA-256 of the running executable (what ran), or of nothing when it cannot be read.
fn executable_sha256() -> String {
    let bytes = std::env::current_exe()
        .and_then(std::fs::read)
        .unwrap_or_default();
    tb_core::sha256_hex(&bytes)
}

/// Test list used when none is given and the data root has no `testlist.yaml`.
pub const CANONICAL_TEST_LIST: &str =
    "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

/// Server options.
#[derive(Debug, Clone)]
pub struct Options {
    /// Data root (a thinkingbox-data checkout or a folder in its layout).
    pub data_root: PathBuf,
    /// The tasks clients may reset to (YAML list of `file.py:function`); default
    /// `<root>/testlist.yaml`, else the v1 release list.
    pub test_list: Option<PathBuf>,
    /// Run config YAML (`user_model`, `judge_model`, `user_can_end_conversation`).
    pub config: Option<PathBuf>,
    /// The agent definition (`dataset/agent/<name>.yaml`) used when reset names none.
    pub agent: String,
    /// The tools' clock.
    pub clock: Clock,
    /// Most environments (WebSocket sessions) open at once.
    pub max_envs: usize,
    /// Sessions without a frame for this long are closed (`None`: never).
    pub idle_timeout: Option<Duration>,
    /// Largest accepted WebSocket message, in bytes.
    pub max_message_bytes: usize,
    /// The tool surface the client's agent is shown.
    pub surface: tb_eval::surface::SurfaceMode,
    /// The simulated user's and the judge's prompts.
    pub prompts: Arc<tb_eval::prompts::Prompts>,
    /// Connection cap and header/body read timeouts of the HTTP server.
    pub serve: tb_net::ServeLimits,
    /// Where task sessions come from when not in process (e.g. external tool servers from a
    /// servers.yaml, `tb openenv --servers`): built over the loaded sandbox, asked first at
    /// each reset; a task it declines runs in process.
    pub tools: Option<ToolsFactory>,
    /// Folders a reset's `dataset` and `config` may point into, besides the data root and
    /// the run config's folder (which always may). Anything resolving outside them (`..`,
    /// absolute paths elsewhere, symlinks leading out) is refused.
    pub reset_roots: Vec<PathBuf>,
}

/// Builds a server's remote tool backend over its loaded sandbox and clock.
#[derive(Clone)]
pub struct ToolsFactory(
    pub Arc<dyn Fn(Arc<LoadedRoot>, Clock) -> Arc<dyn RemoteTools> + Send + Sync>,
);

impl std::fmt::Debug for ToolsFactory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolsFactory")
    }
}

impl Options {
    /// Options with the defaults: agent `think`, the default clock, 8 environments, 15 idle
    /// minutes, 8 MiB messages.
    pub fn new(data_root: impl Into<PathBuf>, config: Option<PathBuf>) -> Self {
        Options {
            data_root: data_root.into(),
            test_list: None,
            config,
            agent: "think".into(),
            clock: Clock::default(),
            max_envs: 8,
            idle_timeout: Some(Duration::from_mins(15)),
            max_message_bytes: 8 << 20,
            surface: tb_eval::surface::SurfaceMode::default(),
            prompts: Arc::default(),
            serve: tb_net::ServeLimits::default(),
            tools: None,
            reset_roots: Vec::new(),
        }
    }
}

/// Loaded data.
#[derive(Debug)]
pub(crate) struct Data {
    pub dataset: Dataset,
    pub tasks: HashMap<String, Arc<Task>>,
    pub run: Arc<RunEnv>,
    /// `execution_provenance`: exactly the OpenEnv adapter's fields.
    pub provenance: Map<String, Value>,
    /// What only this implementation knows (implementation, version, clock, surface,
    /// prompts): sent beside `execution_provenance` under [`OWN_METADATA_KEY`].
    pub own: Map<String, Value>,
    /// The remote tool backend ([`Options::tools`]), if any.
    pub remote: Option<Arc<dyn RemoteTools>>,
}

#[derive(Debug)]
enum DataState {
    Loading,
    Ready(Arc<Data>),
    Failed,
}

/// The run config as far as the server uses it.
#[derive(Debug, Default)]
pub(crate) struct Settings {
    pub parsed: bool,
    pub models: Models,
    pub user_can_end: bool,
    pub sha256: Option<String>,
    pub reasons: Vec<&'static str>,
}

/// State shared by all environments of one server.
#[derive(Debug)]
pub struct Shared {
    pub(crate) options: Options,
    data: RwLock<DataState>,
    pub(crate) settings: Settings,
    loaded: tokio::sync::watch::Sender<bool>,
    /// Other data roots named by resets (`dataset`), once loaded, by canonical root.
    others: std::sync::Mutex<HashMap<PathBuf, Arc<Data>>>,
}

/// Most other data roots kept loaded at once (a reset naming yet another one loads it for
/// its episode only).
const MAX_OTHER_ROOTS: usize = 8;

/// Longest accepted `dataset` / `config` path in a reset.
const MAX_RESET_PATH: usize = 4096;

fn load_settings(path: Option<&Path>) -> Settings {
    let mut s = Settings::default();
    let Some(path) = path else {
        s.reasons
            .push("runtime_config: no run config given (-c CONFIG.yaml)");
        s.reasons.push("user_model: no run config");
        s.reasons.push("judge_model: no run config");
        return s;
    };
    let cfg = match tb_llm::ConfigFile::load(path) {
        Ok(c) => c,
        Err(e) => {
            tracing::error!(error = %e, "the run config does not load");
            s.reasons
                .push("runtime_config: the run config does not load (see the server log)");
            s.reasons.push("user_model: no usable run config");
            s.reasons.push("judge_model: no usable run config");
            return s;
        }
    };
    s.parsed = true;
    s.sha256 = std::fs::read(path).ok().map(|b| tb_core::sha256_hex(&b));
    s.user_can_end = cfg.user_can_end_conversation;
    let client = |c: &Option<tb_llm::LlmConfig>, role: &str| match c {
        None => None,
        Some(c) => match tb_llm::LlmClient::new(c) {
            Ok(cl) => Some(cl),
            Err(e) => {
                tracing::error!(role, error = %e, "a model of the run config cannot be used");
                None
            }
        },
    };
    s.models.user = client(&cfg.user_model, "user_model");
    s.models.judge = client(&cfg.judge_model, "judge_model");
    if s.models.user.is_none() {
        s.reasons.push(if cfg.user_model.is_none() {
            "user_model: the run config has no user_model"
        } else {
            "user_model: the user_model config cannot be used (see the server log)"
        });
    }
    if s.models.judge.is_none() {
        s.reasons.push(if cfg.judge_model.is_none() {
            "judge_model: the run config has no judge_model"
        } else {
            "judge_model: the judge_model config cannot be used (see the server log)"
        });
    }
    s
}

impl Shared {
    /// Reads the run config (not the data; see [`Shared::load_data`]).
    pub fn new(options: Options) -> Arc<Self> {
        let settings = load_settings(options.config.as_deref());
        let (loaded, _) = tokio::sync::watch::channel(false);
        Arc::new(Shared {
            options,
            data: RwLock::new(DataState::Loading),
            settings,
            loaded,
            others: std::sync::Mutex::default(),
        })
    }

    /// Loads the data (blocking; run it off the async threads). Errors are logged with their
    /// details and reported on `/ready` without them.
    pub fn load_data(&self) {
        let state = match self.try_load() {
            Ok(d) => {
                tracing::info!(tasks = d.tasks.len(), "data loaded");
                DataState::Ready(Arc::new(d))
            }
            Err(e) => {
                tracing::error!(error = %e, "the data does not load");
                DataState::Failed
            }
        };
        if let Ok(mut g) = self.data.write() {
            *g = state;
        }
        self.loaded.send_replace(true);
    }

    /// Waits until the data finished loading (whatever the outcome).
    pub async fn wait_loaded(&self) {
        let mut rx = self.loaded.subscribe();
        let _ = rx.wait_for(|v| *v).await;
    }

    fn try_load(&self) -> Result<Data, String> {
        self.load_root(&self.options.data_root, self.options.test_list.as_deref())
    }

    /// Loads a data root with its test list (given, else `<root>/testlist.yaml`, else the v1
    /// release list), with the server's run config.
    fn load_root(&self, root: &Path, test_list: Option<&Path>) -> Result<Data, String> {
        let o = &self.options;
        let ds = Dataset::open(root).map_err(|e| tb_core::error_text(&e))?;
        let list = if let Some(p) = test_list {
            ds.resolve_test_list(p)
        } else {
            let own = ds.root().join("testlist.yaml");
            if own.is_file() {
                own
            } else {
                ds.root().join(CANONICAL_TEST_LIST)
            }
        };
        let manifest = std::fs::read(&list).map_err(|e| format!("{}: {e}", list.display()))?;
        let tasks = ds
            .load_test_list(&list)
            .map_err(|e| tb_core::error_text(&e))?;
        let uids: Vec<&str> = tasks.iter().map(|t| t.uid.as_str()).collect();
        let uids_json = serde_json::to_string(&uids).map_err(|e| tb_core::error_text(&e))?;
        let surface = tb_eval::surface::Surface::resolve(&o.surface, ds.root())
            .map_err(|e| tb_core::error_text(&e))?;
        let sandbox =
            LoadedRoot::load_with(ds.root(), &surface).map_err(|e| tb_core::error_text(&e))?;
        let sandbox = Arc::new(sandbox);
        let remote = o.tools.as_ref().map(|f| (f.0)(sandbox.clone(), o.clock));
        if let Some(r) = &remote {
            // --server-pool: the episodes' servers start ahead of the first reset
            r.warm(&tasks);
        }
        let mut map = HashMap::new();
        for t in tasks {
            map.insert(t.uid.clone(), Arc::new(t));
        }
        let (release, revision) = data_release_and_revision(ds.root());
        let bundle = bundle_sha256(ds.root()).map_err(|e| format!("data bundle hash: {e}"))?;
        // relative to the data root; a list outside it is named by its file name alone, so
        // no local path reaches the client
        let manifest_path = list
            .strip_prefix(ds.root())
            .ok()
            .map(Path::to_path_buf)
            .or_else(|| list.file_name().map(PathBuf::from))
            .unwrap_or_default()
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/");
        let mut provenance = Map::new();
        provenance.insert("thinkingbox_revision".into(), json!(RUNTIME_REVISION));
        provenance.insert(
            "thinkingbox_source_sha256".into(),
            json!(executable_sha256()),
        );
        provenance.insert("thinkingbox_source_type".into(), json!(RUNTIME_SOURCE_TYPE));
        provenance.insert("data_release".into(), json!(release));
        provenance.insert("data_revision".into(), json!(revision));
        provenance.insert("config_sha256".into(), json!(self.settings.sha256));
        provenance.insert("data_bundle_sha256".into(), json!(bundle));
        provenance.insert("manifest_path".into(), json!(manifest_path));
        provenance.insert(
            "manifest_sha256".into(),
            json!(tb_core::sha256_hex(&manifest)),
        );
        provenance.insert(
            "manifest_uids_sha256".into(),
            json!(tb_core::sha256_hex(uids_json.as_bytes())),
        );
        provenance.insert("task_count".into(), json!(map.len()));
        let mut own = Map::new();
        own.insert("implementation".into(), json!("thinkingbox-rs"));
        own.insert(
            "implementation_version".into(),
            json!(env!("CARGO_PKG_VERSION")),
        );
        own.insert("clock".into(), json!(o.clock.now_iso()));
        own.insert("surface".into(), surface.provenance());
        own.insert("prompts".into(), o.prompts.provenance());
        let mut models = self.settings.models.clone();
        models.prompts = o.prompts.clone();
        let run = RunEnv {
            sandbox,
            judge: Arc::new(StateJudge::new()),
            clock: o.clock,
            agent_name: o.agent.clone(),
            agent: None,
            scenarios: HashMap::new(),
            models,
            user_can_end: self.settings.user_can_end,
            message_timeout: None,
            attempt_timeout: None,
            dump: tb_eval::run::Dump::default(),
            provenance: Map::new(),
        };
        Ok(Data {
            dataset: ds,
            tasks: map,
            run: Arc::new(run),
            provenance,
            own,
            remote,
        })
    }

    /// The folders a reset's paths may point into (canonical): the data root, the run
    /// config's folder and [`Options::reset_roots`].
    fn reset_roots(&self) -> Vec<PathBuf> {
        let o = &self.options;
        let config_dir = o
            .config
            .as_deref()
            .and_then(|c| c.canonicalize().ok())
            .and_then(|c| c.parent().map(Path::to_path_buf));
        std::iter::once(o.data_root.clone())
            .chain(config_dir)
            .chain(o.reset_roots.iter().cloned())
            .filter_map(|p| p.canonicalize().ok())
            .collect()
    }

    /// A reset's path argument resolved (relative to the data root, symlinks followed) to an
    /// existing path inside [`Self::reset_roots`]; `None` otherwise, whatever the reason, so
    /// a client learns nothing about paths outside them.
    pub(crate) fn confine(&self, value: &str) -> Option<PathBuf> {
        if value.trim().is_empty() || value.len() > MAX_RESET_PATH || value.contains('\0') {
            return None;
        }
        let p = Path::new(value);
        let joined = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.options.data_root.join(p)
        };
        let c = joined.canonicalize().ok()?;
        self.reset_roots()
            .iter()
            .any(|r| c.starts_with(r))
            .then_some(c)
    }

    /// The data root a reset's `dataset` names (a root holding `dataset/`, or a `dataset/`
    /// folder itself, as the adapter reads it), if it lies inside [`Self::reset_roots`].
    pub(crate) fn dataset_root(&self, value: &str) -> Option<PathBuf> {
        let p = self.confine(value)?;
        if p.join("dataset").is_dir() {
            return Some(p);
        }
        if ["agent", "scenario", "test_case"]
            .iter()
            .all(|d| p.join(d).is_dir())
        {
            let root = p.parent()?;
            return self.confine(root.to_str()?);
        }
        None
    }

    /// The loaded data of a canonical data root from [`Self::dataset_root`]: the server's
    /// own (with its test list), else that root with its own test list, loaded on first use
    /// (blocking: run it off the async threads).
    pub(crate) fn data_of(&self, root: &Path) -> Result<Arc<Data>, String> {
        if self.options.data_root.canonicalize().ok().as_deref() == Some(root) {
            return self
                .data()
                .ok_or_else(|| "the server's data is not loaded".to_string());
        }
        if let Some(d) = self.others.lock().ok().and_then(|m| m.get(root).cloned()) {
            return Ok(d);
        }
        let d = Arc::new(self.load_root(root, None)?);
        if let Ok(mut m) = self.others.lock()
            && m.len() < MAX_OTHER_ROOTS
        {
            m.insert(root.to_path_buf(), d.clone());
        }
        Ok(d)
    }

    /// The run config a reset's `config` names, if it lies inside [`Self::reset_roots`],
    /// loads, and has usable `user_model` and `judge_model`.
    pub(crate) fn settings_of(&self, value: &str) -> Option<Settings> {
        let p = self.confine(value)?;
        if !p.is_file() {
            return None;
        }
        let s = load_settings(Some(&p));
        (s.parsed && s.models.user.is_some() && s.models.judge.is_some()).then_some(s)
    }

    /// The data, once loaded.
    pub(crate) fn data(&self) -> Option<Arc<Data>> {
        match &*self.data.read().ok()? {
            DataState::Ready(d) => Some(d.clone()),
            _ => None,
        }
    }

    /// Whether user and judge models are configured and usable.
    pub(crate) fn models_ready(&self) -> bool {
        self.settings.models.user.is_some() && self.settings.models.judge.is_some()
    }

    /// `/ready`: (ready, body). Model endpoints are not probed; data and config must load and
    /// both models must be configured. Reasons are fixed strings (no paths, no errors).
    pub fn readiness(&self) -> (bool, Value) {
        let (data, data_reason) = match self.data.read().map(|g| match &*g {
            DataState::Ready(_) => (true, None),
            DataState::Loading => (false, Some("data: still loading")),
            DataState::Failed => (
                false,
                Some("data: the data root or its test list does not load (see the server log)"),
            ),
        }) {
            Ok(x) => x,
            Err(_) => (false, Some("data: unavailable")),
        };
        let s = &self.settings;
        let user = s.models.user.is_some();
        let judge = s.models.judge.is_some();
        let ready = data && s.parsed && user && judge;
        let mut reasons: Vec<&str> = data_reason.into_iter().collect();
        reasons.extend(s.reasons.iter().copied());
        (
            ready,
            json!({
                "ready": ready,
                "data": data,
                "runtime_config": s.parsed,
                "user_model": user,
                "judge_model": judge,
                "session_proxy": data,
                "typesense": {
                    "observable": false,
                    "ready": null,
                    "limitation": "Typesense is not used and its readiness is not observable: tools, policy search and state run in-process."
                },
                "reasons": reasons,
            }),
        )
    }

    /// `/metadata`.
    pub fn metadata(&self) -> Value {
        json!({
            "name": ENV_NAME,
            "description": "ThinkingBox agent sandbox (thinkingbox-rs): the client plays the agent; the server runs the tools, the simulated user and the judges, and ends each episode with reward 1.0 or 0.0.",
            "readme_content": null,
            "version": env!("CARGO_PKG_VERSION"),
            "author": null,
            "documentation_url": null,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundle hash, computed as the OpenEnv adapter computes it, of the v1 release's data
    /// checkout (commit fcaba4c1a9debec42fda7f15bf29fe6d6b46c431) is the adapter's pinned
    /// value.
    #[tb_test_support::reference_test]
    #[test]
    fn bundle_hash_of_the_release_data_is_the_adapters_pinned_value() {
        let root = tb_test_support::reference_data();
        assert_eq!(
            bundle_sha256(&root).unwrap(),
            "16803d95d161ca06309d95f0dbbcbbb7b3fdf8a61e2b4eacfe920781b12f18ff"
        );
    }

    #[test]
    fn bundle_hash_covers_the_bundle_folders_only() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("dataset/a/__pycache__")).unwrap();
        std::fs::write(root.join("dataset/a/x.yaml"), "x").unwrap();
        let before = bundle_sha256(root).unwrap();
        std::fs::write(root.join("dataset/a/__pycache__/x.pyc"), "junk").unwrap();
        std::fs::write(root.join("dataset/a/y.pyc"), "junk").unwrap();
        std::fs::write(root.join("README.md"), "not in the bundle").unwrap();
        assert_eq!(bundle_sha256(root).unwrap(), before);
        // `path \0 bytes \0` per file, sorted by path.
        let mut h = Sha256::new();
        h.update(b"dataset/a/x.yaml\0x\0");
        let want = tb_core::digest::hex(&h.finalize());
        assert_eq!(before, want);
        std::fs::write(root.join("LICENSE.txt"), "L").unwrap();
        assert_ne!(bundle_sha256(root).unwrap(), before);
    }

    #[test]
    fn readiness_without_config_lists_reasons_and_no_paths() {
        let shared = Shared::new(Options::new("/nonexistent/secret/place", None));
        let (ready, body) = shared.readiness();
        assert!(!ready);
        assert_eq!(body["data"], json!(false));
        assert_eq!(body["runtime_config"], json!(false));
        shared.load_data();
        let (ready, body) = shared.readiness();
        assert!(!ready);
        let text = body.to_string();
        assert!(text.contains("data: the data root"), "{text}");
        assert!(!text.contains("/nonexistent"), "{text}");
    }
}
