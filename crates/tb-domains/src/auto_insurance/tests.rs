//! The auto insurance tools called on the initial data (a patch where a case needs one), one
//! module per toolset: the replies and error texts the reference gives.

use super::testutil::*;
use serde_json::json;

#[test]
fn ids_are_sha256_prefixes() {
    assert_eq!(super::hash_id("VEH-2-", "abc", 8), "VEH-2-BA7816BF");
    assert_eq!(super::hash_id("CLM-2", "abc", 9), "CLM-2BA7816BF8");
}

#[test]
fn inputs_are_validated_by_their_models() {
    let mut s = session(book());
    calls!(s;
        "policy_get_policy_details" {} => error "Tool execution failed: Input validation failed: policy_id: Field required";
        "policy_update_vehicle_status" {"vehicle_id": "VEH-1", "new_status": "Gone", "effective_date": "x"} => error "Tool execution failed: Input validation failed: new_status: Input should be 'Active' or 'Removed'";
    );
    // Input models ignore unknown keys, except the search's, which forbids them.
    assert!(
        s.call(
            "policy_get_policy_details",
            &json!({"policy_id": "POL-1", "x": 1})
        )
        .is_ok()
    );
    calls!(s;
        "knowledge_base_search_policy" {"query": "q", "x": 1} => error "Tool execution failed: Input validation failed: x: Extra inputs are not permitted";
    );
    // The search itself is the shared policy search (no sources here, so no hits).
    let r = ok(
        &mut s,
        "knowledge_base_search_policy",
        json!({"query": "q", "max_results": null}),
    );
    assert!(r["snippets"].is_array(), "{r}");
}

mod billing {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn unknown_policy_has_no_account() {
        let mut s = session(book());
        for tool in [
            "billing_get_account_details",
            "billing_get_arrangement_history",
            "billing_grant_extension",
            "billing_reset_account_status",
            "billing_create_installment_plan",
        ] {
            let args = json!({"policy_id": "POL-X", "new_due_date": "2025-01-01", "installment_count": 2, "installment_amount": 100});
            assert_eq!(
                err(&mut s, tool, args),
                "Tool execution failed: No billing account found for policy_id 'POL-X'.",
                "{tool}"
            );
        }
    }

    #[test]
    fn arrangements_count_up_and_reset_clears() {
        let mut s = session(book());
        let r = ok(
            &mut s,
            "billing_create_installment_plan",
            json!({"policy_id": "POL-1", "installment_count": "3", "installment_amount": 8000}),
        );
        assert_eq!(
            r,
            json!({"billing_account_id": "BA-1", "arrangements_12_months": 2})
        );
        let r = ok(
            &mut s,
            "billing_grant_extension",
            json!({"policy_id": "POL-1", "new_due_date": "2025-07-01"}),
        );
        assert_eq!(r["arrangements_12_months"], 3);
        let row = crate::testdata::stored(&s, "billing_billing_accounts", &json!("BA-1"));
        assert_eq!(
            (
                row["installment_count"].clone(),
                row["current_due_date"].clone()
            ),
            (json!(null), json!("2025-07-01"))
        );
        calls!(s;
            "billing_get_arrangement_history" {"policy_id": "POL-1"} => {"arrangements_12_months": 3};
        );
        let r = ok(
            &mut s,
            "billing_reset_account_status",
            json!({"policy_id": "POL-1"}),
        );
        assert_eq!(
            r,
            json!({"billing_account_id": "BA-1", "status": "Current"})
        );
        let d = ok(
            &mut s,
            "billing_get_account_details",
            json!({"policy_id": "POL-1"}),
        );
        assert_eq!(
            (d["past_due_amount"].clone(), d["arrangement_type"].clone()),
            (json!(0), json!("None"))
        );
        calls!(s;
            "billing_create_installment_plan" {"policy_id": "POL-1", "installment_count": 2.5, "installment_amount": 1} => error "Tool execution failed: Input validation failed: installment_count: Input should be a valid integer, got a number with a fractional part";
        );
    }
}

mod claims {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn unknown_ids() {
        let mut s = session(book());
        calls!(s;
            "claims_check_open_major_claims" {"policy_id": "P"} => error "Tool execution failed: Policy 'P' not found.";
            "claims_get_policy_claims" {"policy_id": "P"} => error "Tool execution failed: Policy 'P' not found.";
            "claims_get_driver_claims" {"driver_id": "D"} => error "Tool execution failed: Driver 'D' not found.";
            "claims_get_vehicle_claims" {"vehicle_id": "V"} => error "Tool execution failed: Vehicle 'V' not found.";
            "claims_create_fnol" {"policy_id": "P", "date_of_loss": "2025-01-01", "loss_location": "x", "claim_type": "Liability Only", "severity": "Minor"} => error "Tool execution failed: Policy 'P' not found.";
        );
    }

    #[test]
    fn fnol_is_idempotent_on_its_hash_id() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "vehicle_id": "", "vehicle_vin": "VIN9", "date_of_loss": "2025-08-01", "loss_location": "SF", "claim_type": "Comprehensive – Theft", "severity": "Minor"});
        let r = ok(&mut s, "claims_create_fnol", args.clone());
        let id = super::super::hash_id("CLM-2", "POL-1_2025-08-01_VIN9", 9);
        assert_eq!(
            r,
            json!({"claim_id": id, "claim_stage": "Open – Initial Review"})
        );
        calls!(s;
            "claims_create_fnol" args => r;
        );
        assert_eq!(s.state.count("claims_claims").unwrap(), 2);
        let row = s.state.get("claims_claims", &json!(id)).unwrap().unwrap();
        assert_eq!(
            (
                row["siu_flag"].clone(),
                row["created_date"].clone(),
                row["vehicle_id"].clone()
            ),
            (json!("None"), json!("2025-08-01"), json!(""))
        );
        assert!(err(&mut s, "claims_create_fnol", json!({"policy_id": "POL-1", "date_of_loss": "d", "loss_location": "x", "claim_type": "Collision", "severity": "Minor"})).contains("claim_type: Input should be"));
    }

    #[test]
    fn lists_and_month_window() {
        let mut s = session(book());
        calls!(s;
            "claims_check_open_major_claims" {"policy_id": "POL-1"} => {"has_major_claim": true, "major_claim_count": 1};
        );
        let r = ok(
            &mut s,
            "claims_get_driver_claims",
            json!({"driver_id": "DRV-1", "open_only": true}),
        );
        assert_eq!(
            (
                r["claims"][0]["claim_id"].clone(),
                r["has_open_claims"].clone()
            ),
            (json!("CLM-1000000001"), json!(true))
        );
        assert_eq!(
            ok(
                &mut s,
                "claims_get_vehicle_claims",
                json!({"vehicle_id": "VEH-1", "open_only": null})
            )["claims"]
                .as_array()
                .unwrap()
                .len(),
            1
        );
        ok(
            &mut s,
            "claims_create_fnol",
            json!({"policy_id": "POL-1", "date_of_loss": "2025-09-30", "loss_location": "x", "claim_type": "Liability Only", "severity": "Minor"}),
        );
        // Latest created_date is 2025-09-30; one month back is 2025-08-31.
        assert_eq!(
            ok(
                &mut s,
                "claims_get_policy_claims",
                json!({"policy_id": "POL-1", "months_back": 1})
            )["total_count"],
            1
        );
        assert_eq!(
            ok(
                &mut s,
                "claims_get_policy_claims",
                json!({"policy_id": "POL-1", "months_back": 0})
            )["total_count"],
            2
        );
        ok(
            &mut s,
            "claims_create_fnol",
            json!({"policy_id": "POL-1", "date_of_loss": "2025-10-01T08:00", "loss_location": "x", "claim_type": "Liability Only", "severity": "Minor"}),
        );
        calls!(s;
            "claims_get_policy_claims" {"policy_id": "POL-1", "months_back": 1} => error "Tool execution failed: unconverted data remains: T08:00";
        );
    }
}

mod crm {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn lookups_and_errors() {
        let mut s = session(book());
        calls!(s;
            "crm_get_customer_by_email" {"email": "ann.LEE@example.com"} => {"customer_id": "CUS-1", "first_name": "Ann", "last_name": "Lee"};
            "crm_get_customer_by_email" {"email": "x@y"} => error "Tool execution failed: No customer found with email 'x@y'";
            "crm_get_customer_profile" {"customer_id": "C"} => error "Tool execution failed: Customer with ID 'C' not found";
        );
        let p = ok(
            &mut s,
            "crm_get_customer_profile",
            json!({"customer_id": "CUS-1"}),
        );
        assert_eq!(
            (p["has_ssn_on_file"].clone(), p["tier"].clone()),
            (json!(true), json!("Standard"))
        );
        assert!(p.get("phone").is_none() && p.get("security_answer").is_none());
        assert_eq!(p["security_question"], "Pet?");
    }

    #[test]
    fn verification_prefers_ssn_and_needs_a_credential() {
        let mut s = session(book());
        calls!(s;
            "crm_verify_identity" {"customer_id": "NOPE", "ssn_last_4": ""} => error "Tool execution failed: Must provide either ssn_last_4 or security_answer for verification";
            "crm_verify_identity" {"customer_id": "C", "ssn_last_4": "1"} => error "Tool execution failed: Customer with ID 'C' not found";
            "crm_verify_identity" {"customer_id": "CUS-1", "ssn_last_4": "9999", "security_answer": "fluffy"} => {"verified": false, "verification_method": "ssn"};
            "crm_verify_identity" {"customer_id": "CUS-1", "security_answer": "FLUFFY"} => {"verified": true, "verification_method": "security_question"};
        );
    }
}

mod lookup {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn decodes_and_rejects() {
        let mut s = session(json!({}));
        calls!(s;
            "lookup_validate_vin" {"vin": " 1hgcm82633a123456 "} => {"valid": true, "make": "Honda", "model": "Accord"};
            "lookup_validate_vin" {"vin": "2HGFC2F59LH000000"} => {"valid": true, "year": 2020, "make": "Honda Canada"};
            "lookup_validate_vin" {"vin": "ZZZZZZZZZAZZZZZZZ"} => {"valid": true, "year": 2010};
            "lookup_validate_vin" {"vin": "123"} => error "Tool execution failed: Invalid VIN format. VIN must be exactly 17 characters.";
            "lookup_validate_vin" {"vin": "1HGCM82633A12345-"} => error "Tool execution failed: Invalid VIN format. VIN must contain only letters and numbers.";
            "lookup_validate_vin" {"vin": 5} => error "Tool execution failed: Input validation failed: vin: Input should be a valid string";
        );
    }
}

mod policy {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn unknown_ids_fail_as_the_reference() {
        let mut s = session(book());
        calls!(s;
            "policy_get_policy_details" {"policy_id": "POL-X"} => error "Tool execution failed: Policy with ID 'POL-X' not found";
            "policy_get_vehicle_details" {"vehicle_id": "VEH-X"} => error "Tool execution failed: Vehicle with ID 'VEH-X' not found";
            "policy_update_driver_status" {"driver_id": "D", "new_status": "Removed", "effective_date": "2025-01-01"} => error "Tool execution failed: Driver with ID 'D' not found";
        );
    }

    #[test]
    fn details_drop_null_fields() {
        let mut s = session(book());
        let r = ok(
            &mut s,
            "policy_get_policy_details",
            json!({"policy_id": "POL-1"}),
        );
        assert_eq!(r["status"], "Cancelled for Non-Payment");
        assert!(r.get("co_insured_id").is_none());
        assert!(r.get("lapse_start").is_none());
        assert_eq!(r["automatic_extension_days"], 14);
    }

    #[test]
    fn add_vehicle_is_hash_keyed_and_refuses_a_vin_twice() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "vin": "5YJ3E1EA7KF000001", "year": "2019", "make": "Tesla", "model": "3", "effective_date": "2025-05-05"});
        let r = ok(&mut s, "policy_add_vehicle", args.clone());
        let id = super::super::hash_id("VEH-2-", "POL-1_5YJ3E1EA7KF000001", 8);
        assert_eq!(r, json!({"vehicle_id": id}));
        let row = s.state.get("policy_vehicles", &json!(id)).unwrap().unwrap();
        assert_eq!(row["year"], json!(2019));
        assert_eq!(row["uw_pending"], json!(false));
        assert_eq!(row["date_added_to_policy"], json!("2025-05-05"));
        calls!(s;
            "policy_add_vehicle" args => error "Tool execution failed: VIN '5YJ3E1EA7KF000001' already exists on this policy";
            "policy_add_vehicle" {"policy_id": "POL-1", "vin": "V", "make": "x", "model": "y", "effective_date": "z"} => error "Tool execution failed: Input validation failed: year: Field required";
        );
    }

    #[test]
    fn add_driver_refuses_same_name_and_birth_date() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "name": "Bo Lee", "date_of_birth": "2008-01-01", "relationship": "Son", "status": "Excluded", "effective_date": "2025-05-05", "uw_pending": null});
        let r = ok(&mut s, "policy_add_driver", args.clone());
        assert_eq!(r["status"], "Excluded");
        let row = crate::testdata::stored(&s, "policy_drivers", &r["driver_id"]);
        assert_eq!(row["uw_pending"], json!(false));
        assert_eq!(row["customer_id"], json!(null));
        calls!(s;
            "policy_add_driver" args => error "Tool execution failed: Driver with name 'Bo Lee' and DOB '2008-01-01' already exists on this policy";
            "policy_add_driver" {"policy_id": "POL-9", "name": "A", "date_of_birth": "1", "relationship": "r", "status": "Rated", "effective_date": "e"} => error "Tool execution failed: Policy with ID 'POL-9' not found";
        );
    }

    #[test]
    fn document_links_use_the_enum_member_name_and_are_idempotent() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "document_type": "id_card", "ticket_id": "7", "expiration_date": "2025-12-01T00:00:00Z"});
        let r = ok(&mut s, "policy_generate_document_link", args.clone());
        assert_eq!(
            r["document_id"],
            json!(super::super::hash_id(
                "DOC-2-",
                "POL-1_DocumentType.ID_CARD_7",
                8
            ))
        );
        assert_eq!(
            r["url"],
            "https://portal.horizonshield.com/docs/secure/POL-1_id_card_7"
        );
        calls!(s;
            "policy_generate_document_link" args => r;
        );
        assert_eq!(s.state.count("policy_policy_documents").unwrap(), 1);
        calls!(s;
            "policy_generate_document_link" {"policy_id": "POL-1", "document_type": "id_card", "ticket_id": "7", "expiration_date": "next week"} => error "Tool execution failed: Invalid expiration_date format: 'next week'. Expected ISO 8601 format (e.g., '2024-01-16T10:05:00Z')";
        );
        assert!(err(&mut s, "policy_generate_document_link", json!({"policy_id": "POL-1", "document_type": "pdf", "ticket_id": "7", "expiration_date": "x"})).contains("document_type: Input should be 'proof_of_insurance', 'declarations_page' or 'id_card'"));
    }

    #[test]
    fn an_existing_hash_id_is_returned_as_is() {
        // A row already holding the id the inputs hash to (but another VIN) is returned, not duplicated.
        let id = super::super::hash_id("VEH-2-", "POL-1_NEWVIN", 8);
        let mut book = book();
        let mut other = book["policy_vehicles"][0].clone();
        other["id"] = json!(id);
        other["vin"] = json!("OTHERVIN");
        book["policy_vehicles"].as_array_mut().unwrap().push(other);
        let mut s = session(book);
        let args = json!({"policy_id": "POL-1", "vin": "NEWVIN", "year": 2020, "make": "m", "model": "m", "effective_date": "2025-01-01"});
        calls!(s;
            "policy_add_vehicle" args => {"vehicle_id": id};
        );
        assert_eq!(s.state.count("policy_vehicles").unwrap(), 2);
    }

    #[test]
    fn status_changes_and_reinstatement() {
        let mut s = session(book());
        let r = ok(
            &mut s,
            "policy_reinstate_policy",
            json!({"policy_id": "POL-1", "lapse_flag": true, "lapse_start": "2025-06-01", "lapse_end": "2025-06-03"}),
        );
        assert_eq!(
            r,
            json!({"policy_id": "POL-1", "status": "Active", "lapse_flag": true})
        );
        let p = crate::testdata::stored(&s, "policy_policies", &json!("POL-1"));
        assert_eq!(p["cancellation_reason"], json!(null));
        assert_eq!(p["lapse_end"], json!("2025-06-03"));
        ok(
            &mut s,
            "policy_schedule_cancellation",
            json!({"policy_id": "POL-1", "cancellation_date": "2025-07-01", "cancellation_reason": "Fraud"}),
        );
        assert_eq!(
            s.state
                .get("policy_policies", &json!("POL-1"))
                .unwrap()
                .unwrap()["status"],
            json!("Pending Cancellation")
        );
        ok(
            &mut s,
            "policy_update_vehicle_status",
            json!({"vehicle_id": "VEH-1", "new_status": "Removed", "effective_date": "2025-07-02"}),
        );
        let v = crate::testdata::stored(&s, "policy_vehicles", &json!("VEH-1"));
        assert_eq!(
            (
                v["status"].clone(),
                v["removal_date"].clone(),
                v["effective_date"].clone()
            ),
            (json!("Removed"), json!("2025-07-02"), json!("2025-01-01"))
        );
        ok(
            &mut s,
            "policy_update_driver_status",
            json!({"driver_id": "DRV-1", "new_status": "Removed", "effective_date": "2025-07-03"}),
        );
        let d = crate::testdata::stored(&s, "policy_drivers", &json!("DRV-1"));
        assert_eq!(
            (d["removal_date"].clone(), d["effective_date"].clone()),
            (json!("2025-07-03"), json!("2025-07-03"))
        );
        assert_eq!(
            ok(
                &mut s,
                "policy_get_policy_drivers",
                json!({"policy_id": "POL-1", "active_only": true})
            )["driver_count"],
            0
        );
        assert_eq!(
            ok(
                &mut s,
                "policy_get_policy_vehicles",
                json!({"policy_id": "POL-1"})
            )["vehicle_count"],
            1
        );
    }
}
