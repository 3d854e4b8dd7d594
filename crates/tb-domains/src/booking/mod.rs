//! The `external_booking_v1` server: its tables, its zendesk variant and its own tools, one
//! module per toolset of the reference (booking_api, corporate_api, crm_api, hotel_partner_api,
//! payment_api, lookup; knowledge_base is the shared policy search).

use serde_json::{Map, Value};
use tb_sandbox::state::Row;
use tb_sandbox::{Domain, DomainError, Session, ToolError, ToolFn};

pub mod booking_api;
pub mod corporate_api;
pub mod crm_api;
pub mod decimal;
pub mod hotel_partner_api;
pub mod lookup;
pub mod payment_api;

/// The server name.
pub const SERVER: &str = "external_booking_v1";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, ToolFn)> {
    let mut f: Vec<(&'static str, ToolFn)> = Vec::new();
    f.extend(booking_api::functions());
    f.extend(corporate_api::functions());
    f.extend(crm_api::functions());
    f.extend(hotel_partner_api::functions());
    f.extend(payment_api::functions());
    f.push((
        "knowledge_base_search_policy",
        crate::policy::search_policy as ToolFn,
    ));
    f.extend(lookup::functions());
    f
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/external_booking_v1.tables"),
        crate::zendesk::Variant::Booking,
        include_str!("../../tools/external_booking_v1.tools"),
        &functions(),
    )
}

// ---------------------------------------------------------------------------------------------
// Helpers shared by the toolsets.

/// A string field of a row ("" when absent or not a string).
pub(crate) fn field<'a>(row: &'a Row, name: &str) -> &'a str {
    row.get(name).and_then(Value::as_str).unwrap_or("")
}

/// An optional string argument, `None` when absent or null.
pub(crate) fn opt<'a>(a: &'a Map<String, Value>, name: &str) -> Option<&'a str> {
    a.get(name).and_then(Value::as_str)
}

/// A required string argument (validated by the input model; "" if somehow missing).
pub(crate) fn arg<'a>(a: &'a Map<String, Value>, name: &str) -> &'a str {
    opt(a, name).unwrap_or("")
}

/// Position and copy of the first row of `table` whose string `name` equals `value`
/// (the reference's `next(r for r in db.get_all(M) if r.name == value)`).
pub(crate) fn first_where(
    s: &Session,
    table: &str,
    name: &str,
    value: &str,
) -> Result<Option<(usize, Row)>, ToolError> {
    Ok(s.state
        .rows(table)?
        .iter()
        .enumerate()
        .find(|(_, r)| field(r, name) == value)
        .map(|(i, r)| (i, r.clone())))
}

/// Writes a row back at its position without revalidation: the reference mutating a live
/// object without calling `db.update`.
pub(crate) fn write_in_place(
    s: &mut Session,
    table: &str,
    pos: usize,
    row: Row,
) -> Result<(), ToolError> {
    if let Some(slot) = s.state.rows_mut(table)?.get_mut(pos) {
        *slot = row;
    }
    Ok(())
}

/// The output model's `model_dump(exclude_none=True)` of a flat row.
pub(crate) fn no_nulls(row: &Row) -> Value {
    crate::util::exclude_none(row)
}

pub(crate) use crate::pyrepr::str_repr as py_repr;

/// A calendar date.
pub(crate) type Ymd = (i32, u32, u32);

fn all_digits(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())
}

fn days_in_month(y: i32, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

/// Parses `HH[:MM[:SS[.f+]]]` or `HH[MM[SS[.f+]]]`, checking ranges.
fn parse_time(t: &str) -> Result<(), Option<&'static str>> {
    let (hms, frac) = match t.find(['.', ',']) {
        Some(i) => (&t[..i], Some(&t[i + 1..])),
        None => (t, None),
    };
    if let Some(f) = frac
        && !all_digits(f)
    {
        return Err(None);
    }
    let parts: Vec<&str> = if hms.contains(':') {
        hms.split(':').collect()
    } else if hms.len() % 2 == 0 && hms.len() <= 6 {
        (0..hms.len() / 2)
            .filter_map(|i| hms.get(2 * i..2 * i + 2))
            .collect()
    } else {
        return Err(None);
    };
    if parts.is_empty() || parts.len() > 3 || parts.iter().any(|p| p.len() != 2 || !all_digits(p)) {
        return Err(None);
    }
    if frac.is_some() && parts.len() != 3 {
        return Err(None);
    }
    let n = |i: usize| {
        parts
            .get(i)
            .and_then(|p| p.parse::<u32>().ok())
            .unwrap_or(0)
    };
    if n(0) > 23 {
        return Err(Some("hour must be in 0..23"));
    }
    if n(1) > 59 {
        return Err(Some("minute must be in 0..59"));
    }
    if n(2) > 59 {
        return Err(Some("second must be in 0..59"));
    }
    Ok(())
}

/// The calendar date of `datetime.fromisoformat(text)` (Python 3.11 rules, for the formats the
/// tools meet: extended or basic dates, any one-character separator, times with optional
/// fraction and UTC offset). The error is the `ValueError` text Python gives.
pub(crate) fn iso_date(text: &str) -> Result<Ymd, String> {
    let invalid = || format!("Invalid isoformat string: {}", py_repr(text));
    let (date, rest) = if text.len() >= 10 && text.as_bytes().get(4) == Some(&b'-') {
        (
            text.get(..10).ok_or_else(invalid)?,
            text.get(10..).ok_or_else(invalid)?,
        )
    } else {
        (
            text.get(..8).ok_or_else(invalid)?,
            text.get(8..).ok_or_else(invalid)?,
        )
    };
    let (y, m, d) = if date.len() == 10 {
        if date.as_bytes().get(7) != Some(&b'-') {
            return Err(invalid());
        }
        (&date[..4], &date[5..7], &date[8..10])
    } else {
        (&date[..4], &date[4..6], &date[6..8])
    };
    if !(all_digits(y) && all_digits(m) && all_digits(d)) {
        return Err(invalid());
    }
    let (y, m, d): (i32, u32, u32) = (
        y.parse().map_err(|_| invalid())?,
        m.parse().map_err(|_| invalid())?,
        d.parse().map_err(|_| invalid())?,
    );
    if !rest.is_empty() {
        // One separator character, then a time with an optional offset.
        let mut chars = rest.chars();
        chars.next();
        let time_and_zone = chars.as_str();
        let (time, zone) = match time_and_zone.find(['+', '-']) {
            Some(i) => (&time_and_zone[..i], Some(&time_and_zone[i + 1..])),
            None => (time_and_zone, None),
        };
        match parse_time(time) {
            Ok(()) => {}
            Err(Some(msg)) => return Err(msg.to_string()),
            Err(None) => return Err(invalid()),
        }
        if let Some(z) = zone
            && parse_time(z).is_err()
        {
            return Err(invalid());
        }
    }
    if y < 1 {
        return Err(format!("year {y} is out of range"));
    }
    if !(1..=12).contains(&m) {
        return Err("month must be in 1..12".into());
    }
    if d < 1 || d > days_in_month(y, m) {
        return Err("day is out of range for month".into());
    }
    Ok((y, m, d))
}

/// `datetime.fromisoformat(text.replace("Z", "+00:00")).date()`.
pub(crate) fn iso_date_z(text: &str) -> Result<Ymd, String> {
    iso_date(&text.replace('Z', "+00:00"))
}

#[cfg(test)]
pub(crate) mod testing {
    //! A session on the real initial data, for unit tests.

    use std::sync::Arc;
    use tb_sandbox::{Clock, Session};

    /// A fresh session of this domain with `patch`, or None (loudly) when the data is absent
    /// outside CI.
    pub fn session(patch: serde_json::Value) -> Option<Session> {
        let shared = std::env::var_os("TB_SHARED")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
            });
        let data = shared.join("thinkingbox-data");
        if !data.join("servers").is_dir() {
            if std::env::var_os("CI").is_some() {
                panic!(
                    "thinkingbox-data not found at {} (set TB_SHARED)",
                    data.display()
                );
            }
            eprintln!(
                "SKIPPED: thinkingbox-data not found at {}; set TB_SHARED",
                data.display()
            );
            return None;
        }
        let domain = Arc::new(super::domain().expect("booking domain builds"));
        let loaded = domain
            .load(&crate::toolslib(&data))
            .expect("initial data loads");
        let clock = Clock::parse("2026-11-30T12:00:00Z").expect("clock");
        Some(
            loaded
                .session(&serde_json::json!({ "data_patch": patch }), clock)
                .expect("patch applies"),
        )
    }

    /// Calls a tool and returns its JSON (result or `{"error", "tool"}`).
    pub fn call(s: &mut Session, tool: &str, args: serde_json::Value) -> serde_json::Value {
        s.call(tool, &args).to_json(tool)
    }

    /// The error text of a call, or panics with the result.
    pub fn err(s: &mut Session, tool: &str, args: serde_json::Value) -> String {
        let v = call(s, tool, args);
        v.get("error")
            .and_then(|e| e.as_str())
            .map(str::to_string)
            .unwrap_or_else(|| panic!("expected an error, got {v}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_dates_follow_python() {
        assert_eq!(iso_date_z("2025-10-02T15:00:00Z"), Ok((2025, 10, 2)));
        assert_eq!(iso_date_z("2025-10-02"), Ok((2025, 10, 2)));
        assert_eq!(iso_date_z("20251002"), Ok((2025, 10, 2)));
        assert_eq!(iso_date_z("2025-10-02 15:00"), Ok((2025, 10, 2)));
        assert_eq!(
            iso_date_z("2025-10-02T15:00:00.123+02:00"),
            Ok((2025, 10, 2))
        );
        assert_eq!(
            iso_date_z("tomorrow"),
            Err("Invalid isoformat string: 'tomorrow'".into())
        );
        assert_eq!(
            iso_date_z("2025-13-01"),
            Err("month must be in 1..12".into())
        );
        assert_eq!(
            iso_date_z("2025-02-30"),
            Err("day is out of range for month".into())
        );
        assert_eq!(
            iso_date_z("2025-10-02T25:00:00Z"),
            Err("hour must be in 0..23".into())
        );
    }

    #[test]
    fn tool_list_matches_the_reference_parameters() {
        let d = domain().unwrap();
        let ours: Vec<String> = d
            .tools()
            .iter()
            .map(|t| t.decl.name.clone())
            .filter(|n| !n.starts_with("zendesk_"))
            .collect();
        assert_eq!(ours.len(), 31);
        let Some(s) = testing::session(serde_json::json!({})) else {
            return;
        };
        drop(s);
        let path = std::path::PathBuf::from(
            std::env::var_os("TB_SHARED").unwrap_or_else(|| "../../../shared".into()),
        )
        .join("tb-bench-v1/tools/external_booking_v1.json");
        let Ok(text) = std::fs::read_to_string(&path) else {
            return;
        };
        let reference: Value = serde_json::from_str(&text).unwrap();
        let list = d.tool_list();
        let mut names = Vec::new();
        for t in reference["tools"].as_array().unwrap() {
            let name = t["name"].as_str().unwrap();
            if name.starts_with("zendesk_") {
                continue;
            }
            names.push(name.to_string());
            let ours = list
                .iter()
                .find(|x| x["name"] == name)
                .unwrap_or_else(|| panic!("{name} missing"));
            let (rs, os) = (&t["input_schema"], &ours["inputSchema"]);
            assert_eq!(rs["required"], os["required"], "{name} required");
            assert_eq!(
                rs.get("additionalProperties"),
                os.get("additionalProperties"),
                "{name} extra"
            );
            let rp = rs["properties"].as_object().unwrap();
            let op = os["properties"].as_object().unwrap();
            assert_eq!(
                rp.keys().collect::<Vec<_>>(),
                op.keys().collect::<Vec<_>>(),
                "{name} parameters"
            );
            for (k, v) in rp {
                let o = &op[k];
                assert_eq!(v.get("default"), o.get("default"), "{name}.{k} default");
                assert_eq!(v.get("enum"), o.get("enum"), "{name}.{k} enum");
                assert_eq!(v.get("type"), o.get("type"), "{name}.{k} type");
            }
        }
        assert_eq!(names, ours, "tool order");
    }
}
