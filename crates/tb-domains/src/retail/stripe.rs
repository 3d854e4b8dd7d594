//! `stripe`: payment transactions and refunds.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `charge_customer`: a new authorized transaction `TXN-2{count:07}` (no collision check).
pub fn charge_customer(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to charge customer";
    let count = s.state.count(TRANSACTIONS).or_fail(F)?;
    let row = create(
        s,
        TRANSACTIONS,
        json!({
            "id": format!("TXN-2{count:07}"),
            "order_id": arg(a, "order_id"),
            "customer_id": arg(a, "customer_id"),
            "amount": val(a, "amount"),
            "status": "authorized",
            "payment_method": "Card on file",
            "transaction_date": FIXED_NOW,
            "charge_reason": val(a, "charge_reason"),
        }),
        F,
    )?;
    Ok(out(vec![
        ("transaction_id", val(&row, "id")),
        ("order_id", val(&row, "order_id")),
        ("amount", val(&row, "amount")),
        ("status", val(&row, "status")),
        (
            "transaction_date",
            isoformat_stored(&val(&row, "transaction_date")),
        ),
    ]))
}

/// `create_refund`: a pending refund `RFD-2{count:07}` against the order's first transaction.
pub fn create_refund(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to create refund";
    let order_id = arg(a, "order_id");
    let txn = first(s, TRANSACTIONS, "order_id", &json!(order_id), F)?.ok_or_else(|| {
        fail(format!(
            "Original payment transaction not found for order: {order_id}"
        ))
    })?;
    let count = s.state.count(REFUNDS).or_fail(F)?;
    let row = create(
        s,
        REFUNDS,
        json!({
            "id": format!("RFD-2{count:07}"),
            "transaction_id": val(&txn, "id"),
            "order_id": order_id,
            "amount": val(a, "amount"),
            "refund_reason": val(a, "refund_reason"),
            "status": "pending",
            "refund_date": FIXED_NOW,
        }),
        F,
    )?;
    Ok(out(vec![
        ("refund_id", val(&row, "id")),
        ("transaction_id", val(&row, "transaction_id")),
        ("amount", val(&row, "amount")),
        ("status", val(&row, "status")),
        ("refund_date", isoformat_stored(&val(&row, "refund_date"))),
    ]))
}

/// `get_payment_status`: the order's first payment transaction.
pub fn get_payment_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve payment status";
    let order_id = arg(a, "order_id");
    let txn = first(s, TRANSACTIONS, "order_id", &json!(order_id), F)?.ok_or_else(|| {
        fail(format!(
            "No payment transaction found for order: {order_id}"
        ))
    })?;
    Ok(out(vec![
        ("transaction_id", val(&txn, "id")),
        ("order_id", val(&txn, "order_id")),
        ("customer_id", val(&txn, "customer_id")),
        ("amount", val(&txn, "amount")),
        ("status", val(&txn, "status")),
        ("payment_method", val(&txn, "payment_method")),
        (
            "transaction_date",
            isoformat_stored(&val(&txn, "transaction_date")),
        ),
    ]))
}
