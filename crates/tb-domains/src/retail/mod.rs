//! The `sandbox_external_retail` server: its tables, its zendesk variant and its own tools.

use tb_sandbox::{Domain, DomainError, ToolFn};

/// The server name.
pub const SERVER: &str = "sandbox_external_retail";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_external_retail.tables"),
        crate::zendesk::Variant::Generic,
        include_str!("../../tools/sandbox_external_retail.tools"),
        &functions(),
    )
}
