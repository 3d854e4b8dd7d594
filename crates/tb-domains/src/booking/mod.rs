//! The `external_booking_v1` server: its tables, its zendesk variant and its own tools, one
//! module per toolset of the reference (booking_api, corporate_api, crm_api, hotel_partner_api,
//! payment_api, lookup; knowledge_base is the shared policy search).

use serde_json::{Map, Value};
use tb_sandbox::state::Row;
use tb_sandbox::{Domain, DomainError, Session, ToolError, ToolFn};

pub mod booking_api;
pub mod corporate_api;
pub mod crm_api;
pub mod decimal;
pub mod hotel_partner_api;
pub mod lookup;
pub mod payment_api;

/// The server name.
pub const SERVER: &str = "external_booking_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    let mut f: Vec<(&'static str, ToolFn)> = Vec::new();
    f.extend(booking_api::functions());
    f.extend(corporate_api::functions());
    f.extend(crm_api::functions());
    f.extend(hotel_partner_api::functions());
    f.extend(payment_api::functions());
    f.push((
        "knowledge_base_search_policy",
        crate::policy::search_policy as ToolFn,
    ));
    f.extend(lookup::functions());
    f
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

// ---------------------------------------------------------------------------------------------
// Helpers shared by the toolsets.

/// A string field of a row ("" when absent or not a string).
pub(crate) fn field<'a>(row: &'a Row, name: &str) -> &'a str {
    row.get(name).and_then(Value::as_str).unwrap_or("")
}

/// An optional string argument, `None` when absent or null.
pub(crate) fn opt<'a>(a: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    a.get(name).and_then(Value::as_str)
}

/// A required string argument (validated by the input model; "" if somehow missing).
pub(crate) fn arg<'a>(a: &'a Map<String, Value>, name: &str) -> &'a str {
    opt(a, name).unwrap_or("")
}

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
        .find(|(_, r)| field(r, name) == value)
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
    if let Some(slot) = s.state.rows_mut(table)?.get_mut(pos) {
        *slot = row;
    }
    Ok(())
}

/// The output model's `model_dump(exclude_none=True)` of a flat row.
pub(crate) fn no_nulls(row: &Row) -> Value {
    crate::util::exclude_none(row)
}

/// A calendar date.
pub(crate) type Ymd = (i32, u32, u32);

/// `datetime.fromisoformat(text.replace("Z", "+00:00")).date()`; the error is Python's text.
pub(crate) fn iso_date_z(text: &str) -> Result<Ymd, String> {
    crate::pytime::fromisoformat_z(text).map(|p| (p.year, p.month, p.day))
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
