// Shared by the library and its build script (`#[path]`-included there): where the data is.
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

/// Whether `root` looks like a thinkingbox-data checkout.
pub fn data_present(root: &Path) -> bool {
    root.join("dataset").is_dir() && root.join("servers").is_dir()
}

/// Whether `shared` holds the data, the recorded reference behaviour and the framework.
pub fn shared_present(shared: &Path) -> bool {
    data_present(&shared.join("thinkingbox-data"))
        && shared.join("tb-bench-v1/traces").is_dir()
        && shared.join("thinkingbox").is_dir()
}

/// Whether this runs in CI (`CI` set to anything but empty, `0` or `false`).
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "0" && !v.eq_ignore_ascii_case("false"))
}
