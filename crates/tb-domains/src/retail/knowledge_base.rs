//! `knowledge_base`: policy search, shared with the other domains.

use serde_json::Value;
use tb_sandbox::{Args, Session, ToolError};

/// `search_policy`: delegates to [`crate::policy::search_policy`].
pub fn search_policy(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    crate::policy::search_policy(s, a)
}
