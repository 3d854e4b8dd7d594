//! The crm toolset: customer lookup, profile and identity verification.

use super::out;
use super::tables::CUSTOMERS;
use crate::vocab::{SessionRows, one_of};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

pub(super) fn register(t: &mut Tools) {
    t.add("crm_get_customer_by_email", get_customer_by_email)
        .add("crm_get_customer_profile", get_customer_profile)
        .add("crm_verify_identity", verify_identity);
}

/// Python `str.lower()` (full Unicode lower-casing).
fn lower(s: &str) -> String {
    s.to_lowercase()
}

fn customer_not_found(id: &str) -> ToolError {
    ToolError::new(format!("Customer with ID '{id}' not found"))
}

fn get_customer_by_email(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.require_str("email")?;
    let wanted = lower(email);
    let c = s
        .row_where(CUSTOMERS, |c| lower(c.str_or_empty("email")) == wanted)?
        .ok_or_else(|| ToolError::new(format!("No customer found with email '{email}'")))?;
    Ok(
        json!({"customer_id": c.value("id"), "first_name": c.value("first_name"), "last_name": c.value("last_name")}),
    )
}

fn get_customer_profile(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.require_str("customer_id")?;
    let c = s
        .row_by_id(CUSTOMERS, id)?
        .ok_or_else(|| customer_not_found(id))?;
    Ok(out(vec![
        ("customer_id", c.value("id")),
        ("email", c.value("email")),
        ("first_name", c.value("first_name")),
        ("last_name", c.value("last_name")),
        ("date_of_birth", c.value("date_of_birth")),
        ("phone", c.value("phone")),
        ("tier", c.value("tier")),
        ("fraud_flag", c.value("fraud_flag")),
        ("security_question", c.value("security_question")),
        ("has_ssn_on_file", json!(!c.value("ssn_last_4").is_null())),
    ]))
}

fn verify_identity(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (ssn, answer) = one_of(
        a,
        ["ssn_last_4", "security_answer"],
        "Must provide either ssn_last_4 or security_answer for verification",
    )?;
    let id = a.require_str("customer_id")?;
    let c = s
        .row_by_id(CUSTOMERS, id)?
        .ok_or_else(|| customer_not_found(id))?;
    if let Some(ssn) = ssn {
        let verified = c.get("ssn_last_4").and_then(Value::as_str) == Some(ssn);
        return Ok(json!({"verified": verified, "verification_method": "ssn"}));
    }
    let verified = match (c.get("security_answer").and_then(Value::as_str), answer) {
        (Some(stored), Some(given)) => lower(stored) == lower(given),
        _ => false,
    };
    Ok(json!({"verified": verified, "verification_method": "security_question"}))
}
