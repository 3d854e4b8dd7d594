//! Differential check against PyYAML on a directory of `NNNNN.yaml` + `NNNNN.json` pairs
//! (the JSON holds `{"ok": <safe_load result>}` or `{"err": "..."}`), generated with PyYAML.
//! Set `TB_YAML_CORPUS=<dir>` to run it on a large corpus; the committed fixtures
//! (`tests/fixtures/yaml`) always run.

use serde_json::Value;
use std::path::Path;

/// JSON equality where floats may differ in the last bit: serde_json (without its
/// `float_roundtrip` feature) does not always round decimal text correctly when reading the
/// expected values, while our YAML floats use Rust's correctly rounded parser.
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) if x.is_f64() || y.is_f64() => {
            match (x.as_f64(), y.as_f64()) {
                (Some(p), Some(q)) => p == q || ((p - q).abs() <= p.abs().max(q.abs()) * 4e-16),
                _ => false,
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((kp, vp), (kq, vq))| kp == kq && same(vp, vq))
        }
        _ => a == b,
    }
}

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
            (Some(e), Ok(g)) if same(e, &g) => {}
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

/// Asserts that every case of `dir` loads as PyYAML loaded it.
fn assert_dir_matches(dir: &Path) {
    let (n, failures) = run_dir(dir);
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn committed_fixtures_match_pyyaml() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml");
    if !dir.is_dir() {
        return;
    }
    assert_dir_matches(&dir);
}

#[test]
fn external_corpus_matches_pyyaml() {
    let Some(dir) = std::env::var_os("TB_YAML_CORPUS") else {
        return;
    };
    assert_dir_matches(Path::new(&dir));
}

/// 1,500 random mutations of the fixtures and of dataset docstrings, with PyYAML's verdicts
/// (`ok` value, or only the error class under `err`).
#[test]
fn mutation_corpus_matches_pyyaml() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/yaml_fuzz.jsonl");
    let text = std::fs::read_to_string(&path).expect("yaml_fuzz.jsonl");
    let mut failures = Vec::new();
    let mut n = 0;
    for (i, line) in text.lines().enumerate() {
        let rec: Value = serde_json::from_str(line).expect("jsonl");
        let src = rec["src"].as_str().expect("src");
        n += 1;
        match (rec.get("ok"), tb_dataset::yaml::load(src)) {
            (Some(e), Ok(g)) if same(e, &g) => {}
            (None, Err(_)) => {}
            (e, g) => failures.push(format!(
                "case {i} {src:?}: expected {}, got {}",
                e.map_or_else(|| format!("error {}", rec["err"]), Value::to_string),
                match g {
                    Ok(v) => v.to_string(),
                    Err(e) => format!("error {e}"),
                }
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {n} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
