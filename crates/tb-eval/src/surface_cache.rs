//! A cache of the reference surface (every server's tool list as [`crate::surface`] builds
//! it from the checkout's Python sources), so start-up does not parse the servers' sources
//! each time.
//!
//! One file per data root under the user's cache dir (`$TB_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/thinkingbox-rs`, else `~/.cache/thinkingbox-rs`), `surface-<sha>.json`.
//! It is used only when its key matches: a sha256 over the cache format, the running
//! executable (path, size, modification time: a rebuilt `tb` reads the sources again) and
//! every entry of the checkout's `servers/` tree (relative path; a file's size and modification
//! time in nanoseconds; `__pycache__` left out), so any edit, added or removed file or
//! checkout invalidates it. The stored lists carry their own sha256 (over the stored bytes),
//! checked on load; a file
//! that does not parse, or whose key or checksum differs, is a miss and is rewritten. A hit
//! gives exactly the lists the reader would build (serde_json keeps key order and float
//! text), each with the sha256 of its compact JSON (`list_sha256`, what
//! [`crate::surface::Surface::server_hashes`] reports), stored beside it under the same
//! checksum so a hit does not serialise and hash the lists again. `TB_SURFACE_CACHE=off`
//! disables it.

use serde_json::Value;
#[cfg(test)]
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

/// Bumped when what is cached changes shape or meaning.
const FORMAT: &str = "tb-surface-cache-3";

/// One server's tool list, as [`crate::surface::Surface::servers`] holds it.
pub(crate) type Lists = Vec<(String, Vec<Value>)>;

/// Per server: its name, the sha256 of its list ([`list_sha256`]) and the list.
pub(crate) type Hashed = Vec<(String, String, Vec<Value>)>;

/// The sha256 (hex) of a tool list as clients get it: compact JSON.
pub(crate) fn list_sha256(list: &[Value]) -> String {
    let bytes = serde_json::to_vec(list).unwrap_or_default();
    tb_core::sha256_hex(&bytes)
}

/// The lists with their hashes.
pub(crate) fn hashed(lists: Lists) -> Hashed {
    lists
        .into_iter()
        .map(|(n, l)| {
            let h = list_sha256(&l);
            (n, h, l)
        })
        .collect()
}

/// The cache directory, or `None` when caching is off or there is no home.
pub(crate) fn cache_dir() -> Option<PathBuf> {
    if std::env::var("TB_SURFACE_CACHE").is_ok_and(|v| v == "off" || v == "0") {
        return None;
    }
    let nonempty = |k: &str| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    nonempty("TB_CACHE_DIR")
        .or_else(|| nonempty("XDG_CACHE_HOME").map(|d| d.join("thinkingbox-rs")))
        .or_else(|| nonempty("HOME").map(|d| d.join(".cache/thinkingbox-rs")))
}

fn mtime_ns(m: &std::fs::Metadata) -> u128 {
    m.modified()
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos())
}

/// Appends every entry under `dir` (sorted, recursively) to `out`. Each entry's type comes
/// from the directory listing and a file's size and mtime from `DirEntry::metadata` (a stat
/// relative to the open directory); only a symlink is followed with a stat of its path, as the
/// reader follows it when it opens files.
fn walk(base: &Path, dir: &Path, depth: usize, out: &mut String) -> std::io::Result<()> {
    use std::fmt::Write as _;
    if depth > 32 {
        return Ok(());
    }
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(std::fs::DirEntry::file_name);
    for e in entries {
        let name = e.file_name();
        if name == "__pycache__" {
            continue;
        }
        let path = e.path();
        let rel = path.strip_prefix(base).unwrap_or(&path).display();
        let ty = e.file_type()?;
        let (is_dir, meta) = if ty.is_symlink() {
            let m = std::fs::metadata(&path)?;
            (m.is_dir(), Some(m))
        } else if ty.is_dir() {
            (true, None)
        } else {
            (false, Some(e.metadata()?))
        };
        if is_dir {
            // A folder by its name only: its entries are listed (a folder's own mtime
            // changes when Python writes `__pycache__`, which is not an input).
            let _ = writeln!(out, "d {:?}", rel.to_string());
            walk(base, &path, depth + 1, out)?;
        } else if let Some(m) = meta {
            let _ = writeln!(out, "f {:?} {} {}", rel.to_string(), m.len(), mtime_ns(&m));
        }
    }
    Ok(())
}

/// The key of the surface of `data_root` for this executable, or `None` when it cannot be
/// computed (then the cache is not used).
pub(crate) fn key(data_root: &Path) -> Option<String> {
    let mut text = format!("{FORMAT}\n");
    let exe = std::env::current_exe().ok()?;
    let m = std::fs::metadata(&exe).ok()?;
    let exe = exe.display().to_string();
    text.push_str(&format!("exe {exe:?} {} {}\n", m.len(), mtime_ns(&m)));
    let root = data_root.canonicalize().ok()?;
    text.push_str(&format!("root {:?}\n", root.display().to_string()));
    let servers = root.join("servers");
    walk(&root, &servers, 0, &mut text).ok()?;
    Some(tb_core::sha256_hex(text.as_bytes()))
}

/// The cache file of a data root.
fn file_of(dir: &Path, data_root: &Path) -> PathBuf {
    let root = data_root
        .canonicalize()
        .unwrap_or_else(|_| data_root.to_path_buf());
    let h = tb_core::sha256_hex(root.display().to_string().as_bytes());
    dir.join(format!("surface-{}.json", &h[..16]))
}

/// The cache file: one line of JSON (format, key, data root, the sha256 of the rest), a
/// newline, then the lists (per server: name, the list's sha256, the list) as compact JSON. The checksum is taken over the stored bytes, so a
/// hit parses the lists once, straight into their type.
#[derive(serde::Serialize, serde::Deserialize)]
struct Header {
    format: String,
    key: String,
    data_root: String,
    servers_sha256: String,
}

/// The cached lists of `data_root` under `key`, if the cache holds them intact.
pub(crate) fn load(dir: &Path, data_root: &Path, key: &str) -> Option<Hashed> {
    let bytes = std::fs::read(file_of(dir, data_root)).ok()?;
    let nl = bytes.iter().position(|&b| b == b'\n')?;
    let (head, rest) = bytes.split_at(nl);
    let header: Header = serde_json::from_slice(head).ok()?;
    if header.format != FORMAT || header.key != key {
        return None;
    }
    let servers = rest.get(1..)?;
    if header.servers_sha256 != tb_core::sha256_hex(servers) {
        return None;
    }
    serde_json::from_slice(servers).ok()
}

/// Stores the lists (best effort: a cache that cannot be written is not an error).
pub(crate) fn store(dir: &Path, data_root: &Path, key: &str, lists: &Hashed) {
    let Ok(servers) = serde_json::to_vec(lists) else {
        return;
    };
    let header = Header {
        format: FORMAT.into(),
        key: key.into(),
        data_root: data_root.display().to_string(),
        servers_sha256: tb_core::sha256_hex(&servers),
    };
    let Ok(mut text) = serde_json::to_vec(&header) else {
        return;
    };
    text.push(b'\n');
    text.extend_from_slice(&servers);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let file = file_of(dir, data_root);
    // Written beside, then renamed: a reader never sees half a file.
    let tmp = file.with_extension(format!("tmp{}", std::process::id()));
    if std::fs::write(&tmp, text).is_ok() && std::fs::rename(&tmp, &file).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_follows_the_servers_tree() {
        let d = tempfile::tempdir().unwrap();
        let pkg = d.path().join("servers/dist/pkg");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("__init__.py"), "").unwrap();
        let k1 = key(d.path()).unwrap();
        assert_eq!(key(d.path()).unwrap(), k1, "same tree, same key");
        std::fs::create_dir_all(pkg.join("__pycache__")).unwrap();
        std::fs::write(pkg.join("__pycache__/x.pyc"), "x").unwrap();
        assert_eq!(key(d.path()).unwrap(), k1, "__pycache__ is not an input");
        std::fs::write(pkg.join("tools.py"), "X = 1\n").unwrap();
        let k2 = key(d.path()).unwrap();
        assert_ne!(k2, k1, "an added file");
        std::fs::write(pkg.join("tools.py"), "X = 22\n").unwrap();
        let k3 = key(d.path()).unwrap();
        assert_ne!(k3, k2, "an edited file");
        std::fs::remove_file(pkg.join("tools.py")).unwrap();
        assert_ne!(key(d.path()).unwrap(), k3, "a removed file");
    }

    #[test]
    fn store_then_load_and_misses() {
        let d = tempfile::tempdir().unwrap();
        let cache = d.path().join("cache");
        let lists = hashed(vec![(
            "s".into(),
            vec![
                json!({"name": "t", "description": "d", "inputSchema": {"z": 1.5, "a": [1, "x"]}}),
            ],
        )]);
        assert_eq!(
            lists[0].1,
            tb_core::sha256_hex(serde_json::to_string(&lists[0].2).unwrap().as_bytes())
        );
        store(&cache, d.path(), "k", &lists);
        assert_eq!(load(&cache, d.path(), "k").unwrap(), lists);
        assert!(load(&cache, d.path(), "other").is_none(), "another key");
        // A cache whose lists were changed is a miss.
        let f = file_of(&cache, d.path());
        let text = std::fs::read_to_string(&f)
            .unwrap()
            .replace("\"d\"", "\"e\"");
        std::fs::write(&f, text).unwrap();
        assert!(load(&cache, d.path(), "k").is_none(), "checksum");
        // So is one whose stored hash was changed.
        store(&cache, d.path(), "k", &lists);
        let text = std::fs::read_to_string(&f)
            .unwrap()
            .replace(&lists[0].1, &"0".repeat(64));
        std::fs::write(&f, text).unwrap();
        assert!(
            load(&cache, d.path(), "k").is_none(),
            "checksum over the hashes"
        );
        std::fs::write(&f, "{").unwrap();
        assert!(load(&cache, d.path(), "k").is_none(), "not JSON");
    }
}
