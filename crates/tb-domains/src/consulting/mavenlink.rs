//! Mavenlink resource management: engagements and staffing assignments.

use super::employee_rows;
use super::tables::{MAVENLINK_EMPLOYEE_ASSIGNMENTS, MAVENLINK_MV_ENGAGEMENTS};
use crate::vocab::{Shown, project};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// An engagement as `get_engagement` shows it.
const ENGAGEMENT: Shown = Shown {
    table: MAVENLINK_MV_ENGAGEMENTS,
    what: "Engagement",
    fields: &[
        "engagement_code",
        "status",
        "start_date",
        "end_date",
        "senior_manager_email",
    ],
    datetimes: &["start_date", "end_date"],
};

/// `mavenlink_api`: `get_engagement`, `get_employee_assignments`, `validate_engagement_code`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_engagement" => ENGAGEMENT.answer(s, a, "engagement_code", "engagement_data"),
        "get_employee_assignments" => {
            let email = a.require_str_nonempty("email")?;
            let assignments: Vec<Value> = employee_rows(s, MAVENLINK_EMPLOYEE_ASSIGNMENTS, email)?
                .filter(|r| matches!(r.str_or_empty("assignment_status"), "active" | "booked"))
                .map(|r| {
                    project(
                        r,
                        &[
                            "engagement_code",
                            "assignment_status",
                            "start_date",
                            "end_date",
                            "senior_manager_email",
                        ],
                        &["start_date", "end_date"],
                    )
                })
                .collect();
            Ok(json!({ "assignments": assignments }))
        }
        "validate_engagement_code" => {
            let code = a.require_str_nonempty("engagement_code")?;
            Ok(json!({ "valid": s.row_by_id(MAVENLINK_MV_ENGAGEMENTS, code)?.is_some() }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
