//! Snapshots of the text and Markdown tables (two models, prices, failures, two domains).

use serde_json::{Value, json};
use tb_metrics::cost::PriceTable;
use tb_metrics::format;

fn ours(model: &str, outcomes: &[(&str, &str, &str)]) -> tb_metrics::Run {
    // (uid, domain, outcomes as P/F/E per repetition)
    let mut lines = Vec::new();
    for (uid, domain, outs) in outcomes {
        for (rep, o) in outs.chars().enumerate() {
            let passed = o == 'P';
            let diff: Vec<Value> = if passed {
                vec![]
            } else {
                vec![
                    json!({"path": "orders[0].status", "type": "value mismatch", "result": "open", "golden": "cancelled"}),
                ]
            };
            let verdict = if o == 'E' {
                Value::Null
            } else {
                json!({"passed": passed, "state": [{"server": domain, "result_hash": "r", "golden_hash": "g", "passed": passed, "diff": diff}], "rubrics": []})
            };
            let test_result = if o == 'E' {
                Value::Null
            } else {
                json!({"result": passed, "reward": if passed {1.0} else {0.0}})
            };
            lines.push(
                json!({
                    "uid": uid, "key": format!("{uid}::repeat::{rep}"), "repetition": rep,
                    "messages": [
                        {"T": "Text", "metadata": {}, "role": "user", "content": "cancel my order"},
                        {"T": "ParallelToolCall", "metadata": {}, "tool_calls": [{"T": "ToolCall", "metadata": {}, "name": "cancel_order", "arguments": {"order_id": "O1"}, "id": "c1"}]},
                        {"T": "ToolResponse", "metadata": {}, "name": "cancel_order", "content": "{\"ok\": true}", "id": "c1"},
                        {"T": "Text", "metadata": {}, "role": "assistant", "content": "Done. <DONE>"}
                    ],
                    "test_result": test_result, "usage": [],
                    "usage_by_role": {"agent": {"input_tokens": 10000, "input_tokens_details": {"cached_tokens": 2000}, "output_tokens": 1000},
                                      "user": {"input_tokens": 2000, "output_tokens": 200}, "judge": {"input_tokens": 0, "output_tokens": 0}},
                    "metadata": {"scenario": domain, "error": if o == 'E' { json!({"message": "timeout"}) } else { Value::Null }},
                    "is_system_error": o == 'E', "finish_reason": "done", "verdict": verdict,
                    "provenance": {"models": {"agent": model, "user": "gpt-4o-mini"}}
                })
                .to_string(),
            );
        }
    }
    tb_metrics::parse_run(&format!("{model}.jsonl"), model, &lines.join("\n")).unwrap()
}

fn reports() -> Vec<tb_metrics::ModelReport> {
    let a = ours(
        "gpt-4o",
        &[
            ("r.py:a", "retail", "PPPPP"),
            ("r.py:b", "retail", "PFPPF"),
            ("b.py:c", "bank", "FFFFF"),
            ("b.py:d", "bank", "PPPPE"),
        ],
    );
    let b = ours(
        "gpt-4o-mini",
        &[
            ("r.py:a", "retail", "PPPFP"),
            ("r.py:b", "retail", "FFFFF"),
            ("b.py:c", "bank", "FFPFF"),
            ("b.py:d", "bank", "PPP"),
        ],
    );
    let prices = PriceTable::from_value(&json!({"models": {"gpt-4o": {"input": 2.5, "cached_input": 1.25, "output": 10.0}, "gpt-4o-mini": {"input": 0.15, "cached_input": 0.075, "output": 0.6}}})).unwrap();
    tb_metrics::model_reports(&[a, b], Some(&prices))
}

#[test]
fn text_tables() {
    insta::assert_snapshot!("text", format::to_text(&reports()));
}

#[test]
fn markdown_tables() {
    insta::assert_snapshot!("markdown", format::to_markdown(&reports()));
}

#[test]
fn html_is_self_contained_and_escaped() {
    let mut r = reports();
    r[0].model = "<script>alert(1)</script>".into();
    let page = tb_metrics::html::report_html(&r, "T & <b>");
    assert!(!page.contains("<script>"));
    assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(page.contains("T &amp; &lt;b&gt;"));
    // Nothing is fetched: no source, link, stylesheet, script or CSS url.
    for bad in ["src=", "href=", "<link", "url(", "<script", "@import"] {
        assert!(!page.contains(bad), "{bad}");
    }
    assert!(page.contains("<svg"));
    assert!(page.contains("Pareto frontier"));
}
