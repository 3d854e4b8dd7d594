//! payment_api: transactions (charges, refunds, disputes), invoices and payment methods.

use super::first_where;
use super::tables::{BOOKINGS, TRANSACTIONS};
use crate::vocab::{SessionRows, one_of};
use serde_json::{Value, json};
use tb_python::decimal::{quantize_text, signum_text};
use tb_sandbox::state::Row;
use tb_sandbox::tool::exclude_none;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

/// `FIXED_CURRENT_TIME.isoformat()` of charges and refunds.
const CHARGE_TIME: &str = "2025-11-25T10:00:00+00:00";
/// `FIXED_CURRENT_TIME.isoformat()` of disputes.
const DISPUTE_TIME: &str = "2025-11-30T10:00:00+00:00";

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add("payment_api_check_payment_status", check_payment_status)
        .add("payment_api_generate_invoice", generate_invoice)
        .add(
            "payment_api_get_transaction_history",
            get_transaction_history,
        )
        .add("payment_api_process_charge", process_charge)
        .add("payment_api_process_charge_dispute", process_charge_dispute)
        .add("payment_api_process_refund", process_refund)
        .add("payment_api_update_payment_method", update_payment_method);
}

fn cents(text: &str) -> Result<String, ToolError> {
    quantize_text(text, -2).map_err(|e| ToolError::new(e.to_string()))
}

fn booking(s: &Session, a: &Args) -> Result<Row, ToolError> {
    let reference = a.str_or_empty("booking_reference");
    first_where(s, BOOKINGS, "booking_reference", reference)?
        .map(|(_, b)| b)
        .ok_or_else(|| ToolError::new(format!("Booking not found: {reference}")))
}

fn check_payment_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let reference = a.str_or_empty("booking_reference");
    let mut latest: Option<&Row> = None;
    for t in s.rows_where(TRANSACTIONS, |t| {
        t.str_or_empty("booking_reference") == reference
    })? {
        // `max` keeps the first of equal keys.
        if latest.is_none_or(|l| t.str_or_empty("created_at") > l.str_or_empty("created_at")) {
            latest = Some(t);
        }
    }
    let t = latest
        .ok_or_else(|| ToolError::new(format!("No transactions found for booking: {reference}")))?;
    let mut out = serde_json::Map::new();
    out.insert(
        "payment_status".into(),
        json!(t.str_or_empty("payment_status")),
    );
    out.insert(
        "transaction_id".into(),
        json!(t.str_or_empty("transaction_id")),
    );
    if let Some(m) = t.get("payment_method").filter(|v| !v.is_null()) {
        out.insert("payment_method".into(), m.clone());
    }
    Ok(Value::Object(out))
}

fn generate_invoice(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let reference = a.str_or_empty("booking_reference");
    booking(s, a)?;
    let stamp = "20251125100000";
    Ok(json!({
        "invoice_url": format!("https://staybridge.com/invoices/{reference}-{stamp}.pdf"),
        "invoice_id": format!("INV-{reference}-{stamp}"),
    }))
}

fn get_transaction_history(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (customer, reference) = one_of(
        a,
        ["customer_id", "booking_reference"],
        "Either customer_id or booking_reference must be provided",
    )?;
    let rows: Vec<Row> = s
        .rows_where(TRANSACTIONS, |t| {
            customer.is_none_or(|c| t.str_or_empty("customer_id") == c)
                && reference.is_none_or(|r| t.str_or_empty("booking_reference") == r)
        })?
        .cloned()
        .collect();
    let out: Vec<Value> = super::booking_api::newest_first(rows)
        .iter()
        .map(exclude_none)
        .collect();
    Ok(json!({"transactions": out}))
}

/// A new transaction row.
#[allow(clippy::too_many_arguments)]
fn transaction(
    id: &str,
    reference: &str,
    customer: &str,
    amount: String,
    kind: &str,
    status: &str,
    reason: &str,
    estimate: Option<&str>,
    at: &str,
) -> Value {
    json!({
        "id": id,
        "transaction_id": id,
        "booking_reference": reference,
        "customer_id": customer,
        "amount": amount,
        "currency": "USD",
        "transaction_type": kind,
        "payment_status": status,
        "payment_method": null,
        "reason": reason,
        "processing_time_estimate": estimate,
        "created_at": at,
        "updated_at": at,
    })
}

fn process_charge(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let b = booking(s, a)?;
    let amount = a.str_or_empty("charge_amount");
    if signum_text(amount).map_err(|e| ToolError::new(e.to_string()))? <= 0 {
        return Err(ToolError::new(
            "Invalid charge amount - must be greater than 0",
        ));
    }
    let id = format!("TXN-{:08}", s.state.count(TRANSACTIONS)? + 1);
    let row = transaction(
        &id,
        a.str_or_empty("booking_reference"),
        b.str_or_empty("customer_id"),
        cents(amount)?,
        "charge",
        "successful",
        a.str_or_empty("reason"),
        None,
        CHARGE_TIME,
    );
    s.insert(TRANSACTIONS, &row)?;
    Ok(json!({"transaction_id": id, "payment_status": "successful"}))
}

fn process_charge_dispute(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let txn = a.str_or_empty("transaction_id");
    let Some((_, original)) = first_where(s, TRANSACTIONS, "transaction_id", txn)? else {
        return Err(ToolError::new(format!("Transaction not found: {txn}")));
    };
    let disputes = s
        .rows_where(TRANSACTIONS, |t| {
            t.str_or_empty("transaction_type") == "dispute"
        })?
        .count();
    let id = format!("DSP-{:08}", disputes + 1);
    let row = transaction(
        &id,
        original.str_or_empty("booking_reference"),
        original.str_or_empty("customer_id"),
        cents(a.str_or_empty("dispute_amount"))?,
        "dispute",
        "pending",
        a.str_or_empty("dispute_reason"),
        None,
        DISPUTE_TIME,
    );
    s.insert(TRANSACTIONS, &row)?;
    Ok(json!({"dispute_case_id": id, "dispute_status": "under_review"}))
}

fn process_refund(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let b = booking(s, a)?;
    let id = format!("TXN-{:08}", s.state.count(TRANSACTIONS)? + 1);
    let estimate = "3-5 business days";
    let row = transaction(
        &id,
        a.str_or_empty("booking_reference"),
        b.str_or_empty("customer_id"),
        cents(a.str_or_empty("refund_amount"))?,
        "refund",
        "successful",
        a.str_or_empty("reason"),
        Some(estimate),
        CHARGE_TIME,
    );
    s.insert(TRANSACTIONS, &row)?;
    Ok(
        json!({"transaction_id": id, "refund_status": "successful", "processing_time_estimate": estimate}),
    )
}

fn update_payment_method(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let customer = a.str_or_empty("customer_id");
    if !s
        .state
        .rows(BOOKINGS)?
        .iter()
        .any(|b| b.str_or_empty("customer_id") == customer)
    {
        return Err(ToolError::new(format!("Customer not found: {customer}")));
    }
    let token: Vec<char> = a.str_or_empty("new_payment_method").chars().collect();
    let last4: String = if token.len() >= 4 {
        token[token.len() - 4..].iter().collect()
    } else {
        "****".into()
    };
    Ok(json!({"success": true, "payment_method_last4": last4}))
}
