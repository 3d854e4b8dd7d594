//! `json.dumps` as CPython writes it, byte for byte.
//!
//! Two layouts are written without options and fast: the canonical form the reference hashes
//! (`sort_keys=True, separators=(",", ":")`) and the default form a tool result is sent in
//! (`", "` and `": "` separators, keys in insertion order). Both use `ensure_ascii` and
//! Python's float `repr`, and both keep ints and floats apart (`450` vs `450.0`). [`Options`]
//! and the string writers serve encoders of other value types (indent, separators,
//! `ensure_ascii=False`, `sort_keys`).

use serde_json::{Number, Value};
use std::fmt::Write as _;

use crate::float::json_float;

/// How to lay out the JSON text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// `json.dumps(v, sort_keys=True, separators=(",", ":"))`: the hash input.
    Canonical,
    /// `json.dumps(v)`: keys in insertion order, `", "` and `": "`.
    Default,
    /// `json.dumps(v, sort_keys=True)`: `", "` and `": "`, keys sorted (how the reference
    /// hashes a server's effects, `effects_sha256`).
    SortKeys,
}

impl Layout {
    fn sorts(self) -> bool {
        self != Layout::Default
    }
}

/// Where JSON text goes: a `String`, or a hasher.
pub trait Sink {
    /// Appends text.
    fn push_str(&mut self, s: &str);
    /// Appends one ASCII byte.
    fn push_byte(&mut self, b: u8);
}

impl Sink for String {
    #[inline]
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    #[inline]
    fn push_byte(&mut self, b: u8) {
        self.push(char::from(b));
    }
}

/// `json.dumps(value)` with the given layout.
pub fn dumps(value: &Value, layout: Layout) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, layout);
    out
}

/// `value` with the keys of every object sorted as Python's `sort_keys` sorts them (by code
/// point), for writers other than [`dumps`] (which sorts as it writes).
pub fn sort_keys(value: &Value) -> Value {
    match value {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k.clone(), sort_keys(v)))
                    .collect(),
            )
        }
        Value::Array(a) => Value::Array(a.iter().map(sort_keys).collect()),
        other => other.clone(),
    }
}

/// The canonical text the reference hashes.
pub fn canonical(value: &Value) -> String {
    dumps(value, Layout::Canonical)
}

/// Writes the canonical text of `value` into a sink.
pub fn write_canonical<S: Sink>(out: &mut S, value: &Value) {
    write_value(out, value, Layout::Canonical);
}

/// Writes `json.dumps(value)` in the given layout into a sink.
pub fn write<S: Sink>(out: &mut S, value: &Value, layout: Layout) {
    write_value(out, value, layout);
}

fn write_value<S: Sink>(out: &mut S, value: &Value, layout: Layout) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push_byte(b'[');
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
            out.push_byte(b']');
        }
        Value::Object(map) => write_map(out, map, layout),
    }
}

/// Writes `json.dumps(dict)` of a JSON object (what writing `Value::Object(map)` gives).
pub fn write_object<S: Sink>(out: &mut S, map: &serde_json::Map<String, Value>, layout: Layout) {
    write_map(out, map, layout);
}

fn write_map<S: Sink>(out: &mut S, map: &serde_json::Map<String, Value>, layout: Layout) {
    out.push_byte(b'{');
    let (item_sep, key_sep) = match layout {
        Layout::Canonical => (",", ":"),
        Layout::Default | Layout::SortKeys => (", ", ": "),
    };
    let mut write_entry = |i: usize, k: &str, v: &Value| {
        if i > 0 {
            out.push_str(item_sep);
        }
        write_str(out, k);
        out.push_str(key_sep);
        write_value(out, v, layout);
    };
    if layout.sorts() {
        // Python sorts str keys by code point; UTF-8 byte order is the same order.
        // Rows are usually small: sort on the stack when they fit.
        let sorted = map
            .keys()
            .zip(map.keys().skip(1))
            .all(|(a, b)| a.as_bytes() < b.as_bytes());
        if sorted {
            for (i, (k, v)) in map.iter().enumerate() {
                write_entry(i, k, v);
            }
        } else {
            let mut keys: Vec<(&String, &Value)> = map.iter().collect();
            keys.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
            for (i, (k, v)) in keys.into_iter().enumerate() {
                write_entry(i, k, v);
            }
        }
    } else {
        for (i, (k, v)) in map.iter().enumerate() {
            write_entry(i, k, v);
        }
    }
    out.push_byte(b'}');
}

fn write_number<S: Sink>(out: &mut S, n: &Number) {
    if let Some(i) = n.as_i64() {
        let mut b = itoa_buf();
        out.push_str(fmt_int(&mut b, i128::from(i)));
    } else if let Some(u) = n.as_u64() {
        let mut b = itoa_buf();
        out.push_str(fmt_int(&mut b, i128::from(u)));
    } else if let Some(f) = n.as_f64() {
        out.push_str(&json_float(f));
    }
}

fn itoa_buf() -> [u8; 40] {
    [0u8; 40]
}

/// Decimal text of an integer, written into `buf`.
fn fmt_int(buf: &mut [u8; 40], v: i128) -> &str {
    let neg = v < 0;
    let mut x = v.unsigned_abs();
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (x % 10) as u8;
        x /= 10;
        if x == 0 {
            break;
        }
    }
    if neg {
        i -= 1;
        buf[i] = b'-';
    }
    std::str::from_utf8(&buf[i..]).unwrap_or("0")
}

/// Writes a JSON string literal (`ensure_ascii`).
pub fn write_json_str<S: Sink>(out: &mut S, s: &str) {
    write_str(out, s);
}

/// Writes a JSON string literal, with `ensure_ascii` or without it (`ensure_ascii=False`
/// escapes only `"`, `\\` and the C0 controls).
pub fn write_json_str_with<S: Sink>(out: &mut S, s: &str, ensure_ascii: bool) {
    if ensure_ascii {
        write_str(out, s);
        return;
    }
    out.push_byte(b'"');
    let mut start = 0;
    for (i, c) in s.char_indices() {
        let esc = match c {
            '"' => "\\\"",
            '\\' => "\\\\",
            '\n' => "\\n",
            '\r' => "\\r",
            '\t' => "\\t",
            '\u{08}' => "\\b",
            '\u{0c}' => "\\f",
            c if (c as u32) < 0x20 => "",
            _ => continue,
        };
        out.push_str(&s[start..i]);
        if esc.is_empty() {
            let mut buf = String::with_capacity(6);
            let _ = write!(buf, "\\u{:04x}", c as u32);
            out.push_str(&buf);
        } else {
            out.push_str(esc);
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push_byte(b'"');
}

/// `json.dumps(value, ensure_ascii=..., indent=indent)`: one item per line, `indent` spaces
/// per level, `","` between items and `": "` after keys; empty lists and dicts stay `[]`, `{}`.
pub fn dumps_indented(value: &Value, indent: usize, ensure_ascii: bool) -> String {
    fn go(out: &mut String, v: &Value, indent: usize, level: usize, ascii: bool) {
        let nl = |out: &mut String, level: usize| {
            out.push('\n');
            out.push_str(&" ".repeat(indent * level));
        };
        match v {
            Value::Array(a) if !a.is_empty() => {
                out.push('[');
                for (i, x) in a.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    nl(out, level + 1);
                    go(out, x, indent, level + 1, ascii);
                }
                nl(out, level);
                out.push(']');
            }
            Value::Object(m) if !m.is_empty() => {
                out.push('{');
                for (i, (k, x)) in m.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    nl(out, level + 1);
                    write_json_str_with(out, k, ascii);
                    out.push_str(": ");
                    go(out, x, indent, level + 1, ascii);
                }
                nl(out, level);
                out.push('}');
            }
            Value::String(t) => write_json_str_with(out, t, ascii),
            other => out.push_str(&dumps(other, Layout::Default)),
        }
    }
    let mut out = String::new();
    go(&mut out, value, indent, 0, ensure_ascii);
    out
}

/// The options of `json.dumps` beyond the two fixed layouts, for encoders of other value
/// types: `indent`, `separators`, `ensure_ascii`, `sort_keys`.
#[derive(Clone, Debug)]
pub struct Options {
    /// `indent` as the text of one level (`indent=2` is two spaces), or None.
    pub indent: Option<String>,
    /// `ensure_ascii`.
    pub ensure_ascii: bool,
    /// `sort_keys`.
    pub sort_keys: bool,
    /// The item separator (`separators[0]`), or None for Python's default (`", "`, or `","`
    /// with an indent).
    pub item_sep: Option<String>,
    /// The key separator (`separators[1]`).
    pub key_sep: String,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            indent: None,
            ensure_ascii: true,
            sort_keys: false,
            item_sep: None,
            key_sep: ": ".into(),
        }
    }
}

impl Options {
    /// The item separator written: the one given, else `", "`, or `","` with an indent (an
    /// explicit `", "` is kept with an indent, as Python keeps it).
    pub fn item_sep(&self) -> &str {
        match (&self.item_sep, &self.indent) {
            (Some(sep), _) => sep,
            (None, Some(_)) => ",",
            (None, None) => ", ",
        }
    }

    /// With an indent, a newline and `level` indents (before an item or a closing bracket).
    pub fn newline<S: Sink>(&self, out: &mut S, level: usize) {
        if let Some(ind) = &self.indent {
            out.push_byte(b'\n');
            for _ in 0..level {
                out.push_str(ind);
            }
        }
    }
}

/// Whether any byte is outside printable ASCII (`0x20..0x7f`) or is `"` or `\\`: eight bytes
/// at a time (the usual zero-byte tests, exact for "is there any such byte").
#[inline]
fn needs_escape(bytes: &[u8]) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let has_zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH != 0;
    let mut chunks = bytes.chunks_exact(8);
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_le_bytes(w);
        // A byte >= 0x80, a byte < 0x20, 0x7f, `"` or `\\`.
        if x & HIGH != 0
            || x.wrapping_sub(ONES * 0x20) & !x & HIGH != 0
            || has_zero(x ^ (ONES * 0x7f))
            || has_zero(x ^ (ONES * u64::from(b'"')))
            || has_zero(x ^ (ONES * u64::from(b'\\')))
        {
            return true;
        }
    }
    chunks
        .remainder()
        .iter()
        .any(|&b| !(0x20..0x7f).contains(&b) || b == b'"' || b == b'\\')
}

fn write_str<S: Sink>(out: &mut S, s: &str) {
    out.push_byte(b'"');
    let bytes = s.as_bytes();
    // Most strings need no escape: one pass, eight bytes at a time, then one copy.
    if !needs_escape(bytes) {
        out.push_str(s);
        out.push_byte(b'"');
        return;
    }
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        // Printable ASCII other than `"` and `\\` is written as is, in runs.
        if (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\' {
            continue;
        }
        // Only ASCII bytes end a run here, or the first byte of a multi-byte char.
        if b >= 0x80 && (b & 0xc0) == 0x80 {
            // A continuation byte: already handled with its lead byte.
            continue;
        }
        out.push_str(&s[start..i]);
        let c = s[i..].chars().next().unwrap_or('\u{fffd}');
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{08}' => out.push_str("\\b"),
            '\u{0c}' => out.push_str("\\f"),
            c => {
                let mut buf = [0u16; 2];
                for unit in c.encode_utf16(&mut buf) {
                    const HEX: &[u8; 16] = b"0123456789abcdef";
                    out.push_str("\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push_byte(HEX[usize::from((*unit >> shift) & 15)]);
                    }
                }
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push_byte(b'"');
}

#[cfg(test)]
mod tests {
    #[test]
    fn indented_dumps_of_cpython() {
        let v = serde_json::json!({"a": [1, {"b": "\u{e9}"}], "c": {}, "d": []});
        // json.dumps(v, ensure_ascii=False, indent=11) in CPython 3.11
        let want = "{\n           \"a\": [\n                      1,\n                      {\n                                 \"b\": \"\u{e9}\"\n                      }\n           ],\n           \"c\": {},\n           \"d\": []\n}";
        assert_eq!(super::dumps_indented(&v, 11, false), want);
        assert_eq!(
            super::dumps_indented(&serde_json::json!("\u{e9}"), 2, true),
            "\"\\u00e9\""
        );
    }

    #[test]
    fn the_eight_byte_escape_test_equals_the_byte_test() {
        let slow = |b: &[u8]| {
            b.iter()
                .any(|&c| !(0x20..0x7f).contains(&c) || c == b'"' || c == b'\\')
        };
        let mut cases: Vec<Vec<u8>> = Vec::new();
        for c in 0u8..=255 {
            for pos in 0..17 {
                let mut v = vec![b'a'; 17];
                v[pos] = c;
                cases.push(v.clone());
                v.truncate(pos + 1);
                cases.push(v);
            }
        }
        for v in &cases {
            assert_eq!(super::needs_escape(v), slow(v), "{v:?}");
        }
    }

    use super::*;
    use serde_json::json;

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
    fn sort_keys_layout_sorts_at_every_level_with_default_separators() {
        let v = json!({"b": 1, "a": [1, {"y": 0.5, "x": "é"}]});
        let text = r#"{"a": [1, {"x": "\u00e9", "y": 0.5}], "b": 1}"#;
        assert_eq!(dumps(&v, Layout::SortKeys), text);
        assert_eq!(dumps(&sort_keys(&v), Layout::Default), text);
    }

    #[test]
    fn strings_without_ensure_ascii() {
        let mut out = String::new();
        write_json_str_with(&mut out, "é\"\\\n\u{1}😀", false);
        assert_eq!(out, "\"é\\\"\\\\\\n\\u0001😀\"");
        let mut out = String::new();
        write_json_str_with(&mut out, "é", true);
        assert_eq!(out, "\"\\u00e9\"");
    }

    #[test]
    fn indent_drops_the_trailing_space_of_the_item_separator() {
        let o = Options {
            indent: Some("  ".into()),
            ..Options::default()
        };
        assert_eq!(o.item_sep(), ",");
        assert_eq!(Options::default().item_sep(), ", ");
        // json.dumps(v, indent=2, separators=(", ", ": ")) keeps the space.
        let given = Options {
            item_sep: Some(", ".into()),
            ..o.clone()
        };
        assert_eq!(given.item_sep(), ", ");
        let mut out = String::new();
        o.newline(&mut out, 2);
        assert_eq!(out, "\n    ");
    }

    #[test]
    fn large_ints_stay_ints() {
        let v: Value =
            serde_json::from_str("[18446744073709551615, -9223372036854775808]").unwrap();
        assert_eq!(canonical(&v), "[18446744073709551615,-9223372036854775808]");
    }
}
