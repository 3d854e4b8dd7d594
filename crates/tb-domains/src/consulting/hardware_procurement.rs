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
