//! Sterling BackCheck: clearance status, starting a check, and processing times.

use super::employee_row;
use super::tables::CLIENT_ACCESS_CLEARANCE_RECORD;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `background_check_api`: `get_status`, `initiate`, `get_timeline`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_status" => {
            let email = a.require_str_nonempty("email")?;
            let data = match employee_row(s, CLIENT_ACCESS_CLEARANCE_RECORD, email)? {
                Some(c) => {
                    json!({"clearance_level": c.get("clearance_level"), "status": c.get("status")})
                }
                None => json!({"clearance_level": "standard", "status": "not_initiated"}),
            };
            Ok(json!({ "clearance_data": data }))
        }
        "initiate" => {
            let email = a.require_str_nonempty("email")?;
            let level = a.require_str_nonempty("clearance_level")?;
            let existing = employee_row(s, CLIENT_ACCESS_CLEARANCE_RECORD, email)?.cloned();
            match existing {
                Some(mut c) => {
                    c.insert("clearance_level".into(), json!(level));
                    c.insert("status".into(), json!("in_progress"));
                    s.replace(CLIENT_ACCESS_CLEARANCE_RECORD, &Value::Object(c))?;
                }
                None => {
                    s.insert(CLIENT_ACCESS_CLEARANCE_RECORD, &json!({"employee_email": email, "clearance_level": level, "status": "in_progress"}))?;
                }
            }
            Ok(json!({ "success": true }))
        }
        "get_timeline" => {
            let level = a.require_str_nonempty("clearance_level")?;
            Ok(json!({ "estimated_days": if level == "high_security" { 28 } else { 14 } }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
