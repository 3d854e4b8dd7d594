//! tb-external's integration tests, one harness with a module per area.

mod hostile_stdio;
mod pool;
mod sse_fake;
mod sse_python;
mod stdio_health;

/// The error of calling `tool` (no arguments) on `conn` within `budget`, which must fail.
async fn failed_call(
    conn: &tb_external::ServerConn,
    tool: &str,
    budget: std::time::Duration,
) -> String {
    conn.call(tool, serde_json::Map::new(), budget)
        .await
        .unwrap_err()
        .to_string()
}
