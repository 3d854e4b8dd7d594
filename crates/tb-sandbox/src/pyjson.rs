//! Python-exact JSON text: what `json.dumps` writes in CPython, byte for byte.
//!
//! Two layouts matter: the canonical form the reference hashes
//! (`sort_keys=True, separators=(",", ":")`) and the default form a tool result is sent in
//! (`", "` and `": "` separators, keys in insertion order). Both use `ensure_ascii` and
//! Python's float `repr`, and both keep ints and floats apart (`450` vs `450.0`).

use serde_json::{Number, Value};
use std::fmt::Write;

/// How to lay out the JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `json.dumps(v, sort_keys=True, separators=(",", ":"))`: the hash input.
    Canonical,
    /// `json.dumps(v)`: keys in insertion order, `", "` and `": "`.
    Default,
}

/// `json.dumps(value)` with the given layout.
pub fn dumps(value: &Value, layout: Layout) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, layout);
    out
}

/// The canonical text the reference hashes.
pub fn canonical(value: &Value) -> String {
    dumps(value, Layout::Canonical)
}

fn write_value(out: &mut String, value: &Value, layout: Layout) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(if layout == Layout::Canonical {
                        ","
                    } else {
                        ", "
                    });
                }
                write_value(out, item, layout);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            let (item_sep, key_sep) = match layout {
                Layout::Canonical => (",", ":"),
                Layout::Default => (", ", ": "),
            };
            let write_entry = |i: usize, k: &str, v: &Value, out: &mut String| {
                if i > 0 {
                    out.push_str(item_sep);
                }
                write_str(out, k);
                out.push_str(key_sep);
                write_value(out, v, layout);
            };
            if layout == Layout::Canonical {
                // Python sorts str keys by code point; UTF-8 byte order is the same order.
                let mut keys: Vec<(&String, &Value)> = map.iter().collect();
                keys.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                for (i, (k, v)) in keys.into_iter().enumerate() {
                    write_entry(i, k, v, out);
                }
            } else {
                for (i, (k, v)) in map.iter().enumerate() {
                    write_entry(i, k, v, out);
                }
            }
            out.push('}');
        }
    }
}

fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        let _ = write!(out, "{i}");
    } else if let Some(u) = n.as_u64() {
        let _ = write!(out, "{u}");
    } else if let Some(f) = n.as_f64() {
        out.push_str(&float_repr(f));
    }
}

/// Python's `repr(float)` (also what `json.dumps` writes for a finite float): the shortest
/// string that round-trips, in fixed notation for exponents -4..16 and scientific otherwise,
/// always with a `.0` or an exponent so it reads back as a float.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "1.2345e-5" or "1e16".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // Python's repr uses scientific notation when the decimal exponent is < -4 or >= 16.
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let int_len = exp as usize + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 || (c as u32) > 0x7e => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    let _ = write!(out, "\\u{unit:04x}");
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (0.1, "0.1"),
            (-0.0, "-0.0"),
            (435.0, "435.0"),
            (1.5e300, "1.5e+300"),
            (123456789.125, "123456789.125"),
            (2.5e-7, "2.5e-07"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.30000000000000004, "0.30000000000000004"),
            (-12.75, "-12.75"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want, "repr({f:?})");
        }
    }

    #[test]
    fn canonical_sorts_and_escapes() {
        let v = json!({"b": [1, 2.0, "é😀"], "a": {"z": null, "y": true}, "c": "q\"\\\n\u{1}/"});
        assert_eq!(
            canonical(&v),
            r#"{"a":{"y":true,"z":null},"b":[1,2.0,"\u00e9\ud83d\ude00"],"c":"q\"\\\n\u0001/"}"#
        );
    }

    #[test]
    fn default_layout_keeps_order() {
        let v = json!({"b": 1, "a": [1, {"x": 0.5}]});
        assert_eq!(
            dumps(&v, Layout::Default),
            r#"{"b": 1, "a": [1, {"x": 0.5}]}"#
        );
    }

    #[test]
    fn large_ints_stay_ints() {
        let v: Value =
            serde_json::from_str("[18446744073709551615, -9223372036854775808]").unwrap();
        assert_eq!(canonical(&v), "[18446744073709551615,-9223372036854775808]");
    }

    proptest::proptest! {
        #[test]
        fn float_repr_round_trips(f in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL) {
            let s = float_repr(f);
            let back: f64 = s.parse().unwrap();
            proptest::prop_assert_eq!(back.to_bits(), f.to_bits());
            proptest::prop_assert!(s.contains('.') || s.contains('e'));
        }
    }
}
