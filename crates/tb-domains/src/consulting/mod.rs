//! The `sandbox_consulting` server: its tables, its zendesk variant and its own tools, one file
//! per toolset of the reference (in the order the reference registers them).

use serde_json::{Map, Value};
use tb_sandbox::{Args, Session, StateError, ToolError, ToolFn};
use tb_sandbox::{Domain, DomainError};

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
mod knowledge_base;
mod license_management;
mod mavenlink;
mod nda;
mod okta;
mod salesforce_crm;
mod software_catalog;
mod workday;

/// The server name.
pub const SERVER: &str = "sandbox_consulting";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![
        (
            "software_catalog_get_details",
            software_catalog::get_details,
        ),
        ("software_catalog_search", software_catalog::search),
        (
            "salesforce_crm_check_employee_assignment",
            salesforce_crm::check_employee_assignment,
        ),
        (
            "salesforce_crm_get_engagement",
            salesforce_crm::get_engagement,
        ),
        ("workday_api", workday::api),
        ("okta_provision_access", okta::provision_access),
        ("mavenlink_api", mavenlink::api),
        ("concur_api", concur::api),
        ("asset_management_api", asset_management::api),
        ("license_management_api", license_management::api),
        ("degreed_api", degreed::api),
        ("client_access_api", client_access::api),
        ("approval_create_request", approval::create_request),
        ("approval_get_status", approval::get_status),
        ("background_check_api", background_check::api),
        ("nda_api", nda::api),
        ("box_api", box_folders::api),
        ("approver_lookup_get_contact", approver_lookup::get_contact),
        (
            "hardware_procurement_create_order",
            hardware_procurement::create_order,
        ),
        (
            "knowledge_base_search_policy",
            knowledge_base::search_policy,
        ),
    ]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_consulting.tables"),
        crate::zendesk::Variant::Consulting,
        include_str!("../../tools/sandbox_consulting.tools"),
        &functions(),
    )
}

/// How a consulting tool body fails. The reference's tools re-raise their own
/// `ExecutionError`s as they are and wrap anything else (database errors) as
/// `<tool prefix>: <error>`.
#[derive(Debug)]
pub(crate) enum Fail {
    /// An `ExecutionError` the tool raised itself: shown as is.
    Exec(String),
    /// Any other exception: shown behind the tool's prefix.
    Other(String),
}

impl From<StateError> for Fail {
    fn from(e: StateError) -> Self {
        Fail::Other(e.to_string())
    }
}

impl From<ToolError> for Fail {
    /// Errors from the session's `insert`/`replace` are database errors.
    fn from(e: ToolError) -> Self {
        Fail::Other(e.0)
    }
}

/// The result of a tool body.
pub(crate) type Out = Result<Value, Fail>;

/// An `ExecutionError` with this message.
pub(crate) fn exec(msg: impl Into<String>) -> Fail {
    Fail::Exec(msg.into())
}

/// Turns a body's failure into the tool error the reference shows, wrapping the unexpected
/// ones with `prefix`.
pub(crate) fn finish(prefix: &str, out: Out) -> Result<Value, ToolError> {
    out.map_err(|f| match f {
        Fail::Exec(m) => ToolError::new(m),
        Fail::Other(m) => ToolError::new(format!("{prefix}: {m}")),
    })
}

/// An optional string argument as Python truthiness sees it: `None` when null or empty.
pub(crate) fn opt<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// A string argument an action needs: `Missing required parameter: <name>` when null or empty.
pub(crate) fn need<'a>(a: &'a Args, name: &str) -> Result<&'a str, Fail> {
    opt(a, name).ok_or_else(|| exec(format!("Missing required parameter: {name}")))
}

/// The `action` argument (an enum, always present after validation).
pub(crate) fn action(a: &Args) -> &str {
    a.get("action").and_then(Value::as_str).unwrap_or_default()
}

/// A string field of a row (empty when absent or not a string).
pub(crate) fn field<'a>(row: &'a Map<String, Value>, name: &str) -> &'a str {
    row.get(name).and_then(Value::as_str).unwrap_or_default()
}

/// A field of a row, or null.
pub(crate) fn val(row: &Map<String, Value>, name: &str) -> Value {
    row.get(name).cloned().unwrap_or(Value::Null)
}

/// Whether a row's field is null or absent (`x is None`).
pub(crate) fn is_none(row: &Map<String, Value>, name: &str) -> bool {
    row.get(name).is_none_or(Value::is_null)
}

pub(crate) use crate::util::out;

/// The first free `<prefix>-<n:06d>` id of a table, probing from n = 0.
pub(crate) fn probe_id(s: &Session, table: &str, prefix: &str) -> Result<String, Fail> {
    let rows = s.state.rows(table)?;
    let taken: std::collections::HashSet<&str> = rows.iter().map(|r| field(r, "id")).collect();
    let mut n = 0usize;
    loop {
        let id = format!("{prefix}-{n:06}");
        if !taken.contains(id.as_str()) {
            return Ok(id);
        }
        n += 1;
    }
}

/// A stored row by id, cloned.
pub(crate) fn get_row(
    s: &Session,
    table: &str,
    id: &str,
) -> Result<Option<Map<String, Value>>, Fail> {
    Ok(s.state.get(table, &Value::String(id.to_string()))?.cloned())
}

#[cfg(test)]
pub(crate) mod testutil {
    pub use crate::testdata::{call, err};
    use serde_json::Value;
    use tb_sandbox::{Clock, Session};

    /// A session on the real initial data with `patch` applied (panics without the data: call
    /// it from `#[tb_test_support::data_test]`s only).
    pub fn session(patch: Value) -> Session {
        crate::testdata::session(super::SERVER, patch, Clock::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn helpers_follow_the_reference() {
        // ExecutionErrors pass as they are; database errors get the tool's prefix.
        assert_eq!(
            finish("Failed to x", Err(exec("Device not found: D")))
                .unwrap_err()
                .0,
            "Device not found: D"
        );
        let dup: Fail = StateError::Duplicate("AAL-2-000000".into()).into();
        assert_eq!(
            finish("Failed to provision access", Err(dup))
                .unwrap_err()
                .0,
            "Failed to provision access: Object with ID AAL-2-000000 already exists"
        );
        assert_eq!(
            out([("x", json!(1)), ("y", Value::Null), ("z", json!(""))]),
            json!({"x": 1, "z": ""})
        );
        let args: Args = json!({"email": "", "id": "X"}).as_object().unwrap().clone();
        assert_eq!(
            need(&args, "email")
                .map_err(|f| finish("p", Err(f)).unwrap_err().0)
                .unwrap_err(),
            "Missing required parameter: email"
        );
        assert_eq!(opt(&args, "id"), Some("X"));
    }

    #[tb_test_support::data_test]
    #[test]
    fn probed_ids_fill_the_first_gap() {
        let mut s = testutil::session(json!({
            "approval_approval_requests": [
                {"id": "APR-2-000000", "request_type": "travel", "requester_email": "a", "approver_email": "b"},
                {"id": "APR-2-000002", "request_type": "travel", "requester_email": "a", "approver_email": "b"}
            ]
        }));
        assert_eq!(
            probe_id(&s, "approval_approval_requests", "APR-2").unwrap(),
            "APR-2-000001"
        );
        let made = testutil::call(
            &mut s,
            "approval_create_request",
            json!({"request_type": "travel", "requester_email": "a", "approver_email": "b"}),
        );
        assert_eq!(made, json!({"approval_id": "APR-2-000001"}));
        assert_eq!(
            probe_id(&s, "approval_approval_requests", "APR-2").unwrap(),
            "APR-2-000003"
        );
    }
}
