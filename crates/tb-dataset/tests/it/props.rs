//! Property tests for dedent and the merge rules (modest case counts).

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use tb_dataset::{dedent, recursive_merge};

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-5i64..5).prop_map(Value::from),
        "[a-c]{0,2}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec(("[a-d]", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Indenting every non-blank line by the same prefix is undone by dedent.
    #[test]
    fn dedent_undoes_uniform_indent(
        lines in prop::collection::vec("[a-z:#-][a-z :-]{0,8}|", 1..8),
        prefix in "[ \t]{1,6}",
    ) {
        let plain = lines.join("\n");
        let indented: Vec<String> = lines
            .iter()
            .map(|l| if l.is_empty() { l.clone() } else { format!("{prefix}{l}") })
            .collect();
        prop_assert_eq!(dedent(&indented.join("\n")), dedent(&plain));
    }

    /// Dedent never changes the number of lines and is idempotent.
    #[test]
    fn dedent_keeps_lines_and_is_idempotent(s in "[ \ta-c\n]{0,40}") {
        let d = dedent(&s);
        prop_assert_eq!(d.matches('\n').count(), s.matches('\n').count());
        prop_assert_eq!(dedent(&d), d.clone());
    }

    /// Merging with an empty mapping changes nothing; keys are a's then b's new keys.
    #[test]
    fn merge_identity_and_key_order(a in json_value(), b in json_value()) {
        let empty = json!({});
        if a.is_object() {
            prop_assert_eq!(recursive_merge(&a, &empty), a.clone());
            prop_assert_eq!(recursive_merge(&empty, &a), a.clone());
        }
        let m = recursive_merge(&a, &b);
        match (&a, &b) {
            (Value::Object(ao), Value::Object(bo)) => {
                let mut keys: Vec<&String> = ao.keys().collect();
                keys.extend(bo.keys().filter(|k| !ao.contains_key(*k)));
                let got: Vec<&String> = m.as_object().unwrap().keys().collect();
                prop_assert_eq!(got, keys);
                // b's scalars always win
                for (k, v) in bo {
                    if !v.is_object() && !v.is_array() {
                        prop_assert_eq!(&m[k], v);
                    }
                }
            }
            (Value::Array(x), Value::Array(y)) => {
                prop_assert_eq!(m.as_array().unwrap().len(), x.len() + y.len());
            }
            _ => prop_assert_eq!(&m, &b),
        }
    }
}
