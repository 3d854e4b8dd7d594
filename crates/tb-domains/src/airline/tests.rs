//! Unit tests of the airline server on the published data (data-gated), plus the pieces that
//! need no data.

use super::*;
use serde_json::json;

/// The airline base on the published data (panics without it: call it from
/// `#[tb_test_support::data_test]`s only).
fn base() -> Base {
    let root = tb_test_support::data();
    let config = json!({
        "flights": "$THINKINGBOX_DATA/support/tau_bench/airline_data/flights.json",
        "reservations": "$THINKINGBOX_DATA/support/tau_bench/airline_data/reservations.json",
        "users": "$THINKINGBOX_DATA/support/tau_bench/airline_data/users.json",
    });
    Base::load(&config, &root).expect("airline data loads")
}

/// A session of [`base`] at the default clock, seeded `x`.
fn session() -> AirlineSession {
    base().session("x", default_clock())
}

#[test]
fn tools_pair_with_declarations() {
    let a = Airline::get().unwrap();
    assert_eq!(a.decls().count(), 16);
    assert!(a.decls().any(|d| d.name == "transfer_to_human_agents"));
}

#[tb_test_support::data_test]
#[test]
fn initial_effects_hash_like_the_reference() {
    let s = session();
    let text = pyjson::dumps(&s.effects(), pyjson::Layout::SortKeys);
    let h = tb_core::sha256_hex(text.as_bytes());
    assert!(h.starts_with("80dec928") && h.ends_with("e551"), "{h}");
}

#[tb_test_support::data_test]
#[test]
fn errors_have_the_server_shapes() {
    let mut s = session();
    let r = s.call("get_user_details", &json!({"user_id": "nobody"}));
    assert_eq!(r, ToolReply::ok("Error!\nUser nobody not found".into()));
    for (expression, text) in [
        ("1 / 0", "Error!"),
        ("2 ** 0.5 + x", "Error!\nInvalid characters in expression"),
        ("(1 + 2) / 4", r#"{"status": "ok", "result": 0.75}"#),
    ] {
        let r = s.call("calculate", &json!({ "expression": expression }));
        assert_eq!(r.text, text, "{expression}");
    }
    let r = s.call("get_reservation_details", &json!({}));
    assert!(r.is_error, "{r:?}");
    assert!(
        r.text.starts_with("Error executing tool get_reservation_details: 1 validation error for get_reservation_detailsArguments\nreservation_id\n"),
        "{}",
        r.text
    );
    let r = s.call(
        "book_reservation",
        &json!({
        "user_id": "mia_li_3668", "origin": "JFK", "destination": "LAX", "flight_type": "two_way",
        "cabin": "economy", "flights": [], "passengers": [], "payment_methods": []}),
    );
    assert_eq!(r.text, "Error!");
    let r = s.call("think", &json!({"thought": "é"}));
    assert_eq!(r.text, r#"{"status": "recorded", "thought": "\u00e9"}"#);
}

#[tb_test_support::data_test]
#[test]
fn a_cancelled_reservation_cannot_be_cancelled_again() {
    let mut s = session();
    let first = s.call("cancel_reservation", &json!({"reservation_id": "4WQ150"}));
    assert!(
        first.text.starts_with(
            r#"{"status": "cancelled", "reservation_id": "4WQ150", "refund_amount": "#
        ),
        "{}",
        first.text
    );
    let again = s.call("cancel_reservation", &json!({"reservation_id": "4WQ150"}));
    assert_eq!(again.text, "Error!\nReservation already cancelled");
    let r = &s.effects()["reservations"]["4WQ150"];
    assert_eq!(r["status"], "cancelled");
    assert_eq!(r["cancelled_at"], FIXED_NOW);
}

#[tb_test_support::data_test]
#[test]
fn the_refund_rule_reads_the_session_clock() {
    let base = base();
    // 4WQ150 (business, no insurance) was booked 2024-05-02T03:10:19 (naive = UTC).
    let within = Clock::parse("2024-05-02T10:00:00Z").unwrap();
    let mut s = base.session("x", within);
    let r = s.call(
        "check_refund_amount",
        &json!({"reservation_id": "4WQ150", "reason": "change_of_plan"}),
    );
    assert!(r.text.contains(r#""refund_amount": 4986.0"#), "{}", r.text);
    let mut s = base.session("x", default_clock());
    let r = s.call(
        "check_refund_amount",
        &json!({"reservation_id": "4WQ150", "reason": "change_of_plan"}),
    );
    assert!(r.text.contains(r#""refund_amount": 3988.8"#), "{}", r.text);
}
