//! The `sandbox_neobank_support_v1` server: its tables, its zendesk variant and its own tools.

use tb_sandbox::{Domain, DomainError, ToolFn};

/// The server name.
pub const SERVER: &str = "sandbox_neobank_support_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_neobank_support_v1.tables"),
        crate::zendesk::Variant::Neobank,
        include_str!("../../tools/sandbox_neobank_support_v1.tools"),
        &functions(),
    )
}
