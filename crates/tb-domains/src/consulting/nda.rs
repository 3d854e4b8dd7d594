//! NDA management: status per employee and client, and sending for e-signature.

use super::{Out, action, exec, field, finish, need};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

const TABLE: &str = "client_access_nda_record";

/// `nda_api`: `check_status`, `send_for_signature`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        let act = action(a);
        if !matches!(act, "check_status" | "send_for_signature") {
            return Err(exec(format!("Invalid action: {act}")));
        }
        let email = need(a, "email")?;
        let client = need(a, "client_id")?;
        let existing = s
            .state
            .rows(TABLE)?
            .iter()
            .find(|n| field(n, "employee_email") == email && field(n, "client_id") == client)
            .cloned();
        if act == "check_status" {
            let status = existing
                .as_ref()
                .map_or("not_signed", |n| field(n, "status"))
                .to_string();
            return Ok(json!({ "signed": status == "signed", "nda_data": { "status": status } }));
        }
        match existing {
            Some(mut n) => {
                n.insert("status".into(), json!("sent_for_signature"));
                s.replace(TABLE, &Value::Object(n))?;
            }
            None => {
                s.insert(TABLE, &json!({"employee_email": email, "client_id": client, "status": "sent_for_signature"}))?;
            }
        }
        Ok(json!({ "success": true }))
    };
    finish("Failed to execute NDA API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn send_then_check() {
        let mut s = session(json!({}));
        let check = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "nda_api",
                json!({"action": "check_status", "email": "t@msg.com", "client_id": "CLT-T"}),
            )
        };
        assert_eq!(
            check(&mut s),
            json!({"signed": false, "nda_data": {"status": "not_signed"}})
        );
        let send =
            json!({"action": "send_for_signature", "email": "t@msg.com", "client_id": "CLT-T"});
        assert_eq!(
            call(&mut s, "nda_api", send.clone()),
            json!({"success": true})
        );
        let n = s.state.count("client_access_nda_record").unwrap();
        assert_eq!(call(&mut s, "nda_api", send), json!({"success": true}));
        assert_eq!(s.state.count("client_access_nda_record").unwrap(), n);
        assert!(
            s.state
                .get("client_access_nda_record", &json!("t@msg.com:CLT-T"))
                .unwrap()
                .is_some()
        );
        assert_eq!(
            check(&mut s),
            json!({"signed": false, "nda_data": {"status": "sent_for_signature"}})
        );
        assert_eq!(
            err(
                &mut s,
                "nda_api",
                json!({"action": "check_status", "email": "t@msg.com"})
            ),
            "Tool execution failed: Missing required parameter: client_id"
        );
        assert_eq!(
            err(
                &mut s,
                "nda_api",
                json!({"action": "check_status", "email": "t@msg.com", "client_id": "C", "folder": 1})
            ),
            "Tool execution failed: Input validation failed: folder: Extra inputs are not permitted"
        );
    }
}
