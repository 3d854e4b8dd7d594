//! corporate_api: company accounts and their bookings.

use super::booking_api::newest_first;
use super::first_where;
use super::tables::{BOOKINGS, CORPORATE_ACCOUNTS};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::state::Row;
use tb_sandbox::tool::exclude_none;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add(
        "corporate_api_generate_corporate_invoice",
        generate_corporate_invoice,
    )
    .add("corporate_api_get_account_details", get_account_details)
    .add(
        "corporate_api_get_corporate_booking_history",
        get_corporate_booking_history,
    )
    .add("corporate_api_verify_account_status", verify_account_status);
}

/// The account named by the `corporate_account_id` argument, after the reference's checks.
fn account(s: &Session, a: &Args) -> Result<Row, ToolError> {
    let id = a.str_or_empty("corporate_account_id");
    if !id.starts_with("CRP-") {
        return Err(ToolError::new("Invalid corporate_account_id parameter."));
    }
    first_where(s, CORPORATE_ACCOUNTS, "corporate_account_id", id)?
        .map(|(_, r)| r)
        .ok_or_else(|| ToolError::new("Corporate account not found."))
}

fn generate_corporate_invoice(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("corporate_account_id");
    let reference = a.str_or_empty("booking_reference");
    if !id.starts_with("CRP-") {
        return Err(ToolError::new("Invalid corporate_account_id parameter."));
    }
    if !reference.starts_with("BKG-") {
        return Err(ToolError::new("Invalid booking_reference parameter."));
    }
    let acc = account(s, a)?;
    let Some((_, booking)) = first_where(s, BOOKINGS, "booking_reference", reference)? else {
        return Err(ToolError::new("Booking not found."));
    };
    if booking.get("corporate_account_id").and_then(Value::as_str)
        != Some(acc.str_or_empty("corporate_account_id"))
    {
        return Err(ToolError::new(
            "Booking is not associated with this corporate account.",
        ));
    }
    let invoice_id = format!(
        "INV-{}-{}",
        reference.replace("BKG-", ""),
        id.replace("CRP-", "")
    );
    Ok(json!({
        "invoice_url": format!("https://staybridge.com/corporate-invoices/{id}-{reference}.pdf"),
        "invoice_id": invoice_id,
        "payment_terms": acc.str_or_empty("payment_terms"),
    }))
}

fn get_account_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    Ok(json!({"account_data": exclude_none(&account(s, a)?)}))
}

fn get_corporate_booking_history(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let acc = account(s, a)?;
    let id = acc.str_or_empty("corporate_account_id");
    let rows: Vec<Row> = s
        .rows_where(BOOKINGS, |b| {
            b.get("corporate_account_id").and_then(Value::as_str) == Some(id)
        })?
        .cloned()
        .collect();
    let out: Vec<Value> = newest_first(rows).iter().map(exclude_none).collect();
    Ok(json!({"corporate_bookings": out}))
}

fn verify_account_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let acc = account(s, a)?;
    let id = acc.str_or_empty("corporate_account_id");
    let active = s
        .rows_where(BOOKINGS, |b| {
            b.get("corporate_account_id").and_then(Value::as_str) == Some(id)
                && b.str_or_empty("booking_status") == "confirmed"
        })?
        .count();
    let limit = acc.i64_or_zero("booking_limit");
    let remaining = (limit - i64::try_from(active).unwrap_or(i64::MAX)).max(0);
    let mut out = serde_json::Map::new();
    out.insert(
        "is_active".into(),
        json!(acc.str_or_empty("account_status") == "active"),
    );
    if let Some(exp) = acc.get("expiration_date").filter(|v| !v.is_null()) {
        out.insert("expiration_date".into(), exp.clone());
    }
    out.insert("booking_limit_remaining".into(), json!(remaining));
    Ok(Value::Object(out))
}
