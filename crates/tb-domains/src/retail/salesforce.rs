//! `salesforce`: customer profiles and memberships.

use super::common::{create, first, first_where, isoformat_stored, out, probe_id, save};
use super::tables::{MEMBERSHIPS, PROFILES};
use crate::vocab::{project, project_as};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// Start of a membership created by an upgrade: FIXED_NOW at midnight.
const MEMBERSHIP_START: &str = "2025-10-01T00:00:00Z";
/// Its end: 365 days later, at 23:59:59.999999.
const MEMBERSHIP_END: &str = "2026-10-01T23:59:59.999999Z";

/// `add_points_to_balance`: credits points to the customer's first membership record.
pub fn add_points_to_balance(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let customer_id = a.str_or_empty("customer_id");
    let mut m = first(s, MEMBERSHIPS, "customer_id", &json!(customer_id))?.ok_or_else(|| {
        ToolError::new(format!(
            "No membership record found for customer {customer_id}. Customer must have a membership record to receive points."
        ))
    })?;
    let old = m.i64_or_zero("points_balance");
    let add = a.i64_or_zero("points_to_add");
    let new = old
        .checked_add(add)
        .ok_or_else(|| ToolError::other("integer overflow"))?;
    m.insert("points_balance".into(), json!(new));
    save(s, MEMBERSHIPS, &m)?;
    Ok(out(vec![
        ("customer_id", json!(customer_id)),
        ("old_balance", json!(old)),
        ("points_added", json!(add)),
        ("new_balance", json!(new)),
    ]))
}

/// `get_customer_profile`: by customer id when given (non-empty), else by email.
pub fn get_customer_profile(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (customer_id, email) = (
        a.opt_str_nonempty("customer_id"),
        a.opt_str_nonempty("email"),
    );
    let profile = match (customer_id, email) {
        (None, None) => {
            return Err(ToolError::new(
                "Either customer_id or email must be provided",
            ));
        }
        (Some(id), _) => first(s, PROFILES, "id", &json!(id))?,
        (None, Some(e)) => first(s, PROFILES, "email", &json!(e))?,
    };
    let Some(p) = profile else {
        return Err(ToolError::new(format!(
            "Customer not found with provided identifier: {}",
            customer_id.or(email).unwrap_or("")
        )));
    };
    Ok(project(
        &p,
        &[
            "id",
            "email",
            "name",
            "phone",
            "registration_date",
            "customer_tier",
            "lifetime_value",
            "total_orders",
            "customer_score",
            "behavioral_segment",
            "acquisition_source",
            "discount_usage_rate",
        ],
        &["registration_date"],
    ))
}

/// `get_membership_details`: the customer's first active membership.
pub fn get_membership_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let customer_id = a.str_or_empty("customer_id");
    let m = first_where(s, MEMBERSHIPS, |m| {
        m.str_or_empty("customer_id") == customer_id && m.str_or_empty("status") == "active"
    })?
    .ok_or_else(|| {
        ToolError::new(format!(
            "No active membership found for customer: {customer_id}"
        ))
    })?;
    Ok(project_as(
        &m,
        "membership_id",
        &[
            "customer_id",
            "membership_type",
            "start_date",
            "end_date",
            "status",
            "points_balance",
        ],
        &["start_date", "end_date"],
    ))
}

/// `update_membership_status`: upgrade (new membership `MEM-2{n:07}`, tier plus_member) or
/// cancel (first membership cancelled, tier standard).
pub fn update_membership_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let customer_id = a.str_or_empty("customer_id");
    let mut profile = first(s, PROFILES, "id", &json!(customer_id))?
        .ok_or_else(|| ToolError::new(format!("Customer not found: {customer_id}")))?;
    match a.str_or_empty("action") {
        "upgrade" => {
            let Some(kind) = a.opt_str_nonempty("membership_type") else {
                return Err(ToolError::new(
                    "membership_type is required when action is upgrade",
                ));
            };
            let id = probe_id(s, MEMBERSHIPS, "id", 1, |n| format!("MEM-2{n:07}"))?;
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
            )?;
            profile.insert("customer_tier".into(), json!("plus_member"));
            save(s, PROFILES, &profile)?;
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
                first(s, MEMBERSHIPS, "customer_id", &json!(customer_id))?.ok_or_else(|| {
                    ToolError::new(format!(
                        "No membership record found for customer: {customer_id}"
                    ))
                })?;
            m.insert("status".into(), json!("cancelled"));
            save(s, MEMBERSHIPS, &m)?;
            profile.insert("customer_tier".into(), json!("standard"));
            save(s, PROFILES, &profile)?;
            Ok(out(vec![
                ("customer_id", json!(customer_id)),
                ("new_tier", json!("standard")),
                ("action_completed", json!("cancelled")),
            ]))
        }
        other => Err(ToolError::new(format!(
            "Invalid action: MembershipAction.{}",
            other.to_uppercase()
        ))),
    }
}
