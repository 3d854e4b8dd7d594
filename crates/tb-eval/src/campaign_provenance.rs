//! Provenance of a campaign: what a result depends on, as hashes anyone can recompute.
//!
//! - the **bundle hash**: sha256 over every dataset file the run read (test list, test-case
//!   files, scenarios, agent YAML) and every initial-data file the tools load, in sorted
//!   path order; each file contributes its path (relative to the data root, `/`-separated),
//!   a NUL, its length as 8 big-endian bytes and its bytes;
//! - the **config hash**: sha256 of the run settings that decide outcomes (the config with
//!   secrets removed, the agent, the clock, the budgets) as canonical JSON (object keys
//!   sorted, no spaces);
//! - the **test-list hash**: sha256 of the task ids in run order, one per line;
//! - git commits of the data root (when it is inside a checkout).

use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Every file a run over `ds` depends on: the dataset files read so far
/// ([`tb_dataset::Dataset::loaded_files`]) and each domain's initial-data files under the
/// data root, sorted and deduplicated.
pub fn bundle_files(ds: &tb_dataset::Dataset) -> Vec<PathBuf> {
    let mut files = ds.loaded_files();
    let toolslib = tb_domains::toolslib(ds.root());
    if let Ok(domains) = tb_domains::all() {
        for d in domains {
            for t in d.layout().tables() {
                let (dir, stem) = t.file.rsplit_once('/').unwrap_or(("", &t.file));
                let p = toolslib
                    .join(dir)
                    .join("initial_data")
                    .join(format!("{stem}.json"));
                if p.is_file() {
                    files.push(p);
                }
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The name a bundle file is hashed under: its path relative to `root` with `/`
/// separators, or `external/<file name>` for a file outside the root (a test list kept
/// elsewhere), so that the hash does not depend on where the data is mounted.
pub fn bundle_name(root: &Path, file: &Path) -> String {
    match file.strip_prefix(root) {
        Ok(rel) => rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join("/"),
        Err(_) => format!(
            "external/{}",
            file.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
    }
}

/// The bundle hash of `files` under `root` (see the module docs), `sha256:<hex>`.
pub fn bundle_hash(root: &Path, files: &[PathBuf]) -> std::io::Result<String> {
    let mut named: Vec<(String, &PathBuf)> =
        files.iter().map(|f| (bundle_name(root, f), f)).collect();
    named.sort();
    let mut h = Sha256::new();
    for (name, path) in named {
        let bytes = std::fs::read(path)?;
        h.update(name.as_bytes());
        h.update([0u8]);
        h.update((bytes.len() as u64).to_be_bytes());
        h.update(&bytes);
    }
    Ok(format!("sha256:{}", hex(&h.finalize())))
}

/// `v` as canonical JSON: object keys sorted at every level, no whitespace.
pub fn canonical_json(v: &Value) -> String {
    fn sort(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                let mut out = Map::new();
                for k in keys {
                    out.insert(k.clone(), sort(&m[k]));
                }
                Value::Object(out)
            }
            Value::Array(a) => Value::Array(a.iter().map(sort).collect()),
            other => other.clone(),
        }
    }
    sort(v).to_string()
}

/// sha256 of the canonical JSON of `v`, `sha256:<hex>`.
pub fn json_hash(v: &Value) -> String {
    format!(
        "sha256:{}",
        hex(&Sha256::digest(canonical_json(v).as_bytes()))
    )
}

/// sha256 of the task ids, one per line, `sha256:<hex>`.
pub fn test_list_hash<S: AsRef<str>>(ids: &[S]) -> String {
    let mut h = Sha256::new();
    for id in ids {
        h.update(id.as_ref().as_bytes());
        h.update(b"\n");
    }
    format!("sha256:{}", hex(&h.finalize()))
}

/// The git state of the checkout holding `dir`, if any: `{commit, dirty, toplevel}`
/// (`dirty` when files under `dir` differ from the commit). None when `dir` is not in a
/// git work tree or `git` is not installed.
pub fn git_state(dir: &Path) -> Option<Value> {
    let git = |args: &[&str]| -> Option<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let commit = git(&["rev-parse", "HEAD"])?;
    let toplevel = git(&["rev-parse", "--show-toplevel"]).unwrap_or_default();
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no", "--", "."]).map(|s| !s.is_empty());
    Some(serde_json::json!({"commit": commit, "dirty": dirty, "toplevel": toplevel}))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        let a = json!({"b": 1, "a": {"y": [1, {"d": 0, "c": 1}], "x": null}});
        let b = json!({"a": {"x": null, "y": [1, {"c": 1, "d": 0}]}, "b": 1});
        assert_eq!(canonical_json(&a), canonical_json(&b));
        assert_eq!(
            canonical_json(&a),
            r#"{"a":{"x":null,"y":[1,{"c":1,"d":0}]},"b":1}"#
        );
        assert_eq!(json_hash(&a), json_hash(&b));
        assert_ne!(json_hash(&a), json_hash(&json!({"b": 2})));
    }

    #[test]
    fn bundle_hash_depends_on_names_and_bytes_not_on_the_mount_point() {
        let d1 = tempfile::tempdir().unwrap();
        let d2 = tempfile::tempdir().unwrap();
        for d in [&d1, &d2] {
            std::fs::create_dir_all(d.path().join("dataset")).unwrap();
            std::fs::write(d.path().join("dataset/a.yaml"), "a: 1\n").unwrap();
            std::fs::write(d.path().join("b.json"), "[]").unwrap();
        }
        let files =
            |d: &tempfile::TempDir| vec![d.path().join("b.json"), d.path().join("dataset/a.yaml")];
        let h1 = bundle_hash(d1.path(), &files(&d1)).unwrap();
        assert_eq!(h1, bundle_hash(d2.path(), &files(&d2)).unwrap());
        std::fs::write(d2.path().join("b.json"), "[1]").unwrap();
        assert_ne!(h1, bundle_hash(d2.path(), &files(&d2)).unwrap());
        assert_eq!(
            bundle_name(d1.path(), &d1.path().join("dataset/a.yaml")),
            "dataset/a.yaml"
        );
        assert_eq!(
            bundle_name(d1.path(), Path::new("/elsewhere/list.yaml")),
            "external/list.yaml"
        );
        assert!(bundle_hash(d1.path(), &[d1.path().join("missing")]).is_err());
    }

    #[test]
    fn test_list_hash_is_order_sensitive() {
        assert_ne!(test_list_hash(&["a", "b"]), test_list_hash(&["b", "a"]));
        assert_eq!(test_list_hash(&["a", "b"]), test_list_hash(&["a", "b"]));
    }
}
