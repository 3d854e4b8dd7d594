//! The billing toolset: the billing account of a policy and its payment arrangements.

use super::out;
use super::tables::ACCOUNTS;
use serde_json::{Map, Value, json};
use tb_sandbox::{Args, Fields, Session, ToolError, Tools};

pub(super) fn register(t: &mut Tools) {
    t.add("billing_create_installment_plan", create_installment_plan)
        .add("billing_get_account_details", get_account_details)
        .add("billing_get_arrangement_history", get_arrangement_history)
        .add("billing_grant_extension", grant_extension)
        .add("billing_reset_account_status", reset_account_status);
}

/// The first billing account of the policy, or the reference's error.
fn account(s: &Session, a: &Args) -> Result<Map<String, Value>, ToolError> {
    let policy_id = a.require_str("policy_id")?;
    super::find_row(s, ACCOUNTS, "policy_id", policy_id)?.ok_or_else(|| {
        ToolError::new(format!(
            "No billing account found for policy_id '{policy_id}'."
        ))
    })
}

/// `arrangements_12_months + 1`.
fn one_more(acc: &Map<String, Value>) -> Value {
    json!(
        acc.get("arrangements_12_months")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            .saturating_add(1)
    )
}

fn create_installment_plan(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut acc = account(s, a)?;
    acc.insert("arrangement_type".into(), json!("Installment Plan"));
    acc.insert("installment_count".into(), a.value("installment_count"));
    acc.insert("installment_amount".into(), a.value("installment_amount"));
    acc.insert("arrangements_12_months".into(), one_more(&acc));
    let acc = s.replace(ACCOUNTS, &Value::Object(acc))?;
    Ok(
        json!({"billing_account_id": acc.value("id"), "arrangements_12_months": acc.value("arrangements_12_months")}),
    )
}

fn get_account_details(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let acc = account(s, a)?;
    Ok(json!({
        "billing_account_id": acc.value("id"),
        "policy_id": acc.value("policy_id"),
        "status": acc.value("status"),
        "monthly_payment": acc.value("monthly_payment"),
        "past_due_amount": acc.value("past_due_amount"),
        "current_due_date": acc.value("current_due_date"),
        "payment_received": acc.value("payment_received"),
        "arrangement_type": acc.value("arrangement_type"),
    }))
}

fn get_arrangement_history(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let acc = account(s, a)?;
    Ok(out(vec![(
        "arrangements_12_months",
        acc.value("arrangements_12_months"),
    )]))
}

fn grant_extension(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut acc = account(s, a)?;
    let due = a.value("new_due_date");
    acc.insert("current_due_date".into(), due.clone());
    acc.insert("new_due_date".into(), due);
    acc.insert("arrangement_type".into(), json!("Extension"));
    acc.insert("arrangements_12_months".into(), one_more(&acc));
    acc.insert("installment_count".into(), Value::Null);
    acc.insert("installment_amount".into(), Value::Null);
    let acc = s.replace(ACCOUNTS, &Value::Object(acc))?;
    Ok(
        json!({"billing_account_id": acc.value("id"), "arrangements_12_months": acc.value("arrangements_12_months")}),
    )
}

fn reset_account_status(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut acc = account(s, a)?;
    acc.insert("status".into(), json!("Current"));
    acc.insert("past_due_amount".into(), json!(0));
    acc.insert("arrangement_type".into(), json!("None"));
    acc.insert("new_due_date".into(), Value::Null);
    acc.insert("installment_count".into(), Value::Null);
    acc.insert("installment_amount".into(), Value::Null);
    let acc = s.replace(ACCOUNTS, &Value::Object(acc))?;
    Ok(json!({"billing_account_id": acc.value("id"), "status": acc.value("status")}))
}
