//! The JSON text of a state, as the reference hashes it: Python's `json.dumps` (from
//! [`tb_python::json`], re-exported here for the state's users) written straight into sha256
//! ([`HashWriter`]), and the stable state's canonical text written without sorting or copying
//! the rows ([`write_canonical_stable`]).

use serde_json::Value;
use tb_python::cmp::cmp_scalar;
pub use tb_python::json::{Layout, Sink, canonical, dumps, write, write_canonical, write_json_str};

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

/// Writes the canonical text of `value` as the stable state holds it: every non-empty list
/// whose items are all str/int/float/bool written in sorted order (at any depth), without
/// sorting or copying the value: `canonical(v)` after the state's `sort_scalar_lists`.
pub fn write_canonical_stable<S: Sink>(out: &mut S, value: &Value) {
    match value {
        Value::Array(items) => {
            out.push_byte(b'[');
            let scalar = !items.is_empty()
                && items
                    .iter()
                    .all(|x| matches!(x, Value::String(_) | Value::Number(_) | Value::Bool(_)));
            let cmp = cmp_scalar;
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
                    write(out, item, Layout::Canonical);
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
        other => write(out, other, Layout::Canonical),
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
        write_json_str(out, k);
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stable_text_sorts_scalar_lists_and_keys() {
        let v = json!({"b": [3, "a", 1.5, true], "a": [[2, 1], {"z": 1, "y": ["b", "a"]}]});
        let mut out = String::new();
        write_canonical_stable(&mut out, &v);
        assert_eq!(
            out,
            r#"{"a":[[1,2],{"y":["a","b"],"z":1}],"b":[true,1.5,3,"a"]}"#
        );
    }

    #[test]
    fn hash_writer_hashes_the_text() {
        let v = json!({"k": "x".repeat(20_000), "n": [1, 2.0]});
        let mut w = HashWriter::new();
        write_canonical(&mut w, &v);
        use sha2::Digest;
        let want: String = sha2::Sha256::digest(canonical(&v).as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(w.hex(), want);
    }
}
