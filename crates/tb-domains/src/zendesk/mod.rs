//! The zendesk toolset in its five variants (generic for retail; booking, auto insurance,
//! neobank and consulting each have their own ticket fields and rules).

use tb_sandbox::ToolFn;

/// Which zendesk implementation a domain uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The generic toolset (retail).
    Generic,
    /// external_booking_v1.
    Booking,
    /// sandbox_auto_insurance.
    AutoInsurance,
    /// sandbox_neobank_support_v1.
    Neobank,
    /// sandbox_consulting.
    Consulting,
}

/// The tool declarations text and the functions of a variant.
pub fn toolkit(_variant: Variant) -> (&'static str, Vec<(&'static str, ToolFn)>) {
    ("", vec![])
}
