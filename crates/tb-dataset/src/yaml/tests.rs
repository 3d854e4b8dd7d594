use super::load;
use serde_json::json;

#[test]
fn smoke() {
    assert_eq!(load("a: 1").unwrap(), json!({"a": 1}));
}
