//! The crm toolset: customer lookup, profile and identity verification.

use super::{field, get_row, opt, out, req, truthy_str, val};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError, ToolFn};

const CUSTOMERS: &str = "crm_customers";

pub(super) fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![
        ("crm_get_customer_by_email", get_customer_by_email),
        ("crm_get_customer_profile", get_customer_profile),
        ("crm_verify_identity", verify_identity),
    ]
}

/// Python `str.lower()` (full Unicode lower-casing).
fn lower(s: &str) -> String {
    s.to_lowercase()
}

fn customer_not_found(id: &str) -> ToolError {
    ToolError::new(format!("Customer with ID '{id}' not found"))
}

fn get_customer_by_email(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = req(a, "email")?;
    let wanted = lower(email);
    let c = s
        .state
        .rows(CUSTOMERS)?
        .iter()
        .find(|c| lower(field(c, "email")) == wanted)
        .ok_or_else(|| ToolError::new(format!("No customer found with email '{email}'")))?;
    Ok(
        json!({"customer_id": val(c, "id"), "first_name": val(c, "first_name"), "last_name": val(c, "last_name")}),
    )
}

fn get_customer_profile(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = req(a, "customer_id")?;
    let c = get_row(s, CUSTOMERS, id)?.ok_or_else(|| customer_not_found(id))?;
    Ok(out(vec![
        ("customer_id", val(&c, "id")),
        ("email", val(&c, "email")),
        ("first_name", val(&c, "first_name")),
        ("last_name", val(&c, "last_name")),
        ("date_of_birth", val(&c, "date_of_birth")),
        ("phone", val(&c, "phone")),
        ("tier", val(&c, "tier")),
        ("fraud_flag", val(&c, "fraud_flag")),
        ("security_question", val(&c, "security_question")),
        ("has_ssn_on_file", json!(!val(&c, "ssn_last_4").is_null())),
    ]))
}

fn verify_identity(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let ssn = truthy_str(opt(a, "ssn_last_4"));
    let answer = truthy_str(opt(a, "security_answer"));
    if ssn.is_none() && answer.is_none() {
        return Err(ToolError::new(
            "Must provide either ssn_last_4 or security_answer for verification",
        ));
    }
    let id = req(a, "customer_id")?;
    let c = get_row(s, CUSTOMERS, id)?.ok_or_else(|| customer_not_found(id))?;
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

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn lookups_and_errors() {
        let mut s = session(book());
        assert_eq!(
            ok(
                &mut s,
                "crm_get_customer_by_email",
                json!({"email": "ann.LEE@example.com"})
            ),
            json!({"customer_id": "CUS-1", "first_name": "Ann", "last_name": "Lee"})
        );
        assert_eq!(
            err(&mut s, "crm_get_customer_by_email", json!({"email": "x@y"})),
            "Tool execution failed: No customer found with email 'x@y'"
        );
        assert_eq!(
            err(
                &mut s,
                "crm_get_customer_profile",
                json!({"customer_id": "C"})
            ),
            "Tool execution failed: Customer with ID 'C' not found"
        );
        let p = ok(
            &mut s,
            "crm_get_customer_profile",
            json!({"customer_id": "CUS-1"}),
        );
        assert_eq!(
            (p["has_ssn_on_file"].clone(), p["tier"].clone()),
            (json!(true), json!("Standard"))
        );
        assert!(p.get("phone").is_none() && p.get("security_answer").is_none());
        assert_eq!(p["security_question"], "Pet?");
    }

    #[test]
    fn verification_prefers_ssn_and_needs_a_credential() {
        let mut s = session(book());
        assert_eq!(
            err(
                &mut s,
                "crm_verify_identity",
                json!({"customer_id": "NOPE", "ssn_last_4": ""})
            ),
            "Tool execution failed: Must provide either ssn_last_4 or security_answer for verification"
        );
        assert_eq!(
            err(
                &mut s,
                "crm_verify_identity",
                json!({"customer_id": "C", "ssn_last_4": "1"})
            ),
            "Tool execution failed: Customer with ID 'C' not found"
        );
        assert_eq!(
            ok(
                &mut s,
                "crm_verify_identity",
                json!({"customer_id": "CUS-1", "ssn_last_4": "9999", "security_answer": "fluffy"})
            ),
            json!({"verified": false, "verification_method": "ssn"})
        );
        assert_eq!(
            ok(
                &mut s,
                "crm_verify_identity",
                json!({"customer_id": "CUS-1", "security_answer": "FLUFFY"})
            ),
            json!({"verified": true, "verification_method": "security_question"})
        );
    }
}
