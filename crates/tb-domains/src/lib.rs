//! tb-domains
