//! tb-openenv's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod adapter_server_suite;
mod common;
mod external_servers;
mod python_client;
mod reset_paths;
mod thinkingbox_eval;
mod ws_protocol;
