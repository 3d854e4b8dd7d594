//! Hostile arguments at every tool of every domain (property tests that stay in CI): random
//! JSON, and objects with the tool's own field names holding hostile values. No call may
//! panic (a caught panic is answered as `TOOL_PANIC_ERROR`, which fails the test), and every
//! answer is a result or the reference's `{"error", "tool"}` shape with a string error.

use crate::testdata;
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::{Map, Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use tb_sandbox::runtime::TOOL_PANIC_ERROR;
use tb_sandbox::schema::Kind;
use tb_sandbox::{CallOutcome, Clock, Session};

/// Cases per domain (each a short sequence of calls on one fresh session); `TB_FUZZ_CASES`
/// raises it for a longer local run.
fn cases() -> u32 {
    std::env::var("TB_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
}

fn hostile_string() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(vec![
            "",
            " ",
            "é",
            "日本語",
            "𝟘𝟙",
            "١٢٣",
            "\u{0}",
            "\u{2212}5",
            "1",
            "2",
            "10",
            "-1",
            "0",
            "1.5",
            "1e-9223372036854775808",
            "1e9223372036854775807",
            "-0",
            "NaN",
            "inf",
            "2025-10-01",
            "2025-10-01T13:00:05Z",
            "é2025-10-01",
            "2025-10-01Té",
            "2025-1é-01",
            "2025-10-01T13:00:05+é5:00",
            "1700000000",
            "open",
            "closed",
            "tickets",
            "users",
            "status eq 'open'",
            "(((((",
            "not not not a",
            "a eq 1 and",
            "x/any(v: v eq 1)",
            "' or 1 eq 1",
            "created_at desc",
            "id,name",
            "{{",
            "%s",
            "../../etc/passwd",
            "USD",
            "EUR",
            "true",
            "null",
        ])
        .prop_map(str::to_string),
        "\\PC{0,16}",
        (1usize..4).prop_map(|n| "é".repeat(n) + "2025-10-01"),
    ]
}

fn hostile_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        prop::sample::select(vec![
            0i64,
            1,
            -1,
            2,
            7,
            1000,
            i64::MAX,
            i64::MIN,
            1_700_000_000,
            1_759_276_800_000
        ])
        .prop_map(Value::from),
        prop::sample::select(vec![0.5, -0.0, 1e308, -1e308, 1e-300, 3.0, 1e20])
            .prop_map(|f| json!(f)),
        hostile_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 16, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((hostile_string(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// One call: which tool, and its arguments built from the tool's field names (by index) or
/// arbitrary keys, or a non-object value.
#[derive(Debug, Clone)]
enum Args {
    Fields(Vec<(usize, Value)>),
    /// Every field of the tool, each with a value of its kind picked by a seed (mostly
    /// plausible, sometimes hostile), so calls get past validation into the tool.
    Typed(Vec<usize>, Vec<Value>),
    Raw(Value),
}

fn pick<T: Clone>(pool: &[T], seed: usize) -> T {
    pool[seed % pool.len()].clone()
}

/// A value for `kind`: from a small plausible pool, or (one time in ten) a hostile value.
fn typed_value(
    kind: &Kind,
    seeds: &mut impl Iterator<Item = usize>,
    hostile: &mut impl Iterator<Item = Value>,
    depth: usize,
) -> Value {
    let seed = seeds.next().unwrap_or(0);
    if seed % 10 == 9 || depth > 3 {
        return hostile.next().unwrap_or(Value::Null);
    }
    match kind {
        Kind::Optional(k) => {
            if seed.is_multiple_of(5) {
                Value::Null
            } else {
                typed_value(k, seeds, hostile, depth)
            }
        }
        Kind::Constrained(k, _) => typed_value(k, seeds, hostile, depth),
        Kind::Str => Value::String(
            pick(
                &[
                    "1",
                    "2",
                    "3",
                    "10",
                    "101",
                    "open",
                    "pending",
                    "high",
                    "é",
                    "2025-10-01",
                    "USD",
                    "a@b.c",
                    "",
                ],
                seed / 4,
            )
            .to_string(),
        ),
        Kind::Int => Value::from(pick(&[0i64, 1, 2, 3, 5, 10, 100, -1, i64::MAX], seed / 4)),
        Kind::Float => json!(pick(&[0.0, 1.5, 100.0, -3.0, 1e300], seed / 4)),
        Kind::Bool => Value::Bool(seed % 8 < 4),
        Kind::Decimal => pick(
            &[
                json!("10.00"),
                json!("0"),
                json!("-5"),
                json!(12.5),
                json!("1e-9223372036854775808"),
                json!("1E+999999999999999999"),
                json!("1_000.5"),
            ],
            seed / 4,
        ),
        Kind::Date => json!(pick(
            &[
                "2025-10-01",
                "2024-02-29",
                "2025-10-01T00:00:00",
                "1759276800"
            ],
            seed / 4
        )),
        Kind::DateTime => json!(pick(
            &[
                "2025-10-01T13:00:05Z",
                "2025-10-01",
                "2025-10-01T13:00:05.1234567+05:30",
                "2025-10-01 13:00"
            ],
            seed / 4
        )),
        Kind::Enum(values) if !values.is_empty() => Value::String(pick(values, seed / 4)),
        Kind::List(k) => Value::Array(
            (0..seed / 4 % 3)
                .map(|_| typed_value(k, seeds, hostile, depth + 1))
                .collect(),
        ),
        Kind::Dict(k) => {
            let mut m = Map::new();
            m.insert("k".into(), typed_value(k, seeds, hostile, depth + 1));
            Value::Object(m)
        }
        Kind::Model(model) => {
            let mut m = Map::new();
            for f in &model.fields {
                m.insert(
                    f.name.clone(),
                    typed_value(&f.kind, seeds, hostile, depth + 1),
                );
            }
            Value::Object(m)
        }
        Kind::Union(alts) if !alts.is_empty() => {
            typed_value(&alts[seed / 4 % alts.len()], seeds, hostile, depth)
        }
        _ => hostile.next().unwrap_or(Value::Null),
    }
}

fn call_strategy() -> impl Strategy<Value = (usize, Args)> {
    (
        any::<usize>(),
        prop_oneof![
            3 => prop::collection::vec((any::<usize>(), hostile_json()), 0..6).prop_map(Args::Fields),
            4 => (prop::collection::vec(any::<usize>(), 64), prop::collection::vec(hostile_json(), 16))
                .prop_map(|(s, h)| Args::Typed(s, h)),
            1 => hostile_json().prop_map(Args::Raw),
        ],
    )
}

fn build_args(s: &Session, tool: &str, args: &Args) -> Value {
    match args {
        Args::Raw(v) => v.clone(),
        Args::Typed(seeds, hostile) => {
            let mut seeds = seeds.iter().copied().cycle();
            let mut hostile = hostile.iter().cloned().cycle();
            let mut m = Map::new();
            if let Some(t) = s.domain.tool(tool) {
                for f in &t.decl.input.fields {
                    // Now and then a field is left out.
                    if seeds.next().unwrap_or(0).is_multiple_of(9) {
                        continue;
                    }
                    m.insert(
                        f.name.clone(),
                        typed_value(&f.kind, &mut seeds, &mut hostile, 0),
                    );
                }
            }
            Value::Object(m)
        }
        Args::Fields(kv) => {
            let fields: Vec<String> = s
                .domain
                .tool(tool)
                .map(|t| t.decl.input.fields.iter().map(|f| f.name.clone()).collect())
                .unwrap_or_default();
            let mut m = Map::new();
            for (i, v) in kv {
                // Mostly the tool's own fields; now and then an unknown key.
                let key = if fields.is_empty() || i % 7 == 6 {
                    format!("extra_{}", i % 5)
                } else {
                    fields[i % fields.len()].clone()
                };
                m.insert(key, v.clone());
            }
            Value::Object(m)
        }
    }
}

fn check_answer(tool: &str, out: &CallOutcome) -> Result<(), TestCaseError> {
    prop_assert!(
        *out != CallOutcome::ToolFailed(TOOL_PANIC_ERROR.into()),
        "{tool} panicked"
    );
    let v = out.to_json(tool);
    if !out.is_ok() {
        let obj = v
            .as_object()
            .ok_or_else(|| TestCaseError::fail("error is not an object"))?;
        prop_assert_eq!(obj.len(), 2, "{}", v);
        prop_assert!(obj["error"].is_string(), "{}", v);
        prop_assert_eq!(&obj["tool"], &json!(tool));
    }
    // Whatever the answer, it serializes as the MCP text does.
    let _ = out.to_text(tool);
    Ok(())
}

fn fuzz_domain(server: &str) {
    let base = testdata::session(server, json!({}), Clock::default());
    let names: Vec<String> = base
        .domain
        .tools()
        .iter()
        .map(|t| t.decl.name.clone())
        .collect();
    assert!(!names.is_empty());
    let mut runner = TestRunner::new(Config {
        cases: cases(),
        failure_persistence: None,
        ..Config::default()
    });
    let calls = AtomicUsize::new(0);
    let passed = AtomicUsize::new(0);
    let result = runner.run(&prop::collection::vec(call_strategy(), 1..5), |seq| {
        let mut s = base.clone();
        for (t, args) in &seq {
            let tool = &names[t % names.len()];
            let a = build_args(&s, tool, args);
            let out = s.call(tool, &a);
            calls.fetch_add(1, Ordering::Relaxed);
            if out.is_ok() {
                passed.fetch_add(1, Ordering::Relaxed);
            }
            check_answer(tool, &out)?;
        }
        Ok(())
    });
    let calls = calls.into_inner();
    eprintln!(
        "fuzz {server}: {} cases, {calls} tool calls over {} tools, {} answered without error",
        cases(),
        names.len(),
        passed.into_inner()
    );
    if let Err(e) = result {
        panic!("{server}: {e}");
    }
}

#[tb_test_support::data_test]
#[test]
fn fuzz_retail_tools() {
    fuzz_domain("sandbox_external_retail");
}

#[tb_test_support::data_test]
#[test]
fn fuzz_booking_tools() {
    fuzz_domain("external_booking_v1");
}

#[tb_test_support::data_test]
#[test]
fn fuzz_auto_insurance_tools() {
    fuzz_domain("sandbox_auto_insurance");
}

#[tb_test_support::data_test]
#[test]
fn fuzz_neobank_tools() {
    fuzz_domain("sandbox_neobank_support_v1");
}

#[tb_test_support::data_test]
#[test]
fn fuzz_consulting_tools() {
    fuzz_domain("sandbox_consulting");
}
