//! The `sandbox_auto_insurance` server: its tables, its zendesk variant and its own tools.

use tb_sandbox::{Domain, DomainError, ToolFn};

/// The server name.
pub const SERVER: &str = "sandbox_auto_insurance";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_auto_insurance.tables"),
        crate::zendesk::Variant::AutoInsurance,
        include_str!("../../tools/sandbox_auto_insurance.tools"),
        &functions(),
    )
}
