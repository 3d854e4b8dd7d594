//! Approver lookup: an approver's availability and backup, from the HR employees.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::{RequireRow, project};
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// `approver_lookup_get_contact`: name, availability and backup approver (left out when unset).
pub(crate) fn get_contact(s: &mut Session, a: &Args) -> ToolResult {
    let email = a.str_or_empty("email");
    let r = s.require_row(WORKDAY_EMPLOYEES, email, "Approver")?;
    Ok(project(
        &r,
        &[
            "email",
            "name",
            "availability_status",
            "backup_approver_email",
        ],
        &[],
    ))
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
