//! SAP Concur: expense reports (read, override a rejection) and travel bookings.

use super::{Out, action, exec, finish, get_row, need, out, val};
use crate::pytime::isoformat_field;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

const REPORTS: &str = "concur_expense_reports";

/// `concur_api`: `get_expense_report`, `override_expense_rejection`, `get_travel_booking`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        match action(a) {
            "get_expense_report" => {
                let id = need(a, "expense_report_id")?;
                let r = get_row(s, REPORTS, id)?
                    .ok_or_else(|| exec(format!("Expense report not found: {id}")))?;
                let report = out([
                    ("id", val(&r, "id")),
                    ("employee_email", val(&r, "employee_email")),
                    ("amount", val(&r, "amount")),
                    ("category", val(&r, "category")),
                    ("trip_location_city", val(&r, "trip_location_city")),
                    ("trip_location_state", val(&r, "trip_location_state")),
                    ("expense_date", isoformat_field(&r, "expense_date")),
                    ("receipt_status", val(&r, "receipt_status")),
                    ("rejection_reason", val(&r, "rejection_reason")),
                    ("override_approved", val(&r, "override_approved")),
                    ("override_approved_by", val(&r, "override_approved_by")),
                    ("override_reason", val(&r, "override_reason")),
                ]);
                Ok(json!({ "expense_report": report }))
            }
            "override_expense_rejection" => {
                let id = need(a, "expense_report_id")?;
                let reason = need(a, "override_reason")?;
                let approver = need(a, "approver_email")?;
                let mut r = get_row(s, REPORTS, id)?
                    .ok_or_else(|| exec(format!("Expense report not found: {id}")))?;
                r.insert("override_approved".into(), json!(true));
                r.insert("override_approved_by".into(), json!(approver));
                r.insert("override_reason".into(), json!(reason));
                s.replace(REPORTS, &Value::Object(r))?;
                Ok(json!({ "success": true }))
            }
            "get_travel_booking" => {
                let id = need(a, "booking_id")?;
                let r = get_row(s, "concur_travel_requests", id)?
                    .ok_or_else(|| exec(format!("Travel booking not found: {id}")))?;
                let booking = out([
                    ("id", val(&r, "id")),
                    ("employee_email", val(&r, "employee_email")),
                    ("destination", val(&r, "destination")),
                    ("departure_date", isoformat_field(&r, "departure_date")),
                    ("return_date", isoformat_field(&r, "return_date")),
                    ("flight_class", val(&r, "flight_class")),
                    ("hotel_rate_per_night", val(&r, "hotel_rate_per_night")),
                ]);
                Ok(json!({ "travel_booking": booking }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Concur API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn override_updates_the_report() {
        let mut s = session(json!({
            "concur_expense_reports": [{"id": "EXP-T", "employee_email": "t@msg.com", "amount": 120, "category": "meals",
                "expense_date": "2025-09-01T00:00:00", "receipt_status": "missing", "rejection_reason": "No receipt"}]
        }));
        assert_eq!(
            err(
                &mut s,
                "concur_api",
                json!({"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "system_error"})
            ),
            "Tool execution failed: Missing required parameter: approver_email"
        );
        assert_eq!(
            err(
                &mut s,
                "concur_api",
                json!({"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "because", "approver_email": "m@msg.com"})
            ),
            "Tool execution failed: Input validation failed: override_reason: Input should be 'justified_exception', 'system_error' or 'receipt_exception'"
        );
        let ok = call(
            &mut s,
            "concur_api",
            json!({"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "system_error", "approver_email": "m@msg.com"}),
        );
        assert_eq!(ok, json!({"success": true}));
        let r = call(
            &mut s,
            "concur_api",
            json!({"action": "get_expense_report", "expense_report_id": "EXP-T"}),
        );
        assert_eq!(
            r["expense_report"]["override_approved_by"],
            json!("m@msg.com")
        );
        assert_eq!(
            r["expense_report"]["override_reason"],
            json!("system_error")
        );
        assert!(r["expense_report"].get("trip_location_city").is_none());
        assert_eq!(
            err(
                &mut s,
                "concur_api",
                json!({"action": "get_travel_booking", "booking_id": "TRV-NOPE"})
            ),
            "Tool execution failed: Travel booking not found: TRV-NOPE"
        );
    }
}
