use super::*;
use proptest::prelude::*;
use serde_json::json;

fn rows() -> Vec<Value> {
    vec![
        json!({"id": "1", "status": "open", "priority": "high", "verified": true, "n": 3, "tags": ["a"], "due_at": null}),
        json!({"id": "2", "status": "closed", "priority": "low", "verified": false, "n": 5, "tags": ["b"], "due_at": "2025-01-01"}),
        json!({"id": "10", "status": "open", "priority": null, "verified": true, "n": 7, "tags": [], "due_at": null}),
    ]
}

fn run(filter: &str, quirk: bool) -> Result<Vec<String>, String> {
    let ast = parse(filter).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    for r in rows() {
        let lookup = |name: &str| r.get(name).cloned().unwrap_or(Value::Null);
        let ev = Evaluator {
            lookup: &lookup,
            ne_ge_le_always_true: quirk,
        };
        if ev.eval(&ast).map_err(|e| e.to_string())? {
            out.push(r["id"].as_str().unwrap_or("").to_string());
        }
    }
    Ok(out)
}

fn ids(v: &[&str]) -> Result<Vec<String>, String> {
    Ok(v.iter().map(std::string::ToString::to_string).collect())
}

#[test]
fn comparisons_and_boolean_ops() {
    assert_eq!(run("status eq 'open'", false), ids(&["1", "10"]));
    assert_eq!(run("status eq 'open' and n gt 4", false), ids(&["10"]));
    assert_eq!(run("status eq 'closed' or n lt 4", false), ids(&["1", "2"]));
    assert_eq!(run("n ge 5", false), ids(&["2", "10"]));
    assert_eq!(run("n le 5", false), ids(&["1", "2"]));
    assert_eq!(run("status ne 'open'", false), ids(&["2"]));
    assert_eq!(run("N eq 4.5", false), ids(&[]), "unknown names are None");
    assert_eq!(
        run("N gt 4.5", false),
        Err("'>' not supported between instances of 'NoneType' and 'float'".into())
    );
}

#[test]
fn generic_quirk_ne_ge_le_match_everything() {
    assert_eq!(run("status ne 'open'", true), ids(&["1", "2", "10"]));
    assert_eq!(run("n ge 100", true), ids(&["1", "2", "10"]));
    assert_eq!(run("n le 0", true), ids(&["1", "2", "10"]));
    assert_eq!(run("n gt 4", true), ids(&["2", "10"]));
}

#[test]
fn literal_quirks() {
    // Boolean literals stay raw text: never equal to a bool.
    assert_eq!(run("verified eq true", false), ids(&[]));
    // Null literal is an AST node: never equal, always unequal.
    assert_eq!(run("priority eq null", false), ids(&[]));
    assert_eq!(run("priority ne null", false), ids(&["1", "2", "10"]));
    assert_eq!(run("null eq null", false), ids(&["1", "2", "10"]));
    // Everything else is true.
    assert_eq!(run("not (status eq 'open')", false), ids(&["1", "2", "10"]));
    assert_eq!(run("contains(status,'op')", false), ids(&["1", "2", "10"]));
    assert_eq!(
        run("status in ('open', 'x')", false),
        ids(&["1", "2", "10"])
    );
    assert_eq!(run("'email eq \"x@y\"'", false), ids(&["1", "2", "10"]));
    assert_eq!(run("status", false), ids(&["1", "2", "10"]));
    assert_eq!(run("5", false), ids(&["1", "2", "10"]));
    // `not` binds tighter than `eq`: (not status) eq 'open' compares a node.
    assert_eq!(run("not status eq 'open'", false), ids(&[]));
    // A function call compared is a node.
    assert_eq!(run("tolower(status) eq 'open'", false), ids(&[]));
}

#[test]
fn type_errors_surface() {
    for (filter, (op, left, right)) in [
        ("priority gt 'a'", (">", "NoneType", "str")),
        ("status lt 3", ("<", "str", "int")),
        ("n gt null", (">", "int", "Null")),
        ("verified gt true", (">", "bool", "str")),
        ("due_at gt 2025-01-01", (">", "NoneType", "Date")),
    ] {
        let message = format!("'{op}' not supported between instances of '{left}' and '{right}'");
        assert_eq!(run(filter, false), Err(message), "{filter}");
    }
}

#[test]
fn parse_errors_match_the_library() {
    for (filter, message) in [
        (
            "email eq \"x@y.com\"",
            "Failed to tokenize at: Token(type='ERROR', value='\"x@y.com\"', lineno=1, index=9)",
        ),
        (
            "status eq",
            "Failed to parse at: Token(type='WS', value=' ', lineno=1, index=6)",
        ),
        (
            "status eq 'open' ",
            "Failed to parse at: Token(type='WS', value=' ', lineno=1, index=16)",
        ),
        ("(a eq 1", "Failed to parse at: None"),
        ("foo(a)", "Unknown function: 'foo'"),
        (
            "contains(a)",
            "Function 'contains' takes 2 arguments. 1 given.",
        ),
        (
            "substring(a)",
            "Function 'substring' takes between 2 and 3 arguments. 1 given.",
        ),
        (
            "a in ('x')",
            "Failed to parse at: Token(type=')', value=')', lineno=1, index=9)",
        ),
        (
            "anything eq 1",
            "Failed to parse at: Token(type='ANY', value=Any(), lineno=1, index=0)",
        ),
        (
            "a eq 'it''s",
            "Failed to tokenize at: Token(type='ERROR', value=\"'s\", lineno=1, index=9)",
        ),
    ] {
        assert_eq!(parse(filter).unwrap_err().to_string(), message, "{filter}");
    }
    assert_eq!(
        parse("a eq 2025-01-01T10:00Z").map(|n| n.to_string()),
        Ok("Compare(comparator=Eq(), left=Identifier(name='a', namespace=()), right=DateTime(val='2025-01-01T10:00Z'))".into())
    );
}

#[test]
fn tokens_follow_pattern_order() {
    let kinds = |s: &str| {
        tokenize(s)
            .0
            .into_iter()
            .map(|t| t.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        kinds("a eq 'x'"),
        vec![
            "Token(type='ODATA_IDENTIFIER', value=Identifier(name='a', namespace=()), lineno=1, index=0)",
            "Token(type='EQ', value=Eq(), lineno=1, index=1)",
            "Token(type='STRING', value=String(val='x'), lineno=1, index=5)",
        ]
    );
    for (filter, first) in [
        (
            "x.y.z",
            "Token(type='ODATA_IDENTIFIER', value=Identifier(name='z', namespace=('x', 'y')), lineno=1, index=0)",
        ),
        (
            "TRUE",
            "Token(type='BOOLEAN', value=Boolean(val='TRUE'), lineno=1, index=0)",
        ),
        (
            "1.5e3",
            "Token(type='DECIMAL', value=Float(val='1.5e3'), lineno=1, index=0)",
        ),
        (
            "duration'p1dt2h'",
            "Token(type='DURATION', value=Duration(val='P1DT2H'), lineno=1, index=0)",
        ),
    ] {
        assert_eq!(kinds(filter)[0], first, "{filter}");
    }
}

/// Runs `f` on a thread with tokio's default worker stack (2 MiB): deep input must fail
/// with an error, never overflow it.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(f)
        .expect("thread")
        .join()
        .expect("no stack overflow or panic")
}

fn deep_filters(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("and chain", vec!["n eq 1"; n].join(" and ")),
        ("or chain", vec!["n eq 1"; n].join(" or ")),
        (
            "parens",
            format!("{}n eq 1{}", "(".repeat(n), ")".repeat(n)),
        ),
        ("not", format!("{}n", "not ".repeat(n))),
        ("minus", format!("{}1 eq 1", "-".repeat(n))),
        (
            "calls",
            format!("{}n{} eq 1", "tolower(".repeat(n), ")".repeat(n)),
        ),
        (
            "any lambdas",
            format!("{}n{}", "x/any(v: ".repeat(n), ")".repeat(n)),
        ),
        (
            "lists",
            format!("{}1, 2{} eq 1", "(".repeat(n), ", 3)".repeat(n)),
        ),
        (
            "in lists",
            format!("n in {}1, 2{}", "(".repeat(n), ", 3)".repeat(n)),
        ),
        (
            "right-nested and",
            format!("{}n eq 1{}", "n eq 1 and (".repeat(n), ")".repeat(n)),
        ),
    ]
}

#[test]
fn deep_filters_fail_with_the_recursion_error_not_a_stack_overflow() {
    on_small_stack(|| {
        // ~110 KB and far beyond: every shape answers with Python's RecursionError text.
        for n in [3_000, 30_000] {
            for (name, f) in deep_filters(n) {
                let got = run(&f, false);
                assert_eq!(got, Err(RECURSION_ERROR.to_string()), "{name} x{n}");
            }
        }
    });
}

#[test]
fn moderately_deep_filters_still_work_as_the_reference() {
    on_small_stack(|| {
        // As the reference: 900 `and`s evaluate; deep `not`/calls/lambdas are true.
        assert_eq!(
            run(&vec!["n gt 4"; 900].join(" and "), false),
            ids(&["2", "10"])
        );
        assert_eq!(run(&vec!["n eq 0"; 900].join(" or "), false), ids(&[]));
        let all = ids(&["1", "2", "10"]);
        for (name, f) in deep_filters(40) {
            let got = run(&f, false);
            let want = match name {
                "and chain" | "or chain" | "parens" | "right-nested and" => ids(&[]),
                "minus" | "calls" | "lists" => ids(&[]),
                _ => all.clone(),
            };
            assert_eq!(got, want, "{name}");
        }
        // The evaluator's own limit: 970 chained `and`s parse but fail when evaluated.
        assert_eq!(
            run(&vec!["n gt 4"; 970].join(" and "), false),
            Err(RECURSION_ERROR.to_string())
        );
        // Python's `==` on deep AST nodes raises RecursionError too.
        let deep = vec!["n"; 400].join(" add ");
        assert_eq!(
            run(&format!("({deep}) eq ({deep})"), false),
            Err(RECURSION_ERROR.to_string())
        );
        let shallow = vec!["n"; 300].join(" add ");
        assert_eq!(
            run(&format!("({shallow}) eq ({shallow})"), false),
            ids(&["1", "2", "10"])
        );
    });
}

/// Fuzz target (stable toolchain, bounded): token soup and deep shapes, parsed and
/// evaluated on a 2 MiB stack. Never a panic or overflow; errors are the library's kinds.
#[test]
fn fuzz_token_soup_and_deep_shapes() {
    const PIECES: &[&str] = &[
        "(",
        ")",
        " and ",
        " or ",
        "not ",
        "-",
        " eq ",
        " ne ",
        " gt ",
        " ge ",
        " lt ",
        " le ",
        " in ",
        " add ",
        " mul ",
        ",",
        ", ",
        "/",
        "any(",
        "all(",
        "v: ",
        "n",
        "status",
        "'x'",
        "'\u{e9}'",
        "1",
        "+5",
        "1.5e3",
        "2025-01-01",
        "2025-01-01T10:00Z",
        "10:00:00",
        "null",
        "true",
        "tolower(",
        "contains(",
        "substring(",
        "now()",
        " ",
        "\u{e9}",
        "\u{65e5}\u{672c}",
        "duration'P1D'",
        "geography'x'",
        "x.y",
        "=",
        "''",
        "'",
        "\"",
        "a=",
        "00000000-0000-0000-0000-000000000000",
    ];
    let stats = on_small_stack(move || {
        let soup =
            prop::collection::vec(prop::sample::select(PIECES), 0..120).prop_map(|v| v.concat());
        let atom = prop::sample::select(vec![
            "n",
            "status",
            "id",
            "'open'",
            "'\u{e9}'",
            "1",
            "4.5",
            "null",
            "true",
            "2025-01-01",
        ])
        .prop_map(str::to_string);
        let grammar = atom.prop_recursive(6, 48, 3, |e| {
            let op = prop::sample::select(vec![
                " eq ", " ne ", " gt ", " ge ", " lt ", " le ", " and ", " or ", " add ",
            ]);
            prop_oneof![
                (e.clone(), op, e.clone()).prop_map(|(a, o, b)| format!("{a}{o}{b}")),
                e.clone().prop_map(|a| format!("({a})")),
                e.clone().prop_map(|a| format!("not {a}")),
                e.clone().prop_map(|a| format!("tolower({a})")),
                (e.clone(), e.clone()).prop_map(|(a, b)| format!("n in ({a}, {b})")),
                e.prop_map(|a| format!("tags/any(v: {a})")),
            ]
        });
        let deep = (0usize..10, 0usize..1500).prop_map(|(shape, n)| {
            deep_filters(n)
                .into_iter()
                .nth(shape)
                .map(|(_, f)| f)
                .unwrap_or_default()
        });
        let input = prop_oneof![3 => grammar, 3 => soup, 1 => deep, 1 => "\\PC{0,60}"];
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: std::env::var("TB_FUZZ_CASES")
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(2000),
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        let counts = std::sync::Mutex::new([0usize; 4]);
        let result = runner.run(&input, |f| {
            let got = run(&f, false);
            let mut c = counts
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            c[0] += 1;
            match &got {
                Ok(_) => c[1] += 1,
                Err(e) if e == RECURSION_ERROR => c[3] += 1,
                Err(_) => c[2] += 1,
            }
            drop(c);
            if let Err(e) = got {
                prop_assert!(
                    e.starts_with("Failed to tokenize at: Token(")
                        || e.starts_with("Failed to parse at: ")
                        || e.starts_with("Unknown function: ")
                        || e.starts_with("Function '")
                        || e.starts_with("No symbol ")
                        || e.contains("not supported between instances of")
                        || e == RECURSION_ERROR,
                    "unexpected error kind: {e}"
                );
            }
            Ok(())
        });
        (
            result.map_err(|e| e.to_string()),
            counts.into_inner().unwrap_or_default(),
        )
    });
    let (result, [cases, ok, err, deep_err]) = stats;
    eprintln!(
        "odata fuzz: {cases} filters, {ok} evaluated, {err} errors, {deep_err} recursion errors"
    );
    result.unwrap();
}

fn field() -> impl Strategy<Value = String> {
    prop::sample::select(vec!["status", "priority", "n", "verified", "id"]).prop_map(str::to_string)
}

fn literal() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z ]{0,6}".prop_map(|s| format!("'{s}'")),
        (-50i64..50).prop_map(|i| i.to_string()),
        Just("true".to_string()),
        Just("null".to_string()),
    ]
}

fn comparison() -> impl Strategy<Value = String> {
    (
        field(),
        prop::sample::select(vec!["eq", "ne", "gt", "ge", "lt", "le"]),
        literal(),
    )
        .prop_map(|(f, op, l)| format!("{f} {op} {l}"))
}

proptest! {
    #[test]
    fn generated_comparisons_parse_to_compare(c in comparison()) {
        let ast = parse(&c).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert!(matches!(ast, Node::Compare(..)), "{c} -> {ast:?}");
    }

    #[test]
    fn and_binds_tighter_than_or(a in comparison(), b in comparison(), c in comparison()) {
        let ast = parse(&format!("{a} or {b} and {c}")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Node::BoolOp(false, l, r) = &ast else { return Err(TestCaseError::fail("top is not or")) };
        prop_assert!(matches!(**l, Node::Compare(..)));
        prop_assert!(matches!(**r, Node::BoolOp(true, ..)));
        let ast2 = parse(&format!("{a} and {b} or {c}")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Node::BoolOp(false, l2, _) = &ast2 else { return Err(TestCaseError::fail("top is not or")) };
        prop_assert!(matches!(**l2, Node::BoolOp(true, ..)));
    }

    #[test]
    fn parenthesised_groups_keep_their_structure(a in comparison(), b in comparison(), c in comparison()) {
        let ast = parse(&format!("({a} or {b}) and {c}")).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let Node::BoolOp(true, l, _) = &ast else { return Err(TestCaseError::fail("top is not and")) };
        prop_assert!(matches!(**l, Node::BoolOp(false, ..)));
    }

    #[test]
    fn never_panics(s in "\\PC{0,40}") {
        let _ = parse(&s);
    }

    #[test]
    fn double_quoted_values_fail_to_tokenize(f in field(), v in "[a-z@.]{1,8}") {
        let e = parse(&format!("{f} eq \"{v}\"")).unwrap_err();
        prop_assert!(matches!(e, FilterError::Tokenize(_)));
    }
}
