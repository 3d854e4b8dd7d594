//! tb-mcp's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod boundary;
mod client_parity;
mod common;
mod concurrency;
mod direct_calls;
mod hostile;
mod infer_remote;
mod own_servers;
mod python_sdk;
mod sdk_backend;
mod session_proxy;
