//! `oms`: orders, line items, shipments and carrier tracking.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// Shipping cost by speed, in dollars.
fn shipping_cost(speed: &str) -> Option<f64> {
    match speed {
        "standard" => Some(0.0),
        "expedited" => Some(15.0),
        "next_day" => Some(29.99),
        _ => None,
    }
}

fn order_or_404(s: &Session, id: &str, prefix: &str) -> Result<tb_sandbox::Row, ToolError> {
    first(s, ORDERS, "id", &json!(id), prefix)?
        .ok_or_else(|| fail(format!("Order not found: {id}")))
}

/// `cancel_order`: status to cancelled; a refund starts when the order was processing.
pub fn cancel_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to cancel order";
    let id = arg(a, "order_id");
    let mut order = order_or_404(s, id, F)?;
    let refund_initiated = text(&order, "status") == "processing";
    order.insert("status".into(), json!("cancelled"));
    save(s, ORDERS, &order, F)?;
    Ok(out(vec![
        ("order_id", val(&order, "id")),
        ("status", json!("cancelled")),
        ("refund_initiated", json!(refund_initiated)),
    ]))
}

/// `create_replacement_order`: a zero-priced order and line item; takes the units out of stock.
pub fn create_replacement_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to create replacement order";
    let sku = arg(a, "sku");
    let quantity = a.get("quantity").and_then(Value::as_i64).unwrap_or(0);
    let inventory = first(s, INVENTORY, "sku", &json!(sku), F)?;
    let mut inventory = match inventory {
        Some(r) if int(&r, "available_quantity") != 0 => r,
        _ => {
            return Err(fail(format!(
                "Product out of stock - cannot create replacement order for SKU {sku}. Available quantity is 0."
            )));
        }
    };
    let left = int(&inventory, "available_quantity")
        .checked_sub(quantity)
        .ok_or_else(|| fail(format!("{F}: integer overflow")))?;
    inventory.insert("available_quantity".into(), json!(left));
    save(s, INVENTORY, &inventory, F)?;

    let product = first(s, PRODUCTS, "sku", &json!(sku), F)?
        .ok_or_else(|| fail(format!("Product SKU not found: {sku}")))?;
    let order_id = probe_id(s, ORDERS, "id", 1, F, |n| format!("ORD-2{n:07}"))?;
    let line_id = probe_id(s, LINE_ITEMS, "id", 1, F, |n| format!("LIN-2{n:07}"))?;
    let order = json!({
        "id": order_id,
        "customer_id": arg(a, "customer_id"),
        "order_date": FIXED_NOW,
        "status": "processing",
        "subtotal_amount": 0.0,
        "discount_amount": 0.0,
        "points_used": 0,
        "points_value": 0.0,
        "shipping_cost": 0.0,
        "total_amount": 0.0,
        "shipping_address_line1": arg(a, "shipping_address_line1"),
        "shipping_address_city": arg(a, "shipping_address_city"),
        "shipping_address_state": arg(a, "shipping_address_state"),
        "shipping_address_zip": arg(a, "shipping_address_zip"),
        "shipping_speed": arg(a, "shipping_speed"),
        "fulfillment_type": "warehouse",
        "installation_service_id": null,
    });
    let line = json!({
        "id": line_id,
        "order_id": order_id,
        "sku": sku,
        "product_name": val(&product, "name"),
        "quantity": quantity,
        "base_price": 0.0,
        "discount_amount": 0.0,
        "final_price": 0.0,
    });
    create(s, ORDERS, order, F)?;
    create(s, LINE_ITEMS, line, F)?;
    Ok(out(vec![
        ("replacement_order_id", json!(order_id)),
        ("status", json!("processing")),
        ("total_amount", json!(0.0)),
    ]))
}

/// `get_order`: the order with its line items.
pub fn get_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve order";
    let id = arg(a, "order_id");
    let order = order_or_404(s, id, F)?;
    let key = json!(id);
    let lines: Vec<Value> = s
        .state
        .rows(LINE_ITEMS)
        .or_fail(F)?
        .iter()
        .filter(|r| r.get("order_id").is_some_and(|v| tb_python::py_eq(v, &key)))
        .map(|r| {
            out(vec![
                ("id", val(r, "id")),
                ("sku", val(r, "sku")),
                ("product_name", val(r, "product_name")),
                ("quantity", val(r, "quantity")),
                ("base_price", val(r, "base_price")),
                ("discount_amount", val(r, "discount_amount")),
                ("final_price", val(r, "final_price")),
            ])
        })
        .collect();
    let mut fields: Vec<(&str, Value)> = vec![
        ("id", val(&order, "id")),
        ("customer_id", val(&order, "customer_id")),
    ];
    fields.push(("order_date", isoformat_stored(&val(&order, "order_date"))));
    for f in [
        "status",
        "subtotal_amount",
        "discount_amount",
        "points_used",
        "points_value",
        "shipping_cost",
        "total_amount",
        "shipping_address_line1",
        "shipping_address_city",
        "shipping_address_state",
        "shipping_address_zip",
        "shipping_speed",
        "fulfillment_type",
        "installation_service_id",
    ] {
        fields.push((f, val(&order, f)));
    }
    fields.push(("line_items", Value::Array(lines)));
    Ok(out(fields))
}

/// `get_shipment_tracking`: the order's first shipment joined with its carrier tracking.
pub fn get_shipment_tracking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve shipment tracking";
    let id = arg(a, "order_id");
    let shipment = first(s, SHIPMENTS, "order_id", &json!(id), F)?.ok_or_else(|| {
        fail(format!(
            "No shipment found for order: {id} (may not be shipped yet)"
        ))
    })?;
    let tracking = first(
        s,
        TRACKING,
        "tracking_number",
        &val(&shipment, "tracking_number"),
        F,
    )?;
    let (status, location) = match &tracking {
        Some(t) => (val(t, "status"), val(t, "current_location")),
        None => (json!("pending"), Value::Null),
    };
    Ok(out(vec![
        ("shipment_id", val(&shipment, "id")),
        ("order_id", val(&shipment, "order_id")),
        ("carrier", val(&shipment, "carrier")),
        ("tracking_number", val(&shipment, "tracking_number")),
        ("ship_date", isoformat_stored(&val(&shipment, "ship_date"))),
        (
            "estimated_delivery_date",
            isoformat_stored(&val(&shipment, "estimated_delivery_date")),
        ),
        (
            "actual_delivery_date",
            isoformat_field(&shipment, "actual_delivery_date"),
        ),
        ("tracking_status", status),
        ("current_location", location),
    ]))
}

/// `reship_order`: corrected address on the order, then a new shipment and tracking record.
pub fn reship_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to reship order";
    let id = arg(a, "order_id");
    let mut order = order_or_404(s, id, F)?;
    let shipment = first(s, SHIPMENTS, "order_id", &json!(id), F)?
        .ok_or_else(|| fail(format!("No shipment found for order: {id}")))?;
    if first(
        s,
        TRACKING,
        "tracking_number",
        &val(&shipment, "tracking_number"),
        F,
    )?
    .is_none()
    {
        return Err(fail(format!(
            "No tracking found for shipment: {}",
            text(&shipment, "id")
        )));
    }
    for (field, input) in [
        ("shipping_address_line1", "corrected_address_line1"),
        ("shipping_address_city", "corrected_address_city"),
        ("shipping_address_state", "corrected_address_state"),
        ("shipping_address_zip", "corrected_address_zip"),
    ] {
        order.insert(field.into(), json!(arg(a, input)));
    }
    save(s, ORDERS, &order, F)?;

    let shipment_id = probe_id(s, SHIPMENTS, "id", 1, F, |n| format!("SHP-2{n:07}"))?;
    let tracking_number = probe_id(s, TRACKING, "tracking_number", 1, F, |n| {
        format!("TRK-2{n:011}")
    })?;
    // FIXED_NOW plus five days.
    let estimated = "2025-10-06T13:00:05Z";
    let carrier = val(&shipment, "carrier");
    create(
        s,
        SHIPMENTS,
        json!({
            "id": shipment_id,
            "order_id": id,
            "carrier": carrier,
            "tracking_number": tracking_number,
            "ship_date": FIXED_NOW,
            "estimated_delivery_date": estimated,
            "actual_delivery_date": null,
        }),
        F,
    )?;
    create(
        s,
        TRACKING,
        json!({
            "tracking_number": tracking_number,
            "shipment_id": shipment_id,
            "carrier": carrier,
            "status": "pending",
            "current_location": null,
            "estimated_delivery": estimated,
            "last_update": FIXED_NOW,
        }),
        F,
    )?;
    let customer_fault = a
        .get("customer_fault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    Ok(out(vec![
        ("order_id", json!(id)),
        ("new_shipment_id", json!(shipment_id)),
        ("new_tracking_number", json!(tracking_number)),
        (
            "reship_cost",
            json!(if customer_fault { 15.0 } else { 0.0 }),
        ),
        ("reship_initiated", json!(true)),
    ]))
}

/// `update_order_address`: replaces the four address fields of an order.
pub fn update_order_address(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to update order address";
    let id = arg(a, "order_id");
    let mut order = order_or_404(s, id, F)?;
    for (field, input) in [
        ("shipping_address_line1", "new_address_line1"),
        ("shipping_address_city", "new_address_city"),
        ("shipping_address_state", "new_address_state"),
        ("shipping_address_zip", "new_address_zip"),
    ] {
        order.insert(field.into(), json!(arg(a, input)));
    }
    save(s, ORDERS, &order, F)?;
    Ok(out(vec![
        ("order_id", val(&order, "id")),
        ("address_updated", json!(true)),
        (
            "new_shipping_address_line1",
            val(&order, "shipping_address_line1"),
        ),
        (
            "new_shipping_address_city",
            val(&order, "shipping_address_city"),
        ),
        (
            "new_shipping_address_state",
            val(&order, "shipping_address_state"),
        ),
        (
            "new_shipping_address_zip",
            val(&order, "shipping_address_zip"),
        ),
    ]))
}

/// `update_shipping_speed`: new speed and shipping cost, total recomputed; returns the difference.
pub fn update_shipping_speed(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to update shipping speed";
    let id = arg(a, "order_id");
    let mut order = order_or_404(s, id, F)?;
    let old_speed = text(&order, "shipping_speed").to_string();
    let new_speed = arg(a, "new_shipping_speed");
    let old_cost = shipping_cost(&old_speed)
        .ok_or_else(|| fail(format!("{F}: <ShippingSpeed.{old_speed}>")))?;
    let new_cost = shipping_cost(new_speed)
        .ok_or_else(|| fail(format!("{F}: <ShippingSpeed.{new_speed}>")))?;
    let cost_difference = new_cost - old_cost;
    let total = float(&order, "subtotal_amount")
        - float(&order, "discount_amount")
        - float(&order, "points_value")
        + new_cost;
    order.insert("shipping_speed".into(), json!(new_speed));
    order.insert("shipping_cost".into(), json!(new_cost));
    order.insert("total_amount".into(), json!(total));
    save(s, ORDERS, &order, F)?;
    Ok(out(vec![
        ("order_id", val(&order, "id")),
        ("old_shipping_speed", json!(old_speed)),
        ("new_shipping_speed", json!(new_speed)),
        ("cost_difference", json!(cost_difference)),
        ("updated", json!(true)),
    ]))
}
