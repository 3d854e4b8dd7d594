//! Hardware procurement: purchase orders.

use super::{next_id, require_employee, tables};
use serde_json::{Value, json};
use tb_python::datetime::date_fromisoformat;
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `hardware_procurement_api_create_order`: a pending order `HW-ORDER-{n:07d}`; the delivery
/// date is the first 10 characters of the input read as an ISO date.
pub fn create_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("requester_email");
    let e = require_employee(s, email, "Requester not found: ")?;
    let id = next_id(s, tables::ORDERS, "HW-ORDER-", 7)?;
    let raw = a.str_or_empty("expected_delivery_date");
    let head: String = raw.chars().take(10).collect();
    let date = date_fromisoformat(&head).ok_or_else(|| {
        ToolError::new(format!(
            "Invalid expected_delivery_date format: {raw}. Expected YYYY-MM-DD format."
        ))
    })?;
    s.insert(
        tables::ORDERS,
        &json!({
            "id": id,
            "device_type": a.value("device_type"),
            "device_model": a.value("device_model"),
            "quantity": a.value("quantity"),
            "ship_to_location": a.value("ship_to_location"),
            "requester_id": e.value("id"),
            "ticket_id": a.value("ticket_id"),
            "status": "pending",
            "created_at": null,
            "expected_delivery_date": date,
        }),
    )?;
    Ok(json!({ "order_id": id, "status": "pending" }))
}
