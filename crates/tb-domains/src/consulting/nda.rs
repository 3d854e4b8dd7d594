//! NDA management: status per employee and client, and sending for e-signature.

use super::tables::CLIENT_ACCESS_NDA_RECORD;
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `nda_api`: `check_status`, `send_for_signature`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    let act = a.str_or_empty("action");
    if !matches!(act, "check_status" | "send_for_signature") {
        return Err(ToolError::new(format!("Invalid action: {act}")));
    }
    let email = a.require_str_nonempty("email")?;
    let client = a.require_str_nonempty("client_id")?;
    let existing = s
        .row_where(CLIENT_ACCESS_NDA_RECORD, |n| {
            n.str_or_empty("employee_email") == email && n.str_or_empty("client_id") == client
        })?
        .cloned();
    if act == "check_status" {
        let status = existing
            .as_ref()
            .map_or("not_signed", |n| n.str_or_empty("status"))
            .to_string();
        return Ok(json!({ "signed": status == "signed", "nda_data": { "status": status } }));
    }
    match existing {
        Some(mut n) => {
            n.insert("status".into(), json!("sent_for_signature"));
            s.replace(CLIENT_ACCESS_NDA_RECORD, &Value::Object(n))?;
        }
        None => {
            s.insert(CLIENT_ACCESS_NDA_RECORD, &json!({"employee_email": email, "client_id": client, "status": "sent_for_signature"}))?;
        }
    }
    Ok(json!({ "success": true }))
}
