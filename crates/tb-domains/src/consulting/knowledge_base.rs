//! Knowledge base: policy search over the scenario's sources (the shared
//! [`crate::policy::search_policy`]); its consulting cases.

#[cfg(test)]
mod tests {
    use crate::consulting::testutil::session;
    use serde_json::json;

    #[tb_test_support::data_test]
    #[test]
    fn declared_like_the_reference() {
        let mut s = session(json!({}));
        calls!(s;
            "knowledge_base_search_policy" {"query": "x", "top_k": 2} => error "Tool execution failed: Input validation failed: top_k: Extra inputs are not permitted";
            "knowledge_base_search_policy" {"max_results": 2} => error "Tool execution failed: Input validation failed: query: Field required";
        );
        let tool = s.domain.tool("knowledge_base_search_policy").unwrap();
        let schema = tb_sandbox::runtime::input_schema(&tool.decl.input);
        assert_eq!(schema["properties"]["max_results"]["default"], json!(3));
        assert_eq!(schema["required"], json!(["query"]));
    }
}
