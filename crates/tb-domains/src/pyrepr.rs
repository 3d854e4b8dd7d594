//! Python `repr()` of values, as they appear inside the reference's error texts (OData token
//! dumps and pydantic validation errors).

use serde_json::Value;

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
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if c.is_ascii() || printable(c) => out.push(c),
            c => {
                let u = c as u32;
                if u <= 0xff {
                    out.push_str(&format!("\\x{u:02x}"));
                } else if u <= 0xffff {
                    out.push_str(&format!("\\u{u:04x}"));
                } else {
                    out.push_str(&format!("\\U{u:08x}"));
                }
            }
        }
    }
    out.push(quote);
    out
}

/// Python `repr()` of a JSON value loaded as Python objects (dict, list, str, int, float,
/// bool, None).
pub fn value_repr(v: &Value) -> String {
    match v {
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Number(n) if n.is_f64() => tb_sandbox::pyjson::float_repr(n.as_f64().unwrap_or(0.0)),
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

/// Python's type name of a JSON value loaded as Python objects.
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
            value_repr(&json!({"a": [1, 2.0, null, true], "b": "x"})),
            "{'a': [1, 2.0, None, True], 'b': 'x'}"
        );
        assert_eq!(
            truncate_repr(&"x".repeat(51)),
            format!("{}...{}", "x".repeat(25), "x".repeat(24))
        );
    }
}
