//! Decides, once per build, whether the gated test attributes mark tests `#[ignore]`d.
//!
//! - `tb_no_data`: no benchmark data found; `tb_no_shared`: the shared folder (data and the
//!   recorded reference behaviour) not found. Neither is ever set when `CI` is set: in CI a
//!   missing dataset makes the tests run and fail.
//! - `tb_no_reference`: the reference's code checkouts (framework and full data checkout) not
//!   found. Set in CI too: a fresh machine cannot have them.
//! - `tb_no_adapter`: the OpenEnv ThinkingBox adapter's client checkout or its Python not
//!   found. Set in CI too.
//! - `tb_no_adapter_eval`: the adapter's evaluator (`thinkingbox-eval`) not found. Set in CI too.
//! - `TB_TEST_MISSING` (an environment variable of this crate's build, read by `#[needs]`): the
//!   names of the programs and Python environments (`lookup::Need`) not found, comma-separated.
//!   Always empty in CI: there a missing one makes the tests run and fail.

#[path = "../tb-test-support/src/lookup.rs"]
mod lookup;

fn main() {
    println!(
        "cargo::rustc-check-cfg=cfg(tb_no_data, tb_no_shared, tb_no_reference, tb_no_adapter, tb_no_adapter_eval)"
    );
    for var in [
        "TB_SHARED",
        "THINKINGBOX_DATA",
        "THINKINGBOX_FRAMEWORK",
        "THINKINGBOX_REFERENCE_DATA",
        "TB_OPENENV_ADAPTER",
        "TB_OPENENV_ADAPTER_PYTHON",
        "TB_OPENENV_EVAL",
        "HOME",
        "CI",
    ]
    .into_iter()
    .chain(
        lookup::Need::ALL
            .iter()
            .flat_map(|n| n.vars().iter().copied()),
    ) {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rerun-if-changed=../tb-test-support/src/lookup.rs");
    // A found folder is watched through one small file (not its directory, which Cargo would
    // scan file by file on every build); a missing one is not watched at all, because Cargo
    // reruns build scripts every time for a watched path that does not exist. Adding a folder
    // later needs one of the variables above set or changed, or a
    // `touch crates/tb-test-support/src/lookup.rs`.
    let data = lookup::data_root();
    let shared = lookup::shared_dir();
    if lookup::data_present(&data) {
        watch(&data.join("servers/servers.yaml"));
    } else if !lookup::in_ci() {
        println!("cargo::rustc-cfg=tb_no_data");
    }
    if lookup::shared_present(&shared) {
        watch(&shared.join("tb-bench-v1/README.md"));
    } else if !lookup::in_ci() {
        println!("cargo::rustc-cfg=tb_no_shared");
    }
    match (lookup::framework_root(), lookup::reference_data_root()) {
        (Some(f), Some(d))
            if lookup::framework_present(&f) && lookup::reference_data_present(&d) =>
        {
            watch(&f.join("thinkingbox/common/judge.py"));
            watch(&d.join("servers/tb_business_ops_servers_202606/pyproject.toml"));
        }
        _ => println!("cargo::rustc-cfg=tb_no_reference"),
    }
    match lookup::adapter_root() {
        Some(r) if lookup::adapter_present() => watch(&r.join("thinkingbox_env/client.py")),
        _ => println!("cargo::rustc-cfg=tb_no_adapter"),
    }
    match lookup::adapter_eval() {
        Some(e) if lookup::adapter_eval_present() => watch(&e),
        _ => println!("cargo::rustc-cfg=tb_no_adapter_eval"),
    }
    // Programs on PATH are not watched (PATH differs between shells and tools; a change would
    // rebuild every test): installing one later needs the `touch` above, which
    // scripts/ci-python-deps.sh does for its venvs.
    let mut missing = Vec::new();
    if !lookup::in_ci() {
        for need in lookup::Need::ALL {
            match need.find() {
                Some(p) if p.starts_with(lookup::workspace_root()) => watch(&p),
                Some(_) => {}
                None => missing.push(need.name()),
            }
        }
    }
    println!("cargo::rustc-env=TB_TEST_MISSING={}", missing.join(","));
}

fn watch(file: &std::path::Path) {
    if file.is_file() {
        println!("cargo::rerun-if-changed={}", file.display());
    }
}
