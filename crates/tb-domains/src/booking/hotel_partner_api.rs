//! hotel_partner_api: hotel records, contacts, availability and escalations.

use super::first_where;
use super::tables::{BOOKINGS, HOTELS, INVENTORY, TICKETS};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::tool::exclude_none;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

/// The fixed time stamped on escalation tickets.
const ESCALATION_TIME: &str = "2025-11-30T10:00:00Z";

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add("hotel_partner_api_escalate_to_hotel", escalate_to_hotel)
        .add("hotel_partner_api_get_hotel_contact", get_hotel_contact)
        .add("hotel_partner_api_get_hotel_info", get_hotel_info)
        .add("hotel_partner_api_verify_availability", verify_availability);
}

/// The first unused `ZDSK-{n:08d}` id, counting from 1.
fn next_ticket_id(s: &Session) -> Result<String, ToolError> {
    let rows = s.state.rows(TICKETS)?;
    let taken: std::collections::HashSet<&str> = rows
        .iter()
        .filter_map(|r| r.get("id").and_then(Value::as_str))
        .collect();
    let mut n: u64 = 1;
    loop {
        let id = format!("ZDSK-{n:08}");
        if !taken.contains(id.as_str()) {
            return Ok(id);
        }
        n += 1;
    }
}

fn escalate_to_hotel(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let hotel_id = a.str_or_empty("hotel_id");
    let reference = a.str_or_empty("booking_reference");
    let issue = a.str_or_empty("issue_type");
    let Some((_, hotel)) = first_where(s, HOTELS, "hotel_id", hotel_id)? else {
        return Err(ToolError::new(format!("Hotel '{hotel_id}' not found.")));
    };
    let Some((_, booking)) = first_where(s, BOOKINGS, "booking_reference", reference)? else {
        return Err(ToolError::new(format!("Booking '{reference}' not found.")));
    };
    let ticket_id = next_ticket_id(s)?;
    let ticket = json!({
        "id": ticket_id,
        "subject": format!("Hotel Escalation: {issue}"),
        "description": a.str_or_empty("description"),
        "status": "open",
        "priority": "high",
        "type": "incident",
        "created_at": ESCALATION_TIME,
        "updated_at": ESCALATION_TIME,
        "requester_id": booking.str_or_empty("customer_id"),
        "hotel_id": hotel_id,
        "booking_reference": reference,
        "escalation_reason": issue,
    });
    s.insert(TICKETS, &ticket)?;
    let email = hotel
        .get("escalation_contact")
        .and_then(Value::as_str)
        .filter(|e| !e.is_empty())
        .unwrap_or(hotel.str_or_empty("contact_email"));
    Ok(json!({
        "escalation_ticket_id": ticket_id,
        "hotel_contact_email": email,
        "hotel_contact_phone": hotel.str_or_empty("contact_phone"),
    }))
}

fn hotel(s: &Session, a: &Args) -> Result<tb_sandbox::state::Row, ToolError> {
    let id = a.str_or_empty("hotel_id");
    first_where(s, HOTELS, "hotel_id", id)?
        .map(|(_, h)| h)
        .ok_or_else(|| ToolError::new(format!("Hotel not found: {id}")))
}

fn get_hotel_contact(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let h = hotel(s, a)?;
    let mut out = serde_json::Map::new();
    for k in [
        "contact_name",
        "contact_email",
        "contact_phone",
        "escalation_contact",
    ] {
        if let Some(v) = h.get(k).filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

fn get_hotel_info(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let h = hotel(s, a)?;
    Ok(json!({"hotel_data": exclude_none(&h)}))
}

fn verify_availability(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let h = hotel(s, a)?;
    let hotel_id = h.str_or_empty("hotel_id");
    let day = |t: &str| t.split('T').next().unwrap_or("").to_string();
    let (check_in, check_out) = (
        day(a.str_or_empty("check_in_date")),
        day(a.str_or_empty("check_out_date")),
    );
    let (room, board) = (a.str_or_empty("room_type"), a.str_or_empty("board_type"));
    let counts: Vec<i64> = s
        .rows_where(INVENTORY, |r| {
            let d = r.str_or_empty("date");
            r.str_or_empty("hotel_id") == hotel_id
                && r.str_or_empty("room_type") == room
                && r.str_or_empty("board_type") == board
                && check_in.as_str() <= d
                && d < check_out.as_str()
        })?
        .map(|r| r.i64_or_zero("available_count"))
        .collect();
    let (ok, note) = match counts.iter().min() {
        None => (
            false,
            "No inventory data available for this hotel/room combination.".to_string(),
        ),
        Some(&min) if min > 0 => (
            true,
            format!(
                "Confirmed availability for {} nights. Minimum {min} rooms available.",
                counts.len()
            ),
        ),
        Some(_) => (false, "No availability for requested dates.".to_string()),
    };
    Ok(json!({"availability_confirmed": ok, "confirmation_notes": note}))
}
