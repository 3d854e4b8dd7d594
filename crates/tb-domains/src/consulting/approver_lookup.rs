//! Approver lookup: an approver's availability and backup, from the HR employees.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::{SessionRows, project};
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
