//! IT asset management: devices, inventory, reservations and assignments.

use super::tables::{ASSET_MANAGEMENT_DEVICE_ASSIGNMENTS, ASSET_MANAGEMENT_DEVICES};
use super::{employee_rows, insert_probed};
use crate::vocab::{SessionRows, Shown, project};
use serde_json::{Map, Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// A device as `get_device_details` shows it.
const DEVICE: Shown = Shown {
    table: ASSET_MANAGEMENT_DEVICES,
    what: "Device",
    fields: &[
        "id",
        "device_type",
        "model",
        "age_months",
        "inventory_status",
        "location",
    ],
    datetimes: &[],
};

/// `asset_management_api`: `get_employee_devices`, `get_device_details`, `check_inventory`,
/// `reserve_device`, `assign_device`, `retire_device`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_employee_devices" => {
            let email = a.require_str_nonempty("email")?;
            let devices: Vec<Value> = employee_rows(s, ASSET_MANAGEMENT_DEVICE_ASSIGNMENTS, email)?
                .filter(|r| r.is_none("returned_at"))
                .map(|r| {
                    project(
                        r,
                        &["id", "asset_id", "employee_email", "returned_at"],
                        &["returned_at"],
                    )
                })
                .collect();
            Ok(json!({ "devices": devices }))
        }
        "get_device_details" => DEVICE.answer(s, a, "asset_id", "device_data"),
        "check_inventory" => {
            let (kind, location) = (
                a.require_str_nonempty("device_type")?,
                a.require_str_nonempty("location")?,
            );
            let mut counts = Map::new();
            for r in s.rows_where(ASSET_MANAGEMENT_DEVICES, |r| available(r, kind, location))? {
                let model = r.str_or_empty("model").to_string();
                let n = counts.get(&model).and_then(Value::as_i64).unwrap_or(0);
                counts.insert(model, json!(n + 1));
            }
            Ok(json!({ "available_count_by_model": counts }))
        }
        "reserve_device" => {
            let (kind, location) = (
                a.require_str_nonempty("device_type")?,
                a.require_str_nonempty("location")?,
            );
            let chosen = s
                .rows_where(ASSET_MANAGEMENT_DEVICES, |r| available(r, kind, location))?
                .min_by(|x, y| x.str_or_empty("id").cmp(y.str_or_empty("id")))
                .cloned();
            let Some(mut r) = chosen else {
                return Err(ToolError::new(format!(
                    "No available {kind} devices at {location}"
                )));
            };
            r.insert("inventory_status".into(), json!("reserved"));
            let id = r.value("id");
            s.replace(ASSET_MANAGEMENT_DEVICES, &Value::Object(r))?;
            Ok(json!({ "reserved_asset_id": id }))
        }
        "assign_device" => {
            let email = a.require_str_nonempty("email")?;
            let asset = a.require_str_nonempty("asset_id")?;
            let mut device = s.require_row(ASSET_MANAGEMENT_DEVICES, asset, "Device")?;
            insert_probed(
                s,
                ASSET_MANAGEMENT_DEVICE_ASSIGNMENTS,
                "ASMT-2",
                json!({"asset_id": asset, "employee_email": email, "returned_at": null}),
            )?;
            device.insert("inventory_status".into(), json!("assigned"));
            s.replace(ASSET_MANAGEMENT_DEVICES, &Value::Object(device))?;
            Ok(json!({ "success": true }))
        }
        "retire_device" => {
            let asset = a.require_str_nonempty("asset_id")?;
            let mut device = s.require_row(ASSET_MANAGEMENT_DEVICES, asset, "Device")?;
            device.insert("inventory_status".into(), json!("retired"));
            s.replace(ASSET_MANAGEMENT_DEVICES, &Value::Object(device))?;
            Ok(json!({ "success": true }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}

/// An available device of that type at that office.
fn available(r: &Map<String, Value>, kind: &str, location: &str) -> bool {
    r.str_or_empty("device_type") == kind
        && r.str_or_empty("location") == location
        && r.str_or_empty("inventory_status") == "available"
}
