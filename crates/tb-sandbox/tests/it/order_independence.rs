//! Property tests: the canonical hash and the deep diff depend on content, not on the order in
//! which keys were inserted (the reference sorts keys in both), while list order still counts.

use proptest::prelude::*;
use serde_json::{Map, Value};
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;

/// A small JSON tree of objects, lists and scalars (ints and floats kept apart).
fn tree() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-1000i64..1000).prop_map(Value::from),
        (-1000.0f64..1000.0).prop_map(Value::from),
        "[a-zé😀]{0,4}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map("[a-d]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// The same tree with every object's keys inserted in reverse order.
fn reversed(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m.iter().rev() {
                out.insert(k.clone(), reversed(x));
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(reversed).collect()),
        x => x.clone(),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn hash_ignores_key_insertion_order(v in tree()) {
        prop_assert_eq!(hash_stable(&v), hash_stable(&reversed(&v)));
    }

    #[test]
    fn diff_ignores_key_insertion_order(a in tree(), b in tree()) {
        let d1 = deep_diff(&a, &b);
        let d2 = deep_diff(&reversed(&a), &reversed(&b));
        prop_assert_eq!(&d1, &d2);
        // And an equal pair has no difference at all.
        prop_assert!(deep_diff(&a, &reversed(&a)).is_empty());
    }

    #[test]
    fn list_order_is_content(items in prop::collection::vec(0i64..5, 2..6)) {
        let fwd = Value::Array(items.iter().copied().map(Value::from).collect());
        let rev = Value::Array(items.iter().rev().copied().map(Value::from).collect());
        let same = items.iter().eq(items.iter().rev());
        prop_assert_eq!(hash_stable(&fwd) == hash_stable(&rev), same);
        prop_assert_eq!(deep_diff(&fwd, &rev).is_empty(), same);
    }
}
