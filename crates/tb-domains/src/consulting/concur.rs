//! SAP Concur: expense reports (read, override a rejection) and travel bookings.

use super::tables::{CONCUR_EXPENSE_REPORTS, CONCUR_TRAVEL_REQUESTS};
use crate::vocab::{SessionRows, Shown};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// An expense report as `get_expense_report` shows it.
const EXPENSE_REPORT: Shown = Shown {
    table: CONCUR_EXPENSE_REPORTS,
    what: "Expense report",
    fields: &[
        "id",
        "employee_email",
        "amount",
        "category",
        "trip_location_city",
        "trip_location_state",
        "expense_date",
        "receipt_status",
        "rejection_reason",
        "override_approved",
        "override_approved_by",
        "override_reason",
    ],
    datetimes: &["expense_date"],
};

/// A travel booking as `get_travel_booking` shows it.
const TRAVEL_BOOKING: Shown = Shown {
    table: CONCUR_TRAVEL_REQUESTS,
    what: "Travel booking",
    fields: &[
        "id",
        "employee_email",
        "destination",
        "departure_date",
        "return_date",
        "flight_class",
        "hotel_rate_per_night",
    ],
    datetimes: &["departure_date", "return_date"],
};

/// `concur_api`: `get_expense_report`, `override_expense_rejection`, `get_travel_booking`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_expense_report" => EXPENSE_REPORT.answer(s, a, "expense_report_id", "expense_report"),
        "override_expense_rejection" => {
            let id = a.require_str_nonempty("expense_report_id")?;
            let reason = a.require_str_nonempty("override_reason")?;
            let approver = a.require_str_nonempty("approver_email")?;
            let mut r = s.require_row(CONCUR_EXPENSE_REPORTS, id, "Expense report")?;
            r.insert("override_approved".into(), json!(true));
            r.insert("override_approved_by".into(), json!(approver));
            r.insert("override_reason".into(), json!(reason));
            s.replace(CONCUR_EXPENSE_REPORTS, &Value::Object(r))?;
            Ok(json!({ "success": true }))
        }
        "get_travel_booking" => TRAVEL_BOOKING.answer(s, a, "booking_id", "travel_booking"),
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
