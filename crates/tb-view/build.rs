//! Marks the build `tb_no_chromium` when Chromium and chromedriver are not both found on PATH
//! (or at `TB_CHROMIUM`, `TB_CHROMEDRIVER`) outside CI, so the browser test is compiled as ignored with the reason; in CI (`CI` set)
//! the test always runs and fails without Chromium.

use std::path::Path;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(tb_no_chromium)");
    println!("cargo::rerun-if-env-changed=CI");
    println!("cargo::rerun-if-env-changed=TB_CHROMIUM");
    println!("cargo::rerun-if-env-changed=TB_CHROMEDRIVER");
    println!("cargo::rerun-if-env-changed=PATH");
    if std::env::var_os("CI").is_some() {
        return;
    }
    if !(found(
        "TB_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    ) && found("TB_CHROMEDRIVER", &["chromedriver"]))
    {
        println!("cargo::rustc-cfg=tb_no_chromium");
    }
}

fn found(env: &str, names: &[&str]) -> bool {
    if std::env::var_os(env).is_some_and(|p| Path::new(&p).is_file()) {
        return true;
    }
    std::env::var_os("PATH").is_some_and(|paths| {
        std::env::split_paths(&paths).any(|d| names.iter().any(|n| d.join(n).is_file()))
    })
}
