//! Our recursive walkers over `serde_json::Value` (coercion, Python `json.dumps`, the deep
//! diff, Python equality) see only values serde_json parsed, which refuses nesting deeper
//! than 128; at that depth every walker runs on a 2 MiB stack (tokio's worker stack).

use serde_json::{Value, json};
use tb_sandbox::coerce::{Ctx, validate};
use tb_sandbox::schema::Kind;

fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

#[test]
fn serde_json_refuses_deep_nesting() {
    let e = serde_json::from_str::<Value>(&nested(100_000)).unwrap_err();
    insta::assert_snapshot!(e, @"recursion limit exceeded at line 1 column 128");
    let e =
        serde_json::from_str::<Value>(&format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200)))
            .unwrap_err();
    insta::assert_snapshot!(e, @"recursion limit exceeded at line 1 column 636");
}

#[test]
fn walkers_handle_the_deepest_parsable_value_on_a_small_stack() {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(|| {
            let v: Value = serde_json::from_str(&nested(127)).expect("127 levels parse");
            let ctx = Ctx {
                now: "2025-10-01T13:00:05Z",
            };
            assert!(validate(&Kind::Any, &v, ctx).is_ok());
            let mut k = Kind::Int;
            for _ in 0..127 {
                k = Kind::List(Box::new(k));
            }
            assert!(validate(&k, &v, ctx).is_ok());
            let text = tb_sandbox::pyjson::dumps(&v, tb_sandbox::pyjson::Layout::Default);
            assert_eq!(text.len(), 127 * 2 + 1);
            let other: Value = serde_json::from_str(&nested(126)).expect("parses");
            assert!(!tb_sandbox::diff::deep_diff(&v, &other).is_empty());
            assert!(tb_python::py_eq(&v, &v));
            assert!(!tb_python::py_eq(&v, &json!(1)));
        })
        .expect("thread")
        .join()
        .expect("no stack overflow");
}
