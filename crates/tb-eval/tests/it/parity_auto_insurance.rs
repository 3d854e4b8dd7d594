//! Full parity of the `sandbox_auto_insurance` server with the reference, auto insurance: replaying every
//! recorded golden trace gives each call's exact result, the initial and final stable state,
//! the hash and the deep diff (`tb-bench-v1/traces/sandbox_auto_insurance*.jsonl`).

use crate::common;

#[tb_test_support::shared_test]
#[test]
fn auto_insurance_matches_the_reference() {
    common::assert_full_parity("sandbox_auto_insurance", 100);
}
