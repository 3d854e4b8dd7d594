//! Box documents: folder details and granting folder access (`FAL-2-<n>` access logs).

use super::{Out, action, exec, finish, get_row, need, out, probe_id, val};
use serde_json::{Value, json};
use tb_sandbox::{Args, Session, ToolError};

/// `box_api`: `get_folder_details`, `grant_folder_access`.
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        match action(a) {
            "get_folder_details" => {
                let id = need(a, "folder_id")?;
                let r = get_row(s, "box_folders", id)?
                    .ok_or_else(|| exec(format!("Folder not found: {id}")))?;
                let data = out([
                    ("id", val(&r, "id")),
                    ("folder_name", val(&r, "folder_name")),
                    ("confidentiality_level", val(&r, "confidentiality_level")),
                    ("owner_email", val(&r, "owner_email")),
                    ("client_id", val(&r, "client_id")),
                    ("engagement_code", val(&r, "engagement_code")),
                ]);
                Ok(json!({ "folder_data": data }))
            }
            "grant_folder_access" => {
                let email = need(a, "email")?;
                let folder = need(a, "folder_id")?;
                let permission = need(a, "permission_level")?;
                if get_row(s, "box_folders", folder)?.is_none() {
                    return Err(exec(format!("Folder not found: {folder}")));
                }
                let id = probe_id(s, "box_folder_access_logs", "FAL-2")?;
                let row = json!({"id": id, "folder_id": folder, "employee_email": email, "permission_level": permission});
                s.insert("box_folder_access_logs", &row)?;
                Ok(json!({ "success": true }))
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Box API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn folders() {
        let mut s = session(json!({
            "box_folders": [{"id": "FLD-T", "folder_name": "T", "confidentiality_level": "internal", "owner_email": "o@msg.com"}]
        }));
        assert_eq!(
            call(
                &mut s,
                "box_api",
                json!({"action": "get_folder_details", "folder_id": "FLD-T"})
            ),
            json!({"folder_data": {"id": "FLD-T", "folder_name": "T", "confidentiality_level": "internal", "owner_email": "o@msg.com"}})
        );
        assert_eq!(
            call(
                &mut s,
                "box_api",
                json!({"action": "grant_folder_access", "folder_id": "FLD-T", "email": "t@msg.com", "permission_level": "viewer"})
            ),
            json!({"success": true})
        );
        assert_eq!(
            err(
                &mut s,
                "box_api",
                json!({"action": "grant_folder_access", "folder_id": "FLD-NOPE", "email": "t@msg.com", "permission_level": "viewer"})
            ),
            "Tool execution failed: Folder not found: FLD-NOPE"
        );
        assert_eq!(
            err(
                &mut s,
                "box_api",
                json!({"action": "grant_folder_access", "folder_id": "FLD-T", "email": "t@msg.com"})
            ),
            "Tool execution failed: Missing required parameter: permission_level"
        );
        assert_eq!(
            err(
                &mut s,
                "box_api",
                json!({"action": "delete_folder", "folder_id": "FLD-T"})
            ),
            "Tool execution failed: Input validation failed: action: Input should be 'get_folder_details' or 'grant_folder_access'"
        );
    }
}
