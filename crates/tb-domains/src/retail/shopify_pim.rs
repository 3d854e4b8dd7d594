//! `shopify_pim`: the product catalogue.

use super::common::{first, out};
use super::tables::PRODUCTS;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `get_product_details`: one product's catalogue record.
pub fn get_product_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let sku = a.str_or_empty("sku");
    let p = first(s, PRODUCTS, "sku", &json!(sku))?
        .ok_or_else(|| ToolError::new(format!("Product SKU not found: {sku}")))?;
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
    Ok(out(fields.iter().map(|f| (*f, p.value(f)))))
}
