//! `netsuite`: inventory.

use super::common::first;
use super::tables::INVENTORY;
use crate::vocab::project;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `check_inventory`: stock of one SKU.
pub fn check_inventory(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let sku = a.str_or_empty("sku");
    let inv = first(s, INVENTORY, "sku", &json!(sku))?
        .ok_or_else(|| ToolError::new(format!("SKU not found in inventory system: {sku}")))?;
    Ok(project(
        &inv,
        &[
            "sku",
            "available_quantity",
            "reserved_quantity",
            "warehouse_location",
            "restock_date",
            "expected_restock_quantity",
        ],
        &["restock_date"],
    ))
}
