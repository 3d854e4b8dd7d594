//! IT asset management: devices, inventory, reservations and assignments.

use super::{Out, action, exec, field, finish, get_row, is_none, need, out, probe_id, val};
use crate::pytime::isoformat_field;
use serde_json::{Map, Value, json};
use tb_sandbox::{Args, Session, ToolError};

const DEVICES: &str = "asset_management_devices";
const ASSIGNMENTS: &str = "asset_management_device_assignments";

/// `asset_management_api`: `get_employee_devices`, `get_device_details`, `check_inventory`,
/// `reserve_device`, `assign_device`, `retire_device`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        match action(a) {
            "get_employee_devices" => {
                let email = need(a, "email")?;
                let devices: Vec<Value> = s
                    .state
                    .rows(ASSIGNMENTS)?
                    .iter()
                    .filter(|r| field(r, "employee_email") == email && is_none(r, "returned_at"))
                    .map(|r| {
                        out([
                            ("id", val(r, "id")),
                            ("asset_id", val(r, "asset_id")),
                            ("employee_email", val(r, "employee_email")),
                            ("returned_at", isoformat_field(r, "returned_at")),
                        ])
                    })
                    .collect();
                Ok(json!({ "devices": devices }))
            }
            "get_device_details" => {
                let id = need(a, "asset_id")?;
                let r = get_row(s, DEVICES, id)?
                    .ok_or_else(|| exec(format!("Device not found: {id}")))?;
                let data = out([
                    ("id", val(&r, "id")),
                    ("device_type", val(&r, "device_type")),
                    ("model", val(&r, "model")),
                    ("age_months", val(&r, "age_months")),
                    ("inventory_status", val(&r, "inventory_status")),
                    ("location", val(&r, "location")),
                ]);
                Ok(json!({ "device_data": data }))
            }
            "check_inventory" => {
                let (kind, location) = (need(a, "device_type")?, need(a, "location")?);
                let mut counts = Map::new();
                for r in s
                    .state
                    .rows(DEVICES)?
                    .iter()
                    .filter(|r| available(r, kind, location))
                {
                    let model = field(r, "model").to_string();
                    let n = counts.get(&model).and_then(Value::as_i64).unwrap_or(0);
                    counts.insert(model, json!(n + 1));
                }
                Ok(json!({ "available_count_by_model": counts }))
            }
            "reserve_device" => {
                let (kind, location) = (need(a, "device_type")?, need(a, "location")?);
                let chosen = s
                    .state
                    .rows(DEVICES)?
                    .iter()
                    .filter(|r| available(r, kind, location))
                    .min_by(|x, y| field(x, "id").cmp(field(y, "id")))
                    .cloned();
                let Some(mut r) = chosen else {
                    return Err(exec(format!("No available {kind} devices at {location}")));
                };
                r.insert("inventory_status".into(), json!("reserved"));
                let id = val(&r, "id");
                s.replace(DEVICES, &Value::Object(r))?;
                Ok(json!({ "reserved_asset_id": id }))
            }
            "assign_device" => {
                let email = need(a, "email")?;
                let asset = need(a, "asset_id")?;
                let mut device = get_row(s, DEVICES, asset)?
                    .ok_or_else(|| exec(format!("Device not found: {asset}")))?;
                let id = probe_id(s, ASSIGNMENTS, "ASMT-2")?;
                s.insert(ASSIGNMENTS, &json!({"id": id, "asset_id": asset, "employee_email": email, "returned_at": null}))?;
                device.insert("inventory_status".into(), json!("assigned"));
                s.replace(DEVICES, &Value::Object(device))?;
                Ok(json!({ "success": true }))
            }
            "retire_device" => {
                let asset = need(a, "asset_id")?;
                let mut device = get_row(s, DEVICES, asset)?
                    .ok_or_else(|| exec(format!("Device not found: {asset}")))?;
                device.insert("inventory_status".into(), json!("retired"));
                s.replace(DEVICES, &Value::Object(device))?;
                Ok(json!({ "success": true }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Asset Management API action", body())
}

/// An available device of that type at that office.
fn available(r: &Map<String, Value>, kind: &str, location: &str) -> bool {
    field(r, "device_type") == kind
        && field(r, "location") == location
        && field(r, "inventory_status") == "available"
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn reserve_assign_retire() {
        let dev = |id: &str, status: &str| json!({"id": id, "device_type": "headset", "model": "H1", "age_months": 3, "inventory_status": status, "location": "Austin"});
        let mut s = session(json!({
            "asset_management_devices": [dev("ZZ-9", "available"), dev("ZZ-10", "available"), dev("ZZ-11", "assigned")]
        }));
        let before = call(
            &mut s,
            "asset_management_api",
            json!({"action": "check_inventory", "device_type": "headset", "location": "Austin"}),
        );
        let n = before["available_count_by_model"]["H1"].as_i64().unwrap();
        assert!(n >= 2, "{before}");
        // Lowest id by string order: "ZZ-10" < "ZZ-9".
        let r = call(
            &mut s,
            "asset_management_api",
            json!({"action": "reserve_device", "device_type": "headset", "location": "Austin"}),
        );
        let reserved = r["reserved_asset_id"].as_str().unwrap().to_string();
        assert_eq!(
            s.state
                .get("asset_management_devices", &json!(reserved))
                .unwrap()
                .unwrap()["inventory_status"],
            json!("reserved")
        );
        assert_eq!(
            call(
                &mut s,
                "asset_management_api",
                json!({"action": "assign_device", "email": "t@msg.com", "asset_id": "ZZ-9"})
            ),
            json!({"success": true})
        );
        let devices = call(
            &mut s,
            "asset_management_api",
            json!({"action": "get_employee_devices", "email": "t@msg.com"}),
        );
        assert_eq!(devices["devices"][0]["asset_id"], json!("ZZ-9"));
        assert!(
            devices["devices"][0]["id"]
                .as_str()
                .unwrap()
                .starts_with("ASMT-2-")
        );
        assert_eq!(
            err(
                &mut s,
                "asset_management_api",
                json!({"action": "retire_device", "asset_id": "NOPE"})
            ),
            "Tool execution failed: Device not found: NOPE"
        );
        assert_eq!(
            err(
                &mut s,
                "asset_management_api",
                json!({"action": "reserve_device", "device_type": "headset"})
            ),
            "Tool execution failed: Missing required parameter: location"
        );
        assert_eq!(
            err(
                &mut s,
                "asset_management_api",
                json!({"action": "reserve_device", "device_type": "headset", "location": "Chicago"})
            ),
            "Tool execution failed: No available headset devices at Chicago"
        );
    }
}
