//! Python semantics, in one place: what CPython 3.11 (and pydantic's JSON dump, where noted)
//! writes or decides for the values tb handles. Every crate that needs a Python rule takes it
//! from here; no other crate re-implements one.
//!
//! - [`float`]: `repr(float)` and the float text of `json.dumps`.
//! - [`repr`]: `repr()`/`str()` of strings and JSON-loaded values, type names, pydantic's
//!   shortening of long reprs.
//! - [`json_error`]: the error texts of `json.loads`.
//! - [`validation_text`]: the text of a pydantic `ValidationError`.
//! - [`json`]: `json.dumps` (layouts, separators, indent, `ensure_ascii`) into any [`json::Sink`].
//! - [`cmp`]: `==` and `<` of JSON-loaded values, with Python's `TypeError` text.
//! - [`decimal`]: `Decimal(text)`, `str(Decimal)` and the arithmetic the tools use.
//! - [`datetime`]: `datetime`/`date` parsing (`fromisoformat`, `strptime`), formatting and
//!   arithmetic, with CPython's error texts.

pub mod cmp;
pub mod datetime;
pub mod decimal;
pub mod float;
pub mod json;
pub mod json_error;
pub mod repr;
pub mod validation_text;

pub use cmp::{py_eq, py_order};
pub use float::{float_repr, json_float};
pub use repr::{py_str, str_repr, type_name, value_repr};
