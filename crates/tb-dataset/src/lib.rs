//! Loads ThinkingBox datasets in the official layout:
//!
//! ```text
//! <root>/dataset/agent/<agent>.yaml
//! <root>/dataset/scenario/<scenario>.yaml
//! <root>/dataset/test_case/[<prefix>/]<file>.py     test functions with `"""!` YAML docstrings
//! <root>/releases/.../<testlist>.yaml               lists of `file.py:function`
//! ```
//!
//! Parsing follows the reference harness exactly: module-level `"""!` strings give file-wide
//! YAML keys, a module-level function is a test iff its first statement is a string starting
//! with `!`, the rest of that string is `textwrap.dedent`ed and read with PyYAML `safe_load`
//! semantics ([`yaml`]), function keys override module keys (`tags` lists concatenate), and
//! `init` is merged into the scenario's `world_state` per server ([`merge_init_config`]).
//!
//! ```no_run
//! let ds = tb_dataset::Dataset::open(std::path::Path::new("../shared/thinkingbox-data"))?;
//! let tasks = ds.load_test_list(std::path::Path::new(
//!     "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml",
//! ))?;
//! for s in tb_dataset::summarize(&ds, &tasks)? {
//!     println!("{}: {} tasks, {} golden calls", s.scenario, s.tasks, s.golden_calls);
//! }
//! # Ok::<(), tb_dataset::DatasetError>(())
//! ```

#![warn(missing_docs)]

mod config;
mod dedent;
mod error;
mod merge;
mod pyfile;
mod summary;

/// The PyYAML-exact YAML 1.1 reader (the `tb-yaml` crate).
pub use tb_yaml as yaml;
/// Unknown-key warnings for config files (`tb-yaml`'s).
pub use tb_yaml::keys;

pub use config::{AgentConfig, Scenario, ToolDef, ToolOverride};
pub use dedent::dedent;
pub use error::DatasetError;
pub use merge::{MergeError, merge_init_config, recursive_merge};
pub use pyfile::{PyAssign, PyError, PyFunction, PyItem, PyValue, parse_py, py_assignments};
pub use summary::{ScenarioSummary, summarize};
pub use tb_core::{Check, SourceLoc, Task};

use serde_json::{Map, Value};
use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

/// Keys a test function's YAML may use (the reference rejects others).
pub const TEST_CASE_KEYS: &[&str] = &[
    "scenario",
    "query",
    "user_context",
    "max_user_sim_turns",
    "max_agent_sim_turns",
    "bot_instructions",
    "history",
    "init",
    "format_query",
    "tags",
];

/// The reference's default cap on simulated-user turns.
pub const DEFAULT_MAX_USER_SIM_TURNS: u64 = 10;

/// The data root from the `THINKINGBOX_DATA` environment variable, if set and non-empty.
pub fn default_data_root() -> Option<PathBuf> {
    std::env::var_os("THINKINGBOX_DATA")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// One test function of a parsed test-case file.
#[derive(Debug, Clone, PartialEq)]
pub struct TestFunction {
    /// Function name.
    pub name: String,
    /// 1-based line of its `def`.
    pub line: usize,
    /// 1-based last line of its body.
    pub end_line: usize,
    /// Module keys merged with the function's keys (function wins; `tags` lists concatenate).
    pub yaml: Map<String, Value>,
    /// Checks the body calls.
    pub checks: Vec<Check>,
}

/// A parsed `.py` test-case file.
#[derive(Debug, Clone, PartialEq)]
pub struct TestFile {
    /// Where it is.
    pub path: PathBuf,
    /// Test functions in file order (a redefined name keeps its first position, last body).
    pub tests: Vec<TestFunction>,
}

impl TestFile {
    /// The test function `name`.
    pub fn get(&self, name: &str) -> Option<&TestFunction> {
        self.tests.iter().find(|t| t.name == name)
    }
}

/// Parse a Python test-case file's source. `path` is only used in errors.
pub fn parse_test_file(path: &Path, src: &str) -> Result<TestFile, DatasetError> {
    parse_test_file_for(path, src, None)
}

/// [`parse_test_file`] that loads the YAML of one test function only (`only`; the
/// module-level blocks are always loaded): what loading one task needs, without the YAML of
/// every other task of the file. Errors in other functions' docstrings are not seen.
pub fn parse_test_file_for(
    path: &Path,
    src: &str,
    only: Option<&str>,
) -> Result<TestFile, DatasetError> {
    let items = pyfile::parse_py_for(src, only).map_err(|e| DatasetError::Python {
        path: path.to_path_buf(),
        line: e.line,
        message: e.message,
    })?;
    let mut module: Map<String, Value> = Map::new();
    let mut tests: Vec<TestFunction> = Vec::new();
    for item in items {
        match item {
            PyItem::Str { value, line } => {
                let Some(body) = value.strip_prefix('!') else {
                    continue;
                };
                let v = load_docstring(path, line, body, "a module-level \"\"\"! block")?;
                match v {
                    Value::Null => {}
                    Value::Object(m) => {
                        for (k, v) in m {
                            module.insert(k, v);
                        }
                    }
                    other => {
                        return Err(DatasetError::Invalid {
                            path: path.to_path_buf(),
                            line,
                            message: format!(
                                "module-level \"\"\"! YAML must be a mapping, found {}",
                                tb_yaml::type_name(&other, false)
                            ),
                        });
                    }
                }
            }
            PyItem::Function(f) => {
                if only.is_some_and(|n| n != f.name) {
                    continue;
                }
                let Some((doc, doc_line)) = &f.docstring else {
                    continue;
                };
                let Some(body) = doc.strip_prefix('!') else {
                    continue;
                };
                let ctx = format!("the docstring of {}", f.name);
                let v = load_docstring(path, *doc_line, body, &ctx)?;
                let obj = match v {
                    Value::Null => continue,
                    Value::Object(m) => m,
                    other => {
                        return Err(DatasetError::Invalid {
                            path: path.to_path_buf(),
                            line: f.line,
                            message: format!(
                                "{ctx} must be a YAML mapping, found {}",
                                tb_yaml::type_name(&other, false)
                            ),
                        });
                    }
                };
                if let Some(bad) = obj.keys().find(|k| !TEST_CASE_KEYS.contains(&k.as_str())) {
                    return Err(DatasetError::Invalid {
                        path: path.to_path_buf(),
                        line: f.line,
                        message: format!(
                            "{ctx}: invalid key {bad:?} (allowed: {})",
                            TEST_CASE_KEYS.join(", ")
                        ),
                    });
                }
                let mut merged = module.clone();
                for (k, v) in &obj {
                    merged.insert(k.clone(), v.clone());
                }
                if let (Some(Value::Array(g)), Some(Value::Array(l))) =
                    (module.get("tags"), obj.get("tags"))
                {
                    let tags = g.iter().chain(l.iter()).cloned().collect();
                    merged.insert("tags".into(), Value::Array(tags));
                }
                let tf = TestFunction {
                    name: f.name.clone(),
                    line: f.line,
                    end_line: f.end_line,
                    yaml: merged,
                    checks: f.checks.clone(),
                };
                match tests.iter_mut().find(|t| t.name == f.name) {
                    Some(existing) => *existing = tf,
                    None => tests.push(tf),
                }
            }
        }
    }
    Ok(TestFile {
        path: path.to_path_buf(),
        tests,
    })
}

/// Dedent and YAML-load a `"""!` block whose string starts on file line `line`.
fn load_docstring(path: &Path, line: usize, body: &str, ctx: &str) -> Result<Value, DatasetError> {
    let text = dedent(body);
    yaml::load(&text).map_err(|e| DatasetError::Yaml {
        path: path.to_path_buf(),
        line: line + e.line - 1,
        context: Some(ctx.to_string()),
        message: e.message,
    })
}

/// A ThinkingBox dataset on disk. Files are read lazily and cached; the type is `Send + Sync`.
#[derive(Debug)]
pub struct Dataset {
    root: PathBuf,
    dir: PathBuf,
    scenarios: Mutex<HashMap<String, Arc<Scenario>>>,
    agents: Mutex<HashMap<String, Arc<AgentConfig>>>,
    files: Mutex<HashMap<PathBuf, Arc<TestFile>>>,
    /// Test files of which one task was loaded without parsing the whole file.
    partly_read: Mutex<BTreeSet<PathBuf>>,
    loaded: Mutex<BTreeSet<PathBuf>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Dataset {
    /// Open a data root (the directory holding `dataset/`), or a `dataset` directory itself
    /// (one holding `scenario/` or `test_case/`).
    pub fn open(path: &Path) -> Result<Dataset, DatasetError> {
        let looks = |d: &Path| d.join("scenario").is_dir() || d.join("test_case").is_dir();
        let (root, dir) = if looks(&path.join("dataset")) {
            (path.to_path_buf(), path.join("dataset"))
        } else if looks(path) {
            let root = path
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .map_or_else(|| path.to_path_buf(), Path::to_path_buf);
            (root, path.to_path_buf())
        } else {
            return Err(DatasetError::NotADataset {
                path: path.to_path_buf(),
            });
        };
        Ok(Dataset {
            root,
            dir,
            scenarios: Mutex::new(HashMap::new()),
            agents: Mutex::new(HashMap::new()),
            files: Mutex::new(HashMap::new()),
            partly_read: Mutex::new(BTreeSet::new()),
            loaded: Mutex::new(BTreeSet::new()),
        })
    }

    /// The data root (parent of the dataset directory).
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The dataset directory (`<root>/dataset`).
    pub fn dataset_dir(&self) -> &Path {
        &self.dir
    }

    /// Every file read so far (test lists, test files, scenarios, agents), sorted: the inputs
    /// a run depends on, for provenance hashing.
    pub fn loaded_files(&self) -> Vec<PathBuf> {
        lock(&self.loaded).iter().cloned().collect()
    }

    fn read(&self, path: &Path) -> Result<String, DatasetError> {
        let bytes = std::fs::read(path).map_err(|source| DatasetError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        lock(&self.loaded).insert(path.to_path_buf());
        String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            DatasetError::Invalid {
                path: path.to_path_buf(),
                line: valid.split(|&b| b == b'\n').count(),
                message: "not valid UTF-8".into(),
            }
        })
    }

    fn read_yaml(&self, path: &Path) -> Result<(Value, HashMap<String, usize>), DatasetError> {
        let src = self.read(path)?;
        let mut lines = HashMap::new();
        let v = yaml::load_with_lines(&src, Some(&mut lines)).map_err(|e| DatasetError::Yaml {
            path: path.to_path_buf(),
            line: e.line,
            context: None,
            message: e.message,
        })?;
        Ok((v, lines))
    }

    /// The scenario `name` (`dataset/scenario/<name>.yaml`), cached.
    pub fn scenario(&self, name: &str) -> Result<Arc<Scenario>, DatasetError> {
        self.cached(
            &self.scenarios,
            "scenario",
            name,
            |path| DatasetError::UnknownScenario {
                path: path.clone(),
                line: 0,
                name: name.to_string(),
                expected: path,
            },
            |path, v, lines| Scenario::from_value(name, path, v, lines),
            |s| &s.warnings,
        )
    }

    /// Names of all scenarios in `dataset/scenario/`, sorted.
    pub fn scenario_names(&self) -> Result<Vec<String>, DatasetError> {
        let dir = self.dir.join("scenario");
        yaml_stems(&dir).map_err(|source| DatasetError::Io { path: dir, source })
    }

    /// The agent config `name` (`dataset/agent/<name>.yaml`), cached.
    pub fn agent(&self, name: &str) -> Result<Arc<AgentConfig>, DatasetError> {
        self.cached(
            &self.agents,
            "agent",
            name,
            |path| DatasetError::UnknownAgent {
                name: name.to_string(),
                expected: path,
            },
            |path, v, lines| AgentConfig::from_value(name, path, v, lines),
            |a| &a.warnings,
        )
    }

    /// The config `dir/<name>.yaml` from `cache`, or else read, parsed, its `warnings` logged,
    /// and cached. `unknown`: the error for a name with no file.
    fn cached<T>(
        &self,
        cache: &Mutex<HashMap<String, Arc<T>>>,
        dir: &str,
        name: &str,
        unknown: impl FnOnce(PathBuf) -> DatasetError,
        parse: impl FnOnce(&Path, Value, &HashMap<String, usize>) -> Result<T, DatasetError>,
        warnings: fn(&T) -> &Vec<String>,
    ) -> Result<Arc<T>, DatasetError> {
        if let Some(c) = lock(cache).get(name) {
            return Ok(c.clone());
        }
        let path = self.dir.join(dir).join(format!("{name}.yaml"));
        if !path.is_file() || name.is_empty() || name.contains(['/', '\\']) {
            return Err(unknown(path));
        }
        let (v, lines) = self.read_yaml(&path)?;
        let c = Arc::new(parse(&path, v, &lines)?);
        for w in warnings(&c) {
            tracing::warn!("{w}");
        }
        lock(cache).insert(name.to_string(), c.clone());
        Ok(c)
    }

    /// Candidate paths for a test-case file name, in lookup order: `test_case/<f>`, then
    /// `test_case/<prefix>/<f>` for the underscore-prefixes of `f`, longest first.
    pub fn test_file_candidates(&self, file: &str) -> Vec<PathBuf> {
        let dir = self.dir.join("test_case");
        let mut out = vec![dir.join(file)];
        let parts: Vec<&str> = file.split('_').collect();
        for k in (1..parts.len()).rev() {
            out.push(dir.join(parts[..k].join("_")).join(file));
        }
        out
    }

    /// Find a test-case file by name (see [`Dataset::test_file_candidates`]).
    pub fn find_test_file(&self, file: &str) -> Option<PathBuf> {
        self.test_file_candidates(file)
            .into_iter()
            .find(|p| p.is_file())
    }

    /// Parse (once) the test-case file at `path`.
    pub fn test_file(&self, path: &Path) -> Result<Arc<TestFile>, DatasetError> {
        if let Some(f) = lock(&self.files).get(path) {
            return Ok(f.clone());
        }
        let src = self.read(path)?;
        let f = Arc::new(parse_test_file(path, &src)?);
        lock(&self.files).insert(path.to_path_buf(), f.clone());
        Ok(f)
    }

    /// Load one task by id `file.py:function`.
    pub fn load_task(&self, id: &str) -> Result<Task, DatasetError> {
        self.load_task_at(id, Path::new("<argument>"), 0, false)
    }

    /// Load several tasks by id, in order.
    pub fn load_tasks<S: AsRef<str>>(&self, ids: &[S]) -> Result<Vec<Task>, DatasetError> {
        ids.iter().map(|id| self.load_task(id.as_ref())).collect()
    }

    /// `whole`: the caller will ask for other tasks of the same file, so the file is parsed
    /// whole at once rather than first for this task alone.
    fn load_task_at(
        &self,
        id: &str,
        src: &Path,
        line: usize,
        whole: bool,
    ) -> Result<Task, DatasetError> {
        let mut parts = id.split(':');
        let (Some(file), Some(func), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(DatasetError::BadTestId {
                path: src.to_path_buf(),
                line,
                id: id.to_string(),
            });
        };
        let Some(path) = self.find_test_file(file) else {
            return Err(DatasetError::TestFileNotFound {
                path: src.to_path_buf(),
                line,
                file: file.to_string(),
                tried: self.test_file_candidates(file),
            });
        };
        // The first task asked of a file loads only its own YAML (one task asked: the other
        // tasks of the file are not read); a second task of the same file parses the whole
        // file once and keeps it.
        let cached = lock(&self.files).get(&path).cloned();
        let first = !whole && lock(&self.partly_read).insert(path.clone());
        let tf = match cached {
            Some(f) => f,
            None if first => Arc::new(parse_test_file_for(&path, &self.read(&path)?, Some(func))?),
            None => self.test_file(&path)?,
        };
        let Some(t) = tf.get(func) else {
            let (p, l) = if line == 0 {
                (path.clone(), 0)
            } else {
                (src.to_path_buf(), line)
            };
            return Err(DatasetError::UnknownTest {
                path: p,
                line: l,
                file: path,
                function: func.to_string(),
            });
        };
        self.hydrate(&path, t)
    }

    /// All test functions of a test-case file (given by name, as in ids), hydrated, in file
    /// order.
    pub fn tasks_in_file(&self, file: &str) -> Result<Vec<Task>, DatasetError> {
        let Some(path) = self.find_test_file(file) else {
            return Err(DatasetError::TestFileNotFound {
                path: PathBuf::from("<argument>"),
                line: 0,
                file: file.to_string(),
                tried: self.test_file_candidates(file),
            });
        };
        let tf = self.test_file(&path)?;
        tf.tests.iter().map(|t| self.hydrate(&path, t)).collect()
    }

    /// Resolve a test-list path: absolute as is; relative against the current directory,
    /// then the data root, then the dataset directory.
    pub fn resolve_test_list(&self, path: &Path) -> PathBuf {
        if path.is_absolute() || path.is_file() {
            return path.to_path_buf();
        }
        for base in [&self.root, &self.dir] {
            let p = base.join(path);
            if p.is_file() {
                return p;
            }
        }
        path.to_path_buf()
    }

    /// Read a test list: a YAML list of `file.py:function` strings. Returns (id, 1-based line).
    pub fn read_test_list(&self, path: &Path) -> Result<Vec<(String, usize)>, DatasetError> {
        let path = self.resolve_test_list(path);
        let (v, lines) = self.read_yaml(&path)?;
        let Value::Array(items) = v else {
            return Err(DatasetError::Invalid {
                path,
                line: lines.get("").copied().unwrap_or(1),
                message: format!(
                    "a test list must be a YAML list of \"file.py:function\" strings, found {}",
                    tb_yaml::type_name(&v, false)
                ),
            });
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, it) in items.into_iter().enumerate() {
            let line = lines.get(&format!("/{i}")).copied().unwrap_or(0);
            match it {
                Value::String(s) => out.push((s, line)),
                other => {
                    return Err(DatasetError::Invalid {
                        path,
                        line,
                        message: format!(
                            "test list entry {i} must be a \"file.py:function\" string, found {}",
                            tb_yaml::type_name(&other, false)
                        ),
                    });
                }
            }
        }
        Ok(out)
    }

    /// Load every task of a test list, in list order (each test file is parsed once).
    pub fn load_test_list(&self, path: &Path) -> Result<Vec<Task>, DatasetError> {
        let resolved = self.resolve_test_list(path);
        let ids = self.read_test_list(&resolved)?;
        // A file the list names more than once is parsed whole on its first task, not once
        // for that task and again for the rest.
        let mut per_file: HashMap<&str, usize> = HashMap::new();
        for (id, _) in &ids {
            *per_file
                .entry(id.split(':').next().unwrap_or(""))
                .or_default() += 1;
        }
        ids.iter()
            .map(|(id, line)| {
                let file = id.split(':').next().unwrap_or("");
                let whole = per_file.get(file).is_some_and(|&n| n > 1);
                self.load_task_at(id, &resolved, *line, whole)
            })
            .collect()
    }

    fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Hydrate a test function of the file at `path` into a [`Task`].
    pub fn hydrate(&self, path: &Path, t: &TestFunction) -> Result<Task, DatasetError> {
        let lines = HashMap::new();
        let f = config::Fields {
            path,
            lines: &lines,
            base_line: t.line,
        };
        let y = &t.yaml;
        let ctx = |k: &str| format!("{k}` of `{}", t.name);
        let scenario_name = f.req_str(y, "", &ctx("scenario"), "scenario")?;
        let query = f.req_str(y, "", &ctx("query"), "query")?;
        let user_context = f.opt_str(y, "", &ctx("user_context"), "user_context")?;
        let bot_instructions = f.opt_str(y, "", &ctx("bot_instructions"), "bot_instructions")?;
        let max_user = f.opt_uint(y, "", &ctx("max_user_sim_turns"), "max_user_sim_turns")?;
        let max_agent = f.opt_uint(y, "", &ctx("max_agent_sim_turns"), "max_agent_sim_turns")?;
        let not_mapping = |field: &str, v: &Value| {
            let found = tb_yaml::type_name(v, false);
            f.invalid(
                "",
                format!("{}: `{field}` must be a mapping, found {found}", t.name),
            )
        };
        let init = match y.get("init") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(m)) => {
                if let Some((k, v)) = m.iter().find(|(_, v)| !v.is_object()) {
                    return Err(not_mapping(&format!("init.{k}"), v));
                }
                m.clone()
            }
            Some(v) => return Err(not_mapping("init", v)),
        };
        if let Some(v) = y.get("format_query")
            && !v.is_boolean()
        {
            return Err(f.invalid("", format!("{}: `format_query` must be a boolean", t.name)));
        }
        let scenario = match self.scenario(&scenario_name) {
            Ok(s) => s,
            Err(DatasetError::UnknownScenario { name, expected, .. }) => {
                return Err(DatasetError::UnknownScenario {
                    path: path.to_path_buf(),
                    line: t.line,
                    name,
                    expected,
                });
            }
            Err(e) => return Err(e),
        };
        let world_state = merge_init_config(&scenario.world_state, &init)
            .map_err(|e| f.invalid("", format!("{}: {}", t.name, e.message)))?;
        let own_tags = tb_core::TestTags::parse(y.get("tags"))
            .map_err(|e| f.invalid("", format!("{}: {e}", t.name)))?;
        let test_tags = tb_core::TestTags::hydrate(&scenario.test_tags, &own_tags);
        let file_name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        Ok(Task {
            uid: format!("{file_name}:{}", t.name),
            scenario: scenario_name,
            query: Some(query),
            user_context,
            max_user_sim_turns: Some(max_user.unwrap_or(DEFAULT_MAX_USER_SIM_TURNS)),
            max_agent_sim_turns: max_agent,
            bot_instructions,
            init,
            world_state,
            raw: t.yaml.clone(),
            checks: t.checks.clone(),
            source: SourceLoc {
                path: self.display_path(path),
                line: t.line,
            },
            test_tags,
        })
    }
}

/// The stems of the `*.yaml` files in `dir`, sorted.
pub fn yaml_stems(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let p = e.path();
            (p.extension()? == "yaml").then(|| p.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    Ok(names)
}
