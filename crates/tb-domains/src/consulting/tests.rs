//! The consulting tools called on the initial data (a patch where a case needs one), one
//! module per toolset: the replies and error texts the reference gives.

use super::*;
use serde_json::json;

#[test]
fn unexpected_failures_get_the_tool_prefix() {
    // ExecutionErrors pass as they are; database errors get the tool's prefix.
    let d = domain().unwrap();
    let mut s = tb_sandbox::Loaded {
        base: tb_sandbox::State::empty(d.layout().clone()),
        domain: std::sync::Arc::new(d),
    }
    .session(&json!({}), tb_sandbox::Clock::default())
    .unwrap();
    assert_eq!(
        s.call("approver_lookup_get_contact", &json!({"email": "x@y"}))
            .to_json("t")["error"],
        json!("Tool execution failed: Approver not found: x@y")
    );
    let e: ToolError = tb_sandbox::StateError::Duplicate("AAL-2-000000".into()).into();
    assert_eq!(
        e.prefixed("Failed to provision access").to_string(),
        "Failed to provision access: Object with ID AAL-2-000000 already exists"
    );
    assert_eq!(
        out([
            ("x", json!(1)),
            ("y", serde_json::Value::Null),
            ("z", json!(""))
        ]),
        json!({"x": 1, "z": ""})
    );
}

#[tb_test_support::data_test]
#[test]
fn probed_ids_fill_the_first_gap() {
    let mut s = testutil::session(json!({
        "approval_approval_requests": [
            {"id": "APR-2-000000", "request_type": "travel", "requester_email": "a", "approver_email": "b"},
            {"id": "APR-2-000002", "request_type": "travel", "requester_email": "a", "approver_email": "b"}
        ]
    }));
    assert_eq!(
        probe_id(&s, tables::APPROVAL_APPROVAL_REQUESTS, "APR-2").unwrap(),
        "APR-2-000001"
    );
    let made = testutil::call(
        &mut s,
        "approval_create_request",
        json!({"request_type": "travel", "requester_email": "a", "approver_email": "b"}),
    );
    assert_eq!(made, json!({"approval_id": "APR-2-000001"}));
    assert_eq!(
        probe_id(&s, tables::APPROVAL_APPROVAL_REQUESTS, "APR-2").unwrap(),
        "APR-2-000003"
    );
}

mod approval {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn create_then_status() {
        let mut s = session(json!({}));
        calls!(s;
            "approval_get_status" {"request_type": "travel", "requester_email": "t@msg.com"} => {"results": [{"approval_id": "NOT_FOUND", "status": "not_found", "request_type": "travel", "approver_email": ""}]};
        );
        let made = call(
            &mut s,
            "approval_create_request",
            json!({"request_type": "travel", "requester_email": "t@msg.com", "approver_email": "m@msg.com", "amount": "250"}),
        );
        let id = made["approval_id"].as_str().unwrap().to_string();
        assert!(id.starts_with("APR-2-"), "{made}");
        let row = crate::testdata::stored(&s, "approval_approval_requests", &json!(id));
        assert_eq!(row["amount"], json!(250));
        calls!(s;
            "approval_get_status" {"request_type": "travel", "requester_email": "t@msg.com", "approver_email": "m@msg.com"} => {"results": [{"approval_id": id, "status": "pending", "request_type": "travel", "approver_email": "m@msg.com"}]};
            "approval_create_request" {"request_type": "lunch", "requester_email": "t@msg.com", "approver_email": "m@msg.com"} => error "Tool execution failed: Input validation failed: request_type: Input should be 'software_access', 'hardware_replacement', 'client_access', 'training_engagement_coordination', 'training_cost', 'expense_override', 'travel' or 'document_access'";
            "approval_create_request" {"request_type": "travel", "requester_email": "t@msg.com"} => error "Tool execution failed: Input validation failed: approver_email: Field required";
        );
    }
}

mod approver_lookup {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn unknown_approver() {
        let mut s = session(json!({}));
        calls!(s;
            "approver_lookup_get_contact" {"email": "nobody@msg.com"} => error "Tool execution failed: Approver not found: nobody@msg.com";
            "approver_lookup_get_contact" {} => error "Tool execution failed: Input validation failed: email: Field required";
        );
    }
}

mod asset_management {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn reserve_assign_retire() {
        let dev = |id: &str, status: &str| json!({"id": id, "device_type": "headset", "model": "H1", "age_months": 3, "inventory_status": status, "location": "Austin"});
        let mut s = session(json!({
            "asset_management_devices": [dev("ZZ-9", "available"), dev("ZZ-10", "available"), dev("ZZ-11", "assigned")]
        }));
        let before = call(
            &mut s,
            "asset_management_api",
            json!({"action": "check_inventory", "device_type": "headset", "location": "Austin"}),
        );
        let n = before["available_count_by_model"]["H1"].as_i64().unwrap();
        assert!(n >= 2, "{before}");
        // Lowest id by string order: "ZZ-10" < "ZZ-9".
        let r = call(
            &mut s,
            "asset_management_api",
            json!({"action": "reserve_device", "device_type": "headset", "location": "Austin"}),
        );
        let reserved = r["reserved_asset_id"].as_str().unwrap().to_string();
        assert_eq!(
            s.state
                .get("asset_management_devices", &json!(reserved))
                .unwrap()
                .unwrap()["inventory_status"],
            json!("reserved")
        );
        calls!(s;
            "asset_management_api" {"action": "assign_device", "email": "t@msg.com", "asset_id": "ZZ-9"} => {"success": true};
        );
        let devices = call(
            &mut s,
            "asset_management_api",
            json!({"action": "get_employee_devices", "email": "t@msg.com"}),
        );
        assert_eq!(devices["devices"][0]["asset_id"], json!("ZZ-9"));
        assert!(
            devices["devices"][0]["id"]
                .as_str()
                .unwrap()
                .starts_with("ASMT-2-")
        );
        calls!(s;
            "asset_management_api" {"action": "retire_device", "asset_id": "NOPE"} => error "Tool execution failed: Device not found: NOPE";
            "asset_management_api" {"action": "reserve_device", "device_type": "headset"} => error "Tool execution failed: Missing required parameter: location";
            "asset_management_api" {"action": "reserve_device", "device_type": "headset", "location": "Chicago"} => error "Tool execution failed: No available headset devices at Chicago";
        );
    }
}

mod background_check {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn initiate_upserts() {
        let mut s = session(json!({}));
        let status = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "background_check_api",
                json!({"action": "get_status", "email": "t@msg.com"}),
            )
        };
        assert_eq!(
            status(&mut s),
            json!({"clearance_data": {"clearance_level": "standard", "status": "not_initiated"}})
        );
        let start = |s: &mut tb_sandbox::Session, level: &str| {
            call(
                s,
                "background_check_api",
                json!({"action": "initiate", "email": "t@msg.com", "clearance_level": level}),
            )
        };
        assert_eq!(start(&mut s, "standard"), json!({"success": true}));
        let n = s.state.count("client_access_clearance_record").unwrap();
        assert_eq!(start(&mut s, "high_security"), json!({"success": true}));
        assert_eq!(s.state.count("client_access_clearance_record").unwrap(), n);
        assert_eq!(
            status(&mut s),
            json!({"clearance_data": {"clearance_level": "high_security", "status": "in_progress"}})
        );
        calls!(s;
            "background_check_api" {"action": "get_timeline", "clearance_level": "high_security"} => {"estimated_days": 28};
            "background_check_api" {"action": "initiate", "email": "t@msg.com"} => error "Tool execution failed: Missing required parameter: clearance_level";
        );
    }
}

mod box_folders {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn folders() {
        let mut s = session(json!({
            "box_folders": [{"id": "FLD-T", "folder_name": "T", "confidentiality_level": "internal", "owner_email": "o@msg.com"}]
        }));
        calls!(s;
            "box_api" {"action": "get_folder_details", "folder_id": "FLD-T"} => {"folder_data": {"id": "FLD-T", "folder_name": "T", "confidentiality_level": "internal", "owner_email": "o@msg.com"}};
            "box_api" {"action": "grant_folder_access", "folder_id": "FLD-T", "email": "t@msg.com", "permission_level": "viewer"} => {"success": true};
            "box_api" {"action": "grant_folder_access", "folder_id": "FLD-NOPE", "email": "t@msg.com", "permission_level": "viewer"} => error "Tool execution failed: Folder not found: FLD-NOPE";
            "box_api" {"action": "grant_folder_access", "folder_id": "FLD-T", "email": "t@msg.com"} => error "Tool execution failed: Missing required parameter: permission_level";
            "box_api" {"action": "delete_folder", "folder_id": "FLD-T"} => error "Tool execution failed: Input validation failed: action: Input should be 'get_folder_details' or 'grant_folder_access'";
        );
    }
}

mod client_access {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn vpn_lifecycle_and_prerequisites() {
        let mut s = session(json!({}));
        let grant = |s: &mut tb_sandbox::Session, client: serde_json::Value| {
            call(
                s,
                "client_access_api",
                json!({"action": "provision_vpn", "email": "t@msg.com", "client_id": client}),
            )
        };
        assert_eq!(grant(&mut s, json!("CLT-A")), json!({"success": true}));
        assert_eq!(grant(&mut s, json!(null)), json!({"success": true}));
        let active = call(
            &mut s,
            "client_access_api",
            json!({"action": "check_vpn_access", "email": "t@msg.com"}),
        );
        assert_eq!(active["vpn_access"].as_array().unwrap().len(), 2);
        assert!(active["vpn_access"][1].get("client_id").is_none());
        call(
            &mut s,
            "client_access_api",
            json!({"action": "revoke_vpn", "email": "t@msg.com", "client_id": "CLT-A"}),
        );
        let active = call(
            &mut s,
            "client_access_api",
            json!({"action": "check_vpn_access", "email": "t@msg.com"}),
        );
        assert_eq!(active["vpn_access"].as_array().unwrap().len(), 1);
        call(
            &mut s,
            "client_access_api",
            json!({"action": "revoke_vpn", "email": "t@msg.com"}),
        );
        calls!(s;
            "client_access_api" {"action": "check_vpn_access", "email": "t@msg.com"} => {"vpn_access": []};
            "client_access_api" {"action": "get_employee_prerequisites", "email": "t@msg.com", "client_id": "CLT-A"} => {"clearance_status": "not_initiated", "nda_status": "not_signed", "completed_training_courses": []};
            "client_access_api" {"action": "provision_client_system", "email": "t@msg.com", "client_id": "CLT-A", "system_name": "X"} => error "Tool execution failed: Missing required parameter: access_type";
            "client_access_api" {"action": "check_client_requirements", "client_id": "CLT-NOPE"} => error "Tool execution failed: Client not found: CLT-NOPE";
        );
    }
}

mod concur {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn override_updates_the_report() {
        let mut s = session(json!({
            "concur_expense_reports": [{"id": "EXP-T", "employee_email": "t@msg.com", "amount": 120, "category": "meals",
                "expense_date": "2025-09-01T00:00:00", "receipt_status": "missing", "rejection_reason": "No receipt"}]
        }));
        calls!(s;
            "concur_api" {"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "system_error"} => error "Tool execution failed: Missing required parameter: approver_email";
            "concur_api" {"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "because", "approver_email": "m@msg.com"} => error "Tool execution failed: Input validation failed: override_reason: Input should be 'justified_exception', 'system_error' or 'receipt_exception'";
            "concur_api" {"action": "override_expense_rejection", "expense_report_id": "EXP-T", "override_reason": "system_error", "approver_email": "m@msg.com"} => {"success": true};
        );
        let r = call(
            &mut s,
            "concur_api",
            json!({"action": "get_expense_report", "expense_report_id": "EXP-T"}),
        );
        assert_eq!(
            r["expense_report"]["override_approved_by"],
            json!("m@msg.com")
        );
        assert_eq!(
            r["expense_report"]["override_reason"],
            json!("system_error")
        );
        assert!(r["expense_report"].get("trip_location_city").is_none());
        calls!(s;
            "concur_api" {"action": "get_travel_booking", "booking_id": "TRV-NOPE"} => error "Tool execution failed: Travel booking not found: TRV-NOPE";
        );
    }
}

mod degreed {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn seats_enrollment_and_history() {
        let mut s = session(json!({
            "degreed_training_courses": [{"id": "CRS-T", "title": "Test Driving", "cost": 10, "training_category": "conference", "max_seats": 1}],
            "degreed_certifications": [{"id": "CERT-T", "employee_email": "t@msg.com", "certification_name": "HIPAA", "issued_date": "2024-01-01T00:00:00Z"}]
        }));
        let seats = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "degreed_api",
                json!({"action": "check_enrollment", "course_id": "CRS-T"}),
            )
        };
        assert_eq!(seats(&mut s), json!({"available_seats": 1}));
        calls!(s;
            "degreed_api" {"action": "enroll_employee", "email": "t@msg.com", "course_id": "CRS-T"} => {"success": true};
        );
        assert_eq!(seats(&mut s), json!({"available_seats": 0}));
        let found = call(
            &mut s,
            "degreed_api",
            json!({"action": "search_courses", "keyword": "test driv", "category": "conference"}),
        );
        assert_eq!(
            found["courses"][0],
            json!({"id": "CRS-T", "title": "Test Driving", "cost": 10, "training_category": "conference", "max_seats": 1, "prerequisites": []})
        );
        let history = call(
            &mut s,
            "degreed_api",
            json!({"action": "get_training_history", "email": "t@msg.com"}),
        );
        assert_eq!(
            history["certifications"][0]["issued_date"],
            json!("2024-01-01T00:00:00+00:00")
        );
        calls!(s;
            "degreed_api" {"action": "check_certification_status", "email": "t@msg.com", "certification_name": "hipaa"} => {"has_certification": true};
            "degreed_api" {"action": "enroll_employee", "email": "t@msg.com", "course_id": "CRS-NOPE"} => error "Tool execution failed: Course not found: CRS-NOPE";
            "degreed_api" {"action": "get_required_trainings", "client_id": "CLT-NOPE"} => error "Tool execution failed: Client not found: CLT-NOPE";
            "degreed_api" {"action": "search_courses"} => error "Tool execution failed: Missing required parameter: keyword";
        );
    }
}

mod hardware_procurement {
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

mod license_management {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn pools_and_allocations() {
        let mut s = session(json!({
            "license_management_license_pool_record": [
                {"catalog_id": "CAT-T", "pool_type": "standard", "total_licenses": 2},
                {"catalog_id": "CAT-T", "pool_type": "enterprise"}
            ]
        }));
        let check = |s: &mut tb_sandbox::Session, pool: &str| {
            call(
                s,
                "license_management_api",
                json!({"action": "check_availability", "catalog_id": "CAT-T", "pool_type": pool}),
            )
        };
        assert_eq!(check(&mut s, "standard"), json!({"available_count": 2}));
        assert_eq!(
            check(&mut s, "enterprise"),
            json!({"available_count": 99999})
        );
        let alloc = json!({"action": "allocate", "catalog_id": "CAT-T", "email": "t@msg.com", "pool_type": "standard"});
        calls!(s;
            "license_management_api" alloc => {"success": true};
        );
        assert_eq!(check(&mut s, "standard"), json!({"available_count": 1}));
        calls!(s;
            "license_management_api" {"action": "check_availability", "catalog_id": "CAT-NOPE", "pool_type": "standard"} => error "Tool execution failed: License pool not found for catalog_id=CAT-NOPE, pool_type=standard";
            "license_management_api" {"action": "allocate", "catalog_id": "CAT-T", "pool_type": "standard"} => error "Tool execution failed: Missing required parameter: email";
            "license_management_api" {"action": "get_cost", "catalog_id": "CAT-NOPE"} => error "Tool execution failed: Software catalog entry not found: CAT-NOPE";
        );
    }
}

mod mavenlink {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn engagements_and_assignments() {
        let mut s = session(json!({}));
        calls!(s;
            "mavenlink_api" {"action": "validate_engagement_code", "engagement_code": "ENG-NOPE"} => {"valid": false};
            "mavenlink_api" {"action": "get_engagement", "engagement_code": "ENG-NOPE"} => error "Tool execution failed: Engagement not found: ENG-NOPE";
            "mavenlink_api" {"action": "validate_engagement_code", "engagement_code": ""} => error "Tool execution failed: Missing required parameter: engagement_code";
            "mavenlink_api" {"action": "get_employee_assignments", "email": "nobody@msg.com"} => {"assignments": []};
        );
    }
}

mod nda {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn send_then_check() {
        let mut s = session(json!({}));
        let check = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "nda_api",
                json!({"action": "check_status", "email": "t@msg.com", "client_id": "CLT-T"}),
            )
        };
        assert_eq!(
            check(&mut s),
            json!({"signed": false, "nda_data": {"status": "not_signed"}})
        );
        let send =
            json!({"action": "send_for_signature", "email": "t@msg.com", "client_id": "CLT-T"});
        calls!(s;
            "nda_api" (send.clone()) => {"success": true};
        );
        let n = s.state.count("client_access_nda_record").unwrap();
        calls!(s;
            "nda_api" send => {"success": true};
        );
        assert_eq!(s.state.count("client_access_nda_record").unwrap(), n);
        assert!(
            s.state
                .get("client_access_nda_record", &json!("t@msg.com:CLT-T"))
                .unwrap()
                .is_some()
        );
        assert_eq!(
            check(&mut s),
            json!({"signed": false, "nda_data": {"status": "sent_for_signature"}})
        );
        calls!(s;
            "nda_api" {"action": "check_status", "email": "t@msg.com"} => error "Tool execution failed: Missing required parameter: client_id";
            "nda_api" {"action": "check_status", "email": "t@msg.com", "client_id": "C", "folder": 1} => error "Tool execution failed: Input validation failed: folder: Extra inputs are not permitted";
        );
    }
}

mod okta {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn grants_get_probed_ids() {
        let mut s = session(json!({
            "okta_application_access_logs": [{"id": "AAL-2-000000", "employee_email": "x@msg.com", "app_name": "Box"}]
        }));
        calls!(s;
            "okta_provision_access" {"email": "t@msg.com", "app_name": "Tableau"} => {"success": true};
        );
        let row =
            crate::testdata::stored(&s, "okta_application_access_logs", &json!("AAL-2-000001"));
        assert_eq!(row["access_type"], json!("full_access"));
        calls!(s;
            "okta_provision_access" {"email": "t@msg.com", "app_name": "X", "access_type": "owner"} => error "Tool execution failed: Input validation failed: access_type: Input should be 'full_access', 'read_only', 'contributor' or 'admin'";
        );
    }
}

mod salesforce_crm {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn engagement_and_assignment() {
        let mut s = session(json!({
            "mavenlink_employee_assignments": [{"id": "T-1", "employee_email": "t@msg.com", "engagement_code": "ENG-T",
                "assignment_status": "booked", "start_date": "2025-01-02T00:00:00Z", "senior_manager_email": "m@msg.com"}]
        }));
        calls!(s;
            "salesforce_crm_check_employee_assignment" {"email": "t@msg.com", "engagement_code": "ENG-T"} => {"assigned": true, "assignment_status": "booked", "start_date": "2025-01-02T00:00:00+00:00"};
            "salesforce_crm_check_employee_assignment" {"email": "x@msg.com", "engagement_code": "ENG-T"} => {"assigned": false};
            "salesforce_crm_get_engagement" {"engagement_code": "ENG-NOPE"} => error "Tool execution failed: Engagement not found: ENG-NOPE";
            "salesforce_crm_check_employee_assignment" {"email": "t@msg.com"} => error "Tool execution failed: Input validation failed: engagement_code: Field required";
        );
    }
}

mod software_catalog {
    use crate::consulting::testutil::{call, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn lookups_and_their_errors() {
        let mut s = session(json!({
            "software_catalog_software_catalog": [{"id": "CAT-T", "name": "Tableau Desktop", "annual_cost": 840, "pool_type": "standard"}]
        }));
        let found = call(
            &mut s,
            "software_catalog_search",
            json!({"software_name": "tAbLeAu"}),
        );
        let id = found["results"][0]["id"].clone();
        assert!(id.is_string(), "{found}");
        calls!(s;
            "software_catalog_get_details" {"catalog_id": id} => (found["results"][0]);
            "software_catalog_get_details" {"catalog_id": "CAT-NOPE"} => error "Tool execution failed: Software not found in catalog: CAT-NOPE";
            "software_catalog_search" {"software_name": "zzqx"} => error "Tool execution failed: No matching software found in catalog for: zzqx";
            "software_catalog_search" {} => error "Tool execution failed: Input validation failed: software_name: Field required";
            "software_catalog_search" {"software_name": "x", "limit": 3} => error "Tool execution failed: Input validation failed: limit: Extra inputs are not permitted";
        );
    }
}

mod workday {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn employee_lookup() {
        let mut s = session(json!({
            "workday_employees": [{"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin",
                "start_date": "2024-05-01T00:00:00"}]
        }));
        calls!(s;
            "workday_api" {"action": "get_employee", "email": "t@msg.com"} => {"employee_data": {"email": "t@msg.com", "name": "T", "level": "Analyst", "office_location": "Austin", "start_date": "2024-05-01T00:00:00", "availability_status": "available"}};
            "workday_api" {"action": "get_employee"} => error "Tool execution failed: Missing required parameter: email";
            "workday_api" {"action": "get_employee", "email": "nobody@msg.com"} => error "Tool execution failed: Employee not found: nobody@msg.com";
            "workday_api" {"action": "fire"} => error "Tool execution failed: Input validation failed: action: Input should be 'get_employee'";
        );
    }
}
