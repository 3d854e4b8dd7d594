//! Mavenlink resource management: engagements and staffing assignments.

use super::{Out, action, exec, field, finish, get_row, need, out, val};
use crate::pytime::isoformat_field;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `mavenlink_api`: `get_engagement`, `get_employee_assignments`, `validate_engagement_code`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let body = || -> Out {
        match action(a) {
            "get_engagement" => {
                let code = need(a, "engagement_code")?;
                let r = get_row(s, "mavenlink_mv_engagements", code)?
                    .ok_or_else(|| exec(format!("Engagement not found: {code}")))?;
                let data = out([
                    ("engagement_code", val(&r, "engagement_code")),
                    ("status", val(&r, "status")),
                    ("start_date", isoformat_field(&r, "start_date")),
                    ("end_date", isoformat_field(&r, "end_date")),
                    ("senior_manager_email", val(&r, "senior_manager_email")),
                ]);
                Ok(json!({ "engagement_data": data }))
            }
            "get_employee_assignments" => {
                let email = need(a, "email")?;
                let assignments: Vec<Value> = s
                    .state
                    .rows("mavenlink_employee_assignments")?
                    .iter()
                    .filter(|r| {
                        field(r, "employee_email") == email
                            && matches!(field(r, "assignment_status"), "active" | "booked")
                    })
                    .map(|r| {
                        out([
                            ("engagement_code", val(r, "engagement_code")),
                            ("assignment_status", val(r, "assignment_status")),
                            ("start_date", isoformat_field(r, "start_date")),
                            ("end_date", isoformat_field(r, "end_date")),
                            ("senior_manager_email", val(r, "senior_manager_email")),
                        ])
                    })
                    .collect();
                Ok(json!({ "assignments": assignments }))
            }
            "validate_engagement_code" => {
                let code = need(a, "engagement_code")?;
                Ok(json!({ "valid": get_row(s, "mavenlink_mv_engagements", code)?.is_some() }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Mavenlink API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn engagements_and_assignments() {
        let mut s = session(json!({}));
        assert_eq!(
            call(
                &mut s,
                "mavenlink_api",
                json!({"action": "validate_engagement_code", "engagement_code": "ENG-NOPE"})
            ),
            json!({"valid": false})
        );
        assert_eq!(
            err(
                &mut s,
                "mavenlink_api",
                json!({"action": "get_engagement", "engagement_code": "ENG-NOPE"})
            ),
            "Tool execution failed: Engagement not found: ENG-NOPE"
        );
        assert_eq!(
            err(
                &mut s,
                "mavenlink_api",
                json!({"action": "validate_engagement_code", "engagement_code": ""})
            ),
            "Tool execution failed: Missing required parameter: engagement_code"
        );
        assert_eq!(
            call(
                &mut s,
                "mavenlink_api",
                json!({"action": "get_employee_assignments", "email": "nobody@msg.com"})
            ),
            json!({"assignments": []})
        );
    }
}
