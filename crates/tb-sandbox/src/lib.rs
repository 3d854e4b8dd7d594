//! tb-sandbox
