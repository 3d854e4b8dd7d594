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

/// The diff entries of two lists at `path`, as [`deep_diff`] gives them, with the items looked
/// at only where needed: `same(i)` tells that item `i` is equal on both sides (no entries);
/// `pair(i, path, out)` writes the entries of items `i` (at `path`, restored on return).
pub(crate) fn diff_lists_lazy(
    len: (usize, usize),
    path: &mut String,
    out: &mut Vec<Value>,
    same: impl Fn(usize) -> bool,
    mut pair: impl FnMut(usize, &mut String, &mut Vec<Value>),
) {
    let (la, lb) = len;
    if la != lb {
        out.push(entry4(path, "length mismatch", json!(la), json!(lb)));
    }
    let base = path.len();
    for i in 0..la.max(lb) {
        use std::fmt::Write;
        let _ = write!(path, "[{i}]");
        if i >= la {
            out.push(Value::Object(entry2(
                path,
                "missing in result (present in golden)",
            )));
        } else if i >= lb {
            out.push(Value::Object(entry2(
                path,
                "present in result (missing in golden)",
            )));
        } else if !same(i) {
            pair(i, path, out);
        }
        path.truncate(base);
    }
}

/// The entries [`deep_diff`] gives at `path` for two rows as the stable state holds them
/// (`unstable` fields dropped, every scalar list sorted at any depth), read from the stored
/// rows: nothing is copied or hashed. When both rows hold exactly `plan`'s keys in its order
/// (rows of one table do), the keys are taken in the plan's byte order; otherwise each row's
/// keys are sorted and merged.
pub(crate) fn diff_stable_rows(
    a: &Map<String, Value>,
    b: &Map<String, Value>,
    unstable: &[String],
    plan: &crate::pyjson::KeyPlanCell,
    path: &mut String,
    out: &mut Vec<Value>,
) {
    let keep = |(k, _): &(&String, &Value)| !unstable.iter().any(|u| u == *k);
    let p = plan.get_or_init(a.iter().filter(keep));
    let planned = p.with_values(a.iter().filter(keep), |va| {
        p.with_values(b.iter().filter(keep), |vb| {
            // Rows are never at the root: each key is `.key` after the row's path.
            let len = path.len();
            for (key, pos) in p.sorted() {
                path.push('.');
                path.push_str(key);
                diff_values(va[pos], vb[pos], true, path, out);
                path.truncate(len);
            }
        })
    });
    if !matches!(planned, Some(Some(()))) {
        diff_objects(
            a.iter().filter(keep),
            b.iter().filter(keep),
            true,
            path,
            out,
        );
    }
}

/// `deep_diff(a, b)` of two values, or with `stable`, of their stable forms (every non-empty
/// list of str/int/float/bool sorted, at any depth), without building them: the same walk as
/// the oracle [`diff_into`] (kept for [`deep_diff`]), entry for entry.
pub(crate) fn diff_values(
    a: &Value,
    b: &Value,
    stable: bool,
    path: &mut String,
    out: &mut Vec<Value>,
) {
    match (a, b) {
        (Value::Null, Value::Null) => return,
        (Value::Null, _) => {
            out.push(entry4(
                path,
                "result is None, golden is not",
                Value::Null,
                json!(py_type_name(b)),
            ));
            return;
        }
        (_, Value::Null) => {
            out.push(entry4(
                path,
                "result is not None, golden is None",
                json!(py_type_name(a)),
                Value::Null,
            ));
            return;
        }
        _ => {}
    }
    let (ta, tb) = (py_type_name(a), py_type_name(b));
    if ta != tb {
        out.push(entry4(path, "type mismatch", json!(ta), json!(tb)));
        return;
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => diff_objects(x.iter(), y.iter(), stable, path, out),
        (Value::Array(x), Value::Array(y)) => {
            let (sx, sy) = (sorted_view(x, stable), sorted_view(y, stable));
            if x.len() != y.len() {
                out.push(entry4(
                    path,
                    "length mismatch",
                    json!(x.len()),
                    json!(y.len()),
                ));
            }
            let len = path.len();
            for i in 0..x.len().max(y.len()) {
                use std::fmt::Write;
                let _ = write!(path, "[{i}]");
                if i >= x.len() {
                    out.push(Value::Object(entry2(
                        path,
                        "missing in result (present in golden)",
                    )));
                } else if i >= y.len() {
                    out.push(Value::Object(entry2(
                        path,
                        "present in result (missing in golden)",
                    )));
                } else {
                    let va = sx.as_ref().map_or(&x[i], |s| s[i]);
                    let vb = sy.as_ref().map_or(&y[i], |s| s[i]);
                    diff_values(va, vb, stable, path, out);
                }
                path.truncate(len);
            }
        }
        _ => {
            if !py_eq(a, b) {
                out.push(entry4(path, "value mismatch", a.clone(), b.clone()));
            }
        }
    }
}

/// A list's items in stable order when `stable` and it is a non-empty list of scalars (what
/// [`crate::state::sort_scalar_lists`] sorts); `None` when its order stays.
fn sorted_view(items: &[Value], stable: bool) -> Option<Vec<&Value>> {
    let scalar = stable
        && !items.is_empty()
        && items
            .iter()
            .all(|x| matches!(x, Value::String(_) | Value::Number(_) | Value::Bool(_)));
    scalar.then(|| {
        let mut v: Vec<&Value> = items.iter().collect();
        v.sort_by(|p, q| tb_python::cmp::cmp_scalar(p, q));
        v
    })
}

/// The object branch of [`diff_values`]: keys of both sides in byte order (each side's entries
/// sorted, then merged), each compared or reported missing.
fn diff_objects<'a>(
    x: impl Iterator<Item = (&'a String, &'a Value)>,
    y: impl Iterator<Item = (&'a String, &'a Value)>,
    stable: bool,
    path: &mut String,
    out: &mut Vec<Value>,
) {
    let mut xs: Vec<(&String, &Value)> = x.collect();
    let mut ys: Vec<(&String, &Value)> = y.collect();
    xs.sort_unstable_by(|p, q| p.0.as_bytes().cmp(q.0.as_bytes()));
    ys.sort_unstable_by(|p, q| p.0.as_bytes().cmp(q.0.as_bytes()));
    let len = path.len();
    let at_root = path == "root";
    let (mut i, mut j) = (0, 0);
    while i < xs.len() || j < ys.len() {
        let order = match (xs.get(i), ys.get(j)) {
            (Some(p), Some(q)) => p.0.as_bytes().cmp(q.0.as_bytes()),
            (Some(_), None) => std::cmp::Ordering::Less,
            _ => std::cmp::Ordering::Greater,
        };
        let key = if order == std::cmp::Ordering::Greater {
            ys[j].0
        } else {
            xs[i].0
        };
        if at_root {
            path.clear();
        } else {
            path.push('.');
        }
        path.push_str(key);
        match order {
            std::cmp::Ordering::Greater => {
                out.push(Value::Object(entry2(
                    path,
                    "missing in result (present in golden)",
                )));
                j += 1;
            }
            std::cmp::Ordering::Less => {
                out.push(Value::Object(entry2(
                    path,
                    "present in result (missing in golden)",
                )));
                i += 1;
            }
            std::cmp::Ordering::Equal => {
                diff_values(xs[i].1, ys[j].1, stable, path, out);
                i += 1;
                j += 1;
            }
        }
        if at_root {
            path.clear();
            path.push_str("root");
        } else {
            path.truncate(len);
        }
    }
}

/// `{"path", "type"}`, copied from a prebuilt map (no key hashed), keys in that order.
fn entry2(path: &str, kind: &str) -> Map<String, Value> {
    let mut m = TEMPLATES.0.clone();
    let mut v = m.values_mut();
    if let (Some(p), Some(t)) = (v.next(), v.next()) {
        *p = Value::String(path.to_string());
        *t = Value::String(kind.to_string());
    }
    m
}

/// `{"path", "type", "result", "golden"}` as [`entry2`] makes it.
fn entry4(path: &str, kind: &str, result: Value, golden: Value) -> Value {
    let mut m = TEMPLATES.1.clone();
    let mut v = m.values_mut();
    if let (Some(p), Some(t), Some(r), Some(g)) = (v.next(), v.next(), v.next(), v.next()) {
        *p = Value::String(path.to_string());
        *t = Value::String(kind.to_string());
        *r = result;
        *g = golden;
    }
    Value::Object(m)
}

/// The maps [`entry2`] and [`entry4`] copy.
static TEMPLATES: std::sync::LazyLock<(Map<String, Value>, Map<String, Value>)> =
    std::sync::LazyLock::new(|| {
        let keys = |ks: &[&str]| ks.iter().map(|k| (k.to_string(), Value::Null)).collect();
        (
            keys(&["path", "type"]),
            keys(&["path", "type", "result", "golden"]),
        )
    });

fn entry(path: &str, kind: &str) -> Map<String, Value> {
    // Room for the "result" and "golden" an entry may get (no regrowth).
    let mut m = Map::with_capacity(4);
    m.insert("path".into(), Value::String(path.to_string()));
    m.insert("type".into(), Value::String(kind.to_string()));
    m
}

/// Walks both trees; `path` is a buffer holding the current path, restored on return. (The
/// oracle of [`diff_values`].)
/// The difference at one key or index: missing on either side, or the values' difference.
fn diff_child(a: Option<&Value>, b: Option<&Value>, path: &mut String, out: &mut Vec<Value>) {
    match (a, b) {
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
}

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
                diff_child(x.get(key), y.get(key), path, out);
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
                diff_child(x.get(i), y.get(i), path, out);
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
    use proptest::prelude::*;

    /// Small JSON trees with many equal parts: scalars of every Python type (1 and 1.0, true
    /// and 1 included), lists (scalar and mixed) and objects with keys in any order.
    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (-2i64..3).prop_map(Value::from),
            prop_oneof![Just(1.0f64), Just(0.5), Just(-2.0)].prop_map(Value::from),
            "[a-c]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 32, 5, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
                proptest::collection::vec(("[a-e]{0,2}", inner), 0..5)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// The row without its unstable fields, as the stable state holds it.
    fn strip(m: &Map<String, Value>, unstable: &[String]) -> Value {
        Value::Object(
            m.iter()
                .filter(|(k, _)| !unstable.contains(k))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        )
    }

    /// The oracle: the stable form built (as `State::stable_state` builds a row) and diffed
    /// with [`deep_diff`]'s walk.
    fn oracle(a: &Value, b: &Value, stable: bool, path: &str) -> Vec<Value> {
        let (mut a, mut b) = (a.clone(), b.clone());
        if stable {
            crate::state::sort_scalar_lists(&mut a);
            crate::state::sort_scalar_lists(&mut b);
        }
        let mut out = Vec::new();
        diff_into(&a, &b, &mut path.to_string(), &mut out);
        out
    }

    fn text(entries: &[Value]) -> String {
        serde_json::to_string(entries).unwrap_or_default()
    }

    proptest! {
        #[test]
        fn diff_values_equals_the_oracle(a in value(), b in value(), stable in any::<bool>()) {
            for path in ["root", "t[3]"] {
                let mut out = Vec::new();
                let mut p = path.to_string();
                diff_values(&a, &b, stable, &mut p, &mut out);
                prop_assert_eq!(&p, path, "path restored");
                // As text: the entries' key order too (map equality ignores it).
                prop_assert_eq!(text(&out), text(&oracle(&a, &b, stable, path)));
                let mut same = Vec::new();
                diff_values(&a, &a, stable, &mut p, &mut same);
                prop_assert_eq!(same, oracle(&a, &a, stable, path));
            }
        }

        /// Rows: unstable fields dropped on both sides, scalar lists sorted, keys in any order.
        #[test]
        fn diff_stable_rows_equals_the_oracle(
            a in proptest::collection::vec(("[a-f]", value()), 0..7),
            b in proptest::collection::vec(("[a-f]", value()), 0..7),
            unstable in proptest::collection::vec("[a-f]", 0..3),
        ) {
            let (a, b): (Map<String, Value>, Map<String, Value>) =
                (a.into_iter().collect(), b.into_iter().collect());
            let mut out = Vec::new();
            let mut p = String::from("t[0]");
            let plan = crate::pyjson::KeyPlanCell::default();
            diff_stable_rows(&a, &b, &unstable, &plan, &mut p, &mut out);
            prop_assert_eq!(p.as_str(), "t[0]");
            prop_assert_eq!(text(&out), text(&oracle(&strip(&a, &unstable), &strip(&b, &unstable), true, "t[0]")));
        }

        /// Pairs of rows of one layout (the same keys in the same order, the planned path)
        /// and some of another (the fallback), through one plan.
        #[test]
        fn diff_stable_rows_through_a_plan_equals_the_oracle(
            keys in proptest::collection::btree_set("[a-f\\.\u{e9}]{0,3}", 0..7),
            pairs in proptest::collection::vec(
                (proptest::collection::vec(value(), 7), proptest::collection::vec(value(), 7), 0usize..4),
                1..5,
            ),
            unstable in proptest::collection::vec("[a-f]", 0..2),
        ) {
            let keys: Vec<String> = keys.into_iter().rev().collect();
            let plan = crate::pyjson::KeyPlanCell::default();
            for (va, vb, change) in &pairs {
                let row = |vals: &[Value]| -> Map<String, Value> {
                    keys.iter().cloned().zip(vals.iter().cloned()).collect()
                };
                let (a, mut b) = (row(va), row(vb));
                match change {
                    // Another key order on one side.
                    1 if keys.len() > 1 => {
                        let v = b.shift_remove(&keys[0]).unwrap_or(Value::Null);
                        b.insert(keys[0].clone(), v);
                    }
                    // A key missing on one side.
                    2 if !keys.is_empty() => {
                        b.shift_remove(&keys[keys.len() - 1]);
                    }
                    // The same values: no entries.
                    3 => b = a.clone(),
                    _ => {}
                }
                let mut out = Vec::new();
                let mut p = String::from("t[0]");
                diff_stable_rows(&a, &b, &unstable, &plan, &mut p, &mut out);
                prop_assert_eq!(p.as_str(), "t[0]");
                prop_assert_eq!(text(&out), text(&oracle(&strip(&a, &unstable), &strip(&b, &unstable), true, "t[0]")));
            }
        }
    }

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
