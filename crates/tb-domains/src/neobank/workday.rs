//! Workday HR directory: employee profile, manager chain, direct reports.

use super::{out, require_employee, tables};
use crate::vocab::{SessionRows, picks};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

/// `workday_api_get_employee`.
pub fn get_employee(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let e = require_employee(s, email, "No employee found with the provided email: ")?;
    let more = [
        "office_location",
        "start_date",
        "manager_id",
        "employment_status",
        "is_contractor",
        "remote_delivery_address",
        "contract_end_date",
    ];
    Ok(out(person(&e).chain(picks(&e, &more, &[]))))
}

/// An employee as the directory lists one: the id as `employee_id`, then the name fields.
fn person(e: &Row) -> impl Iterator<Item = (&'static str, Value)> + '_ {
    let name = ["email", "full_name", "level", "department", "role"];
    std::iter::once(("employee_id", e.value("id"))).chain(name.into_iter().map(|f| (f, e.value(f))))
}

/// `workday_api_get_manager_chain`: follows `manager_id` upward until it is empty or unknown.
pub fn get_manager_chain(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let e = require_employee(s, email, "Employee not found: ")?;
    let all = s.state.rows(tables::EMPLOYEES)?;
    let mut chain = Vec::new();
    let mut current = e.str_or_empty("manager_id").to_string();
    while !current.is_empty() {
        let Some(m) = all.iter().find(|r| r.str_or_empty("id") == current) else {
            break;
        };
        // The reference loops forever on a cycle; we stop with an error instead.
        if chain.len() > all.len() {
            return Err(ToolError::new(format!(
                "Manager chain of {email} has a cycle"
            )));
        }
        chain.push(out(person(m)));
        current = m.str_or_empty("manager_id").to_string();
    }
    Ok(json!({ "manager_chain": chain }))
}

/// `workday_api_get_org_structure`: employees whose `manager_id` is the manager's id.
pub fn get_org_structure(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("manager_email");
    let m = require_employee(s, email, "Manager not found: ")?;
    let id = m.value("id");
    let reports: Vec<Value> = s
        .rows_where(tables::EMPLOYEES, |e| {
            e.get("manager_id").is_some_and(|x| *x == id)
        })?
        .map(|e| out(person(e).chain(picks(e, &["office_location", "employment_status"], &[]))))
        .collect();
    Ok(json!({ "direct_reports": reports }))
}
