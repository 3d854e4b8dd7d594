//! tb-metrics's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod props;
mod reference_parity;
mod snapshots_tables;
