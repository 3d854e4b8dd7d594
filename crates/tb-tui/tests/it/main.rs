//! tb-tui's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod app;
mod external;
