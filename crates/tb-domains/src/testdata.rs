//! For unit tests: the shared benchmark folder, and sessions on a domain's initial data.

use serde_json::{Value, json};
use tb_sandbox::{Clock, Session};

/// A session of `server` on its initial data with `patch` applied, at `clock`. Panics if the
/// data is missing (call it from `#[tb_test_support::data_test]`s only), does not load or the
/// patch does not apply.
pub fn session(server: &str, patch: Value, clock: Clock) -> Session {
    let data = tb_test_support::data();
    let domain = crate::by_name(server)
        .expect("registry")
        .unwrap_or_else(|| panic!("no domain {server}"));
    let loaded = domain
        .load(&crate::toolslib(&data))
        .expect("initial data loads");
    loaded
        .session(&json!({ "data_patch": patch }), clock)
        .expect("patch applies")
}

/// Calls a tool and returns its JSON (the result, or `{"error", "tool"}`).
pub fn call(s: &mut Session, tool: &str, args: Value) -> Value {
    s.call(tool, &args).to_json(tool)
}

/// The error text of a call, or a panic with the unexpected result.
pub fn err(s: &mut Session, tool: &str, args: Value) -> String {
    let v = call(s, tool, args);
    match v.get("error").and_then(Value::as_str) {
        Some(e) => e.to_string(),
        None => panic!("expected an error from {tool}, got {v}"),
    }
}
