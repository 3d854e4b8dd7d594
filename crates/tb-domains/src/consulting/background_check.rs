//! Sterling BackCheck: clearance status, starting a check, and processing times.

use super::tables::CLIENT_ACCESS_CLEARANCE_RECORD;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `background_check_api`: `get_status`, `initiate`, `get_timeline`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_status" => {
            let email = a.require_str_nonempty("email")?;
            let data = match s
                .state
                .rows(CLIENT_ACCESS_CLEARANCE_RECORD)?
                .iter()
                .find(|c| c.str_or_empty("employee_email") == email)
            {
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
            let existing = s
                .state
                .rows(CLIENT_ACCESS_CLEARANCE_RECORD)?
                .iter()
                .find(|c| c.str_or_empty("employee_email") == email)
                .cloned();
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

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn initiate_upserts() {
        let mut s = session(json!({}));
        let status = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "background_check_api",
                json!({"action": "get_status", "email": "t@msg.com"}),
            )
        };
        assert_eq!(
            status(&mut s),
            json!({"clearance_data": {"clearance_level": "standard", "status": "not_initiated"}})
        );
        let start = |s: &mut tb_sandbox::Session, level: &str| {
            call(
                s,
                "background_check_api",
                json!({"action": "initiate", "email": "t@msg.com", "clearance_level": level}),
            )
        };
        assert_eq!(start(&mut s, "standard"), json!({"success": true}));
        let n = s.state.count("client_access_clearance_record").unwrap();
        assert_eq!(start(&mut s, "high_security"), json!({"success": true}));
        assert_eq!(s.state.count("client_access_clearance_record").unwrap(), n);
        assert_eq!(
            status(&mut s),
            json!({"clearance_data": {"clearance_level": "high_security", "status": "in_progress"}})
        );
        calls!(s;
            "background_check_api" {"action": "get_timeline", "clearance_level": "high_security"} => {"estimated_days": 28};
            "background_check_api" {"action": "initiate", "email": "t@msg.com"} => error "Tool execution failed: Missing required parameter: clearance_level";
        );
    }
}
