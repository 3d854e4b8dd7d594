//! `promo`: discount applications and promotions.

use super::common::{first, instant, isoformat_stored, out};
use super::tables::{DISCOUNTS, PROMOTIONS};
use crate::vocab::project_as;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `get_discount_application`: the order's first discount record, or an empty one.
pub fn get_discount_application(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let order_id = a.str_or_empty("order_id");
    let Some(d) = first(s, DISCOUNTS, "order_id", &json!(order_id))? else {
        return Ok(out(vec![
            ("discount_app_id", json!("")),
            ("order_id", json!(order_id)),
            ("points_used", json!(0)),
            ("loyalty_discount_applied", json!(false)),
            ("total_discount_amount", json!(0.0)),
        ]));
    };
    Ok(project_as(
        &d,
        "discount_app_id",
        &[
            "order_id",
            "promo_code_used",
            "points_used",
            "loyalty_discount_applied",
            "total_discount_amount",
            "stacking_rule_applied",
        ],
        &[],
    ))
}

const NAIVE_AWARE: &str = "can't compare offset-naive and offset-aware datetimes";

/// `get_promotion_details`: the first promotion with that code valid at the session clock.
/// A naive validity bound raises Python's naive/aware comparison error, as in the reference.
pub fn get_promotion_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let code = a.str_or_empty("promo_code");
    let now = s.clock.now;
    let mut found = None;
    for p in s.state.rows(PROMOTIONS)? {
        if p.str_or_empty("promo_code") != code {
            continue;
        }
        // `valid_from <= now <= valid_until`, chained: the second test runs only if the first holds.
        let (from, from_aware) = instant(&p.value("valid_from"))
            .ok_or_else(|| ToolError::other("invalid valid_from"))?;
        if !from_aware {
            return Err(ToolError::other(NAIVE_AWARE));
        }
        if from > now {
            continue;
        }
        let (until, until_aware) = instant(&p.value("valid_until"))
            .ok_or_else(|| ToolError::other("invalid valid_until"))?;
        if !until_aware {
            return Err(ToolError::other(NAIVE_AWARE));
        }
        if now <= until {
            found = Some(p.clone());
            break;
        }
    }
    let p = found
        .ok_or_else(|| ToolError::new(format!("Promotion code not found or expired: {code}")))?;
    let excluded = match p.get("excluded_skus") {
        Some(Value::Array(items)) if !items.is_empty() => Value::Array(items.clone()),
        _ => Value::Null,
    };
    Ok(out(vec![
        ("promo_id", p.value("id")),
        ("promo_code", p.value("promo_code")),
        ("discount_type", p.value("discount_type")),
        ("discount_value", p.value("discount_value")),
        ("stackable_with_points", p.value("stackable_with_points")),
        ("stackable_with_loyalty", p.value("stackable_with_loyalty")),
        ("excluded_skus", excluded),
        ("valid_from", isoformat_stored(&p.value("valid_from"))),
        ("valid_until", isoformat_stored(&p.value("valid_until"))),
    ]))
}
