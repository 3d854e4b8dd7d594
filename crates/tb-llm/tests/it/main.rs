//! tb-llm's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod client_mock;
mod decoder_props;
mod hostile_endpoint;
