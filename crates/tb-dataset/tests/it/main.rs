//! tb-dataset's integration tests, one harness (one binary to build and link) with a module per
//! area.

mod bench_v1;
mod errors;
mod one_task;
mod props;
mod py_structure;
mod pyyaml_corpus;
