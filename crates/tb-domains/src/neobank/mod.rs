//! The `sandbox_neobank_support_v1` server: its tables, its zendesk variant and its own tools.
//!
//! The tools are split by API area, as the reference names them: Workday (HR directory), Okta
//! (application access, groups, security operations), security incidents, approver lookup,
//! license management, asset management, hardware procurement, approvals and email.
//! Created records get count-based ids (`OAA-{n:08d}` with n = rows + 1, and so on) and the
//! reference's fixed timestamps, so replays are deterministic.

use serde_json::Value;
use tb_sandbox::coerce::DateTimeParts;
use tb_sandbox::{Args, Row, Session, ToolError, ToolFn};

mod approval;
mod approver;
mod assets;
mod email;
mod license;
mod okta;
mod procurement;
mod security;
mod workday;

#[cfg(test)]
mod testutil;

/// The server name.
pub const SERVER: &str = "sandbox_neobank_support_v1";

/// Table names of the main toolset.
pub(crate) mod tables {
    pub const EMPLOYEES: &str = "sandbox_neobank_support_main_models_employees";
    pub const OKTA_APP_ACCESS: &str = "sandbox_neobank_support_main_models_okta_app_access";
    pub const OKTA_GROUPS: &str = "sandbox_neobank_support_main_models_okta_group_membership";
    pub const OKTA_AUDIT: &str = "sandbox_neobank_support_main_models_okta_security_audit";
    pub const INCIDENTS: &str = "sandbox_neobank_support_main_models_security_incidents";
    pub const LICENSES: &str = "sandbox_neobank_support_main_models_software_licenses";
    pub const ALLOCATIONS: &str = "sandbox_neobank_support_main_models_license_allocations";
    pub const ASSETS: &str = "sandbox_neobank_support_main_models_hardware_assets";
    pub const ASSIGNMENTS: &str = "sandbox_neobank_support_main_models_asset_assignments";
    pub const ORDERS: &str = "sandbox_neobank_support_main_models_procurement_orders";
    pub const APPROVALS: &str = "sandbox_neobank_support_main_models_approval_requests";
    pub const NOTIFICATIONS: &str = "sandbox_neobank_support_main_models_email_notifications";
}

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![
        (
            "knowledge_base_search_policy",
            crate::policy::search_policy as ToolFn,
        ),
        ("approval_api_check_status", approval::check_status),
        ("approval_api_create_request", approval::create_request),
        (
            "approver_lookup_api_get_contact_details",
            approver::get_contact_details,
        ),
        (
            "approver_lookup_api_get_approver_contact",
            approver::get_approver_contact,
        ),
        ("asset_management_api_assign_device", assets::assign_device),
        (
            "asset_management_api_check_inventory",
            assets::check_inventory,
        ),
        (
            "asset_management_api_get_device_details",
            assets::get_device_details,
        ),
        (
            "asset_management_api_get_employee_devices",
            assets::get_employee_devices,
        ),
        ("asset_management_api_retire_device", assets::retire_device),
        (
            "email_notification_api_send_notification",
            email::send_notification,
        ),
        (
            "hardware_procurement_api_create_order",
            procurement::create_order,
        ),
        (
            "license_management_api_allocate_license",
            license::allocate_license,
        ),
        (
            "license_management_api_check_availability",
            license::check_availability,
        ),
        (
            "license_management_api_check_license_type",
            license::check_license_type,
        ),
        ("okta_api_add_to_group", okta::add_to_group),
        ("okta_api_check_access", okta::check_access),
        ("okta_api_get_user_groups", okta::get_user_groups),
        ("okta_api_provision_access", okta::provision_access),
        ("okta_api_revoke_access", okta::revoke_access),
        ("okta_security_api_execute_action", okta::execute_action),
        ("security_api_verify_incident", security::verify_incident),
        ("workday_api_get_employee", workday::get_employee),
        ("workday_api_get_manager_chain", workday::get_manager_chain),
        ("workday_api_get_org_structure", workday::get_org_structure),
    ]
}

/// Builds the domain.
pub fn domain() -> Result<tb_sandbox::Domain, tb_sandbox::DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_neobank_support_v1.tables"),
        crate::zendesk::Variant::Neobank,
        include_str!("../../tools/sandbox_neobank_support_v1.tools"),
        &functions(),
    )
}

// ---- helpers shared by the tool files ----

/// 2025-12-17T10:00:00Z, `FIXED_CURRENT_TIME` of the Okta access, license, asset and approval tools.
pub(crate) const DEC_17: DateTimeParts = DateTimeParts {
    year: 2025,
    month: 12,
    day: 17,
    hour: 10,
    minute: 0,
    second: 0,
    micro: 0,
    offset: Some(0),
};

/// 2025-12-18T10:00:00Z, `FIXED_CURRENT_TIME` of the security, procurement and email tools.
pub(crate) const DEC_18: DateTimeParts = DateTimeParts {
    year: 2025,
    month: 12,
    day: 18,
    hour: 10,
    minute: 0,
    second: 0,
    micro: 0,
    offset: Some(0),
};

/// A string argument; empty when absent (the input model makes required ones present).
pub(crate) fn arg<'a>(a: &'a Args, name: &str) -> &'a str {
    a.get(name).and_then(Value::as_str).unwrap_or("")
}

/// An optional string argument (`None` for null or absent).
pub(crate) fn opt_arg<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.get(name).and_then(Value::as_str)
}

/// A row's string field; empty when absent or not a string.
pub(crate) fn text<'a>(row: &'a Row, field: &str) -> &'a str {
    row.get(field).and_then(Value::as_str).unwrap_or("")
}

/// A row's field value (null when absent).
pub(crate) fn val(row: &Row, field: &str) -> Value {
    row.get(field).cloned().unwrap_or(Value::Null)
}

/// A row's bool field (Python truthiness of a bool).
pub(crate) fn flag(row: &Row, field: &str) -> bool {
    row.get(field).and_then(Value::as_bool).unwrap_or(false)
}

/// `[e for e in db.get_all(Employee) if e.email == email][0]`.
pub(crate) fn employee_by_email(s: &Session, email: &str) -> Result<Option<Row>, ToolError> {
    Ok(s.state
        .rows(tables::EMPLOYEES)?
        .iter()
        .find(|e| text(e, "email") == email)
        .cloned())
}

pub(crate) use crate::util::out;

/// `f"{prefix}{n:0{width}d}"` with n = current row count + 1.
pub(crate) fn next_id(
    s: &Session,
    table: &str,
    prefix: &str,
    width: usize,
) -> Result<String, ToolError> {
    let n = s.state.count(table)? + 1;
    Ok(format!("{prefix}{n:0width$}"))
}

pub(crate) use crate::pyrepr::str_repr as py_repr;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repr_like_python() {
        assert_eq!(py_repr("abc"), "'abc'");
        assert_eq!(py_repr("it's"), "\"it's\"");
        assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
        assert_eq!(py_repr("x\ny"), "'x\\ny'");
        assert_eq!(py_repr(""), "''");
    }
}
