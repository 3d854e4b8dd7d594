//! The airline tools, one function each, in the reference's tool order. Every function takes
//! the validated arguments and answers the success object (`"status"` first) or a [`ToolError`]
//! (shown by [`ToolError::bang_text`]: the server's own errors are [`ToolError::new`], any other
//! failure of the reference, a Python exception, is [`ToolError::raised`]).

use super::data::{Passenger, PaymentMethod, Reservation, Segment, User};
use super::{AirlineSession, calc, ok};
use serde_json::{Value, json};
use tb_python::{float_repr, str_repr};
use tb_sandbox::{Args, Fields, ToolError, ToolResult};

const BAGGAGE_FEE: i64 = 50;
const INSURANCE_FEE: i64 = 30;
const MAX_PASSENGERS: usize = 5;
const DOB_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}$";
const PYDANTIC_URL: &str = crate::pydantic::URL;

use serde::Deserialize;

#[derive(Deserialize)]
struct FlightDetail {
    flight_number: String,
    date: String,
}

#[derive(Deserialize)]
struct PaymentInput {
    payment_id: String,
    amount: f64,
}

// --- shared rules ----------------------------------------------------------------------------

fn float(x: f64) -> Value {
    json!(x)
}

fn user<'a>(s: &'a mut AirlineSession, id: &str) -> Result<&'a mut User, ToolError> {
    s.db.users
        .get_mut(id)
        .ok_or_else(|| ToolError::new(format!("User {id} not found")))
}

fn reservation<'a>(s: &'a mut AirlineSession, id: &str) -> Result<&'a mut Reservation, ToolError> {
    s.db.reservations
        .get_mut(id)
        .ok_or_else(|| ToolError::new(format!("Reservation {id} not found")))
}

fn valid_cabin(cabin: &str) -> Result<(), ToolError> {
    match cabin {
        "basic_economy" | "economy" | "business" => Ok(()),
        _ => Err(ToolError::raised()),
    }
}

fn dob_ok(dob: &str) -> bool {
    let b = dob.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

/// The first passenger whose `dob` fails the model's pattern, as pydantic's error dict.
struct DobError {
    input: String,
}

fn check_passengers(pax: &[Passenger]) -> Result<(), DobError> {
    match pax.iter().find(|p| !dob_ok(&p.dob)) {
        Some(p) => Err(DobError {
            input: p.dob.clone(),
        }),
        None => Ok(()),
    }
}

impl DobError {
    /// `str(exc.errors())`: the Python list repr.
    fn errors_repr(&self) -> String {
        let msg = format!("String should match pattern '{DOB_PATTERN}'");
        format!(
            "[{{'type': 'string_pattern_mismatch', 'loc': ('dob',), 'msg': {}, 'input': {}, 'ctx': {{'pattern': {}}}, 'url': '{PYDANTIC_URL}string_pattern_mismatch'}}]",
            str_repr(&msg),
            str_repr(&self.input),
            str_repr(DOB_PATTERN)
        )
    }

    /// `str(exc)`: pydantic's multi-line text.
    fn text(&self) -> String {
        crate::pydantic::text(
            "Passenger",
            &[crate::pydantic::ErrorLine::new(
                "dob",
                format!("String should match pattern '{DOB_PATTERN}'"),
                "string_pattern_mismatch",
                Value::String(self.input.clone()),
            )],
        )
    }
}

fn validate_pax(pax: &[Passenger]) -> Result<(), ToolError> {
    if (1..=MAX_PASSENGERS).contains(&pax.len()) {
        Ok(())
    } else {
        Err(ToolError::new(format!(
            "Passengers must be between 1 and {MAX_PASSENGERS}"
        )))
    }
}

fn free_bags(membership: &str, cabin: &str) -> i64 {
    match (membership, cabin) {
        ("regular", "basic_economy") => 0,
        ("regular", "economy") | ("silver", "basic_economy") => 1,
        ("regular", "business") | ("silver", "economy") | ("gold", "basic_economy") => 2,
        _ => 3,
    }
}

/// A length as a JSON integer (a length never exceeds `isize::MAX`, so it always fits).
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn insurance_cost(insurance: &str, passengers: usize) -> i64 {
    if insurance == "yes" {
        INSURANCE_FEE * count(passengers)
    } else {
        0
    }
}

fn baggage_cost(membership: &str, cabin: &str, total_bags: i64, passengers: usize) -> i64 {
    let free = free_bags(membership, cabin) * count(passengers);
    BAGGAGE_FEE * (total_bags - free).max(0)
}

/// One flight of an itinerary checked and priced: `(origin, destination, fare)`. Fails as the
/// server does (unknown flight, not on that day, not available, too few seats).
fn price_segment(
    s: &AirlineSession,
    num: &str,
    date: &str,
    cabin: &str,
    passengers: usize,
) -> Result<(String, String, f64), ToolError> {
    let flight =
        s.db.flights
            .get(num)
            .ok_or_else(|| ToolError::new(format!("Flight {num} not found")))?;
    let day = flight
        .dates
        .get(date)
        .ok_or_else(|| ToolError::new(format!("Flight {num} not available on {date}")))?;
    if day.status != "available" {
        return Err(ToolError::new(format!(
            "Flight {num} unavailable on {date}"
        )));
    }
    let seats = day
        .available_seats
        .and_then(|x| x.get(cabin))
        .ok_or_else(ToolError::raised)?;
    if seats < count(passengers) {
        return Err(ToolError::new(format!(
            "Not enough {cabin} seats on {num} {date}"
        )));
    }
    let fare = day
        .prices
        .and_then(|x| x.get(cabin))
        .ok_or_else(ToolError::raised)?;
    Ok((flight.origin.clone(), flight.destination.clone(), fare))
}

/// `_make_segments`: prices every flight and takes its seats, one flight at a time (a later
/// failure keeps the seats already taken, as in the reference).
fn make_segments(
    s: &mut AirlineSession,
    flights: &[FlightDetail],
    cabin: &str,
    passengers: usize,
) -> Result<(Vec<Segment>, f64), ToolError> {
    let mut segments = Vec::new();
    let mut total = 0.0;
    for f in flights {
        let (origin, destination, fare) =
            price_segment(s, &f.flight_number, &f.date, cabin, passengers)?;
        total += fare * passengers as f64;
        let seats =
            s.db.flights
                .get_mut(&f.flight_number)
                .and_then(|fl| fl.dates.get_mut(&f.date))
                .and_then(|d| d.available_seats.as_mut())
                .and_then(|x| x.get_mut(cabin))
                .ok_or_else(ToolError::raised)?;
        *seats -= count(passengers);
        segments.push(Segment {
            flight_number: f.flight_number.clone(),
            date: f.date.clone(),
            origin,
            destination,
            price: fare,
            status: None,
        });
    }
    Ok((segments, total))
}

/// `_apply_payments`: takes amounts off gift cards and certificates (a certificate that
/// reaches 0 is deleted); credit cards have no balance.
fn apply_payments(user: &mut User, payments: &[(String, f64)]) -> Result<(), ToolError> {
    for (pid, amount) in payments {
        let method = user
            .payment_methods
            .get_mut(pid)
            .ok_or_else(ToolError::raised)?;
        if method.is_prepaid() {
            let balance = method.amount.ok_or_else(ToolError::raised)?;
            if balance < *amount {
                return Err(ToolError::new(format!("Insufficient balance in {pid}")));
            }
            let left = balance - amount;
            method.amount = Some(left);
            if method.source == "certificate" && left == 0.0 {
                user.payment_methods.shift_remove(pid);
            }
        }
    }
    Ok(())
}

/// `datetime.fromisoformat` for the forms the data and the server write; naive is UTC.
fn parse_created(text: &str) -> Result<chrono::DateTime<chrono::Utc>, ToolError> {
    use chrono::{DateTime, NaiveDateTime, Utc};
    if let Ok(d) = DateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f%:z") {
        return Ok(d.with_timezone(&Utc));
    }
    NaiveDateTime::parse_from_str(text, "%Y-%m-%dT%H:%M:%S%.f")
        .or_else(|_| NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S%.f"))
        .map(|n| n.and_utc())
        .map_err(|_| ToolError::raised())
}

/// `_refund_amount`: everything when booked less than 24 h ago (by the session clock) or the
/// airline cancelled; 80 % in business; everything with insurance; else the int 0.
fn refund_amount(s: &AirlineSession, r: &Reservation, reason: &str) -> Result<Value, ToolError> {
    let created = parse_created(&r.created_at)?;
    // `total_seconds() < 86400`: whole seconds truncated toward zero compare the same.
    let within24 = (s.now - created).num_seconds() < 86_400;
    let total = r.total_price.unwrap_or(0.0);
    Ok(if within24 || reason == "airline_cancelled_flight" {
        float(total)
    } else if r.cabin == "business" {
        float(total * 0.8)
    } else if r.insurance == "yes" {
        float(total)
    } else {
        json!(0)
    })
}

fn search_result(f: &super::data::Flight, date: &str) -> Value {
    let d = &f.dates[date];
    json!({
        "flight_number": f.flight_number,
        "origin": f.origin,
        "destination": f.destination,
        "scheduled_departure_time": f.scheduled_departure_time,
        "scheduled_arrival_time": f.scheduled_arrival_time,
        "date": date,
        "status": d.status,
        "prices": d.prices,
        "available_seats": d.available_seats,
    })
}

fn available(f: &super::data::Flight, date: &str) -> bool {
    f.dates.get(date).is_some_and(|d| d.status == "available")
}

// --- tools -----------------------------------------------------------------------------------

/// `search_direct_flight`
pub fn search_direct_flight(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let (origin, destination, date) = (
        a.str_or_empty("origin"),
        a.str_or_empty("destination"),
        a.str_or_empty("date"),
    );
    let flights: Vec<Value> =
        s.db.flights
            .values()
            .filter(|f| f.origin == origin && f.destination == destination && available(f, date))
            .map(|f| search_result(f, date))
            .collect();
    Ok(ok(vec![("flights", Value::Array(flights))]))
}

/// `search_onestop_flight`: any two same-day flights through a common airport.
pub fn search_onestop_flight(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let (origin, destination, date) = (
        a.str_or_empty("origin"),
        a.str_or_empty("destination"),
        a.str_or_empty("date"),
    );
    let mut out = Vec::new();
    for first in s.db.flights.values() {
        if first.origin != origin || !available(first, date) {
            continue;
        }
        for second in s.db.flights.values() {
            if second.origin == first.destination
                && second.destination == destination
                && available(second, date)
            {
                out.push(json!({
                    "type": "one_stop",
                    "connecting_airport": first.destination,
                    "first_flight": search_result(first, date),
                    "second_flight": search_result(second, date),
                }));
            }
        }
    }
    Ok(ok(vec![("flights", Value::Array(out))]))
}

/// `get_user_details`
pub fn get_user_details(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let u = user(s, a.str_or_empty("user_id"))?;
    Ok(ok(vec![("user", json!(u))]))
}

/// `get_reservation_details`
pub fn get_reservation_details(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let r = reservation(s, a.str_or_empty("reservation_id"))?;
    Ok(ok(vec![("reservation", json!(r))]))
}

/// `book_reservation`
pub fn book_reservation(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let flight_type = a.str_or_empty("flight_type");
    if flight_type != "one_way" && flight_type != "round_trip" {
        return Err(ToolError::raised());
    }
    let cabin = a.str_or_empty("cabin");
    valid_cabin(cabin)?;
    let passengers: Vec<Passenger> = a.list_of("passengers");
    check_passengers(&passengers).map_err(|e| ToolError::new(e.errors_repr()))?;
    let payments: Vec<PaymentInput> = a.list_of("payment_methods");
    let insurance = a.str_or_empty("insurance");
    let mut request_errors = Vec::new();
    if payments.is_empty() {
        request_errors.push(format!("{{'type': 'value_error', 'loc': ('payment_methods',), 'msg': 'Value error, At least one payment method required', 'input': [], 'ctx': {{'error': ValueError('At least one payment method required')}}, 'url': '{PYDANTIC_URL}value_error'}}"));
    }
    if insurance != "yes" && insurance != "no" {
        let pattern = "^(yes|no)$";
        request_errors.push(format!(
            "{{'type': 'string_pattern_mismatch', 'loc': ('insurance',), 'msg': {}, 'input': {}, 'ctx': {{'pattern': {}}}, 'url': '{PYDANTIC_URL}string_pattern_mismatch'}}",
            str_repr(&format!("String should match pattern '{pattern}'")),
            str_repr(insurance),
            str_repr(pattern)
        ));
    }
    if !request_errors.is_empty() {
        return Err(ToolError::new(format!("[{}]", request_errors.join(", "))));
    }
    let user_id = a.str_or_empty("user_id");
    let u = user(s, user_id)?;
    validate_pax(&passengers)?;
    let mut counts = [0usize; 3];
    for p in &payments {
        let method = u.payment_methods.get(&p.payment_id).ok_or_else(|| {
            ToolError::new(format!(
                "Payment method {} not on user profile",
                p.payment_id
            ))
        })?;
        match method.source.as_str() {
            "gift_card" => counts[0] += 1,
            "certificate" => counts[1] += 1,
            _ => counts[2] += 1,
        }
    }
    if counts[0] > 3 {
        return Err(ToolError::new("Max 3 gift cards allowed"));
    }
    if counts[1] > 1 {
        return Err(ToolError::new("Max 1 certificate allowed"));
    }
    if counts[2] > 1 {
        return Err(ToolError::new("Max 1 credit card allowed"));
    }
    let membership = u.membership_level.clone();
    let real_user_id = u.user_id.clone();
    let flights: Vec<FlightDetail> = a.list_of("flights");
    let (segments, base) = make_segments(s, &flights, cabin, passengers.len())?;
    let total_bags = a.i64_or_zero("total_baggages");
    let price = base
        + insurance_cost(insurance, passengers.len()) as f64
        + baggage_cost(&membership, cabin, total_bags, passengers.len()) as f64;
    let paid: f64 = payments.iter().map(|p| p.amount).sum();
    if (paid - price).abs() > 1e-2 {
        return Err(ToolError::new(format!(
            "Payment total {} does not match expected {}",
            float_repr(paid),
            float_repr(price)
        )));
    }
    let charges: Vec<(String, f64)> = payments
        .iter()
        .map(|p| (p.payment_id.clone(), p.amount))
        .collect();
    apply_payments(user(s, user_id)?, &charges)?;
    let id = s.new_id("RES");
    let created_at = s.fixed_now();
    let r = Reservation {
        reservation_id: id.clone(),
        user_id: real_user_id,
        origin: a.str_or_empty("origin").to_string(),
        destination: a.str_or_empty("destination").to_string(),
        flight_type: flight_type.to_string(),
        cabin: cabin.to_string(),
        flights: segments,
        passengers,
        payment_history: payments
            .iter()
            .map(|p| super::data::Payment {
                payment_id: p.payment_id.clone(),
                amount: p.amount,
            })
            .collect(),
        created_at,
        total_baggages: total_bags,
        nonfree_baggages: a.i64_or_zero("nonfree_baggages"),
        insurance: insurance.to_string(),
        total_price: Some(price),
        status: "confirmed".into(),
        last_modified: None,
        cancelled_at: None,
        cancellation_reason: None,
    };
    s.db.reservations.insert(id.clone(), r);
    user(s, user_id)?.reservations.push(id.clone());
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("total_price", float(price)),
    ]))
}

/// `cancel_reservation`: seats back, status cancelled, the refund only reported.
pub fn cancel_reservation(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = a.str_or_empty("reservation_id");
    let reason = a.str_or_empty("reason");
    let r = reservation(s, id)?.clone();
    if r.status == "cancelled" {
        return Err(ToolError::new("Reservation already cancelled"));
    }
    let refund = refund_amount(s, &r, reason)?;
    for seg in &r.flights {
        let day =
            s.db.flights
                .get_mut(&seg.flight_number)
                .and_then(|f| f.dates.get_mut(&seg.date))
                .ok_or_else(ToolError::raised)?;
        if let Some(seats) = day.available_seats.as_mut() {
            *seats.get_mut(&r.cabin).ok_or_else(ToolError::raised)? += count(r.passengers.len());
        }
    }
    let now = s.fixed_now();
    let r = reservation(s, id)?;
    r.status = "cancelled".into();
    r.cancelled_at = Some(now);
    r.cancellation_reason = Some(reason.to_string());
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("status", json!("cancelled")),
        ("refund_amount", refund),
        ("refund_method", json!("original_payment_methods")),
        ("processing_time", json!("5-7 business days")),
    ]))
}

/// `update_reservation_passengers`: same number of passengers, not basic economy.
pub fn update_reservation_passengers(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = a.str_or_empty("reservation_id");
    let passengers: Vec<Passenger> = a.list_of("passengers");
    let now = s.fixed_now();
    let r = reservation(s, id)?;
    if r.cabin == "basic_economy" {
        return Err(ToolError::new("Basic economy tickets cannot be modified"));
    }
    if r.passengers.len() != passengers.len() {
        return Err(ToolError::new("Cannot change the number of passengers"));
    }
    check_passengers(&passengers).map_err(|_| ToolError::raised())?;
    validate_pax(&passengers)?;
    r.passengers.clone_from(&passengers);
    r.last_modified = Some(now);
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("passengers", json!(passengers)),
        ("status", json!("updated")),
    ]))
}

/// `update_reservation_flights`: every flight priced again at today's fare; a higher price is
/// charged, a lower one not refunded.
pub fn update_reservation_flights(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = a.str_or_empty("reservation_id");
    let cabin = a.str_or_empty("cabin");
    let payment_id = a.str_or_empty("payment_id");
    let r = reservation(s, id)?.clone();
    if r.cabin == "basic_economy" && cabin == "basic_economy" {
        return Err(ToolError::new(
            "Basic economy flights cannot be modified. Consider cabin upgrade first.",
        ));
    }
    let u = user(s, &r.user_id)?;
    if !u.payment_methods.contains_key(payment_id) {
        return Err(ToolError::new("Payment method not found in user profile"));
    }
    let membership = u.membership_level.clone();
    valid_cabin(cabin)?;
    let flights: Vec<FlightDetail> = a.list_of("flights");
    let n = r.passengers.len();
    let (segments, base) = make_segments(s, &flights, cabin, n)?;
    let new_price = base
        + insurance_cost(&r.insurance, n) as f64
        + baggage_cost(&membership, cabin, r.total_baggages, n) as f64;
    let diff = new_price - r.total_price.unwrap_or(0.0);
    if diff > 0.0 {
        apply_payments(user(s, &r.user_id)?, &[(payment_id.to_string(), diff)])?;
    }
    let now = s.fixed_now();
    let res = reservation(s, id)?;
    res.cabin = cabin.to_string();
    res.flights.clone_from(&segments);
    res.total_price = Some(new_price);
    res.last_modified = Some(now);
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("flights", json!(segments)),
        ("cabin", json!(cabin)),
        ("status", json!("updated")),
        ("price_difference", float(diff)),
    ]))
}

/// `update_reservation_baggages`: only additions; charges 50 per added charged bag.
pub fn update_reservation_baggages(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = a.str_or_empty("reservation_id");
    let total = a.i64_or_zero("total_baggages");
    let nonfree = a.i64_or_zero("nonfree_baggages");
    let payment_id = a.str_or_empty("payment_id");
    let r = reservation(s, id)?.clone();
    if total < r.total_baggages {
        return Err(ToolError::new(
            "Cannot remove checked bags - only additions allowed",
        ));
    }
    let u = user(s, &r.user_id)?;
    if !u.payment_methods.contains_key(payment_id) {
        return Err(ToolError::new("Payment method not found"));
    }
    let diff = BAGGAGE_FEE * nonfree - BAGGAGE_FEE * r.nonfree_baggages;
    if diff > 0 {
        apply_payments(u, &[(payment_id.to_string(), diff as f64)])?;
    }
    let now = s.fixed_now();
    let res = reservation(s, id)?;
    res.total_baggages = total;
    res.nonfree_baggages = nonfree;
    res.total_price = Some(res.total_price.unwrap_or(0.0) + diff as f64);
    res.last_modified = Some(now);
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("total_baggages", json!(total)),
        ("nonfree_baggages", json!(nonfree)),
        ("status", json!("updated")),
        ("baggage_fee", json!(diff)),
    ]))
}

/// `list_all_airports`: sorted, distinct.
pub fn list_all_airports(s: &mut AirlineSession, _a: &Args) -> ToolResult {
    let mut airports: Vec<&str> =
        s.db.flights
            .values()
            .flat_map(|f| [f.origin.as_str(), f.destination.as_str()])
            .filter(|a| !a.is_empty())
            .collect();
    airports.sort_unstable();
    airports.dedup();
    Ok(ok(vec![("airports", json!(airports))]))
}

/// `calculate`: Python arithmetic on digits, `.`, `+-*/`, parentheses and spaces.
pub fn calculate(_s: &mut AirlineSession, a: &Args) -> ToolResult {
    let expression = a.str_or_empty("expression");
    if !expression.chars().all(|c| "0123456789+-*/.() ".contains(c)) {
        return Err(ToolError::new("Invalid characters in expression"));
    }
    let result = calc::eval(expression).map_err(|_| ToolError::raised())?;
    Ok(ok(vec![("result", float(result))]))
}

/// `send_certificate`: for silver/gold members, insured or business reservations; a fixed
/// amount per passenger for cancelled (100) and delayed (50) flights, else the amount given.
pub fn send_certificate(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let user_id = a.str_or_empty("user_id");
    let reason = a.str_or_empty("reason");
    let reservation_id = a.str_or_empty("reservation_id");
    let membership = user(s, user_id)?.membership_level.clone();
    let r = reservation(s, reservation_id)?;
    let eligible = membership == "silver"
        || membership == "gold"
        || r.insurance == "yes"
        || r.cabin == "business";
    if !eligible {
        return Err(ToolError::new("User not eligible for compensation"));
    }
    let n = count(r.passengers.len());
    let amount = match reason {
        "cancelled_flight" => json!(100 * n),
        "delayed_flight" => json!(50 * n),
        _ => a.get("amount").cloned().unwrap_or(json!(0)),
    };
    let stored = amount.as_f64().ok_or_else(ToolError::raised)?;
    let id = s.new_id("CERT");
    if stored < 0.0 {
        return Err(ToolError::raised());
    }
    let now = s.fixed_now();
    user(s, user_id)?.payment_methods.insert(
        id.clone(),
        PaymentMethod {
            source: "certificate".into(),
            amount: Some(stored),
            id: id.clone(),
            brand: None,
            last_four: None,
            reason: Some(reason.to_string()),
            issued_at: Some(now),
            reservation_id: Some(reservation_id.to_string()),
        },
    );
    Ok(ok(vec![
        ("certificate_id", json!(id)),
        ("amount", amount),
        ("reason", json!(reason)),
        ("user_id", json!(user_id)),
        ("status", json!("issued")),
    ]))
}

/// `transfer_to_human_agents` (an end-turn tool in the scenario: normally never run).
pub fn transfer_to_human_agents(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = s.new_id("TSF");
    Ok(ok(vec![
        ("transfer_id", json!(id)),
        ("summary", json!(a.str_or_empty("summary"))),
        ("status", json!("transferred")),
    ]))
}

/// `think`
pub fn think(_s: &mut AirlineSession, a: &Args) -> ToolResult {
    Ok(ok(vec![
        ("thought", json!(a.str_or_empty("thought"))),
        ("status", json!("recorded")),
    ]))
}

/// Python's `max(0, x)`: the int 0 unless `x` is greater.
fn max0(x: f64) -> Value {
    if x > 0.0 { float(x) } else { json!(0) }
}

/// `check_price_quote`: prices without booking (no seats taken).
pub fn check_price_quote(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let cabin = a.str_or_empty("cabin");
    let passengers: Vec<Passenger> = a.list_of("passengers");
    check_passengers(&passengers)
        .map_err(|e| ToolError::new(format!("Invalid booking parameters: {}", e.text())))?;
    let membership = user(s, a.str_or_empty("user_id"))?.membership_level.clone();
    validate_pax(&passengers)?;
    let n = passengers.len();
    let mut flight_price = 0.0;
    let mut details = Vec::new();
    for f in a.list_of::<FlightDetail>("flights") {
        let (origin, destination, fare) = price_segment(s, &f.flight_number, &f.date, cabin, n)?;
        let segment_total = fare * n as f64;
        flight_price += segment_total;
        details.push(json!({
            "flight_number": f.flight_number,
            "date": f.date,
            "origin": origin,
            "destination": destination,
            "price_per_person": fare,
            "segment_total": segment_total,
        }));
    }
    let insurance = a.str_or_empty("insurance");
    let total_bags = a.i64_or_zero("total_baggages");
    let ins = insurance_cost(insurance, n);
    let bags = baggage_cost(&membership, cabin, total_bags, n);
    let total = flight_price + ins as f64 + bags as f64;
    let mut reservation_id = a.value("reservation_id");
    let mut change = Value::Null;
    if reservation_id.as_str().is_some_and(|r| !r.is_empty()) {
        let rid = reservation_id.as_str().unwrap_or_default().to_string();
        match s.db.reservations.get(&rid) {
            Some(r) => {
                let current = r.total_price.filter(|p| *p != 0.0).unwrap_or(0.0);
                let diff = total - current;
                change = json!({
                    "current_price": current,
                    "new_price": total,
                    "price_difference": diff,
                    "additional_payment_required": max0(diff),
                    "refund_amount": max0(-diff),
                });
            }
            None => reservation_id = Value::Null,
        }
    }
    let is_change = reservation_id.as_str().is_some_and(|r| !r.is_empty());
    Ok(ok(vec![
        (
            "quote_type",
            json!(if is_change { "change" } else { "new_booking" }),
        ),
        ("reservation_id", reservation_id),
        ("flight_details", Value::Array(details)),
        (
            "pricing_breakdown",
            json!({
                "base_flight_price": flight_price,
                "insurance_cost": ins,
                "baggage_cost": bags,
                "total_price": total,
            }),
        ),
        ("change_details", change),
        ("passenger_count", json!(n)),
        ("cabin_class", json!(cabin)),
        ("flight_type", json!(a.str_or_empty("flight_type"))),
        ("insurance_included", json!(insurance == "yes")),
        ("total_baggages", json!(total_bags)),
        ("timestamp", json!(s.fixed_now())),
    ]))
}

/// `check_refund_amount`: what a cancellation would refund.
pub fn check_refund_amount(s: &mut AirlineSession, a: &Args) -> ToolResult {
    let id = a.str_or_empty("reservation_id");
    let reason = a.str_or_empty("reason");
    let r = reservation(s, id)?.clone();
    let refund = refund_amount(s, &r, reason)?;
    let refund_f = refund.as_f64().unwrap_or(0.0);
    let total = r.total_price.unwrap_or(0.0);
    let message = if refund_f == 0.0 {
        match (r.cabin.as_str(), r.insurance.as_str()) {
            ("basic_economy", "no") => {
                "No refund available for basic economy without insurance unless cancelled within 24 hours or airline cancellation"
            }
            ("economy", "no") => {
                "No refund available for economy without insurance unless cancelled within 24 hours or airline cancellation"
            }
            _ => "No refund available for this reservation under current conditions",
        }
    } else if refund_f < total {
        "Partial refund available for business class cancellation (80% of total price)"
    } else {
        "Full refund available"
    };
    let total_value = if total == 0.0 { json!(0) } else { float(total) };
    Ok(ok(vec![
        ("reservation_id", json!(id)),
        ("total_price", total_value),
        ("refund_amount", refund),
        (
            "refund_method",
            json!(if refund_f > 0.0 {
                "original_payment_methods"
            } else {
                "none"
            }),
        ),
        ("eligibility_message", json!(message)),
        ("reason_checked", json!(reason)),
        ("cabin_class", json!(r.cabin)),
        ("insurance", json!(r.insurance)),
    ]))
}
