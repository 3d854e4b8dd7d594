//! The `external_booking_v1` server: its tables, its zendesk variant and its own tools.

use tb_sandbox::{Domain, DomainError, ToolFn};

/// The server name.
pub const SERVER: &str = "external_booking_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/external_booking_v1.tables"),
        crate::zendesk::Variant::Booking,
        include_str!("../../tools/external_booking_v1.tools"),
        &functions(),
    )
}
