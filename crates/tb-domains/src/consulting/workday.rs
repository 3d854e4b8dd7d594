//! Workday HR: employee profiles.

use super::{Out, action, exec, finish, get_row, need, val};
use crate::pytime::isoformat_field;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `workday_api`: `get_employee`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let body = || -> Out {
        match action(a) {
            "get_employee" => {
                let email = need(a, "email")?;
                let r = get_row(s, "workday_employees", email)?
                    .ok_or_else(|| exec(format!("Employee not found: {email}")))?;
                let data = super::out([
                    ("email", val(&r, "email")),
                    ("name", val(&r, "name")),
                    ("level", val(&r, "level")),
                    ("office_location", val(&r, "office_location")),
                    ("start_date", isoformat_field(&r, "start_date")),
                    ("manager_email", val(&r, "manager_email")),
                    ("partner_email", val(&r, "partner_email")),
                    ("onboarding_phase", val(&r, "onboarding_phase")),
                    ("availability_status", val(&r, "availability_status")),
                    ("backup_approver_email", val(&r, "backup_approver_email")),
                ]);
                Ok(json!({ "employee_data": data }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Workday API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn employee_lookup() {
        let mut s = session(json!({
            "workday_employees": [{"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin",
                "start_date": "2024-05-01T00:00:00"}]
        }));
        assert_eq!(
            call(
                &mut s,
                "workday_api",
                json!({"action": "get_employee", "email": "t@msg.com"})
            ),
            json!({"employee_data": {"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin",
                "start_date": "2024-05-01T00:00:00", "availability_status": "available"}})
        );
        assert_eq!(
            err(&mut s, "workday_api", json!({"action": "get_employee"})),
            "Tool execution failed: Missing required parameter: email"
        );
        assert_eq!(
            err(
                &mut s,
                "workday_api",
                json!({"action": "get_employee", "email": "nobody@msg.com"})
            ),
            "Tool execution failed: Employee not found: nobody@msg.com"
        );
        assert_eq!(
            err(&mut s, "workday_api", json!({"action": "fire"})),
            "Tool execution failed: Input validation failed: action: Input should be 'get_employee'"
        );
    }
}
