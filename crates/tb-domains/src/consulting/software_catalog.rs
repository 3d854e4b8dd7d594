//! Internal software catalog: look up one entry, or search entries by name.

use super::tables::SOFTWARE_CATALOG_SOFTWARE_CATALOG;
use crate::vocab::SessionRows;
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
        .rows_where(SOFTWARE_CATALOG_SOFTWARE_CATALOG, |r| {
            r.str_or_empty("name").to_lowercase().contains(&term)
        })?
        .map(entry)
        .collect();
    if results.is_empty() {
        return Err(ToolError::new(format!(
            "No matching software found in catalog for: {name}"
        )));
    }
    Ok(json!({ "results": results }))
}
