//! A test's tags (`test_tags` of a trial record), built as the reference builds them.
//!
//! A scenario and a test case each carry `tags`: either a list of strings, where
//! `domain:<v>`, `eval:<v>` and `category:<v>` (prefix case-insensitive, value lowercased)
//! fill those fields, `skip` (any case) sets `skip`, and anything else is a label; or a
//! mapping with the fields themselves. `domain`, `eval_type` and each `category` must be a
//! value of the tag taxonomy (the framework's public one, below), else the tags are invalid.
//!
//! Hydration merges the two: labels are the scenario's followed by the test's, the domain is
//! the test's if set, else the scenario's, categories are the test's alone, `skip` is either's,
//! and `eval_type` is always null. A task without tags anywhere therefore has
//! `{"labels": [], "category": [], "domain": null, "eval_type": null, "skip": false}`, which
//! is every task of ThinkingBox-Bench v1.0.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The taxonomy's `domain` values.
pub const TAXONOMY_DOMAINS: &[&str] = &["customer-service", "hr", "misc"];
/// The taxonomy's `eval` values.
pub const TAXONOMY_EVALS: &[&str] = &["orchestration:tool-selection", "knowledge-qa:text"];
/// The taxonomy's `category` values.
pub const TAXONOMY_CATEGORIES: &[&str] = &["user", "xpia", "direct-msg", "refusal"];

/// The test's tags, as the reference writes them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestTags {
    /// Labels.
    #[serde(default)]
    pub labels: Vec<String>,
    /// Categories.
    #[serde(default)]
    pub category: Vec<String>,
    /// Domain tag.
    #[serde(default)]
    pub domain: Option<String>,
    /// Eval type (always null after hydration, as in the reference).
    #[serde(default)]
    pub eval_type: Option<String>,
    /// Skip flag.
    #[serde(default)]
    pub skip: bool,
}

fn check(kind: &str, value: &str, allowed: &[&str]) -> Result<String, String> {
    if allowed.contains(&value) {
        Ok(value.to_string())
    } else {
        Err(format!(
            "{kind} {value:?} is not in the tag taxonomy (expected one of: {})",
            allowed.join(", ")
        ))
    }
}

/// Pydantic's lax boolean.
fn lax_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => match n.as_f64() {
            Some(0.0) => Some(false),
            Some(1.0) => Some(true),
            _ => None,
        },
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Some(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Some(true),
            _ => None,
        },
        _ => None,
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 60 {
        format!("{}...", s.chars().take(60).collect::<String>())
    } else {
        s
    }
}

impl TestTags {
    /// Parses `tags` as written in a scenario or test case. `None` (no `tags` key) is the
    /// empty set. The error names the offending field or tag.
    pub fn parse(tags: Option<&Value>) -> Result<TestTags, String> {
        let Some(tags) = tags else {
            return Ok(TestTags::default());
        };
        match tags {
            Value::Array(items) => {
                let mut t = TestTags::default();
                for (i, tag) in items.iter().enumerate() {
                    let Value::String(tag) = tag else {
                        return Err(format!(
                            "tags[{i}]: a tag must be a string, found {}",
                            short(tag)
                        ));
                    };
                    let lower = tag.to_lowercase();
                    // The prefixes are ASCII, so their byte length is the same in `tag`.
                    if lower.starts_with("domain:") {
                        t.domain =
                            Some(check("domain", &tag[7..].to_lowercase(), TAXONOMY_DOMAINS)?);
                    } else if lower.starts_with("eval:") {
                        t.eval_type =
                            Some(check("eval", &tag[5..].to_lowercase(), TAXONOMY_EVALS)?);
                    } else if lower.starts_with("category:") {
                        t.category.push(check(
                            "category",
                            &tag[9..].to_lowercase(),
                            TAXONOMY_CATEGORIES,
                        )?);
                    } else if lower == "skip" {
                        t.skip = true;
                    } else {
                        t.labels.push(tag.clone());
                    }
                }
                Ok(t)
            }
            Value::Object(m) => {
                let mut t = TestTags::default();
                let strings = |key: &str| -> Result<Vec<String>, String> {
                    match m.get(key) {
                        None => Ok(Vec::new()),
                        Some(Value::Array(a)) => a
                            .iter()
                            .enumerate()
                            .map(|(i, v)| {
                                v.as_str().map(str::to_string).ok_or_else(|| {
                                    format!(
                                        "tags.{key}[{i}]: expected a string, found {}",
                                        short(v)
                                    )
                                })
                            })
                            .collect(),
                        Some(v) => Err(format!("tags.{key}: expected a list, found {}", short(v))),
                    }
                };
                let enum_field = |key: &str, allowed: &[&str]| -> Result<Option<String>, String> {
                    match m.get(key) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) => {
                            check(&format!("tags.{key}"), s, allowed).map(Some)
                        }
                        Some(v) => {
                            Err(format!("tags.{key}: expected a string, found {}", short(v)))
                        }
                    }
                };
                t.labels = strings("labels")?;
                for (i, c) in strings("category")?.iter().enumerate() {
                    t.category.push(check(
                        &format!("tags.category[{i}]"),
                        c,
                        TAXONOMY_CATEGORIES,
                    )?);
                }
                t.domain = enum_field("domain", TAXONOMY_DOMAINS)?;
                t.eval_type = enum_field("eval_type", TAXONOMY_EVALS)?;
                if let Some(v) = m.get("skip") {
                    t.skip = lax_bool(v).ok_or_else(|| {
                        format!("tags.skip: expected a boolean, found {}", short(v))
                    })?;
                }
                Ok(t)
            }
            other => Err(format!(
                "tags: expected a list of strings or a mapping, found {}",
                short(other)
            )),
        }
    }

    /// The tags of a hydrated test case: `scenario`'s as defaults, `test`'s over them.
    pub fn hydrate(scenario: &TestTags, test: &TestTags) -> TestTags {
        TestTags {
            labels: scenario
                .labels
                .iter()
                .chain(test.labels.iter())
                .cloned()
                .collect(),
            category: test.category.clone(),
            domain: test.domain.clone().or_else(|| scenario.domain.clone()),
            eval_type: None,
            skip: scenario.skip || test.skip,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn p(v: Value) -> Result<TestTags, String> {
        TestTags::parse(Some(&v))
    }

    #[test]
    fn list_tags_are_distributed_by_prefix() {
        let t = p(json!([
            "Domain:Customer-Service",
            "eval:orchestration:tool-selection",
            "CATEGORY:user",
            "category:xpia",
            "SKIP",
            "foo",
            "domain-ish"
        ]))
        .unwrap();
        assert_eq!(
            t,
            TestTags {
                labels: vec!["foo".into(), "domain-ish".into()],
                category: vec!["user".into(), "xpia".into()],
                domain: Some("customer-service".into()),
                eval_type: Some("orchestration:tool-selection".into()),
                skip: true,
            }
        );
        assert_eq!(TestTags::parse(None).unwrap(), TestTags::default());
        assert_eq!(p(json!([])).unwrap(), TestTags::default());
    }

    #[test]
    fn values_outside_the_taxonomy_and_non_strings_are_errors() {
        let e = p(json!(["domain:sandbox_external_retail"])).unwrap_err();
        assert!(e.contains("domain \"sandbox_external_retail\""), "{e}");
        assert!(e.contains("customer-service, hr, misc"), "{e}");
        assert!(p(json!(["category:nope"])).is_err());
        assert!(p(json!(["eval:x"])).is_err());
        assert!(p(json!(["ok", 3])).unwrap_err().starts_with("tags[1]"));
        assert!(p(json!("skip")).is_err());
        assert!(p(Value::Null).is_err());
    }

    #[test]
    fn mapping_tags_take_the_fields_as_they_are() {
        let t = p(json!({"labels": ["a"], "domain": "hr", "skip": "yes", "other": 1})).unwrap();
        assert_eq!(t.labels, vec!["a".to_string()]);
        assert_eq!(t.domain.as_deref(), Some("hr"));
        assert!(t.skip);
        // no lowercasing in the mapping form
        assert!(p(json!({"domain": "HR"})).is_err());
        assert!(p(json!({"skip": "maybe"})).is_err());
        assert!(p(json!({"labels": [1]})).is_err());
        assert!(p(json!({"category": ["user", "refusal"]})).is_ok());
    }

    #[test]
    fn hydration_merges_scenario_then_test() {
        let s = p(json!([
            "domain:customer-service",
            "eval:knowledge-qa:text",
            "s1",
            "category:user"
        ]))
        .unwrap();
        let t = p(json!(["t1", "category:xpia"])).unwrap();
        let h = TestTags::hydrate(&s, &t);
        assert_eq!(h.labels, vec!["s1".to_string(), "t1".to_string()]);
        assert_eq!(h.domain.as_deref(), Some("customer-service"));
        assert_eq!(h.category, vec!["xpia".to_string()]);
        assert_eq!(h.eval_type, None);
        assert!(!h.skip);
        let h = TestTags::hydrate(&t, &p(json!(["domain:misc", "skip"])).unwrap());
        assert_eq!(h.domain.as_deref(), Some("misc"));
        assert!(h.skip);
        assert_eq!(
            serde_json::to_value(TestTags::hydrate(
                &TestTags::default(),
                &TestTags::default()
            ))
            .unwrap(),
            json!({"labels": [], "category": [], "domain": null, "eval_type": null, "skip": false})
        );
    }
}
