//! For unit tests: the shared benchmark folder, and sessions on a domain's initial data.

use serde_json::{Value, json};
use std::path::PathBuf;
use tb_sandbox::{Clock, Session};

/// The shared folder (`$TB_SHARED`, else `shared` beside the workspace) when it holds `marker`
/// (a path inside it). None, loudly, when it does not; a panic in CI.
pub fn shared(marker: &str) -> Option<PathBuf> {
    let p = std::env::var_os("TB_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"));
    if p.join(marker).exists() {
        return Some(p);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "benchmark data not found at {} (set TB_SHARED)",
        p.display()
    );
    eprintln!(
        "SKIPPED: benchmark data not found at {}; set TB_SHARED",
        p.display()
    );
    None
}

/// A session of `server` on its initial data with `patch` applied, at `clock`; None (loudly)
/// when the data is missing. Panics if the data does not load or the patch does not apply.
pub fn session(server: &str, patch: Value, clock: Clock) -> Option<Session> {
    let data = shared("thinkingbox-data/servers")?.join("thinkingbox-data");
    let domain = crate::by_name(server)
        .expect("registry")
        .unwrap_or_else(|| panic!("no domain {server}"));
    let loaded = domain
        .load(&crate::toolslib(&data))
        .expect("initial data loads");
    Some(
        loaded
            .session(&json!({ "data_patch": patch }), clock)
            .expect("patch applies"),
    )
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
