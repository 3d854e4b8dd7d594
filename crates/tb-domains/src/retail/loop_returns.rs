//! `loop_returns`: return merchandise authorizations.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `create_rma`: an approved RMA `RMA-20{n:06}`, n probed from the RMA count.
pub fn create_rma(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to create RMA";
    let count = s.state.count(RMAS).or_fail(F)?;
    let id = probe_id(s, RMAS, "id", count, F, |n| format!("RMA-20{n:06}"))?;
    let row = create(
        s,
        RMAS,
        json!({
            "id": id,
            "order_id": arg(a, "order_id"),
            "line_item_id": arg(a, "line_item_id"),
            "customer_id": arg(a, "customer_id"),
            "return_reason": val(a, "return_reason"),
            "is_defective": val(a, "is_defective"),
            "status": "approved",
            "created_date": FIXED_NOW,
            "refund_amount": val(a, "refund_amount"),
            "restocking_fee": val(a, "restocking_fee"),
            "return_shipping_cost": val(a, "return_shipping_cost"),
            "removal_fee": val(a, "removal_fee"),
        }),
        F,
    )?;
    Ok(out(vec![
        ("rma_id", val(&row, "id")),
        ("status", val(&row, "status")),
        ("created_date", isoformat_stored(&val(&row, "created_date"))),
    ]))
}

/// `get_rma_status`: an RMA with its refund and fees.
pub fn get_rma_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve RMA status";
    let id = arg(a, "rma_id");
    let rma =
        first(s, RMAS, "id", &json!(id), F)?.ok_or_else(|| fail(format!("RMA not found: {id}")))?;
    let mut fields: Vec<(&str, Value)> = vec![("rma_id", val(&rma, "id"))];
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
        fields.push((f, val(&rma, f)));
    }
    fields.push(("created_date", isoformat_stored(&val(&rma, "created_date"))));
    Ok(out(fields))
}
