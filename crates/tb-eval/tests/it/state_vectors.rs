//! Issue 2's proof that loader, coercion, hasher and differ are right before any tool exists:
//! for every trace, our initial stable state and hash, our hash of the golden state, and our
//! deep diff of initial vs golden equal the reference's.

use crate::common;

/// One shared-data test per domain: `name` checks the state vectors of `domain`.
macro_rules! state_vectors_tests {
    ($($name:ident: $domain:literal,)*) => {$(
        #[tb_test_support::shared_test]
        #[test]
        fn $name() {
            common::assert_state_vectors($domain);
        }
    )*};
}

state_vectors_tests! {
    retail_state_vectors: "sandbox_external_retail",
    booking_state_vectors: "external_booking_v1",
    auto_insurance_state_vectors: "sandbox_auto_insurance",
    neobank_state_vectors: "sandbox_neobank_support_v1",
    consulting_state_vectors: "sandbox_consulting",
}
