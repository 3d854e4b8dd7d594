//! The text of a pydantic `ValidationError` (`str(exc)`), as the reference's servers show it:
//! a `N validation error(s) for <title>` header, then per error its dotted location, its
//! message with `[type=…, input_value=…, input_type=…]`, and the line pointing at pydantic's
//! documentation of the error type. The servers pin pydantic 2.14 (`2.14.4`), whose URLs carry
//! the minor version.
//!
//! The text itself is `tb_python::validation_text` (which the model clients' reply decoders use
//! too); this module is what every server builds it from: the v1 domains' row models (zendesk),
//! the airline's and the setup-check servers' tool arguments. Errors come either from [`tb_sandbox::coerce`] (turned
//! into [`ErrorLine`]s by [`from_coerce`], which names the error type and finds the offending
//! input) or from a server's own argument check, which builds [`ErrorLine`]s itself.

use serde_json::Value;
use tb_sandbox::coerce::ValidationError;

/// Where pydantic 2.14 documents its error types (`<URL><type>`).
pub const URL: &str = tb_python::validation_text::DOCS_URL;

/// One error of a validation, as `str(exc)` prints it.
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorLine {
    /// The dotted location (`flights.0.date`).
    pub loc: String,
    /// pydantic's message.
    pub msg: String,
    /// pydantic's error type (`string_type`, `missing`, ...).
    pub kind: &'static str,
    /// The value the error is about (for a missing field: the object it is missing from).
    pub input: Value,
}

impl ErrorLine {
    /// An error at a top-level `loc`.
    pub fn new(
        loc: impl Into<String>,
        msg: impl Into<String>,
        kind: &'static str,
        input: Value,
    ) -> Self {
        ErrorLine {
            loc: loc.into(),
            msg: msg.into(),
            kind,
            input,
        }
    }
}

/// `str(ValidationError)` for a model titled `title` (a class name, `<function>Arguments`, or
/// fastmcp's `call[<tool>]`).
pub fn text(title: &str, errors: &[ErrorLine]) -> String {
    let fields: Vec<tb_python::validation_text::FieldError<'_>> = errors
        .iter()
        .map(|e| (e.loc.as_str(), e.msg.as_str(), e.kind, &e.input))
        .collect();
    tb_python::validation_text::validation_error_text(title, &fields)
}

/// What a `Kind::Enum` of the model stands for in Python: a `Literal[...]` (error type
/// `literal_error`) or an `Enum` class (`enum`). The message is the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Choices {
    /// `Literal["a", "b"]`.
    Literal,
    /// `class E(Enum)`.
    Enum,
}

/// The messages of [`tb_sandbox::coerce`] that are whole and their pydantic error types.
const EXACT: &[(&str, &str)] = &[
    ("Field required", "missing"),
    ("Extra inputs are not permitted", "extra_forbidden"),
    ("Input should be a valid string", "string_type"),
    ("Input should be a valid boolean", "bool_type"),
    ("Input should be a valid list", "list_type"),
    ("Input should be a valid integer", "int_type"),
    ("Input should be a valid number", "float_type"),
    ("Input should be a valid datetime", "datetime_type"),
    ("Input should be a valid date", "date_type"),
];

/// The beginnings of the messages that carry a detail, in the order they are told apart (the
/// first that matches wins), and their error types.
const PREFIXED: &[(&str, &str)] = &[
    ("Input should be a valid boolean,", "bool_parsing"),
    (
        "Input should be a valid integer, got a number with a fractional part",
        "int_from_float",
    ),
    ("Input should be a valid integer,", "int_parsing"),
    (
        "Unable to parse input string as an integer, exceeded maximum size",
        "int_parsing_size",
    ),
    ("Input should be a finite number", "finite_number"),
    ("Input should be a valid number,", "float_parsing"),
    (
        "Input should be a valid datetime or date,",
        "datetime_from_date_parsing",
    ),
    ("Input should be a valid datetime,", "datetime_parsing"),
    ("Input should be a valid date,", "date_parsing"),
    ("String should have at least", "string_too_short"),
    ("String should have at most", "string_too_long"),
    ("String should match pattern", "string_pattern_mismatch"),
    ("List should have at least", "too_short"),
    ("List should have at most", "too_long"),
    (
        "Input should be greater than or equal to",
        "greater_than_equal",
    ),
    ("Input should be greater than", "greater_than"),
    ("Input should be less than or equal to", "less_than_equal"),
    ("Input should be less than", "less_than"),
    (
        "Input should be a valid dictionary or instance of",
        "model_type",
    ),
];

/// The pydantic error type behind one of [`tb_sandbox::coerce`]'s messages (`value`: the
/// offending input, when found).
pub fn error_type(msg: &str, value: Option<&Value>, choices: Choices) -> &'static str {
    let exact = EXACT.iter().find(|(m, _)| *m == msg);
    let prefixed = || PREFIXED.iter().find(|(p, _)| msg.starts_with(p));
    if let Some((_, kind)) = exact.or_else(prefixed) {
        return kind;
    }
    match msg {
        m if m.starts_with("Input should be a valid dictionary") => {
            // A row model given an object whose check failed as a whole.
            if value.is_some_and(Value::is_object) {
                "model_type"
            } else {
                "dict_type"
            }
        }
        m if m.starts_with("Input should be '") => match choices {
            Choices::Literal => "literal_error",
            Choices::Enum => "enum",
        },
        _ => "value_error",
    }
}

/// The value at `loc` under `root` (object keys and list indices).
fn at<'a>(root: &'a Value, loc: &[String]) -> Option<&'a Value> {
    loc.iter().try_fold(root, |v, k| match v {
        Value::Object(m) => m.get(k),
        Value::Array(items) => k.parse::<usize>().ok().and_then(|i| items.get(i)),
        _ => None,
    })
}

/// [`tb_sandbox::coerce`]'s errors of validating `input` as [`ErrorLine`]s: the error type
/// named, the input found by the location (a missing field's input is the object it is
/// missing from; a location through a union member's tag finds nothing and shows `None`).
pub fn from_coerce(errors: &[ValidationError], input: &Value, choices: Choices) -> Vec<ErrorLine> {
    errors
        .iter()
        .map(|e| {
            let value = if e.msg == "Field required" {
                at(
                    input,
                    e.loc
                        .get(..e.loc.len().saturating_sub(1))
                        .unwrap_or_default(),
                )
            } else {
                at(input, &e.loc)
            };
            ErrorLine {
                loc: e.loc.join("."),
                msg: e.msg.clone(),
                kind: error_type(&e.msg, value, choices),
                input: value.cloned().unwrap_or(Value::Null),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn header_counts_errors_and_long_inputs_are_cut_as_pydantic_cuts_them() {
        let long = "this is a rather long text that pydantic will cut in the middle for sure";
        let e = ErrorLine::new(
            "total_baggages",
            "Input should be a valid integer, unable to parse string as an integer",
            "int_parsing",
            json!(long),
        );
        assert_eq!(
            text(
                "update_reservation_baggagesArguments",
                std::slice::from_ref(&e)
            ),
            "1 validation error for update_reservation_baggagesArguments\ntotal_baggages\n  Input should be a valid integer, unable to parse string as an integer [type=int_parsing, input_value='this is a rather long te... in the middle for sure', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.14/v/int_parsing"
        );
        assert!(text("M", &[e.clone(), e]).starts_with("2 validation errors for M\n"));
    }

    #[test]
    fn a_missing_nested_field_shows_the_object_it_is_missing_from() {
        let input = json!({"flights": [{"flight_number": "HAT001"}]});
        let errors = [ValidationError {
            loc: vec!["flights".into(), "0".into(), "date".into()],
            msg: "Field required".into(),
        }];
        let lines = from_coerce(&errors, &input, Choices::Literal);
        assert_eq!(lines[0].loc, "flights.0.date");
        assert_eq!(lines[0].kind, "missing");
        assert_eq!(lines[0].input, json!({"flight_number": "HAT001"}));
    }
}
