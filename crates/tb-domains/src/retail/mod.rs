//! The `sandbox_external_retail` server: its tables, its zendesk variant and its own tools,
//! one file per toolset of the reference (in the reference's order).

use tb_sandbox::{Domain, DomainError, Tools};

mod common;
pub mod extend;
pub mod jobber;
pub mod loop_returns;
pub mod netsuite;
pub mod oms;
pub mod promo;
pub mod salesforce;
pub mod shopify_pim;
pub mod stripe;
pub mod tables;

/// The server name.
pub const SERVER: &str = "sandbox_external_retail";

/// This domain's own tool functions, by tool name (zendesk tools come from [`crate::zendesk`]),
/// each with the prefix the reference puts before an unexpected failure.
fn functions() -> Tools {
    let mut t = Tools::new();
    t.add_prefixed("cancel_order", "Failed to cancel order", oms::cancel_order)
        .add_prefixed(
            "create_replacement_order",
            "Failed to create replacement order",
            oms::create_replacement_order,
        )
        .add_prefixed("get_order", "Failed to retrieve order", oms::get_order)
        .add_prefixed(
            "get_shipment_tracking",
            "Failed to retrieve shipment tracking",
            oms::get_shipment_tracking,
        )
        .add_prefixed("reship_order", "Failed to reship order", oms::reship_order)
        .add_prefixed(
            "update_order_address",
            "Failed to update order address",
            oms::update_order_address,
        )
        .add_prefixed(
            "update_shipping_speed",
            "Failed to update shipping speed",
            oms::update_shipping_speed,
        )
        .add_prefixed(
            "charge_customer",
            "Failed to charge customer",
            stripe::charge_customer,
        )
        .add_prefixed(
            "create_refund",
            "Failed to create refund",
            stripe::create_refund,
        )
        .add_prefixed(
            "get_payment_status",
            "Failed to retrieve payment status",
            stripe::get_payment_status,
        )
        .add_prefixed(
            "check_warranty_coverage",
            "Failed to check warranty coverage",
            extend::check_warranty_coverage,
        )
        .add_prefixed(
            "file_warranty_claim",
            "Failed to file warranty claim",
            extend::file_warranty_claim,
        )
        .add_prefixed(
            "cancel_installation",
            "Failed to cancel installation",
            jobber::cancel_installation,
        )
        .add_prefixed(
            "get_installation_job",
            "Failed to retrieve installation job",
            jobber::get_installation_job,
        )
        .add_prefixed(
            "reschedule_installation",
            "Failed to reschedule installation",
            jobber::reschedule_installation,
        )
        .add_prefixed(
            "create_rma",
            "Failed to create RMA",
            loop_returns::create_rma,
        )
        .add_prefixed(
            "get_rma_status",
            "Failed to retrieve RMA status",
            loop_returns::get_rma_status,
        )
        .add_prefixed(
            "check_inventory",
            "Failed to check inventory",
            netsuite::check_inventory,
        )
        .add_prefixed(
            "get_discount_application",
            "Failed to retrieve discount application",
            promo::get_discount_application,
        )
        .add_prefixed(
            "get_promotion_details",
            "Failed to retrieve promotion details",
            promo::get_promotion_details,
        )
        .add_prefixed(
            "add_points_to_balance",
            "Failed to add points to balance",
            salesforce::add_points_to_balance,
        )
        .add_prefixed(
            "get_customer_profile",
            "Failed to retrieve customer profile",
            salesforce::get_customer_profile,
        )
        .add_prefixed(
            "get_membership_details",
            "Failed to retrieve membership details",
            salesforce::get_membership_details,
        )
        .add_prefixed(
            "update_membership_status",
            "Failed to update membership status",
            salesforce::update_membership_status,
        )
        .add_prefixed(
            "get_product_details",
            "Failed to retrieve product details",
            shopify_pim::get_product_details,
        )
        .add("search_policy", crate::policy::search_policy);
    t
}

/// Builds the domain.
pub fn domain() -> Result<Domain, DomainError> {
    crate::build(
        SERVER,
        include_str!("../../tables/sandbox_external_retail.tables"),
        crate::zendesk::Variant::Generic,
        include_str!("../../tools/sandbox_external_retail.tools"),
        functions(),
    )
}

#[cfg(test)]
mod tests;
