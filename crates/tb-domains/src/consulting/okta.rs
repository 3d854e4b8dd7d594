//! Okta: application access provisioning (an access-log row per grant).

use super::probe_id;
use super::tables::OKTA_APPLICATION_ACCESS_LOGS;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// `okta_provision_access`: logs an `AAL-2-<n>` grant, full access unless told otherwise.
pub(crate) fn provision_access(s: &mut Session, a: &Args) -> ToolResult {
    let access = match a.get("access_type") {
        Some(Value::String(t)) => t.clone(),
        _ => "full_access".to_string(),
    };
    let id = probe_id(s, OKTA_APPLICATION_ACCESS_LOGS, "AAL-2")?;
    let row = json!({
        "id": id,
        "employee_email": a.value("email"),
        "app_name": a.value("app_name"),
        "access_type": access,
    });
    s.insert(OKTA_APPLICATION_ACCESS_LOGS, &row)?;
    Ok(json!({ "success": true }))
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn grants_get_probed_ids() {
        let mut s = session(json!({
            "okta_application_access_logs": [{"id": "AAL-2-000000", "employee_email": "x@msg.com", "app_name": "Box"}]
        }));
        calls!(s;
            "okta_provision_access" {"email": "t@msg.com", "app_name": "Tableau"} => {"success": true};
        );
        let row = s
            .state
            .get("okta_application_access_logs", &json!("AAL-2-000001"))
            .unwrap()
            .unwrap()
            .clone();
        assert_eq!(row["access_type"], json!("full_access"));
        calls!(s;
            "okta_provision_access" {"email": "t@msg.com", "app_name": "X", "access_type": "owner"} => error "Tool execution failed: Input validation failed: access_type: Input should be 'full_access', 'read_only', 'contributor' or 'admin'";
        );
    }
}
