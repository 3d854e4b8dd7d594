//! Records the git commit `tb` is built from (`TB_GIT_COMMIT`, with `-dirty` when the work
//! tree had changes when this script last ran) for run provenance; `unknown` outside a
//! checkout or without git.
//!
//! Reruns only when the commit can have changed: `HEAD`, the branch ref it points to and
//! `packed-refs` (in the common git dir, so worktrees work too). Not on `.git/index`, which
//! every `git status` rewrites and which would relink `tb` on the next build.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = match git(&["rev-parse", "HEAD"]) {
        Some(c) => {
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            if dirty { format!("{c}-dirty") } else { c }
        }
        None => "unknown".to_string(),
    };
    println!("cargo:rustc-env=TB_GIT_COMMIT={commit}");
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        let common = git(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .unwrap_or_else(|| dir.clone());
        let mut watch = vec![format!("{dir}/HEAD"), format!("{common}/packed-refs")];
        if let Some(r) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{common}/{r}"));
        }
        // A watched file that does not exist makes cargo rerun this script on every build;
        // a ref that moves between loose and packed changes one that does exist.
        for f in watch.iter().filter(|f| std::path::Path::new(f).exists()) {
            println!("cargo:rerun-if-changed={f}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
