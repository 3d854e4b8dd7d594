//! tb-dataset
