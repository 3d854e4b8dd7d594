//! tb-audit's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod v1;
mod weak_check;
