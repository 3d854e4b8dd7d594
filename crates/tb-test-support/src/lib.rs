//! Dev-only helpers for the workspace's tests (a dev-dependency only; never shipped).
//!
//! - Where the benchmark data is: [`shared`] (`$TB_SHARED`, else `shared` beside the
//!   workspace) and [`data`] (`$THINKINGBOX_DATA`, else `thinkingbox-data` in it).
//! - Three kinds of tests. Tests on our own code and fixtures need nothing and always run.
//!   Tests on the benchmark's data are marked `#[tb_test_support::data_test]` (needs the data
//!   of thinkingbox-data) or `#[tb_test_support::shared_test]` (needs the shared folder: the
//!   data and `tb-bench-v1`): when the data was not found at build time and `CI` is unset, they
//!   are compiled `#[ignore]`d, so libtest reports them as ignored, never as passed; in CI
//!   (`CI=true`) they are never ignored and missing data fails them. Tests on the reference's
//!   code are marked `#[tb_test_support::reference_test]`: they need checkouts of the
//!   framework ([`framework`]) and of the full data repository ([`reference_data`]), which a
//!   fresh machine cannot have, so they are ignored wherever those are not found, CI
//!   included. The decisions are made by the build script of `tb-test-macros` (libtest has no
//!   skip at run time); it reruns when `TB_SHARED`, `THINKINGBOX_DATA`,
//!   `THINKINGBOX_FRAMEWORK`, `THINKINGBOX_REFERENCE_DATA`, `HOME` or `CI` change.
//! - Tests that drive a program or a Python environment of the machine (tmux, Slurm, Chromium,
//!   the venvs `scripts/ci-python-deps.sh` makes) are marked `#[tb_test_support::needs(...)]`
//!   with the [`Need`]s' names and get the program from [`need`]: like `data_test`, ignored
//!   with the reason outside CI when it was not found at build time, run (and failing) in CI.
//! - [`REPLAY_CLOCK`]: the time the reference traces were recorded at.

#[path = "lookup.rs"]
mod lookup;

pub use lookup::{
    Need, SLURM_PROGRAMS, data_present, in_ci, program, reference_present, shared_present,
    workspace_root,
};
use std::path::PathBuf;
pub use tb_test_macros::{
    adapter_eval_test, adapter_test, data_test, needs, reference_test, shared_test,
};

/// The OpenEnv ThinkingBox adapter's evaluator (`thinkingbox-eval`). Panics when it is not
/// there: call it from `#[adapter_eval_test]`s only.
pub fn adapter_eval() -> PathBuf {
    assert!(
        lookup::adapter_eval_present(),
        "thinkingbox-eval not found; set TB_OPENENV_EVAL"
    );
    lookup::adapter_eval().unwrap_or_default()
}

/// Where `need` is (the program, or the Python interpreter). Panics, saying what is missing and
/// how to get it, when it is not there: call it from tests marked `#[needs(...)]` with it.
pub fn need(need: Need) -> PathBuf {
    need.find().unwrap_or_else(|| {
        panic!(
            "{} ({})",
            need.how(),
            if in_ci() {
                "CI needs it"
            } else {
                "it was there when the tests were built"
            }
        )
    })
}

/// Runs a workspace binary (`env!("CARGO_BIN_EXE_tb")`, which only its own crate's tests can
/// name) with `args`, without the caller's `THINKINGBOX_DATA` (a test names its data) and with
/// `TB_LOG=error`, then `envs` (which may set either again): its exit code (-1 when a signal
/// ended it) and its stdout followed by its stderr.
pub fn tb(exe: &str, args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    let out = std::process::Command::new(exe)
        .args(args)
        .env_remove("THINKINGBOX_DATA")
        .env("TB_LOG", "error")
        .envs(envs.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("{exe} does not run: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// The OpenEnv ThinkingBox adapter's client: (the folder holding `thinkingbox_env/`, the
/// Python to run it with). Panics when they are not there: call it from `#[adapter_test]`s
/// only.
pub fn adapter() -> (PathBuf, PathBuf) {
    assert!(
        lookup::adapter_present(),
        "no OpenEnv adapter client checkout and Python; set TB_OPENENV_ADAPTER and TB_OPENENV_ADAPTER_PYTHON"
    );
    (
        lookup::adapter_root().unwrap_or_default(),
        lookup::adapter_python().unwrap_or_default(),
    )
}

/// The benchmark's test list (507 tasks), relative to the data root.
pub const V1_TEST_LIST: &str = "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml";

/// A child process that is killed and reaped when this is dropped (a server a test started);
/// it derefs to the [`std::process::Child`].
pub struct Reaped(pub std::process::Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

impl std::ops::Deref for Reaped {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Reaped {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

/// The instant the recorded reference traces (`tb-bench-v1/traces`) were taken at; replays and
/// golden hashes need tools to see this time.
pub const REPLAY_CLOCK: &str = "2026-11-30T12:00:00Z";

/// The shared folder (`$TB_SHARED`, else `shared` beside the workspace), holding the
/// benchmark's data (`thinkingbox-data`) and what the reference produced on it
/// (`tb-bench-v1`). Panics, naming the path and the variable, when it is not there: call it
/// from `#[shared_test]`s only.
pub fn shared() -> PathBuf {
    let p = lookup::shared_dir();
    assert!(
        shared_present(&p),
        "the shared folder (thinkingbox-data, tb-bench-v1) is not at {}; set TB_SHARED",
        p.display()
    );
    p
}

/// The reference framework's checkout (microsoft/thinkingbox at the commit the parity tests
/// were recorded with): `$THINKINGBOX_FRAMEWORK`, else
/// `~/.cache/thinkingbox-rs/reference/thinkingbox`. Panics, naming where it looked, when it
/// is not there: call it from `#[reference_test]`s only.
pub fn framework() -> PathBuf {
    let p = lookup::framework_root().unwrap_or_default();
    assert!(
        lookup::framework_present(&p),
        "the reference framework checkout is not at {:?}; set THINKINGBOX_FRAMEWORK",
        p.display()
    );
    p
}

/// A full checkout of the data repository, the servers' Python sources included
/// (microsoft/thinkingbox-data at its release tag): `$THINKINGBOX_REFERENCE_DATA`, else
/// `~/.cache/thinkingbox-rs/reference/thinkingbox-data`. Panics, naming where it looked, when
/// it is not there: call it from `#[reference_test]`s only.
pub fn reference_data() -> PathBuf {
    let p = lookup::reference_data_root().unwrap_or_default();
    assert!(
        lookup::reference_data_present(&p),
        "no full thinkingbox-data checkout (with servers/**/*.py) at {:?}; set THINKINGBOX_REFERENCE_DATA",
        p.display()
    );
    p
}

/// The thinkingbox-data checkout (`$THINKINGBOX_DATA`, else `thinkingbox-data` in the shared
/// folder). Panics, naming the path and the variables, when it is not there: call it from
/// `#[data_test]`s (or `#[shared_test]`s) only.
pub fn data() -> PathBuf {
    let p = lookup::data_root();
    assert!(
        data_present(&p),
        "benchmark data (a thinkingbox-data checkout) not found at {}; set THINKINGBOX_DATA or TB_SHARED",
        p.display()
    );
    p
}

/// The JSON values of a JSON Lines file (the recorded traces and task configs of
/// `tb-bench-v1`), one per non-blank line that parses; none when the file cannot be read.
pub fn json_lines(path: &std::path::Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(path)
        .map(|t| {
            t.lines()
                .filter(|l| !l.trim().is_empty())
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// `text` as a regular expression matching exactly itself, for insta filters that redact a
/// path (a temporary directory, the checkout) from a snapshot.
pub fn regex_literal(text: &str) -> String {
    text.chars()
        .flat_map(|c| {
            let special = "\\.+*?()|[]{}^$".contains(c);
            special.then_some('\\').into_iter().chain([c])
        })
        .collect()
}

/// `text` with each path of `paths` (as given and canonicalized, longest first) shown as its
/// placeholder, e.g. `[TMP]` for a temporary directory: for snapshots that must not depend on
/// the machine (temporary dirs, the checkout, the data root) while keeping the rest of the
/// text exact.
pub fn redact(text: &str, paths: &[(&std::path::Path, &str)]) -> String {
    let mut pairs: Vec<(String, &str)> = Vec::new();
    for (p, name) in paths {
        pairs.push((p.display().to_string(), name));
        if let Ok(c) = p.canonicalize() {
            pairs.push((c.display().to_string(), name));
        }
    }
    pairs.retain(|(p, _)| !p.is_empty());
    pairs.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
    pairs
        .iter()
        .fold(text.to_string(), |t, (p, name)| t.replace(p.as_str(), name))
}

/// The tiny library fixture (`crates/tb-external/tests/fixtures/tiny_library`): a data root in
/// the reference's layout whose one server is our small library server on the official MCP
/// Python SDK, for the external-server tests of several crates.
pub mod tiny_library {
    use std::path::{Path, PathBuf};

    /// The tools the fixture's scenario grants, sorted: not the server's
    /// `secret_admin_reset`, nor its reserved tools.
    pub const GRANTED: [&str; 7] = [
        "crash_server",
        "emit_garbage",
        "get_book",
        "hang_forever",
        "lend_book",
        "list_loans",
        "return_book",
    ];

    /// The fixture's folder (a data root, with its `servers.yaml` and `server/`).
    pub fn root() -> PathBuf {
        super::workspace_root().join("crates/tb-external/tests/fixtures/tiny_library")
    }

    /// Writes `dir/servers.yaml` registering the library server with `marker` on its command
    /// line (so one test's processes can be counted apart from another's), plus `extra` YAML
    /// lines of the server's entry (e.g. `    env: {...}`); its path. The server is passed
    /// `$TINY_TEARDOWN_LOG` from the caller's environment.
    pub fn servers_file(dir: &Path, marker: &str, extra: &str) -> PathBuf {
        let script = root().join("server/tiny_library.py");
        let p = dir.join("servers.yaml");
        std::fs::write(
            &p,
            format!(
                "servers:\n  tiny_library:\n    type: mcp-process\n    command: [\"{{python}}\", \"{}\", \"{marker}\"]\n    pass_env: [TINY_TEARDOWN_LOG]\n{extra}",
                script.display()
            ),
        )
        .expect("write servers.yaml");
        p
    }

    /// Live processes whose command line holds `marker`, by pid. A zombie's command line is
    /// empty, so it is not counted: to check that a process was reaped, wait for its
    /// `/proc/<pid>` to go.
    pub fn pids_with(marker: &str) -> Vec<i32> {
        let mut out = Vec::new();
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return out;
        };
        for e in dir.flatten() {
            let Ok(pid) = e.file_name().to_string_lossy().parse::<i32>() else {
                continue;
            };
            if std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
            {
                out.push(pid);
            }
        }
        out
    }
}
