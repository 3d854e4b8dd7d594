//! Helpers the retail toolsets share: the fixed creation time, row lookups and id probes.
//! Every retail tool is registered with its `Failed to <verb>` prefix (see [`super::functions`]).

use crate::vocab::SessionRows;
use chrono::{DateTime, Utc};
use serde_json::Value;
use tb_python::datetime::parse_datetime;
use tb_python::py_eq;
use tb_sandbox::{Row, Session, ToolError};

/// The fixed "now" every retail tool stamps on what it creates (2025-10-01 13:00:05 UTC).
pub const FIXED_NOW: &str = "2025-10-01T13:00:05Z";

/// The first row whose `field` equals `value` (a linear scan, as the tools do), cloned.
pub fn first(
    s: &Session,
    table: &str,
    field: &str,
    value: &Value,
) -> Result<Option<Row>, ToolError> {
    Ok(
        s.row_where(table, |r| r.get(field).is_some_and(|v| py_eq(v, value)))?
            .cloned(),
    )
}

/// The first row matching a predicate, cloned.
pub fn first_where(
    s: &Session,
    table: &str,
    pred: impl Fn(&Row) -> bool,
) -> Result<Option<Row>, ToolError> {
    Ok(s.row_where(table, |r| pred(r))?.cloned())
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
    format: impl Fn(usize) -> String,
) -> Result<String, ToolError> {
    let rows = s.state.rows(table)?;
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
pub use tb_sandbox::tool::out;

/// Stores a changed row (`db.update`), wrapping a failure with the tool's prefix.
pub fn save(s: &mut Session, table: &str, row: &Row) -> Result<(), ToolError> {
    s.replace(table, &Value::Object(row.clone())).map(|_| ())
}

/// Creates a row (`db.create`), wrapping a failure with the tool's prefix. Returns the stored row.
pub fn create(s: &mut Session, table: &str, row: Value) -> Result<Row, ToolError> {
    s.insert(table, &row)
}
