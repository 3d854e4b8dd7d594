//! The surface cache never changes what the model is shown: the reference surface resolved
//! through a cold cache (read and stored) and a warm one (loaded) equals the one read from the
//! checkout's sources without a cache, tool list by tool list, key order included; a change
//! in the checkout's `servers/` tree is a miss that reads the sources again.

use std::path::Path;
use tb_eval::surface::{Surface, SurfaceMode};

fn lists(s: &Surface) -> String {
    serde_json::to_string(
        &s.servers
            .iter()
            .map(|(n, l)| (n.clone(), l.as_ref().clone()))
            .collect::<Vec<_>>(),
    )
    .unwrap()
}

fn cache_files(dir: &Path) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[tb_test_support::reference_test]
#[test]
fn cached_reference_surface_equals_the_uncached_one() {
    let root = tb_test_support::reference_data();
    let cache = tempfile::tempdir().unwrap();
    let uncached = Surface::resolve_with_cache(&SurfaceMode::Reference, &root, None).unwrap();
    assert!(cache_files(cache.path()).is_empty());
    let cold =
        Surface::resolve_with_cache(&SurfaceMode::Reference, &root, Some(cache.path())).unwrap();
    let files = cache_files(cache.path());
    assert_eq!(files.len(), 1, "the cold run stores the surface: {files:?}");
    let stored = std::fs::metadata(&files[0]).unwrap().modified().unwrap();
    let warm =
        Surface::resolve_with_cache(&SurfaceMode::Reference, &root, Some(cache.path())).unwrap();
    assert_eq!(
        std::fs::metadata(&files[0]).unwrap().modified().unwrap(),
        stored,
        "the warm run loads the cache, it does not rewrite it"
    );
    for s in [&cold, &warm] {
        assert_eq!(s.kind, uncached.kind);
        assert_eq!(lists(s), lists(&uncached));
        assert_eq!(s.server_hashes(), uncached.server_hashes());
        assert_eq!(s.provenance(), uncached.provenance());
    }
    // `auto` on a checkout with sources is the same reference surface.
    let auto = Surface::resolve_with_cache(&SurfaceMode::Auto, &root, Some(cache.path())).unwrap();
    assert_eq!(lists(&auto), lists(&uncached));
}

/// The cache file's key (it names the checkout state it was built from).
fn stored_key(dir: &Path) -> String {
    let files = cache_files(dir);
    assert_eq!(files.len(), 1, "{files:?}");
    // The file's first line is its header (format, key, checksum); the lists follow.
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let header = text.lines().next().unwrap();
    let doc: serde_json::Value = serde_json::from_str(header).unwrap();
    doc["key"].as_str().unwrap().to_string()
}

/// In a copy of the servers tree, an edit to one Python file is a miss: the surface is read
/// again (and equals an uncached read) and stored under a new key.
#[tb_test_support::reference_test]
#[test]
fn a_changed_checkout_misses_the_cache() {
    let root = tb_test_support::reference_data();
    let copy = tempfile::tempdir().unwrap();
    copy_tree(&root.join("servers"), &copy.path().join("servers"));
    let cache = tempfile::tempdir().unwrap();
    Surface::resolve_with_cache(&SurfaceMode::Reference, copy.path(), Some(cache.path())).unwrap();
    let k1 = stored_key(cache.path());
    let yaml = copy.path().join("servers/servers.yaml");
    let text = std::fs::read_to_string(&yaml).unwrap();
    std::fs::write(&yaml, format!("{text}\n# edited\n")).unwrap();
    let second =
        Surface::resolve_with_cache(&SurfaceMode::Reference, copy.path(), Some(cache.path()))
            .unwrap();
    let k2 = stored_key(cache.path());
    assert_ne!(k1, k2, "the edit is a miss, stored under a new key");
    let uncached = Surface::resolve_with_cache(&SurfaceMode::Reference, copy.path(), None).unwrap();
    assert_eq!(lists(&second), lists(&uncached));
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let p = e.path();
        if p.is_dir() {
            copy_tree(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}
