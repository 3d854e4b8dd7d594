// Shared by the library and its build script (`#[path]`-included there): where the benchmark's
// data and the reference's code checkouts are.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// The workspace root (this crate lives in `crates/tb-test-support`).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn var(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// The shared folder: `$TB_SHARED`, else `shared` beside the workspace.
pub fn shared_dir() -> PathBuf {
    var("TB_SHARED").unwrap_or_else(|| workspace_root().join("../shared"))
}

/// The thinkingbox-data checkout: `$THINKINGBOX_DATA`, else `thinkingbox-data` in the shared
/// folder.
pub fn data_root() -> PathBuf {
    var("THINKINGBOX_DATA").unwrap_or_else(|| shared_dir().join("thinkingbox-data"))
}

/// Whether `root` holds the benchmark's data (a data checkout, or the data part of one: the
/// dataset and `servers/servers.yaml` with the servers' initial data).
pub fn data_present(root: &Path) -> bool {
    root.join("dataset").is_dir() && root.join("servers/servers.yaml").is_file()
}

/// Whether `shared` holds the data and the recorded reference behaviour (`tb-bench-v1`).
pub fn shared_present(shared: &Path) -> bool {
    data_present(&shared.join("thinkingbox-data")) && shared.join("tb-bench-v1/traces").is_dir()
}

/// Where checkouts of the reference's repositories are looked for when no variable names
/// them: `$HOME/.cache/thinkingbox-rs/reference`, outside every repository.
pub fn reference_cache() -> Option<PathBuf> {
    var("HOME").map(|h| h.join(".cache/thinkingbox-rs/reference"))
}

/// The reference framework's checkout (microsoft/thinkingbox): `$THINKINGBOX_FRAMEWORK`, else
/// `thinkingbox` in [`reference_cache`].
pub fn framework_root() -> Option<PathBuf> {
    var("THINKINGBOX_FRAMEWORK").or_else(|| reference_cache().map(|c| c.join("thinkingbox")))
}

/// A full checkout of the data repository, servers' sources included
/// (microsoft/thinkingbox-data): `$THINKINGBOX_REFERENCE_DATA`, else `thinkingbox-data` in
/// [`reference_cache`].
pub fn reference_data_root() -> Option<PathBuf> {
    var("THINKINGBOX_REFERENCE_DATA")
        .or_else(|| reference_cache().map(|c| c.join("thinkingbox-data")))
}

/// Whether `root` is a framework checkout (it holds the simulated user's and judge's sources).
pub fn framework_present(root: &Path) -> bool {
    root.join("thinkingbox/common/judge.py").is_file()
        && root
            .join("thinkingbox/common/user_simulated_answer.py")
            .is_file()
}

/// Whether `root` is a full data checkout: the data and the servers' Python package.
pub fn reference_data_present(root: &Path) -> bool {
    data_present(root)
        && root
            .join("servers/tb_business_ops_servers_202606/pyproject.toml")
            .is_file()
}

/// Both reference checkouts, when both are found.
pub fn reference_present() -> bool {
    framework_root().is_some_and(|p| framework_present(&p))
        && reference_data_root().is_some_and(|p| reference_data_present(&p))
}

/// Whether this runs in CI (`CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}

/// The OpenEnv ThinkingBox adapter's client package (meta-pytorch/OpenEnv
/// `envs/thinkingbox_env`, a local checkout never kept in this repository): the folder that
/// holds `thinkingbox_env/`, `$TB_OPENENV_ADAPTER`, else `openenv-adapter/envs` under
/// `$HOME/.cache/thinkingbox-rs`.
pub fn adapter_root() -> Option<PathBuf> {
    var("TB_OPENENV_ADAPTER")
        .or_else(|| var("HOME").map(|h| h.join(".cache/thinkingbox-rs/openenv-adapter/envs")))
}

/// The Python that runs the adapter's client (it has `openenv` installed):
/// `$TB_OPENENV_ADAPTER_PYTHON`, else `openenv-venv/bin/python` under
/// `$HOME/.cache/thinkingbox-rs`.
pub fn adapter_python() -> Option<PathBuf> {
    var("TB_OPENENV_ADAPTER_PYTHON")
        .or_else(|| var("HOME").map(|h| h.join(".cache/thinkingbox-rs/openenv-venv/bin/python")))
}

/// The adapter's packaged evaluator, installed with the reference's ThinkingBox runtime in a
/// venv of its own: `$TB_OPENENV_EVAL`, else `openenv-eval-venv/bin/thinkingbox-eval` under
/// `$HOME/.cache/thinkingbox-rs`.
pub fn adapter_eval() -> Option<PathBuf> {
    var("TB_OPENENV_EVAL").or_else(|| {
        var("HOME").map(|h| h.join(".cache/thinkingbox-rs/openenv-eval-venv/bin/thinkingbox-eval"))
    })
}

/// Whether the adapter's evaluator is there.
pub fn adapter_eval_present() -> bool {
    adapter_eval().is_some_and(|p| p.is_file())
}

/// Whether the adapter's client package and its Python are there.
pub fn adapter_present() -> bool {
    adapter_root().is_some_and(|r| r.join("thinkingbox_env/client.py").is_file())
        && adapter_python().is_some_and(|p| p.is_file())
}

/// A program or Python environment some tests drive, for `#[tb_test_support::needs(...)]`.
/// Outside CI a test whose need is not found when the tests are built is compiled as ignored,
/// with [`Need::how`] as the reason; in CI it runs and fails naming what is missing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Need {
    /// tmux (the `tb tui` terminal tests).
    Tmux,
    /// Slurm's daemons and commands with munge (the one-node cluster test).
    Slurm,
    /// Chromium and chromedriver (`TB_CHROMIUM`, `TB_CHROMEDRIVER`, else on `PATH`).
    Chromium,
    /// A Python 3.11 or newer: `$TB_PYTHON`, else `target/py-venv`, else `python3`.
    Python,
    /// A Python with the official MCP SDK (server and client): `$TB_PYTHON`, else
    /// `target/py-venv`, else `python3`.
    PythonMcp,
    /// A Python with kubernetes-validate: `$TB_K8S_PYTHON`, else `target/py-k8s`.
    PythonK8s,
    /// A Python with the PyPI OpenEnv client (`openenv` 0.4.1 or newer): `$TB_OPENENV_PYTHON`,
    /// else `target/py-openenv`, else `python3`.
    PythonOpenenv,
    /// A Python with the reference's v1 tool servers' dependencies: `$TB_SERVERS_PYTHON`,
    /// else `target/py-tbservers`.
    PythonServers,
    /// A Python with what the framework's record model and `tb agg` import:
    /// `$TB_REFERENCE_PYTHON`, else `target/py-reference`.
    PythonReference,
}

impl Need {
    /// Every need, in the order the build script probes them.
    pub const ALL: [Need; 9] = [
        Need::Tmux,
        Need::Slurm,
        Need::Chromium,
        Need::Python,
        Need::PythonMcp,
        Need::PythonK8s,
        Need::PythonOpenenv,
        Need::PythonServers,
        Need::PythonReference,
    ];

    /// The need's name in `#[needs(...)]`.
    pub fn name(self) -> &'static str {
        match self {
            Need::Tmux => "tmux",
            Need::Slurm => "slurm",
            Need::Chromium => "chromium",
            Need::Python => "python",
            Need::PythonMcp => "python_mcp",
            Need::PythonK8s => "python_k8s",
            Need::PythonOpenenv => "python_openenv",
            Need::PythonServers => "python_servers",
            Need::PythonReference => "python_reference",
        }
    }

    /// The need named `name`.
    pub fn by_name(name: &str) -> Option<Need> {
        Need::ALL.into_iter().find(|n| n.name() == name)
    }

    /// What is missing and how to get it (the ignore reason).
    pub fn how(self) -> &'static str {
        match self {
            Need::Tmux => "needs tmux (apt-get install tmux)",
            Need::Slurm => {
                "needs Slurm and munge: munged, slurmctld, slurmd, sbatch, scancel, scontrol, squeue, sinfo (apt-get install slurm-wlm munge)"
            }
            Need::Chromium => {
                "needs chromium and chromedriver (apt-get install chromium chromium-driver, or set TB_CHROMIUM and TB_CHROMEDRIVER)"
            }
            Need::Python => "needs a Python 3.11 or newer (TB_PYTHON, target/py-venv or python3)",
            Need::PythonMcp => {
                "needs a Python with the MCP SDK (run scripts/ci-python-deps.sh, or set TB_PYTHON)"
            }
            Need::PythonK8s => {
                "needs a Python with kubernetes-validate (run scripts/ci-python-deps.sh, or set TB_K8S_PYTHON)"
            }
            Need::PythonOpenenv => {
                "needs a Python with the PyPI openenv package, 0.4.1 or newer (run scripts/ci-python-deps.sh, or set TB_OPENENV_PYTHON)"
            }
            Need::PythonServers => {
                "needs a Python with the reference's v1 servers' dependencies (run scripts/ci-python-deps.sh with the reference checkouts, or set TB_SERVERS_PYTHON)"
            }
            Need::PythonReference => {
                "needs a Python with the framework's record dependencies (run scripts/ci-python-deps.sh with the reference checkouts, or set TB_REFERENCE_PYTHON)"
            }
        }
    }

    /// The variables that name where the need is, for the build script to watch.
    pub fn vars(self) -> &'static [&'static str] {
        match self {
            Need::Tmux | Need::Slurm => &[],
            Need::Chromium => &["TB_CHROMIUM", "TB_CHROMEDRIVER"],
            Need::Python | Need::PythonMcp => &["TB_PYTHON"],
            Need::PythonK8s => &["TB_K8S_PYTHON"],
            Need::PythonOpenenv => &["TB_OPENENV_PYTHON"],
            Need::PythonServers => &["TB_SERVERS_PYTHON"],
            Need::PythonReference => &["TB_REFERENCE_PYTHON"],
        }
    }

    /// Where the need is: the program (tmux, sbatch, chromium) or the Python interpreter;
    /// `None` when it is not there (for Slurm and Chromium, when any of their programs is
    /// missing).
    pub fn find(self) -> Option<PathBuf> {
        match self {
            Need::Tmux => program(None, &["tmux"]),
            Need::Slurm => SLURM_PROGRAMS
                .iter()
                .all(|b| program(None, &[b]).is_some())
                .then(|| program(None, &["sbatch"]))
                .flatten(),
            Need::Chromium => program(Some("TB_CHROMEDRIVER"), &["chromedriver"]).and(program(
                Some("TB_CHROMIUM"),
                &["chromium", "chromium-browser", "google-chrome"],
            )),
            Need::Python => python_with(
                "TB_PYTHON",
                "py-venv",
                true,
                "import sys; assert sys.version_info >= (3, 11)",
            ),
            Need::PythonMcp => python_with(
                "TB_PYTHON",
                "py-venv",
                true,
                "import mcp.server.fastmcp, mcp.server.sse, mcp.client.streamable_http, mcp.client.session, uvicorn, anyio",
            ),
            Need::PythonK8s => python_with(
                "TB_K8S_PYTHON",
                "py-k8s",
                false,
                "import kubernetes_validate",
            ),
            Need::PythonOpenenv => python_with(
                "TB_OPENENV_PYTHON",
                "py-openenv",
                true,
                "import importlib.metadata as m, re, openenv.core; v = tuple(int(re.match(r'\\d*', p).group() or 0) for p in m.version('openenv').split('.')[:3]); assert v >= (0, 4, 1), v",
            ),
            Need::PythonServers => python_with(
                "TB_SERVERS_PYTHON",
                "py-tbservers",
                false,
                "import fastmcp, odata_query, typesense, pydantic, email_validator, dateutil",
            ),
            Need::PythonReference => python_with(
                "TB_REFERENCE_PYTHON",
                "py-reference",
                false,
                "import pydantic, numpy, scipy, click, rich, yaml, httpx, azure.identity",
            ),
        }
    }
}

/// The programs of a one-node Slurm cluster with munge ([`Need::Slurm`]).
pub const SLURM_PROGRAMS: [&str; 8] = [
    "munged",
    "slurmctld",
    "slurmd",
    "sbatch",
    "scancel",
    "scontrol",
    "squeue",
    "sinfo",
];

/// A program: the file `$env` names, else the first of `names` found on `PATH` or in
/// `/usr/sbin`, `/usr/bin`, `/sbin` (daemons such as `slurmctld` live in an `sbin` that a
/// user's `PATH` may lack).
pub fn program(env: Option<&str>, names: &[&str]) -> Option<PathBuf> {
    if let Some(p) = env.and_then(var).filter(|p| p.is_file()) {
        return Some(p);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/usr/bin", "/sbin"].map(PathBuf::from))
        .flat_map(|d| names.iter().map(move |n| d.join(n)))
        .find(|p| p.is_file())
}

/// The first Python of `$var`, `target/<venv>/bin/python` and (when `system`) `python3` that
/// runs `probe`.
pub fn python_with(var_name: &str, venv: &str, system: bool, probe: &str) -> Option<PathBuf> {
    var(var_name)
        .into_iter()
        .chain([workspace_root().join(format!("target/{venv}/bin/python"))])
        .chain(system.then(|| PathBuf::from("python3")))
        .find(|py| {
            std::process::Command::new(py)
                .args(["-c", probe])
                .output()
                .is_ok_and(|o| o.status.success())
        })
}
