//! tb-pysurface's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod fixtures;
mod reference_surface;
