//! Degreed learning: course catalog, seats, enrollments, history and certifications.

use super::tables::{
    DEGREED_CERTIFICATIONS, DEGREED_TRAINING_COURSES, DEGREED_TRAINING_ENROLLMENTS,
    SALESFORCE_CRM_CLIENTS,
};
use super::{completed_trainings, employee_rows, insert_probed, out};
use crate::vocab::{SessionRows, project};
use serde_json::{Map, Value, json};
use tb_python::datetime::isoformat_field;
use tb_sandbox::{Args, Fields, Session, ToolError, ToolResult};

/// A course as the tool shows it.
fn course(r: &Map<String, Value>) -> Value {
    out([
        ("id", r.value("id")),
        ("title", r.value("title")),
        ("cost", r.value("cost")),
        ("training_category", r.value("training_category")),
        ("max_seats", r.value("max_seats")),
        ("start_date", isoformat_field(r, "start_date")),
        ("end_date", isoformat_field(r, "end_date")),
        (
            "prerequisites",
            r.get("prerequisites").cloned().unwrap_or_else(|| json!([])),
        ),
    ])
}

/// `degreed_api`: `search_courses`, `get_course_details`, `check_enrollment`,
/// `enroll_employee`, `get_training_history`, `check_certification_status`,
/// `get_required_trainings`.
pub(crate) fn api(s: &mut Session, a: &Args) -> ToolResult {
    match a.str_or_empty("action") {
        "search_courses" => {
            let keyword = a.require_str_nonempty("keyword")?.to_lowercase();
            let category = a.opt_str_nonempty("category");
            let courses: Vec<Value> = s
                .rows_where(DEGREED_TRAINING_COURSES, |r| {
                    r.str_or_empty("title").to_lowercase().contains(&keyword)
                })?
                .filter(|r| category.is_none_or(|c| r.str_or_empty("training_category") == c))
                .map(course)
                .collect();
            Ok(json!({ "courses": courses }))
        }
        "get_course_details" => {
            let id = a.require_str_nonempty("course_id")?;
            let r = s.require_row(DEGREED_TRAINING_COURSES, id, "Course")?;
            Ok(json!({ "course_data": course(&r) }))
        }
        "check_enrollment" => {
            let id = a.require_str_nonempty("course_id")?;
            let r = s.require_row(DEGREED_TRAINING_COURSES, id, "Course")?;
            let Some(max) = r.get("max_seats").and_then(Value::as_i64) else {
                return Ok(json!({ "available_seats": 99999 }));
            };
            let taken = s
                .rows_where(DEGREED_TRAINING_ENROLLMENTS, |e| {
                    e.str_or_empty("course_id") == id && e.is_none("completion_date")
                })?
                .count();
            Ok(json!({ "available_seats": max - i64::try_from(taken).unwrap_or(i64::MAX) }))
        }
        "enroll_employee" => {
            let email = a.require_str_nonempty("email")?;
            let id = a.require_str_nonempty("course_id")?;
            s.require_row(DEGREED_TRAINING_COURSES, id, "Course")?;
            let row = json!({"employee_email": email, "course_id": id, "completion_date": null});
            insert_probed(s, DEGREED_TRAINING_ENROLLMENTS, "ENR-2", row)?;
            Ok(json!({ "success": true }))
        }
        "get_training_history" => {
            let email = a.require_str_nonempty("email")?;
            let completed: Vec<Value> = completed_trainings(s, email)?
                .map(|e| json!({ "course_id": e.value("course_id") }))
                .collect();
            let certifications: Vec<Value> = employee_rows(s, DEGREED_CERTIFICATIONS, email)?
                .map(|c| {
                    project(
                        c,
                        &[
                            "id",
                            "employee_email",
                            "certification_name",
                            "issued_date",
                            "expiry_date",
                        ],
                        &["issued_date", "expiry_date"],
                    )
                })
                .collect();
            Ok(json!({ "completed_trainings": completed, "certifications": certifications }))
        }
        "check_certification_status" => {
            let email = a.require_str_nonempty("email")?;
            let name = a.require_str_nonempty("certification_name")?.to_lowercase();
            let has = employee_rows(s, DEGREED_CERTIFICATIONS, email)?
                .any(|c| c.str_or_empty("certification_name").to_lowercase() == name);
            Ok(json!({ "has_certification": has }))
        }
        "get_required_trainings" => {
            let client = a.require_str_nonempty("client_id")?;
            let r = s.require_row(SALESFORCE_CRM_CLIENTS, client, "Client")?;
            Ok(
                json!({ "required_courses": r.get("required_training_courses").cloned().unwrap_or_else(|| json!([])) }),
            )
        }
        other => Err(ToolError::new(format!("Invalid action: {other}"))),
    }
}
