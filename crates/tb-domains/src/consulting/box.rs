//! Box documents: folder details and granting folder access (`FAL-2-<n>` access logs).

use super::probe_id;
use super::tables::{BOX_FOLDER_ACCESS_LOGS, BOX_FOLDERS};
use crate::vocab::{RequireRow, project};
use serde_json::json;
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// `box_api`: `get_folder_details`, `grant_folder_access`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_folder_details" => {
            let id = a.require_str_nonempty("folder_id")?;
            let r = s.require_row(BOX_FOLDERS, id, "Folder")?;
            let data = project(
                &r,
                &[
                    "id",
                    "folder_name",
                    "confidentiality_level",
                    "owner_email",
                    "client_id",
                    "engagement_code",
                ],
                &[],
            );
            Ok(json!({ "folder_data": data }))
        }
        "grant_folder_access" => {
            let email = a.require_str_nonempty("email")?;
            let folder = a.require_str_nonempty("folder_id")?;
            let permission = a.require_str_nonempty("permission_level")?;
            if s.row_by_id(BOX_FOLDERS, folder)?.is_none() {
                return Err(ToolError::new(format!("Folder not found: {folder}")));
            }
            let id = probe_id(s, BOX_FOLDER_ACCESS_LOGS, "FAL-2")?;
            let row = json!({"id": id, "folder_id": folder, "employee_email": email, "permission_level": permission});
            s.insert(BOX_FOLDER_ACCESS_LOGS, &row)?;
            Ok(json!({ "success": true }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}

#[cfg(test)]
mod tests {
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
