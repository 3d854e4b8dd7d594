//! The OData `$filter` parser against the `odata-query` library's own outcomes.

use serde_json::Value;
use tb_domains::zendesk::odata::parse;

/// Outcomes of the `odata-query` library on the filters of the golden traces, hand-picked
/// edge cases and random token soup (generated once with the library, kept as data).
#[test]
fn agrees_with_the_library_corpus() {
    let corpus: Vec<Value> =
        serde_json::from_str(include_str!("../data/odata_corpus.json")).unwrap_or_default();
    assert!(corpus.len() > 1000);
    let mut bad = Vec::new();
    for case in &corpus {
        let (Some(f), Some(want)) = (case["filter"].as_str(), case["result"].as_str()) else {
            continue;
        };
        let got = match parse(f) {
            Ok(ast) => format!("ok:{ast}"),
            Err(e) => format!("err:{e}"),
        };
        if got != want {
            bad.push(format!("{f:?}\n   want {want}\n   got  {got}"));
        }
    }
    assert!(
        bad.is_empty(),
        "{} of {} differ:\n{}",
        bad.len(),
        corpus.len(),
        bad.iter().take(25).cloned().collect::<Vec<_>>().join("\n")
    );
}
