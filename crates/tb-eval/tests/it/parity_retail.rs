//! Full parity of the `sandbox_external_retail` server with the reference, retail: replaying every
//! recorded golden trace gives each call's exact result, the initial and final stable state,
//! the hash and the deep diff (`tb-bench-v1/traces/sandbox_external_retail*.jsonl`).

use crate::common;

#[tb_test_support::shared_test]
#[test]
fn retail_matches_the_reference() {
    common::assert_full_parity("sandbox_external_retail", 98);
}
