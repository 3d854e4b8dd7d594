//! The vocabulary tool functions are written in: one set of accessors on arguments and rows
//! ([`Fields`]), one error type with the reference's prefix rule ([`ToolError`]), one way to
//! register tools ([`Tools`]), and tool functions that may carry data ([`ToolFn`]).
//!
//! A tool function is `fn(&mut Session, &Args) -> ToolResult` (or a closure of that shape).
//! A server with its own state (the airline, the setup-check servers) registers the same way
//! with its session type in place of [`Session`]: [`Tools<S>`] and [`ToolFn<S>`].
//! It reads its validated arguments and the rows it fetched with the same accessors:
//!
//! - `str_or_empty(k)`: the string, `""` when absent, null or not a string;
//! - `opt_str(k)`: `None` when absent or null, `Some("")` kept;
//! - `opt_str_nonempty(k)`: `None` also for `""` (Python truthiness: `if x:`);
//! - `value(k)`: the JSON value cloned, null when absent;
//! - `opt_i64` / `i64_or_zero`, `opt_f64` / `f64_or_zero`, `opt_bool` / `bool_or_false`,
//!   `is_none`, `list_of::<T>` (a list field deserialized);
//! - `require_str(k)` / `require_str_nonempty(k)`: the two "missing argument" errors the
//!   reference's servers raise.
//!
//! Errors: [`ToolError::new`] is the tool's own `ExecutionError(message)`, shown as it is;
//! anything else (a database error, through `?`) is [`ToolError::Other`], shown behind the
//! tool's prefix when the tool was registered with one ([`Tools::add_prefixed`]: the
//! reference's `except Exception as e: raise ExecutionError(f"{prefix}: {e}")`), as it is
//! otherwise.

use crate::runtime::{Args, Session};
use crate::state::{Row, SharedRow, StateError};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::sync::Arc;

/// What a tool function answers: its result object, or the error the agent reads after
/// `Tool execution failed: `.
pub type ToolResult = Result<Value, ToolError>;

/// An error a tool raises. Its text follows `Tool execution failed: ` in the result.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ToolError {
    /// The tool's own `ExecutionError(message)`: shown as it is.
    #[error("{0}")]
    Exec(String),
    /// Any other failure (a database error): shown behind the tool's prefix, if it has one.
    #[error("{0}")]
    Other(String),
}

impl ToolError {
    /// A plain message (the reference's `ExecutionError(message)`).
    pub fn new(msg: impl Into<String>) -> Self {
        ToolError::Exec(msg.into())
    }

    /// An unexpected failure (the reference's `except Exception as e`): `e`'s text, shown
    /// behind the tool's prefix.
    pub fn other(e: impl std::fmt::Display) -> Self {
        ToolError::Other(e.to_string())
    }

    /// `ExecutionError(message, details)`: `message: d1; d2`.
    pub fn with_details(msg: &str, details: &[String]) -> Self {
        if details.is_empty() {
            ToolError::Exec(msg.to_string())
        } else {
            ToolError::Exec(format!("{msg}: {}", details.join("; ")))
        }
    }

    /// The message, whichever kind.
    pub fn message(&self) -> &str {
        match self {
            ToolError::Exec(m) | ToolError::Other(m) => m,
        }
    }

    /// A failure that is not the tool's own and whose text is never shown (the reference
    /// raises some Python exception; its server answers a bare `Error!`, see
    /// [`ToolError::bang_text`]).
    pub fn raised() -> Self {
        ToolError::Other(String::new())
    }

    /// How the `thinkingbox_tools` servers (the airline, `online_banking`, `email_system`)
    /// show a failure: `Error!` and a new line before the tool's own message; a bare `Error!`
    /// for anything else (the Python exception's text is not shown).
    pub fn bang_text(&self) -> String {
        match self {
            ToolError::Exec(m) => format!("Error!\n{m}"),
            ToolError::Other(_) => "Error!".into(),
        }
    }

    /// The reference's prefix rule: an unexpected failure becomes `<prefix>: <error>`; the
    /// tool's own messages stay as they are.
    #[must_use]
    pub fn prefixed(self, prefix: &str) -> Self {
        match self {
            ToolError::Other(m) => ToolError::Exec(format!("{prefix}: {m}")),
            e @ ToolError::Exec(_) => e,
        }
    }
}

impl From<StateError> for ToolError {
    fn from(e: StateError) -> Self {
        ToolError::Other(e.to_string())
    }
}

/// The one set of accessors on tool arguments ([`Args`]) and rows ([`crate::Row`]): both are
/// JSON objects. Arguments are validated by the input model, so a required one is present
/// and of its declared kind; the fallbacks matter for optional arguments and for rows.
pub trait Fields {
    /// The field cloned, null when absent.
    fn value(&self, name: &str) -> Value;
    /// A string field; `""` when absent, null or not a string.
    fn str_or_empty(&self, name: &str) -> &str;
    /// A string field; `None` when absent, null or not a string (`""` is kept).
    fn opt_str(&self, name: &str) -> Option<&str>;
    /// A string field as Python truthiness sees it: `None` when absent, null or `""`.
    fn opt_str_nonempty(&self, name: &str) -> Option<&str>;
    /// An integer field; `None` when absent, null or not an integer.
    fn opt_i64(&self, name: &str) -> Option<i64>;
    /// An integer field; 0 when absent, null or not an integer.
    fn i64_or_zero(&self, name: &str) -> i64;
    /// A number field as a float; `None` when absent, null or not a number.
    fn opt_f64(&self, name: &str) -> Option<f64>;
    /// A number field as a float; 0.0 when absent, null or not a number.
    fn f64_or_zero(&self, name: &str) -> f64;
    /// A bool field; `None` when absent, null or not a bool.
    fn opt_bool(&self, name: &str) -> Option<bool>;
    /// A bool field; false when absent, null or not a bool.
    fn bool_or_false(&self, name: &str) -> bool;
    /// Whether the field is absent or null (`x is None`).
    fn is_none(&self, name: &str) -> bool;
    /// A list field read as `T`s; empty when absent, null or not a list of `T`.
    fn list_of<T: DeserializeOwned>(&self, name: &str) -> Vec<T>;
    /// A string field that must be there: `<name> is required` otherwise.
    fn require_str(&self, name: &str) -> Result<&str, ToolError>;
    /// A non-empty string field: `Missing required parameter: <name>` when absent, null or
    /// `""` (the action-style tools' check).
    fn require_str_nonempty(&self, name: &str) -> Result<&str, ToolError>;
}

impl Fields for Map<String, Value> {
    fn value(&self, name: &str) -> Value {
        self.get(name).cloned().unwrap_or(Value::Null)
    }

    fn str_or_empty(&self, name: &str) -> &str {
        self.opt_str(name).unwrap_or("")
    }

    fn opt_str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }

    fn opt_str_nonempty(&self, name: &str) -> Option<&str> {
        self.opt_str(name).filter(|s| !s.is_empty())
    }

    fn opt_i64(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }

    fn i64_or_zero(&self, name: &str) -> i64 {
        self.opt_i64(name).unwrap_or(0)
    }

    fn opt_f64(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(Value::as_f64)
    }

    fn f64_or_zero(&self, name: &str) -> f64 {
        self.opt_f64(name).unwrap_or(0.0)
    }

    fn opt_bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }

    fn bool_or_false(&self, name: &str) -> bool {
        self.opt_bool(name).unwrap_or(false)
    }

    fn is_none(&self, name: &str) -> bool {
        self.get(name).is_none_or(Value::is_null)
    }

    fn list_of<T: DeserializeOwned>(&self, name: &str) -> Vec<T> {
        self.get(name)
            .and_then(|v| Vec::<T>::deserialize(v).ok())
            .unwrap_or_default()
    }

    fn require_str(&self, name: &str) -> Result<&str, ToolError> {
        self.opt_str(name)
            .ok_or_else(|| ToolError::new(format!("{name} is required")))
    }

    fn require_str_nonempty(&self, name: &str) -> Result<&str, ToolError> {
        self.opt_str_nonempty(name)
            .ok_or_else(|| ToolError::new(format!("Missing required parameter: {name}")))
    }
}

/// `model_dump(mode="json", exclude_none=True)` on one model level: the row without its
/// null fields.
pub fn exclude_none(m: &Map<String, Value>) -> Value {
    // A copy of the map keeps its index (no key is hashed again); removing keeps the order.
    let mut m = m.clone();
    m.retain(|_, v| !v.is_null());
    Value::Object(m)
}

/// An output model's `model_dump(exclude_none=True)` from its (field, value) pairs: the
/// fields in order, null values left out.
pub fn out<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// `{key: value}` with `value` moved in: what `json!({"key": value})` gives, without the
/// macro's deep copy of `value` through serde (`json!` serializes every non-literal value).
pub fn wrap(key: &str, value: impl Into<Value>) -> Value {
    let mut m = Map::with_capacity(1);
    m.insert(key.to_string(), value.into());
    Value::Object(m)
}

/// What a tool answers, for the functions that show stored rows as they are: a JSON value
/// whose parts may be rows shared with the state (written into the result text straight from
/// the stored rows, not copied first). Object keys are distinct.
#[derive(Debug, Clone)]
pub enum Output {
    /// A plain JSON value.
    Value(Value),
    /// A stored row, shared.
    Row(SharedRow),
    /// A list.
    List(Vec<Output>),
    /// An object, its (distinct) keys in order.
    Object(Vec<(String, Output)>),
}

impl Output {
    /// `{key: inner}`.
    pub fn wrap(key: &str, inner: Output) -> Output {
        Output::Object(vec![(key.to_string(), inner)])
    }

    /// The JSON value (rows copied).
    pub fn to_value(&self) -> Value {
        match self {
            Output::Value(v) => v.clone(),
            Output::Row(r) => Value::Object(Row::clone(r)),
            Output::List(items) => Value::Array(items.iter().map(Output::to_value).collect()),
            Output::Object(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.clone(), v.to_value()))
                    .collect(),
            ),
        }
    }

    /// The JSON value (rows the state still holds copied).
    pub fn into_value(self) -> Value {
        match self {
            Output::Value(v) => v,
            Output::Row(r) => Value::Object(r.into_row()),
            Output::List(items) => {
                Value::Array(items.into_iter().map(Output::into_value).collect())
            }
            Output::Object(entries) => Value::Object(
                entries
                    .into_iter()
                    .map(|(k, v)| (k, v.into_value()))
                    .collect(),
            ),
        }
    }

    /// Whether the value is a JSON object.
    pub fn is_object(&self) -> bool {
        match self {
            Output::Value(v) => v.is_object(),
            Output::Row(_) | Output::Object(_) => true,
            Output::List(_) => false,
        }
    }

    /// Appends Python's `json.dumps` of the value (what `dumps(&self.to_value())` gives).
    pub fn write_text(&self, out: &mut String) {
        use crate::pyjson::Layout;
        match self {
            Output::Value(v) => crate::pyjson::write(out, v, Layout::Default),
            Output::Row(r) => tb_python::json::write_object(out, r, Layout::Default),
            Output::List(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_text(out);
                }
                out.push(']');
            }
            Output::Object(entries) => {
                out.push('{');
                for (i, (k, v)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    crate::pyjson::write_json_str(out, k);
                    out.push_str(": ");
                    v.write_text(out);
                }
                out.push('}');
            }
        }
    }
}

impl From<Value> for Output {
    fn from(v: Value) -> Self {
        Output::Value(v)
    }
}

impl PartialEq for Output {
    /// Equal as JSON values.
    fn eq(&self, other: &Self) -> bool {
        self.to_value() == other.to_value()
    }
}

impl PartialEq<Value> for Output {
    fn eq(&self, other: &Value) -> bool {
        match self {
            Output::Value(v) => v == other,
            o => o.to_value() == *other,
        }
    }
}

impl Session {
    /// A copy of the row of `table` whose id is the string `id` (`db.get_by_id`), if any.
    pub fn row_by_id(&self, table: &str, id: &str) -> Result<Option<Row>, ToolError> {
        Ok(self
            .state
            .get(table, &Value::String(id.to_string()))?
            .cloned())
    }
}

type DynToolFn<S> = dyn Fn(&mut S, &Args, &Value) -> Result<Output, ToolError> + Send + Sync;

/// A tool's function: a plain `fn` or a closure carrying data (a variant, a prefix), on the
/// session `S` it runs on (the runtime's [`Session`] unless a server keeps its own state).
pub struct ToolFn<S = Session>(Arc<DynToolFn<S>>);

impl<S> ToolFn<S> {
    /// Wraps a function or closure.
    pub fn new(f: impl Fn(&mut S, &Args) -> ToolResult + Send + Sync + 'static) -> Self {
        ToolFn(Arc::new(move |s: &mut S, a: &Args, _: &Value| {
            f(s, a).map(Output::Value)
        }))
    }

    /// Wraps a function or closure whose result may show stored rows as they are
    /// ([`Output`]).
    pub fn output(
        f: impl Fn(&mut S, &Args) -> Result<Output, ToolError> + Send + Sync + 'static,
    ) -> Self {
        ToolFn(Arc::new(move |s: &mut S, a: &Args, _: &Value| f(s, a)))
    }

    /// Wraps a function that also reads the raw (unvalidated) arguments of its call, as the
    /// caller sent them (for tools whose reference reads what was actually sent:
    /// `model_dump(exclude_unset=True)`, field aliases), lent by the runtime (not copied).
    pub fn with_raw_args(
        f: impl Fn(&mut S, &Args, &Value) -> Result<Output, ToolError> + Send + Sync + 'static,
    ) -> Self {
        ToolFn(Arc::new(f))
    }

    /// Runs it (raw arguments unknown: null).
    pub fn call(&self, s: &mut S, a: &Args) -> ToolResult {
        (self.0)(s, a, &Value::Null).map(Output::into_value)
    }

    /// Runs it with the raw arguments of the call, its result as it gave it (rows shared,
    /// not copied).
    pub fn call_output(&self, s: &mut S, a: &Args, raw: &Value) -> Result<Output, ToolError> {
        (self.0)(s, a, raw)
    }
}

impl<S> Clone for ToolFn<S> {
    fn clone(&self) -> Self {
        ToolFn(Arc::clone(&self.0))
    }
}

impl<S> std::fmt::Debug for ToolFn<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ToolFn")
    }
}

/// The functions of a domain's tools, by tool name: the one way to register tools.
///
/// ```
/// use tb_sandbox::{Args, Session, ToolResult, Tools};
/// fn ping(_: &mut Session, _: &Args) -> ToolResult { Ok(serde_json::json!({"ok": true})) }
/// let mut tools = Tools::new();
/// tools
///     .add("ping", ping)
///     .add_prefixed("pong", "Failed to pong", ping)
///     .add("echo", move |_s: &mut Session, a: &Args| Ok(serde_json::Value::Object(a.clone())));
/// assert_eq!(tools.len(), 3);
/// ```
///
/// `S` is the session the functions run on: the runtime's [`Session`] for the table-backed
/// domains, a server's own state type otherwise.
#[derive(Debug)]
pub struct Tools<S = Session> {
    entries: Vec<(String, ToolFn<S>)>,
}

impl<S> Default for Tools<S> {
    fn default() -> Self {
        Tools {
            entries: Vec::new(),
        }
    }
}

impl<S> Clone for Tools<S> {
    fn clone(&self) -> Self {
        Tools {
            entries: self.entries.clone(),
        }
    }
}

impl<S: 'static> Tools<S> {
    /// No tools yet.
    pub fn new() -> Self {
        Tools::default()
    }

    /// Registers `name` with its function; its errors are shown as they are.
    pub fn add(
        &mut self,
        name: &str,
        f: impl Fn(&mut S, &Args) -> ToolResult + Send + Sync + 'static,
    ) -> &mut Self {
        self.entries.push((name.to_string(), ToolFn::new(f)));
        self
    }

    /// Registers `name` with its function under the reference's prefix rule: an unexpected
    /// failure ([`ToolError::Other`]) is shown as `<prefix>: <error>`.
    pub fn add_prefixed(
        &mut self,
        name: &str,
        prefix: &'static str,
        f: impl Fn(&mut S, &Args) -> ToolResult + Send + Sync + 'static,
    ) -> &mut Self {
        self.add(name, move |s: &mut S, a: &Args| {
            f(s, a).map_err(|e| e.prefixed(prefix))
        })
    }

    /// Registers an already wrapped function.
    pub fn add_fn(&mut self, name: &str, f: ToolFn<S>) -> &mut Self {
        self.entries.push((name.to_string(), f));
        self
    }

    /// Appends another set (in its order).
    pub fn extend(&mut self, other: Tools<S>) -> &mut Self {
        self.entries.extend(other.entries);
        self
    }

    /// How many functions are registered.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The function registered as `name`, if any.
    pub fn get(&self, name: &str) -> Option<&ToolFn<S>> {
        self.entries.iter().find(|(n, _)| n == name).map(|(_, f)| f)
    }

    /// The registered names, in registration order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(n, _)| n.as_str())
    }

    /// The (name, function) pairs, in registration order.
    pub fn into_entries(self) -> Vec<(String, ToolFn<S>)> {
        self.entries
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn accessors_spell_out_empty_and_absent() {
        let Value::Object(m) = json!({"s": "x", "e": "", "n": null, "i": 3, "f": 1.5, "b": true})
        else {
            unreachable!()
        };
        assert_eq!(m.str_or_empty("s"), "x");
        assert_eq!(m.str_or_empty("n"), "");
        assert_eq!(m.str_or_empty("i"), "");
        assert_eq!(m.opt_str("e"), Some(""));
        assert_eq!(m.opt_str_nonempty("e"), None);
        assert_eq!(m.opt_str_nonempty("s"), Some("x"));
        assert_eq!(m.opt_str("n"), None);
        assert_eq!(m.opt_str("zz"), None);
        assert_eq!(m.value("zz"), Value::Null);
        assert_eq!(m.value("i"), json!(3));
        assert_eq!(m.opt_i64("i"), Some(3));
        assert_eq!(m.i64_or_zero("f"), 0);
        assert_eq!(m.f64_or_zero("i"), 3.0);
        assert_eq!(m.opt_f64("f"), Some(1.5));
        assert_eq!(m.opt_bool("b"), Some(true));
        assert!(!m.bool_or_false("s"));
        assert!(m.is_none("n") && m.is_none("zz") && !m.is_none("e"));
        let Value::Object(l) = json!({"l": [1, 2], "bad": [1, "x"]}) else {
            unreachable!()
        };
        assert_eq!(l.list_of::<i64>("l"), vec![1, 2]);
        assert!(l.list_of::<i64>("bad").is_empty() && l.list_of::<i64>("zz").is_empty());
        assert_eq!(m.require_str("e"), Ok(""));
        assert_eq!(m.require_str("n").unwrap_err().to_string(), "n is required");
        assert_eq!(
            m.require_str_nonempty("e").unwrap_err().to_string(),
            "Missing required parameter: e"
        );
    }

    #[test]
    fn the_prefix_wraps_only_unexpected_failures() {
        assert_eq!(
            ToolError::other("db down")
                .prefixed("Failed to x")
                .to_string(),
            "Failed to x: db down"
        );
        assert_eq!(
            ToolError::new("Order not found: 1")
                .prefixed("Failed to x")
                .to_string(),
            "Order not found: 1"
        );
        assert_eq!(ToolError::other("db down").to_string(), "db down");
        assert_eq!(
            ToolError::with_details("Bad", &["a".into(), "b".into()]).message(),
            "Bad: a; b"
        );
    }

    #[test]
    fn wrap_is_the_json_macro_without_the_copy() {
        let Value::Object(row) = json!({"b": [1, {"c": null}], "a": "x\u{e9}"}) else {
            unreachable!()
        };
        assert_eq!(wrap("item", row.clone()), json!({ "item": row }));
        let items = vec![json!(1), json!({"z": 2.0})];
        let text = |v: &Value| crate::pyjson::dumps(v, crate::pyjson::Layout::Default);
        assert_eq!(
            text(&wrap("items", items.clone())),
            text(&json!({ "items": items }))
        );
    }

    #[test]
    fn an_output_with_shared_rows_reads_and_writes_as_its_value() {
        let layout = crate::state::Layout::new(
            crate::schema::parse(&[(
                "d.tables",
                "table items file=x/items id=id\n  id str\n  n int = 0\n  t str? = null\n",
            )])
            .unwrap(),
        );
        let mut state = crate::State::empty(layout);
        let ctx = crate::coerce::Ctx {
            now: "2020-01-01T00:00:00",
        };
        for (id, n) in [("a", 1), ("b\u{e9}\"", 2)] {
            state
                .insert("items", &json!({"id": id, "n": n}), ctx)
                .unwrap();
        }
        let rows = state.rows("items").unwrap();
        let shared = Output::Object(vec![
            (
                "items".into(),
                Output::List(vec![
                    Output::Row(rows.shared(0).unwrap()),
                    Output::Row(rows.shared(1).unwrap()),
                    Output::Value(json!([1.0, null])),
                ]),
            ),
            ("k\n".into(), Output::wrap("x", Output::Value(json!({})))),
        ]);
        let want =
            json!({"items": [rows[0].clone(), rows[1].clone(), [1.0, null]], "k\n": {"x": {}}});
        let mut text = String::new();
        shared.write_text(&mut text);
        let dumps = |v: &Value| crate::pyjson::dumps(v, crate::pyjson::Layout::Default);
        assert_eq!(text, dumps(&want));
        assert!(shared.is_object());
        assert_eq!(shared, want);
        let kept = rows.shared(0).unwrap();
        // A later write copies the row it changes: the shared one keeps what it showed.
        let mut state = state;
        state
            .replace("items", &json!({"id": "a", "n": 5}), ctx)
            .unwrap();
        assert_eq!(kept["n"], json!(1));
        assert_eq!(state.rows("items").unwrap()[0]["n"], json!(5));
        assert_eq!(shared.into_value(), want);
    }

    #[test]
    fn out_drops_nulls_in_order() {
        assert_eq!(
            serde_json::to_string(&out([
                ("b", json!(1)),
                ("a", Value::Null),
                ("c", json!("x"))
            ]))
            .unwrap(),
            r#"{"b":1,"c":"x"}"#
        );
    }
}
