//! `oms`: orders, line items, shipments and carrier tracking.

use super::common::{
    FIXED_NOW, create, first, isoformat_field, isoformat_stored, out, probe_id, save,
};
use super::tables::{INVENTORY, LINE_ITEMS, ORDERS, PRODUCTS, SHIPMENTS, TRACKING};
use crate::vocab::SessionRows;
use crate::vocab::project;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// Shipping cost by speed, in dollars.
fn shipping_cost(speed: &str) -> Option<f64> {
    match speed {
        "standard" => Some(0.0),
        "expedited" => Some(15.0),
        "next_day" => Some(29.99),
        _ => None,
    }
}

fn order_or_404(s: &Session, id: &str) -> Result<tb_sandbox::Row, ToolError> {
    first(s, ORDERS, "id", &json!(id))?
        .ok_or_else(|| ToolError::new(format!("Order not found: {id}")))
}

/// `cancel_order`: status to cancelled; a refund starts when the order was processing.
pub fn cancel_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("order_id");
    let mut order = order_or_404(s, id)?;
    let refund_initiated = order.str_or_empty("status") == "processing";
    order.insert("status".into(), json!("cancelled"));
    save(s, ORDERS, &order)?;
    Ok(out(vec![
        ("order_id", order.value("id")),
        ("status", json!("cancelled")),
        ("refund_initiated", json!(refund_initiated)),
    ]))
}

/// `create_replacement_order`: a zero-priced order and line item; takes the units out of stock.
pub fn create_replacement_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let sku = a.str_or_empty("sku");
    let quantity = a.i64_or_zero("quantity");
    let inventory = first(s, INVENTORY, "sku", &json!(sku))?;
    let mut inventory = match inventory {
        Some(r) if r.i64_or_zero("available_quantity") != 0 => r,
        _ => {
            return Err(ToolError::new(format!(
                "Product out of stock - cannot create replacement order for SKU {sku}. Available quantity is 0."
            )));
        }
    };
    let left = inventory
        .i64_or_zero("available_quantity")
        .checked_sub(quantity)
        .ok_or_else(|| ToolError::other("integer overflow"))?;
    inventory.insert("available_quantity".into(), json!(left));
    save(s, INVENTORY, &inventory)?;

    let product = first(s, PRODUCTS, "sku", &json!(sku))?
        .ok_or_else(|| ToolError::new(format!("Product SKU not found: {sku}")))?;
    let order_id = probe_id(s, ORDERS, "id", 1, |n| format!("ORD-2{n:07}"))?;
    let line_id = probe_id(s, LINE_ITEMS, "id", 1, |n| format!("LIN-2{n:07}"))?;
    let order = json!({
        "id": order_id,
        "customer_id": a.str_or_empty("customer_id"),
        "order_date": FIXED_NOW,
        "status": "processing",
        "subtotal_amount": 0.0,
        "discount_amount": 0.0,
        "points_used": 0,
        "points_value": 0.0,
        "shipping_cost": 0.0,
        "total_amount": 0.0,
        "shipping_address_line1": a.str_or_empty("shipping_address_line1"),
        "shipping_address_city": a.str_or_empty("shipping_address_city"),
        "shipping_address_state": a.str_or_empty("shipping_address_state"),
        "shipping_address_zip": a.str_or_empty("shipping_address_zip"),
        "shipping_speed": a.str_or_empty("shipping_speed"),
        "fulfillment_type": "warehouse",
        "installation_service_id": null,
    });
    let line = json!({
        "id": line_id,
        "order_id": order_id,
        "sku": sku,
        "product_name": product.value("name"),
        "quantity": quantity,
        "base_price": 0.0,
        "discount_amount": 0.0,
        "final_price": 0.0,
    });
    create(s, ORDERS, order)?;
    create(s, LINE_ITEMS, line)?;
    Ok(out(vec![
        ("replacement_order_id", json!(order_id)),
        ("status", json!("processing")),
        ("total_amount", json!(0.0)),
    ]))
}

/// `get_order`: the order with its line items.
pub fn get_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("order_id");
    let order = order_or_404(s, id)?;
    let key = json!(id);
    let lines: Vec<Value> = s
        .rows_where(LINE_ITEMS, |r| {
            r.get("order_id").is_some_and(|v| tb_python::py_eq(v, &key))
        })?
        .map(|r| {
            project(
                r,
                &[
                    "id",
                    "sku",
                    "product_name",
                    "quantity",
                    "base_price",
                    "discount_amount",
                    "final_price",
                ],
                &[],
            )
        })
        .collect();
    let mut fields: Vec<(&str, Value)> = vec![
        ("id", order.value("id")),
        ("customer_id", order.value("customer_id")),
    ];
    fields.push(("order_date", isoformat_stored(&order.value("order_date"))));
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
        fields.push((f, order.value(f)));
    }
    fields.push(("line_items", Value::Array(lines)));
    Ok(out(fields))
}

/// `get_shipment_tracking`: the order's first shipment joined with its carrier tracking.
pub fn get_shipment_tracking(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("order_id");
    let shipment = first(s, SHIPMENTS, "order_id", &json!(id))?.ok_or_else(|| {
        ToolError::new(format!(
            "No shipment found for order: {id} (may not be shipped yet)"
        ))
    })?;
    let tracking = first(
        s,
        TRACKING,
        "tracking_number",
        &shipment.value("tracking_number"),
    )?;
    let (status, location) = match &tracking {
        Some(t) => (t.value("status"), t.value("current_location")),
        None => (json!("pending"), Value::Null),
    };
    Ok(out(vec![
        ("shipment_id", shipment.value("id")),
        ("order_id", shipment.value("order_id")),
        ("carrier", shipment.value("carrier")),
        ("tracking_number", shipment.value("tracking_number")),
        ("ship_date", isoformat_stored(&shipment.value("ship_date"))),
        (
            "estimated_delivery_date",
            isoformat_stored(&shipment.value("estimated_delivery_date")),
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
    let id = a.str_or_empty("order_id");
    let mut order = order_or_404(s, id)?;
    let shipment = first(s, SHIPMENTS, "order_id", &json!(id))?
        .ok_or_else(|| ToolError::new(format!("No shipment found for order: {id}")))?;
    if first(
        s,
        TRACKING,
        "tracking_number",
        &shipment.value("tracking_number"),
    )?
    .is_none()
    {
        return Err(ToolError::new(format!(
            "No tracking found for shipment: {}",
            shipment.str_or_empty("id")
        )));
    }
    for (field, input) in [
        ("shipping_address_line1", "corrected_address_line1"),
        ("shipping_address_city", "corrected_address_city"),
        ("shipping_address_state", "corrected_address_state"),
        ("shipping_address_zip", "corrected_address_zip"),
    ] {
        order.insert(field.into(), json!(a.str_or_empty(input)));
    }
    save(s, ORDERS, &order)?;

    let shipment_id = probe_id(s, SHIPMENTS, "id", 1, |n| format!("SHP-2{n:07}"))?;
    let tracking_number = probe_id(s, TRACKING, "tracking_number", 1, |n| {
        format!("TRK-2{n:011}")
    })?;
    // FIXED_NOW plus five days.
    let estimated = "2025-10-06T13:00:05Z";
    let carrier = shipment.value("carrier");
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
    let id = a.str_or_empty("order_id");
    let mut order = order_or_404(s, id)?;
    for (field, input) in [
        ("shipping_address_line1", "new_address_line1"),
        ("shipping_address_city", "new_address_city"),
        ("shipping_address_state", "new_address_state"),
        ("shipping_address_zip", "new_address_zip"),
    ] {
        order.insert(field.into(), json!(a.str_or_empty(input)));
    }
    save(s, ORDERS, &order)?;
    Ok(out(vec![
        ("order_id", order.value("id")),
        ("address_updated", json!(true)),
        (
            "new_shipping_address_line1",
            order.value("shipping_address_line1"),
        ),
        (
            "new_shipping_address_city",
            order.value("shipping_address_city"),
        ),
        (
            "new_shipping_address_state",
            order.value("shipping_address_state"),
        ),
        (
            "new_shipping_address_zip",
            order.value("shipping_address_zip"),
        ),
    ]))
}

/// `update_shipping_speed`: new speed and shipping cost, total recomputed; returns the difference.
pub fn update_shipping_speed(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let id = a.str_or_empty("order_id");
    let mut order = order_or_404(s, id)?;
    let old_speed = order.str_or_empty("shipping_speed").to_string();
    let new_speed = a.str_or_empty("new_shipping_speed");
    let old_cost = shipping_cost(&old_speed)
        .ok_or_else(|| ToolError::other(format!("<ShippingSpeed.{old_speed}>")))?;
    let new_cost = shipping_cost(new_speed)
        .ok_or_else(|| ToolError::other(format!("<ShippingSpeed.{new_speed}>")))?;
    let cost_difference = new_cost - old_cost;
    let total = order.f64_or_zero("subtotal_amount")
        - order.f64_or_zero("discount_amount")
        - order.f64_or_zero("points_value")
        + new_cost;
    order.insert("shipping_speed".into(), json!(new_speed));
    order.insert("shipping_cost".into(), json!(new_cost));
    order.insert("total_amount".into(), json!(total));
    save(s, ORDERS, &order)?;
    Ok(out(vec![
        ("order_id", order.value("id")),
        ("old_shipping_speed", json!(old_speed)),
        ("new_shipping_speed", json!(new_speed)),
        ("cost_difference", json!(cost_difference)),
        ("updated", json!(true)),
    ]))
}
