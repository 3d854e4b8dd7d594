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
