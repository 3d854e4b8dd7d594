//! Approval workflow: create a request, check its status.

use super::{next_id, out, tables};
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
        .state
        .rows(tables::APPROVALS)?
        .iter()
        .find(|r| r.str_or_empty("id") == id)
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

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::super::testutil::{call, session};
    use serde_json::json;

    fn request() -> serde_json::Value {
        json!({"request_type": "access_request", "requester_email": "marcus.thompson@vdb.com",
               "approver_email": "sarah.jones@vdb.com", "details": "Need read access"})
    }

    #[tb_test_support::data_test]
    #[test]
    fn create_and_check() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::APPROVALS).unwrap();
        let id = format!("APR-{:08}", n + 1);
        calls!(s;
            "approval_api_create_request" (request()) => {"approval_request_id": id, "status": "pending"};
        );
        let row = s
            .state
            .rows(tables::APPROVALS)
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(row["urgency"], "standard");
        assert_eq!(row["requester_id"], "WD-847291");
        calls!(s;
            "approval_api_check_status" {"approval_request_id": id} => {"status": "pending"};
        );
        let r = call(
            &mut s,
            "approval_api_check_status",
            json!({"approval_request_id": "APR-19263847"}),
        );
        assert_eq!(
            r,
            json!({"status": "approved", "decided_at": "2025-09-16T14:00:00Z", "approver_feedback": "Approved for 30-day access period"})
        );
        calls!(s;
            "approval_api_check_status" {"approval_request_id": "APR-0"} => error "Tool execution failed: Approval request not found: APR-0";
            "approval_api_check_status" {} => error "Tool execution failed: Input validation failed: approval_request_id: Field required";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn create_errors() {
        let mut s = session(json!({}));
        let mut r = request();
        r["requester_email"] = json!("x@x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Requester not found: x@x";
        );
        let mut r = request();
        r["approver_email"] = json!("y@x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Approver not found: y@x";
        );
        let mut r = request();
        r["urgency"] = json!("asap");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Input validation failed: urgency: Input should be 'standard', 'urgent' or 'critical'";
        );
        let mut r = request();
        r["note"] = json!("x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Input validation failed: note: Extra inputs are not permitted";
        );
        // The count-based id already taken: the store refuses, wrapped by the tool's catch-all.
        let n = s.state.count(tables::APPROVALS).unwrap();
        let taken = format!("APR-{:08}", n + 2);
        let mut s = session(
            json!({tables::APPROVALS: [{"id": taken, "request_type": "data_export", "requester_id": "WD-1",
            "approver_id": "WD-2", "status": "rejected", "details": "x"}]}),
        );
        calls!(s;
            "approval_api_create_request" (request()) => error format!("Tool execution failed: Failed to create approval request: Object with ID {taken} already exists");
        );
    }
}
