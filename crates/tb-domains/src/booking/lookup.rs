//! lookup: finding ids from names, emails and references (on the lookup toolset's own tables).

use super::tables::{LOOKUP_ACCOUNTS, LOOKUP_BOOKINGS, LOOKUP_GROUPS, LOOKUP_HOTELS};
use crate::vocab::{SessionRows, one_of};
use serde_json::{Value, json};
use tb_sandbox::state::Row;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

/// The toolset's functions.
pub(crate) fn register(t: &mut Tools) {
    t.add(
        "lookup_lookup_corporate_account_id",
        lookup_corporate_account_id,
    )
    .add("lookup_lookup_group_booking_id", lookup_group_booking_id)
    .add("lookup_lookup_hotel_id", lookup_hotel_id)
    .add(
        "lookup_validate_booking_reference",
        validate_booking_reference,
    );
}

fn lookup_corporate_account_id(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (name, email) = one_of(
        a,
        ["company_name", "customer_email"],
        "Invalid parameters: provide company_name or customer_email.",
    )?;
    let accounts = s.state.rows(LOOKUP_ACCOUNTS)?;
    let mut matches: Vec<&Row> = Vec::new();
    if let Some(name) = name {
        let q = name.to_lowercase();
        matches = accounts
            .iter()
            .filter(|acc| acc.str_or_empty("company_name").to_lowercase().contains(&q))
            .collect();
    }
    if let Some(email) = email {
        let domain = email
            .split_once('@')
            .map(|(_, d)| d.to_lowercase())
            .ok_or_else(|| ToolError::new("Invalid email format."))?;
        for acc in accounts {
            let contact = acc.str_or_empty("contact_email");
            let same = !contact.is_empty()
                && contact.rsplit('@').next().unwrap_or("").to_lowercase() == domain;
            if same && !matches.contains(&acc) {
                matches.push(acc);
            }
        }
    }
    let acc = matches
        .first()
        .ok_or_else(|| ToolError::new("No corporate account found matching criteria."))?;
    let mut out = serde_json::Map::new();
    for k in ["corporate_account_id", "company_name", "account_tier"] {
        if let Some(v) = acc.get(k).filter(|v| !v.is_null()) {
            out.insert(k.into(), v.clone());
        }
    }
    Ok(Value::Object(out))
}

fn lookup_group_booking_id(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (reference, email) = one_of(
        a,
        ["booking_reference", "coordinator_email"],
        "Invalid parameters: provide booking_reference or coordinator_email.",
    )?;
    let groups = s.state.rows(LOOKUP_GROUPS)?;
    let mut found: Option<&Row> = None;
    if let Some(reference) = reference {
        let booking = s.row_where(LOOKUP_BOOKINGS, |b| {
            b.str_or_empty("booking_reference") == reference
        })?;
        if let Some(gid) = booking
            .and_then(|b| b.get("group_booking_id"))
            .and_then(Value::as_str)
            .filter(|g| !g.is_empty())
        {
            found = groups
                .iter()
                .find(|g| g.str_or_empty("group_booking_id") == gid);
        }
    }
    if found.is_none()
        && let Some(email) = email
    {
        let email = email.to_lowercase();
        found = groups
            .iter()
            .find(|g| g.str_or_empty("coordinator_email").to_lowercase() == email);
    }
    let g = found.ok_or_else(|| {
        ToolError::new(
            "No group booking found matching criteria or booking is not part of a group.",
        )
    })?;
    Ok(json!({
        "group_booking_id": g.str_or_empty("group_booking_id"),
        "total_rooms": g.value("total_rooms"),
        "coordinator_contact": format!("{} <{}>", g.str_or_empty("coordinator_name"), g.str_or_empty("coordinator_email")),
    }))
}

fn lookup_hotel_id(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let name = a
        .opt_str("hotel_name")
        .filter(|x| !x.is_empty())
        .map(str::to_lowercase);
    let location = a
        .opt_str("location")
        .filter(|x| !x.is_empty())
        .map(str::to_lowercase);
    if name.is_none() && location.is_none() {
        return Err(ToolError::new(
            "Invalid parameters: provide hotel_name or location.",
        ));
    }
    let results: Vec<Value> = s.rows_where(LOOKUP_HOTELS, |h| {
            name.as_ref().is_some_and(|q| h.str_or_empty("hotel_name").to_lowercase().contains(q.as_str()))
                || location.as_ref().is_some_and(|q| h.str_or_empty("location").to_lowercase().contains(q.as_str()))
        })?
        .map(|h| json!({"hotel_id": h.str_or_empty("hotel_id"), "hotel_name": h.str_or_empty("hotel_name"), "location": h.str_or_empty("location")}))
        .collect();
    if results.is_empty() {
        return Err(ToolError::new("No hotels found matching criteria."));
    }
    Ok(json!({"results": results}))
}

/// `re.fullmatch(r"BKG-\d{8}", s)`: Python's `\d` is any Unicode decimal digit.
fn is_reference(s: &str) -> bool {
    let Some(rest) = s.strip_prefix("BKG-") else {
        return false;
    };
    let digits: Vec<char> = rest.chars().collect();
    digits.len() == 8 && digits.iter().all(|c| c.is_numeric())
}

fn validate_booking_reference(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let reference = a.str_or_empty("booking_reference");
    if !is_reference(reference) {
        return Err(ToolError::new("Invalid booking reference format."));
    }
    match s.row_where(LOOKUP_BOOKINGS, |b| {
        b.str_or_empty("booking_reference") == reference
    })? {
        Some(b) => Ok(json!({"is_valid": true, "booking_id": b.str_or_empty("id")})),
        None => Ok(json!({"is_valid": false})),
    }
}
