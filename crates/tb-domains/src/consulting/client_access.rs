//! Client access management: CLIENT_ACCESS_VPN_ACCESS grants, client-system access, client requirements and an
//! employee's prerequisites (clearance, NDA, completed trainings).

use super::tables::{
    CLIENT_ACCESS_CLEARANCE_RECORD, CLIENT_ACCESS_CLIENT_SYSTEM_ACCESS, CLIENT_ACCESS_NDA_RECORD,
    CLIENT_ACCESS_VPN_ACCESS, SALESFORCE_CRM_CLIENTS,
};
use super::{completed_trainings, employee_row, employee_rows, insert_probed};
use crate::vocab::{SessionRows, project};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Row, Session, ToolError, ToolResult};

/// When `revoke_vpn` stamps a grant: 2025-10-01T00:00:00Z, fixed.
const REVOKED_AT: &str = "2025-10-01T00:00:00Z";

/// `client_access_api`: `provision_vpn`, `check_vpn_access`, `revoke_vpn`,
/// `provision_client_system`, `check_client_requirements`, `get_employee_prerequisites`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    // `client_id` as given (not truthiness): revoke_vpn tests it with `is None`.
    let client = a.get("client_id").and_then(Value::as_str);
    match a.str_or_empty("action") {
        "provision_vpn" => {
            let email = a.require_str_nonempty("email")?;
            let row = json!({"employee_email": email, "client_id": client, "revoked_at": null});
            insert_probed(
                s,
                CLIENT_ACCESS_VPN_ACCESS,
                "CLIENT_ACCESS_VPN_ACCESS-2",
                row,
            )?;
            Ok(json!({ "success": true }))
        }
        "check_vpn_access" => {
            let email = a.require_str_nonempty("email")?;
            let grants: Vec<Value> = open_vpn_grants(s, email)?
                .map(|v| {
                    project(
                        v,
                        &["id", "employee_email", "client_id", "revoked_at"],
                        &["revoked_at"],
                    )
                })
                .collect();
            Ok(json!({ "vpn_access": grants }))
        }
        "revoke_vpn" => {
            let email = a.require_str_nonempty("email")?;
            let targets: Vec<_> = open_vpn_grants(s, email)?
                .filter(|v| {
                    client.is_none_or(|c| v.get("client_id").and_then(Value::as_str) == Some(c))
                })
                .cloned()
                .collect();
            for mut v in targets {
                v.insert("revoked_at".into(), json!(REVOKED_AT));
                s.replace(CLIENT_ACCESS_VPN_ACCESS, &Value::Object(v))?;
                if client.is_some() {
                    break;
                }
            }
            Ok(json!({ "success": true }))
        }
        "provision_client_system" => {
            let email = a.require_str_nonempty("email")?;
            let client = a.require_str_nonempty("client_id")?;
            let system = a.require_str_nonempty("system_name")?;
            let access = a.require_str_nonempty("access_type")?;
            let row = json!({"employee_email": email, "client_id": client, "system_name": system,
                "access_type": access, "revoked_at": null});
            insert_probed(s, CLIENT_ACCESS_CLIENT_SYSTEM_ACCESS, "CSA-2", row)?;
            Ok(json!({ "success": true }))
        }
        "check_client_requirements" => {
            let client = a.require_str_nonempty("client_id")?;
            let r = s.require_row(SALESFORCE_CRM_CLIENTS, client, "Client")?;
            let requirements = json!({
                "clearance_level": r.value("clearance_level"),
                "requires_nda": r.value("requires_nda"),
                "required_training_courses": r.get("required_training_courses").cloned().unwrap_or_else(|| json!([])),
            });
            Ok(json!({ "requirements": requirements }))
        }
        "get_employee_prerequisites" => {
            let email = a.require_str_nonempty("email")?;
            let client = a.require_str_nonempty("client_id")?;
            let clearance = employee_row(s, CLIENT_ACCESS_CLEARANCE_RECORD, email)?
                .map_or_else(|| json!("not_initiated"), |c| c.value("status"));
            let nda = s
                .row_where(CLIENT_ACCESS_NDA_RECORD, |n| {
                    n.str_or_empty("employee_email") == email
                        && n.str_or_empty("client_id") == client
                })?
                .map_or_else(|| json!("not_signed"), |n| n.value("status"));
            let completed: Vec<Value> = completed_trainings(s, email)?
                .map(|e| e.value("course_id"))
                .collect();
            Ok(
                json!({ "clearance_status": clearance, "nda_status": nda, "completed_training_courses": completed }),
            )
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}

/// The employee's VPN grants not revoked.
fn open_vpn_grants<'s>(
    s: &'s Session,
    email: &'s str,
) -> Result<impl Iterator<Item = &'s Row> + use<'s>, ToolError> {
    Ok(employee_rows(s, CLIENT_ACCESS_VPN_ACCESS, email)?.filter(|v| v.is_none("revoked_at")))
}
