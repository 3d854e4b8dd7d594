//! The `sandbox_external_retail` server: its tables, its zendesk variant and its own tools,
//! one file per toolset of the reference (in the reference's order).

use crate::PlainFn;
use tb_sandbox::{Domain, DomainError};

mod common;
pub mod extend;
pub mod jobber;
pub mod knowledge_base;
pub mod loop_returns;
pub mod netsuite;
pub mod oms;
pub mod promo;
pub mod salesforce;
pub mod shopify_pim;
pub mod stripe;

/// The server name.
pub const SERVER: &str = "sandbox_external_retail";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]).
fn functions() -> Vec<(&'static str, PlainFn)> {
    vec![
        ("cancel_order", oms::cancel_order),
        ("create_replacement_order", oms::create_replacement_order),
        ("get_order", oms::get_order),
        ("get_shipment_tracking", oms::get_shipment_tracking),
        ("reship_order", oms::reship_order),
        ("update_order_address", oms::update_order_address),
        ("update_shipping_speed", oms::update_shipping_speed),
        ("charge_customer", stripe::charge_customer),
        ("create_refund", stripe::create_refund),
        ("get_payment_status", stripe::get_payment_status),
        ("check_warranty_coverage", extend::check_warranty_coverage),
        ("file_warranty_claim", extend::file_warranty_claim),
        ("cancel_installation", jobber::cancel_installation),
        ("get_installation_job", jobber::get_installation_job),
        ("reschedule_installation", jobber::reschedule_installation),
        ("create_rma", loop_returns::create_rma),
        ("get_rma_status", loop_returns::get_rma_status),
        ("check_inventory", netsuite::check_inventory),
        ("get_discount_application", promo::get_discount_application),
        ("get_promotion_details", promo::get_promotion_details),
        ("add_points_to_balance", salesforce::add_points_to_balance),
        ("get_customer_profile", salesforce::get_customer_profile),
        ("get_membership_details", salesforce::get_membership_details),
        (
            "update_membership_status",
            salesforce::update_membership_status,
        ),
        ("get_product_details", shopify_pim::get_product_details),
        ("search_policy", knowledge_base::search_policy),
    ]
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_external_retail.tables"),
        crate::zendesk::Variant::Generic,
        include_str!("../../tools/sandbox_external_retail.tools"),
        crate::plain(functions()),
    )
}

#[cfg(test)]
mod tests;
