//! License management: pool availability, allocations and cost.

use super::insert_probed;
use super::tables::{
    LICENSE_MANAGEMENT_LICENSE_ALLOCATION, LICENSE_MANAGEMENT_LICENSE_POOL_RECORD,
    SOFTWARE_CATALOG_SOFTWARE_CATALOG,
};
use crate::vocab::SessionRows;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `license_management_api`: `check_availability`, `allocate`, `get_cost`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "check_availability" => {
            let catalog = a.require_str_nonempty("catalog_id")?;
            let pool_type = a.require_str_nonempty("pool_type")?;
            let pool = s
                .row_where(LICENSE_MANAGEMENT_LICENSE_POOL_RECORD, |p| {
                    p.str_or_empty("catalog_id") == catalog
                        && p.str_or_empty("pool_type") == pool_type
                })?
                .ok_or_else(|| {
                    ToolError::new(format!(
                        "License pool not found for catalog_id={catalog}, pool_type={pool_type}"
                    ))
                })?;
            let Some(total) = pool.get("total_licenses").and_then(Value::as_i64) else {
                return Ok(json!({ "available_count": 99999 }));
            };
            let used = s
                .rows_where(LICENSE_MANAGEMENT_LICENSE_ALLOCATION, |r| {
                    r.str_or_empty("catalog_id") == catalog
                        && r.str_or_empty("pool_type") == pool_type
                        && r.is_none("deallocated_at")
                })?
                .count();
            let used = i64::try_from(used).unwrap_or(i64::MAX);
            Ok(json!({ "available_count": total - used }))
        }
        "allocate" => {
            let catalog = a.require_str_nonempty("catalog_id")?;
            let email = a.require_str_nonempty("email")?;
            let pool_type = a.require_str_nonempty("pool_type")?;
            let row = json!({
                "catalog_id": catalog,
                "employee_email": email,
                "engagement_code": a.value("engagement_code"),
                "pool_type": pool_type,
                "deallocated_at": null,
            });
            insert_probed(s, LICENSE_MANAGEMENT_LICENSE_ALLOCATION, "LIC-2", row)?;
            Ok(json!({ "success": true }))
        }
        "get_cost" => {
            let catalog = a.require_str_nonempty("catalog_id")?;
            let r = s
                .row_by_id(SOFTWARE_CATALOG_SOFTWARE_CATALOG, catalog)?
                .ok_or_else(|| {
                    ToolError::new(format!("Software catalog entry not found: {catalog}"))
                })?;
            Ok(json!({ "annual_cost": r.value("annual_cost") }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
