//! The knowledge_base toolset: policy search over the scenario's sources.

use tb_sandbox::ToolFn;

pub(super) fn functions() -> Vec<(&'static str, ToolFn)> {
    vec![("knowledge_base_search_policy", crate::policy::search_policy)]
}
