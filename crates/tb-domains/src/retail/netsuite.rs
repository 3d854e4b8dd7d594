//! `netsuite`: inventory.

use super::common::{first, isoformat_field, out};
use super::tables::INVENTORY;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `check_inventory`: stock of one SKU.
pub fn check_inventory(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let sku = a.str_or_empty("sku");
    let inv = first(s, INVENTORY, "sku", &json!(sku))?
        .ok_or_else(|| ToolError::new(format!("SKU not found in inventory system: {sku}")))?;
    Ok(out(vec![
        ("sku", inv.value("sku")),
        ("available_quantity", inv.value("available_quantity")),
        ("reserved_quantity", inv.value("reserved_quantity")),
        ("warehouse_location", inv.value("warehouse_location")),
        ("restock_date", isoformat_field(&inv, "restock_date")),
        (
            "expected_restock_quantity",
            inv.value("expected_restock_quantity"),
        ),
    ]))
}
