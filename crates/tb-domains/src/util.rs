//! Small helpers the tool functions share.

use serde_json::{Map, Value};
use tb_sandbox::{Args, ToolError};

/// A string argument (validated by the input model, so absent only when optional).
pub fn arg_str<'a>(a: &'a Args, name: &str) -> Option<&'a str> {
    a.get(name).and_then(Value::as_str)
}

/// A required string argument.
pub fn req_str<'a>(a: &'a Args, name: &str) -> Result<&'a str, ToolError> {
    arg_str(a, name).ok_or_else(|| ToolError::new(format!("{name} is required")))
}

/// `model_dump(mode="json", exclude_none=True)` on one model level: drops null fields.
pub fn exclude_none(m: &Map<String, Value>) -> Value {
    Value::Object(
        m.iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    )
}

/// An output model's `model_dump(exclude_none=True)` from its (field, value) pairs: the fields
/// in order, null values left out.
pub fn out<'a>(pairs: impl IntoIterator<Item = (&'a str, Value)>) -> Value {
    Value::Object(
        pairs
            .into_iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}
