//! The airline server's state as it holds it after loading: users, reservations and flights,
//! converted from the tau-bench files the way the reference converts them (its models' field
//! order, floats for money, a fixed phone number, a one-line address, flight-status extras
//! dropped, a missing reservation `total_price` computed from the segments).

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A traveller (`Passenger`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Passenger {
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// Date of birth, `YYYY-MM-DD`.
    pub dob: String,
}

/// One flight of a reservation (`ProcessedFlight`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Segment {
    /// Flight number.
    pub flight_number: String,
    /// Day of travel.
    pub date: String,
    /// Departure airport.
    pub origin: String,
    /// Arrival airport.
    pub destination: String,
    /// Fare per passenger.
    pub price: f64,
    /// Never set by the server.
    #[serde(default)]
    pub status: Option<String>,
}

/// One payment of a reservation (`PaymentHistoryItem`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Payment {
    /// Payment method id.
    pub payment_id: String,
    /// Amount charged.
    pub amount: f64,
}

/// A reservation (`Reservation`), in the reference's field order.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Reservation {
    /// Id (6 characters in the data, `RES` + 8 hex for new ones).
    pub reservation_id: String,
    /// Owner.
    pub user_id: String,
    /// Departure airport.
    pub origin: String,
    /// Arrival airport.
    pub destination: String,
    /// `one_way` or `round_trip`.
    pub flight_type: String,
    /// `basic_economy`, `economy` or `business`.
    pub cabin: String,
    /// Segments.
    pub flights: Vec<Segment>,
    /// Travellers.
    pub passengers: Vec<Passenger>,
    /// Payments.
    pub payment_history: Vec<Payment>,
    /// When booked (naive in the data, with offset for new ones).
    pub created_at: String,
    /// Checked bags.
    pub total_baggages: i64,
    /// Charged bags.
    pub nonfree_baggages: i64,
    /// `yes` or `no`.
    pub insurance: String,
    /// Price; computed on load when missing.
    #[serde(default)]
    pub total_price: Option<f64>,
    /// `confirmed` or `cancelled`.
    #[serde(default = "confirmed")]
    pub status: String,
    /// Last change.
    #[serde(default)]
    pub last_modified: Option<String>,
    /// When cancelled.
    #[serde(default)]
    pub cancelled_at: Option<String>,
    /// Why cancelled.
    #[serde(default)]
    pub cancellation_reason: Option<String>,
}

fn confirmed() -> String {
    "confirmed".into()
}

/// A payment method of a profile (`PaymentMethod`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PaymentMethod {
    /// `credit_card`, `gift_card` or `certificate`.
    pub source: String,
    /// Balance of gift cards and certificates; none for credit cards.
    #[serde(default)]
    pub amount: Option<f64>,
    /// Id.
    pub id: String,
    /// Card brand.
    #[serde(default)]
    pub brand: Option<String>,
    /// Card digits.
    #[serde(default)]
    pub last_four: Option<String>,
    /// Why a certificate was issued.
    #[serde(default)]
    pub reason: Option<String>,
    /// When a certificate was issued.
    #[serde(default)]
    pub issued_at: Option<String>,
    /// The reservation a certificate compensates.
    #[serde(default)]
    pub reservation_id: Option<String>,
}

impl PaymentMethod {
    /// Gift cards and certificates carry a balance.
    pub fn is_prepaid(&self) -> bool {
        self.source == "gift_card" || self.source == "certificate"
    }
}

/// A customer profile (`User`), in the reference's field order.
#[derive(Debug, Clone, Serialize)]
pub struct User {
    /// Id.
    pub user_id: String,
    /// Given name.
    pub first_name: String,
    /// Family name.
    pub last_name: String,
    /// Email.
    pub email: String,
    /// Always `+1-555-0123` (the server's conversion).
    pub phone: String,
    /// `address1, address2, city, state zip`.
    pub address: String,
    /// Date of birth.
    pub date_of_birth: String,
    /// `regular`, `silver` or `gold`.
    pub membership_level: String,
    /// Payment methods by id, in order.
    pub payment_methods: IndexMap<String, PaymentMethod>,
    /// Reservation ids.
    pub reservations: Vec<String>,
    /// Saved travellers.
    pub saved_passengers: Vec<Passenger>,
}

/// Fares or seats per cabin.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct PerCabin<T> {
    /// Basic economy.
    pub basic_economy: T,
    /// Economy.
    pub economy: T,
    /// Business.
    pub business: T,
}

impl<T: Copy> PerCabin<T> {
    /// The value for a cabin name (`None` for an unknown cabin).
    pub fn get(&self, cabin: &str) -> Option<T> {
        match cabin {
            "basic_economy" => Some(self.basic_economy),
            "economy" => Some(self.economy),
            "business" => Some(self.business),
            _ => None,
        }
    }

    /// The slot of a cabin.
    pub fn get_mut(&mut self, cabin: &str) -> Option<&mut T> {
        match cabin {
            "basic_economy" => Some(&mut self.basic_economy),
            "economy" => Some(&mut self.economy),
            "business" => Some(&mut self.business),
            _ => None,
        }
    }
}

/// One day of a flight (`FlightDateData`; extras such as actual times dropped).
#[derive(Debug, Clone, Deserialize)]
pub struct FlightDate {
    /// `available`, `landed`, `cancelled`, `delayed`, `flying` or `on time`.
    pub status: String,
    /// Fares per passenger.
    #[serde(default)]
    pub prices: Option<PerCabin<f64>>,
    /// Free seats.
    #[serde(default)]
    pub available_seats: Option<PerCabin<i64>>,
}

/// A flight (`FlightInfo`).
#[derive(Debug, Clone)]
pub struct Flight {
    /// Flight number.
    pub flight_number: String,
    /// Departure airport.
    pub origin: String,
    /// Arrival airport.
    pub destination: String,
    /// `HH:MM:SS`.
    pub scheduled_departure_time: String,
    /// `HH:MM:SS`, maybe with `+1`.
    pub scheduled_arrival_time: String,
    /// Days of operation.
    pub dates: std::collections::HashMap<String, FlightDate>,
}

/// The whole state.
#[derive(Debug, Clone, Default)]
pub struct Db {
    /// Flights by key.
    pub flights: IndexMap<String, Flight>,
    /// Reservations by id, in order.
    pub reservations: IndexMap<String, Reservation>,
    /// Users by id, in order.
    pub users: IndexMap<String, User>,
}

const STATUSES: [&str; 7] = [
    "available",
    "unavailable",
    "landed",
    "cancelled",
    "delayed",
    "flying",
    "on time",
];

fn text(v: &Value, key: &str) -> Result<String, String> {
    v.get(key)
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("`{key}` missing or not a string"))
}

fn field<'a>(v: &'a Value, key: &str) -> Result<&'a Value, String> {
    v.get(key).ok_or_else(|| format!("`{key}` missing"))
}

fn parse<T: serde::de::DeserializeOwned>(v: &Value) -> Result<T, String> {
    T::deserialize(v).map_err(|e| e.to_string())
}

fn one_of(value: &str, allowed: &[&str], what: &str) -> Result<(), String> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(format!("{what} `{value}` is not one of {allowed:?}"))
    }
}

/// The server's flight conversion.
pub fn flight(v: &Value) -> Result<Flight, String> {
    let dates: IndexMap<String, FlightDate> = parse(field(v, "dates")?)?;
    for (day, d) in &dates {
        one_of(&d.status, &STATUSES, &format!("date {day}: status"))?;
        if d.status == "available" && (d.prices.is_none() || d.available_seats.is_none()) {
            return Err(format!(
                "date {day}: prices and available_seats are required when available"
            ));
        }
    }
    Ok(Flight {
        flight_number: text(v, "flight_number")?,
        origin: text(v, "origin")?,
        destination: text(v, "destination")?,
        scheduled_departure_time: text(v, "scheduled_departure_time_est")?,
        scheduled_arrival_time: text(v, "scheduled_arrival_time_est")?,
        dates: dates.into_iter().collect(),
    })
}

/// The server's reservation conversion: a missing `total_price` is the sum of the segment
/// prices times the passengers.
pub fn reservation(v: &Value) -> Result<Reservation, String> {
    let mut r: Reservation = parse(v)?;
    one_of(&r.flight_type, &["one_way", "round_trip"], "flight_type")?;
    one_of(&r.cabin, &["basic_economy", "economy", "business"], "cabin")?;
    one_of(&r.status, &["confirmed", "cancelled"], "status")?;
    if r.total_price.is_none() && !r.flights.is_empty() {
        // Python's `sum` starts at the int 0; with float prices the result is a float.
        let sum: f64 = r.flights.iter().map(|f| f.price).sum();
        r.total_price = Some(sum * r.passengers.len() as f64);
    }
    Ok(r)
}

/// The server's user conversion.
pub fn user(uid: &str, v: &Value) -> Result<User, String> {
    let name = field(v, "name")?;
    let a = field(v, "address")?;
    let address = format!(
        "{}, {}, {}, {} {}",
        text(a, "address1")?,
        text(a, "address2")?,
        text(a, "city")?,
        text(a, "state")?,
        text(a, "zip")?
    );
    let membership = text(v, "membership")?;
    one_of(&membership, &["regular", "silver", "gold"], "membership")?;
    let payment_methods: IndexMap<String, PaymentMethod> = parse(field(v, "payment_methods")?)?;
    for (id, pm) in &payment_methods {
        one_of(
            &pm.source,
            &["credit_card", "gift_card", "certificate"],
            &format!("payment method {id}: source"),
        )?;
        if pm.is_prepaid() != pm.amount.is_some() {
            return Err(format!(
                "payment method {id}: amount is required for gift cards and certificates and not allowed for credit cards"
            ));
        }
    }
    Ok(User {
        user_id: uid.to_string(),
        first_name: text(name, "first_name")?,
        last_name: text(name, "last_name")?,
        email: text(v, "email")?,
        phone: "+1-555-0123".into(),
        address,
        date_of_birth: text(v, "dob")?,
        membership_level: membership,
        payment_methods,
        reservations: parse(field(v, "reservations")?)?,
        saved_passengers: parse(field(v, "saved_passengers")?)?,
    })
}

fn entries<'a>(
    config: &'a Value,
    key: &str,
) -> Result<Box<dyn Iterator<Item = (&'a String, &'a Value)> + 'a>, String> {
    match config.get(key) {
        None | Some(Value::Null) => Ok(Box::new(std::iter::empty())),
        Some(Value::Object(m)) => Ok(Box::new(m.iter())),
        Some(_) => Err(format!("`{key}` is not an object")),
    }
}

impl Db {
    /// Builds the state from the loaded data (`flights`, `reservations`, `users` objects), as
    /// the server's `configure_data` does. Errors name the part and the key.
    pub fn from_data(config: &Value) -> Result<Db, String> {
        let mut db = Db::default();
        for (k, v) in entries(config, "flights")? {
            let f = flight(v).map_err(|e| format!("Invalid flight data: {k}: {e}"))?;
            db.flights.insert(k.clone(), f);
        }
        for (k, v) in entries(config, "reservations")? {
            let r = reservation(v).map_err(|e| format!("Invalid reservation data: {k}: {e}"))?;
            db.reservations.insert(k.clone(), r);
        }
        for (k, v) in entries(config, "users")? {
            let u = user(k, v).map_err(|e| format!("Invalid user data: {k}: {e}"))?;
            db.users.insert(k.clone(), u);
        }
        Ok(db)
    }

    /// The effects the tests read: `{"reservations": {...}, "users": {...}}`, keys in order.
    pub fn effects(&self) -> Value {
        serde_json::json!({
            "reservations": serde_json::to_value(&self.reservations).unwrap_or(Value::Null),
            "users": serde_json::to_value(&self.users).unwrap_or(Value::Null),
        })
    }
}
