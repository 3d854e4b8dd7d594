//! The booking tools called on the initial data (a patch where a case needs one), one
//! module per toolset: the replies and error texts the reference gives.

mod booking_api {
    use super::super::testing::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        calls!(s;
            "booking_api_get_booking" {} => error "Tool execution failed: Either booking_reference or customer_id must be provided";
            "booking_api_get_booking" {"booking_reference": "BKG-NOPE"} => error "Tool execution failed: Booking not found with booking_reference 'BKG-NOPE'";
            "booking_api_get_group_booking" {"group_booking_id": "GRP-X"} => error "Tool execution failed: Group booking not found with group_booking_id 'GRP-X'";
            "booking_api_modify_booking" {"booking_reference": "B", "room_type": "cave"} => error "Tool execution failed: Input validation failed: room_type: Input should be 'standard_room', 'deluxe_room', 'suite', 'executive_suite', 'presidential_suite', 'family_room' or 'accessible_room'";
            "booking_api_modify_booking" {"booking_reference": "B", "colour": "red"} => error "Tool execution failed: Input validation failed: colour: Extra inputs are not permitted";
            "booking_api_modify_group_booking" {"group_booking_id": "G"} => error "Tool execution failed: Input validation failed: modification_details: Field required; cascade_to_individual_bookings: Field required";
        );
        let args = json!({"hotel_id": "HTL-NOPE", "check_in_date": "2025-10-02", "check_out_date": "2025-10-01",
            "room_type": "suite", "board_type": "half_board", "adults_count": 1, "children_count": 0});
        calls!(s;
            "booking_api_check_hotel_availability" (args.clone()) => error "Tool execution failed: Hotel not found with hotel_id 'HTL-NOPE'";
            "booking_api_search_hotels_by_location" {"location": "x", "check_in_date": "soon", "check_out_date": "2025-10-01", "room_type": "suite", "board_type": "half_board", "adults_count": 1, "children_count": 0} => error "Tool execution failed: Invalid date format: Invalid isoformat string: 'soon'";
        );
        let mut a = args.as_object().unwrap().clone();
        a.insert("location".into(), json!("x"));
        a.remove("hotel_id");
        calls!(s;
            "booking_api_search_hotels_by_location" a => error "Tool execution failed: Check-in date must be before check-out date";
            "booking_api_get_booking_history" {"customer_id": "CUS-NONE"} => {"bookings": []};
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn modify_refuses_a_cancelled_booking() {
        let row = json!({"id": "BKG-T1", "booking_reference": "BKG-T1", "customer_id": "CUS-T1", "hotel_id": "HTL-T1",
            "check_in_date": "2025-10-01T15:00:00Z", "check_out_date": "2025-10-02T11:00:00Z", "booking_value": 450,
            "room_type": "suite", "board_type": "half_board", "adults_count": 2, "booking_status": "cancelled",
            "created_at": "2025-09-15T10:00:00Z", "updated_at": "2025-09-15T10:00:00Z"});
        let mut s = session(json!({"booking_api_bookings": [row]}));
        calls!(s;
            "booking_api_modify_booking" {"booking_reference": "BKG-T1", "adults_count": 3} => error "Tool execution failed: Booking cannot be modified. Current status is 'cancelled', must be 'confirmed'";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn modify_without_inventory_keeps_the_value() {
        let row = json!({"id": "BKG-T2", "booking_reference": "BKG-T2", "customer_id": "CUS-T2", "hotel_id": "HTL-NONE",
            "check_in_date": "2025-10-01T15:00:00Z", "check_out_date": "2025-10-02T11:00:00Z", "booking_value": 450,
            "room_type": "suite", "board_type": "half_board", "adults_count": 2,
            "created_at": "2025-09-15T10:00:00Z", "updated_at": "2025-09-15T10:00:00Z"});
        let mut s = session(json!({"booking_api_bookings": [row]}));
        let out = call(
            &mut s,
            "booking_api_modify_booking",
            json!({"booking_reference": "BKG-T2", "check_out_date": "2025-10-03T11:00:00Z"}),
        );
        assert_eq!(out["price_difference"], json!("0.00"));
        assert_eq!(out["updated_booking"]["booking_value"], json!("450"));
        assert_eq!(
            out["updated_booking"]["modification_history"],
            json!([
                "2025-11-25T10:00:00Z: check_out_date: 2025-10-02T11:00:00Z -> 2025-10-03T11:00:00Z"
            ])
        );
    }
}

mod corporate_api {
    use super::super::testing::{err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        for tool in [
            "corporate_api_get_account_details",
            "corporate_api_get_corporate_booking_history",
            "corporate_api_verify_account_status",
        ] {
            assert_eq!(
                err(&mut s, tool, json!({"corporate_account_id": "X-1"})),
                "Tool execution failed: Invalid corporate_account_id parameter."
            );
            assert_eq!(
                err(&mut s, tool, json!({"corporate_account_id": "CRP-NOPE"})),
                "Tool execution failed: Corporate account not found."
            );
            assert_eq!(
                err(&mut s, tool, json!({})),
                "Tool execution failed: Input validation failed: corporate_account_id: Field required"
            );
        }
        calls!(s;
            "corporate_api_generate_corporate_invoice" {"corporate_account_id": "CRP-1", "booking_reference": "X"} => error "Tool execution failed: Invalid booking_reference parameter.";
        );
    }
}

mod crm_api {
    use super::super::testing::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        calls!(s;
            "crm_api_check_vip_status" {"customer_id": "  "} => error "Tool execution failed: Invalid customer_id parameter.";
            "crm_api_check_vip_status" {"customer_id": "CUS-NOPE"} => error "Tool execution failed: Customer not found.";
            "crm_api_get_customer_profile" {} => error "Tool execution failed: Invalid parameters: provide customer_id or email.";
            "crm_api_update_customer_info" {"customer_id": "CUS-NOPE"} => error "Tool execution failed: Invalid update_fields parameter.";
            "crm_api_update_customer_info" {"customer_id": "CUS-NOPE", "complaint_count": 1} => error "Tool execution failed: Customer not found.";
            "crm_api_update_customer_info" {"customer_id": "CUS-1", "vip_tier": "vip"} => error "Tool execution failed: Input validation failed: vip_tier: Extra inputs are not permitted";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn update_stamps_the_fixed_time() {
        let row = json!({"id": "CUS-T", "customer_id": "CUS-T", "email": "a@b.c", "full_name": "A B",
            "created_at": "2025-01-01T00:00:00Z", "updated_at": "2025-02-01T00:00:00Z"});
        let mut s = session(json!({"crm_api_customer_profiles": [row]}));
        calls!(s;
            "crm_api_update_customer_info" {"customer_id": "CUS-T", "last_booking_date": "2025-03-01T10:00:00+00:00", "preferences": []} => {"success": true, "updated_fields": ["preferences", "last_booking_date"]};
        );
        let p = crate::testdata::stored(&s, "crm_api_customer_profiles", &json!("CUS-T"));
        assert_eq!(p["updated_at"], json!("2025-01-01T00:00:00Z"));
        assert_eq!(p["last_booking_date"], json!("2025-03-01T10:00:00Z"));
    }
}

mod hotel_partner_api {
    use super::super::testing::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        calls!(s;
            "hotel_partner_api_get_hotel_info" {"hotel_id": "HTL-NOPE"} => error "Tool execution failed: Hotel not found: HTL-NOPE";
            "hotel_partner_api_get_hotel_contact" {"hotel_id": "HTL-NOPE"} => error "Tool execution failed: Hotel not found: HTL-NOPE";
        );
        let args = json!({"hotel_id": "HTL-NOPE", "booking_reference": "BKG-1", "issue_type": "system-error", "description": "d"});
        calls!(s;
            "hotel_partner_api_escalate_to_hotel" args => error "Tool execution failed: Hotel 'HTL-NOPE' not found.";
            "hotel_partner_api_escalate_to_hotel" {"hotel_id": "H", "booking_reference": "B", "issue_type": "flood", "description": "d"} => error "Tool execution failed: Input validation failed: issue_type: Input should be 'same-day-modification', 'hotel-confirmation-required', 'large-group-booking', 'system-error', 'high-value-dispute' or 'guest-complaint'";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn escalations_take_the_first_free_ticket_id() {
        let hotel = json!({"id": "HTL-T", "hotel_id": "HTL-T", "hotel_name": "T", "location": "X", "partner_tier": "budget",
            "contact_name": "C", "contact_email": "c@t", "contact_phone": "1", "created_at": "x", "updated_at": "x"});
        let booking = json!({"id": "BKG-T", "booking_reference": "BKG-T", "customer_id": "CUS-T", "hotel_id": "HTL-T",
            "check_in_date": "2025-10-01", "check_out_date": "2025-10-02", "booking_value": 1, "room_type": "suite",
            "board_type": "half_board", "adults_count": 1, "created_at": "x", "updated_at": "x"});
        let ticket =
            json!({"id": "ZDSK-00000001", "subject": "s", "created_at": "x", "updated_at": "x"});
        let mut s = session(
            json!({"hotel_partner_api_hotels": [hotel], "booking_api_bookings": [booking], "zendesk_tickets": [ticket]}),
        );
        let args = json!({"hotel_id": "HTL-T", "booking_reference": "BKG-T", "issue_type": "system-error", "description": "d"});
        calls!(s;
            "hotel_partner_api_escalate_to_hotel" args => {"escalation_ticket_id": "ZDSK-00000002", "hotel_contact_email": "c@t", "hotel_contact_phone": "1"};
        );
        let t = crate::testdata::stored(&s, "zendesk_tickets", &json!("ZDSK-00000002"));
        assert_eq!(t["escalation_reason"], json!("system-error"));
        assert_eq!(t["requester_id"], json!("CUS-T"));
    }
}

mod lookup {
    use super::super::testing::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        calls!(s;
            "lookup_lookup_corporate_account_id" {} => error "Tool execution failed: Invalid parameters: provide company_name or customer_email.";
            "lookup_lookup_corporate_account_id" {"customer_email": "nobody"} => error "Tool execution failed: Invalid email format.";
            "lookup_lookup_corporate_account_id" {"company_name": "zzzz-no-such-company"} => error "Tool execution failed: No corporate account found matching criteria.";
            "lookup_lookup_group_booking_id" {"booking_reference": "BKG-NOPE"} => error "Tool execution failed: No group booking found matching criteria or booking is not part of a group.";
            "lookup_lookup_hotel_id" {"hotel_name": ""} => error "Tool execution failed: Invalid parameters: provide hotel_name or location.";
            "lookup_validate_booking_reference" {"booking_reference": "BKG-123"} => error "Tool execution failed: Invalid booking reference format.";
            "lookup_validate_booking_reference" {"booking_reference": "BKG-99999999"} => {"is_valid": false};
        );
    }
}

mod payment_api {
    use super::super::testing::{call, err, session};
    use serde_json::json;

    fn booking_row() -> serde_json::Value {
        json!({"id": "BKG-T", "booking_reference": "BKG-T", "customer_id": "CUS-T", "hotel_id": "HTL-T",
            "check_in_date": "2025-10-01", "check_out_date": "2025-10-02", "booking_value": 1, "room_type": "suite",
            "board_type": "half_board", "adults_count": 1, "created_at": "x", "updated_at": "x"})
    }

    #[tb_test_support::data_test]
    #[test]
    fn error_paths() {
        let mut s = session(json!({}));
        calls!(s;
            "payment_api_process_refund" {"booking_reference": "BKG-NOPE", "refund_amount": "1", "reason": "r"} => error "Tool execution failed: Booking not found: BKG-NOPE";
            "payment_api_get_transaction_history" {} => error "Tool execution failed: Either customer_id or booking_reference must be provided";
            "payment_api_check_payment_status" {"booking_reference": "BKG-NOPE"} => error "Tool execution failed: No transactions found for booking: BKG-NOPE";
            "payment_api_process_charge_dispute" {"transaction_id": "TXN-NOPE", "dispute_reason": "r", "dispute_amount": "1"} => error "Tool execution failed: Transaction not found: TXN-NOPE";
            "payment_api_process_charge_dispute" {"transaction_id": "T", "dispute_reason": "r", "dispute_amount": "1", "x": 1} => error "Tool execution failed: Input validation failed: x: Extra inputs are not permitted";
            "payment_api_update_payment_method" {"customer_id": "CUS-NOPE", "new_payment_method": "tok"} => error "Tool execution failed: Customer not found: CUS-NOPE";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn charges_refunds_and_disputes() {
        let mut s = session(
            json!({"booking_api_bookings": [booking_row()], "payment_api_transactions": []}),
        );
        let n = s.state.count("payment_api_transactions").unwrap();
        calls!(s;
            "payment_api_process_charge" {"booking_reference": "BKG-T", "charge_amount": "0.00", "reason": "r"} => error "Tool execution failed: Invalid charge amount - must be greater than 0";
            "payment_api_process_charge" {"booking_reference": "BKG-T", "charge_amount": "1e30", "reason": "r"} => error "Tool execution failed: [<class 'decimal.InvalidOperation'>]";
        );
        // An exponent near i64::MIN was once wrapped and charged as 0.00: pydantic refuses it.
        for amount in [
            "1e-9223372036854775808",
            "1e-9223372036854775809",
            "\u{0661}e-9223372036854775808",
        ] {
            assert_eq!(
                err(
                    &mut s,
                    "payment_api_process_charge",
                    json!({"booking_reference": "BKG-T", "charge_amount": amount, "reason": "r"})
                ),
                "Tool execution failed: Input validation failed: charge_amount: Input should be a valid decimal",
                "{amount}"
            );
        }
        assert_eq!(s.state.count("payment_api_transactions").unwrap(), n);
        let out = call(
            &mut s,
            "payment_api_process_charge",
            json!({"booking_reference": "BKG-T", "charge_amount": 50.005, "reason": "r"}),
        );
        let id = format!("TXN-{:08}", n + 1);
        assert_eq!(
            out,
            json!({"transaction_id": id, "payment_status": "successful"})
        );
        let row = crate::testdata::stored(&s, "payment_api_transactions", &json!(id));
        assert_eq!(row["amount"], json!("50.01"));
        assert_eq!(row["created_at"], json!("2025-11-25T10:00:00+00:00"));
        let out = call(
            &mut s,
            "payment_api_process_charge_dispute",
            json!({"transaction_id": id, "dispute_reason": "r", "dispute_amount": "5"}),
        );
        assert_eq!(
            out["dispute_case_id"]
                .as_str()
                .map(|x| x.starts_with("DSP-")),
            Some(true)
        );
        calls!(s;
            "payment_api_update_payment_method" {"customer_id": "CUS-T", "new_payment_method": "abc"} => {"success": true, "payment_method_last4": "****"};
        );
    }
}
