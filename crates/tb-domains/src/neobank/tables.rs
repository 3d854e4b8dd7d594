//! Table names of the neobank server (its main toolset).

pub const EMPLOYEES: &str = "sandbox_neobank_support_main_models_employees";
pub const OKTA_APP_ACCESS: &str = "sandbox_neobank_support_main_models_okta_app_access";
pub const OKTA_GROUPS: &str = "sandbox_neobank_support_main_models_okta_group_membership";
pub const OKTA_AUDIT: &str = "sandbox_neobank_support_main_models_okta_security_audit";
pub const INCIDENTS: &str = "sandbox_neobank_support_main_models_security_incidents";
pub const LICENSES: &str = "sandbox_neobank_support_main_models_software_licenses";
pub const ALLOCATIONS: &str = "sandbox_neobank_support_main_models_license_allocations";
pub const ASSETS: &str = "sandbox_neobank_support_main_models_hardware_assets";
pub const ASSIGNMENTS: &str = "sandbox_neobank_support_main_models_asset_assignments";
pub const ORDERS: &str = "sandbox_neobank_support_main_models_procurement_orders";
pub const APPROVALS: &str = "sandbox_neobank_support_main_models_approval_requests";
pub const NOTIFICATIONS: &str = "sandbox_neobank_support_main_models_email_notifications";
