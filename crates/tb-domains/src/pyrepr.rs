//! Python `repr()` of values, as they appear inside the reference's error texts (OData token
//! dumps and pydantic validation errors).

use serde_json::Value;

pub use tb_sandbox::pyjson::str_repr;

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
