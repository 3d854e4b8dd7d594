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

/// Where JSON text goes: a `String`, or a hasher.
pub trait Sink {
    /// Appends text.
    fn push_str(&mut self, s: &str);
    /// Appends one ASCII byte.
    fn push_byte(&mut self, b: u8);
}

impl Sink for String {
    fn push_str(&mut self, s: &str) {
        String::push_str(self, s);
    }
    fn push_byte(&mut self, b: u8) {
        self.push(char::from(b));
    }
}

/// A [`Sink`] that feeds sha256 through a small buffer, so hashing never builds the text.
#[derive(Clone)]
pub struct HashWriter {
    hasher: sha2::Sha256,
    buf: Vec<u8>,
}

impl Default for HashWriter {
    fn default() -> Self {
        Self::new()
    }
}

impl HashWriter {
    const CAP: usize = 8192;

    /// An empty hasher.
    pub fn new() -> Self {
        HashWriter {
            hasher: sha2::Sha256::default(),
            buf: Vec::with_capacity(Self::CAP),
        }
    }

    /// Feeds the buffered text to sha256 (a checkpoint is then a small copy).
    pub fn flush(&mut self) {
        use sha2::Digest;
        self.hasher.update(&self.buf);
        self.buf.clear();
    }

    /// The lowercase hex digest of everything written.
    pub fn hex(mut self) -> String {
        use sha2::Digest;
        self.flush();
        let digest = self.hasher.finalize();
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut out = String::with_capacity(64);
        for b in digest {
            out.push(char::from(HEX[usize::from(b >> 4)]));
            out.push(char::from(HEX[usize::from(b & 15)]));
        }
        out
    }
}

impl Sink for HashWriter {
    #[inline]
    fn push_str(&mut self, s: &str) {
        if self.buf.len() + s.len() > Self::CAP {
            self.flush();
            if s.len() > Self::CAP {
                use sha2::Digest;
                self.hasher.update(s.as_bytes());
                return;
            }
        }
        self.buf.extend_from_slice(s.as_bytes());
    }
    #[inline]
    fn push_byte(&mut self, b: u8) {
        if self.buf.len() == Self::CAP {
            self.flush();
        }
        self.buf.push(b);
    }
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

/// Writes the canonical text of `value` into a sink.
pub fn write_canonical<S: Sink>(out: &mut S, value: &Value) {
    write_value(out, value, Layout::Canonical);
}

/// Writes `json.dumps(value)` in the given layout into a sink.
pub fn write<S: Sink>(out: &mut S, value: &Value, layout: Layout) {
    write_value(out, value, layout);
}

/// Writes the canonical text of `value` as the stable state holds it: every non-empty list
/// whose items are all str/int/float/bool written in sorted order (at any depth), without
/// sorting or copying the value: `canonical(v)` after [`crate::state::sort_scalar_lists`].
pub fn write_canonical_stable<S: Sink>(out: &mut S, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push_byte(b'[');
            let scalar = !items.is_empty()
                && items
                    .iter()
                    .all(|x| matches!(x, Value::String(_) | Value::Number(_) | Value::Bool(_)));
            let cmp = crate::state::py_cmp_scalar;
            let in_order = || {
                items
                    .iter()
                    .zip(items.iter().skip(1))
                    .all(|(a, b)| cmp(a, b) != std::cmp::Ordering::Greater)
            };
            if scalar && !in_order() {
                // The same stable sort as `sort_scalar_lists`, on references.
                let mut refs: Vec<&Value> = items.iter().collect();
                refs.sort_by(|a, b| cmp(a, b));
                for (i, item) in refs.into_iter().enumerate() {
                    if i > 0 {
                        out.push_byte(b',');
                    }
                    write_value(out, item, Layout::Canonical);
                }
            } else {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_byte(b',');
                    }
                    write_canonical_stable(out, item);
                }
            }
            out.push_byte(b']');
        }
        Value::Object(map) => write_object_stable(out, map.iter()),
        other => write_value(out, other, Layout::Canonical),
    }
}

/// Writes an object given as entries (unique keys, any order) in canonical layout, keys
/// sorted, values as [`write_canonical_stable`] writes them.
pub fn write_object_stable<'a, S: Sink>(
    out: &mut S,
    entries: impl Iterator<Item = (&'a String, &'a Value)> + Clone,
) {
    out.push_byte(b'{');
    let mut prev: Option<&str> = None;
    let sorted = entries.clone().all(|(k, _)| {
        let ok = prev.is_none_or(|p| p.as_bytes() < k.as_bytes());
        prev = Some(k);
        ok
    });
    let mut write_entry = |i: usize, k: &str, v: &Value| {
        if i > 0 {
            out.push_byte(b',');
        }
        write_str(out, k);
        out.push_byte(b':');
        write_canonical_stable(out, v);
    };
    if sorted {
        for (i, (k, v)) in entries.enumerate() {
            write_entry(i, k, v);
        }
    } else {
        let mut keys: Vec<(&String, &Value)> = entries.collect();
        keys.sort_unstable_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        for (i, (k, v)) in keys.into_iter().enumerate() {
            write_entry(i, k, v);
        }
    }
    out.push_byte(b'}');
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
        Value::Object(map) => {
            out.push_byte(b'{');
            let (item_sep, key_sep) = match layout {
                Layout::Canonical => (",", ":"),
                Layout::Default => (", ", ": "),
            };
            let mut write_entry = |i: usize, k: &str, v: &Value| {
                if i > 0 {
                    out.push_str(item_sep);
                }
                write_str(out, k);
                out.push_str(key_sep);
                write_value(out, v, layout);
            };
            if layout == Layout::Canonical {
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
    }
}

fn write_number<S: Sink>(out: &mut S, n: &Number) {
    if let Some(i) = n.as_i64() {
        let mut b = itoa_buf();
        out.push_str(fmt_int(&mut b, i128::from(i)));
    } else if let Some(u) = n.as_u64() {
        let mut b = itoa_buf();
        out.push_str(fmt_int(&mut b, i128::from(u)));
    } else if let Some(f) = n.as_f64() {
        out.push_str(&float_repr(f));
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

/// Writes a JSON string literal (`ensure_ascii`).
pub fn write_json_str<S: Sink>(out: &mut S, s: &str) {
    write_str(out, s);
}

fn write_str<S: Sink>(out: &mut S, s: &str) {
    out.push_byte(b'"');
    let bytes = s.as_bytes();
    // Most strings need no escape: one branch-free pass, then one copy.
    if bytes.iter().fold(true, |ok, &b| {
        ok & ((0x20..0x7f).contains(&b) & (b != b'"') & (b != b'\\'))
    }) {
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
