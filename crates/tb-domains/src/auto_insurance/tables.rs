//! The table names of the auto insurance server.

/// `billing` billing accounts.
pub const ACCOUNTS: &str = "billing_billing_accounts";
/// `claims` claims.
pub const CLAIMS: &str = "claims_claims";
/// `crm` customers.
pub const CUSTOMERS: &str = "crm_customers";
/// `policy` policies.
pub const POLICIES: &str = "policy_policies";
/// `policy` vehicles.
pub const VEHICLES: &str = "policy_vehicles";
/// `policy` drivers.
pub const DRIVERS: &str = "policy_drivers";
/// `policy` policy documents.
pub const DOCUMENTS: &str = "policy_policy_documents";
