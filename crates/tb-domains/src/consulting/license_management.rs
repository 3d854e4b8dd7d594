//! License management: pool availability, allocations and cost.

use super::{Out, action, exec, field, finish, get_row, is_none, need, probe_id, val};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

const ALLOCATIONS: &str = "license_management_license_allocation";

/// `license_management_api`: `check_availability`, `allocate`, `get_cost`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        match action(a) {
            "check_availability" => {
                let catalog = need(a, "catalog_id")?;
                let pool_type = need(a, "pool_type")?;
                let pool = s
                    .state
                    .rows("license_management_license_pool_record")?
                    .iter()
                    .find(|p| {
                        field(p, "catalog_id") == catalog && field(p, "pool_type") == pool_type
                    })
                    .ok_or_else(|| {
                        exec(format!(
                            "License pool not found for catalog_id={catalog}, pool_type={pool_type}"
                        ))
                    })?;
                let Some(total) = pool.get("total_licenses").and_then(Value::as_i64) else {
                    return Ok(json!({ "available_count": 99999 }));
                };
                let used = s
                    .state
                    .rows(ALLOCATIONS)?
                    .iter()
                    .filter(|r| {
                        field(r, "catalog_id") == catalog
                            && field(r, "pool_type") == pool_type
                            && is_none(r, "deallocated_at")
                    })
                    .count();
                let used = i64::try_from(used).unwrap_or(i64::MAX);
                Ok(json!({ "available_count": total - used }))
            }
            "allocate" => {
                let catalog = need(a, "catalog_id")?;
                let email = need(a, "email")?;
                let pool_type = need(a, "pool_type")?;
                let id = probe_id(s, ALLOCATIONS, "LIC-2")?;
                let row = json!({
                    "id": id,
                    "catalog_id": catalog,
                    "employee_email": email,
                    "engagement_code": a.get("engagement_code").cloned().unwrap_or(Value::Null),
                    "pool_type": pool_type,
                    "deallocated_at": null,
                });
                s.insert(ALLOCATIONS, &row)?;
                Ok(json!({ "success": true }))
            }
            "get_cost" => {
                let catalog = need(a, "catalog_id")?;
                let r = get_row(s, "software_catalog_software_catalog", catalog)?
                    .ok_or_else(|| exec(format!("Software catalog entry not found: {catalog}")))?;
                Ok(json!({ "annual_cost": val(&r, "annual_cost") }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute License Management API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
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
        assert_eq!(
            call(&mut s, "license_management_api", alloc),
            json!({"success": true})
        );
        assert_eq!(check(&mut s, "standard"), json!({"available_count": 1}));
        assert_eq!(
            err(
                &mut s,
                "license_management_api",
                json!({"action": "check_availability", "catalog_id": "CAT-NOPE", "pool_type": "standard"})
            ),
            "Tool execution failed: License pool not found for catalog_id=CAT-NOPE, pool_type=standard"
        );
        assert_eq!(
            err(
                &mut s,
                "license_management_api",
                json!({"action": "allocate", "catalog_id": "CAT-T", "pool_type": "standard"})
            ),
            "Tool execution failed: Missing required parameter: email"
        );
        assert_eq!(
            err(
                &mut s,
                "license_management_api",
                json!({"action": "get_cost", "catalog_id": "CAT-NOPE"})
            ),
            "Tool execution failed: Software catalog entry not found: CAT-NOPE"
        );
    }
}
