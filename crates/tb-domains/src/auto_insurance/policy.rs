//! The policy toolset: policies, vehicles, drivers and document links.

use super::{field, get_row, hash_id, opt, opt_bool, out, req, val};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError, ToolFn};

const POLICIES: &str = "policy_policies";
const VEHICLES: &str = "policy_vehicles";
const DRIVERS: &str = "policy_drivers";
const DOCUMENTS: &str = "policy_policy_documents";

pub(super) fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![
        ("policy_add_driver", add_driver),
        ("policy_add_vehicle", add_vehicle),
        ("policy_generate_document_link", generate_document_link),
        ("policy_get_policy_details", get_policy_details),
        ("policy_get_policy_drivers", get_policy_drivers),
        ("policy_get_policy_vehicles", get_policy_vehicles),
        ("policy_get_vehicle_details", get_vehicle_details),
        ("policy_reinstate_policy", reinstate_policy),
        ("policy_schedule_cancellation", schedule_cancellation),
        ("policy_update_driver_status", update_driver_status),
        ("policy_update_vehicle_status", update_vehicle_status),
    ]
}

/// The policy row, or the reference's "not found" error.
fn policy(s: &Session, id: &str) -> Result<serde_json::Map<String, Value>, ToolError> {
    get_row(s, POLICIES, id)?
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
    let policy_id = req(a, "policy_id")?;
    let name = req(a, "name")?;
    let dob = req(a, "date_of_birth")?;
    policy(s, policy_id)?;
    let taken = s.state.rows(DRIVERS)?.iter().any(|d| {
        field(d, "policy_id") == policy_id
            && field(d, "name") == name
            && field(d, "date_of_birth") == dob
    });
    if taken {
        return Err(ToolError::new(format!(
            "Driver with name '{name}' and DOB '{dob}' already exists on this policy"
        )));
    }
    let id = hash_id("DRV-2-", &format!("{policy_id}_{name}_{dob}"), 8);
    if let Some(existing) = get_row(s, DRIVERS, &id)? {
        return Ok(json!({"driver_id": val(&existing, "id"), "status": val(&existing, "status")}));
    }
    let status = val(a, "status");
    s.insert(
        DRIVERS,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "name": name,
            "date_of_birth": dob,
            "license_number": val(a, "license_number"),
            "license_state": val(a, "license_state"),
            "relationship": val(a, "relationship"),
            "status": status,
            "effective_date": val(a, "effective_date"),
            "is_named_insured": false,
            "is_co_insured": false,
            "uw_pending": opt_bool(a, "uw_pending").unwrap_or(false),
            "exclusion_form_required": opt_bool(a, "exclusion_form_required").unwrap_or(false),
        }),
    )?;
    Ok(json!({"driver_id": id, "status": status}))
}

fn add_vehicle(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = req(a, "policy_id")?;
    let vin = req(a, "vin")?;
    policy(s, policy_id)?;
    if s.state
        .rows(VEHICLES)?
        .iter()
        .any(|v| field(v, "policy_id") == policy_id && field(v, "vin") == vin)
    {
        return Err(ToolError::new(format!(
            "VIN '{vin}' already exists on this policy"
        )));
    }
    let id = hash_id("VEH-2-", &format!("{policy_id}_{vin}"), 8);
    if let Some(existing) = get_row(s, VEHICLES, &id)? {
        return Ok(json!({"vehicle_id": val(&existing, "id")}));
    }
    let effective = val(a, "effective_date");
    s.insert(
        VEHICLES,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "vin": vin,
            "year": val(a, "year"),
            "make": val(a, "make"),
            "model": val(a, "model"),
            "status": "Active",
            "effective_date": effective,
            "date_added_to_policy": effective,
            "collision_coverage": true,
            "comprehensive_coverage": true,
            "rental_coverage": false,
            "uw_pending": opt_bool(a, "uw_pending").unwrap_or(false),
        }),
    )?;
    Ok(json!({"vehicle_id": id}))
}

fn generate_document_link(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = req(a, "policy_id")?;
    let doc_type = req(a, "document_type")?;
    let ticket_id = req(a, "ticket_id")?;
    let expiration = req(a, "expiration_date")?;
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
    if let Some(existing) = get_row(s, DOCUMENTS, &id)? {
        return Ok(json!({
            "document_id": val(&existing, "id"),
            "url": val(&existing, "url"),
            "expires_at": val(&existing, "expires_at"),
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
    let p = policy(s, req(a, "policy_id")?)?;
    Ok(out(vec![
        ("policy_id", val(&p, "id")),
        ("customer_id", val(&p, "customer_id")),
        ("status", val(&p, "status")),
        ("state", val(&p, "state")),
        ("effective_date", val(&p, "effective_date")),
        ("expiration_date", val(&p, "expiration_date")),
        ("renewal_date", val(&p, "renewal_date")),
        ("cancellation_date", val(&p, "cancellation_date")),
        ("cancellation_reason", val(&p, "cancellation_reason")),
        ("named_insured_id", val(&p, "named_insured_id")),
        ("co_insured_id", val(&p, "co_insured_id")),
        (
            "automatic_extension_days",
            val(&p, "automatic_extension_days"),
        ),
        (
            "at_fault_claims_3_years",
            val(&p, "at_fault_claims_3_years"),
        ),
        ("lapse_flag", val(&p, "lapse_flag")),
    ]))
}

fn get_policy_drivers(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = req(a, "policy_id")?;
    policy(s, policy_id)?;
    let active_only = opt_bool(a, "active_only").unwrap_or(false);
    let drivers: Vec<Value> = s
        .state
        .rows(DRIVERS)?
        .iter()
        .filter(|d| field(d, "policy_id") == policy_id)
        .filter(|d| !active_only || matches!(field(d, "status"), "Rated" | "Excluded"))
        .map(|d| {
            json!({
                "id": val(d, "id"),
                "name": val(d, "name"),
                "date_of_birth": val(d, "date_of_birth"),
                "status": val(d, "status"),
                "effective_date": val(d, "effective_date"),
                "is_named_insured": val(d, "is_named_insured"),
                "is_co_insured": val(d, "is_co_insured"),
            })
        })
        .collect();
    let n = drivers.len();
    Ok(json!({"drivers": drivers, "driver_count": n}))
}

fn get_policy_vehicles(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = req(a, "policy_id")?;
    policy(s, policy_id)?;
    let active_only = opt_bool(a, "active_only").unwrap_or(false);
    let vehicles: Vec<Value> = s
        .state
        .rows(VEHICLES)?
        .iter()
        .filter(|v| field(v, "policy_id") == policy_id)
        .filter(|v| !active_only || field(v, "status") == "Active")
        .map(|v| {
            json!({
                "id": val(v, "id"),
                "vin": val(v, "vin"),
                "year": val(v, "year"),
                "make": val(v, "make"),
                "model": val(v, "model"),
                "status": val(v, "status"),
                "effective_date": val(v, "effective_date"),
            })
        })
        .collect();
    let n = vehicles.len();
    Ok(json!({"vehicles": vehicles, "vehicle_count": n}))
}

fn get_vehicle_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = req(a, "vehicle_id")?;
    let v = get_row(s, VEHICLES, id)?
        .ok_or_else(|| ToolError::new(format!("Vehicle with ID '{id}' not found")))?;
    Ok(json!({
        "vehicle_id": val(&v, "id"),
        "policy_id": val(&v, "policy_id"),
        "vin": val(&v, "vin"),
        "year": val(&v, "year"),
        "make": val(&v, "make"),
        "model": val(&v, "model"),
        "status": val(&v, "status"),
        "effective_date": val(&v, "effective_date"),
        "date_added_to_policy": val(&v, "date_added_to_policy"),
        "collision_coverage": val(&v, "collision_coverage"),
        "comprehensive_coverage": val(&v, "comprehensive_coverage"),
        "rental_coverage": val(&v, "rental_coverage"),
        "uw_pending": val(&v, "uw_pending"),
    }))
}

fn reinstate_policy(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut p = policy(s, req(a, "policy_id")?)?;
    let lapse = opt_bool(a, "lapse_flag").unwrap_or(false);
    p.insert("status".into(), json!("Active"));
    p.insert("cancellation_date".into(), Value::Null);
    p.insert("cancellation_reason".into(), Value::Null);
    p.insert("lapse_flag".into(), json!(lapse));
    if lapse {
        p.insert(
            "lapse_start".into(),
            opt(a, "lapse_start").map_or(Value::Null, |x| json!(x)),
        );
        p.insert(
            "lapse_end".into(),
            opt(a, "lapse_end").map_or(Value::Null, |x| json!(x)),
        );
    }
    let p = s.replace(POLICIES, &Value::Object(p))?;
    Ok(
        json!({"policy_id": val(&p, "id"), "status": val(&p, "status"), "lapse_flag": val(&p, "lapse_flag")}),
    )
}

fn schedule_cancellation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut p = policy(s, req(a, "policy_id")?)?;
    p.insert("status".into(), json!("Pending Cancellation"));
    p.insert("cancellation_date".into(), val(a, "cancellation_date"));
    p.insert("cancellation_reason".into(), val(a, "cancellation_reason"));
    let p = s.replace(POLICIES, &Value::Object(p))?;
    Ok(json!({"policy_id": val(&p, "id"), "status": val(&p, "status")}))
}

fn update_driver_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = req(a, "driver_id")?;
    let mut d = get_row(s, DRIVERS, id)?
        .ok_or_else(|| ToolError::new(format!("Driver with ID '{id}' not found")))?;
    let status = req(a, "new_status")?;
    let effective = val(a, "effective_date");
    d.insert("status".into(), json!(status));
    d.insert("effective_date".into(), effective.clone());
    if status == "Removed" {
        d.insert("removal_date".into(), effective);
    }
    let d = s.replace(DRIVERS, &Value::Object(d))?;
    Ok(json!({"driver_id": val(&d, "id"), "status": val(&d, "status")}))
}

fn update_vehicle_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = req(a, "vehicle_id")?;
    let mut v = get_row(s, VEHICLES, id)?
        .ok_or_else(|| ToolError::new(format!("Vehicle with ID '{id}' not found")))?;
    let status = req(a, "new_status")?;
    v.insert("status".into(), json!(status));
    if status == "Removed" {
        v.insert("removal_date".into(), val(a, "effective_date"));
    }
    let v = s.replace(VEHICLES, &Value::Object(v))?;
    Ok(json!({"vehicle_id": val(&v, "id"), "status": val(&v, "status")}))
}

#[cfg(test)]
mod tests {
    use super::super::testutil::*;
    use serde_json::json;

    #[test]
    fn unknown_ids_fail_as_the_reference() {
        let mut s = session(book());
        assert_eq!(
            err(
                &mut s,
                "policy_get_policy_details",
                json!({"policy_id": "POL-X"})
            ),
            "Tool execution failed: Policy with ID 'POL-X' not found"
        );
        assert_eq!(
            err(
                &mut s,
                "policy_get_vehicle_details",
                json!({"vehicle_id": "VEH-X"})
            ),
            "Tool execution failed: Vehicle with ID 'VEH-X' not found"
        );
        assert_eq!(
            err(
                &mut s,
                "policy_update_driver_status",
                json!({"driver_id": "D", "new_status": "Removed", "effective_date": "2025-01-01"})
            ),
            "Tool execution failed: Driver with ID 'D' not found"
        );
    }

    #[test]
    fn details_drop_null_fields() {
        let mut s = session(book());
        let r = ok(
            &mut s,
            "policy_get_policy_details",
            json!({"policy_id": "POL-1"}),
        );
        assert_eq!(r["status"], "Cancelled for Non-Payment");
        assert!(r.get("co_insured_id").is_none());
        assert!(r.get("lapse_start").is_none());
        assert_eq!(r["automatic_extension_days"], 14);
    }

    #[test]
    fn add_vehicle_is_hash_keyed_and_refuses_a_vin_twice() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "vin": "5YJ3E1EA7KF000001", "year": "2019", "make": "Tesla", "model": "3", "effective_date": "2025-05-05"});
        let r = ok(&mut s, "policy_add_vehicle", args.clone());
        let id = super::super::hash_id("VEH-2-", "POL-1_5YJ3E1EA7KF000001", 8);
        assert_eq!(r, json!({"vehicle_id": id}));
        let row = s.state.get("policy_vehicles", &json!(id)).unwrap().unwrap();
        assert_eq!(row["year"], json!(2019));
        assert_eq!(row["uw_pending"], json!(false));
        assert_eq!(row["date_added_to_policy"], json!("2025-05-05"));
        assert_eq!(
            err(&mut s, "policy_add_vehicle", args),
            "Tool execution failed: VIN '5YJ3E1EA7KF000001' already exists on this policy"
        );
        assert_eq!(
            err(
                &mut s,
                "policy_add_vehicle",
                json!({"policy_id": "POL-1", "vin": "V", "make": "x", "model": "y", "effective_date": "z"})
            ),
            "Tool execution failed: Input validation failed: year: Field required"
        );
    }

    #[test]
    fn add_driver_refuses_same_name_and_birth_date() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "name": "Bo Lee", "date_of_birth": "2008-01-01", "relationship": "Son", "status": "Excluded", "effective_date": "2025-05-05", "uw_pending": null});
        let r = ok(&mut s, "policy_add_driver", args.clone());
        assert_eq!(r["status"], "Excluded");
        let row = s
            .state
            .get("policy_drivers", &r["driver_id"])
            .unwrap()
            .unwrap()
            .clone();
        assert_eq!(row["uw_pending"], json!(false));
        assert_eq!(row["customer_id"], json!(null));
        assert_eq!(
            err(&mut s, "policy_add_driver", args),
            "Tool execution failed: Driver with name 'Bo Lee' and DOB '2008-01-01' already exists on this policy"
        );
        assert_eq!(
            err(
                &mut s,
                "policy_add_driver",
                json!({"policy_id": "POL-9", "name": "A", "date_of_birth": "1", "relationship": "r", "status": "Rated", "effective_date": "e"})
            ),
            "Tool execution failed: Policy with ID 'POL-9' not found"
        );
    }

    #[test]
    fn document_links_use_the_enum_member_name_and_are_idempotent() {
        let mut s = session(book());
        let args = json!({"policy_id": "POL-1", "document_type": "id_card", "ticket_id": "7", "expiration_date": "2025-12-01T00:00:00Z"});
        let r = ok(&mut s, "policy_generate_document_link", args.clone());
        assert_eq!(
            r["document_id"],
            json!(super::super::hash_id(
                "DOC-2-",
                "POL-1_DocumentType.ID_CARD_7",
                8
            ))
        );
        assert_eq!(
            r["url"],
            "https://portal.horizonshield.com/docs/secure/POL-1_id_card_7"
        );
        assert_eq!(ok(&mut s, "policy_generate_document_link", args), r);
        assert_eq!(s.state.count("policy_policy_documents").unwrap(), 1);
        assert_eq!(
            err(
                &mut s,
                "policy_generate_document_link",
                json!({"policy_id": "POL-1", "document_type": "id_card", "ticket_id": "7", "expiration_date": "next week"})
            ),
            "Tool execution failed: Invalid expiration_date format: 'next week'. Expected ISO 8601 format (e.g., '2024-01-16T10:05:00Z')"
        );
        assert!(err(&mut s, "policy_generate_document_link", json!({"policy_id": "POL-1", "document_type": "pdf", "ticket_id": "7", "expiration_date": "x"})).contains("document_type: Input should be 'proof_of_insurance', 'declarations_page' or 'id_card'"));
    }

    #[test]
    fn an_existing_hash_id_is_returned_as_is() {
        // A row already holding the id the inputs hash to (but another VIN) is returned, not duplicated.
        let id = super::super::hash_id("VEH-2-", "POL-1_NEWVIN", 8);
        let mut book = book();
        let mut other = book["policy_vehicles"][0].clone();
        other["id"] = json!(id);
        other["vin"] = json!("OTHERVIN");
        book["policy_vehicles"].as_array_mut().unwrap().push(other);
        let mut s = session(book);
        let args = json!({"policy_id": "POL-1", "vin": "NEWVIN", "year": 2020, "make": "m", "model": "m", "effective_date": "2025-01-01"});
        assert_eq!(
            ok(&mut s, "policy_add_vehicle", args),
            json!({"vehicle_id": id})
        );
        assert_eq!(s.state.count("policy_vehicles").unwrap(), 2);
    }

    #[test]
    fn status_changes_and_reinstatement() {
        let mut s = session(book());
        let r = ok(
            &mut s,
            "policy_reinstate_policy",
            json!({"policy_id": "POL-1", "lapse_flag": true, "lapse_start": "2025-06-01", "lapse_end": "2025-06-03"}),
        );
        assert_eq!(
            r,
            json!({"policy_id": "POL-1", "status": "Active", "lapse_flag": true})
        );
        let p = s
            .state
            .get("policy_policies", &json!("POL-1"))
            .unwrap()
            .unwrap();
        assert_eq!(p["cancellation_reason"], json!(null));
        assert_eq!(p["lapse_end"], json!("2025-06-03"));
        ok(
            &mut s,
            "policy_schedule_cancellation",
            json!({"policy_id": "POL-1", "cancellation_date": "2025-07-01", "cancellation_reason": "Fraud"}),
        );
        assert_eq!(
            s.state
                .get("policy_policies", &json!("POL-1"))
                .unwrap()
                .unwrap()["status"],
            json!("Pending Cancellation")
        );
        ok(
            &mut s,
            "policy_update_vehicle_status",
            json!({"vehicle_id": "VEH-1", "new_status": "Removed", "effective_date": "2025-07-02"}),
        );
        let v = s
            .state
            .get("policy_vehicles", &json!("VEH-1"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                v["status"].clone(),
                v["removal_date"].clone(),
                v["effective_date"].clone()
            ),
            (json!("Removed"), json!("2025-07-02"), json!("2025-01-01"))
        );
        ok(
            &mut s,
            "policy_update_driver_status",
            json!({"driver_id": "DRV-1", "new_status": "Removed", "effective_date": "2025-07-03"}),
        );
        let d = s
            .state
            .get("policy_drivers", &json!("DRV-1"))
            .unwrap()
            .unwrap();
        assert_eq!(
            (d["removal_date"].clone(), d["effective_date"].clone()),
            (json!("2025-07-03"), json!("2025-07-03"))
        );
        assert_eq!(
            ok(
                &mut s,
                "policy_get_policy_drivers",
                json!({"policy_id": "POL-1", "active_only": true})
            )["driver_count"],
            0
        );
        assert_eq!(
            ok(
                &mut s,
                "policy_get_policy_vehicles",
                json!({"policy_id": "POL-1"})
            )["vehicle_count"],
            1
        );
    }
}
