//! crm_api: customer profiles.

use super::first_where;
use super::tables::PROFILES;
use crate::vocab::one_of;
use serde_json::{Value, json};
use tb_sandbox::state::Row;
use tb_sandbox::tool::exclude_none;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

/// The fixed time `update_customer_info` stamps on a profile.
const UPDATE_TIME: &str = "2025-01-01T00:00:00Z";

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add("crm_api_check_vip_status", check_vip_status)
        .add("crm_api_get_customer_preferences", get_customer_preferences)
        .add("crm_api_get_customer_profile", get_customer_profile)
        .add("crm_api_update_customer_info", update_customer_info);
}

/// The profile of the `customer_id` argument, after the reference's checks.
fn profile(s: &Session, a: &Args) -> Result<(usize, Row), ToolError> {
    let id = a.str_or_empty("customer_id");
    if id.trim().is_empty() {
        return Err(ToolError::new("Invalid customer_id parameter."));
    }
    first_where(s, PROFILES, "customer_id", id)?
        .ok_or_else(|| ToolError::new("Customer not found."))
}

fn check_vip_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (_, p) = profile(s, a)?;
    let mut out = serde_json::Map::new();
    out.insert("vip_tier".into(), p.value("vip_tier"));
    if let Some(l) = p.get("loyalty_program_status").filter(|v| !v.is_null()) {
        out.insert("loyalty_program_status".into(), l.clone());
    }
    Ok(Value::Object(out))
}

fn get_customer_preferences(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (_, p) = profile(s, a)?;
    Ok(json!({
        "preferences": p.get("preferences").cloned().unwrap_or_else(|| json!([])),
        "special_notes": p.get("special_notes").cloned().unwrap_or_else(|| json!([])),
    }))
}

fn get_customer_profile(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (id, email) = one_of(
        a,
        ["customer_id", "email"],
        "Invalid parameters: provide customer_id or email.",
    )?;
    let rows = s.state.rows(PROFILES)?;
    let found = match (id, email) {
        (Some(id), _) => rows.iter().find(|p| p.str_or_empty("customer_id") == id),
        (None, Some(email)) => {
            let email = email.to_lowercase();
            rows.iter()
                .find(|p| p.str_or_empty("email").to_lowercase() == email)
        }
        (None, None) => None,
    };
    let p = found.ok_or_else(|| ToolError::new("Customer not found."))?;
    Ok(json!({"customer_data": exclude_none(p)}))
}

/// Updatable fields, in the input model's order.
const UPDATABLE: [&str; 7] = [
    "email",
    "full_name",
    "preferences",
    "special_notes",
    "complaint_count",
    "loyalty_program_status",
    "last_booking_date",
];

fn update_customer_info(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    if a.str_or_empty("customer_id").trim().is_empty() {
        return Err(ToolError::new("Invalid customer_id parameter."));
    }
    let updates: Vec<(&str, &Value)> = UPDATABLE
        .iter()
        .filter_map(|k| a.get(*k).filter(|v| !v.is_null()).map(|v| (*k, v)))
        .collect();
    if updates.is_empty() {
        return Err(ToolError::new("Invalid update_fields parameter."));
    }
    let (pos, mut p) = profile(s, a)?;
    let mut fields = Vec::new();
    for (k, v) in updates {
        p.insert(k.to_string(), v.clone());
        fields.push(k);
    }
    p.insert("updated_at".into(), json!(UPDATE_TIME));
    super::write_in_place(s, PROFILES, pos, p.clone())?;
    s.replace(PROFILES, &Value::Object(p))?;
    Ok(json!({"success": true, "updated_fields": fields}))
}
