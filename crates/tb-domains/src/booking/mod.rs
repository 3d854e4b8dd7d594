//! The `external_booking_v1` server: its tables, its zendesk variant and its own tools, one
//! module per toolset of the reference (booking_api, corporate_api, crm_api, hotel_partner_api,
//! payment_api, lookup; knowledge_base is the shared policy search).

use tb_sandbox::state::Row;
use tb_sandbox::{Domain, DomainError, Fields, Session, ToolError, Tools};

pub mod booking_api;
pub mod corporate_api;
pub mod crm_api;
pub mod hotel_partner_api;
pub mod lookup;
pub mod payment_api;
pub mod tables;

/// The server name.
pub const SERVER: &str = "external_booking_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Tools {
    let mut t = Tools::new();
    booking_api::register(&mut t);
    corporate_api::register(&mut t);
    crm_api::register(&mut t);
    hotel_partner_api::register(&mut t);
    payment_api::register(&mut t);
    t.add("knowledge_base_search_policy", crate::policy::search_policy);
    lookup::register(&mut t);
    t
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/external_booking_v1.tables"),
        crate::zendesk::Variant::Booking,
        include_str!("../../tools/external_booking_v1.tools"),
        functions(),
    )
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the toolsets.

/// Position and copy of the first row of `table` whose string `name` equals `value`
/// (the reference's `next(r for r in db.get_all(M) if r.name == value)`).
pub(crate) fn first_where(
    s: &Session,
    table: &str,
    name: &str,
    value: &str,
) -> Result<Option<(usize, Row)>, ToolError> {
    Ok(s.state
        .rows(table)?
        .iter()
        .enumerate()
        .find(|(_, r)| r.str_or_empty(name) == value)
        .map(|(i, r)| (i, r.clone())))
}

/// Writes a row back at its position without revalidation: the reference mutating a live
/// object without calling `db.update`.
pub(crate) fn write_in_place(
    s: &mut Session,
    table: &str,
    pos: usize,
    row: Row,
) -> Result<(), ToolError> {
    s.state.set_row(table, pos, row)?;
    Ok(())
}

/// A calendar date.
pub(crate) type Ymd = (i32, u32, u32);

/// `datetime.fromisoformat(text.replace("Z", "+00:00")).date()`; the error is Python's text.
pub(crate) fn iso_date_z(text: &str) -> Result<Ymd, String> {
    tb_python::datetime::fromisoformat_z(text).map(|p| (p.year, p.month, p.day))
}

#[cfg(test)]
pub(crate) mod testing {
    //! A session on the real initial data, for unit tests.

    pub use crate::testdata::{call, err};
    use tb_sandbox::{Clock, Session};

    /// A fresh session of this domain with `patch` at the replay clock (panics without the
    /// data: call it from `#[tb_test_support::data_test]`s only).
    pub fn session(patch: serde_json::Value) -> Session {
        let clock = Clock::parse(tb_test_support::REPLAY_CLOCK).expect("clock");
        crate::testdata::session(super::SERVER, patch, clock)
    }
}

#[cfg(test)]
mod tests;
