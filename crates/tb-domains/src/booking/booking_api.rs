//! booking_api: bookings, group bookings and hotel inventory.

use super::tables::{BOOKINGS, GROUPS, HOTELS, INVENTORY};
use super::{Ymd, first_where, iso_date_z, write_in_place};
use crate::vocab::{SessionRows, one_of};
use serde_json::{Value, json};
use tb_python::decimal::Dec;
use tb_sandbox::state::Row;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools, wrap};

/// The fixed "now" of booking changes.
const CHANGE_TIME: &str = "2025-11-25T10:00:00Z";

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add(
        "booking_api_check_hotel_availability",
        check_hotel_availability,
    )
    .add("booking_api_get_booking", get_booking)
    .add("booking_api_get_booking_history", get_booking_history)
    .add("booking_api_get_group_booking", get_group_booking)
    .add("booking_api_modify_booking", modify_booking)
    .add("booking_api_modify_group_booking", modify_group_booking)
    .add(
        "booking_api_search_hotels_by_location",
        search_hotels_by_location,
    );
}

fn dec_err(e: tb_python::decimal::DecimalError) -> ToolError {
    ToolError::new(e.to_string())
}

/// A decimal field of a row.
fn dec_field(row: &Row, name: &str) -> Result<Dec, ToolError> {
    Dec::parse(row.str_or_empty(name)).map_err(dec_err)
}

/// The stay's two dates, or the reference's error.
fn stay(a: &Args) -> Result<(Ymd, Ymd), ToolError> {
    let ci = iso_date_z(a.str_or_empty("check_in_date"))
        .map_err(|e| ToolError::new(format!("Invalid date format: {e}")))?;
    let co = iso_date_z(a.str_or_empty("check_out_date"))
        .map_err(|e| ToolError::new(format!("Invalid date format: {e}")))?;
    if ci >= co {
        return Err(ToolError::new(
            "Check-in date must be before check-out date",
        ));
    }
    Ok((ci, co))
}

fn quantize2(d: &Dec) -> Result<Value, ToolError> {
    Ok(Value::String(
        d.quantize_half_up(-2).map_err(dec_err)?.to_py_string(),
    ))
}

fn check_hotel_availability(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let hotel_id = a.str_or_empty("hotel_id");
    if s.state.get(HOTELS, &json!(hotel_id))?.is_none() {
        return Err(ToolError::new(format!(
            "Hotel not found with hotel_id '{hotel_id}'"
        )));
    }
    let (ci, co) = stay(a)?;
    let (room, board) = (a.str_or_empty("room_type"), a.str_or_empty("board_type"));
    let relevant: Vec<&Row> = s
        .rows_where(INVENTORY, |r| {
            r.str_or_empty("hotel_id") == hotel_id && r.str_or_empty("room_type") == room
        })?
        .collect();
    if relevant.is_empty() {
        return Ok(
            json!({"available_count": 0, "available_board_types": [], "price_per_night": "0.00"}),
        );
    }
    let mut in_range = Vec::new();
    for inv in &relevant {
        let d = iso_date_z(inv.str_or_empty("date")).map_err(ToolError::new)?;
        if ci <= d && d < co && inv.str_or_empty("board_type") == board {
            in_range.push(*inv);
        }
    }
    let (count, price) = match in_range.first() {
        None => (0, Value::String("0.00".into())),
        Some(first) => {
            let count = in_range
                .iter()
                .filter_map(|r| r.get("available_count").and_then(Value::as_i64))
                .min()
                .unwrap_or(0);
            (count, quantize2(&dec_field(first, "price_per_night")?)?)
        }
    };
    let mut boards: Vec<String> = Vec::new();
    for inv in &relevant {
        let d = iso_date_z(inv.str_or_empty("date")).map_err(ToolError::new)?;
        if ci <= d && d < co && inv.i64_or_zero("available_count") > 0 {
            boards.push(inv.str_or_empty("board_type").to_string());
        }
    }
    boards.sort();
    boards.dedup();
    Ok(json!({"available_count": count, "available_board_types": boards, "price_per_night": price}))
}

fn get_booking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (reference, customer) = one_of(
        a,
        ["booking_reference", "customer_id"],
        "Either booking_reference or customer_id must be provided",
    )?;
    let (key, value) = match reference {
        Some(r) => ("booking_reference", r),
        None => ("customer_id", customer.unwrap_or_default()),
    };
    match first_where(s, BOOKINGS, key, value)? {
        Some((_, row)) => Ok(wrap("booking_data", row)),
        None => Err(ToolError::new(format!(
            "Booking not found with {key} '{value}'"
        ))),
    }
}

/// Rows sorted by `created_at`, newest first, keeping store order among equals (Python's
/// `sort(key=..., reverse=True)` is stable).
pub(crate) fn newest_first(mut rows: Vec<Row>) -> Vec<Row> {
    rows.sort_by(|x, y| {
        y.str_or_empty("created_at")
            .cmp(x.str_or_empty("created_at"))
    });
    rows
}

fn get_booking_history(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let customer = a.str_or_empty("customer_id");
    let rows: Vec<Row> = s
        .rows_where(BOOKINGS, |r| r.str_or_empty("customer_id") == customer)?
        .cloned()
        .collect();
    Ok(wrap("bookings", newest_first(rows)))
}

fn get_group_booking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("group_booking_id");
    match first_where(s, GROUPS, "group_booking_id", id)? {
        Some((_, row)) => Ok(wrap("group_booking_data", row)),
        None => Err(ToolError::new(format!(
            "Group booking not found with group_booking_id '{id}'"
        ))),
    }
}

/// Saves a modified booking as the reference does: its changes appended to
/// `modification_history` as one entry, `updated_at` stamped, the live object at `pos` updated
/// and the row stored.
fn save_changed(
    s: &mut Session,
    pos: usize,
    b: &mut Row,
    changes: &[String],
) -> Result<(), ToolError> {
    if let Some(Value::Array(h)) = b.get_mut("modification_history") {
        h.push(Value::String(format!(
            "{CHANGE_TIME}: {}",
            changes.join("; ")
        )));
    }
    b.insert("updated_at".into(), json!(CHANGE_TIME));
    write_in_place(s, BOOKINGS, pos, b.clone())?;
    s.replace(BOOKINGS, &Value::Object(b.clone()))?;
    Ok(())
}

/// The value of a booking's stay (its hotel, dates, room and board) from the hotel's nightly
/// prices (`_calculate_booking_value`): None when the dates do not parse or no night has a price.
fn stay_value(s: &Session, booking: &Row) -> Result<Option<Dec>, ToolError> {
    let hotel_id = booking.str_or_empty("hotel_id");
    let check_in = booking.str_or_empty("check_in_date");
    let check_out = booking.str_or_empty("check_out_date");
    let room = booking.str_or_empty("room_type");
    let board = booking.str_or_empty("board_type");
    let (Ok(ci), Ok(co)) = (iso_date_z(check_in), iso_date_z(check_out)) else {
        return Ok(None);
    };
    let mut total = Dec::parse("0").map_err(dec_err)?;
    let mut nights = 0usize;
    for inv in s.state.rows(INVENTORY)? {
        if inv.str_or_empty("hotel_id") != hotel_id
            || inv.str_or_empty("room_type") != room
            || inv.str_or_empty("board_type") != board
        {
            continue;
        }
        let Ok(d) = iso_date_z(inv.str_or_empty("date")) else {
            continue;
        };
        if ci <= d && d < co {
            total = total
                .add(&dec_field(inv, "price_per_night")?)
                .map_err(dec_err)?;
            nights += 1;
        }
    }
    if nights == 0 {
        return Ok(None);
    }
    total.quantize_half_up(-2).map(Some).map_err(dec_err)
}

fn modify_booking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let reference = a.str_or_empty("booking_reference");
    let Some((pos, mut b)) = first_where(s, BOOKINGS, "booking_reference", reference)? else {
        return Err(ToolError::new(format!(
            "Booking not found with booking_reference '{reference}'"
        )));
    };
    let status = b.str_or_empty("booking_status").to_string();
    if status != "confirmed" {
        return Err(ToolError::new(format!(
            "Booking cannot be modified. Current status is '{status}', must be 'confirmed'"
        )));
    }
    let original_value = dec_field(&b, "booking_value")?;
    let mut changes: Vec<String> = Vec::new();
    // Scalar fields, in the reference's order: "field: old -> new" when the value differs.
    for name in [
        "check_in_date",
        "check_out_date",
        "room_type",
        "board_type",
        "adults_count",
        "children_count",
    ] {
        let Some(new) = a.get(name).filter(|v| !v.is_null()) else {
            continue;
        };
        let old = b.value(name);
        if !tb_python::py_eq(&old, new) {
            changes.push(format!(
                "{name}: {} -> {}",
                tb_python::py_str(&old),
                tb_python::py_str(new)
            ));
            b.insert(name.to_string(), new.clone());
        }
    }
    if let Some(new) = a.get("special_requests").filter(|v| !v.is_null())
        && b.get("special_requests") != Some(new)
    {
        b.insert("special_requests".into(), new.clone());
        changes.push("special_requests updated".into());
    }
    if let Some(new) = a.get("booking_status").filter(|v| !v.is_null())
        && b.get("booking_status") != Some(new)
    {
        changes.push(format!(
            "booking_status: {status} -> {}",
            tb_python::py_str(new)
        ));
        b.insert("booking_status".into(), new.clone());
    }
    let mut difference = Dec::parse("0").map_err(dec_err)?;
    let repriced = ["check_in_date", "check_out_date", "room_type", "board_type"]
        .iter()
        .any(|n| a.get(*n).is_some_and(|v| !v.is_null()));
    if repriced {
        let value = stay_value(s, &b)?;
        if let Some(v) = value {
            difference = v.sub(&original_value).map_err(dec_err)?;
            b.insert("booking_value".into(), Value::String(v.to_py_string()));
        }
    }
    if changes.is_empty() {
        // The reference re-prices the live object even when nothing else changed.
        write_in_place(s, BOOKINGS, pos, b.clone())?;
    } else {
        save_changed(s, pos, &mut b, &changes)?;
    }
    let mut out = serde_json::Map::with_capacity(2);
    out.insert("updated_booking".into(), Value::Object(b));
    out.insert("price_difference".into(), quantize2(&difference)?);
    Ok(Value::Object(out))
}

fn modify_group_booking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let group_id = a.str_or_empty("group_booking_id");
    let Some((gpos, mut group)) = first_where(s, GROUPS, "group_booking_id", group_id)? else {
        return Err(ToolError::new(format!(
            "Group booking not found with group_booking_id '{group_id}'"
        )));
    };
    let details = a.get("modification_details").and_then(Value::as_object);
    let new_in = details
        .and_then(|d| d.get("check_in_date"))
        .and_then(Value::as_str)
        .filter(|x| !x.is_empty());
    let new_out = details
        .and_then(|d| d.get("check_out_date"))
        .and_then(Value::as_str)
        .filter(|x| !x.is_empty());
    let cascade = a
        .get("cascade_to_individual_bookings")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let mut modified: Vec<String> = Vec::new();
    let mut total = Dec::parse("0").map_err(dec_err)?;
    let mut group_changed = false;
    let mut any_booking_changed = false;
    for (name, new) in [("check_in_date", new_in), ("check_out_date", new_out)] {
        if let Some(new) = new
            && group.str_or_empty(name) != new
        {
            group.insert(name.into(), json!(new));
            group_changed = true;
        }
    }
    if group_changed {
        write_in_place(s, GROUPS, gpos, group.clone())?;
    }
    if cascade {
        let refs: Vec<String> = group
            .get("booking_references")
            .and_then(Value::as_array)
            .map(|v| {
                v.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        for booking_ref in refs {
            let Some((pos, mut b)) = first_where(s, BOOKINGS, "booking_reference", &booking_ref)?
            else {
                continue;
            };
            let original_value = dec_field(&b, "booking_value")?;
            let mut changes: Vec<String> = Vec::new();
            for (name, new) in [("check_in_date", new_in), ("check_out_date", new_out)] {
                if let Some(new) = new
                    && b.str_or_empty(name) != new
                {
                    b.insert(name.into(), json!(new));
                    changes.push(format!("{name} updated via group booking {group_id}"));
                }
            }
            if changes.is_empty() {
                continue;
            }
            any_booking_changed = true;
            let value = stay_value(s, &b)?;
            if let Some(v) = value {
                let diff = v.sub(&original_value).map_err(dec_err)?;
                total = total.add(&diff).map_err(dec_err)?;
                if !diff.is_zero() {
                    b.insert("booking_value".into(), Value::String(v.to_py_string()));
                }
            }
            save_changed(s, pos, &mut b, &changes)?;
            modified.push(booking_ref);
        }
    }
    if group_changed || any_booking_changed {
        group.insert("updated_at".into(), json!(CHANGE_TIME));
        write_in_place(s, GROUPS, gpos, group.clone())?;
        s.replace(GROUPS, &Value::Object(group.clone()))?;
    }
    Ok(json!({
        "updated_group_booking": group,
        "modified_booking_references": modified,
        "total_price_difference": quantize2(&total)?,
    }))
}

fn search_hotels_by_location(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (ci, co) = stay(a)?;
    let location = a.str_or_empty("location").to_lowercase();
    let (room, board) = (a.str_or_empty("room_type"), a.str_or_empty("board_type"));
    let hotels: Vec<Row> = s
        .rows_where(HOTELS, |h| {
            h.str_or_empty("location")
                .to_lowercase()
                .contains(&location)
        })?
        .cloned()
        .collect();
    let mut results = Vec::new();
    for hotel in &hotels {
        let hotel_id = hotel.str_or_empty("hotel_id");
        let mut nights: Vec<&Row> = Vec::new();
        for inv in s.state.rows(INVENTORY)? {
            if inv.str_or_empty("hotel_id") != hotel_id
                || inv.str_or_empty("room_type") != room
                || inv.str_or_empty("board_type") != board
            {
                continue;
            }
            let d = iso_date_z(inv.str_or_empty("date")).map_err(ToolError::new)?;
            if ci <= d && d < co {
                nights.push(inv);
            }
        }
        let Some(min) = nights
            .iter()
            .filter_map(|r| r.get("available_count").and_then(Value::as_i64))
            .min()
        else {
            continue;
        };
        if min <= 0 {
            continue;
        }
        let mut sum = Dec::ZERO;
        for inv in &nights {
            sum = sum
                .add(&dec_field(inv, "price_per_night")?)
                .map_err(dec_err)?;
        }
        let avg = sum.div_int(nights.len() as u64).map_err(dec_err)?;
        results.push(json!({
            "hotel_id": hotel_id,
            "hotel_name": hotel.str_or_empty("hotel_name"),
            "location": hotel.str_or_empty("location"),
            "partner_tier": hotel.str_or_empty("partner_tier"),
            "available_count": min,
            "price_per_night": quantize2(&avg)?,
        }));
    }
    Ok(json!({"hotels": results}))
}
