//! The policy toolset: policies, vehicles, drivers and document links.

use super::hash_id;
use super::tables::{DOCUMENTS, DRIVERS, POLICIES, VEHICLES};
use crate::vocab::{SessionRows, project_as, select};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Row, Session, ToolError, Tools};

pub(super) fn register(t: &mut Tools) {
    t.add("policy_add_driver", add_driver)
        .add("policy_add_vehicle", add_vehicle)
        .add("policy_generate_document_link", generate_document_link)
        .add("policy_get_policy_details", get_policy_details)
        .add("policy_get_policy_drivers", get_policy_drivers)
        .add("policy_get_policy_vehicles", get_policy_vehicles)
        .add("policy_get_vehicle_details", get_vehicle_details)
        .add("policy_reinstate_policy", reinstate_policy)
        .add("policy_schedule_cancellation", schedule_cancellation)
        .add("policy_update_driver_status", update_driver_status)
        .add("policy_update_vehicle_status", update_vehicle_status);
}

/// The policy row, or the reference's "not found" error.
fn policy(s: &Session, id: &str) -> Result<serde_json::Map<String, Value>, ToolError> {
    s.row_by_id(POLICIES, id)?
        .ok_or_else(|| ToolError::new(format!("Policy with ID '{id}' not found")))
}

/// The Python name of a `DocumentType` member, as an f-string prints it on Python 3.11.
fn document_type_member(value: &str) -> &'static str {
    match value {
        "proof_of_insurance" => "DocumentType.PROOF_OF_INSURANCE",
        "declarations_page" => "DocumentType.DECLARATIONS_PAGE",
        _ => "DocumentType.ID_CARD",
    }
}

fn add_driver(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    let name = a.require_str("name")?;
    let dob = a.require_str("date_of_birth")?;
    policy(s, policy_id)?;
    let taken = s.state.rows(DRIVERS)?.iter().any(|d| {
        d.str_or_empty("policy_id") == policy_id
            && d.str_or_empty("name") == name
            && d.str_or_empty("date_of_birth") == dob
    });
    if taken {
        return Err(ToolError::new(format!(
            "Driver with name '{name}' and DOB '{dob}' already exists on this policy"
        )));
    }
    let id = hash_id("DRV-2-", &format!("{policy_id}_{name}_{dob}"), 8);
    if let Some(existing) = s.row_by_id(DRIVERS, &id)? {
        return Ok(json!({"driver_id": existing.value("id"), "status": existing.value("status")}));
    }
    let status = a.value("status");
    s.insert(
        DRIVERS,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "name": name,
            "date_of_birth": dob,
            "license_number": a.value("license_number"),
            "license_state": a.value("license_state"),
            "relationship": a.value("relationship"),
            "status": status,
            "effective_date": a.value("effective_date"),
            "is_named_insured": false,
            "is_co_insured": false,
            "uw_pending": a.opt_bool("uw_pending").unwrap_or(false),
            "exclusion_form_required": a.opt_bool("exclusion_form_required").unwrap_or(false),
        }),
    )?;
    Ok(json!({"driver_id": id, "status": status}))
}

fn add_vehicle(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    let vin = a.require_str("vin")?;
    policy(s, policy_id)?;
    if s.state
        .rows(VEHICLES)?
        .iter()
        .any(|v| v.str_or_empty("policy_id") == policy_id && v.str_or_empty("vin") == vin)
    {
        return Err(ToolError::new(format!(
            "VIN '{vin}' already exists on this policy"
        )));
    }
    let id = hash_id("VEH-2-", &format!("{policy_id}_{vin}"), 8);
    if let Some(existing) = s.row_by_id(VEHICLES, &id)? {
        return Ok(json!({"vehicle_id": existing.value("id")}));
    }
    let effective = a.value("effective_date");
    s.insert(
        VEHICLES,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "vin": vin,
            "year": a.value("year"),
            "make": a.value("make"),
            "model": a.value("model"),
            "status": "Active",
            "effective_date": effective,
            "date_added_to_policy": effective,
            "collision_coverage": true,
            "comprehensive_coverage": true,
            "rental_coverage": false,
            "uw_pending": a.opt_bool("uw_pending").unwrap_or(false),
        }),
    )?;
    Ok(json!({"vehicle_id": id}))
}

fn generate_document_link(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    let doc_type = a.require_str("document_type")?;
    let ticket_id = a.require_str("ticket_id")?;
    let expiration = a.require_str("expiration_date")?;
    policy(s, policy_id)?;
    if tb_python::datetime::fromisoformat_z(expiration).is_err() {
        return Err(ToolError::new(format!(
            "Invalid expiration_date format: '{expiration}'. Expected ISO 8601 format (e.g., '2024-01-16T10:05:00Z')"
        )));
    }
    let url =
        format!("https://portal.horizonshield.com/docs/secure/{policy_id}_{doc_type}_{ticket_id}");
    let id = hash_id(
        "DOC-2-",
        &format!("{policy_id}_{}_{ticket_id}", document_type_member(doc_type)),
        8,
    );
    if let Some(existing) = s.row_by_id(DOCUMENTS, &id)? {
        return Ok(json!({
            "document_id": existing.value("id"),
            "url": existing.value("url"),
            "expires_at": existing.value("expires_at"),
        }));
    }
    s.insert(
        DOCUMENTS,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "ticket_id": ticket_id,
            "document_type": doc_type,
            "url": url,
            "created_at": expiration,
            "expires_at": expiration,
        }),
    )?;
    Ok(json!({"document_id": id, "url": url, "expires_at": expiration}))
}

fn get_policy_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let p = policy(s, a.require_str("policy_id")?)?;
    Ok(project_as(
        &p,
        "policy_id",
        &[
            "customer_id",
            "status",
            "state",
            "effective_date",
            "expiration_date",
            "renewal_date",
            "cancellation_date",
            "cancellation_reason",
            "named_insured_id",
            "co_insured_id",
            "automatic_extension_days",
            "at_fault_claims_3_years",
            "lapse_flag",
        ],
        &[],
    ))
}

fn get_policy_drivers(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let fields = [
        "id",
        "name",
        "date_of_birth",
        "status",
        "effective_date",
        "is_named_insured",
        "is_co_insured",
    ];
    let active = |d: &Row| matches!(d.str_or_empty("status"), "Rated" | "Excluded");
    on_policy(s, a, DRIVERS, active, &fields, ["drivers", "driver_count"])
}

fn get_policy_vehicles(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let fields = [
        "id",
        "vin",
        "year",
        "make",
        "model",
        "status",
        "effective_date",
    ];
    let active = |v: &Row| v.str_or_empty("status") == "Active";
    on_policy(
        s,
        a,
        VEHICLES,
        active,
        &fields,
        ["vehicles", "vehicle_count"],
    )
}

/// The rows of `table` on the policy `policy_id` (only the `active` ones with `active_only`),
/// each with `fields` (nulls kept), and their count: `{list: [...], count: n}`.
fn on_policy(
    s: &Session,
    a: &Args,
    table: &str,
    active: impl Fn(&Row) -> bool,
    fields: &[&str],
    [list, count]: [&str; 2],
) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    policy(s, policy_id)?;
    let active_only = a.opt_bool("active_only").unwrap_or(false);
    let rows: Vec<Value> = s
        .rows_where(table, |r| r.str_or_empty("policy_id") == policy_id)?
        .filter(|r| !active_only || active(r))
        .map(|r| select(r, fields))
        .collect();
    let n = rows.len();
    Ok(json!({list: rows, count: n}))
}

fn get_vehicle_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.require_str("vehicle_id")?;
    let v = s
        .row_by_id(VEHICLES, id)?
        .ok_or_else(|| ToolError::new(format!("Vehicle with ID '{id}' not found")))?;
    Ok(json!({
        "vehicle_id": v.value("id"),
        "policy_id": v.value("policy_id"),
        "vin": v.value("vin"),
        "year": v.value("year"),
        "make": v.value("make"),
        "model": v.value("model"),
        "status": v.value("status"),
        "effective_date": v.value("effective_date"),
        "date_added_to_policy": v.value("date_added_to_policy"),
        "collision_coverage": v.value("collision_coverage"),
        "comprehensive_coverage": v.value("comprehensive_coverage"),
        "rental_coverage": v.value("rental_coverage"),
        "uw_pending": v.value("uw_pending"),
    }))
}

fn reinstate_policy(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut p = policy(s, a.require_str("policy_id")?)?;
    let lapse = a.opt_bool("lapse_flag").unwrap_or(false);
    p.insert("status".into(), json!("Active"));
    p.insert("cancellation_date".into(), Value::Null);
    p.insert("cancellation_reason".into(), Value::Null);
    p.insert("lapse_flag".into(), json!(lapse));
    if lapse {
        p.insert(
            "lapse_start".into(),
            a.opt_str("lapse_start").map_or(Value::Null, |x| json!(x)),
        );
        p.insert(
            "lapse_end".into(),
            a.opt_str("lapse_end").map_or(Value::Null, |x| json!(x)),
        );
    }
    let p = s.replace(POLICIES, &Value::Object(p))?;
    Ok(
        json!({"policy_id": p.value("id"), "status": p.value("status"), "lapse_flag": p.value("lapse_flag")}),
    )
}

fn schedule_cancellation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut p = policy(s, a.require_str("policy_id")?)?;
    p.insert("status".into(), json!("Pending Cancellation"));
    p.insert("cancellation_date".into(), a.value("cancellation_date"));
    p.insert("cancellation_reason".into(), a.value("cancellation_reason"));
    let p = s.replace(POLICIES, &Value::Object(p))?;
    Ok(json!({"policy_id": p.value("id"), "status": p.value("status")}))
}

fn update_driver_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.require_str("driver_id")?;
    let mut d = s
        .row_by_id(DRIVERS, id)?
        .ok_or_else(|| ToolError::new(format!("Driver with ID '{id}' not found")))?;
    let status = a.require_str("new_status")?;
    let effective = a.value("effective_date");
    d.insert("status".into(), json!(status));
    d.insert("effective_date".into(), effective.clone());
    if status == "Removed" {
        d.insert("removal_date".into(), effective);
    }
    let d = s.replace(DRIVERS, &Value::Object(d))?;
    Ok(json!({"driver_id": d.value("id"), "status": d.value("status")}))
}

fn update_vehicle_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.require_str("vehicle_id")?;
    let mut v = s
        .row_by_id(VEHICLES, id)?
        .ok_or_else(|| ToolError::new(format!("Vehicle with ID '{id}' not found")))?;
    let status = a.require_str("new_status")?;
    v.insert("status".into(), json!(status));
    if status == "Removed" {
        v.insert("removal_date".into(), a.value("effective_date"));
    }
    let v = s.replace(VEHICLES, &Value::Object(v))?;
    Ok(json!({"vehicle_id": v.value("id"), "status": v.value("status")}))
}
