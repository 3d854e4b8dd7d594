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
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn unknown_approver() {
        let mut s = session(json!({}));
        calls!(s;
            "approver_lookup_get_contact" {"email": "nobody@msg.com"} => error "Tool execution failed: Approver not found: nobody@msg.com";
            "approver_lookup_get_contact" {} => error "Tool execution failed: Input validation failed: email: Field required";
        );
    }
}
