//! Approval workflow: create a request, check its status.

use super::{next_id, out, tables};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_python::datetime::parse_datetime;
use tb_python::datetime::strftime_z;
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `approval_api_create_request`: a pending request `APR-{n:08d}` from requester to approver.
pub fn create_request(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (req_email, appr_email) = (
        a.str_or_empty("requester_email"),
        a.str_or_empty("approver_email"),
    );
    let all = s.state.rows(tables::EMPLOYEES)?;
    let requester = all
        .iter()
        .find(|e| e.str_or_empty("email") == req_email)
        .ok_or_else(|| ToolError::new(format!("Requester not found: {req_email}")))?;
    let approver = all
        .iter()
        .find(|e| e.str_or_empty("email") == appr_email)
        .ok_or_else(|| ToolError::new(format!("Approver not found: {appr_email}")))?;
    let (requester_id, approver_id) = (requester.value("id"), approver.value("id"));
    let id = next_id(s, tables::APPROVALS, "APR-", 8)?;
    let urgency = a
        .get("urgency")
        .filter(|u| !u.is_null())
        .cloned()
        .unwrap_or_else(|| json!("standard"));
    let row = json!({
        "id": id,
        "request_type": a.value("request_type"),
        "requester_id": requester_id,
        "approver_id": approver_id,
        "status": "pending",
        "urgency": urgency,
        "details": a.value("details"),
        "ticket_id": a.value("ticket_id"),
        "created_at": null,
        "decided_at": null,
        "approver_feedback": null,
    });
    s.insert(tables::APPROVALS, &row)
        .map_err(|e| ToolError::new(format!("Failed to create approval request: {e}")))?;
    Ok(json!({ "approval_request_id": id, "status": "pending" }))
}

/// `approval_api_check_status`: status, decision time (`%Y-%m-%dT%H:%M:%SZ`) and feedback.
pub fn check_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("approval_request_id");
    let r = s
        .row_where(tables::APPROVALS, |r| r.str_or_empty("id") == id)?
        .ok_or_else(|| ToolError::new(format!("Approval request not found: {id}")))?;
    let decided = r
        .get("decided_at")
        .and_then(Value::as_str)
        .and_then(parse_datetime)
        .map(|p| json!(strftime_z(&p)));
    Ok(out(vec![
        ("status", r.value("status")),
        ("decided_at", decided.unwrap_or(Value::Null)),
        ("approver_feedback", r.value("approver_feedback")),
    ]))
}
