//! hotel_partner_api: hotel records, contacts, availability and escalations.

use super::first_where;
use super::tables::{BOOKINGS, HOTELS, INVENTORY, TICKETS};
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
        .state
        .rows(INVENTORY)?
        .iter()
        .filter(|r| {
            let d = r.str_or_empty("date");
            r.str_or_empty("hotel_id") == hotel_id
                && r.str_or_empty("room_type") == room
                && r.str_or_empty("board_type") == board
                && check_in.as_str() <= d
                && d < check_out.as_str()
        })
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

#[cfg(test)]
mod tests {
    use super::super::testing::{call, session};
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
        let out = call(&mut s, "hotel_partner_api_escalate_to_hotel", args);
        assert_eq!(
            out,
            json!({"escalation_ticket_id": "ZDSK-00000002", "hotel_contact_email": "c@t", "hotel_contact_phone": "1"})
        );
        let t = s
            .state
            .get("zendesk_tickets", &json!("ZDSK-00000002"))
            .unwrap()
            .unwrap();
        assert_eq!(t["escalation_reason"], json!("system-error"));
        assert_eq!(t["requester_id"], json!("CUS-T"));
    }
}
