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

/// Plays a transcript of tool calls on the session `s`, in order, each line a call and what it
/// must answer: `"tool" {args} => {result};` (the JSON `call` gives) or
/// `"tool" {args} => error "text";` (the error text; any `&str` expression). Arguments and
/// results are `json!` bodies; a variable or a parenthesized expression also serves.
macro_rules! calls {
    ($s:ident;) => {};
    ($s:ident; $tool:literal $args:tt => error $text:expr; $($rest:tt)*) => {
        $crate::testdata::expect_err(&mut $s, $tool, serde_json::json!($args), &$text);
        calls!($s; $($rest)*);
    };
    ($s:ident; $tool:literal $args:tt => $want:tt; $($rest:tt)*) => {
        $crate::testdata::expect_ok(&mut $s, $tool, serde_json::json!($args), serde_json::json!($want));
        calls!($s; $($rest)*);
    };
}

/// One line of [`calls!`]: `tool` called with `args` answers `want`.
pub fn expect_ok(s: &mut Session, tool: &str, args: Value, want: Value) {
    let got = call(s, tool, args.clone());
    assert_eq!(got, want, "{tool} {args}");
}

/// One line of [`calls!`]: `tool` called with `args` fails with the text `want`.
pub fn expect_err(s: &mut Session, tool: &str, args: Value, want: &str) {
    let got = call(s, tool, args.clone());
    assert_eq!(
        got.get("error").and_then(Value::as_str),
        Some(want),
        "{tool} {args}: {got}"
    );
}

/// The stored row of `table` whose id is `id` (a panic if there is none).
pub fn stored(s: &Session, table: &str, id: &Value) -> tb_sandbox::Row {
    match s.state.get(table, id) {
        Ok(Some(row)) => row.clone(),
        other => panic!("no row {id} in {table}: {other:?}"),
    }
}

/// The last row of `table` (a panic if it is empty).
pub fn last_row(s: &Session, table: &str) -> tb_sandbox::Row {
    let rows = s.state.rows(table).expect("table");
    rows.iter().next_back().expect("a row").clone()
}
