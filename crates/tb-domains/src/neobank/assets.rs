//! Asset management: employee devices, device details, warehouse inventory, assignment and
//! retirement of hardware.

use super::{DEC_17, active_rows, next_id, out, py_repr, require_employee, tables};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_python::datetime::{days_between, fromisoformat_z, strftime_z};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

const DEVICE_TYPES: [&str; 7] = [
    "laptop_standard",
    "laptop_premium",
    "monitor",
    "docking_station",
    "headset",
    "keyboard",
    "mouse",
];
const WAREHOUSES: [&str; 4] = ["sf", "nyc", "austin", "remote_ship"];

/// `int((FIXED_CURRENT_TIME - purchase_date).days / 30)`, the purchase date read as UTC when
/// it has no zone.
fn age_months(asset: &Row) -> Result<i64, ToolError> {
    let raw = asset.str_or_empty("purchase_date");
    let bad = || {
        ToolError::new(format!(
            "Invalid purchase_date for asset {}: {}",
            asset.str_or_empty("id"),
            py_repr(raw)
        ))
    };
    if raw.is_empty() {
        return Err(bad());
    }
    let mut p = fromisoformat_z(raw).map_err(|_| bad())?;
    if p.offset.is_none() {
        p.offset = Some(0);
    }
    let days = days_between(&DEC_17, &p).ok_or_else(bad)?;
    // `int(days / 30)`: truncation toward zero, as Rust's integer division does (the float
    // quotient of a date difference is never within rounding of an integer it is not).
    Ok(days / 30)
}

fn asset_by_id(s: &Session, id: &str) -> Result<Row, ToolError> {
    s.row_where(tables::ASSETS, |r| r.str_or_empty("id") == id)?
        .cloned()
        .ok_or_else(|| ToolError::new(format!("Asset not found: {id}")))
}

/// The error pydantic raises when an output model gets None for a required str field.
fn none_for_str(model: &str, field: &str) -> ToolError {
    ToolError::new(crate::pydantic::text(
        model,
        &[crate::pydantic::ErrorLine::new(
            field,
            "Input should be a valid string",
            "string_type",
            Value::Null,
        )],
    ))
}

/// `asset_management_api_get_employee_devices`: the assets of the employee's active
/// assignments (assignments to unknown assets are skipped).
pub fn get_employee_devices(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let e = require_employee(s, email, "Employee not found: ")?;
    let eid = e.str_or_empty("id");
    let assets = s.state.rows(tables::ASSETS)?;
    let mut devices = Vec::new();
    for asn in active_rows(s, tables::ASSIGNMENTS, "employee_id", eid)? {
        let Some(asset) = assets
            .iter()
            .find(|x| x.str_or_empty("id") == asn.str_or_empty("asset_id"))
        else {
            continue;
        };
        let age = age_months(asset)?;
        let assigned_at = asn.value("assigned_at");
        if !assigned_at.is_string() {
            return Err(none_for_str("DeviceInfo", "assigned_at"));
        }
        devices.push(json!({
            "asset_id": asset.value("id"),
            "device_type": asset.value("device_type"),
            "device_model": asset.value("device_model"),
            "assigned_at": assigned_at,
            "condition": asset.value("condition"),
            "age_months": age,
        }));
    }
    Ok(json!({ "employee_id": eid, "devices": devices }))
}

/// `asset_management_api_get_device_details`.
pub fn get_device_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let asset = asset_by_id(s, a.str_or_empty("asset_id"))?;
    let age = age_months(&asset)?;
    let mut assigned_to = Value::Null;
    if asset.bool_or_false("is_assigned") {
        let id = asset.str_or_empty("id");
        if let Some(r) = active_rows(s, tables::ASSIGNMENTS, "asset_id", id)?.next() {
            assigned_to = r.value("employee_id");
        }
    }
    Ok(out(vec![
        ("asset_id", asset.value("id")),
        ("device_type", asset.value("device_type")),
        ("device_model", asset.value("device_model")),
        ("purchase_date", asset.value("purchase_date")),
        ("age_months", json!(age)),
        ("condition", asset.value("condition")),
        ("warehouse_location", asset.value("warehouse_location")),
        ("is_assigned", asset.value("is_assigned")),
        ("assigned_to", assigned_to),
    ]))
}

/// `asset_management_api_check_inventory`: non-retired devices of a type at a warehouse, and
/// the unassigned ones in new or good condition.
pub fn check_inventory(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (kind, place) = (
        a.str_or_empty("device_type"),
        a.str_or_empty("warehouse_location"),
    );
    if !DEVICE_TYPES.contains(&kind) {
        return Err(ToolError::new(format!("Invalid device type: {kind}")));
    }
    if !WAREHOUSES.contains(&place) {
        return Err(ToolError::new(format!(
            "Invalid warehouse location: {place}"
        )));
    }
    let matching: Vec<&Row> = s
        .rows_where(tables::ASSETS, |r| {
            r.str_or_empty("device_type") == kind
                && r.str_or_empty("warehouse_location") == place
                && r.str_or_empty("condition") != "retired"
        })?
        .collect();
    let free: Vec<Value> = matching
        .iter()
        .filter(|r| {
            !r.bool_or_false("is_assigned") && matches!(r.str_or_empty("condition"), "new" | "good")
        })
        .map(|r| json!({"device_model": r.value("device_model"), "asset_id": r.value("id")}))
        .collect();
    Ok(json!({
        "device_type": kind,
        "warehouse_location": place,
        "available_count": free.len(),
        "total_count": matching.len(),
        "asset_ids": free,
    }))
}

/// `asset_management_api_assign_device`: a new active assignment `ASN-{n:08d}`, and the asset
/// marked as assigned.
pub fn assign_device(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("email");
    let asset_id = a.str_or_empty("asset_id");
    let e = require_employee(s, email, "Employee not found: ")?;
    let mut asset = asset_by_id(s, asset_id)?;
    if asset.bool_or_false("is_assigned") {
        return Err(ToolError::new(format!(
            "Asset {asset_id} is already assigned"
        )));
    }
    if asset.str_or_empty("condition") == "retired" {
        return Err(ToolError::new(format!(
            "Cannot assign retired asset: {asset_id}"
        )));
    }
    let id = next_id(s, tables::ASSIGNMENTS, "ASN-", 8)?;
    s.insert(
        tables::ASSIGNMENTS,
        &json!({"id": id, "asset_id": asset.value("id"), "employee_id": e.value("id"), "assigned_at": null, "assigned_by": "system", "is_active": true}),
    )?;
    asset.insert("is_assigned".into(), json!(true));
    s.replace(tables::ASSETS, &Value::Object(asset.clone()))?;
    Ok(json!({"assignment_id": id, "asset_id": asset.value("id"), "employee_id": e.value("id")}))
}

/// `asset_management_api_retire_device`: condition becomes retired, active assignments are
/// closed with `returned_at` = 2025-12-17T10:00:00Z.
pub fn retire_device(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let asset_id = a.str_or_empty("asset_id");
    let mut asset = asset_by_id(s, asset_id)?;
    if asset.str_or_empty("condition") == "retired" {
        return Err(ToolError::new(format!(
            "Asset {asset_id} is already retired"
        )));
    }
    let previous = asset.value("condition");
    let was_assigned = asset.bool_or_false("is_assigned");
    let stamp = strftime_z(&DEC_17);
    if was_assigned {
        let id = asset.str_or_empty("id").to_string();
        let open: Vec<Row> = active_rows(s, tables::ASSIGNMENTS, "asset_id", &id)?
            .cloned()
            .collect();
        for mut r in open {
            r.insert("is_active".into(), json!(false));
            r.insert("returned_at".into(), json!(stamp));
            s.replace(tables::ASSIGNMENTS, &Value::Object(r))?;
        }
    }
    asset.insert("condition".into(), json!("retired"));
    asset.insert("is_assigned".into(), json!(false));
    s.replace(tables::ASSETS, &Value::Object(asset.clone()))?;
    Ok(
        json!({"asset_id": asset.value("id"), "previous_condition": previous, "retired_at": stamp, "was_assigned": was_assigned}),
    )
}
