//! Okta: application access provisioning (an access-log row per grant).

use super::{Out, finish, probe_id};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

const TABLE: &str = "okta_application_access_logs";

/// `okta_provision_access`: logs an `AAL-2-<n>` grant, full access unless told otherwise.
pub(crate) fn provision_access(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        let access = match a.get("access_type") {
            Some(Value::String(t)) => t.clone(),
            _ => "full_access".to_string(),
        };
        let id = probe_id(s, TABLE, "AAL-2")?;
        let row = json!({
            "id": id,
            "employee_email": a.get("email").cloned().unwrap_or(Value::Null),
            "app_name": a.get("app_name").cloned().unwrap_or(Value::Null),
            "access_type": access,
        });
        s.insert(TABLE, &row)?;
        Ok(json!({ "success": true }))
    };
    finish("Failed to provision access", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn grants_get_probed_ids() {
        let mut s = session(json!({
            "okta_application_access_logs": [{"id": "AAL-2-000000", "employee_email": "x@msg.com", "app_name": "Box"}]
        }));
        assert_eq!(
            call(
                &mut s,
                "okta_provision_access",
                json!({"email": "t@msg.com", "app_name": "Tableau"})
            ),
            json!({"success": true})
        );
        let row = s
            .state
            .get("okta_application_access_logs", &json!("AAL-2-000001"))
            .unwrap()
            .unwrap()
            .clone();
        assert_eq!(row["access_type"], json!("full_access"));
        assert_eq!(
            err(
                &mut s,
                "okta_provision_access",
                json!({"email": "t@msg.com", "app_name": "X", "access_type": "owner"})
            ),
            "Tool execution failed: Input validation failed: access_type: Input should be 'full_access', 'read_only', 'contributor' or 'admin'"
        );
    }
}
