//! Degreed learning: course catalog, seats, enrollments, history and certifications.

use super::{Out, action, exec, field, finish, get_row, is_none, need, opt, out, probe_id, val};
use crate::pytime::isoformat_field;
use serde_json::{Map, Value, json};
use tb_sandbox::{Args, Session, ToolError};

const COURSES: &str = "degreed_training_courses";
const ENROLLMENTS: &str = "degreed_training_enrollments";
const CERTIFICATIONS: &str = "degreed_certifications";

/// A course as the tool shows it.
fn course(r: &Map<String, Value>) -> Value {
    out([
        ("id", val(r, "id")),
        ("title", val(r, "title")),
        ("cost", val(r, "cost")),
        ("training_category", val(r, "training_category")),
        ("max_seats", val(r, "max_seats")),
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
pub(crate) fn api(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let mut body = || -> Out {
        match action(a) {
            "search_courses" => {
                let keyword = need(a, "keyword")?.to_lowercase();
                let category = opt(a, "category");
                let courses: Vec<Value> = s
                    .state
                    .rows(COURSES)?
                    .iter()
                    .filter(|r| field(r, "title").to_lowercase().contains(&keyword))
                    .filter(|r| category.is_none_or(|c| field(r, "training_category") == c))
                    .map(course)
                    .collect();
                Ok(json!({ "courses": courses }))
            }
            "get_course_details" => {
                let id = need(a, "course_id")?;
                let r = get_row(s, COURSES, id)?
                    .ok_or_else(|| exec(format!("Course not found: {id}")))?;
                Ok(json!({ "course_data": course(&r) }))
            }
            "check_enrollment" => {
                let id = need(a, "course_id")?;
                let r = get_row(s, COURSES, id)?
                    .ok_or_else(|| exec(format!("Course not found: {id}")))?;
                let Some(max) = r.get("max_seats").and_then(Value::as_i64) else {
                    return Ok(json!({ "available_seats": 99999 }));
                };
                let taken = s
                    .state
                    .rows(ENROLLMENTS)?
                    .iter()
                    .filter(|e| field(e, "course_id") == id && is_none(e, "completion_date"))
                    .count();
                Ok(json!({ "available_seats": max - i64::try_from(taken).unwrap_or(i64::MAX) }))
            }
            "enroll_employee" => {
                let email = need(a, "email")?;
                let id = need(a, "course_id")?;
                if get_row(s, COURSES, id)?.is_none() {
                    return Err(exec(format!("Course not found: {id}")));
                }
                let new_id = probe_id(s, ENROLLMENTS, "ENR-2")?;
                s.insert(ENROLLMENTS, &json!({"id": new_id, "employee_email": email, "course_id": id, "completion_date": null}))?;
                Ok(json!({ "success": true }))
            }
            "get_training_history" => {
                let email = need(a, "email")?;
                let completed: Vec<Value> = s
                    .state
                    .rows(ENROLLMENTS)?
                    .iter()
                    .filter(|e| {
                        field(e, "employee_email") == email && !is_none(e, "completion_date")
                    })
                    .map(|e| json!({ "course_id": val(e, "course_id") }))
                    .collect();
                let certifications: Vec<Value> = s
                    .state
                    .rows(CERTIFICATIONS)?
                    .iter()
                    .filter(|c| field(c, "employee_email") == email)
                    .map(|c| {
                        out([
                            ("id", val(c, "id")),
                            ("employee_email", val(c, "employee_email")),
                            ("certification_name", val(c, "certification_name")),
                            ("issued_date", isoformat_field(c, "issued_date")),
                            ("expiry_date", isoformat_field(c, "expiry_date")),
                        ])
                    })
                    .collect();
                Ok(json!({ "completed_trainings": completed, "certifications": certifications }))
            }
            "check_certification_status" => {
                let email = need(a, "email")?;
                let name = need(a, "certification_name")?.to_lowercase();
                let has = s.state.rows(CERTIFICATIONS)?.iter().any(|c| {
                    field(c, "employee_email") == email
                        && field(c, "certification_name").to_lowercase() == name
                });
                Ok(json!({ "has_certification": has }))
            }
            "get_required_trainings" => {
                let client = need(a, "client_id")?;
                let r = get_row(s, "salesforce_crm_clients", client)?
                    .ok_or_else(|| exec(format!("Client not found: {client}")))?;
                Ok(
                    json!({ "required_courses": r.get("required_training_courses").cloned().unwrap_or_else(|| json!([])) }),
                )
            }
            other => Err(exec(format!("Invalid action: {other}"))),
        }
    };
    finish("Failed to execute Degreed API action", body())
}

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::{call, err, session};
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn seats_enrollment_and_history() {
        let mut s = session(json!({
            "degreed_training_courses": [{"id": "CRS-T", "title": "Test Driving", "cost": 10, "training_category": "conference", "max_seats": 1}],
            "degreed_certifications": [{"id": "CERT-T", "employee_email": "t@msg.com", "certification_name": "HIPAA", "issued_date": "2024-01-01T00:00:00Z"}]
        }));
        let seats = |s: &mut tb_sandbox::Session| {
            call(
                s,
                "degreed_api",
                json!({"action": "check_enrollment", "course_id": "CRS-T"}),
            )
        };
        assert_eq!(seats(&mut s), json!({"available_seats": 1}));
        assert_eq!(
            call(
                &mut s,
                "degreed_api",
                json!({"action": "enroll_employee", "email": "t@msg.com", "course_id": "CRS-T"})
            ),
            json!({"success": true})
        );
        assert_eq!(seats(&mut s), json!({"available_seats": 0}));
        let found = call(
            &mut s,
            "degreed_api",
            json!({"action": "search_courses", "keyword": "test driv", "category": "conference"}),
        );
        assert_eq!(
            found["courses"][0],
            json!({"id": "CRS-T", "title": "Test Driving", "cost": 10, "training_category": "conference", "max_seats": 1, "prerequisites": []})
        );
        let history = call(
            &mut s,
            "degreed_api",
            json!({"action": "get_training_history", "email": "t@msg.com"}),
        );
        assert_eq!(
            history["certifications"][0]["issued_date"],
            json!("2024-01-01T00:00:00+00:00")
        );
        assert_eq!(
            call(
                &mut s,
                "degreed_api",
                json!({"action": "check_certification_status", "email": "t@msg.com", "certification_name": "hipaa"})
            ),
            json!({"has_certification": true})
        );
        assert_eq!(
            err(
                &mut s,
                "degreed_api",
                json!({"action": "enroll_employee", "email": "t@msg.com", "course_id": "CRS-NOPE"})
            ),
            "Tool execution failed: Course not found: CRS-NOPE"
        );
        assert_eq!(
            err(
                &mut s,
                "degreed_api",
                json!({"action": "get_required_trainings", "client_id": "CLT-NOPE"})
            ),
            "Tool execution failed: Client not found: CLT-NOPE"
        );
        assert_eq!(
            err(&mut s, "degreed_api", json!({"action": "search_courses"})),
            "Tool execution failed: Missing required parameter: keyword"
        );
    }
}
