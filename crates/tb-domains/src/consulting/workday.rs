//! Workday HR: employee profiles.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::Shown;
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// An employee as `get_employee` shows it.
const EMPLOYEE: Shown = Shown {
    table: WORKDAY_EMPLOYEES,
    what: "Employee",
    fields: &[
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
    datetimes: &["start_date"],
};

/// `workday_api`: `get_employee`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_employee" => EMPLOYEE.answer(s, a, "email", "employee_data"),
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
