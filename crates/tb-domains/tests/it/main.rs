//! tb-domains' integration tests, one harness with a module per area.

mod odata;
mod schema;
mod tool_arg_errors;
