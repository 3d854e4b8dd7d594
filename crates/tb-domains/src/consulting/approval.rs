//! Approval workflow: create requests (`APR-2-<n>` ids) and read their status.

use super::insert_probed;
use super::tables::APPROVAL_APPROVAL_REQUESTS;
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_python::py_eq;
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// `approval_create_request`: a new pending request.
pub(crate) fn create_request(s: &mut Session, a: &Args) -> ToolResult {
    let row = json!({
        "request_type": a.value("request_type"),
        "requester_email": a.value("requester_email"),
        "approver_email": a.value("approver_email"),
        "amount": a.value("amount"),
        "engagement_code": a.value("engagement_code"),
        "status": "pending",
    });
    let id = insert_probed(s, APPROVAL_APPROVAL_REQUESTS, "APR-2", row)?;
    Ok(json!({ "approval_id": id }))
}

/// `approval_get_status`: matching requests in store order, or one `NOT_FOUND` entry.
pub(crate) fn get_status(s: &mut Session, a: &Args) -> ToolResult {
    let (kind, requester) = (a.value("request_type"), a.value("requester_email"));
    let (engagement, approver) = (a.value("engagement_code"), a.value("approver_email"));
    let matches = |r: &&serde_json::Map<String, Value>| {
        let f = |k: &str| r.value(k);
        py_eq(&f("request_type"), &kind)
            && py_eq(&f("requester_email"), &requester)
            && (engagement.is_null() || py_eq(&f("engagement_code"), &engagement))
            && (approver.is_null() || py_eq(&f("approver_email"), &approver))
    };
    let results: Vec<Value> = s
        .rows_where(APPROVAL_APPROVAL_REQUESTS, matches)?
        .map(|r| {
            let f = |k: &str| r.value(k);
            super::out([
                ("approval_id", f("id")),
                ("status", f("status")),
                ("request_type", f("request_type")),
                ("approver_email", f("approver_email")),
                ("engagement_code", f("engagement_code")),
            ])
        })
        .collect();
    if results.is_empty() {
        let approver = match approver.as_str() {
            Some(x) if !x.is_empty() => json!(x),
            _ => json!(""),
        };
        let missing = super::out([
            ("approval_id", json!("NOT_FOUND")),
            ("status", json!("not_found")),
            ("request_type", kind),
            ("approver_email", approver),
            ("engagement_code", engagement),
        ]);
        return Ok(json!({ "results": [missing] }));
    }
    Ok(json!({ "results": results }))
}
