//! Approver lookup: an approver's availability and backup, from the HR employees.

use super::tables::WORKDAY_EMPLOYEES;
use crate::vocab::Shown;
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// An approver as `approver_lookup_get_contact` shows it.
const APPROVER: Shown = Shown {
    table: WORKDAY_EMPLOYEES,
    what: "Approver",
    fields: &[
        "email",
        "name",
        "availability_status",
        "backup_approver_email",
    ],
    datetimes: &[],
};

/// `approver_lookup_get_contact`: name, availability and backup approver (left out when unset).
pub(crate) fn get_contact(s: &mut Session, a: &Args) -> ToolResult {
    APPROVER.row(s, a.str_or_empty("email"))
}
