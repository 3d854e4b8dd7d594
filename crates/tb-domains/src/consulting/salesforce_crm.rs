//! Salesforce CRM: engagement details and whether an employee is staffed on an engagement
//! (the latter reads the resource-management assignments, as the reference does).

use super::tables::{MAVENLINK_EMPLOYEE_ASSIGNMENTS, SALESFORCE_CRM_SF_ENGAGEMENTS};
use crate::vocab::Shown;
use serde_json::json;
use tb_python::datetime::isoformat_field;
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// `salesforce_crm_check_employee_assignment`: the first assignment of that employee on that
/// engagement, whatever its status.
pub(crate) fn check_employee_assignment(s: &mut Session, a: &Args) -> ToolResult {
    let email = a.str_or_empty("email");
    let code = a.str_or_empty("engagement_code");
    let rows = s.state.rows(MAVENLINK_EMPLOYEE_ASSIGNMENTS)?;
    let Some(r) = rows.iter().find(|r| {
        r.str_or_empty("employee_email") == email && r.str_or_empty("engagement_code") == code
    }) else {
        return Ok(json!({ "assigned": false }));
    };
    Ok(super::out([
        ("assigned", json!(true)),
        ("assignment_status", r.value("assignment_status")),
        ("start_date", isoformat_field(r, "start_date")),
        ("end_date", isoformat_field(r, "end_date")),
    ]))
}

/// A CRM engagement as `salesforce_crm_get_engagement` shows it.
const ENGAGEMENT: Shown = Shown {
    table: SALESFORCE_CRM_SF_ENGAGEMENTS,
    what: "Engagement",
    fields: &[
        "engagement_code",
        "client_id",
        "engagement_manager_email",
        "status",
        "start_date",
        "end_date",
    ],
    datetimes: &["start_date", "end_date"],
};

/// `salesforce_crm_get_engagement`: one CRM engagement by code.
pub(crate) fn get_engagement(s: &mut Session, a: &Args) -> ToolResult {
    ENGAGEMENT.row(s, a.str_or_empty("engagement_code"))
}
