//! Hardware procurement: a vendor call that always answers with the same purchase order and
//! writes nothing.

use serde_json::json;
use tb_sandbox::{Args, Session, ToolResult};

/// The purchase order every order gets.
const ORDER_ID: &str = "HWO-0056435";

/// `hardware_procurement_create_order`.
pub(crate) fn create_order(_s: &mut Session, _a: &Args) -> ToolResult {
    Ok(json!({ "order_id": ORDER_ID }))
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn fixed_order_and_validation() {
        let mut s = session(json!({}));
        let before = s.state.hash();
        calls!(s;
            "hardware_procurement_create_order" {"device_model": "X", "quantity": "2", "deliver_to": "Austin"} => {"order_id": "HWO-0056435"};
        );
        assert_eq!(s.state.hash(), before);
        calls!(s;
            "hardware_procurement_create_order" {"device_model": "X", "quantity": 1, "deliver_to": "Boston"} => error "Tool execution failed: Input validation failed: deliver_to: Input should be 'New York', 'San Francisco', 'Chicago' or 'Austin'";
        );
    }
}
