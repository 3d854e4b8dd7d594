//! Helpers the retail toolsets share: table names, the fixed creation time, id probes and the
//! reference's two error kinds (a tool's own message, or any other failure wrapped as
//! `Failed to <verb>: <error>`).

use chrono::{DateTime, Utc};
use serde_json::Value;
use tb_python::datetime::parse_datetime;
use tb_python::py_eq;
use tb_sandbox::{Args, Row, Session, ToolError};

/// `oms` orders.
pub const ORDERS: &str = "external_retail_toolset_oms_models_orders";
/// `oms` order line items.
pub const LINE_ITEMS: &str = "external_retail_toolset_oms_models_order_line_items";
/// `oms` shipments.
pub const SHIPMENTS: &str = "external_retail_toolset_oms_models_shipments";
/// `oms` carrier tracking (keyed by tracking number).
pub const TRACKING: &str = "external_retail_toolset_oms_models_carrier_tracking";
/// `stripe` payment transactions.
pub const TRANSACTIONS: &str = "external_retail_toolset_stripe_models_payment_transactions";
/// `stripe` refunds.
pub const REFUNDS: &str = "external_retail_toolset_stripe_models_refunds";
/// `extend` warranty contracts.
pub const CONTRACTS: &str = "external_retail_toolset_extend_models_warranty_contracts";
/// `extend` warranty claims.
pub const CLAIMS: &str = "external_retail_toolset_extend_models_warranty_claims";
/// `jobber` installation jobs.
pub const JOBS: &str = "external_retail_toolset_jobber_models_installation_jobs";
/// `loop_returns` RMA records.
pub const RMAS: &str = "external_retail_toolset_loop_returns_models_rma_records";
/// `netsuite` inventory (keyed by sku).
pub const INVENTORY: &str = "external_retail_toolset_netsuite_models_inventory_records";
/// `promo` discount applications.
pub const DISCOUNTS: &str = "external_retail_toolset_promo_models_discount_applications";
/// `promo` active promotions.
pub const PROMOTIONS: &str = "external_retail_toolset_promo_models_active_promotions";
/// `salesforce` membership records.
pub const MEMBERSHIPS: &str = "external_retail_toolset_salesforce_models_membership_records";
/// `salesforce` customer profiles.
pub const PROFILES: &str = "external_retail_toolset_salesforce_models_customer_profiles";
/// `shopify_pim` products (keyed by sku).
pub const PRODUCTS: &str = "external_retail_toolset_shopify_pim_models_products";

/// The fixed "now" every retail tool stamps on what it creates (2025-10-01 13:00:05 UTC).
pub const FIXED_NOW: &str = "2025-10-01T13:00:05Z";

/// A tool's own error (`Tool.ExecutionError(message)`), returned as is.
pub fn fail(msg: impl Into<String>) -> ToolError {
    ToolError::new(msg)
}

/// Wraps any other failure the way the reference's `except Exception` does.
pub trait OrFail<T> {
    /// `Failed to <verb>: <error>` on error.
    fn or_fail(self, prefix: &str) -> Result<T, ToolError>;
}

impl<T, E: std::fmt::Display> OrFail<T> for Result<T, E> {
    fn or_fail(self, prefix: &str) -> Result<T, ToolError> {
        self.map_err(|e| ToolError::new(format!("{prefix}: {e}")))
    }
}

/// A validated string argument ("" when absent or null; optional ones are read with [`opt`]).
pub fn arg<'a>(a: &'a Args, name: &str) -> &'a str {
    a.get(name).and_then(Value::as_str).unwrap_or("")
}

/// An optional string argument, `None` for null; Python truthiness also treats "" as unset.
pub fn opt<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.get(name)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// The first row whose `field` equals `value` (a linear scan, as the tools do), cloned.
pub fn first(
    s: &Session,
    table: &str,
    field: &str,
    value: &Value,
    prefix: &str,
) -> Result<Option<Row>, ToolError> {
    Ok(s.state
        .rows(table)
        .or_fail(prefix)?
        .iter()
        .find(|r| r.get(field).is_some_and(|v| py_eq(v, value)))
        .cloned())
}

/// The first row matching a predicate, cloned.
pub fn first_where(
    s: &Session,
    table: &str,
    prefix: &str,
    pred: impl Fn(&Row) -> bool,
) -> Result<Option<Row>, ToolError> {
    Ok(s.state
        .rows(table)
        .or_fail(prefix)?
        .iter()
        .find(|r| pred(r))
        .cloned())
}

/// A string field of a row ("" when missing or not a string).
pub fn text<'a>(row: &'a Row, field: &str) -> &'a str {
    row.get(field).and_then(Value::as_str).unwrap_or("")
}

/// A field of a row as JSON (null when missing).
pub fn val(row: &Row, field: &str) -> Value {
    row.get(field).cloned().unwrap_or(Value::Null)
}

/// A float field of a row.
pub fn float(row: &Row, field: &str) -> f64 {
    row.get(field).and_then(Value::as_f64).unwrap_or(0.0)
}

/// An int field of a row.
pub fn int(row: &Row, field: &str) -> i64 {
    row.get(field).and_then(Value::as_i64).unwrap_or(0)
}

/// Python's `isoformat_stored()` of stored datetimes, shared with the other domains.
pub use tb_python::datetime::{isoformat_field, isoformat_stored};

/// A stored datetime as an instant, and whether it carried an offset (naive ones are read as UTC).
pub fn instant(v: &Value) -> Option<(DateTime<Utc>, bool)> {
    let p = parse_datetime(v.as_str()?)?;
    let utc = DateTime::from_timestamp_micros(tb_python::datetime::micros(&p)?)?;
    Some((utc, p.offset.is_some()))
}

/// The first id `format(n)` not used in `table.field`, trying n = start, start+1, ...
pub fn probe_id(
    s: &Session,
    table: &str,
    field: &str,
    start: usize,
    prefix: &str,
    format: impl Fn(usize) -> String,
) -> Result<String, ToolError> {
    let rows = s.state.rows(table).or_fail(prefix)?;
    let used: std::collections::HashSet<&str> = rows
        .iter()
        .filter_map(|r| r.get(field).and_then(Value::as_str))
        .collect();
    let mut n = start;
    loop {
        let id = format(n);
        if !used.contains(id.as_str()) {
            return Ok(id);
        }
        n += 1;
    }
}

/// Builds a result object from (key, value) pairs, dropping nulls (`exclude_none=True`).
pub use crate::util::out;

/// Stores a changed row (`db.update`), wrapping a failure with the tool's prefix.
pub fn save(s: &mut Session, table: &str, row: &Row, prefix: &str) -> Result<(), ToolError> {
    s.replace(table, &Value::Object(row.clone()))
        .or_fail(prefix)
        .map(|_| ())
}

/// Creates a row (`db.create`), wrapping a failure with the tool's prefix. Returns the stored row.
pub fn create(s: &mut Session, table: &str, row: Value, prefix: &str) -> Result<Row, ToolError> {
    s.insert(table, &row).or_fail(prefix)
}
