//! Python `repr()` and `str()` of strings and of JSON values loaded as Python objects (dict,
//! list, str, int, float, bool, None), Python's type names, and pydantic-core's shortening of
//! long reprs in error texts.

use serde_json::Value;
use std::fmt::Write as _;

use crate::float::float_repr;

/// Whether Python's `str.isprintable()` holds for a non-ASCII character (approximation by the
/// categories that matter: controls, separators and format characters are not printable).
fn printable(c: char) -> bool {
    let u = c as u32;
    if c.is_control() {
        return false;
    }
    !matches!(
        u,
        0xA0 | 0xAD
            | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x1680
            | 0x180E
            | 0x2000..=0x200F
            | 0x2028..=0x202F
            | 0x205F..=0x206F
            | 0x3000
            | 0xD800..=0xF8FF
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0xE0001..=0xE007F
            | 0xF0000..
    )
}

/// Python `repr(s)` of a `str`.
pub fn str_repr(s: &str) -> String {
    let quote = if s.contains('\'') && !s.contains('"') {
        '"'
    } else {
        '\''
    };
    let mut out = String::with_capacity(s.len() + 2);
    out.push(quote);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c.is_ascii() || printable(c) => out.push(c),
            c => {
                let u = c as u32;
                if u <= 0xff {
                    let _ = write!(out, "\\x{u:02x}");
                } else if u <= 0xffff {
                    let _ = write!(out, "\\u{u:04x}");
                } else {
                    let _ = write!(out, "\\U{u:08x}");
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Python `repr()` of a JSON value loaded as Python objects.
pub fn value_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) if n.is_f64() => float_repr(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => str_repr(s),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(value_repr).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}: {}", str_repr(k), value_repr(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Python's `str(x)` of a JSON value, as ids and sort keys use it: the text itself for a
/// string, the repr for a scalar, and (as the reference's stored values are plain JSON)
/// `json.dumps` for a list or dict.
pub fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(_) | Value::Object(_) => crate::json::dumps(v, crate::json::Layout::Default),
        scalar => value_repr(scalar),
    }
}

/// Python's `type(x).__name__` of a JSON value loaded as Python objects.
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// pydantic-core's shortening of long `input_value` reprs in error texts: more than 50
/// characters keep the first 25 and the last 24 around `...`.
pub fn truncate_repr(r: &str) -> String {
    let chars: Vec<char> = r.chars().collect();
    if chars.len() <= 50 {
        return r.to_string();
    }
    let head: String = chars[..25].iter().collect();
    let tail: String = chars[chars.len() - 24..].iter().collect();
    format!("{head}...{tail}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reprs_follow_python() {
        assert_eq!(str_repr("abc"), "'abc'");
        assert_eq!(str_repr("it's"), "\"it's\"");
        assert_eq!(str_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(str_repr("tab\there\n"), "'tab\\there\\n'");
        assert_eq!(str_repr("café \u{a0}"), "'café \\xa0'");
        assert_eq!(
            str_repr("\u{1}\u{7f}\u{200b}\u{1f600}"),
            "'\\x01\\x7f\\u200b\u{1f600}'"
        );
        assert_eq!(
            value_repr(&json!({"a": [1, 2.0, null, true], "b": "x"})),
            "{'a': [1, 2.0, None, True], 'b': 'x'}"
        );
        assert_eq!(
            truncate_repr(&"x".repeat(51)),
            format!("{}...{}", "x".repeat(25), "x".repeat(24))
        );
        assert_eq!(truncate_repr(&"x".repeat(50)), "x".repeat(50));
    }

    #[test]
    fn str_and_type_names() {
        assert_eq!(py_str(&json!("a")), "a");
        assert_eq!(py_str(&json!(2.0)), "2.0");
        assert_eq!(py_str(&json!(7)), "7");
        assert_eq!(py_str(&json!(null)), "None");
        assert_eq!(py_str(&json!(false)), "False");
        assert_eq!(py_str(&json!([1, "a"])), "[1, \"a\"]");
        let names: Vec<&str> = [
            json!(null),
            json!(true),
            json!(1),
            json!(1.0),
            json!("s"),
            json!([]),
            json!({}),
        ]
        .iter()
        .map(type_name)
        .collect();
        assert_eq!(
            names,
            ["NoneType", "bool", "int", "float", "str", "list", "dict"]
        );
    }
}
