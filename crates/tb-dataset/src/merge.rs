//! The reference's merge rules for `world_state` and `init`.

use serde_json::{Map, Value};

/// Recursive merge of two JSON values, `b` winning: objects merge key by key (recursively),
/// arrays concatenate (`a` then `b`), anything else is replaced by `b`. Key order: `a`'s keys
/// in their order, then `b`'s new keys.
pub fn recursive_merge(a: &Value, b: &Value) -> Value {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let mut out = a.clone();
            for (k, vb) in b {
                let merged = match out.get(k) {
                    Some(va @ Value::Object(_)) if vb.is_object() => recursive_merge(va, vb),
                    Some(va @ Value::Array(_)) if vb.is_array() => recursive_merge(va, vb),
                    _ => vb.clone(),
                };
                out.insert(k.clone(), merged);
            }
            Value::Object(out)
        }
        (Value::Array(a), Value::Array(b)) => {
            Value::Array(a.iter().chain(b.iter()).cloned().collect())
        }
        _ => b.clone(),
    }
}

/// Python truthiness of a JSON value (`if scenario_v:` in the reference).
fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Why a server's init could not be merged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MergeError {
    /// The server name.
    pub server: String,
    /// What is wrong.
    pub message: String,
}

/// The config each server receives: the scenario's `world_state` with the task's `init`
/// merged in, as the reference's `merge_init_config` does.
///
/// - Servers keep the scenario's order; servers only in `init` are appended.
/// - If the scenario value for a server is empty/null/false, the task's value replaces it;
///   otherwise both must be mappings and are merged with [`recursive_merge`].
pub fn merge_init_config(
    world_state: &Map<String, Value>,
    init: &Map<String, Value>,
) -> Result<Map<String, Value>, MergeError> {
    let mut out = world_state.clone();
    for (server, v) in init {
        let merged = match out.get(server) {
            Some(sv) if truthy(sv) => {
                if !sv.is_object() {
                    return Err(MergeError {
                        server: server.clone(),
                        message: format!(
                            "scenario world_state.{server} must be a mapping to merge init into"
                        ),
                    });
                }
                if !v.is_object() {
                    return Err(MergeError {
                        server: server.clone(),
                        message: format!("init.{server} must be a mapping"),
                    });
                }
                recursive_merge(sv, v)
            }
            _ => v.clone(),
        };
        out.insert(server.clone(), merged);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn reference_examples() {
        assert_eq!(
            recursive_merge(&json!({"x": 1, "y": 2}), &json!({"y": 3, "z": 4})),
            json!({"x": 1, "y": 3, "z": 4})
        );
        assert_eq!(
            recursive_merge(
                &json!({"a": {"x": 1, "y": {"k": 1}}, "b": 2}),
                &json!({"a": {"y": {"m": 2}, "z": 3}, "c": 4})
            ),
            json!({"a": {"x": 1, "y": {"k": 1, "m": 2}, "z": 3}, "b": 2, "c": 4})
        );
        assert_eq!(
            recursive_merge(&json!([1, 2]), &json!([3, 4])),
            json!([1, 2, 3, 4])
        );
        assert_eq!(
            recursive_merge(&json!({"a": [1, 2]}), &json!({"a": [3]})),
            json!({"a": [1, 2, 3]})
        );
        assert_eq!(
            recursive_merge(&json!({"a": {"x": 1}}), &json!({"a": 5})),
            json!({"a": 5})
        );
        assert_eq!(
            recursive_merge(&json!({"a": 1}), &json!(["x"])),
            json!(["x"])
        );
    }

    #[test]
    fn key_order_is_a_then_new_b() {
        let m = recursive_merge(&json!({"b": 1, "a": 1}), &json!({"c": 2, "a": 2}));
        let keys: Vec<_> = m.as_object().unwrap().keys().cloned().collect();
        assert_eq!(keys, ["b", "a", "c"]);
    }

    #[test]
    fn init_config() {
        let ws = obj(json!({"s1": {"sources": [1], "x": {"a": 1}}, "s2": null, "s3": {}}));
        let init = obj(json!({
            "s1": {"sources": [2], "x": {"b": 2}, "data_patch": {}},
            "s2": {"k": 1},
            "s3": {"k": 3},
            "s4": {"new": true}
        }));
        let m = merge_init_config(&ws, &init).unwrap();
        assert_eq!(
            Value::Object(m.clone()),
            json!({
                "s1": {"sources": [1, 2], "x": {"a": 1, "b": 2}, "data_patch": {}},
                "s2": {"k": 1},
                "s3": {"k": 3},
                "s4": {"new": true}
            })
        );
        let keys: Vec<_> = m.keys().cloned().collect();
        assert_eq!(keys, ["s1", "s2", "s3", "s4"]);
        // empty init: the scenario's world_state unchanged
        assert_eq!(merge_init_config(&ws, &Map::new()).unwrap(), ws);
        // a non-mapping scenario value cannot take an init
        let bad = obj(json!({"s": "text"}));
        assert!(merge_init_config(&bad, &obj(json!({"s": {"a": 1}}))).is_err());
    }
}
