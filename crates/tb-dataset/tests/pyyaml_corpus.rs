//! Differential check against PyYAML on a directory of `NNNNN.yaml` + `NNNNN.json` pairs
//! (the JSON holds `{"ok": <safe_load result>}` or `{"err": "..."}`), generated with PyYAML.
//! Set `TB_YAML_CORPUS=<dir>` to run it on a large corpus; the committed fixtures
//! (`tests/fixtures/yaml`) always run.

use serde_json::Value;
use std::path::Path;

fn run_dir(dir: &Path) -> (usize, Vec<String>) {
    let mut n = 0;
    let mut failures = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("corpus dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    entries.sort();
    for y in entries {
        let src = std::fs::read_to_string(&y).expect("read yaml");
        let exp: Value =
            serde_json::from_str(&std::fs::read_to_string(y.with_extension("json")).expect("json"))
                .expect("parse json");
        n += 1;
        let got = tb_dataset::yaml::load(&src);
        match (exp.get("ok"), got) {
            (Some(e), Ok(g)) if *e == g => {}
            (None, Err(_)) => {}
            (e, g) => failures.push(format!(
                "{}: expected {}, got {}",
                y.display(),
                e.map_or_else(
                    || format!("error {}", exp["err"]),
                    |v| {
                        let s = v.to_string();
                        s.chars().take(300).collect()
                    }
                ),
                match g {
                    Ok(v) => v.to_string().chars().take(300).collect(),
                    Err(e) => format!("error {e}"),
                }
            )),
        }
    }
    (n, failures)
}

#[test]
fn committed_fixtures_match_pyyaml() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml");
    if !dir.is_dir() {
        return;
    }
    let (n, failures) = run_dir(&dir);
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn external_corpus_matches_pyyaml() {
    let Some(dir) = std::env::var_os("TB_YAML_CORPUS") else {
        return;
    };
    let (n, failures) = run_dir(Path::new(&dir));
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
