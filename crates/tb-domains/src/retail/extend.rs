//! `extend`: warranty contracts and claims.

use super::common::{
    FIXED_NOW, create, first, first_where, instant, isoformat_stored, out, probe_id,
};
use super::tables::{CLAIMS, CONTRACTS};
use crate::vocab::project_as;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `check_warranty_coverage`: the first contract of (order, sku) active at the session clock.
/// Naive contract dates are read as UTC, as the reference does.
pub fn check_warranty_coverage(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let now = s.clock.now;
    let (order_id, sku) = (
        json!(a.str_or_empty("order_id")),
        json!(a.str_or_empty("sku")),
    );
    let contract = first_where(s, CONTRACTS, |c| {
        let within = match (
            instant(&c.value("start_date")),
            instant(&c.value("end_date")),
        ) {
            (Some((start, _)), Some((end, _))) => start <= now && now <= end,
            _ => false,
        };
        c.value("order_id") == order_id && c.value("sku") == sku && within
    })?;
    let Some(c) = contract else {
        return Ok(json!({"has_coverage": false}));
    };
    Ok(out(vec![
        ("has_coverage", json!(true)),
        ("contract_id", c.value("id")),
        ("warranty_type", c.value("warranty_type")),
        ("start_date", isoformat_stored(&c.value("start_date"))),
        ("end_date", isoformat_stored(&c.value("end_date"))),
        ("coverage_details", c.value("coverage_details")),
    ]))
}

/// `file_warranty_claim`: a pending claim `WCL-2{n:07}`, n probed from the claim count.
pub fn file_warranty_claim(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let contract_id = a.str_or_empty("contract_id");
    if first(s, CONTRACTS, "id", &json!(contract_id))?.is_none() {
        return Err(ToolError::new(format!(
            "Warranty contract not found: {contract_id}"
        )));
    }
    let count = s.state.count(CLAIMS)?;
    let claim_id = probe_id(s, CLAIMS, "id", count, |n| format!("WCL-2{n:07}"))?;
    let issue = a.str_or_empty("warranty_issue_type");
    let description = match issue {
        "product_not_functioning" => "Product not functioning properly",
        "component_failed" => "Component failed",
        "performance_degradation" => "Performance degradation",
        "accidental_damage" => "Accidental damage",
        other => other,
    };
    let row = create(
        s,
        CLAIMS,
        json!({
            "id": claim_id,
            "contract_id": contract_id,
            "customer_id": a.str_or_empty("customer_id"),
            "claim_date": FIXED_NOW,
            "issue_description": description,
            "status": "pending",
            "resolution": null,
        }),
    )?;
    Ok(project_as(
        &row,
        "claim_id",
        &["status", "claim_date"],
        &["claim_date"],
    ))
}
