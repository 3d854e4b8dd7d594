//! License management: pool availability, allocations and cost.

use super::probe_id;
use super::tables::{
    LICENSE_MANAGEMENT_LICENSE_ALLOCATION, LICENSE_MANAGEMENT_LICENSE_POOL_RECORD,
    SOFTWARE_CATALOG_SOFTWARE_CATALOG,
};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `license_management_api`: `check_availability`, `allocate`, `get_cost`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "check_availability" => {
            let catalog = a.require_str_nonempty("catalog_id")?;
            let pool_type = a.require_str_nonempty("pool_type")?;
            let pool = s
                .state
                .rows(LICENSE_MANAGEMENT_LICENSE_POOL_RECORD)?
                .iter()
                .find(|p| {
                    p.str_or_empty("catalog_id") == catalog
                        && p.str_or_empty("pool_type") == pool_type
                })
                .ok_or_else(|| {
                    ToolError::new(format!(
                        "License pool not found for catalog_id={catalog}, pool_type={pool_type}"
                    ))
                })?;
            let Some(total) = pool.get("total_licenses").and_then(Value::as_i64) else {
                return Ok(json!({ "available_count": 99999 }));
            };
            let used = s
                .state
                .rows(LICENSE_MANAGEMENT_LICENSE_ALLOCATION)?
                .iter()
                .filter(|r| {
                    r.str_or_empty("catalog_id") == catalog
                        && r.str_or_empty("pool_type") == pool_type
                        && r.is_none("deallocated_at")
                })
                .count();
            let used = i64::try_from(used).unwrap_or(i64::MAX);
            Ok(json!({ "available_count": total - used }))
        }
        "allocate" => {
            let catalog = a.require_str_nonempty("catalog_id")?;
            let email = a.require_str_nonempty("email")?;
            let pool_type = a.require_str_nonempty("pool_type")?;
            let id = probe_id(s, LICENSE_MANAGEMENT_LICENSE_ALLOCATION, "LIC-2")?;
            let row = json!({
                "id": id,
                "catalog_id": catalog,
                "employee_email": email,
                "engagement_code": a.value("engagement_code"),
                "pool_type": pool_type,
                "deallocated_at": null,
            });
            s.insert(LICENSE_MANAGEMENT_LICENSE_ALLOCATION, &row)?;
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

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn pools_and_allocations() {
        let mut s = session(json!({
            "license_management_license_pool_record": [
                {"catalog_id": "CAT-T", "pool_type": "standard", "total_licenses": 2},
                {"catalog_id": "CAT-T", "pool_type": "enterprise"}
            ]
        }));
        let check = |s: &mut tb_sandbox::Session, pool: &str| {
            call(
                s,
                "license_management_api",
                json!({"action": "check_availability", "catalog_id": "CAT-T", "pool_type": pool}),
            )
        };
        assert_eq!(check(&mut s, "standard"), json!({"available_count": 2}));
        assert_eq!(
            check(&mut s, "enterprise"),
            json!({"available_count": 99999})
        );
        let alloc = json!({"action": "allocate", "catalog_id": "CAT-T", "email": "t@msg.com", "pool_type": "standard"});
        calls!(s;
            "license_management_api" alloc => {"success": true};
        );
        assert_eq!(check(&mut s, "standard"), json!({"available_count": 1}));
        calls!(s;
            "license_management_api" {"action": "check_availability", "catalog_id": "CAT-NOPE", "pool_type": "standard"} => error "Tool execution failed: License pool not found for catalog_id=CAT-NOPE, pool_type=standard";
            "license_management_api" {"action": "allocate", "catalog_id": "CAT-T", "pool_type": "standard"} => error "Tool execution failed: Missing required parameter: email";
            "license_management_api" {"action": "get_cost", "catalog_id": "CAT-NOPE"} => error "Tool execution failed: Software catalog entry not found: CAT-NOPE";
        );
    }
}
