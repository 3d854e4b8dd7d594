//! `netsuite`: inventory.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `check_inventory`: stock of one SKU.
pub fn check_inventory(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to check inventory";
    let sku = arg(a, "sku");
    let inv = first(s, INVENTORY, "sku", &json!(sku), F)?
        .ok_or_else(|| fail(format!("SKU not found in inventory system: {sku}")))?;
    Ok(out(vec![
        ("sku", val(&inv, "sku")),
        ("available_quantity", val(&inv, "available_quantity")),
        ("reserved_quantity", val(&inv, "reserved_quantity")),
        ("warehouse_location", val(&inv, "warehouse_location")),
        ("restock_date", isoformat_field(&inv, "restock_date")),
        (
            "expected_restock_quantity",
            val(&inv, "expected_restock_quantity"),
        ),
    ]))
}
