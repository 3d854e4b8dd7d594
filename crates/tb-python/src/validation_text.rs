//! The text of a pydantic (2.14) `ValidationError`: `N validation error(s) for <model>`, then
//! per error its location, message, `[type=..., input_value=..., input_type=...]` (the value's
//! repr shortened as pydantic-core shortens it) and the documentation link.

use crate::repr::{truncate_repr, type_name, value_repr};
use serde_json::Value;

/// Where pydantic 2.14 documents its error types (`<URL><type>`).
pub const DOCS_URL: &str = "https://errors.pydantic.dev/2.14/v/";

/// One error: `(location, message, error type, the input)`.
pub type FieldError<'a> = (&'a str, &'a str, &'a str, &'a Value);

/// `str(ValidationError)` for `model`'s errors.
pub fn validation_error_text(model: &str, errors: &[FieldError<'_>]) -> String {
    let n = errors.len();
    let mut out = format!(
        "{n} validation error{} for {model}",
        if n == 1 { "" } else { "s" }
    );
    for (loc, msg, ty, input) in errors {
        out.push_str(&format!(
            "\n{loc}\n  {msg} [type={ty}, input_value={}, input_type={}]\n    For further information visit {DOCS_URL}{ty}",
            truncate_repr(&value_repr(input)),
            type_name(input)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn texts_of_pydantic() {
        assert_eq!(
            validation_error_text(
                "ToolCall",
                &[(
                    "arguments",
                    "Input should be a valid dictionary",
                    "dict_type",
                    &json!(null)
                )]
            ),
            "1 validation error for ToolCall\narguments\n  Input should be a valid dictionary [type=dict_type, input_value=None, input_type=NoneType]\n    For further information visit https://errors.pydantic.dev/2.14/v/dict_type"
        );
        let list = json!([{"type": "text", "text": "Everything is taken care of. <DONE>"}]);
        let two = validation_error_text(
            "Text",
            &[
                (
                    "content",
                    "Input should be a valid string",
                    "string_type",
                    &list,
                ),
                (
                    "role",
                    "Input should be 'system', 'user' or 'assistant'",
                    "literal_error",
                    &json!(1),
                ),
            ],
        );
        assert!(two.starts_with("2 validation errors for Text\ncontent\n  Input should be a valid string [type=string_type, input_value=[{'type': 'text', 'text':...taken care of. <DONE>'}], input_type=list]\n"));
        assert!(two.ends_with("[type=literal_error, input_value=1, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/literal_error"));
    }
}
