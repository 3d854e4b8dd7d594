//! Security incidents: the active and recently closed ones.

use super::{DEC_18, out, tables};
use serde_json::{Value, json};
use tb_python::datetime::parse_datetime;
use tb_python::datetime::{add_hours, isoformat_field, micros};
use tb_sandbox::{Args, Fields, Session, ToolError};

fn failed(m: &str) -> ToolError {
    ToolError::new(format!("Failed to retrieve security incidents: {m}"))
}

/// `security_api_verify_incident`: active incidents, and inactive ones resolved at or after
/// 2025-12-17T10:00:00Z (24 hours before the fixed now), sorted by start time, newest first.
pub fn verify_incident(s: &mut Session, _a: &Args) -> Result<Value, ToolError> {
    let threshold = add_hours(&DEC_18, -24).map_err(|m| failed(&m))?;
    let threshold = micros(&threshold).unwrap_or(i64::MIN);
    let mut records: Vec<(String, Value)> = Vec::new();
    for inc in s.state.rows(tables::INCIDENTS)? {
        let resolved = inc.get("resolved_at").filter(|v| !v.is_null());
        let keep = if inc.bool_or_false("is_active") {
            true
        } else if let Some(r) = resolved.and_then(Value::as_str).and_then(parse_datetime) {
            if r.offset.is_none() {
                return Err(failed(
                    "can't compare offset-naive and offset-aware datetimes",
                ));
            }
            micros(&r).is_some_and(|m| m >= threshold)
        } else {
            false
        };
        if !keep {
            continue;
        }
        let started = match isoformat_field(inc, "reported_at") {
            Value::String(t) => t,
            _ => String::new(),
        };
        let record = out(vec![
            ("incident_id", inc.value("id")),
            ("severity", inc.value("severity")),
            ("description", inc.value("description")),
            ("started_at", json!(started)),
            ("is_active", inc.value("is_active")),
            ("closed_at", isoformat_field(inc, "resolved_at")),
        ]);
        records.push((started, record));
    }
    // Python's stable sort with reverse=True keeps equal keys in their original order.
    records.sort_by(|a, b| b.0.cmp(&a.0));
    Ok(json!({ "incidents": records.into_iter().map(|(_, r)| r).collect::<Vec<_>>() }))
}
