//! Error paths and edge cases of the retail tools, as the reference behaves (learned from its
//! code and tests), on hand-made rows. (The declarations against the published tool list are
//! checked for every domain at once, in `tests/it/schema.rs`.)

use super::tables::*;
use crate::testdata::call;
use serde_json::{Value, json};
use std::sync::Arc;
use tb_sandbox::{Clock, Loaded, Session, State};

fn domain() -> Arc<tb_sandbox::Domain> {
    crate::by_name(super::SERVER)
        .expect("registry")
        .expect("retail domain")
}

/// A session on empty tables at the replay clock.
fn empty() -> Session {
    let d = domain();
    let loaded = Loaded {
        domain: d.clone(),
        base: State::empty(d.layout().clone()),
    };
    loaded
        .session(
            &json!({}),
            Clock::parse(tb_test_support::REPLAY_CLOCK).expect("clock"),
        )
        .expect("session")
}

fn add(s: &mut Session, table: &str, row: Value) {
    s.insert(table, &row).expect("row");
}

fn err(s: &mut Session, tool: &str, args: Value) -> String {
    let v = call(s, tool, args);
    assert_eq!(v["tool"], json!(tool), "{v}");
    v["error"]
        .as_str()
        .map_or_else(|| panic!("expected an error, got {v}"), str::to_string)
}

fn order(id: &str, status: &str) -> Value {
    json!({
        "id": id, "customer_id": "CUS-1", "order_date": "2025-09-15T14:30:00Z", "status": status,
        "subtotal_amount": 100, "discount_amount": 10, "points_value": 5, "shipping_cost": 0, "total_amount": 85,
        "shipping_address_line1": "1 Main St", "shipping_address_city": "Memphis",
        "shipping_address_state": "TN", "shipping_address_zip": "38103",
    })
}

fn rows(s: &Session, table: &str) -> Vec<Value> {
    s.state
        .rows(table)
        .expect("table")
        .iter()
        .map(|r| Value::Object(r.clone()))
        .collect()
}

// --- input validation (runtime, with our declarations) ---------------------------------------

#[test]
fn missing_field_extra_field_and_invalid_enum() {
    let mut s = empty();
    calls!(s;
        "get_order" {} => error "Tool execution failed: Input validation failed: order_id: Field required";
        "get_order" {"order_id": "ORD-1", "verbose": true} => error "Tool execution failed: Input validation failed: verbose: Extra inputs are not permitted";
        "cancel_order" {"order_id": "ORD-1", "cancellation_reason": "bored"} => error "Tool execution failed: Input validation failed: cancellation_reason: Input should be 'customer_request', 'payment_failed', 'address_undeliverable' or 'out_of_stock'";
        "update_membership_status" {"customer_id": "CUS-1", "action": "pause"} => error "Tool execution failed: Input validation failed: action: Input should be 'upgrade' or 'cancel'";
    );
}

// --- unknown ids -------------------------------------------------------------------------------

#[test]
fn unknown_ids_give_the_reference_messages() {
    let mut s = empty();
    let cases = [
        (
            "get_order",
            json!({"order_id": "ORD-9"}),
            "Order not found: ORD-9",
        ),
        (
            "cancel_order",
            json!({"order_id": "ORD-9", "cancellation_reason": "customer_request"}),
            "Order not found: ORD-9",
        ),
        (
            "get_shipment_tracking",
            json!({"order_id": "ORD-9"}),
            "No shipment found for order: ORD-9 (may not be shipped yet)",
        ),
        (
            "get_payment_status",
            json!({"order_id": "ORD-9"}),
            "No payment transaction found for order: ORD-9",
        ),
        (
            "create_refund",
            json!({"order_id": "ORD-9", "customer_id": "C", "amount": 1, "refund_reason": "order_cancelled"}),
            "Original payment transaction not found for order: ORD-9",
        ),
        (
            "file_warranty_claim",
            json!({"contract_id": "WCT-9", "customer_id": "C", "warranty_issue_type": "component_failed"}),
            "Warranty contract not found: WCT-9",
        ),
        (
            "cancel_installation",
            json!({"job_id": "JOB-9", "order_id": "ORD-9", "cancellation_reason": "product_incompatible"}),
            "Installation job not found: JOB-9",
        ),
        (
            "get_installation_job",
            json!({"order_id": "ORD-9"}),
            "Installation job not found: ORD-9",
        ),
        (
            "get_rma_status",
            json!({"rma_id": "RMA-9"}),
            "RMA not found: RMA-9",
        ),
        (
            "check_inventory",
            json!({"sku": "SKU-9"}),
            "SKU not found in inventory system: SKU-9",
        ),
        (
            "get_promotion_details",
            json!({"promo_code": "NOPE"}),
            "Promotion code not found or expired: NOPE",
        ),
        (
            "get_customer_profile",
            json!({"email": "x@y.z"}),
            "Customer not found with provided identifier: x@y.z",
        ),
        (
            "get_membership_details",
            json!({"customer_id": "CUS-9"}),
            "No active membership found for customer: CUS-9",
        ),
        (
            "add_points_to_balance",
            json!({"customer_id": "CUS-9", "points_to_add": 5, "points_reason": "service_recovery"}),
            "No membership record found for customer CUS-9. Customer must have a membership record to receive points.",
        ),
        (
            "update_membership_status",
            json!({"customer_id": "CUS-9", "action": "cancel"}),
            "Customer not found: CUS-9",
        ),
        (
            "get_product_details",
            json!({"sku": "SKU-9"}),
            "Product SKU not found: SKU-9",
        ),
    ];
    for (tool, args, msg) in cases {
        assert_eq!(
            err(&mut s, tool, args),
            format!("Tool execution failed: {msg}"),
            "{tool}"
        );
    }
    // A missing discount application is not an error: an empty record comes back.
    calls!(s;
        "get_discount_application" {"order_id": "ORD-9"} => {"discount_app_id": "", "order_id": "ORD-9", "points_used": 0, "loyalty_discount_applied": false, "total_discount_amount": 0.0};
    );
}

#[test]
fn either_identifier_is_required() {
    let mut s = empty();
    calls!(s;
        "get_installation_job" {"job_id": null} => error "Tool execution failed: Either job_id or order_id must be provided";
    );
    // An empty string is as good as nothing (Python truthiness).
    calls!(s;
        "get_customer_profile" {"customer_id": "", "email": null} => error "Tool execution failed: Either customer_id or email must be provided";
    );
}

// --- duplicate creates (count-based ids without a collision check) ----------------------------

#[test]
fn count_based_ids_can_collide() {
    let mut s = empty();
    let txn = json!({"id": "TXN-20000001", "order_id": "ORD-1", "customer_id": "CUS-1", "amount": 10,
                     "status": "authorized", "payment_method": "Visa", "transaction_date": "2025-10-01T00:00:00Z"});
    add(&mut s, TRANSACTIONS, txn);
    calls!(s;
        "charge_customer" {"order_id": "ORD-1", "customer_id": "CUS-1", "amount": 15, "charge_reason": "reship_fee"} => error "Tool execution failed: Failed to charge customer: Object with ID TXN-20000001 already exists";
    );
    let refund = json!({"id": "RFD-20000000", "transaction_id": "TXN-20000001", "order_id": "ORD-1", "amount": 1,
                        "refund_reason": "order_cancelled", "refund_date": "2025-10-01T00:00:00Z"});
    // RFD-2{count}: with no refund yet the id is RFD-20000000; make it exist first.
    add(&mut s, REFUNDS, refund);
    let r = call(
        &mut s,
        "create_refund",
        json!({"order_id": "ORD-1", "customer_id": "CUS-1", "amount": 2, "refund_reason": "discount_correction"}),
    );
    assert_eq!(r["refund_id"], json!("RFD-20000001"));
    s.state
        .delete(REFUNDS, &json!("RFD-20000000"))
        .expect("delete");
    calls!(s;
        "create_refund" {"order_id": "ORD-1", "customer_id": "CUS-1", "amount": 2, "refund_reason": "discount_correction"} => error "Tool execution failed: Failed to create refund: Object with ID RFD-20000001 already exists";
    );
}

#[test]
fn charge_coerces_the_amount_and_stamps_the_fixed_time() {
    let mut s = empty();
    calls!(s;
        "charge_customer" {"order_id": "ORD-1", "customer_id": "CUS-1", "amount": 15, "charge_reason": "reship_fee"} => {"transaction_id": "TXN-20000000", "order_id": "ORD-1", "amount": 15.0, "status": "authorized", "transaction_date": "2025-10-01T13:00:05+00:00"};
    );
    assert_eq!(
        rows(&s, TRANSACTIONS)[0]["payment_method"],
        json!("Card on file")
    );
}

// --- probe-based ids -----------------------------------------------------------------------------

#[test]
fn probes_skip_used_ids() {
    let mut s = empty();
    // RMA-20{n:06} starts at the row count (1 here) and skips RMA-20000001.
    add(
        &mut s,
        RMAS,
        json!({"id": "RMA-20000001", "order_id": "O", "line_item_id": "L", "customer_id": "C",
        "return_reason": "defective", "is_defective": true, "created_date": "2025-01-01T00:00:00Z", "refund_amount": 1}),
    );
    calls!(s;
        "create_rma" {"order_id": "O", "line_item_id": "L", "customer_id": "C", "return_reason": "changed_mind", "refund_amount": 10, "restocking_fee": 1.5, "return_shipping_cost": 0, "removal_fee": 0} => {"rma_id": "RMA-20000002", "status": "approved", "created_date": "2025-10-01T13:00:05+00:00"};
    );
    let stored = &rows(&s, RMAS)[1];
    assert_eq!(stored["is_defective"], json!(false));
    assert_eq!(stored["removal_fee"], json!(0.0));

    // WCL-2{n:07} also starts at the count.
    add(
        &mut s,
        CONTRACTS,
        json!({"id": "WCT-1", "order_id": "O", "sku": "S", "customer_id": "C",
        "warranty_type": "manufacturer", "start_date": "2025-01-01T00:00:00Z", "end_date": "2027-01-01T00:00:00Z",
        "coverage_details": "parts"}),
    );
    let c = call(
        &mut s,
        "file_warranty_claim",
        json!({"contract_id": "WCT-1", "customer_id": "C", "warranty_issue_type": "product_not_functioning"}),
    );
    assert_eq!(c["claim_id"], json!("WCL-20000000"));
    assert_eq!(
        rows(&s, CLAIMS)[0]["issue_description"],
        json!("Product not functioning properly")
    );
}

// --- preconditions and their side effects --------------------------------------------------------

#[test]
fn replacement_needs_stock_and_keeps_the_decrement_when_the_product_is_unknown() {
    let mut s = empty();
    add(
        &mut s,
        INVENTORY,
        json!({"sku": "S0", "available_quantity": 0, "reserved_quantity": 0}),
    );
    add(
        &mut s,
        INVENTORY,
        json!({"sku": "S1", "available_quantity": 3, "reserved_quantity": 0}),
    );
    let args = |sku: &str| {
        json!({"original_order_id": "ORD-1", "customer_id": "CUS-1", "sku": sku, "quantity": 2,
               "shipping_speed": "standard", "shipping_address_line1": "1 Main", "shipping_address_city": "X",
               "shipping_address_state": "TN", "shipping_address_zip": "1"})
    };
    calls!(s;
        "create_replacement_order" (args("S0")) => error "Tool execution failed: Product out of stock - cannot create replacement order for SKU S0. Available quantity is 0.";
        "create_replacement_order" (args("S1")) => error "Tool execution failed: Product SKU not found: S1";
    );
    // As in the reference, the stock was already taken when the product lookup failed.
    assert_eq!(rows(&s, INVENTORY)[1]["available_quantity"], json!(1));
    assert!(rows(&s, ORDERS).is_empty());

    add(
        &mut s,
        PRODUCTS,
        json!({"sku": "S1", "name": "Mixer", "category": "appliances", "brand": "K",
        "base_price": 10, "weight_lbs": 3, "warranty_period_days": 365}),
    );
    add(&mut s, ORDERS, order("ORD-20000001", "processing"));
    calls!(s;
        "create_replacement_order" (args("S1")) => {"replacement_order_id": "ORD-20000002", "status": "processing", "total_amount": 0.0};
    );
    assert_eq!(
        rows(&s, INVENTORY)[1]["available_quantity"],
        json!(-1),
        "stock may go negative"
    );
    assert_eq!(rows(&s, LINE_ITEMS)[0]["id"], json!("LIN-20000001"));
    assert_eq!(rows(&s, LINE_ITEMS)[0]["product_name"], json!("Mixer"));
}

#[test]
fn cancelling_has_no_status_guard() {
    // The reference cancels whatever the status (even shipped or already cancelled); a refund
    // is reported only for orders in processing.
    let mut s = empty();
    add(&mut s, ORDERS, order("ORD-1", "shipped"));
    add(&mut s, ORDERS, order("ORD-2", "processing"));
    calls!(s;
        "cancel_order" {"order_id": "ORD-1", "cancellation_reason": "customer_request"} => {"order_id": "ORD-1", "status": "cancelled", "refund_initiated": false};
    );
    let b = call(
        &mut s,
        "cancel_order",
        json!({"order_id": "ORD-2", "cancellation_reason": "out_of_stock"}),
    );
    assert_eq!(b["refund_initiated"], json!(true));
    assert_eq!(rows(&s, ORDERS)[0]["status"], json!("cancelled"));
}

#[test]
fn shipping_speed_recomputes_total_with_python_floats() {
    let mut s = empty();
    add(&mut s, ORDERS, order("ORD-1", "processing"));
    calls!(s;
        "update_shipping_speed" {"order_id": "ORD-1", "new_shipping_speed": "next_day"} => {"order_id": "ORD-1", "old_shipping_speed": "standard", "new_shipping_speed": "next_day", "cost_difference": 29.99, "updated": true};
    );
    let r = call(
        &mut s,
        "update_shipping_speed",
        json!({"order_id": "ORD-1", "new_shipping_speed": "expedited"}),
    );
    assert_eq!(r["cost_difference"], json!(15.0 - 29.99));
    let o = &rows(&s, ORDERS)[0];
    assert_eq!(o["shipping_cost"], json!(15.0));
    assert_eq!(o["total_amount"], json!(100.0 - 10.0 - 5.0 + 15.0));
}

#[test]
fn reship_needs_shipment_and_tracking() {
    let mut s = empty();
    add(&mut s, ORDERS, order("ORD-1", "shipped"));
    let args = json!({"order_id": "ORD-1", "corrected_address_line1": "2 Elm", "corrected_address_city": "Y",
        "corrected_address_state": "IL", "corrected_address_zip": "2", "customer_fault": true});
    calls!(s;
        "reship_order" (args.clone()) => error "Tool execution failed: No shipment found for order: ORD-1";
    );
    add(
        &mut s,
        SHIPMENTS,
        json!({"id": "SHP-1", "order_id": "ORD-1", "carrier": "UPS", "tracking_number": "TRK-1",
        "ship_date": "2025-09-17T09:15:00Z", "estimated_delivery_date": "2025-09-23T17:00:00Z"}),
    );
    calls!(s;
        "reship_order" (args.clone()) => error "Tool execution failed: No tracking found for shipment: SHP-1";
    );
    add(
        &mut s,
        TRACKING,
        json!({"tracking_number": "TRK-1", "shipment_id": "SHP-1", "carrier": "UPS",
        "status": "returned_to_sender", "estimated_delivery": "2025-09-23T17:00:00Z", "last_update": "2025-09-20T00:00:00Z"}),
    );
    calls!(s;
        "reship_order" args => {"order_id": "ORD-1", "new_shipment_id": "SHP-20000001", "new_tracking_number": "TRK-200000000001", "reship_cost": 15.0, "reship_initiated": true};
    );
    assert_eq!(rows(&s, ORDERS)[0]["shipping_address_city"], json!("Y"));
    assert_eq!(
        rows(&s, SHIPMENTS)[1]["estimated_delivery_date"],
        json!("2025-10-06T13:00:05Z")
    );
    let t = call(
        &mut s,
        "get_shipment_tracking",
        json!({"order_id": "ORD-1"}),
    );
    // The first shipment of the order is the one reported.
    assert_eq!(t["shipment_id"], json!("SHP-1"));
    assert_eq!(t["ship_date"], json!("2025-09-17T09:15:00+00:00"));
    assert!(t.get("actual_delivery_date").is_none() && t.get("current_location").is_none());
}

#[test]
fn membership_upgrade_and_cancel() {
    let mut s = empty();
    add(
        &mut s,
        PROFILES,
        json!({"id": "CUS-1", "email": "a@b.c", "name": "A", "registration_date": "2024-01-01T00:00:00Z"}),
    );
    calls!(s;
        "update_membership_status" {"customer_id": "CUS-1", "action": "upgrade"} => error "Tool execution failed: membership_type is required when action is upgrade";
        "update_membership_status" {"customer_id": "CUS-1", "action": "cancel"} => error "Tool execution failed: No membership record found for customer: CUS-1";
        "update_membership_status" {"customer_id": "CUS-1", "action": "upgrade", "membership_type": "plus"} => {"customer_id": "CUS-1", "membership_id": "MEM-20000001", "new_tier": "plus_member", "action_completed": "upgraded", "start_date": "2025-10-01T00:00:00+00:00", "end_date": "2026-10-01T23:59:59.999999+00:00"};
    );
    assert_eq!(rows(&s, PROFILES)[0]["customer_tier"], json!("plus_member"));
    calls!(s;
        "add_points_to_balance" {"customer_id": "CUS-1", "points_to_add": 250, "points_reason": "refund_return"} => {"customer_id": "CUS-1", "old_balance": 0, "points_added": 250, "new_balance": 250};
        "update_membership_status" {"customer_id": "CUS-1", "action": "cancel"} => {"customer_id": "CUS-1", "new_tier": "standard", "action_completed": "cancelled"};
        "get_membership_details" {"customer_id": "CUS-1"} => error "Tool execution failed: No active membership found for customer: CUS-1";
    );
}

#[test]
fn reschedule_reopens_completed_jobs_only_for_workmanship() {
    let mut s = empty();
    add(
        &mut s,
        JOBS,
        json!({"id": "JOB-1", "order_id": "ORD-1", "customer_id": "CUS-1", "service_type": "tv_mounting",
        "scheduled_date": "2025-08-13T10:00:00Z", "status": "completed", "service_cost": 129}),
    );
    calls!(s;
        "reschedule_installation" {"job_id": "JOB-1", "new_scheduled_date": "2025-10-12T10:00:00.000Z", "reschedule_reason": "weather_delay"} => {"job_id": "JOB-1", "old_scheduled_date": "2025-08-13T10:00:00+00:00", "new_scheduled_date": "2025-10-12T10:00:00+00:00", "status": "completed"};
    );
    let r = call(
        &mut s,
        "reschedule_installation",
        json!({"job_id": "JOB-1", "new_scheduled_date": "2025-10-14T09:30:00", "reschedule_reason": "workmanship_issue"}),
    );
    assert_eq!(r["status"], json!("scheduled"));
    assert_eq!(
        r["new_scheduled_date"],
        json!("2025-10-14T09:30:00"),
        "a naive date stays naive"
    );
    calls!(s;
        "cancel_installation" {"job_id": "JOB-1", "order_id": "ANY", "cancellation_reason": "customer_wants_ship_only"} => {"job_id": "JOB-1", "status": "cancelled", "service_cost_refunded": 129.0};
    );
}

// --- clock-dependent reads -----------------------------------------------------------------------

#[test]
fn warranty_and_promotions_use_the_session_clock() {
    let mut s = empty();
    let contract = |id: &str, end: &str| {
        json!({"id": id, "order_id": "O", "sku": "S", "customer_id": "C", "warranty_type": "extended_warranty",
               "start_date": "2025-01-01T00:00:00Z", "end_date": end, "coverage_details": "all"})
    };
    add(
        &mut s,
        CONTRACTS,
        contract("WCT-OLD", "2026-01-01T00:00:00Z"),
    );
    add(
        &mut s,
        CONTRACTS,
        contract("WCT-NEW", "2027-01-01T00:00:00"),
    );
    calls!(s;
        "check_warranty_coverage" {"order_id": "O", "sku": "S"} => {"has_coverage": true, "contract_id": "WCT-NEW", "warranty_type": "extended_warranty", "start_date": "2025-01-01T00:00:00+00:00", "end_date": "2027-01-01T00:00:00", "coverage_details": "all"};
        "check_warranty_coverage" {"order_id": "O", "sku": "T"} => {"has_coverage": false};
    );

    let promo = |id: &str, code: &str, from: &str, until: &str, excluded: Value| {
        json!({"id": id, "promo_code": code, "discount_type": "percentage", "discount_value": 20,
               "excluded_skus": excluded, "valid_from": from, "valid_until": until})
    };
    add(
        &mut s,
        PROMOTIONS,
        promo(
            "P1",
            "SAVE",
            "2025-01-01T00:00:00Z",
            "2025-12-31T00:00:00Z",
            json!([]),
        ),
    );
    add(
        &mut s,
        PROMOTIONS,
        promo(
            "P2",
            "SAVE",
            "2026-11-01T00:00:00Z",
            "2026-12-31T00:00:00Z",
            json!([]),
        ),
    );
    add(
        &mut s,
        PROMOTIONS,
        promo(
            "P3",
            "SKU",
            "2026-11-01T00:00:00Z",
            "2026-12-31T00:00:00Z",
            json!(["A"]),
        ),
    );
    add(
        &mut s,
        PROMOTIONS,
        promo(
            "P4",
            "NAIVE",
            "2026-11-01T00:00:00",
            "2026-12-31T00:00:00Z",
            json!([]),
        ),
    );
    calls!(s;
        "get_promotion_details" {"promo_code": "SAVE"} => {"promo_id": "P2", "promo_code": "SAVE", "discount_type": "percentage", "discount_value": 20.0, "stackable_with_points": false, "stackable_with_loyalty": true, "valid_from": "2026-11-01T00:00:00+00:00", "valid_until": "2026-12-31T00:00:00+00:00"};
    );
    assert_eq!(
        call(
            &mut s,
            "get_promotion_details",
            json!({"promo_code": "SKU"})
        )["excluded_skus"],
        json!(["A"])
    );
    calls!(s;
        "get_promotion_details" {"promo_code": "NAIVE"} => error "Tool execution failed: Failed to retrieve promotion details: can't compare offset-naive and offset-aware datetimes";
    );
}

#[test]
fn search_policy_goes_to_the_shared_entry_point() {
    let d = domain();
    let loaded = Loaded {
        domain: d.clone(),
        base: State::empty(d.layout().clone()),
    };
    let config = json!({"sources": [{"name": "returns.md", "snippets": ["Returns are accepted within 30 days."]}]});
    let mut s = loaded
        .session(
            &config,
            Clock::parse(tb_test_support::REPLAY_CLOCK).expect("clock"),
        )
        .expect("session");
    let v = call(
        &mut s,
        "search_policy",
        json!({"query": "returns", "max_results": 5}),
    );
    assert_eq!(v["snippets"][0]["source"], json!("returns.md"), "{v}");
    calls!(s;
        "search_policy" {"query": "returns", "max_results": "many"} => error "Tool execution failed: Input validation failed: max_results: Input should be a valid integer, unable to parse string as an integer";
        "search_policy" {"max_results": 2} => error "Tool execution failed: Input validation failed: query: Field required";
    );
}
