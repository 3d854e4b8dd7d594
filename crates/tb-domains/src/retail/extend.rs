//! `extend`: warranty contracts and claims.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `check_warranty_coverage`: the first contract of (order, sku) active at the session clock.
/// Naive contract dates are read as UTC, as the reference does.
pub fn check_warranty_coverage(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to check warranty coverage";
    let now = s.clock.now;
    let (order_id, sku) = (json!(arg(a, "order_id")), json!(arg(a, "sku")));
    let contract = first_where(s, CONTRACTS, F, |c| {
        let within = match (instant(&val(c, "start_date")), instant(&val(c, "end_date"))) {
            (Some((start, _)), Some((end, _))) => start <= now && now <= end,
            _ => false,
        };
        val(c, "order_id") == order_id && val(c, "sku") == sku && within
    })?;
    let Some(c) = contract else {
        return Ok(json!({"has_coverage": false}));
    };
    Ok(out(vec![
        ("has_coverage", json!(true)),
        ("contract_id", val(&c, "id")),
        ("warranty_type", val(&c, "warranty_type")),
        ("start_date", isoformat_stored(&val(&c, "start_date"))),
        ("end_date", isoformat_stored(&val(&c, "end_date"))),
        ("coverage_details", val(&c, "coverage_details")),
    ]))
}

/// `file_warranty_claim`: a pending claim `WCL-2{n:07}`, n probed from the claim count.
pub fn file_warranty_claim(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to file warranty claim";
    let contract_id = arg(a, "contract_id");
    if first(s, CONTRACTS, "id", &json!(contract_id), F)?.is_none() {
        return Err(fail(format!("Warranty contract not found: {contract_id}")));
    }
    let count = s.state.count(CLAIMS).or_fail(F)?;
    let claim_id = probe_id(s, CLAIMS, "id", count, F, |n| format!("WCL-2{n:07}"))?;
    let issue = arg(a, "warranty_issue_type");
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
            "customer_id": arg(a, "customer_id"),
            "claim_date": FIXED_NOW,
            "issue_description": description,
            "status": "pending",
            "resolution": null,
        }),
        F,
    )?;
    Ok(out(vec![
        ("claim_id", val(&row, "id")),
        ("status", val(&row, "status")),
        ("claim_date", isoformat_stored(&val(&row, "claim_date"))),
    ]))
}
