//! Sessions on the real initial data for the unit tests.

use serde_json::{Value, json};
use std::path::PathBuf;
use tb_sandbox::{Clock, Session};

/// The shared data folder (`$TB_SHARED`, else `../shared` beside the workspace). None, loudly,
/// when missing outside CI; a panic in CI.
pub fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("TB_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    if p.join("thinkingbox-data/servers").is_dir() {
        return Some(p);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "benchmark data not found at {} (set TB_SHARED)",
            p.display()
        );
    }
    eprintln!(
        "SKIPPED: benchmark data not found at {}; set TB_SHARED",
        p.display()
    );
    None
}

/// A fresh neobank session on the initial data with `patch` applied.
pub fn session(patch: Value) -> Option<Session> {
    let shared = shared()?;
    let d = crate::by_name(super::SERVER).ok()??;
    let loaded = d
        .load(&crate::toolslib(&shared.join("thinkingbox-data")))
        .ok()?;
    loaded
        .session(&json!({ "data_patch": patch }), Clock::default())
        .ok()
}

/// Calls a tool and returns its JSON result (or error shape).
pub fn call(s: &mut Session, tool: &str, args: Value) -> Value {
    s.call(tool, &args).to_json(tool)
}

/// The error text of a call, or panics if it succeeded.
pub fn err(s: &mut Session, tool: &str, args: Value) -> String {
    let v = call(s, tool, args);
    v.get("error")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| panic!("{tool} succeeded: {v}"))
}
