//! Workday HR: employee profiles.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::{RequireRow, project};
use serde_json::json;
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `workday_api`: `get_employee`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_employee" => {
            let email = a.require_str_nonempty("email")?;
            let r = s.require_row(WORKDAY_EMPLOYEES, email, "Employee")?;
            let data = project(
                &r,
                &[
                    "email",
                    "name",
                    "level",
                    "office_location",
                    "start_date",
                    "manager_email",
                    "partner_email",
                    "onboarding_phase",
                    "availability_status",
                    "backup_approver_email",
                ],
                &["start_date"],
            );
            Ok(json!({ "employee_data": data }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn employee_lookup() {
        let mut s = session(json!({
            "workday_employees": [{"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin",
                "start_date": "2024-05-01T00:00:00"}]
        }));
        calls!(s;
            "workday_api" {"action": "get_employee", "email": "t@msg.com"} => {"employee_data": {"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin", "start_date": "2024-05-01T00:00:00", "availability_status": "available"}};
            "workday_api" {"action": "get_employee"} => error "Tool execution failed: Missing required parameter: email";
            "workday_api" {"action": "get_employee", "email": "nobody@msg.com"} => error "Tool execution failed: Employee not found: nobody@msg.com";
            "workday_api" {"action": "fire"} => error "Tool execution failed: Input validation failed: action: Input should be 'get_employee'";
        );
    }
}
