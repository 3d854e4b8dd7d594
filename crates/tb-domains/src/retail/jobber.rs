//! `jobber`: installation jobs.

use super::common::{first, isoformat_stored, out, save};
use super::tables::JOBS;
use crate::vocab::project_as;
use serde_json::{Value, json};
use tb_sandbox::{Args, Fields, Row, Session, ToolError};

fn job_or_404(s: &Session, id: &str) -> Result<Row, ToolError> {
    first(s, JOBS, "id", &json!(id))?
        .ok_or_else(|| ToolError::new(format!("Installation job not found: {id}")))
}

/// `cancel_installation`: the job (found by id only) becomes cancelled; reports its cost.
pub fn cancel_installation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut job = job_or_404(s, a.str_or_empty("job_id"))?;
    let refunded = job.value("service_cost");
    job.insert("status".into(), json!("cancelled"));
    save(s, JOBS, &job)?;
    Ok(out(vec![
        ("job_id", job.value("id")),
        ("status", job.value("status")),
        ("service_cost_refunded", refunded),
    ]))
}

/// `get_installation_job`: by job id when given (non-empty), else by order id.
pub fn get_installation_job(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (job_id, order_id) = (a.opt_str_nonempty("job_id"), a.opt_str_nonempty("order_id"));
    let job = match (job_id, order_id) {
        (None, None) => return Err(ToolError::new("Either job_id or order_id must be provided")),
        (Some(j), _) => first(s, JOBS, "id", &json!(j))?,
        (None, Some(o)) => first(s, JOBS, "order_id", &json!(o))?,
    };
    let Some(job) = job else {
        return Err(ToolError::new(format!(
            "Installation job not found: {}",
            job_id.or(order_id).unwrap_or("")
        )));
    };
    Ok(project_as(
        &job,
        "job_id",
        &[
            "order_id",
            "customer_id",
            "service_type",
            "scheduled_date",
            "technician_id",
            "status",
            "completion_date",
            "service_cost",
        ],
        &["scheduled_date", "completion_date"],
    ))
}

/// `reschedule_installation`: new appointment; a completed job rescheduled for a workmanship
/// issue goes back to scheduled.
pub fn reschedule_installation(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut job = job_or_404(s, a.str_or_empty("job_id"))?;
    let old = job.value("scheduled_date");
    if a.str_or_empty("reschedule_reason") == "workmanship_issue"
        && job.str_or_empty("status") == "completed"
    {
        job.insert("status".into(), json!("scheduled"));
    }
    job.insert("scheduled_date".into(), a.value("new_scheduled_date"));
    save(s, JOBS, &job)?;
    Ok(out(vec![
        ("job_id", job.value("id")),
        ("old_scheduled_date", isoformat_stored(&old)),
        (
            "new_scheduled_date",
            isoformat_stored(&job.value("scheduled_date")),
        ),
        ("status", job.value("status")),
    ]))
}
