//! Policy search (`search_policy` in retail, `knowledge_base_search_policy` elsewhere) over the
//! scenario's `sources`. The reference needs a Typesense server for it; here it will be an
//! embedded index. Until that lands, it answers as the reference does without Typesense.

use serde_json::Value;
use tb_sandbox::{Args, Session, ToolError};

/// Runs a policy search for the tool's validated arguments.
pub fn search_policy(_s: &mut Session, _a: &Args) -> Result<Value, ToolError> {
    Err(ToolError::new("Search service is not available"))
}
