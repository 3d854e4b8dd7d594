//! Python's `==` and `<` of JSON values loaded as Python objects.

use serde_json::Value;
use std::cmp::Ordering;

/// Two ints exactly (both within `i64`, or both within `u64`); None when a float is involved.
fn int_order(x: &serde_json::Number, y: &serde_json::Number) -> Option<Ordering> {
    if let (Some(i), Some(j)) = (x.as_i64(), y.as_i64()) {
        Some(i.cmp(&j))
    } else if let (Some(i), Some(j)) = (x.as_u64(), y.as_u64()) {
        Some(i.cmp(&j))
    } else {
        None
    }
}

/// Python `==`: ints and floats by value (`1 == 1.0`), bools as 0 and 1, lists item by item,
/// dicts by their key sets and values (order ignored).
pub fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match int_order(x, y) {
            Some(o) => o == Ordering::Equal,
            None => x.as_f64() == y.as_f64(),
        },
        (Value::Bool(x), Value::Number(_)) => py_eq(&Value::from(i64::from(*x)), b),
        (Value::Number(_), Value::Bool(y)) => py_eq(a, &Value::from(i64::from(*y))),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| py_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| py_eq(v, w)))
        }
        _ => a == b,
    }
}

/// A number or bool as a float (bools are 0 and 1).
fn as_num(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(f64::from(u8::from(*b))),
        Value::Number(n) => n.as_f64(),
        _ => None,
    }
}

/// Numbers and bools by value (two ints exactly); None when either is not a number or a NaN
/// is involved.
fn num_order(a: &Value, b: &Value) -> Option<Ordering> {
    if let (Value::Number(x), Value::Number(y)) = (a, b)
        && let Some(o) = int_order(x, y)
    {
        return Some(o);
    }
    as_num(a)?.partial_cmp(&as_num(b)?)
}

/// Python's ordering of two values (what `<` and `sorted` use): strings by code point,
/// numbers and bools by value, lists lexicographically (Python `==` deciding where they
/// differ). None where Python raises `TypeError` (other type pairs, None, dicts) or a NaN
/// makes the comparison false both ways.
pub fn py_order(a: &Value, b: &Value) -> Option<Ordering> {
    order_or_pair(a, b).ok()
}

/// [`py_order`] for the operator `op` (`<`, `>=`, ...), or Python's `TypeError` text naming the
/// pair that could not be ordered (inside lists, the first differing items).
pub fn py_order_op(op: &str, a: &Value, b: &Value) -> Result<Ordering, String> {
    order_or_pair(a, b).map_err(|(x, y)| order_error(op, x, y))
}

fn order_or_pair<'v>(a: &'v Value, b: &'v Value) -> Result<Ordering, (&'v Value, &'v Value)> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        (Value::Number(_) | Value::Bool(_), Value::Number(_) | Value::Bool(_)) => {
            num_order(a, b).ok_or((a, b))
        }
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                if !py_eq(p, q) {
                    return order_or_pair(p, q);
                }
            }
            Ok(x.len().cmp(&y.len()))
        }
        _ => Err((a, b)),
    }
}

/// Python's `TypeError` text for an ordering operator `op` between two values that cannot be
/// ordered.
pub fn order_error(op: &str, a: &Value, b: &Value) -> String {
    format!(
        "'{op}' not supported between instances of '{}' and '{}'",
        crate::repr::type_name(a),
        crate::repr::type_name(b)
    )
}

/// A total order on scalars for sorting lists of str/int/float/bool as Python's `sorted` does
/// when it succeeds: numbers (with bools) by value, strings by code point. Where Python would
/// raise (strings mixed with numbers) numbers sort first; values that do not compare (NaN,
/// non-scalars) are equal, so a stable sort keeps their order.
pub fn cmp_scalar(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::String(_), _) => Ordering::Greater,
        (_, Value::String(_)) => Ordering::Less,
        _ => num_order(a, b).unwrap_or(Ordering::Equal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equality_follows_python() {
        assert!(py_eq(&json!(1), &json!(1.0)));
        assert!(py_eq(&json!(true), &json!(1)));
        assert!(py_eq(&json!(0.0), &json!(false)));
        assert!(!py_eq(&json!(true), &json!("True")));
        assert!(py_eq(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(py_eq(&json!({"a": 1, "b": 2}), &json!({"b": 2, "a": 1})));
        assert!(!py_eq(&json!([1]), &json!([1, 1])));
        assert!(!py_eq(&json!(null), &json!(0)));
        // Ints beyond 2^53 compare exactly, not as floats.
        assert!(!py_eq(&json!(u64::MAX), &json!(u64::MAX - 1)));
        assert!(py_eq(&json!(u64::MAX), &json!(u64::MAX)));
    }

    #[test]
    fn ordering_follows_python() {
        assert_eq!(py_order(&json!("b"), &json!("a")), Some(Ordering::Greater));
        assert_eq!(py_order(&json!(1), &json!(1.5)), Some(Ordering::Less));
        assert_eq!(py_order(&json!(true), &json!(0)), Some(Ordering::Greater));
        assert_eq!(
            py_order(&json!([1, "b"]), &json!([1.0, "a"])),
            Some(Ordering::Greater)
        );
        assert_eq!(py_order(&json!([1]), &json!([1, 0])), Some(Ordering::Less));
        assert_eq!(py_order(&json!(1), &json!("1")), None);
        assert_eq!(
            py_order(&json!(u64::MAX), &json!(u64::MAX - 1)),
            Some(Ordering::Greater)
        );
        assert_eq!(py_order(&json!(null), &json!(null)), None);
        assert_eq!(py_order(&json!({}), &json!({})), None);
        assert_eq!(
            py_order_op(">", &json!([1, null]), &json!([1, "a"])).unwrap_err(),
            "'>' not supported between instances of 'NoneType' and 'str'"
        );
        assert_eq!(
            order_error("<", &json!(1), &json!("a")),
            "'<' not supported between instances of 'int' and 'str'"
        );
    }

    #[test]
    fn scalar_sort_puts_numbers_first() {
        let mut v = vec![json!("b"), json!(2), json!(true), json!("a"), json!(0.5)];
        v.sort_by(cmp_scalar);
        assert_eq!(
            v,
            vec![json!(0.5), json!(true), json!(2), json!("a"), json!("b")]
        );
    }

    proptest::proptest! {
        #[test]
        fn scalar_order_agrees_with_python_order(a in -5i64..5, b in -5.0f64..5.0, s in "[a-c]{0,2}", t in "[a-c]{0,2}") {
            let (x, y) = (json!(a), json!(b));
            proptest::prop_assert_eq!(Some(cmp_scalar(&x, &y)), py_order(&x, &y));
            let (x, y) = (json!(s), json!(t));
            proptest::prop_assert_eq!(Some(cmp_scalar(&x, &y)), py_order(&x, &y));
            proptest::prop_assert_eq!(py_eq(&x, &y), cmp_scalar(&x, &y) == Ordering::Equal);
        }
    }
}
