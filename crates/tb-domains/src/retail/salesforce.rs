//! `salesforce`: customer profiles and memberships.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// Start of a membership created by an upgrade: FIXED_NOW at midnight.
const MEMBERSHIP_START: &str = "2025-10-01T00:00:00Z";
/// Its end: 365 days later, at 23:59:59.999999.
const MEMBERSHIP_END: &str = "2026-10-01T23:59:59.999999Z";

/// `add_points_to_balance`: credits points to the customer's first membership record.
pub fn add_points_to_balance(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to add points to balance";
    let customer_id = arg(a, "customer_id");
    let mut m = first(s, MEMBERSHIPS, "customer_id", &json!(customer_id), F)?.ok_or_else(|| {
        fail(format!(
            "No membership record found for customer {customer_id}. Customer must have a membership record to receive points."
        ))
    })?;
    let old = int(&m, "points_balance");
    let add = a.get("points_to_add").and_then(Value::as_i64).unwrap_or(0);
    let new = old
        .checked_add(add)
        .ok_or_else(|| fail(format!("{F}: integer overflow")))?;
    m.insert("points_balance".into(), json!(new));
    save(s, MEMBERSHIPS, &m, F)?;
    Ok(out(vec![
        ("customer_id", json!(customer_id)),
        ("old_balance", json!(old)),
        ("points_added", json!(add)),
        ("new_balance", json!(new)),
    ]))
}

/// `get_customer_profile`: by customer id when given (non-empty), else by email.
pub fn get_customer_profile(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve customer profile";
    let (customer_id, email) = (opt(a, "customer_id"), opt(a, "email"));
    let profile = match (customer_id, email) {
        (None, None) => return Err(fail("Either customer_id or email must be provided")),
        (Some(id), _) => first(s, PROFILES, "id", &json!(id), F)?,
        (None, Some(e)) => first(s, PROFILES, "email", &json!(e), F)?,
    };
    let Some(p) = profile else {
        return Err(fail(format!(
            "Customer not found with provided identifier: {}",
            customer_id.or(email).unwrap_or("")
        )));
    };
    Ok(out(vec![
        ("id", val(&p, "id")),
        ("email", val(&p, "email")),
        ("name", val(&p, "name")),
        ("phone", val(&p, "phone")),
        (
            "registration_date",
            isoformat_stored(&val(&p, "registration_date")),
        ),
        ("customer_tier", val(&p, "customer_tier")),
        ("lifetime_value", val(&p, "lifetime_value")),
        ("total_orders", val(&p, "total_orders")),
        ("customer_score", val(&p, "customer_score")),
        ("behavioral_segment", val(&p, "behavioral_segment")),
        ("acquisition_source", val(&p, "acquisition_source")),
        ("discount_usage_rate", val(&p, "discount_usage_rate")),
    ]))
}

/// `get_membership_details`: the customer's first active membership.
pub fn get_membership_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve membership details";
    let customer_id = arg(a, "customer_id");
    let m = first_where(s, MEMBERSHIPS, F, |m| {
        text(m, "customer_id") == customer_id && text(m, "status") == "active"
    })?
    .ok_or_else(|| {
        fail(format!(
            "No active membership found for customer: {customer_id}"
        ))
    })?;
    Ok(out(vec![
        ("membership_id", val(&m, "id")),
        ("customer_id", val(&m, "customer_id")),
        ("membership_type", val(&m, "membership_type")),
        ("start_date", isoformat_stored(&val(&m, "start_date"))),
        ("end_date", isoformat_stored(&val(&m, "end_date"))),
        ("status", val(&m, "status")),
        ("points_balance", val(&m, "points_balance")),
    ]))
}

/// `update_membership_status`: upgrade (new membership `MEM-2{n:07}`, tier plus_member) or
/// cancel (first membership cancelled, tier standard).
pub fn update_membership_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to update membership status";
    let customer_id = arg(a, "customer_id");
    let mut profile = first(s, PROFILES, "id", &json!(customer_id), F)?
        .ok_or_else(|| fail(format!("Customer not found: {customer_id}")))?;
    match arg(a, "action") {
        "upgrade" => {
            let Some(kind) = opt(a, "membership_type") else {
                return Err(fail("membership_type is required when action is upgrade"));
            };
            let id = probe_id(s, MEMBERSHIPS, "id", 1, F, |n| format!("MEM-2{n:07}"))?;
            create(
                s,
                MEMBERSHIPS,
                json!({
                    "id": id,
                    "customer_id": customer_id,
                    "membership_type": kind,
                    "start_date": MEMBERSHIP_START,
                    "end_date": MEMBERSHIP_END,
                    "status": "active",
                    "points_balance": 0,
                }),
                F,
            )?;
            profile.insert("customer_tier".into(), json!("plus_member"));
            save(s, PROFILES, &profile, F)?;
            Ok(out(vec![
                ("customer_id", json!(customer_id)),
                ("membership_id", json!(id)),
                ("new_tier", json!("plus_member")),
                ("action_completed", json!("upgraded")),
                ("start_date", isoformat_stored(&json!(MEMBERSHIP_START))),
                ("end_date", isoformat_stored(&json!(MEMBERSHIP_END))),
            ]))
        }
        "cancel" => {
            let mut m =
                first(s, MEMBERSHIPS, "customer_id", &json!(customer_id), F)?.ok_or_else(|| {
                    fail(format!(
                        "No membership record found for customer: {customer_id}"
                    ))
                })?;
            m.insert("status".into(), json!("cancelled"));
            save(s, MEMBERSHIPS, &m, F)?;
            profile.insert("customer_tier".into(), json!("standard"));
            save(s, PROFILES, &profile, F)?;
            Ok(out(vec![
                ("customer_id", json!(customer_id)),
                ("new_tier", json!("standard")),
                ("action_completed", json!("cancelled")),
            ]))
        }
        other => Err(fail(format!(
            "Invalid action: MembershipAction.{}",
            other.to_uppercase()
        ))),
    }
}
