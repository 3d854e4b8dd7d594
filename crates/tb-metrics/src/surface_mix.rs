//! Runs are comparable with each other (and with the published results) only when the model
//! was shown the same thing: the same tool surface (`provenance.surface`: `reference` or
//! `own`, and the sha256 of each server's tool list) and the same prompts
//! (`provenance.prompts`, `origin`: `own` or `framework`). [`surface_mix`] finds mixes, for a loud warning.

use crate::load::Run;
use serde_json::Value;
use std::collections::BTreeMap;

/// What one attempt was shown, as a short label: `surface=own prompts=own tools=ab12cd34`
/// (`unknown` parts for records without that provenance).
pub fn shown_label(provenance: &serde_json::Map<String, Value>) -> String {
    let surface = provenance
        .get("surface")
        .and_then(|s| s.get("surface"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let prompts = provenance
        .get("prompts")
        .and_then(|s| s.get("origin"))
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let tools = provenance
        .get("surface")
        .and_then(|s| s.get("tools_sha256"))
        .map_or_else(
            || "unknown".into(),
            |h| {
                let text = serde_json::to_string(h).unwrap_or_default();
                let mut hex = tb_core::sha256_hex(text.as_bytes());
                hex.truncate(8);
                hex
            },
        );
    format!("surface={surface} prompts={prompts} tools={tools}")
}

/// A warning when the runs' attempts were shown different surfaces or prompts, naming each
/// label with the files that hold it; `None` when all are the same.
pub fn surface_mix(runs: &[&Run]) -> Option<String> {
    let mut by: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
    for r in runs {
        for a in &r.attempts {
            *by.entry(shown_label(&a.provenance))
                .or_default()
                .entry(r.file.clone())
                .or_default() += 1;
        }
    }
    if by.len() <= 1 {
        return None;
    }
    let mut s = String::from(
        "WARNING: these records were produced with different tool surfaces or prompts; their scores are not comparable:",
    );
    for (label, files) in &by {
        let files: Vec<String> = files.iter().map(|(f, n)| format!("{f} ({n})")).collect();
        s.push_str(&format!("\n  {label}: {}", files.join(", ")));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_are_found() {
        let rec = |surface: &str| {
            format!(
                "{{\"uid\":\"f.py:t\",\"key\":\"k{surface}\",\"repetition\":0,\"provenance\":{{\"surface\":{{\"surface\":\"{surface}\",\"tools_sha256\":{{\"s\":\"x\"}}}},\"prompts\":{{\"origin\":\"own\"}}}}}}\n"
            )
        };
        let a = crate::load::parse_run("a.jsonl", "a", &rec("own")).unwrap();
        let b = crate::load::parse_run("b.jsonl", "b", &rec("reference")).unwrap();
        assert!(surface_mix(&[&a, &a.clone()]).is_none());
        let w = surface_mix(&[&a, &b]).unwrap();
        assert!(
            w.contains("surface=own")
                && w.contains("surface=reference")
                && w.contains("b.jsonl (1)"),
            "{w}"
        );
    }
}
