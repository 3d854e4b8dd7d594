//! The benchmark's recorded traces (`tb-bench-v1/traces`, 507 golden runs), walked once for
//! the parity tests: each with its domain loaded (once per domain and file) and its server's
//! init config from `tb-bench-v1/tasks`.

use serde_json::Value;
use std::path::PathBuf;
use tb_sandbox::Loaded;
use tb_test_support::json_lines;

/// Calls `f(loaded, config, trace, id)` for every trace, in file order; how many there were.
pub(crate) fn for_each(mut f: impl FnMut(&Loaded, &Value, &Value, &str)) -> usize {
    let shared = tb_test_support::shared();
    let toolslib = tb_domains::toolslib(&shared.join("thinkingbox-data"));
    let mut seen = 0;
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("tb-bench-v1/traces"))
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().to_string();
        let inits = json_lines(&shared.join("tb-bench-v1/tasks").join(&name));
        let mut loaded = std::collections::HashMap::new();
        for t in json_lines(&file) {
            let server = t["domain"].as_str().unwrap().to_string();
            let l = loaded.entry(server.clone()).or_insert_with(|| {
                tb_domains::by_name(&server)
                    .unwrap()
                    .unwrap()
                    .load(&toolslib)
                    .unwrap()
            });
            let init = inits.iter().find(|i| i["id"] == t["id"]).unwrap();
            f(l, &init["init"][&server], &t, t["id"].as_str().unwrap());
            seen += 1;
        }
    }
    seen
}

/// The trace's golden calls' arguments (`null` as no arguments), with their tool names.
pub(crate) fn calls(trace: &Value) -> impl Iterator<Item = (&str, Value)> {
    trace["calls"].as_array().unwrap().iter().map(|c| {
        let p = match &c["parameters"] {
            Value::Null => Value::Object(serde_json::Map::default()),
            p => p.clone(),
        };
        (c["tool"].as_str().unwrap(), p)
    })
}
