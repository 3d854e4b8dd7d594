//! A task as the dataset defines it: one test function of a test-case file, hydrated with its
//! scenario. Everything the episode, the judges and the session need, and nothing else.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where something came from in the dataset, for error messages and provenance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct SourceLoc {
    /// Path of the file, as given (relative to the data root when possible).
    pub path: String,
    /// 1-based line, 0 when unknown.
    pub line: usize,
}

impl std::fmt::Display for SourceLoc {
    /// `path:line`, or `path` when the line is unknown.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            f.write_str(&self.path)
        } else {
            write!(f, "{}:{}", self.path, self.line)
        }
    }
}

/// What the test body asserts. The v1 benchmark uses exactly these two.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Check {
    /// `validate_database(x)`: result hash equals golden hash, per server.
    ValidateDatabase,
    /// `validate_rubrics_yesno(x, judge)`: every yes/no rubric holds for the final response.
    ValidateRubricsYesno,
}

/// One task, hydrated: test-case YAML merged over its scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `<file basename>:<function>`, e.g. `sandbox_external_retail_group1.py:test_case_ST002_001`.
    pub uid: String,
    /// Scenario name (also the server name in the v1 benchmark).
    pub scenario: String,
    /// The first user message.
    pub query: Option<String>,
    /// What the simulated user knows (private to the user simulator).
    pub user_context: Option<String>,
    /// Cap on simulated-user turns (reference default 10).
    pub max_user_sim_turns: Option<u64>,
    /// Cap on agent decodes (reference default: unlimited).
    pub max_agent_sim_turns: Option<u64>,
    /// Extra bot instructions from the task, appended to the scenario's.
    pub bot_instructions: Option<String>,
    /// The task's own `init` block as written: `{server: {data_patch, golden_test_case, ...}}`.
    pub init: Map<String, Value>,
    /// Per server, the scenario's `world_state.<server>` recursively merged with `init.<server>`:
    /// what the reference sends to `__reserved__init` as `config`.
    pub world_state: Map<String, Value>,
    /// The merged YAML mapping of the task (module keys overridden by function keys), exactly as
    /// PyYAML `safe_load` reads it, converted to JSON.
    pub raw: Map<String, Value>,
    /// What the test body checks.
    pub checks: Vec<Check>,
    /// Where the test function is.
    pub source: SourceLoc,
    /// The record's `test_tags`: the scenario's and the test's tags merged as the reference
    /// hydrates them ([`crate::tags`]).
    #[serde(default)]
    pub test_tags: crate::tags::TestTags,
}

impl Task {
    /// The golden tool calls for `server`: `init.<server>.golden_test_case.tool_interactions`,
    /// entries without `tool` skipped, missing `parameters` as `{}` (as the reference replays them).
    pub fn golden_calls(&self, server: &str) -> Vec<(String, Value)> {
        self.world_state
            .get(server)
            .map(golden_calls_of)
            .unwrap_or_default()
    }

    /// The servers this task's scenario initialises, in priority order.
    pub fn servers(&self) -> Vec<String> {
        self.world_state.keys().cloned().collect()
    }

    /// `rubrics_yesno` for `server`, if any.
    pub fn rubrics_yesno(&self, server: &str) -> Vec<String> {
        self.world_state
            .get(server)
            .and_then(|s| s.get("rubrics_yesno"))
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The task's `tags` as written (module tags concatenated with the function's), if any.
    pub fn tags(&self) -> Option<&Value> {
        self.raw.get("tags")
    }
}

/// The golden calls of one server's init config (`golden_test_case.tool_interactions`):
/// entries without `tool` skipped, missing `parameters` as `{}`, as the reference replays them.
pub fn golden_calls_of(config: &Value) -> Vec<(String, Value)> {
    let Some(list) = config
        .get("golden_test_case")
        .and_then(|g| g.get("tool_interactions"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|it| {
            let tool = it.get("tool")?.as_str()?.to_string();
            let params = match it.get("parameters") {
                Some(Value::Object(m)) => Value::Object(m.clone()),
                _ => Value::Object(Map::new()),
            };
            Some((tool, params))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::SourceLoc;

    #[test]
    fn source_loc_display() {
        let l = SourceLoc {
            path: "a/b.py".into(),
            line: 7,
        };
        assert_eq!(l.to_string(), "a/b.py:7");
        assert_eq!(
            SourceLoc {
                path: "x".into(),
                line: 0
            }
            .to_string(),
            "x"
        );
    }
}
