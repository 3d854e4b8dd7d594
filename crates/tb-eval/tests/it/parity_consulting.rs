//! Full parity of the `sandbox_consulting` server with the reference, consulting: replaying every
//! recorded golden trace gives each call's exact result, the initial and final stable state,
//! the hash and the deep diff (`tb-bench-v1/traces/sandbox_consulting*.jsonl`).

use crate::common;

#[tb_test_support::shared_test]
#[test]
fn consulting_matches_the_reference() {
    common::assert_full_parity("sandbox_consulting", 101);
}
