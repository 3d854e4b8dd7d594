//! tb-net's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod slow_clients;
