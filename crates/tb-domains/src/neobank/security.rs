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

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::super::testutil::{call, session};
    use serde_json::json;

    fn incident(
        id: &str,
        active: bool,
        reported: &str,
        resolved: Option<&str>,
    ) -> serde_json::Value {
        json!({"id": id, "employee_id": "WD-1", "severity": "SEV2", "incident_type": "t", "description": "d",
               "status": "open", "is_active": active, "reported_at": reported, "reported_by": "x", "resolved_at": resolved})
    }

    #[tb_test_support::data_test]
    #[test]
    fn active_and_recently_closed_newest_first() {
        let mut s = session(json!({tables::INCIDENTS: [
            incident("SEC-A", false, "2025-12-16T00:00:00Z", Some("2025-12-17T10:00:00Z")),
            incident("SEC-B", false, "2025-12-16T00:00:00Z", Some("2025-12-17T09:59:59Z")),
            incident("SEC-C", true, "2025-12-18T01:00:00+02:00", None),
        ]}));
        let r = call(&mut s, "security_api_verify_incident", json!({}));
        let list = r["incidents"].as_array().unwrap();
        assert_eq!(list[0]["incident_id"], "SEC-C");
        assert_eq!(list[0]["started_at"], "2025-12-18T01:00:00+02:00");
        assert!(list[0].get("closed_at").is_none());
        let a = list.iter().find(|i| i["incident_id"] == "SEC-A").unwrap();
        assert_eq!(a["closed_at"], "2025-12-17T10:00:00+00:00");
        assert!(!list.iter().any(|i| i["incident_id"] == "SEC-B"));
        calls!(s;
            "security_api_verify_incident" {"since": "x"} => error "Tool execution failed: Input validation failed: since: Extra inputs are not permitted";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn naive_resolution_time_fails_like_python() {
        let mut s = session(
            json!({tables::INCIDENTS: [incident("SEC-N", false, "2025-12-16T00:00:00Z", Some("2025-12-17T10:00:00"))]}),
        );
        calls!(s;
            "security_api_verify_incident" {} => error "Tool execution failed: Failed to retrieve security incidents: can't compare offset-naive and offset-aware datetimes";
        );
    }
}
