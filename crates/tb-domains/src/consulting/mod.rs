//! The `sandbox_consulting` server: its tables, its zendesk variant and its own tools, one file
//! per toolset of the reference (in the order the reference registers them).

use crate::vocab::SessionRows;
use serde_json::{Map, Value};
use tb_sandbox::{Domain, DomainError, Fields, Row, Session, ToolError, Tools};

mod approval;
mod approver_lookup;
mod asset_management;
mod background_check;
#[path = "box.rs"]
mod box_folders;
mod client_access;
mod concur;
mod degreed;
mod hardware_procurement;
#[cfg(test)]
mod knowledge_base;
mod license_management;
mod mavenlink;
mod nda;
mod okta;
mod salesforce_crm;
mod software_catalog;
pub(crate) mod tables;
mod workday;

/// The server name.
pub const SERVER: &str = "sandbox_consulting";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]),
/// with the prefix the reference puts before an unexpected (database) failure.
fn functions() -> Tools {
    let mut t = Tools::new();
    t.add_prefixed(
        "software_catalog_get_details",
        "Failed to retrieve software details",
        software_catalog::get_details,
    )
    .add_prefixed(
        "software_catalog_search",
        "Failed to search software catalog",
        software_catalog::search,
    )
    .add_prefixed(
        "salesforce_crm_check_employee_assignment",
        "Failed to check employee assignment",
        salesforce_crm::check_employee_assignment,
    )
    .add_prefixed(
        "salesforce_crm_get_engagement",
        "Failed to retrieve engagement details",
        salesforce_crm::get_engagement,
    )
    .add_prefixed(
        "workday_api",
        "Failed to execute Workday API action",
        workday::api,
    )
    .add_prefixed(
        "okta_provision_access",
        "Failed to provision access",
        okta::provision_access,
    )
    .add_prefixed(
        "mavenlink_api",
        "Failed to execute Mavenlink API action",
        mavenlink::api,
    )
    .add_prefixed(
        "concur_api",
        "Failed to execute Concur API action",
        concur::api,
    )
    .add_prefixed(
        "asset_management_api",
        "Failed to execute Asset Management API action",
        asset_management::api,
    )
    .add_prefixed(
        "license_management_api",
        "Failed to execute License Management API action",
        license_management::api,
    )
    .add_prefixed(
        "degreed_api",
        "Failed to execute Degreed API action",
        degreed::api,
    )
    .add_prefixed(
        "client_access_api",
        "Failed to execute Client Access API action",
        client_access::api,
    )
    .add_prefixed(
        "approval_create_request",
        "Failed to create approval request",
        approval::create_request,
    )
    .add_prefixed(
        "approval_get_status",
        "Failed to retrieve approval status",
        approval::get_status,
    )
    .add_prefixed(
        "background_check_api",
        "Failed to execute Background Check API action",
        background_check::api,
    )
    .add_prefixed("nda_api", "Failed to execute NDA API action", nda::api)
    .add("box_api", box_folders::api)
    .add_prefixed(
        "approver_lookup_get_contact",
        "Failed to retrieve approver contact",
        approver_lookup::get_contact,
    )
    .add(
        "hardware_procurement_create_order",
        hardware_procurement::create_order,
    )
    .add("knowledge_base_search_policy", crate::policy::search_policy);
    t
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_consulting.tables"),
        crate::zendesk::Variant::Consulting,
        include_str!("../../tools/sandbox_consulting.tools"),
        functions(),
    )
}

pub(crate) use tb_sandbox::tool::out;

/// The first free `<prefix>-<n:06d>` id of a table, probing from n = 0.
pub(crate) fn probe_id(s: &Session, table: &str, prefix: &str) -> Result<String, ToolError> {
    let rows = s.state.rows(table)?;
    let taken: std::collections::HashSet<&str> =
        rows.iter().map(|r| r.str_or_empty("id")).collect();
    let mut n = 0usize;
    loop {
        let id = format!("{prefix}-{n:06}");
        if !taken.contains(id.as_str()) {
            return Ok(id);
        }
        n += 1;
    }
}

/// Inserts `fields` (an object) into `table` as a new row whose id, first, is the first free
/// one ([`probe_id`]); that id.
pub(crate) fn insert_probed(
    s: &mut Session,
    table: &str,
    prefix: &str,
    fields: Value,
) -> Result<String, ToolError> {
    let id = probe_id(s, table, prefix)?;
    let mut row = Map::from_iter([("id".to_string(), Value::String(id.clone()))]);
    if let Value::Object(fields) = fields {
        row.extend(fields);
    }
    s.insert(table, &Value::Object(row))?;
    Ok(id)
}

/// The rows of `table` that belong to the employee `email` (their `employee_email`), in table
/// order.
pub(crate) fn employee_rows<'s>(
    s: &'s Session,
    table: &str,
    email: &'s str,
) -> Result<impl Iterator<Item = &'s Row> + use<'s>, ToolError> {
    s.rows_where(table, move |r| r.str_or_empty("employee_email") == email)
}

/// The first row of `table` of the employee `email` (their clearance record, say).
pub(crate) fn employee_row<'s>(
    s: &'s Session,
    table: &str,
    email: &'s str,
) -> Result<Option<&'s Row>, ToolError> {
    Ok(employee_rows(s, table, email)?.next())
}

/// The employee's training enrollments that have a completion date.
pub(crate) fn completed_trainings<'s>(
    s: &'s Session,
    email: &'s str,
) -> Result<impl Iterator<Item = &'s Row> + use<'s>, ToolError> {
    Ok(
        employee_rows(s, tables::DEGREED_TRAINING_ENROLLMENTS, email)?
            .filter(|e| !e.is_none("completion_date")),
    )
}

#[cfg(test)]
pub(crate) mod testutil {
    pub use crate::testdata::call;
    use serde_json::Value;
    use tb_sandbox::{Clock, Session};

    /// A session on the real initial data with `patch` applied (panics without the data: call
    /// it from `#[tb_test_support::data_test]`s only).
    pub fn session(patch: Value) -> Session {
        crate::testdata::session(super::SERVER, patch, Clock::default())
    }
}

#[cfg(test)]
mod tests;
