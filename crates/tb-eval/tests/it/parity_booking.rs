//! Full parity of the `external_booking_v1` server with the reference, booking (89 tasks and 15 rubric variants): replaying every
//! recorded golden trace gives each call's exact result, the initial and final stable state,
//! the hash and the deep diff (`tb-bench-v1/traces/external_booking_v1*.jsonl`).

use crate::common;

#[tb_test_support::shared_test]
#[test]
fn booking_matches_the_reference() {
    common::assert_full_parity("external_booking_v1", 104);
}
