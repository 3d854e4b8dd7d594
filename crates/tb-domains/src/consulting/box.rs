//! Box documents: folder details and granting folder access (`FAL-2-<n>` access logs).

use super::insert_probed;
use super::tables::{BOX_FOLDER_ACCESS_LOGS, BOX_FOLDERS};
use crate::vocab::{SessionRows, Shown};
use serde_json::json;
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// A folder as `get_folder_details` shows it.
const FOLDER: Shown = Shown {
    table: BOX_FOLDERS,
    what: "Folder",
    fields: &[
        "id",
        "folder_name",
        "confidentiality_level",
        "owner_email",
        "client_id",
        "engagement_code",
    ],
    datetimes: &[],
};

/// `box_api`: `get_folder_details`, `grant_folder_access`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "get_folder_details" => FOLDER.answer(s, a, "folder_id", "folder_data"),
        "grant_folder_access" => {
            let email = a.require_str_nonempty("email")?;
            let folder = a.require_str_nonempty("folder_id")?;
            let permission = a.require_str_nonempty("permission_level")?;
            s.require_row(BOX_FOLDERS, folder, "Folder")?;
            let row = json!({"folder_id": folder, "employee_email": email, "permission_level": permission});
            insert_probed(s, BOX_FOLDER_ACCESS_LOGS, "FAL-2", row)?;
            Ok(json!({ "success": true }))
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
