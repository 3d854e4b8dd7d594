//! `promo`: discount applications and promotions.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `get_discount_application`: the order's first discount record, or an empty one.
pub fn get_discount_application(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve discount application";
    let order_id = arg(a, "order_id");
    let Some(d) = first(s, DISCOUNTS, "order_id", &json!(order_id), F)? else {
        return Ok(out(vec![
            ("discount_app_id", json!("")),
            ("order_id", json!(order_id)),
            ("points_used", json!(0)),
            ("loyalty_discount_applied", json!(false)),
            ("total_discount_amount", json!(0.0)),
        ]));
    };
    Ok(out(vec![
        ("discount_app_id", val(&d, "id")),
        ("order_id", val(&d, "order_id")),
        ("promo_code_used", val(&d, "promo_code_used")),
        ("points_used", val(&d, "points_used")),
        (
            "loyalty_discount_applied",
            val(&d, "loyalty_discount_applied"),
        ),
        ("total_discount_amount", val(&d, "total_discount_amount")),
        ("stacking_rule_applied", val(&d, "stacking_rule_applied")),
    ]))
}

const NAIVE_AWARE: &str = "can't compare offset-naive and offset-aware datetimes";

/// `get_promotion_details`: the first promotion with that code valid at the session clock.
/// A naive validity bound raises Python's naive/aware comparison error, as in the reference.
pub fn get_promotion_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve promotion details";
    let code = arg(a, "promo_code");
    let now = s.clock.now;
    let mut found = None;
    for p in s.state.rows(PROMOTIONS).or_fail(F)? {
        if text(p, "promo_code") != code {
            continue;
        }
        // `valid_from <= now <= valid_until`, chained: the second test runs only if the first holds.
        let (from, from_aware) = instant(&val(p, "valid_from"))
            .ok_or_else(|| fail(format!("{F}: invalid valid_from")))?;
        if !from_aware {
            return Err(fail(format!("{F}: {NAIVE_AWARE}")));
        }
        if from > now {
            continue;
        }
        let (until, until_aware) = instant(&val(p, "valid_until"))
            .ok_or_else(|| fail(format!("{F}: invalid valid_until")))?;
        if !until_aware {
            return Err(fail(format!("{F}: {NAIVE_AWARE}")));
        }
        if now <= until {
            found = Some(p.clone());
            break;
        }
    }
    let p = found.ok_or_else(|| fail(format!("Promotion code not found or expired: {code}")))?;
    let excluded = match p.get("excluded_skus") {
        Some(Value::Array(items)) if !items.is_empty() => Value::Array(items.clone()),
        _ => Value::Null,
    };
    Ok(out(vec![
        ("promo_id", val(&p, "id")),
        ("promo_code", val(&p, "promo_code")),
        ("discount_type", val(&p, "discount_type")),
        ("discount_value", val(&p, "discount_value")),
        ("stackable_with_points", val(&p, "stackable_with_points")),
        ("stackable_with_loyalty", val(&p, "stackable_with_loyalty")),
        ("excluded_skus", excluded),
        ("valid_from", isoformat_stored(&val(&p, "valid_from"))),
        ("valid_until", isoformat_stored(&val(&p, "valid_until"))),
    ]))
}
