//! Policy search (`search_policy` in retail, `knowledge_base_search_policy` elsewhere) over the
//! scenario's `sources` (each `{name, snippets: [text]}`), with an embedded BM25 index.
//!
//! The reference sends these queries to a Typesense server with semantic (embedding) search;
//! without one it answers `Search service is not available`. Here the search always works and
//! needs nothing outside the binary. **Its ranking differs from the reference's**: it is lexical
//! BM25 (k1 = 1.2, b = 0.75) over lower-cased alphanumeric tokens with a light plural stemmer,
//! not vector similarity. The result has the reference's shape: `{"snippets": [{"source",
//! "score", "vector_distance", "text"}]}`, best first, where `score` is the BM25 score times
//! 1000 rounded to an integer and `vector_distance` is `1 - score/best` (0 for the best hit),
//! kept only so that consumers of the reference's shape still find the field. No golden trace
//! calls these tools, so no verdict depends on the ranking.

use serde_json::{Value, json};
use std::collections::HashMap;
use tb_sandbox::{Args, Fields, Session, ToolResult};

fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(|t| {
            let t = t.to_lowercase();
            // A light stemmer: plural endings only, so "returns" finds "return".
            if t.len() > 4 && t.ends_with("ies") {
                format!("{}y", &t[..t.len() - 3])
            } else if t.len() > 3 && t.ends_with('s') && !t.ends_with("ss") {
                t[..t.len() - 1].to_string()
            } else {
                t
            }
        })
        .collect()
}

/// One searchable passage.
struct Doc<'a> {
    source: &'a str,
    text: &'a str,
    terms: HashMap<String, usize>,
    len: usize,
}

/// Ranks every snippet of `sources` for `query`; returns `(source, text, bm25)` best first,
/// only passages sharing at least one term with the query. Ties keep source order.
pub fn rank<'a>(sources: &'a [Value], query: &str) -> Vec<(&'a str, &'a str, f64)> {
    let mut docs = Vec::new();
    for s in sources {
        let name = s.get("name").and_then(Value::as_str).unwrap_or("");
        for snip in s
            .get("snippets")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let Some(text) = snip.as_str() else { continue };
            let toks = tokens(text);
            let mut terms = HashMap::new();
            for t in &toks {
                *terms.entry(t.clone()).or_insert(0) += 1;
            }
            docs.push(Doc {
                source: name,
                text,
                terms,
                len: toks.len(),
            });
        }
    }
    if docs.is_empty() {
        return Vec::new();
    }
    let n = docs.len() as f64;
    let avg = docs.iter().map(|d| d.len as f64).sum::<f64>() / n;
    let mut q: Vec<String> = tokens(query);
    q.sort();
    q.dedup();
    let (k1, b) = (1.2, 0.75);
    let mut scored: Vec<(usize, f64)> = docs
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let score = q
                .iter()
                .filter_map(|t| {
                    let tf = *d.terms.get(t)? as f64;
                    let df = docs.iter().filter(|x| x.terms.contains_key(t)).count() as f64;
                    let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
                    Some(
                        idf * tf * (k1 + 1.0)
                            / (tf + k1 * (1.0 - b + b * d.len as f64 / avg.max(1.0))),
                    )
                })
                .sum::<f64>();
            (i, score)
        })
        .filter(|(_, s)| *s > 0.0)
        .collect();
    scored.sort_by(|a, b| {
        b.1.partial_cmp(&a.1)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.0.cmp(&b.0))
    });
    scored
        .into_iter()
        .map(|(i, s)| (docs[i].source, docs[i].text, s))
        .collect()
}

/// Runs a policy search for the tool's validated arguments (`query`, `max_results`, which the
/// reference clamps: missing or < 1 gives 3, > 10 gives 10).
pub fn search_policy(s: &mut Session, a: &Args) -> ToolResult {
    let query = a.str_or_empty("query");
    let max: usize = match a.opt_i64("max_results") {
        None => 3,
        Some(m) if m < 1 => 3,
        Some(m) => usize::try_from(m.min(10)).unwrap_or(10),
    };
    let hits = rank(&s.sources, query);
    let best = hits.first().map_or(1.0, |h| h.2);
    let snippets: Vec<Value> = hits
        .into_iter()
        .take(max)
        .map(|(source, text, score)| {
            // Python's `round(score * 1000)` of a score in [0, 1].
            #[allow(clippy::cast_possible_truncation, reason = "a small rounded float")]
            let rounded = (score * 1000.0).round() as i64;
            json!({"source": source, "score": rounded, "vector_distance": 1.0 - score / best, "text": text})
        })
        .collect();
    Ok(json!({ "snippets": snippets }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_relevant_passages_first() {
        let sources = vec![
            json!({"name": "Returns.md", "snippets": ["Returns are accepted within 60 days of delivery.", "Refurbished items return only if defective."]}),
            json!({"name": "Shipping.md", "snippets": ["Expedited shipping costs $15 and arrives in two days."]}),
        ];
        let hits = rank(&sources, "How do I return a product?");
        assert_eq!(hits[0].0, "Returns.md");
        assert_eq!(hits.len(), 2, "the shipping passage shares no term");
        assert!(rank(&sources, "zzz").is_empty());
        let hits = rank(&sources, "shipping cost");
        assert_eq!(hits[0].0, "Shipping.md");
    }
}
