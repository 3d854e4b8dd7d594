//! Okta: application access (provision, check, revoke), group membership, and security
//! operations with their audit log.

use super::{DEC_18, employee_by_email, next_id, out, tables};
use crate::vocab::project;
use serde_json::{Value, json};
use tb_python::datetime::{add_hours, fromisoformat_z};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

/// The employee with this email, or the error `{prefix}{email}`.
fn employee(s: &Session, email: &str, prefix: &str) -> Result<Row, ToolError> {
    employee_by_email(s, email)?.ok_or_else(|| ToolError::new(format!("{prefix}{email}")))
}

/// Index and row of the first active access of an employee to an app.
fn active_access(s: &Session, employee_id: &str, app: &str) -> Result<Option<Row>, ToolError> {
    Ok(s.state
        .rows(tables::OKTA_APP_ACCESS)?
        .iter()
        .find(|r| {
            r.str_or_empty("employee_id") == employee_id
                && r.str_or_empty("app_name") == app
                && r.bool_or_false("is_active")
        })
        .cloned())
}

/// `okta_api_provision_access`: a new active access record `OAA-{n:08d}`.
pub fn provision_access(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let app = a.str_or_empty("app_name");
    let e = employee(s, email, "Employee not found in Okta directory: ")?;
    let eid = e.str_or_empty("id");
    if active_access(s, eid, app)?.is_some() {
        return Err(ToolError::new(format!(
            "Employee already has access to this application: {app}"
        )));
    }
    let id = next_id(s, tables::OKTA_APP_ACCESS, "OAA-", 8)?;
    s.insert(
        tables::OKTA_APP_ACCESS,
        &json!({
            "id": id,
            "employee_id": eid,
            "app_name": app,
            "access_level": a.value("access_level"),
            "granted_by": "system",
            "is_active": true,
            "is_temporary": a.value("is_temporary"),
            "expires_at": a.value("access_expiry_date"),
        }),
    )?;
    Ok(json!({ "app_access_id": id }))
}

/// `okta_api_check_access`.
pub fn check_access(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let e = employee(s, email, "Employee not found: ")?;
    Ok(
        match active_access(s, e.str_or_empty("id"), a.str_or_empty("app_name"))? {
            Some(r) => out(vec![
                ("has_access", json!(true)),
                ("access_level", r.value("access_level")),
                ("granted_at", r.value("granted_at")),
            ]),
            None => json!({ "has_access": false }),
        },
    )
}

/// `okta_api_revoke_access`: the first active access becomes inactive.
pub fn revoke_access(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let app = a.str_or_empty("app_name");
    let e = employee(s, email, "Employee not found: ")?;
    let mut r = active_access(s, e.str_or_empty("id"), app)?.ok_or_else(|| {
        ToolError::new(format!(
            "No active access found to revoke for application: {app}"
        ))
    })?;
    r.insert("is_active".into(), json!(false));
    s.replace(tables::OKTA_APP_ACCESS, &Value::Object(r))?;
    Ok(json!({ "revoked": true }))
}

/// `okta_api_get_user_groups`: active memberships in store order.
pub fn get_user_groups(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let e = employee(s, email, "Employee not found: ")?;
    let eid = e.str_or_empty("id");
    let groups: Vec<Value> = s
        .state
        .rows(tables::OKTA_GROUPS)?
        .iter()
        .filter(|m| m.str_or_empty("employee_id") == eid && m.bool_or_false("is_active"))
        .map(|m| project(m, &["group_name", "added_at"], &[]))
        .collect();
    Ok(json!({ "groups": groups }))
}

/// `okta_api_add_to_group`: a new membership `OGM-{n:08d}`.
pub fn add_to_group(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let group = a.str_or_empty("group_name");
    let e = employee(s, email, "Employee not found: ")?;
    let eid = e.str_or_empty("id");
    let exists = s.state.rows(tables::OKTA_GROUPS)?.iter().any(|m| {
        m.str_or_empty("employee_id") == eid
            && m.str_or_empty("group_name") == group
            && m.bool_or_false("is_active")
    });
    if exists {
        return Err(ToolError::new(format!(
            "Employee is already a member of this group: {group}"
        )));
    }
    let id = next_id(s, tables::OKTA_GROUPS, "OGM-", 8)?;
    s.insert(
        tables::OKTA_GROUPS,
        &json!({"id": id, "employee_id": eid, "group_name": group, "added_by": "system", "is_active": true}),
    )?;
    Ok(json!({ "membership_id": id }))
}

/// `okta_security_api_execute_action`: checks the operation's inputs and writes an audit row
/// `OSA-{n:08d}` performed at 2025-12-18T10:00:00Z.
pub fn execute_action(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let op = a.str_or_empty("operation");
    let e = employee(s, email, "Employee not found in Okta directory: ")?;
    let device_op = matches!(op, "add_mfa_device" | "remove_mfa_device");
    let device = a.opt_str("mfa_device_id").unwrap_or("");
    if device_op && device.is_empty() {
        return Err(ToolError::new(format!(
            "mfa_device_id is required for {op} operation"
        )));
    }
    let hours = a.i64_or_zero("bypass_duration_hours");
    let bypass = op == "set_temporary_bypass";
    if bypass {
        if hours == 0 {
            return Err(ToolError::new(
                "bypass_duration_hours is required for set_temporary_bypass operation",
            ));
        }
        if hours > 4 {
            return Err(ToolError::new(
                "bypass_duration_hours cannot exceed 4 hours",
            ));
        }
    }
    // Any other failure is wrapped as the reference's catch-all does.
    let wrap = |m: String| ToolError::new(format!("Failed to execute security action: {m}"));
    let id = next_id(s, tables::OKTA_AUDIT, "OSA-", 8)?;
    let mut expires = Value::Null;
    if bypass {
        expires = Value::String(add_hours(&DEC_18, hours).map_err(wrap)?.dump());
    } else if let Some(t) = a.opt_str("bypass_expires_at").filter(|t| !t.is_empty()) {
        // Parsed (and so checked) but only stored for a bypass.
        fromisoformat_z(t).map_err(wrap)?;
    }
    let mut row = json!({
        "id": id,
        "employee_id": e.value("id"),
        "operation": op,
        "performed_by": "system",
        "performed_at": DEC_18.dump(),
        "reason": format!("Security operation: {op}"),
        "ticket_id": a.value("ticket_id"),
        "verification_method": null,
        "success": true,
    });
    if let Some(m) = row.as_object_mut() {
        if bypass {
            m.insert("bypass_duration_hours".into(), json!(hours));
            m.insert("bypass_expires_at".into(), expires);
        } else if device_op {
            m.insert("mfa_device_id".into(), json!(device));
        }
    }
    s.insert(tables::OKTA_AUDIT, &row)
        .map_err(|e| wrap(e.message().to_string()))?;
    Ok(json!({ "success": true, "audit_id": id }))
}

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::super::testutil::{call, err, session};
    use serde_json::json;

    const WHO: &str = "marcus.thompson@vdb.com";

    #[tb_test_support::data_test]
    #[test]
    fn provision_check_revoke_cycle() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::OKTA_APP_ACCESS).unwrap();
        let r = call(
            &mut s,
            "okta_api_provision_access",
            json!({"email": WHO, "app_name": "Tableau", "access_level": "viewer"}),
        );
        assert_eq!(r, json!({"app_access_id": format!("OAA-{:08}", n + 1)}));
        let row = s
            .state
            .rows(tables::OKTA_APP_ACCESS)
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(row["granted_at"], json!(null));
        assert_eq!(row["is_temporary"], json!(false));
        calls!(s;
            "okta_api_provision_access" {"email": WHO, "app_name": "Tableau", "access_level": "viewer"} => error "Tool execution failed: Employee already has access to this application: Tableau";
            "okta_api_check_access" {"email": WHO, "app_name": "Tableau"} => {"has_access": true, "access_level": "viewer"};
            "okta_api_revoke_access" {"email": WHO, "app_name": "Tableau"} => {"revoked": true};
            "okta_api_check_access" {"email": WHO, "app_name": "Tableau"} => {"has_access": false};
            "okta_api_revoke_access" {"email": WHO, "app_name": "Tableau"} => error "Tool execution failed: No active access found to revoke for application: Tableau";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn provision_errors() {
        let mut s = session(json!({}));
        calls!(s;
            "okta_api_provision_access" {"email": "no@vdb.com", "app_name": "X", "access_level": "viewer"} => error "Tool execution failed: Employee not found in Okta directory: no@vdb.com";
        );
        let e = err(
            &mut s,
            "okta_api_provision_access",
            json!({"email": WHO, "app_name": "X", "access_level": "god"}),
        );
        assert!(e.starts_with("Tool execution failed: Input validation failed: access_level: Input should be 'none', 'read_only'"), "{e}");
        // A count-based id that already exists is refused by the store.
        let n = s.state.count(tables::OKTA_APP_ACCESS).unwrap();
        let mut s = session(
            json!({tables::OKTA_APP_ACCESS: [{"id": format!("OAA-{:08}", n + 2), "employee_id": "WD-1", "app_name": "Z", "access_level": "user", "granted_by": "x", "is_active": false}]}),
        );
        calls!(s;
            "okta_api_provision_access" {"email": WHO, "app_name": "Zoom2", "access_level": "user"} => error format!("Tool execution failed: Object with ID OAA-{:08} already exists", n + 2);
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn groups() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::OKTA_GROUPS).unwrap();
        let r = call(
            &mut s,
            "okta_api_add_to_group",
            json!({"email": "marcus.thompson@vdb.com", "group_name": "bi_marketing_viewers"}),
        );
        assert_eq!(r, json!({"membership_id": format!("OGM-{:08}", n + 1)}));
        calls!(s;
            "okta_api_add_to_group" {"email": "marcus.thompson@vdb.com", "group_name": "bi_marketing_viewers"} => error "Tool execution failed: Employee is already a member of this group: bi_marketing_viewers";
        );
        let g = call(
            &mut s,
            "okta_api_get_user_groups",
            json!({"email": "marcus.thompson@vdb.com"}),
        );
        assert_eq!(
            g["groups"].as_array().unwrap().last().unwrap(),
            &json!({"group_name": "bi_marketing_viewers"})
        );
        calls!(s;
            "okta_api_get_user_groups" {"email": "x"} => error "Tool execution failed: Employee not found: x";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn security_actions() {
        let mut s = session(json!({}));
        let tool = "okta_security_api_execute_action";
        let n = s.state.count(tables::OKTA_AUDIT).unwrap();
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "add_mfa_device"})
            ),
            "Tool execution failed: mfa_device_id is required for add_mfa_device operation"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": 0})
            ),
            "Tool execution failed: bypass_duration_hours is required for set_temporary_bypass operation"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": 5})
            ),
            "Tool execution failed: bypass_duration_hours cannot exceed 4 hours"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "bypass_expires_at": "soon"})
            ),
            "Tool execution failed: Failed to execute security action: Invalid isoformat string: 'soon'"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "bypass_expires_at": "2025-12-18T25:00Z"})
            ),
            "Tool execution failed: Failed to execute security action: hour must be in 0..23"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "extra": 1})
            ),
            "Tool execution failed: Input validation failed: extra: Extra inputs are not permitted"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": "no@x", "operation": "unlock_account"})
            ),
            "Tool execution failed: Employee not found in Okta directory: no@x"
        );
        assert_eq!(s.state.count(tables::OKTA_AUDIT).unwrap(), n);
        let r = call(
            &mut s,
            tool,
            json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": "3", "ticket_id": "6"}),
        );
        assert_eq!(
            r,
            json!({"success": true, "audit_id": format!("OSA-{:08}", n + 1)})
        );
        let row = s
            .state
            .rows(tables::OKTA_AUDIT)
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(row["bypass_expires_at"], "2025-12-18T13:00:00Z");
        assert_eq!(row["performed_at"], "2025-12-18T10:00:00Z");
        assert_eq!(row["reason"], "Security operation: set_temporary_bypass");
        let r = call(
            &mut s,
            tool,
            json!({"email": WHO, "operation": "remove_mfa_device", "mfa_device_id": "MFA-1"}),
        );
        assert_eq!(r["audit_id"], format!("OSA-{:08}", n + 2));
        assert_eq!(
            s.state.rows(tables::OKTA_AUDIT).unwrap().last().unwrap()["mfa_device_id"],
            "MFA-1"
        );
    }
}
