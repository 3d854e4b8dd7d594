//! `stripe`: payment transactions and refunds.

use super::common::{FIXED_NOW, create, first};
use super::tables::{REFUNDS, TRANSACTIONS};
use crate::vocab::project_as;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `charge_customer`: a new authorized transaction `TXN-2{count:07}` (no collision check).
pub fn charge_customer(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let count = s.state.count(TRANSACTIONS)?;
    let row = create(
        s,
        TRANSACTIONS,
        json!({
            "id": format!("TXN-2{count:07}"),
            "order_id": a.str_or_empty("order_id"),
            "customer_id": a.str_or_empty("customer_id"),
            "amount": a.value("amount"),
            "status": "authorized",
            "payment_method": "Card on file",
            "transaction_date": FIXED_NOW,
            "charge_reason": a.value("charge_reason"),
        }),
    )?;
    Ok(project_as(
        &row,
        "transaction_id",
        &["order_id", "amount", "status", "transaction_date"],
        &["transaction_date"],
    ))
}

/// `create_refund`: a pending refund `RFD-2{count:07}` against the order's first transaction.
pub fn create_refund(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let order_id = a.str_or_empty("order_id");
    let txn = first(s, TRANSACTIONS, "order_id", &json!(order_id))?.ok_or_else(|| {
        ToolError::new(format!(
            "Original payment transaction not found for order: {order_id}"
        ))
    })?;
    let count = s.state.count(REFUNDS)?;
    let row = create(
        s,
        REFUNDS,
        json!({
            "id": format!("RFD-2{count:07}"),
            "transaction_id": txn.value("id"),
            "order_id": order_id,
            "amount": a.value("amount"),
            "refund_reason": a.value("refund_reason"),
            "status": "pending",
            "refund_date": FIXED_NOW,
        }),
    )?;
    Ok(project_as(
        &row,
        "refund_id",
        &["transaction_id", "amount", "status", "refund_date"],
        &["refund_date"],
    ))
}

/// `get_payment_status`: the order's first payment transaction.
pub fn get_payment_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let order_id = a.str_or_empty("order_id");
    let txn = first(s, TRANSACTIONS, "order_id", &json!(order_id))?.ok_or_else(|| {
        ToolError::new(format!(
            "No payment transaction found for order: {order_id}"
        ))
    })?;
    Ok(project_as(
        &txn,
        "transaction_id",
        &[
            "order_id",
            "customer_id",
            "amount",
            "status",
            "payment_method",
            "transaction_date",
        ],
        &["transaction_date"],
    ))
}
