//! Unknown keys in config files: warned (not refused, since the reference ignores them) with
//! the file, the line and a "did you mean" for a likely typo.

use serde_json::{Map, Value};
use std::collections::HashMap;
use std::path::Path;

/// Optimal string alignment distance (Levenshtein plus adjacent transpositions), in chars.
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let w = b.len() + 1;
    let mut d = vec![0usize; (a.len() + 1) * w];
    for i in 0..=a.len() {
        d[i * w] = i;
    }
    for (j, cell) in d.iter_mut().enumerate().take(w) {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut v = (d[(i - 1) * w + j] + 1)
                .min(d[i * w + j - 1] + 1)
                .min(d[(i - 1) * w + j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                v = v.min(d[(i - 2) * w + j - 2] + 1);
            }
            d[i * w + j] = v;
        }
    }
    d[a.len() * w + b.len()]
}

/// The known name closest to `word`, if it is close enough to be a typo of it.
pub fn did_you_mean<'a>(word: &str, known: &[&'a str]) -> Option<&'a str> {
    // Long keys are compared only on a bounded prefix: the distance is quadratic.
    if word.chars().count() > 64 {
        return None;
    }
    let lower = word.to_lowercase();
    known
        .iter()
        .map(|k| (distance(&lower, k), *k))
        .filter(|(d, k)| *d <= (k.chars().count() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// The line of the nearest recorded node at or above a JSON pointer (1 when none is).
pub fn line_of(lines: &HashMap<String, usize>, ptr: &str) -> usize {
    nearest_line(lines, ptr).unwrap_or(1)
}

/// The line [`crate::load_with_lines`] recorded for the JSON pointer `ptr`, or else for its
/// nearest recorded ancestor.
pub fn nearest_line(lines: &HashMap<String, usize>, ptr: &str) -> Option<usize> {
    let mut p = ptr;
    loop {
        if let Some(l) = lines.get(p) {
            return Some(*l);
        }
        p = &p[..p.rfind('/')?];
    }
}

/// Warnings shown for one file (or one mapping) before the rest are summed up in one line.
pub const MAX_WARNINGS: usize = 20;

/// One warning per key of `map` (at JSON pointer `ptr`, named `field` in messages; empty at
/// the top level) that is not in `known`: `file:line: unknown key ...`. Past
/// [`MAX_WARNINGS`] unknown keys, the rest are counted in one closing line.
pub fn unknown_keys(
    path: &Path,
    lines: &HashMap<String, usize>,
    map: &Map<String, Value>,
    ptr: &str,
    field: &str,
    known: &[&str],
) -> Vec<String> {
    let mut out = Vec::new();
    let place = if field.is_empty() {
        String::new()
    } else {
        format!(" in `{field}`")
    };
    let mut more = 0usize;
    for key in map.keys() {
        if known.contains(&key.as_str()) {
            continue;
        }
        if out.len() == MAX_WARNINGS {
            more += 1;
            continue;
        }
        let escaped = key.replace('~', "~0").replace('/', "~1");
        let line = line_of(lines, &format!("{ptr}/{escaped}"));
        let shown: String = key.chars().take(80).collect();
        let hint = did_you_mean(key, known)
            .map(|k| format!(" (did you mean `{k}`?)"))
            .unwrap_or_default();
        out.push(format!(
            "{}:{line}: unknown key `{shown}`{place}{hint}; it is ignored",
            path.display()
        ));
    }
    if more > 0 {
        out.push(format!(
            "{}:{}: and {more} more unknown key(s){place}; they are ignored",
            path.display(),
            line_of(lines, ptr)
        ));
    }
    out
}

/// Warnings as shown: each text once, in first-seen order, the first [`MAX_WARNINGS`] of
/// them, then one line counting the rest (a single one left is shown instead, such as the
/// closing count of [`unknown_keys`]).
pub fn capped(warnings: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut extra = None;
    let mut more = 0usize;
    for w in warnings {
        if seen.contains(&w) {
            continue;
        }
        if out.len() == MAX_WARNINGS {
            more += 1;
            if extra.is_none() {
                extra = Some(w.clone());
            }
        } else {
            out.push(w.clone());
        }
        seen.insert(w);
    }
    match (more, extra) {
        (1, Some(w)) => out.push(w),
        (0, _) => {}
        _ => out.push(format!("and {more} more warning(s)")),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn typos_get_a_suggestion() {
        let known = ["temperature", "timeout", "top_p", "seed", "deployment"];
        assert_eq!(did_you_mean("tempreature", &known), Some("temperature"));
        assert_eq!(did_you_mean("temprature", &known), Some("temperature"));
        assert_eq!(did_you_mean("Timeout", &known), Some("timeout"));
        assert_eq!(did_you_mean("deploymnet", &known), Some("deployment"));
        assert_eq!(did_you_mean("banana", &known), None);
        assert_eq!(did_you_mean(&"x".repeat(10_000), &known), None);
    }

    #[test]
    fn warnings_name_file_line_and_field() {
        let mut lines = HashMap::new();
        lines.insert("/m/tempreature".to_string(), 7);
        let m = json!({"tempreature": 1, "seed": 2, "zzz": 3});
        let w = unknown_keys(
            Path::new("c.yaml"),
            &lines,
            m.as_object().unwrap_or(&Map::new()),
            "/m",
            "agent_model",
            &["temperature", "seed"],
        );
        assert_eq!(
            w,
            vec![
                "c.yaml:7: unknown key `tempreature` in `agent_model` (did you mean `temperature`?); it is ignored",
                "c.yaml:1: unknown key `zzz` in `agent_model`; it is ignored",
            ]
        );
    }

    #[test]
    fn many_unknown_keys_give_a_bounded_list() {
        let mut m = Map::new();
        for i in 0..100_000 {
            m.insert(format!("k{i}"), json!(i));
        }
        m.insert("seed".into(), json!(1));
        let mut lines = HashMap::new();
        lines.insert("/m".to_string(), 3);
        let w = unknown_keys(
            Path::new("c.yaml"),
            &lines,
            &m,
            "/m",
            "agent_model",
            &["seed"],
        );
        assert_eq!(w.len(), MAX_WARNINGS + 1);
        assert_eq!(
            w[0],
            "c.yaml:3: unknown key `k0` in `agent_model`; it is ignored"
        );
        assert_eq!(
            w[MAX_WARNINGS],
            "c.yaml:3: and 99980 more unknown key(s) in `agent_model`; they are ignored"
        );
    }

    #[test]
    fn capped_warnings_are_deduplicated_then_counted() {
        let ws = (0..50).map(|i| format!("w{}", i % 30));
        let out = capped(ws);
        assert_eq!(out.len(), MAX_WARNINGS + 1);
        assert_eq!(out[0], "w0");
        assert_eq!(out[MAX_WARNINGS - 1], "w19");
        assert_eq!(out[MAX_WARNINGS], "and 10 more warning(s)");
        assert_eq!(capped(["a".to_string(), "a".to_string()]), vec!["a"]);
        // One mapping's warnings and its closing count pass whole.
        let one_map: Vec<String> = (0..=MAX_WARNINGS).map(|i| format!("w{i}")).collect();
        assert_eq!(capped(one_map.clone()), one_map);
    }
}
