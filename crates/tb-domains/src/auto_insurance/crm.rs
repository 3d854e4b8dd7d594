//! The crm toolset: customer lookup, profile and identity verification.

use super::out;
use super::tables::CUSTOMERS;
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
        .state
        .rows(CUSTOMERS)?
        .iter()
        .find(|c| lower(c.str_or_empty("email")) == wanted)
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
    let ssn = a.opt_str_nonempty("ssn_last_4");
    let answer = a.opt_str_nonempty("security_answer");
    if ssn.is_none() && answer.is_none() {
        return Err(ToolError::new(
            "Must provide either ssn_last_4 or security_answer for verification",
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn lookups_and_errors() {
        let mut s = session(book());
        calls!(s;
            "crm_get_customer_by_email" {"email": "ann.LEE@example.com"} => {"customer_id": "CUS-1", "first_name": "Ann", "last_name": "Lee"};
            "crm_get_customer_by_email" {"email": "x@y"} => error "Tool execution failed: No customer found with email 'x@y'";
            "crm_get_customer_profile" {"customer_id": "C"} => error "Tool execution failed: Customer with ID 'C' not found";
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
        calls!(s;
            "crm_verify_identity" {"customer_id": "NOPE", "ssn_last_4": ""} => error "Tool execution failed: Must provide either ssn_last_4 or security_answer for verification";
            "crm_verify_identity" {"customer_id": "C", "ssn_last_4": "1"} => error "Tool execution failed: Customer with ID 'C' not found";
            "crm_verify_identity" {"customer_id": "CUS-1", "ssn_last_4": "9999", "security_answer": "fluffy"} => {"verified": false, "verification_method": "ssn"};
            "crm_verify_identity" {"customer_id": "CUS-1", "security_answer": "FLUFFY"} => {"verified": true, "verification_method": "security_question"};
        );
    }
}
