//! The JSON text of a state, as the reference hashes it: Python's `json.dumps` (from
//! [`tb_python::json`], re-exported here for the state's users) written straight into sha256
//! ([`HashWriter`]), and the stable state's canonical text written without sorting or copying
//! the rows ([`write_canonical_stable`]).

use serde_json::Value;
use tb_python::cmp::cmp_scalar;
pub use tb_python::json::{
    Layout, Sink, canonical, dumps, sort_keys, write, write_canonical, write_json_str,
};

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

/// The keys of one object layout in stable order, escaped once. Rows of one table hold the same
/// keys in the same order (a model's fields), so sorting and escaping them is done once per
/// table rather than per row: [`write_object_planned`] writes a row through its table's plan
/// when the row's keys are exactly the plan's, in the same order, and falls back to
/// [`write_object_stable`] otherwise. Either way the text is the same.
#[derive(Debug)]
pub struct KeyPlan {
    /// The keys in the order the objects hold them.
    keys: Box<[String]>,
    /// Per key in byte order: its position in `keys` and its text (`,` before all but the
    /// first, then the escaped key and `:`).
    sorted: Box<[(usize, Box<str>)]>,
}

impl KeyPlan {
    /// The plan of objects holding `keys` (unique) in this order.
    pub fn new<'a>(keys: impl Iterator<Item = &'a String>) -> Self {
        let keys: Box<[String]> = keys.cloned().collect();
        let mut by_bytes: Vec<usize> = (0..keys.len()).collect();
        by_bytes.sort_by(|&a, &b| keys[a].as_bytes().cmp(keys[b].as_bytes()));
        let sorted = by_bytes
            .into_iter()
            .enumerate()
            .map(|(n, pos)| {
                let mut t = String::new();
                if n > 0 {
                    t.push(',');
                }
                write_json_str(&mut t, &keys[pos]);
                t.push(':');
                (pos, t.into_boxed_str())
            })
            .collect();
        KeyPlan { keys, sorted }
    }

    /// Calls `f` with the values of `entries` in the order the plan holds its keys, if the
    /// entries' keys are exactly this plan's in this order (`None` otherwise).
    pub fn with_values<'a, R>(
        &self,
        mut entries: impl Iterator<Item = (&'a String, &'a Value)>,
        f: impl FnOnce(&[&'a Value]) -> R,
    ) -> Option<R> {
        const STACK: usize = 64;
        static NULL: Value = Value::Null;
        let n = self.keys.len();
        let mut stack: [&Value; STACK] = [&NULL; STACK];
        let mut heap: Vec<&Value>;
        let vals: &mut [&Value] = if n <= STACK {
            &mut stack[..n]
        } else {
            heap = vec![&NULL; n];
            &mut heap
        };
        for (slot, key) in vals.iter_mut().zip(self.keys.iter()) {
            match entries.next() {
                Some((k, v)) if k == key => *slot = v,
                _ => return None,
            }
        }
        if entries.next().is_some() {
            return None;
        }
        Some(f(vals))
    }

    /// Per key in byte order: the key and its position in the plan's order.
    pub fn sorted(&self) -> impl Iterator<Item = (&str, usize)> {
        self.sorted
            .iter()
            .map(|(pos, _)| (self.keys[*pos].as_str(), *pos))
    }

    /// Writes the object of `entries` as [`write_object_stable`] does, if its keys are this
    /// plan's in this order; otherwise writes nothing and returns false.
    pub fn write<'a, S: Sink>(
        &self,
        out: &mut S,
        entries: impl Iterator<Item = (&'a String, &'a Value)>,
    ) -> bool {
        self.with_values(entries, |vals| {
            out.push_byte(b'{');
            for (pos, text) in &self.sorted {
                out.push_str(text);
                write_canonical_stable(out, vals[*pos]);
            }
            out.push_byte(b'}');
        })
        .is_some()
    }
}

/// A [`KeyPlan`] made from the first object written through it (see
/// [`write_object_planned`]). A copy starts empty; any two compare equal (a cache, not data).
#[derive(Debug, Default)]
pub struct KeyPlanCell(std::sync::OnceLock<KeyPlan>);

impl KeyPlanCell {
    /// The plan, made from `entries`' keys if there is none yet.
    pub fn get_or_init<'a>(
        &self,
        entries: impl Iterator<Item = (&'a String, &'a Value)>,
    ) -> &KeyPlan {
        self.0.get_or_init(|| KeyPlan::new(entries.map(|(k, _)| k)))
    }
}

impl Clone for KeyPlanCell {
    fn clone(&self) -> Self {
        KeyPlanCell::default()
    }
}

impl PartialEq for KeyPlanCell {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// [`write_object_stable`] through `plan` (made from these entries' keys if it has none yet):
/// the keys' order and text come from the plan when the entries hold exactly its keys in its
/// order, else the entries are sorted and escaped as [`write_object_stable`] does. The same
/// text either way.
pub fn write_object_planned<'a, S: Sink>(
    out: &mut S,
    plan: &KeyPlanCell,
    entries: impl Iterator<Item = (&'a String, &'a Value)> + Clone,
) {
    if !plan
        .get_or_init(entries.clone())
        .write(out, entries.clone())
    {
        write_object_stable(out, entries);
    }
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

    /// Keys and strings that need escapes or are not ASCII, and plain ones.
    fn text() -> impl proptest::strategy::Strategy<Value = String> {
        proptest::prop_oneof![
            "[a-z_]{0,6}",
            "[\\x00-\\x1f\"\\\\/a\u{e9}\u{2028}\u{1F600}\u{7f}]{0,6}",
            proptest::string::string_regex("\\PC{0,5}").expect("regex"),
        ]
    }

    fn value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            any::<f64>()
                .prop_filter("finite", |f| f.is_finite())
                .prop_map(|f| json!(f)),
            text().prop_map(Value::String),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                proptest::collection::vec((text(), inner), 0..4)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    fn stable(m: &serde_json::Map<String, Value>) -> String {
        let mut out = String::new();
        write_object_stable(&mut out, m.iter());
        out
    }

    proptest::proptest! {
        /// Rows written through one plan (made from the first row's keys) give the text of
        /// `write_object_stable`, whether a row holds the plan's keys in its order (the
        /// planned path) or other keys or another order (the fallback).
        #[test]
        fn planned_rows_equal_the_sorting_writer(
            keys in proptest::collection::btree_set(text(), 0..12),
            rows in proptest::collection::vec(
                (proptest::collection::vec(value(), 12), proptest::option::of(0usize..4), proptest::prelude::any::<usize>()),
                1..6,
            ),
            extra in text(),
        ) {
            let keys: Vec<String> = keys.into_iter().rev().collect();
            let plan = KeyPlanCell::default();
            for (i, (vals, change, seed)) in rows.iter().enumerate() {
                let mut m: serde_json::Map<String, Value> = keys
                    .iter()
                    .cloned()
                    .zip(vals.iter().cloned())
                    .collect();
                // Later rows: some keep the layout, others drop, add or move a key.
                match change.filter(|_| i > 0) {
                    Some(0) if !keys.is_empty() => {
                        m.remove(&keys[*seed % keys.len()]);
                    }
                    Some(1) => {
                        m.insert(extra.clone(), Value::Bool(true));
                    }
                    Some(2) if keys.len() > 1 => {
                        let k = &keys[*seed % keys.len()];
                        let v = m.remove(k).unwrap_or(Value::Null);
                        m.insert(k.clone(), v);
                    }
                    _ => {}
                }
                let mut out = String::new();
                write_object_planned(&mut out, &plan, m.iter());
                proptest::prop_assert_eq!(out, stable(&m));
            }
        }
    }

    #[test]
    fn a_planned_row_sorts_and_escapes_its_keys() {
        let plan = KeyPlanCell::default();
        let m = json!({"z\u{e9}": "\u{1F600}\n", "a\"b": [2, 1], "": {"y": 1, "x": "\u{7f}"}});
        let Value::Object(m) = m else { unreachable!() };
        for _ in 0..2 {
            let mut out = String::new();
            write_object_planned(&mut out, &plan, m.iter());
            assert_eq!(out, stable(&m));
            assert_eq!(
                out,
                r#"{"":{"x":"\u007f","y":1},"a\"b":[1,2],"z\u00e9":"\ud83d\ude00\n"}"#
            );
        }
    }

    #[test]
    fn hash_writer_hashes_the_text() {
        let v = json!({"k": "x".repeat(20_000), "n": [1, 2.0]});
        let mut w = HashWriter::new();
        write_canonical(&mut w, &v);
        let want = tb_core::sha256_hex(canonical(&v).as_bytes());
        assert_eq!(w.hex(), want);
    }
}
