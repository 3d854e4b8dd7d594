//! Words the table domains' tool functions share beyond `tb_sandbox::tool`: a row that must
//! exist, the rows that pass a condition, two arguments of which one is needed, an output
//! model projected from a row's fields, and the action that shows one row as such a model.

use serde_json::Map;
use serde_json::Value;
use std::iter::Filter;
use tb_python::datetime::isoformat_field;
use tb_sandbox::state::RowsIter;
use tb_sandbox::tool::out;
use tb_sandbox::{Args, Fields, Row, Session, ToolError, ToolResult};

/// The rows a tool reads: one it cannot go on without, and the ones a condition picks out.
pub(crate) trait SessionRows {
    /// The row of `table` whose id is `id`, or the tool's `<what> not found: <id>` error.
    fn require_row(&self, table: &str, id: &str, what: &str) -> Result<Row, ToolError>;

    /// The rows of `table` that pass `keep`, in table order (a linear scan, as the tools do).
    fn rows_where<'s, P: FnMut(&&'s Row) -> bool>(
        &'s self,
        table: &str,
        keep: P,
    ) -> Result<Filter<RowsIter<'s>, P>, ToolError>;

    /// The first row of `table` that passes `keep`.
    fn row_where<'s>(
        &'s self,
        table: &str,
        keep: impl FnMut(&&'s Row) -> bool,
    ) -> Result<Option<&'s Row>, ToolError> {
        Ok(self.rows_where(table, keep)?.next())
    }
}

impl SessionRows for Session {
    fn require_row(&self, table: &str, id: &str, what: &str) -> Result<Row, ToolError> {
        self.row_by_id(table, id)?
            .ok_or_else(|| ToolError::new(format!("{what} not found: {id}")))
    }

    fn rows_where<'s, P: FnMut(&&'s Row) -> bool>(
        &'s self,
        table: &str,
        keep: P,
    ) -> Result<Filter<RowsIter<'s>, P>, ToolError> {
        Ok(self.state.rows(table)?.iter().filter(keep))
    }
}

/// Two arguments of which at least one must be set (`""` counts as unset): both as given, or
/// the tool's error `message` when neither is.
pub(crate) fn one_of<'a>(
    a: &'a Args,
    [first, second]: [&str; 2],
    message: &str,
) -> Result<(Option<&'a str>, Option<&'a str>), ToolError> {
    let given = (a.opt_str_nonempty(first), a.opt_str_nonempty(second));
    if given.0.is_none() && given.1.is_none() {
        return Err(ToolError::new(message));
    }
    Ok(given)
}

/// The (field, value) pairs of an output model built from `row`: each of `fields` in order,
/// as stored, but those also named in `datetimes` as `isoformat()` shows them (null when not
/// set). For [`out`], alone (see [`project`]) or chained with fields the row names otherwise.
pub(crate) fn picks<'a, 'f: 'a>(
    row: &'a Row,
    fields: &'a [&'f str],
    datetimes: &'a [&'a str],
) -> impl Iterator<Item = (&'f str, Value)> + 'a {
    fields.iter().map(move |&f| {
        let v = if datetimes.contains(&f) {
            isoformat_field(row, f)
        } else {
            row.value(f)
        };
        (f, v)
    })
}

/// `Model(**row).model_dump(exclude_none=True)` for an output model of `fields`: [`picks`]
/// with the null fields left out.
pub(crate) fn project(row: &Row, fields: &[&str], datetimes: &[&str]) -> Value {
    out(picks(row, fields, datetimes))
}

/// [`project`] of a model whose first field is the row's `id` under another name (`id_as`:
/// `transaction_id`, `promo_id`, ...).
pub(crate) fn project_as(row: &Row, id_as: &str, fields: &[&str], datetimes: &[&str]) -> Value {
    out(std::iter::once((id_as, row.value("id"))).chain(picks(row, fields, datetimes)))
}

/// `Model(**row).model_dump()` for an output model of `fields`, every field as stored, nulls
/// kept.
pub(crate) fn select(row: &Row, fields: &[&str]) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|&f| (f.to_string(), row.value(f)))
            .collect(),
    )
}

/// An output model of one table's rows, looked up by id: the table, the `<what>` of its
/// `<what> not found: <id>` error, and the model's `fields` (those in `datetimes` shown by
/// `isoformat()`), as [`project`] builds it.
pub(crate) struct Shown {
    pub table: &'static str,
    pub what: &'static str,
    pub fields: &'static [&'static str],
    pub datetimes: &'static [&'static str],
}

impl Shown {
    /// The row of id `id`, projected; the not-found error when there is none.
    pub(crate) fn row(&self, s: &Session, id: &str) -> Result<Value, ToolError> {
        let r = s.require_row(self.table, id, self.what)?;
        Ok(project(&r, self.fields, self.datetimes))
    }

    /// The action that shows one row: the id from the argument `arg` (required, not empty),
    /// answered as `{key: model}`.
    pub(crate) fn answer(&self, s: &Session, a: &Args, arg: &str, key: &str) -> ToolResult {
        let model = self.row(s, a.require_str_nonempty(arg)?)?;
        Ok(Value::Object(Map::from_iter([(key.to_string(), model)])))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn projection_keeps_order_formats_datetimes_and_drops_nulls() {
        let row = json!({"b": 2, "a": "x", "at": "2025-01-02T03:04:05Z", "gone": null, "n": 5})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            project(
                &row,
                &["a", "b", "at", "gone", "missing", "n"],
                &["at", "n"]
            ),
            json!({"a": "x", "b": 2, "at": "2025-01-02T03:04:05+00:00"})
        );
        let order: Vec<String> = project(&row, &["b", "a"], &[])
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        assert_eq!(order, ["b", "a"]);
    }

    #[test]
    fn renamed_id_and_kept_nulls() {
        let row = json!({"id": "T-1", "amount": 3, "note": null})
            .as_object()
            .unwrap()
            .clone();
        assert_eq!(
            project_as(&row, "transaction_id", &["amount", "note"], &[]),
            json!({"transaction_id": "T-1", "amount": 3})
        );
        assert_eq!(
            select(&row, &["note", "id"]),
            json!({"note": null, "id": "T-1"})
        );
    }

    #[test]
    fn one_of_needs_a_nonempty_one() {
        let args = |v: Value| v.as_object().unwrap().clone();
        let given = args(json!({"a": "", "b": "x"}));
        assert_eq!(one_of(&given, ["a", "b"], "m").unwrap(), (None, Some("x")));
        let neither = args(json!({"a": ""}));
        assert_eq!(
            one_of(&neither, ["a", "b"], "need a or b")
                .unwrap_err()
                .message(),
            "need a or b"
        );
    }
}
