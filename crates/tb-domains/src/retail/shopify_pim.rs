//! `shopify_pim`: the product catalogue.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `get_product_details`: one product's catalogue record.
pub fn get_product_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve product details";
    let sku = arg(a, "sku");
    let p = first(s, PRODUCTS, "sku", &json!(sku), F)?
        .ok_or_else(|| fail(format!("Product SKU not found: {sku}")))?;
    let fields = [
        "sku",
        "name",
        "category",
        "brand",
        "base_price",
        "weight_lbs",
        "is_refurbished",
        "points_redemption_eligible",
        "requires_installation",
    ];
    Ok(out(fields.iter().map(|f| (*f, val(&p, f)))))
}
