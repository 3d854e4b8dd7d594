//! License management: pool type, free seats, allocation.

use super::{active_rows, next_id, out, require_employee, tables};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

/// The first pool whose software name equals `name` ignoring case.
fn pool(s: &Session, name: &str) -> Result<Option<Row>, ToolError> {
    let want = name.to_lowercase();
    Ok(s.row_where(tables::LICENSES, |l| {
        l.str_or_empty("software_name").to_lowercase() == want
    })?
    .cloned())
}

/// Active allocations of a pool.
fn active_count(s: &Session, license_id: &str) -> Result<usize, ToolError> {
    Ok(active_rows(s, tables::ALLOCATIONS, "license_id", license_id)?.count())
}

fn total(l: &Row) -> i64 {
    // `total_licenses or 0`.
    l.i64_or_zero("total_licenses")
}

fn not_in_inventory(name: &str) -> ToolError {
    ToolError::new(format!("Software not found in license inventory: {name}"))
}

/// `license_management_api_check_license_type`.
pub fn check_license_type(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let name = a.str_or_empty("software_name");
    let l = pool(s, name)?.ok_or_else(|| not_in_inventory(name))?;
    Ok(out(vec![
        ("license_type", l.value("license_type")),
        ("license_id", l.value("id")),
        (
            "annual_cost_per_license",
            l.value("annual_cost_per_license"),
        ),
    ]))
}

/// `license_management_api_check_availability`: no counts for unlimited pools.
pub fn check_availability(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let name = a.str_or_empty("software_name");
    let l = pool(s, name)?.ok_or_else(|| not_in_inventory(name))?;
    if l.str_or_empty("license_type") == "unlimited" {
        return Ok(json!({ "license_type": "unlimited" }));
    }
    let used = i64::try_from(active_count(s, l.str_or_empty("id"))?).unwrap_or(i64::MAX);
    let total = total(&l);
    Ok(json!({
        "available_licenses": (total - used).max(0),
        "total_licenses": total,
        "license_type": l.value("license_type"),
    }))
}

/// `license_management_api_allocate_license`: a new active allocation `LAL-{n:08d}`.
pub fn allocate_license(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let name = a.str_or_empty("software_name");
    let e = require_employee(s, email, "Employee not found: ")?;
    let l = pool(s, name)?.ok_or_else(|| ToolError::new(format!("Software not found: {name}")))?;
    let (eid, lid) = (e.str_or_empty("id"), l.str_or_empty("id"));
    let has = active_rows(s, tables::ALLOCATIONS, "employee_id", eid)?
        .any(|r| r.str_or_empty("license_id") == lid);
    if has {
        return Err(ToolError::new(format!(
            "Employee already has a license for this software: {name}"
        )));
    }
    if l.str_or_empty("license_type") != "unlimited" {
        let used = i64::try_from(active_count(s, lid)?).unwrap_or(i64::MAX);
        if used >= total(&l) {
            return Err(ToolError::new("No licenses available in pool"));
        }
    }
    let id = next_id(s, tables::ALLOCATIONS, "LAL-", 8)?;
    s.insert(
        tables::ALLOCATIONS,
        &json!({"id": id, "license_id": lid, "employee_id": eid, "allocated_at": null, "allocated_by": "system", "is_active": true}),
    )?;
    Ok(json!({ "allocation_id": id }))
}
