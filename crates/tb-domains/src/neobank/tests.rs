//! The neobank tools called on the initial data (a patch where a case needs one), one
//! module per toolset: the replies and error texts the reference gives.

use super::*;

#[test]
fn repr_like_python() {
    assert_eq!(py_repr("abc"), "'abc'");
    assert_eq!(py_repr("it's"), "\"it's\"");
    assert_eq!(py_repr("a'b\"c"), "'a\\'b\"c'");
    assert_eq!(py_repr("x\ny"), "'x\\ny'");
    assert_eq!(py_repr(""), "''");
}

mod approval {
    use super::super::tables;
    use super::super::testutil::session;
    use serde_json::json;

    fn request() -> serde_json::Value {
        json!({"request_type": "access_request", "requester_email": "marcus.thompson@vdb.com",
               "approver_email": "sarah.jones@vdb.com", "details": "Need read access"})
    }

    #[tb_test_support::data_test]
    #[test]
    fn create_and_check() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::APPROVALS).unwrap();
        let id = format!("APR-{:08}", n + 1);
        calls!(s;
            "approval_api_create_request" (request()) => {"approval_request_id": id, "status": "pending"};
        );
        let row = crate::testdata::last_row(&s, tables::APPROVALS);
        assert_eq!(row["urgency"], "standard");
        assert_eq!(row["requester_id"], "WD-847291");
        calls!(s;
            "approval_api_check_status" {"approval_request_id": id} => {"status": "pending"};
            "approval_api_check_status" {"approval_request_id": "APR-19263847"} => {"status": "approved", "decided_at": "2025-09-16T14:00:00Z", "approver_feedback": "Approved for 30-day access period"};
            "approval_api_check_status" {"approval_request_id": "APR-0"} => error "Tool execution failed: Approval request not found: APR-0";
            "approval_api_check_status" {} => error "Tool execution failed: Input validation failed: approval_request_id: Field required";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn create_errors() {
        let mut s = session(json!({}));
        let mut r = request();
        r["requester_email"] = json!("x@x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Requester not found: x@x";
        );
        let mut r = request();
        r["approver_email"] = json!("y@x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Approver not found: y@x";
        );
        let mut r = request();
        r["urgency"] = json!("asap");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Input validation failed: urgency: Input should be 'standard', 'urgent' or 'critical'";
        );
        let mut r = request();
        r["note"] = json!("x");
        calls!(s;
            "approval_api_create_request" r => error "Tool execution failed: Input validation failed: note: Extra inputs are not permitted";
        );
        // The count-based id already taken: the store refuses, wrapped by the tool's catch-all.
        let n = s.state.count(tables::APPROVALS).unwrap();
        let taken = format!("APR-{:08}", n + 2);
        let mut s = session(
            json!({tables::APPROVALS: [{"id": taken, "request_type": "data_export", "requester_id": "WD-1",
            "approver_id": "WD-2", "status": "rejected", "details": "x"}]}),
        );
        calls!(s;
            "approval_api_create_request" (request()) => error format!("Tool execution failed: Failed to create approval request: Object with ID {taken} already exists");
        );
    }
}

mod approver {
    use super::super::tables;
    use super::super::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn approver_by_department() {
        let mut s = session(json!({}));
        calls!(s;
            "approver_lookup_api_get_approver_contact" {"required_approver": "IT_Security"} => {"employee_id": "WD-753918", "contact_email": "amanda.lee@vdb.com", "contact_name": "Amanda Lee"};
            "approver_lookup_api_get_approver_contact" {"required_approver": "legal"} => error "Tool execution failed: Invalid required_approver: legal. Must be one of: it_security, finance_accounting, compliance_risk";
            "approver_lookup_api_get_approver_contact" {"required_approver": "it_security", "x": 1} => error "Tool execution failed: Input validation failed: x: Extra inputs are not permitted";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn availability_and_backup() {
        let mut s = session(json!({tables::EMPLOYEES: [
            {"id": "WD-L", "email": "leave@x", "full_name": "On Leave", "level": 5, "department": "sales", "role": "r",
             "office_location": "sf", "start_date": "2020", "manager_id": "WD-294817", "employment_status": "on_leave"},
            {"id": "WD-T", "email": "gone@x", "full_name": "Gone", "level": 5, "department": "sales", "role": "r",
             "office_location": "sf", "start_date": "2020", "employment_status": "terminated"}
        ]}));
        calls!(s;
            "approver_lookup_api_get_contact_details" {"email": "leave@x"} => {"name": "On Leave", "availability_status": "on_leave", "backup_approver_email": "lisa.chen@vdb.com"};
            "approver_lookup_api_get_contact_details" {"email": "gone@x"} => {"name": "Gone", "availability_status": "unavailable"};
            "approver_lookup_api_get_contact_details" {"email": "nope@x"} => error "Tool execution failed: Approver not found: nope@x";
        );
    }
}

mod assets {
    use super::super::tables;
    use super::super::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn inventory_assign_retire() {
        let mut s = session(json!({}));
        let inv = call(
            &mut s,
            "asset_management_api_check_inventory",
            json!({"device_type": "headset", "warehouse_location": "nyc"}),
        );
        assert_eq!(
            (inv["available_count"].clone(), inv["total_count"].clone()),
            (json!(1), json!(1))
        );
        calls!(s;
            "asset_management_api_check_inventory" {"device_type": "tablet", "warehouse_location": "sf"} => error "Tool execution failed: Invalid device type: tablet";
            "asset_management_api_check_inventory" {"device_type": "mouse", "warehouse_location": "mars"} => error "Tool execution failed: Invalid warehouse location: mars";
        );
        let n = s.state.count(tables::ASSIGNMENTS).unwrap();
        calls!(s;
            "asset_management_api_assign_device" {"asset_id": "VDB-HW-19263", "email": "marcus.thompson@vdb.com"} => {"assignment_id": format!("ASN-{:08}", n + 1), "asset_id": "VDB-HW-19263", "employee_id": "WD-847291"};
            "asset_management_api_assign_device" {"asset_id": "VDB-HW-19263", "email": "marcus.thompson@vdb.com"} => error "Tool execution failed: Asset VDB-HW-19263 is already assigned";
        );
        // The new assignment has no assigned_at, which the reference's output model rejects.
        let e = err(
            &mut s,
            "asset_management_api_get_employee_devices",
            json!({"email": "marcus.thompson@vdb.com"}),
        );
        assert!(
            e.starts_with(
                "Tool execution failed: 1 validation error for DeviceInfo\nassigned_at\n"
            ),
            "{e}"
        );
        let d = call(
            &mut s,
            "asset_management_api_get_device_details",
            json!({"asset_id": "VDB-HW-19263"}),
        );
        assert_eq!(d["assigned_to"], "WD-847291");
        calls!(s;
            "asset_management_api_retire_device" {"asset_id": "VDB-HW-19263"} => {"asset_id": "VDB-HW-19263", "previous_condition": d["condition"], "retired_at": "2025-12-17T10:00:00Z", "was_assigned": true};
        );
        let asn = crate::testdata::last_row(&s, tables::ASSIGNMENTS);
        assert_eq!(asn["is_active"], false);
        assert_eq!(asn["returned_at"], "2025-12-17T10:00:00Z");
        calls!(s;
            "asset_management_api_retire_device" {"asset_id": "VDB-HW-19263"} => error "Tool execution failed: Asset VDB-HW-19263 is already retired";
            "asset_management_api_assign_device" {"asset_id": "VDB-HW-19263", "email": "lisa.chen@vdb.com"} => error "Tool execution failed: Cannot assign retired asset: VDB-HW-19263";
            "asset_management_api_assign_device" {"asset_id": "nope", "email": "lisa.chen@vdb.com"} => error "Tool execution failed: Asset not found: nope";
            "asset_management_api_assign_device" {"asset_id": "nope", "email": "x@x"} => error "Tool execution failed: Employee not found: x@x";
            "asset_management_api_retire_device" {"asset_id": "VDB-HW-1", "why": "x"} => error "Tool execution failed: Input validation failed: why: Extra inputs are not permitted";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn device_age_and_bad_purchase_dates() {
        let mut s = session(json!({tables::ASSETS: [
            {"id": "HW-X", "device_type": "mouse", "device_model": "M", "purchase_date": "2025-11-17", "warehouse_location": "sf"},
            {"id": "HW-Y", "device_type": "mouse", "device_model": "M", "purchase_date": "last year", "warehouse_location": "sf"}
        ]}));
        let d = call(
            &mut s,
            "asset_management_api_get_device_details",
            json!({"asset_id": "HW-X"}),
        );
        assert_eq!(d["age_months"], 1);
        assert!(d.get("assigned_to").is_none());
        calls!(s;
            "asset_management_api_get_device_details" {"asset_id": "HW-Y"} => error "Tool execution failed: Invalid purchase_date for asset HW-Y: 'last year'";
        );
    }
}

mod email {
    use super::super::tables;
    use super::super::testutil::{err, session};
    use serde_json::json;

    fn mail(to: &str) -> serde_json::Value {
        json!({"recipient_email": to, "notification_type": "ticket_update", "subject": "S", "body": "B"})
    }

    #[tb_test_support::data_test]
    #[test]
    fn send_and_refuse() {
        let mut s = session(json!({tables::EMPLOYEES: [
            {"id": "WD-T", "email": "gone@x", "full_name": "Gone", "level": 5, "department": "sales", "role": "r",
             "office_location": "sf", "start_date": "2020", "employment_status": "departing"}
        ]}));
        let n = s.state.count(tables::NOTIFICATIONS).unwrap();
        let mut m = mail("sarah.jones@vdb.com");
        m["cc_emails"] = json!("a@x, b@x");
        calls!(s;
            "email_notification_api_send_notification" m => {"notification_id": format!("NTF-{:08}", n + 1), "delivery_status": "queued"};
        );
        let row = crate::testdata::last_row(&s, tables::NOTIFICATIONS);
        assert_eq!(row["cc_emails"], json!(["a@x", "b@x"]));
        assert_eq!(row["priority"], "normal");
        calls!(s;
            "email_notification_api_send_notification" (mail("gone@x")) => error "Tool execution failed: Recipient is inactive or on extended leave; notification not sent: gone@x";
            "email_notification_api_send_notification" (mail("who@x")) => error "Tool execution failed: Recipient email not found in employee directory: who@x";
        );
        let mut m = mail("sarah.jones@vdb.com");
        m["notification_type"] = json!("spam");
        let e = err(&mut s, "email_notification_api_send_notification", m);
        assert!(e.starts_with("Tool execution failed: Input validation failed: notification_type: Input should be 'access_provisioned'"), "{e}");
    }
}

mod license {
    use super::super::tables;
    use super::super::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn types_and_availability() {
        let mut s = session(json!({tables::LICENSES: [
            {"id": "LIC-T", "software_name": "TinyTool", "license_type": "standard", "total_licenses": 1, "annual_cost_per_license": 10}
        ]}));
        calls!(s;
            "license_management_api_check_license_type" {"software_name": "SLACK"} => {"license_type": "unlimited", "license_id": "LIC-84726391"};
            "license_management_api_check_availability" {"software_name": "slack"} => {"license_type": "unlimited"};
            "license_management_api_check_availability" {"software_name": "tinytool"} => {"available_licenses": 1, "total_licenses": 1, "license_type": "standard"};
            "license_management_api_check_license_type" {"software_name": "Nope"} => error "Tool execution failed: Software not found in license inventory: Nope";
        );
        let n = s.state.count(tables::ALLOCATIONS).unwrap();
        calls!(s;
            "license_management_api_allocate_license" {"software_name": "TinyTool", "email": "marcus.thompson@vdb.com"} => {"allocation_id": format!("LAL-{:08}", n + 1)};
            "license_management_api_allocate_license" {"software_name": "TinyTool", "email": "marcus.thompson@vdb.com"} => error "Tool execution failed: Employee already has a license for this software: TinyTool";
            "license_management_api_allocate_license" {"software_name": "TinyTool", "email": "lisa.chen@vdb.com"} => error "Tool execution failed: No licenses available in pool";
            "license_management_api_allocate_license" {"software_name": "X", "email": "lisa.chen@vdb.com"} => error "Tool execution failed: Software not found: X";
            "license_management_api_allocate_license" {"software_name": "X", "email": "z@x"} => error "Tool execution failed: Employee not found: z@x";
            "license_management_api_allocate_license" {"software_name": "X"} => error "Tool execution failed: Input validation failed: email: Field required";
        );
    }
}

mod okta {
    use super::super::tables;
    use super::super::testutil::{call, err, session};
    use serde_json::json;

    const WHO: &str = "marcus.thompson@vdb.com";

    #[tb_test_support::data_test]
    #[test]
    fn provision_check_revoke_cycle() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::OKTA_APP_ACCESS).unwrap();
        calls!(s;
            "okta_api_provision_access" {"email": WHO, "app_name": "Tableau", "access_level": "viewer"} => {"app_access_id": format!("OAA-{:08}", n + 1)};
        );
        let row = crate::testdata::last_row(&s, tables::OKTA_APP_ACCESS);
        assert_eq!(row["granted_at"], json!(null));
        assert_eq!(row["is_temporary"], json!(false));
        calls!(s;
            "okta_api_provision_access" {"email": WHO, "app_name": "Tableau", "access_level": "viewer"} => error "Tool execution failed: Employee already has access to this application: Tableau";
            "okta_api_check_access" {"email": WHO, "app_name": "Tableau"} => {"has_access": true, "access_level": "viewer"};
            "okta_api_revoke_access" {"email": WHO, "app_name": "Tableau"} => {"revoked": true};
            "okta_api_check_access" {"email": WHO, "app_name": "Tableau"} => {"has_access": false};
            "okta_api_revoke_access" {"email": WHO, "app_name": "Tableau"} => error "Tool execution failed: No active access found to revoke for application: Tableau";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn provision_errors() {
        let mut s = session(json!({}));
        calls!(s;
            "okta_api_provision_access" {"email": "no@vdb.com", "app_name": "X", "access_level": "viewer"} => error "Tool execution failed: Employee not found in Okta directory: no@vdb.com";
        );
        let e = err(
            &mut s,
            "okta_api_provision_access",
            json!({"email": WHO, "app_name": "X", "access_level": "god"}),
        );
        assert!(e.starts_with("Tool execution failed: Input validation failed: access_level: Input should be 'none', 'read_only'"), "{e}");
        // A count-based id that already exists is refused by the store.
        let n = s.state.count(tables::OKTA_APP_ACCESS).unwrap();
        let mut s = session(
            json!({tables::OKTA_APP_ACCESS: [{"id": format!("OAA-{:08}", n + 2), "employee_id": "WD-1", "app_name": "Z", "access_level": "user", "granted_by": "x", "is_active": false}]}),
        );
        calls!(s;
            "okta_api_provision_access" {"email": WHO, "app_name": "Zoom2", "access_level": "user"} => error format!("Tool execution failed: Object with ID OAA-{:08} already exists", n + 2);
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn groups() {
        let mut s = session(json!({}));
        let n = s.state.count(tables::OKTA_GROUPS).unwrap();
        calls!(s;
            "okta_api_add_to_group" {"email": "marcus.thompson@vdb.com", "group_name": "bi_marketing_viewers"} => {"membership_id": format!("OGM-{:08}", n + 1)};
            "okta_api_add_to_group" {"email": "marcus.thompson@vdb.com", "group_name": "bi_marketing_viewers"} => error "Tool execution failed: Employee is already a member of this group: bi_marketing_viewers";
        );
        let g = call(
            &mut s,
            "okta_api_get_user_groups",
            json!({"email": "marcus.thompson@vdb.com"}),
        );
        assert_eq!(
            g["groups"].as_array().unwrap().last().unwrap(),
            &json!({"group_name": "bi_marketing_viewers"})
        );
        calls!(s;
            "okta_api_get_user_groups" {"email": "x"} => error "Tool execution failed: Employee not found: x";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn security_actions() {
        let mut s = session(json!({}));
        let tool = "okta_security_api_execute_action";
        let n = s.state.count(tables::OKTA_AUDIT).unwrap();
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "add_mfa_device"})
            ),
            "Tool execution failed: mfa_device_id is required for add_mfa_device operation"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": 0})
            ),
            "Tool execution failed: bypass_duration_hours is required for set_temporary_bypass operation"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": 5})
            ),
            "Tool execution failed: bypass_duration_hours cannot exceed 4 hours"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "bypass_expires_at": "soon"})
            ),
            "Tool execution failed: Failed to execute security action: Invalid isoformat string: 'soon'"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "bypass_expires_at": "2025-12-18T25:00Z"})
            ),
            "Tool execution failed: Failed to execute security action: hour must be in 0..23"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": WHO, "operation": "unlock_account", "extra": 1})
            ),
            "Tool execution failed: Input validation failed: extra: Extra inputs are not permitted"
        );
        assert_eq!(
            err(
                &mut s,
                tool,
                json!({"email": "no@x", "operation": "unlock_account"})
            ),
            "Tool execution failed: Employee not found in Okta directory: no@x"
        );
        assert_eq!(s.state.count(tables::OKTA_AUDIT).unwrap(), n);
        let r = call(
            &mut s,
            tool,
            json!({"email": WHO, "operation": "set_temporary_bypass", "bypass_duration_hours": "3", "ticket_id": "6"}),
        );
        assert_eq!(
            r,
            json!({"success": true, "audit_id": format!("OSA-{:08}", n + 1)})
        );
        let row = crate::testdata::last_row(&s, tables::OKTA_AUDIT);
        assert_eq!(row["bypass_expires_at"], "2025-12-18T13:00:00Z");
        assert_eq!(row["performed_at"], "2025-12-18T10:00:00Z");
        assert_eq!(row["reason"], "Security operation: set_temporary_bypass");
        let r = call(
            &mut s,
            tool,
            json!({"email": WHO, "operation": "remove_mfa_device", "mfa_device_id": "MFA-1"}),
        );
        assert_eq!(r["audit_id"], format!("OSA-{:08}", n + 2));
        assert_eq!(
            s.state.rows(tables::OKTA_AUDIT).unwrap().last().unwrap()["mfa_device_id"],
            "MFA-1"
        );
    }
}

mod procurement {
    use super::super::tables;
    use super::super::testutil::{err, session};
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
        calls!(s;
            "hardware_procurement_api_create_order" (order("2025-10-15T09:00:00Z")) => {"order_id": format!("HW-ORDER-{:07}", n + 1), "status": "pending"};
        );
        let row = crate::testdata::last_row(&s, tables::ORDERS);
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

mod security {
    use super::super::tables;
    use super::super::testutil::{call, session};
    use serde_json::json;

    fn incident(
        id: &str,
        active: bool,
        reported: &str,
        resolved: Option<&str>,
    ) -> serde_json::Value {
        json!({"id": id, "employee_id": "WD-1", "severity": "SEV2", "incident_type": "t", "description": "d",
               "status": "open", "is_active": active, "reported_at": reported, "reported_by": "x", "resolved_at": resolved})
    }

    #[tb_test_support::data_test]
    #[test]
    fn active_and_recently_closed_newest_first() {
        let mut s = session(json!({tables::INCIDENTS: [
            incident("SEC-A", false, "2025-12-16T00:00:00Z", Some("2025-12-17T10:00:00Z")),
            incident("SEC-B", false, "2025-12-16T00:00:00Z", Some("2025-12-17T09:59:59Z")),
            incident("SEC-C", true, "2025-12-18T01:00:00+02:00", None),
        ]}));
        let r = call(&mut s, "security_api_verify_incident", json!({}));
        let list = r["incidents"].as_array().unwrap();
        assert_eq!(list[0]["incident_id"], "SEC-C");
        assert_eq!(list[0]["started_at"], "2025-12-18T01:00:00+02:00");
        assert!(list[0].get("closed_at").is_none());
        let a = list.iter().find(|i| i["incident_id"] == "SEC-A").unwrap();
        assert_eq!(a["closed_at"], "2025-12-17T10:00:00+00:00");
        assert!(!list.iter().any(|i| i["incident_id"] == "SEC-B"));
        calls!(s;
            "security_api_verify_incident" {"since": "x"} => error "Tool execution failed: Input validation failed: since: Extra inputs are not permitted";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn naive_resolution_time_fails_like_python() {
        let mut s = session(
            json!({tables::INCIDENTS: [incident("SEC-N", false, "2025-12-16T00:00:00Z", Some("2025-12-17T10:00:00"))]}),
        );
        calls!(s;
            "security_api_verify_incident" {} => error "Tool execution failed: Failed to retrieve security incidents: can't compare offset-naive and offset-aware datetimes";
        );
    }
}

mod workday {
    use super::super::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn employee_lookup_and_errors() {
        let mut s = session(json!({}));
        let r = call(
            &mut s,
            "workday_api_get_employee",
            json!({"email": "marcus.thompson@vdb.com"}),
        );
        assert_eq!(r["employee_id"], "WD-847291");
        assert!(r.get("remote_delivery_address").is_none());
        calls!(s;
            "workday_api_get_employee" {"email": "nobody@vdb.com"} => error "Tool execution failed: No employee found with the provided email: nobody@vdb.com";
            "workday_api_get_employee" {} => error "Tool execution failed: Input validation failed: email: Field required";
        );
        // Not a forbid model: extra keys are ignored.
        let r = call(
            &mut s,
            "workday_api_get_employee",
            json!({"email": "marcus.thompson@vdb.com", "x": 1}),
        );
        assert_eq!(r["employee_id"], "WD-847291");
        calls!(s;
            "workday_api_get_manager_chain" {"email": "x@vdb.com"} => error "Tool execution failed: Employee not found: x@vdb.com";
            "workday_api_get_org_structure" {"manager_email": "x@vdb.com"} => error "Tool execution failed: Manager not found: x@vdb.com";
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn manager_chain_and_reports() {
        let mut s = session(json!({}));
        let r = call(
            &mut s,
            "workday_api_get_manager_chain",
            json!({"email": "marcus.thompson@vdb.com"}),
        );
        let ids: Vec<&str> = r["manager_chain"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["employee_id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["WD-681453", "WD-573926", "WD-294817"]);
        let r = call(
            &mut s,
            "workday_api_get_org_structure",
            json!({"manager_email": "sarah.jones@vdb.com"}),
        );
        assert!(
            r["direct_reports"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e["employee_id"] == "WD-847291")
        );
    }

    #[tb_test_support::data_test]
    #[test]
    fn manager_cycle_does_not_hang() {
        let mut s = session(json!({"sandbox_neobank_support_main_models_employees": [
            {"id": "WD-1", "email": "a@x", "full_name": "A", "level": 1, "department": "sales", "role": "r", "office_location": "sf", "start_date": "2020", "manager_id": "WD-2"},
            {"id": "WD-2", "email": "b@x", "full_name": "B", "level": 1, "department": "sales", "role": "r", "office_location": "sf", "start_date": "2020", "manager_id": "WD-1"}
        ]}));
        assert!(
            err(
                &mut s,
                "workday_api_get_manager_chain",
                json!({"email": "a@x"})
            )
            .contains("cycle")
        );
    }
}
