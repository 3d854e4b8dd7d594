//! Knowledge base: policy search over the scenario's sources (shared implementation).

use serde_json::Value;
use tb_sandbox::{Args, Session, ToolError};

/// `knowledge_base_search_policy`.
pub(crate) fn search_policy(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    crate::policy::search_policy(s, a)
}
