//! The reference's deep diff of two JSON trees (result vs golden), entry for entry.

use serde_json::{Map, Value, json};
use tb_python::{py_eq, type_name as py_type_name};

/// `calculate_deep_diff(result, golden, path="root")`.
pub fn deep_diff(result: &Value, golden: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let mut path = String::from("root");
    diff_into(result, golden, &mut path, &mut out);
    out
}

/// The diff entries of two lists at `path`, as [`deep_diff`] gives them, with the items built
/// only where needed: `same(i)` tells that item `i` is equal on both sides (no entries, nothing
/// built); `items(i)` builds both items `i` for a deep comparison.
pub(crate) fn diff_lists_lazy(
    len: (usize, usize),
    path: &mut String,
    out: &mut Vec<Value>,
    same: impl Fn(usize) -> bool,
    mut items: impl FnMut(usize) -> (Value, Value),
) {
    let (la, lb) = len;
    if la != lb {
        let mut m = entry(path, "length mismatch");
        m.insert("result".into(), json!(la));
        m.insert("golden".into(), json!(lb));
        out.push(Value::Object(m));
    }
    let base = path.len();
    for i in 0..la.max(lb) {
        use std::fmt::Write;
        let _ = write!(path, "[{i}]");
        if i >= la {
            out.push(Value::Object(entry(
                path,
                "missing in result (present in golden)",
            )));
        } else if i >= lb {
            out.push(Value::Object(entry(
                path,
                "present in result (missing in golden)",
            )));
        } else if !same(i) {
            let (a, b) = items(i);
            diff_into(&a, &b, path, out);
        }
        path.truncate(base);
    }
}

fn entry(path: &str, kind: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("path".into(), Value::String(path.to_string()));
    m.insert("type".into(), Value::String(kind.to_string()));
    m
}

/// Walks both trees; `path` is a buffer holding the current path, restored on return.
fn diff_into(a: &Value, b: &Value, path: &mut String, out: &mut Vec<Value>) {
    match (a, b) {
        (Value::Null, Value::Null) => return,
        (Value::Null, _) => {
            let mut m = entry(path, "result is None, golden is not");
            m.insert("result".into(), Value::Null);
            m.insert("golden".into(), json!(py_type_name(b)));
            out.push(Value::Object(m));
            return;
        }
        (_, Value::Null) => {
            let mut m = entry(path, "result is not None, golden is None");
            m.insert("result".into(), json!(py_type_name(a)));
            m.insert("golden".into(), Value::Null);
            out.push(Value::Object(m));
            return;
        }
        _ => {}
    }
    let (ta, tb) = (py_type_name(a), py_type_name(b));
    if ta != tb {
        let mut m = entry(path, "type mismatch");
        m.insert("result".into(), json!(ta));
        m.insert("golden".into(), json!(tb));
        out.push(Value::Object(m));
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x
                .keys()
                .chain(y.keys().filter(|k| !x.contains_key(*k)))
                .collect();
            keys.sort_unstable_by(|p, q| p.as_bytes().cmp(q.as_bytes()));
            let len = path.len();
            let at_root = path == "root";
            for key in keys {
                if at_root {
                    path.clear();
                } else {
                    path.push('.');
                }
                path.push_str(key);
                match (x.get(key), y.get(key)) {
                    (None, _) => out.push(Value::Object(entry(
                        path,
                        "missing in result (present in golden)",
                    ))),
                    (_, None) => out.push(Value::Object(entry(
                        path,
                        "present in result (missing in golden)",
                    ))),
                    (Some(va), Some(vb)) => diff_into(va, vb, path, out),
                }
                if at_root {
                    path.clear();
                    path.push_str("root");
                } else {
                    path.truncate(len);
                }
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                let mut m = entry(path, "length mismatch");
                m.insert("result".into(), json!(x.len()));
                m.insert("golden".into(), json!(y.len()));
                out.push(Value::Object(m));
            }
            let len = path.len();
            for i in 0..x.len().max(y.len()) {
                use std::fmt::Write;
                let _ = write!(path, "[{i}]");
                match (x.get(i), y.get(i)) {
                    (None, _) => out.push(Value::Object(entry(
                        path,
                        "missing in result (present in golden)",
                    ))),
                    (_, None) => out.push(Value::Object(entry(
                        path,
                        "present in result (missing in golden)",
                    ))),
                    (Some(va), Some(vb)) => diff_into(va, vb, path, out),
                }
                path.truncate(len);
            }
        }
        _ => {
            // Python `==` on two scalars of the same type.
            if !py_eq(a, b) {
                let mut m = entry(path, "value mismatch");
                m.insert("result".into(), a.clone());
                m.insert("golden".into(), b.clone());
                out.push(Value::Object(m));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diff_matches_reference_shapes() {
        let a = json!({"t": [{"id": 1, "x": 1}, {"id": 2}], "u": 1, "v": null, "w": 2});
        let b = json!({"t": [{"id": 1, "x": 1.0}], "u": 2, "v": "s", "z": true, "w": 2});
        let d = deep_diff(&a, &b);
        assert_eq!(
            Value::Array(d),
            json!([
                {"path": "t", "type": "length mismatch", "result": 2, "golden": 1},
                {"path": "t[0].x", "type": "type mismatch", "result": "int", "golden": "float"},
                {"path": "t[1]", "type": "present in result (missing in golden)"},
                {"path": "u", "type": "value mismatch", "result": 1, "golden": 2},
                {"path": "v", "type": "result is None, golden is not", "result": null, "golden": "str"},
                {"path": "z", "type": "missing in result (present in golden)"}
            ])
        );
    }
}
