//! Okta: application access (provision, check, revoke), group membership, and security
//! operations with their audit log.

use super::{DEC_18, active_rows, next_id, out, require_employee, tables};
use crate::vocab::project;
use serde_json::{Value, json};
use tb_python::datetime::{add_hours, fromisoformat_z};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

/// Index and row of the first active access of an employee to an app.
fn active_access(s: &Session, employee_id: &str, app: &str) -> Result<Option<Row>, ToolError> {
    Ok(
        active_rows(s, tables::OKTA_APP_ACCESS, "employee_id", employee_id)?
            .find(|r| r.str_or_empty("app_name") == app)
            .cloned(),
    )
}

/// `okta_api_provision_access`: a new active access record `OAA-{n:08d}`.
pub fn provision_access(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let app = a.str_or_empty("app_name");
    let e = require_employee(s, email, "Employee not found in Okta directory: ")?;
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
    let e = require_employee(s, email, "Employee not found: ")?;
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
    let e = require_employee(s, email, "Employee not found: ")?;
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
    let e = require_employee(s, email, "Employee not found: ")?;
    let eid = e.str_or_empty("id");
    let groups: Vec<Value> = active_rows(s, tables::OKTA_GROUPS, "employee_id", eid)?
        .map(|m| project(m, &["group_name", "added_at"], &[]))
        .collect();
    Ok(json!({ "groups": groups }))
}

/// `okta_api_add_to_group`: a new membership `OGM-{n:08d}`.
pub fn add_to_group(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let group = a.str_or_empty("group_name");
    let e = require_employee(s, email, "Employee not found: ")?;
    let eid = e.str_or_empty("id");
    let exists = active_rows(s, tables::OKTA_GROUPS, "employee_id", eid)?
        .any(|m| m.str_or_empty("group_name") == group);
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
    let e = require_employee(s, email, "Employee not found in Okta directory: ")?;
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
