//! Email notifications.

use super::{next_id, require_employee, tables};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `email_notification_api_send_notification`: a queued notification `NTF-{n:08d}` to an
/// active or on-leave employee.
pub fn send_notification(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("recipient_email");
    let r = require_employee(
        s,
        email,
        "Recipient email not found in employee directory: ",
    )?;
    if !matches!(r.str_or_empty("employment_status"), "active" | "on_leave") {
        return Err(ToolError::new(format!(
            "Recipient is inactive or on extended leave; notification not sent: {email}"
        )));
    }
    let id = next_id(s, tables::NOTIFICATIONS, "NTF-", 8)?;
    let priority = a
        .get("priority")
        .filter(|p| !p.is_null())
        .cloned()
        .unwrap_or_else(|| json!("normal"));
    let cc = match a.opt_str("cc_emails").filter(|c| !c.is_empty()) {
        Some(c) => json!(c.split(',').map(str::trim).collect::<Vec<_>>()),
        None => Value::Null,
    };
    s.insert(
        tables::NOTIFICATIONS,
        &json!({
            "id": id,
            "recipient_id": r.value("id"),
            "recipient_email": email,
            "notification_type": a.value("notification_type"),
            "subject": a.value("subject"),
            "body": a.value("body"),
            "ticket_id": a.value("ticket_id"),
            "priority": priority,
            "cc_emails": cc,
            "sent_at": null,
            "delivery_status": "queued",
            "delivered_at": null,
            "sent_by": "system",
        }),
    )?;
    Ok(json!({ "notification_id": id, "delivery_status": "queued" }))
}
