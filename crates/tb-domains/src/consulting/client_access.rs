//! Client access management: VPN grants, client-system access, client requirements and an
//! employee's prerequisites (clearance, NDA, completed trainings).

use super::{Out, action, exec, field, finish, get_row, is_none, need, out, probe_id, val};
use crate::pytime::isoformat_field;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

const VPN: &str = "client_access_vpn_access";
const SYSTEMS: &str = "client_access_client_system_access";

/// When `revoke_vpn` stamps a grant: 2025-10-01T00:00:00Z, fixed.
const REVOKED_AT: &str = "2025-10-01T00:00:00Z";

/// `client_access_api`: `provision_vpn`, `check_vpn_access`, `revoke_vpn`,
/// `provision_client_system`, `check_client_requirements`, `get_employee_prerequisites`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        // `client_id` as given (not truthiness): revoke_vpn tests it with `is None`.
        let client = a.get("client_id").and_then(Value::as_str);
        match action(a) {
            "provision_vpn" => {
                let email = need(a, "email")?;
                let id = probe_id(s, VPN, "VPN-2")?;
                s.insert(VPN, &json!({"id": id, "employee_email": email, "client_id": client, "revoked_at": null}))?;
                Ok(json!({ "success": true }))
            }
            "check_vpn_access" => {
                let email = need(a, "email")?;
                let grants: Vec<Value> = s
                    .state
                    .rows(VPN)?
                    .iter()
                    .filter(|v| field(v, "employee_email") == email && is_none(v, "revoked_at"))
                    .map(|v| {
                        out([
                            ("id", val(v, "id")),
                            ("employee_email", val(v, "employee_email")),
                            ("client_id", val(v, "client_id")),
                            ("revoked_at", isoformat_field(v, "revoked_at")),
                        ])
                    })
                    .collect();
                Ok(json!({ "vpn_access": grants }))
            }
            "revoke_vpn" => {
                let email = need(a, "email")?;
                let targets: Vec<_> = s
                    .state
                    .rows(VPN)?
                    .iter()
                    .filter(|v| field(v, "employee_email") == email && is_none(v, "revoked_at"))
                    .filter(|v| {
                        client.is_none_or(|c| v.get("client_id").and_then(Value::as_str) == Some(c))
                    })
                    .cloned()
                    .collect();
                for mut v in targets {
                    v.insert("revoked_at".into(), json!(REVOKED_AT));
                    s.replace(VPN, &Value::Object(v))?;
                    if client.is_some() {
                        break;
                    }
                }
                Ok(json!({ "success": true }))
            }
            "provision_client_system" => {
                let email = need(a, "email")?;
                let client = need(a, "client_id")?;
                let system = need(a, "system_name")?;
                let access = need(a, "access_type")?;
                let id = probe_id(s, SYSTEMS, "CSA-2")?;
                let row = json!({"id": id, "employee_email": email, "client_id": client, "system_name": system,
                    "access_type": access, "revoked_at": null});
                s.insert(SYSTEMS, &row)?;
                Ok(json!({ "success": true }))
            }
            "check_client_requirements" => {
                let client = need(a, "client_id")?;
                let r = get_row(s, "salesforce_crm_clients", client)?
                    .ok_or_else(|| exec(format!("Client not found: {client}")))?;
                let requirements = json!({
                    "clearance_level": val(&r, "clearance_level"),
                    "requires_nda": val(&r, "requires_nda"),
                    "required_training_courses": r.get("required_training_courses").cloned().unwrap_or_else(|| json!([])),
                });
                Ok(json!({ "requirements": requirements }))
            }
            "get_employee_prerequisites" => {
                let email = need(a, "email")?;
                let client = need(a, "client_id")?;
                let clearance = s
                    .state
                    .rows("client_access_clearance_record")?
                    .iter()
                    .find(|c| field(c, "employee_email") == email)
                    .map_or_else(|| json!("not_initiated"), |c| val(c, "status"));
                let nda = s
                    .state
                    .rows("client_access_nda_record")?
                    .iter()
                    .find(|n| {
                        field(n, "employee_email") == email && field(n, "client_id") == client
                    })
                    .map_or_else(|| json!("not_signed"), |n| val(n, "status"));
                let completed: Vec<Value> = s
                    .state
                    .rows("degreed_training_enrollments")?
                    .iter()
                    .filter(|e| {
                        field(e, "employee_email") == email && !is_none(e, "completion_date")
                    })
                    .map(|e| val(e, "course_id"))
                    .collect();
                Ok(
                    json!({ "clearance_status": clearance, "nda_status": nda, "completed_training_courses": completed }),
                )
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Client Access API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn vpn_lifecycle_and_prerequisites() {
        let mut s = session(json!({}));
        let grant = |s: &mut tb_sandbox::Session, client: serde_json::Value| {
            call(
                s,
                "client_access_api",
                json!({"action": "provision_vpn", "email": "t@msg.com", "client_id": client}),
            )
        };
        assert_eq!(grant(&mut s, json!("CLT-A")), json!({"success": true}));
        assert_eq!(grant(&mut s, json!(null)), json!({"success": true}));
        let active = call(
            &mut s,
            "client_access_api",
            json!({"action": "check_vpn_access", "email": "t@msg.com"}),
        );
        assert_eq!(active["vpn_access"].as_array().unwrap().len(), 2);
        assert!(active["vpn_access"][1].get("client_id").is_none());
        call(
            &mut s,
            "client_access_api",
            json!({"action": "revoke_vpn", "email": "t@msg.com", "client_id": "CLT-A"}),
        );
        let active = call(
            &mut s,
            "client_access_api",
            json!({"action": "check_vpn_access", "email": "t@msg.com"}),
        );
        assert_eq!(active["vpn_access"].as_array().unwrap().len(), 1);
        call(
            &mut s,
            "client_access_api",
            json!({"action": "revoke_vpn", "email": "t@msg.com"}),
        );
        let active = call(
            &mut s,
            "client_access_api",
            json!({"action": "check_vpn_access", "email": "t@msg.com"}),
        );
        assert_eq!(active, json!({"vpn_access": []}));
        assert_eq!(
            call(
                &mut s,
                "client_access_api",
                json!({"action": "get_employee_prerequisites", "email": "t@msg.com", "client_id": "CLT-A"})
            ),
            json!({"clearance_status": "not_initiated", "nda_status": "not_signed", "completed_training_courses": []})
        );
        assert_eq!(
            err(
                &mut s,
                "client_access_api",
                json!({"action": "provision_client_system", "email": "t@msg.com", "client_id": "CLT-A", "system_name": "X"})
            ),
            "Tool execution failed: Missing required parameter: access_type"
        );
        assert_eq!(
            err(
                &mut s,
                "client_access_api",
                json!({"action": "check_client_requirements", "client_id": "CLT-NOPE"})
            ),
            "Tool execution failed: Client not found: CLT-NOPE"
        );
    }
}
