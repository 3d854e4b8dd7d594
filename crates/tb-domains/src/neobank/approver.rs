//! Approver lookup: who approves for a department, and whether an approver is available.

use super::{out, tables};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `approver_lookup_api_get_approver_contact`: the first employee with the highest level in
/// the department named (case-insensitively) by `required_approver`.
pub fn get_approver_contact(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let asked = a.str_or_empty("required_approver");
    let dept = asked.to_lowercase();
    if !matches!(
        dept.as_str(),
        "it_security" | "finance_accounting" | "compliance_risk"
    ) {
        return Err(ToolError::new(format!(
            "Invalid required_approver: {asked}. Must be one of: it_security, finance_accounting, compliance_risk"
        )));
    }
    let members: Vec<_> = s
        .rows_where(tables::EMPLOYEES, |e| e.str_or_empty("department") == dept)?
        .collect();
    let level = |e: &&tb_sandbox::Row| e.get("level").and_then(Value::as_i64).unwrap_or(i64::MIN);
    let top = members
        .iter()
        .map(level)
        .max()
        .ok_or_else(|| ToolError::new(format!("No {dept} team members found")))?;
    let Some(e) = members.iter().find(|e| level(e) == top) else {
        return Err(ToolError::new(format!("No {dept} team members found")));
    };
    Ok(json!({
        "employee_id": e.value("id"),
        "contact_email": e.value("email"),
        "contact_name": e.value("full_name"),
    }))
}

/// `approver_lookup_api_get_contact_details`: availability from the employment status, and
/// the manager's email as backup when the approver is on leave.
pub fn get_contact_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let all = s.state.rows(tables::EMPLOYEES)?;
    let e = all
        .iter()
        .find(|e| e.str_or_empty("email") == email)
        .ok_or_else(|| ToolError::new(format!("Approver not found: {email}")))?;
    let availability = match e.str_or_empty("employment_status") {
        "on_leave" => "on_leave",
        "active" | "departing" => "available",
        _ => "unavailable",
    };
    let mut backup = Value::Null;
    let manager = e.str_or_empty("manager_id");
    if availability == "on_leave"
        && !manager.is_empty()
        && let Some(m) = all.iter().find(|m| m.str_or_empty("id") == manager)
    {
        backup = m.value("email");
    }
    Ok(out(vec![
        ("name", e.value("full_name")),
        ("availability_status", json!(availability)),
        ("backup_approver_email", backup),
    ]))
}
