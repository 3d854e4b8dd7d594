//! Approver lookup: an approver's availability and backup, from the HR employees.

use super::{Out, exec, finish, get_row, out, val};
use serde_json::Value;
use tb_sandbox::{Args, Session, ToolError};

/// `approver_lookup_get_contact`: name, availability and backup approver (left out when unset).
pub(crate) fn get_contact(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let body = || -> Out {
        let email = a.get("email").and_then(Value::as_str).unwrap_or_default();
        let r = get_row(s, "workday_employees", email)?
            .ok_or_else(|| exec(format!("Approver not found: {email}")))?;
        Ok(out([
            ("email", val(&r, "email")),
            ("name", val(&r, "name")),
            ("availability_status", val(&r, "availability_status")),
            ("backup_approver_email", val(&r, "backup_approver_email")),
        ]))
    };
    finish("Failed to retrieve approver contact", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn unknown_approver() {
        let mut s = session(json!({}));
        assert_eq!(
            err(
                &mut s,
                "approver_lookup_get_contact",
                json!({"email": "nobody@msg.com"})
            ),
            "Tool execution failed: Approver not found: nobody@msg.com"
        );
        assert_eq!(
            err(&mut s, "approver_lookup_get_contact", json!({})),
            "Tool execution failed: Input validation failed: email: Field required"
        );
    }
}
