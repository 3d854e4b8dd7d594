//! `repr()`, `str()` and `json.dumps()` of the evaluator's values, as CPython writes them:
//! the walk over containers is here, the rules for floats, strings and layout are
//! `tb-python`'s.

use std::fmt::Write as _;

pub use tb_python::json::Options as DumpsOptions;
use tb_python::json::write_json_str_with;
use tb_python::{float_repr, json_float, str_repr};

use crate::value::{Value, ViewKind};

/// Python `repr(v)`. A cycle prints as `[...]` as CPython does; containers nested past
/// [`crate::budget::MAX_VALUE_DEPTH`] stop the walk (`...`) and leave a `RecursionError`
/// for the evaluator to raise, and text past the memory budget stops it too.
pub fn repr(v: &Value) -> String {
    let mut out = String::new();
    write_repr(&mut out, v, &mut Vec::new());
    out
}

/// Python `str(v)`.
pub fn to_str(v: &Value) -> String {
    match v {
        Value::Str(s) => s.to_string(),
        // A caught exception (`except E as e`): `str(e)` is its message.
        Value::Object(o) if o.attrs.borrow().len() == 1 => {
            let attrs = o.attrs.borrow();
            match attrs.get("args") {
                Some(Value::Tuple(t)) if t.len() == 1 => to_str(&t[0]),
                Some(Value::Tuple(t)) if t.is_empty() => String::new(),
                _ => repr(v),
            }
        }
        other => repr(other),
    }
}

fn write_repr(out: &mut String, v: &Value, seen: &mut Vec<usize>) {
    // Cycles (a list that contains itself) print as `[...]` / `{...}`.
    let ptr = match v {
        Value::List(l) => Some(std::rc::Rc::as_ptr(l).cast::<u8>() as usize),
        Value::Dict(d) => Some(std::rc::Rc::as_ptr(d).cast::<u8>() as usize),
        _ => None,
    };
    if let Some(p) = ptr
        && seen.contains(&p)
    {
        out.push_str(if matches!(v, Value::List(_)) {
            "[...]"
        } else {
            "{...}"
        });
        return;
    }
    let nested = matches!(
        v,
        Value::List(_)
            | Value::Tuple(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::DictView(..)
            | Value::Object(_)
    );
    let _deeper = if nested {
        if crate::budget::over(out.len()) {
            return;
        }
        let d = crate::budget::deeper();
        if d.is_none() {
            out.push_str("...");
            return;
        }
        d
    } else {
        None
    };
    if let Some(p) = ptr {
        seen.push(p);
    }
    match v {
        Value::None => out.push_str("None"),
        Value::Bool(true) => out.push_str("True"),
        Value::Bool(false) => out.push_str("False"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&float_repr(*f)),
        Value::Str(s) => out.push_str(&str_repr(s)),
        Value::List(l) => {
            out.push('[');
            if !write_joined(out, l.borrow().iter(), |out, x| write_repr(out, x, seen)) {
                return;
            }
            out.push(']');
        }
        Value::Tuple(t) => {
            out.push('(');
            if !write_joined(out, t.iter(), |out, x| write_repr(out, x, seen)) {
                return;
            }
            if t.len() == 1 {
                out.push(',');
            }
            out.push(')');
        }
        Value::Dict(d) => {
            out.push('{');
            let pairs = d.borrow();
            if !write_joined(out, pairs.map().values(), |out, (k, x)| {
                write_repr(out, k, seen);
                out.push_str(": ");
                write_repr(out, x, seen);
            }) {
                return;
            }
            out.push('}');
        }
        Value::Set(s) => {
            let s = s.borrow();
            if s.map.is_empty() {
                out.push_str("set()");
            } else {
                out.push('{');
                if !write_joined(out, s.map.values(), |out, x| write_repr(out, x, seen)) {
                    return;
                }
                out.push('}');
            }
        }
        Value::DictView(d, kind) => {
            let name = match kind {
                ViewKind::Keys => "dict_keys",
                ViewKind::Values => "dict_values",
                ViewKind::Items => "dict_items",
            };
            out.push_str(name);
            out.push_str("([");
            let pairs = d.borrow();
            if !write_joined(out, pairs.map().values(), |out, (k, x)| match kind {
                ViewKind::Keys => write_repr(out, k, seen),
                ViewKind::Values => write_repr(out, x, seen),
                ViewKind::Items => {
                    out.push('(');
                    write_repr(out, k, seen);
                    out.push_str(", ");
                    write_repr(out, x, seen);
                    out.push(')');
                }
            }) {
                return;
            }
            out.push_str("])");
        }
        Value::Func(f) => {
            let _ = write!(out, "<function {}>", f.name);
        }
        Value::Builtin(b) => {
            let _ = write!(
                out,
                "<built-in function {}>",
                format!("{b:?}").to_lowercase()
            );
        }
        Value::Method(recv, name) => {
            let _ = write!(
                out,
                "<built-in method {name} of {} object>",
                recv.type_name()
            );
        }
        Value::Object(o) => {
            // pydantic models print as `Class(field=value, ...)`.
            out.push_str(&o.class);
            out.push('(');
            if !write_joined(out, o.attrs.borrow().iter(), |out, (k, x)| {
                out.push_str(k);
                out.push('=');
                write_repr(out, x, seen);
            }) {
                return;
            }
            out.push(')');
        }
        Value::Type(t) => {
            let _ = write!(out, "<class '{}'>", t.name());
        }
        Value::Module(_) => out.push_str("<module 'json'>"),
    }
    if ptr.is_some() {
        seen.pop();
    }
}

/// Writes `items` separated by `, `, each with `each`; false when the text passed the
/// memory budget before an item (the caller then stops writing).
fn write_joined<T>(
    out: &mut String,
    items: impl IntoIterator<Item = T>,
    mut each: impl FnMut(&mut String, T),
) -> bool {
    for (i, x) in items.into_iter().enumerate() {
        if crate::budget::over(out.len()) {
            return false;
        }
        if i > 0 {
            out.push_str(", ");
        }
        each(out, x);
    }
    true
}

/// `json.dumps(v, ...)`; `Err` carries the `TypeError` message for a value JSON cannot hold.
pub fn json_dumps(v: &Value, opts: &DumpsOptions) -> Result<String, String> {
    let mut out = String::new();
    dump(&mut out, v, opts, 0)?;
    Ok(out)
}

fn dump(out: &mut String, v: &Value, opts: &DumpsOptions, level: usize) -> Result<(), String> {
    if crate::budget::over(out.len()) {
        return Err("the text passed the memory budget".into());
    }
    let _deeper = match v {
        Value::List(_) | Value::Tuple(_) | Value::Dict(_) => match crate::budget::deeper() {
            Some(d) => Some(d),
            None => {
                return Err("maximum recursion depth exceeded while encoding a JSON object".into());
            }
        },
        _ => None,
    };
    let item_sep = opts.item_sep();
    match v {
        Value::None => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Value::Float(f) => out.push_str(&json_float(*f)),
        Value::Str(s) => write_json_str_with(out, s, opts.ensure_ascii),
        Value::List(_) | Value::Tuple(_) => {
            let items: Vec<Value> = match v {
                Value::List(l) => l.borrow().clone(),
                Value::Tuple(t) => t.to_vec(),
                _ => Vec::new(),
            };
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, x) in items.iter().enumerate() {
                if crate::budget::over(out.len()) {
                    return Err("the text passed the memory budget".into());
                }
                if i > 0 {
                    out.push_str(item_sep);
                }
                opts.newline(out, level + 1);
                dump(out, x, opts, level + 1)?;
            }
            opts.newline(out, level);
            out.push(']');
        }
        Value::Dict(d) => {
            let d = d.borrow();
            if d.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            let mut entries: Vec<(String, &Value)> = Vec::with_capacity(d.len());
            for (k, x) in d.map().values() {
                let key = match k {
                    Value::Str(s) => s.to_string(),
                    Value::None => "null".into(),
                    Value::Bool(b) => if *b { "true" } else { "false" }.into(),
                    Value::Int(i) => i.to_string(),
                    Value::Float(f) => json_float(*f),
                    other => {
                        return Err(format!(
                            "keys must be str, int, float, bool or None, not {}",
                            other.type_name()
                        ));
                    }
                };
                entries.push((key, x));
            }
            if opts.sort_keys {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            out.push('{');
            for (i, (k, x)) in entries.iter().enumerate() {
                if crate::budget::over(out.len()) {
                    return Err("the text passed the memory budget".into());
                }
                if i > 0 {
                    out.push_str(item_sep);
                }
                opts.newline(out, level + 1);
                write_json_str_with(out, k, opts.ensure_ascii);
                out.push_str(&opts.key_sep);
                dump(out, x, opts, level + 1)?;
            }
            opts.newline(out, level);
            out.push('}');
        }
        other => {
            return Err(format!(
                "Object of type {} is not JSON serializable",
                other.type_name()
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{Dict, Key};

    #[test]
    fn reprs_match_cpython() {
        assert_eq!(repr(&Value::Float(100.0)), "100.0");
        assert_eq!(repr(&Value::Float(1e16)), "1e+16");
        assert_eq!(repr(&Value::tuple(vec![Value::str("Mia")])), "('Mia',)");
        assert_eq!(
            repr(&Value::list(vec![Value::None, Value::Bool(true)])),
            "[None, True]"
        );
        let mut d = Dict::default();
        d.insert(Key::Str("a".into()), Value::str("a"), Value::Int(1));
        assert_eq!(repr(&Value::dict(d)), "{'a': 1}");
        assert_eq!(repr(&Value::set(crate::value::Set::default())), "set()");
    }

    #[test]
    fn dumps_with_indent_matches_python() {
        let v = crate::value::from_json(&serde_json::json!({"a": [1, 2.5], "b": {}, "c": "é"}));
        let opts = DumpsOptions {
            indent: Some("  ".into()),
            ensure_ascii: false,
            ..Default::default()
        };
        assert_eq!(
            json_dumps(&v, &opts).unwrap(),
            "{\n  \"a\": [\n    1,\n    2.5\n  ],\n  \"b\": {},\n  \"c\": \"é\"\n}"
        );
        assert_eq!(
            json_dumps(&v, &DumpsOptions::default()).unwrap(),
            r#"{"a": [1, 2.5], "b": {}, "c": "\u00e9"}"#
        );
    }
}
