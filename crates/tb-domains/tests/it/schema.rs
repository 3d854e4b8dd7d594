//! Every domain's declared tools against the reference's own `list_tools()` output
//! (`tb-bench-v1/tools/<server>.json`), written once and run over the domain list: the same
//! tools in the same order (the zendesk toolkit's included), and for each tool the input schema without its prose
//! (descriptions, titles, examples are ours) equal to the reference's, key order included.

use serde_json::Value;

/// Each v1 server with the number of tools it declares (its zendesk variant's seven included).
const DOMAINS: [(&str, usize); 5] = [
    ("sandbox_external_retail", 33),
    ("external_booking_v1", 38),
    ("sandbox_auto_insurance", 33),
    ("sandbox_neobank_support_v1", 32),
    ("sandbox_consulting", 27),
];

/// The schema without the prose.
fn bare(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "description" | "title" | "examples"))
                .map(|(k, v)| (k.clone(), bare(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(bare).collect()),
        other => other.clone(),
    }
}

/// Object keys in order, at every level (`Value` equality ignores key order).
fn key_order(v: &Value, path: &str, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            out.push(format!("{path}: {:?}", m.keys().collect::<Vec<_>>()));
            for (k, x) in m {
                key_order(x, &format!("{path}/{k}"), out);
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                key_order(x, &format!("{path}/{i}"), out);
            }
        }
        _ => {}
    }
}

fn name(t: &Value) -> &str {
    t["name"].as_str().unwrap_or("")
}

/// The differences between one server's declarations and the reference's list, as lines.
fn differences(server: &str, tools: usize, shared: &std::path::Path) -> Vec<String> {
    let path = shared.join(format!("tb-bench-v1/tools/{server}.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reference: Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let theirs: Vec<&Value> = reference["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{}: no `tools` list", path.display()))
        .iter()
        .collect();
    let domain = tb_domains::by_name(server)
        .expect("registry")
        .unwrap_or_else(|| panic!("no domain {server}"));
    let list = domain.tool_list();
    let mine: Vec<&Value> = list.iter().collect();
    let mut out = Vec::new();
    let names = |v: &[&Value]| v.iter().map(|t| name(t).to_string()).collect::<Vec<_>>();
    if names(&mine) != names(&theirs) {
        out.push(format!(
            "{server}: tools differ\n  ours      {:?}\n  reference {:?}",
            names(&mine),
            names(&theirs)
        ));
        return out;
    }
    if mine.len() != tools {
        out.push(format!("{server}: {} tools, expected {tools}", mine.len()));
    }
    for (m, t) in mine.iter().zip(&theirs) {
        let (a, b) = (bare(&m["inputSchema"]), bare(&t["input_schema"]));
        if a != b {
            out.push(format!(
                "{server} {}: input schema\n  ours      {a}\n  reference {b}",
                name(t)
            ));
            continue;
        }
        let (mut ka, mut kb) = (Vec::new(), Vec::new());
        key_order(&a, "", &mut ka);
        key_order(&b, "", &mut kb);
        if ka != kb {
            out.push(format!("{server} {}: key order {ka:?} vs {kb:?}", name(t)));
        }
    }
    out
}

#[tb_test_support::shared_test]
#[test]
fn every_domain_declares_the_reference_tools_and_input_schemas() {
    let shared = tb_test_support::shared();
    assert_eq!(
        DOMAINS.map(|(s, _)| s),
        tb_domains::SERVERS,
        "the table covers every v1 domain"
    );
    let failures: Vec<String> = DOMAINS
        .iter()
        .flat_map(|&(server, tools)| differences(server, tools, &shared))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
