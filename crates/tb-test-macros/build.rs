//! Decides, once per build, whether the data-gated test attributes mark tests `#[ignore]`d.
//!
//! Sets `tb_no_data` when no thinkingbox-data checkout is found and `tb_no_shared` when the
//! whole shared folder (data, recorded reference behaviour, framework) is not found, but never
//! when `CI` is set: in CI a missing dataset makes the tests run and fail.

#[path = "../tb-test-support/src/lookup.rs"]
mod lookup;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tb_no_data, tb_no_shared)");
    for var in ["TB_SHARED", "THINKINGBOX_DATA", "CI"] {
        println!("cargo::rerun-if-env-changed={var}");
    }
    println!("cargo::rerun-if-changed=../tb-test-support/src/lookup.rs");
    // A found dataset is watched through one small file (not its directory, which Cargo would
    // scan file by file on every build); a missing one is not watched at all, because Cargo
    // reruns build scripts every time for a watched path that does not exist. Adding the data
    // later needs one of the variables above set or changed, or a `touch crates/tb-test-support/src/lookup.rs`.
    let data = lookup::data_root();
    let shared = lookup::shared_dir();
    if lookup::data_present(&data) {
        println!(
            "cargo::rerun-if-changed={}",
            data.join("README.md").display()
        );
    } else if !lookup::in_ci() {
        println!("cargo::rustc-cfg=tb_no_data");
    }
    if lookup::shared_present(&shared) {
        println!(
            "cargo::rerun-if-changed={}",
            shared.join("tb-bench-v1/README.md").display()
        );
    } else if !lookup::in_ci() {
        println!("cargo::rustc-cfg=tb_no_shared");
    }
}
