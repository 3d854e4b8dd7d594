//! tb-eval
