//! The table names of the retail server.

/// `oms` orders.
pub const ORDERS: &str = "external_retail_toolset_oms_models_orders";
/// `oms` order line items.
pub const LINE_ITEMS: &str = "external_retail_toolset_oms_models_order_line_items";
/// `oms` shipments.
pub const SHIPMENTS: &str = "external_retail_toolset_oms_models_shipments";
/// `oms` carrier tracking (keyed by tracking number).
pub const TRACKING: &str = "external_retail_toolset_oms_models_carrier_tracking";
/// `stripe` payment transactions.
pub const TRANSACTIONS: &str = "external_retail_toolset_stripe_models_payment_transactions";
/// `stripe` refunds.
pub const REFUNDS: &str = "external_retail_toolset_stripe_models_refunds";
/// `extend` warranty contracts.
pub const CONTRACTS: &str = "external_retail_toolset_extend_models_warranty_contracts";
/// `extend` warranty claims.
pub const CLAIMS: &str = "external_retail_toolset_extend_models_warranty_claims";
/// `jobber` installation jobs.
pub const JOBS: &str = "external_retail_toolset_jobber_models_installation_jobs";
/// `loop_returns` RMA records.
pub const RMAS: &str = "external_retail_toolset_loop_returns_models_rma_records";
/// `netsuite` inventory (keyed by sku).
pub const INVENTORY: &str = "external_retail_toolset_netsuite_models_inventory_records";
/// `promo` discount applications.
pub const DISCOUNTS: &str = "external_retail_toolset_promo_models_discount_applications";
/// `promo` active promotions.
pub const PROMOTIONS: &str = "external_retail_toolset_promo_models_active_promotions";
/// `salesforce` membership records.
pub const MEMBERSHIPS: &str = "external_retail_toolset_salesforce_models_membership_records";
/// `salesforce` customer profiles.
pub const PROFILES: &str = "external_retail_toolset_salesforce_models_customer_profiles";
/// `shopify_pim` products (keyed by sku).
pub const PRODUCTS: &str = "external_retail_toolset_shopify_pim_models_products";
