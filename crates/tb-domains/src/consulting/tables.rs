//! The table names of the consulting server (its own toolsets; zendesk tables are the
//! zendesk toolkit's).

/// `software_catalog_software_catalog`.
pub const SOFTWARE_CATALOG_SOFTWARE_CATALOG: &str = "software_catalog_software_catalog";

/// `salesforce_crm_sf_engagements`.
pub const SALESFORCE_CRM_SF_ENGAGEMENTS: &str = "salesforce_crm_sf_engagements";

/// `salesforce_crm_clients`.
pub const SALESFORCE_CRM_CLIENTS: &str = "salesforce_crm_clients";

/// `workday_employees`.
pub const WORKDAY_EMPLOYEES: &str = "workday_employees";

/// `okta_application_access_logs`.
pub const OKTA_APPLICATION_ACCESS_LOGS: &str = "okta_application_access_logs";

/// `mavenlink_employee_assignments`.
pub const MAVENLINK_EMPLOYEE_ASSIGNMENTS: &str = "mavenlink_employee_assignments";

/// `mavenlink_mv_engagements`.
pub const MAVENLINK_MV_ENGAGEMENTS: &str = "mavenlink_mv_engagements";

/// `concur_travel_requests`.
pub const CONCUR_TRAVEL_REQUESTS: &str = "concur_travel_requests";

/// `concur_expense_reports`.
pub const CONCUR_EXPENSE_REPORTS: &str = "concur_expense_reports";

/// `asset_management_device_assignments`.
pub const ASSET_MANAGEMENT_DEVICE_ASSIGNMENTS: &str = "asset_management_device_assignments";

/// `asset_management_devices`.
pub const ASSET_MANAGEMENT_DEVICES: &str = "asset_management_devices";

/// `license_management_license_allocation`.
pub const LICENSE_MANAGEMENT_LICENSE_ALLOCATION: &str = "license_management_license_allocation";

/// `license_management_license_pool_record`.
pub const LICENSE_MANAGEMENT_LICENSE_POOL_RECORD: &str = "license_management_license_pool_record";

/// `degreed_training_enrollments`.
pub const DEGREED_TRAINING_ENROLLMENTS: &str = "degreed_training_enrollments";

/// `degreed_training_courses`.
pub const DEGREED_TRAINING_COURSES: &str = "degreed_training_courses";

/// `degreed_certifications`.
pub const DEGREED_CERTIFICATIONS: &str = "degreed_certifications";

/// `client_access_client_system_access`.
pub const CLIENT_ACCESS_CLIENT_SYSTEM_ACCESS: &str = "client_access_client_system_access";

/// `client_access_clearance_record`.
pub const CLIENT_ACCESS_CLEARANCE_RECORD: &str = "client_access_clearance_record";

/// `client_access_nda_record`.
pub const CLIENT_ACCESS_NDA_RECORD: &str = "client_access_nda_record";

/// `client_access_vpn_access`.
pub const CLIENT_ACCESS_VPN_ACCESS: &str = "client_access_vpn_access";

/// `approval_approval_requests`.
pub const APPROVAL_APPROVAL_REQUESTS: &str = "approval_approval_requests";

/// `box_folder_access_logs`.
pub const BOX_FOLDER_ACCESS_LOGS: &str = "box_folder_access_logs";

/// `box_folders`.
pub const BOX_FOLDERS: &str = "box_folders";
