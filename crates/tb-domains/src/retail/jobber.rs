//! `jobber`: installation jobs.

use super::common::*;
use serde_json::{Value, json};
use tb_sandbox::{Args, Row, Session, ToolError};

fn job_or_404(s: &Session, id: &str, prefix: &str) -> Result<Row, ToolError> {
    first(s, JOBS, "id", &json!(id), prefix)?
        .ok_or_else(|| fail(format!("Installation job not found: {id}")))
}

/// `cancel_installation`: the job (found by id only) becomes cancelled; reports its cost.
pub fn cancel_installation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to cancel installation";
    let mut job = job_or_404(s, arg(a, "job_id"), F)?;
    let refunded = val(&job, "service_cost");
    job.insert("status".into(), json!("cancelled"));
    save(s, JOBS, &job, F)?;
    Ok(out(vec![
        ("job_id", val(&job, "id")),
        ("status", val(&job, "status")),
        ("service_cost_refunded", refunded),
    ]))
}

/// `get_installation_job`: by job id when given (non-empty), else by order id.
pub fn get_installation_job(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to retrieve installation job";
    let (job_id, order_id) = (opt(a, "job_id"), opt(a, "order_id"));
    let job = match (job_id, order_id) {
        (None, None) => return Err(fail("Either job_id or order_id must be provided")),
        (Some(j), _) => first(s, JOBS, "id", &json!(j), F)?,
        (None, Some(o)) => first(s, JOBS, "order_id", &json!(o), F)?,
    };
    let Some(job) = job else {
        return Err(fail(format!(
            "Installation job not found: {}",
            job_id.or(order_id).unwrap_or("")
        )));
    };
    Ok(out(vec![
        ("job_id", val(&job, "id")),
        ("order_id", val(&job, "order_id")),
        ("customer_id", val(&job, "customer_id")),
        ("service_type", val(&job, "service_type")),
        (
            "scheduled_date",
            isoformat_stored(&val(&job, "scheduled_date")),
        ),
        ("technician_id", val(&job, "technician_id")),
        ("status", val(&job, "status")),
        ("completion_date", isoformat_field(&job, "completion_date")),
        ("service_cost", val(&job, "service_cost")),
    ]))
}

/// `reschedule_installation`: new appointment; a completed job rescheduled for a workmanship
/// issue goes back to scheduled.
pub fn reschedule_installation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    const F: &str = "Failed to reschedule installation";
    let mut job = job_or_404(s, arg(a, "job_id"), F)?;
    let old = val(&job, "scheduled_date");
    if arg(a, "reschedule_reason") == "workmanship_issue" && text(&job, "status") == "completed" {
        job.insert("status".into(), json!("scheduled"));
    }
    job.insert("scheduled_date".into(), val(a, "new_scheduled_date"));
    save(s, JOBS, &job, F)?;
    Ok(out(vec![
        ("job_id", val(&job, "id")),
        ("old_scheduled_date", isoformat_stored(&old)),
        (
            "new_scheduled_date",
            isoformat_stored(&val(&job, "scheduled_date")),
        ),
        ("status", val(&job, "status")),
    ]))
}
