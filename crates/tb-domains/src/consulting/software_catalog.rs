//! Internal software catalog: look up one entry, or search entries by name.

use super::tables::SOFTWARE_CATALOG_SOFTWARE_CATALOG;
use serde_json::{Map, Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// The fields a catalog entry shows (every one is required, so nothing is dropped).
fn entry(row: &Map<String, Value>) -> Value {
    json!({
        "id": row.value("id"),
        "name": row.value("name"),
        "annual_cost": row.value("annual_cost"),
        "pool_type": row.value("pool_type"),
    })
}

/// `software_catalog_get_details`: one entry by catalog id.
pub(crate) fn get_details(s: &mut Session, a: &Args) -> ToolResult {
    let id = a.str_or_empty("catalog_id");
    let row = s
        .row_by_id(SOFTWARE_CATALOG_SOFTWARE_CATALOG, id)?
        .ok_or_else(|| ToolError::new(format!("Software not found in catalog: {id}")))?;
    Ok(entry(&row))
}

/// `software_catalog_search`: entries whose name contains the text, ignoring case, in store order.
pub(crate) fn search(s: &mut Session, a: &Args) -> ToolResult {
    let name = a.str_or_empty("software_name");
    let term = name.to_lowercase();
    let results: Vec<Value> = s
        .state
        .rows(SOFTWARE_CATALOG_SOFTWARE_CATALOG)?
        .iter()
        .filter(|r| r.str_or_empty("name").to_lowercase().contains(&term))
        .map(entry)
        .collect();
    if results.is_empty() {
        return Err(ToolError::new(format!(
            "No matching software found in catalog for: {name}"
        )));
    }
    Ok(json!({ "results": results }))
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn lookups_and_their_errors() {
        let mut s = session(json!({
            "software_catalog_software_catalog": [{"id": "CAT-T", "name": "Tableau Desktop", "annual_cost": 840, "pool_type": "standard"}]
        }));
        let found = call(
            &mut s,
            "software_catalog_search",
            json!({"software_name": "tAbLeAu"}),
        );
        let id = found["results"][0]["id"].clone();
        assert!(id.is_string(), "{found}");
        let one = call(
            &mut s,
            "software_catalog_get_details",
            json!({"catalog_id": id}),
        );
        assert_eq!(one, found["results"][0]);
        calls!(s;
            "software_catalog_get_details" {"catalog_id": "CAT-NOPE"} => error "Tool execution failed: Software not found in catalog: CAT-NOPE";
            "software_catalog_search" {"software_name": "zzqx"} => error "Tool execution failed: No matching software found in catalog for: zzqx";
            "software_catalog_search" {} => error "Tool execution failed: Input validation failed: software_name: Field required";
            "software_catalog_search" {"software_name": "x", "limit": 3} => error "Tool execution failed: Input validation failed: limit: Extra inputs are not permitted";
        );
    }
}
