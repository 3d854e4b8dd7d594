//! The claims toolset: first notice of loss and claim lookups by policy, vehicle and driver.

use super::hash_id;
use super::tables::{CLAIMS, POLICIES};
use crate::vocab::SessionRows;
use chrono::NaiveDate;
use serde_json::{Map, Value, json};
use tb_python::datetime as pytime;
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

pub(super) fn register(t: &mut Tools) {
    t.add("claims_check_open_major_claims", check_open_major_claims)
        .add("claims_create_fnol", create_fnol)
        .add("claims_get_driver_claims", get_driver_claims)
        .add("claims_get_policy_claims", get_policy_claims)
        .add("claims_get_vehicle_claims", get_vehicle_claims);
}

fn is_open(c: &Map<String, Value>) -> bool {
    c.str_or_empty("claim_stage").starts_with("Open")
}

/// The claim projection the list tools return.
fn item(c: &Map<String, Value>) -> Value {
    json!({
        "claim_id": c.value("id"),
        "date_of_loss": c.value("date_of_loss"),
        "claim_type": c.value("claim_type"),
        "claim_stage": c.value("claim_stage"),
        "severity": c.value("severity"),
        "created_date": c.value("created_date"),
    })
}

fn require_policy(s: &Session, policy_id: &str) -> Result<(), ToolError> {
    match s.row_by_id(POLICIES, policy_id)? {
        Some(_) => Ok(()),
        None => Err(ToolError::new(format!("Policy '{policy_id}' not found."))),
    }
}

fn check_open_major_claims(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    require_policy(s, policy_id)?;
    let n = s
        .rows_where(CLAIMS, |c| {
            c.str_or_empty("policy_id") == policy_id
                && is_open(c)
                && c.str_or_empty("severity") == "Major"
        })?
        .count();
    Ok(json!({"has_major_claim": n > 0, "major_claim_count": n}))
}

fn create_fnol(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    let date_of_loss = a.require_str("date_of_loss")?;
    require_policy(s, policy_id)?;
    let vehicle = a
        .opt_str_nonempty("vehicle_id")
        .or(a.opt_str_nonempty("vehicle_vin"))
        .unwrap_or("no_vehicle");
    let id = hash_id("CLM-2", &format!("{policy_id}_{date_of_loss}_{vehicle}"), 9);
    if let Some(existing) = s.row_by_id(CLAIMS, &id)? {
        return Ok(
            json!({"claim_id": existing.value("id"), "claim_stage": existing.value("claim_stage")}),
        );
    }
    let flag = |name: &str| a.opt_bool(name).unwrap_or(false);
    s.insert(
        CLAIMS,
        &json!({
            "id": id,
            "policy_id": policy_id,
            "vehicle_id": a.value("vehicle_id"),
            "vehicle_vin": a.value("vehicle_vin"),
            "driver_id": a.value("driver_id"),
            "date_of_loss": date_of_loss,
            "loss_location": a.value("loss_location"),
            "claim_type": a.value("claim_type"),
            "claim_stage": "Open – Initial Review",
            "severity": a.value("severity"),
            "siu_flag": a.opt_str("siu_flag").unwrap_or("None"),
            "unlisted_driver_flag": flag("unlisted_driver_flag"),
            "has_bodily_injury": flag("has_bodily_injury"),
            "police_report_required": flag("police_report_required"),
            "police_report_number": a.value("police_report_number"),
            "other_party_name": a.value("other_party_name"),
            "other_party_phone": a.value("other_party_phone"),
            "other_party_insurance": a.value("other_party_insurance"),
            "created_date": date_of_loss,
        }),
    )?;
    Ok(json!({"claim_id": id, "claim_stage": "Open – Initial Review"}))
}

fn get_driver_claims(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    claims_of(s, a, "driver_id", "policy_drivers", "Driver")
}

fn get_vehicle_claims(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    claims_of(s, a, "vehicle_id", "policy_vehicles", "Vehicle")
}

/// The claims naming the driver or vehicle whose id is the argument `arg` (a row of `table`,
/// else `<what> '<id>' not found.`), only the open ones with `open_only`.
fn claims_of(
    s: &Session,
    a: &Args,
    arg: &str,
    table: &str,
    what: &str,
) -> Result<Value, ToolError> {
    let id = a.require_str(arg)?;
    if s.state.find_by(table, "id", &json!(id))?.is_none() {
        return Err(ToolError::new(format!("{what} '{id}' not found.")));
    }
    let open_only = a.opt_bool("open_only").unwrap_or(false);
    let claims: Vec<&Map<String, Value>> = s
        .rows_where(CLAIMS, |c| c.get(arg).and_then(Value::as_str) == Some(id))?
        .filter(|c| !open_only || is_open(c))
        .collect();
    let has_open = claims.iter().any(|c| is_open(c));
    Ok(
        json!({"claims": claims.into_iter().map(item).collect::<Vec<_>>(), "has_open_claims": has_open}),
    )
}

fn get_policy_claims(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    require_policy(s, policy_id)?;
    let rows = s.state.rows(CLAIMS)?;
    let mut claims: Vec<&Map<String, Value>> = rows
        .iter()
        .filter(|c| c.str_or_empty("policy_id") == policy_id)
        .collect();
    if let Some(months) = a.opt_i64("months_back").filter(|m| *m != 0) {
        // The reference date is the latest created_date of all claims (string maximum).
        let max_date = match rows.iter().map(|c| c.str_or_empty("created_date")).max() {
            Some(text) => pytime::strptime_ymd(text).map_err(ToolError::new)?,
            None => NaiveDate::from_ymd_opt(2099, 12, 31).unwrap_or_default(),
        };
        let cutoff = pytime::sub_days(max_date, i128::from(months) * 30).map_err(ToolError::new)?;
        let cutoff = pytime::strftime_ymd(cutoff);
        claims.retain(|c| c.str_or_empty("created_date") >= cutoff.as_str());
    }
    let n = claims.len();
    Ok(json!({"claims": claims.into_iter().map(item).collect::<Vec<_>>(), "total_count": n}))
}
