//! Salesforce CRM: engagement details and whether an employee is staffed on an engagement
//! (the latter reads the resource-management assignments, as the reference does).

use super::{Out, exec, field, finish, get_row, val};
use crate::pytime::isoformat_field;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `salesforce_crm_check_employee_assignment`: the first assignment of that employee on that
/// engagement, whatever its status.
pub(crate) fn check_employee_assignment(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let body = || -> Out {
        let email = a.get("email").and_then(Value::as_str).unwrap_or_default();
        let code = a
            .get("engagement_code")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let rows = s.state.rows("mavenlink_employee_assignments")?;
        let Some(r) = rows
            .iter()
            .find(|r| field(r, "employee_email") == email && field(r, "engagement_code") == code)
        else {
            return Ok(json!({ "assigned": false }));
        };
        Ok(super::out([
            ("assigned", json!(true)),
            ("assignment_status", val(r, "assignment_status")),
            ("start_date", isoformat_field(r, "start_date")),
            ("end_date", isoformat_field(r, "end_date")),
        ]))
    };
    finish("Failed to check employee assignment", body())
}

/// `salesforce_crm_get_engagement`: one CRM engagement by code.
pub(crate) fn get_engagement(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let body = || -> Out {
        let code = a
            .get("engagement_code")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let r = get_row(s, "salesforce_crm_sf_engagements", code)?
            .ok_or_else(|| exec(format!("Engagement not found: {code}")))?;
        Ok(super::out([
            ("engagement_code", val(&r, "engagement_code")),
            ("client_id", val(&r, "client_id")),
            (
                "engagement_manager_email",
                val(&r, "engagement_manager_email"),
            ),
            ("status", val(&r, "status")),
            ("start_date", isoformat_field(&r, "start_date")),
            ("end_date", isoformat_field(&r, "end_date")),
        ]))
    };
    finish("Failed to retrieve engagement details", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn engagement_and_assignment() {
        let mut s = session(json!({
            "mavenlink_employee_assignments": [{"id": "T-1", "employee_email": "t@msg.com", "engagement_code": "ENG-T",
                "assignment_status": "booked", "start_date": "2025-01-02T00:00:00Z", "senior_manager_email": "m@msg.com"}]
        }));
        assert_eq!(
            call(
                &mut s,
                "salesforce_crm_check_employee_assignment",
                json!({"email": "t@msg.com", "engagement_code": "ENG-T"})
            ),
            json!({"assigned": true, "assignment_status": "booked", "start_date": "2025-01-02T00:00:00+00:00"})
        );
        assert_eq!(
            call(
                &mut s,
                "salesforce_crm_check_employee_assignment",
                json!({"email": "x@msg.com", "engagement_code": "ENG-T"})
            ),
            json!({"assigned": false})
        );
        assert_eq!(
            err(
                &mut s,
                "salesforce_crm_get_engagement",
                json!({"engagement_code": "ENG-NOPE"})
            ),
            "Tool execution failed: Engagement not found: ENG-NOPE"
        );
        assert_eq!(
            err(
                &mut s,
                "salesforce_crm_check_employee_assignment",
                json!({"email": "t@msg.com"})
            ),
            "Tool execution failed: Input validation failed: engagement_code: Field required"
        );
    }
}
