//! The `sandbox_neobank_support_v1` server: its tables, its zendesk variant and its own tools.
//!
//! The tools are split by API area, as the reference names them: Workday (HR directory), Okta
//! (application access, groups, security operations), security incidents, approver lookup,
//! license management, asset management, hardware procurement, approvals and email.
//! Created records get count-based ids (`OAA-{n:08d}` with n = rows + 1, and so on) and the
//! reference's fixed timestamps, so replays are deterministic.

use crate::vocab::SessionRows;
use tb_python::datetime::DateTimeParts;
use tb_sandbox::{Fields, Row, Session, ToolError, Tools};

mod approval;
mod approver;
mod assets;
mod email;
mod license;
mod okta;
mod procurement;
mod security;
pub(crate) mod tables;
mod workday;

#[cfg(test)]
mod testutil;

/// The server name.
pub const SERVER: &str = "sandbox_neobank_support_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Tools {
    let mut t = Tools::new();
    t.add("knowledge_base_search_policy", crate::policy::search_policy)
        .add("approval_api_check_status", approval::check_status)
        .add("approval_api_create_request", approval::create_request)
        .add(
            "approver_lookup_api_get_contact_details",
            approver::get_contact_details,
        )
        .add(
            "approver_lookup_api_get_approver_contact",
            approver::get_approver_contact,
        )
        .add("asset_management_api_assign_device", assets::assign_device)
        .add(
            "asset_management_api_check_inventory",
            assets::check_inventory,
        )
        .add(
            "asset_management_api_get_device_details",
            assets::get_device_details,
        )
        .add(
            "asset_management_api_get_employee_devices",
            assets::get_employee_devices,
        )
        .add("asset_management_api_retire_device", assets::retire_device)
        .add(
            "email_notification_api_send_notification",
            email::send_notification,
        )
        .add(
            "hardware_procurement_api_create_order",
            procurement::create_order,
        )
        .add(
            "license_management_api_allocate_license",
            license::allocate_license,
        )
        .add(
            "license_management_api_check_availability",
            license::check_availability,
        )
        .add(
            "license_management_api_check_license_type",
            license::check_license_type,
        )
        .add("okta_api_add_to_group", okta::add_to_group)
        .add("okta_api_check_access", okta::check_access)
        .add("okta_api_get_user_groups", okta::get_user_groups)
        .add("okta_api_provision_access", okta::provision_access)
        .add("okta_api_revoke_access", okta::revoke_access)
        .add("okta_security_api_execute_action", okta::execute_action)
        .add("security_api_verify_incident", security::verify_incident)
        .add("workday_api_get_employee", workday::get_employee)
        .add("workday_api_get_manager_chain", workday::get_manager_chain)
        .add("workday_api_get_org_structure", workday::get_org_structure);
    t
}

/// Builds the domain.
pub fn domain() -> Result<tb_sandbox::Domain, tb_sandbox::DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_neobank_support_v1.tables"),
        crate::zendesk::Variant::Neobank,
        include_str!("../../tools/sandbox_neobank_support_v1.tools"),
        functions(),
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

/// `[e for e in db.get_all(Employee) if e.email == email][0]`.
pub(crate) fn employee_by_email(s: &Session, email: &str) -> Result<Option<Row>, ToolError> {
    Ok(
        s.row_where(tables::EMPLOYEES, |e| e.str_or_empty("email") == email)?
            .cloned(),
    )
}

/// The employee with this email, or the tool's error `{prefix}{email}`.
pub(crate) fn require_employee(s: &Session, email: &str, prefix: &str) -> Result<Row, ToolError> {
    employee_by_email(s, email)?.ok_or_else(|| ToolError::new(format!("{prefix}{email}")))
}

pub(crate) use tb_sandbox::tool::out;

/// The active rows (`is_active`) of `table` whose `field` is `value`, in table order.
pub(crate) fn active_rows<'s>(
    s: &'s Session,
    table: &str,
    field: &'s str,
    value: &'s str,
) -> Result<impl Iterator<Item = &'s Row> + use<'s>, ToolError> {
    s.rows_where(table, move |r| {
        r.str_or_empty(field) == value && r.bool_or_false("is_active")
    })
}

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

pub(crate) use tb_python::str_repr as py_repr;

#[cfg(test)]
mod tests;
