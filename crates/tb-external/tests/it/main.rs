//! tb-external's integration tests, one harness with a module per area.

mod hostile_stdio;
mod pool;
mod sse_fake;
mod sse_python;
mod stdio_health;
