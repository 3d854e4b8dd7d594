//! Issue 2's proof that loader, coercion, hasher and differ are right before any tool exists:
//! for every trace, our initial stable state and hash, our hash of the golden state, and our
//! deep diff of initial vs golden equal the reference's.

mod common;

#[test]
fn retail_state_vectors() {
    common::assert_state_vectors("sandbox_external_retail");
}

#[test]
fn booking_state_vectors() {
    common::assert_state_vectors("external_booking_v1");
}

#[test]
fn auto_insurance_state_vectors() {
    common::assert_state_vectors("sandbox_auto_insurance");
}

#[test]
fn neobank_state_vectors() {
    common::assert_state_vectors("sandbox_neobank_support_v1");
}

#[test]
fn consulting_state_vectors() {
    common::assert_state_vectors("sandbox_consulting");
}
