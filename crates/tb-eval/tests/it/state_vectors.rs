//! Issue 2's proof that loader, coercion, hasher and differ are right before any tool exists:
//! for every trace, our initial stable state and hash, our hash of the golden state, and our
//! deep diff of initial vs golden equal the reference's.

use crate::common;

#[tb_test_support::shared_test]
#[test]
fn retail_state_vectors() {
    common::assert_state_vectors("sandbox_external_retail");
}

#[tb_test_support::shared_test]
#[test]
fn booking_state_vectors() {
    common::assert_state_vectors("external_booking_v1");
}

#[tb_test_support::shared_test]
#[test]
fn auto_insurance_state_vectors() {
    common::assert_state_vectors("sandbox_auto_insurance");
}

#[tb_test_support::shared_test]
#[test]
fn neobank_state_vectors() {
    common::assert_state_vectors("sandbox_neobank_support_v1");
}

#[tb_test_support::shared_test]
#[test]
fn consulting_state_vectors() {
    common::assert_state_vectors("sandbox_consulting");
}
