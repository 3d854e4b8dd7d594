//! Email notifications.

use super::{employee_by_email, next_id, tables};
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError};

/// `email_notification_api_send_notification`: a queued notification `NTF-{n:08d}` to an
/// active or on-leave employee.
pub fn send_notification(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let email = a.str_or_empty("recipient_email");
    let r = employee_by_email(s, email)?.ok_or_else(|| {
        ToolError::new(format!(
            "Recipient email not found in employee directory: {email}"
        ))
    })?;
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

#[cfg(test)]
mod tests {
    use super::super::tables;
    use super::super::testutil::{call, err, session};
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
        let r = call(&mut s, "email_notification_api_send_notification", m);
        assert_eq!(
            r,
            json!({"notification_id": format!("NTF-{:08}", n + 1), "delivery_status": "queued"})
        );
        let row = s
            .state
            .rows(tables::NOTIFICATIONS)
            .unwrap()
            .last()
            .unwrap()
            .clone();
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
