//! Workday HR: employee profiles.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::{SessionRows, project};
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
