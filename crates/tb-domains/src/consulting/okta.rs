//! Okta: application access provisioning (an access-log row per grant).

use super::insert_probed;
use super::tables::OKTA_APPLICATION_ACCESS_LOGS;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolResult};

/// `okta_provision_access`: logs an `AAL-2-<n>` grant, full access unless told otherwise.
pub(crate) fn provision_access(s: &mut Session, a: &Args) -> ToolResult {
    let access = match a.get("access_type") {
        Some(Value::String(t)) => t.clone(),
        _ => "full_access".to_string(),
    };
    let row = json!({
        "employee_email": a.value("email"),
        "app_name": a.value("app_name"),
        "access_type": access,
    });
    insert_probed(s, OKTA_APPLICATION_ACCESS_LOGS, "AAL-2", row)?;
    Ok(json!({ "success": true }))
}
