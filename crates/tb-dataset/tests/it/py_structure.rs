//! The Python tokenizer against Python's own `ast` on every test-case file of the official
//! data: module-level strings, functions, their lines, first-statement strings (decoded length)
//! and check calls. Expected values: `tests/fixtures/py_structure.json`, made with CPython 3.11.

use serde_json::{Value, json};
use std::path::PathBuf;
use tb_dataset::{PyItem, parse_py};

#[tb_test_support::data_test]
#[test]
fn tokenizer_matches_python_ast_on_the_official_files() {
    let dir = tb_test_support::data().join("dataset/test_case");
    let fixture =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/py_structure.json");
    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture).expect("fixture")).expect("json");
    let mut files = 0;
    for (rel, want) in expected.as_object().expect("object") {
        let src = std::fs::read_to_string(dir.join(rel)).expect("read test file");
        let items = parse_py(&src).unwrap_or_else(|e| panic!("{rel}:{}: {}", e.line, e.message));
        let got: Vec<Value> = items
            .iter()
            .map(|it| match it {
                PyItem::Str { value, line } => {
                    json!({"str_line": line, "bang": value.starts_with('!')})
                }
                PyItem::Function(f) => json!({
                    "def": f.name,
                    "line": f.line,
                    "end": f.end_line,
                    "doc_line": f.docstring.as_ref().map(|d| d.1),
                    "doc_len": f.docstring.as_ref().map(|d| d.0.chars().count()),
                    "calls": f.checks.iter().map(|c| match c {
                        tb_dataset::Check::ValidateDatabase => "validate_database",
                        tb_dataset::Check::ValidateRubricsYesno => "validate_rubrics_yesno",
                    }).collect::<Vec<_>>(),
                }),
            })
            .collect();
        assert_eq!(&Value::Array(got), want, "{rel}");
        files += 1;
    }
    assert_eq!(files, 12);
}
