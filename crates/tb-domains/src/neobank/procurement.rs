//! Hardware procurement: purchase orders.

use super::{employee_by_email, next_id, tables};
use serde_json::{Value, json};
use tb_python::datetime::date_fromisoformat;
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `hardware_procurement_api_create_order`: a pending order `HW-ORDER-{n:07d}`; the delivery
/// date is the first 10 characters of the input read as an ISO date.
pub fn create_order(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("requester_email");
    let e = employee_by_email(s, email)?
        .ok_or_else(|| ToolError::new(format!("Requester not found: {email}")))?;
    let id = next_id(s, tables::ORDERS, "HW-ORDER-", 7)?;
    let raw = a.str_or_empty("expected_delivery_date");
    let head: String = raw.chars().take(10).collect();
    let date = date_fromisoformat(&head).ok_or_else(|| {
        ToolError::new(format!(
            "Invalid expected_delivery_date format: {raw}. Expected YYYY-MM-DD format."
        ))
    })?;
    s.insert(
        tables::ORDERS,
        &json!({
            "id": id,
            "device_type": a.value("device_type"),
            "device_model": a.value("device_model"),
            "quantity": a.value("quantity"),
            "ship_to_location": a.value("ship_to_location"),
            "requester_id": e.value("id"),
            "ticket_id": a.value("ticket_id"),
            "status": "pending",
            "created_at": null,
            "expected_delivery_date": date,
        }),
    )?;
    Ok(json!({ "order_id": id, "status": "pending" }))
}

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::super::testutil::{call, err, session};
    use serde_json::json;

    fn order(date: &str) -> serde_json::Value {
        json!({"device_type": "monitor", "device_model": "Dell P2425H", "quantity": "2", "expected_delivery_date": date,
               "ship_to_location": "1 Elm St", "requester_email": "marcus.thompson@vdb.com"})
    }

    #[tb_test_support::data_test]
    #[test]
    fn orders() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::ORDERS).unwrap();
        let r = call(
            &mut s,
            "hardware_procurement_api_create_order",
            order("2025-10-15T09:00:00Z"),
        );
        assert_eq!(
            r,
            json!({"order_id": format!("HW-ORDER-{:07}", n + 1), "status": "pending"})
        );
        let row = s
            .state
            .rows(tables::ORDERS)
            .unwrap()
            .last()
            .unwrap()
            .clone();
        assert_eq!(row["expected_delivery_date"], "2025-10-15");
        assert_eq!(row["quantity"], 2);
        assert_eq!(row["requester_id"], "WD-847291");
        calls!(s;
            "hardware_procurement_api_create_order" (order("15/10/2025")) => error "Tool execution failed: Invalid expected_delivery_date format: 15/10/2025. Expected YYYY-MM-DD format.";
        );
        let mut bad = order("2025-10-15");
        bad["requester_email"] = json!("x@x");
        calls!(s;
            "hardware_procurement_api_create_order" bad => error "Tool execution failed: Requester not found: x@x";
        );
        let mut bad = order("2025-10-15");
        bad["device_type"] = json!("tablet");
        let e = err(&mut s, "hardware_procurement_api_create_order", bad);
        assert!(e.starts_with("Tool execution failed: Input validation failed: device_type: Input should be 'laptop_standard'"), "{e}");
        let mut bad = order("2025-10-15");
        bad.as_object_mut().unwrap().remove("quantity");
        calls!(s;
            "hardware_procurement_api_create_order" bad => error "Tool execution failed: Input validation failed: quantity: Field required";
        );
    }
}
