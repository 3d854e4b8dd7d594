//! `loop_returns`: return merchandise authorizations.

use super::common::{FIXED_NOW, create, first, isoformat_stored, out, probe_id};
use super::tables::RMAS;
use crate::vocab::project_as;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `create_rma`: an approved RMA `RMA-20{n:06}`, n probed from the RMA count.
pub fn create_rma(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let count = s.state.count(RMAS)?;
    let id = probe_id(s, RMAS, "id", count, |n| format!("RMA-20{n:06}"))?;
    let row = create(
        s,
        RMAS,
        json!({
            "id": id,
            "order_id": a.str_or_empty("order_id"),
            "line_item_id": a.str_or_empty("line_item_id"),
            "customer_id": a.str_or_empty("customer_id"),
            "return_reason": a.value("return_reason"),
            "is_defective": a.value("is_defective"),
            "status": "approved",
            "created_date": FIXED_NOW,
            "refund_amount": a.value("refund_amount"),
            "restocking_fee": a.value("restocking_fee"),
            "return_shipping_cost": a.value("return_shipping_cost"),
            "removal_fee": a.value("removal_fee"),
        }),
    )?;
    Ok(project_as(
        &row,
        "rma_id",
        &["status", "created_date"],
        &["created_date"],
    ))
}

/// `get_rma_status`: an RMA with its refund and fees.
pub fn get_rma_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("rma_id");
    let rma = first(s, RMAS, "id", &json!(id))?
        .ok_or_else(|| ToolError::new(format!("RMA not found: {id}")))?;
    let mut fields: Vec<(&str, Value)> = vec![("rma_id", rma.value("id"))];
    for f in [
        "order_id",
        "line_item_id",
        "customer_id",
        "return_reason",
        "status",
        "refund_amount",
        "restocking_fee",
        "return_shipping_cost",
        "removal_fee",
    ] {
        fields.push((f, rma.value(f)));
    }
    fields.push(("created_date", isoformat_stored(&rma.value("created_date"))));
    Ok(out(fields))
}
