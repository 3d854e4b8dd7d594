//! tb-sandbox's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod deep_json;
mod order_independence;
mod prepared_parity;
mod pydantic_coercion;
mod stable_parity;
mod traces;
