//! The evaluator against CPython: corners a test file can reach, and expressions generated at
//! random (arithmetic, formatting, comparisons, containers) run on both, their `repr` or the
//! type of the exception they raise compared.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

use crate::budgets::run;

/// What the body's expression gives: its `repr`, or `!<ExceptionType>`.
fn tb_eval(expr: &str) -> String {
    let src = crate::budgets::file_of(&format!("print(repr({expr}))\n"));
    if tb_pyeval::TestFile::parse("e.py", &src).is_err() {
        return "!SyntaxError".into();
    }
    let o = run(&format!("print(repr({expr}))\n"));
    if o.passed {
        o.prints.trim_end_matches('\n').to_string()
    } else {
        let kind = o.message.split(':').next().unwrap_or_default();
        format!("!{kind}")
    }
}

#[test]
fn cpython_corners() {
    for (expr, want) in [
        ("'%s %s' % (1,)", "!TypeError"),
        ("'%s' % (1, 2)", "!TypeError"),
        ("'%s' % ()", "!TypeError"),
        ("'%s-%s' % (1, 'a')", "'1-a'"),
        ("'%d%%' % 7.9", "'7%'"),
        ("'x' % {}", "'x'"),
        ("f'{3.14159:.2}'", "'3.1'"),
        ("f'{3.0:.2}'", "'3.0'"),
        ("f'{100.0:.3}'", "'1e+02'"),
        ("f'{0.0001234:.2}'", "'0.00012'"),
        ("f'{123456789.0:.3g}'", "'1.23e+08'"),
        ("f'{1234.5:e}'", "'1.234500e+03'"),
        ("f'{-0.5:.1G}'", "'-0.5'"),
        (
            "f'{-9223372036854775807 - 1:,}'",
            "'-9,223,372,036,854,775,808'",
        ),
        (
            "list(enumerate('abc', 9223372036854775806))",
            "!OverflowError",
        ),
        (
            "list(enumerate('a', 9223372036854775807))",
            "[(9223372036854775807, 'a')]",
        ),
        ("list(enumerate('a', 1.5))", "!TypeError"),
        ("0 ** -1", "!ZeroDivisionError"),
        ("0.0 ** -2", "!ZeroDivisionError"),
        ("10.0 ** 400", "!OverflowError"),
        ("2 ** -1", "0.5"),
        ("-0.0 % True", "0.0"),
        ("0.0 % -5", "-0.0"),
        ("-7.5 % 2", "0.5"),
        ("1 % 0.1", "0.09999999999999995"),
        ("1 // 0.1", "9.0"),
        ("-1 // 0.1", "-10.0"),
        ("-0.0 // 5", "-0.0"),
        ("5.5 // -2", "-3.0"),
        ("sum(['a'], '')", "!TypeError"),
        ("sum([[1], [2]], [])", "[1, 2]"),
        (
            "'a\\x0bb\\x0cc\\x1cd\\x1de\\x1ef\\x85g\\u2028h\\u2029i\\r\\nj\\rk\\n'.splitlines()",
            "['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i', 'j', 'k']",
        ),
        ("'a\\r\\nb\\n'.splitlines(True)", "['a\\r\\n', 'b\\n']"),
        ("''.splitlines()", "[]"),
    ] {
        assert_eq!(tb_eval(expr), want, "{expr}");
    }
}

#[test]
fn an_except_name_is_unbound_after_its_handler() {
    let body = run("try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    pass\nprint(e)\n");
    assert!(body.message.starts_with("UnboundLocalError"), "{body:?}");
    let in_function = run(
        "def f():\n    try:\n        1 / 0\n    except ZeroDivisionError as e:\n        pass\n    return e\nf()\n",
    );
    assert!(
        in_function.message.starts_with("UnboundLocalError"),
        "{in_function:?}"
    );
    let kept = run(
        "try:\n    1 / 0\nexcept ZeroDivisionError as e:\n    m = str(e)\nassert m == 'division by zero'\n",
    );
    assert!(kept.passed, "{kept:?}");
}

// ---- differential: generated expressions on both ----

/// The float literals of the generated expressions.
const FLOATS: [&str; 11] = [
    "0.0",
    "1.5",
    "-2.25",
    "3.14159",
    "1e-05",
    "1e+20",
    "100.0",
    "0.1",
    "2.5",
    "1234.5678",
    "-0.0",
];

fn atom() -> impl Strategy<Value = String> {
    prop_oneof![
        (-50i64..50).prop_map(|i| i.to_string()),
        (-100_000i64..100_000).prop_map(|i| i.to_string()),
        prop::sample::select(&FLOATS[..]).prop_map(|f| (*f).to_string()),
        prop::sample::select(vec!["'a'", "'abc'", "''", "'x y'", "'A-b'", "'1,2'"])
            .prop_map(str::to_string),
        prop::sample::select(vec!["True", "False", "None"]).prop_map(str::to_string),
    ]
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (-50i64..50).prop_map(|i| i.to_string()),
        prop::sample::select([&FLOATS[..], &["0", "7", "-3"]].concat()).prop_map(str::to_string),
    ]
}

fn expr() -> impl Strategy<Value = String> {
    let leaf = atom();
    leaf.prop_recursive(3, 24, 3, |inner| {
        prop_oneof![
            // Arithmetic and comparisons over anything (type errors included).
            (
                inner.clone(),
                prop::sample::select(vec![
                    "+", "-", "*", "/", "//", "%", "==", "!=", "<", "<=", ">", ">=", "and", "or"
                ]),
                inner.clone()
            )
                .prop_map(|(a, op, b)| format!("({a} {op} {b})")),
            (number(), prop::sample::select(vec![0i64, 1, 2, 3, -1, -2]))
                .prop_map(|(a, e)| format!("({a} ** {e})")),
            inner.clone().prop_map(|a| format!("(not {a})")),
            inner.clone().prop_map(|a| format!("(-{a})")),
            // Containers.
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| {
                if v.is_empty() {
                    "()".to_string()
                } else {
                    format!("({},)", v.join(", "))
                }
            }),
            prop::collection::vec(inner.clone(), 0..3).prop_map(|v| {
                let items: Vec<String> = v
                    .iter()
                    .enumerate()
                    .map(|(i, x)| format!("'k{i}': {x}"))
                    .collect();
                format!("{{{}}}", items.join(", "))
            }),
            prop::collection::vec(number(), 0..4)
                .prop_map(|v| format!("sorted([{}])", v.join(", "))),
            prop::collection::vec(number(), 0..4).prop_map(|v| format!("sum([{}])", v.join(", "))),
            prop::collection::vec(number(), 1..4).prop_map(|v| format!("max([{}])", v.join(", "))),
            inner.clone().prop_map(|a| format!("len([{a}, {a}])")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} in [{b}, 1])")),
            // Formatting.
            (
                number(),
                prop::sample::select(vec![
                    ".2", ".1", ".3", ".0f", ".2f", ">8", "<6", "^9", ",", ".3g", ".2e", "g", "e",
                    "+", "08.2f", ".1%",
                ])
            )
                .prop_map(|(a, spec)| format!("f'{{{a}:{spec}}}'")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("'%s|%r' % ({a}, {b})")),
            inner.clone().prop_map(|a| format!("'%s %s' % ({a},)")),
            number().prop_map(|a| format!("'%d' % {a}")),
            (inner.clone(), inner.clone())
                .prop_map(|(a, b)| format!("'{{}}/{{!r}}'.format({a}, {b})")),
            inner.clone().prop_map(|a| format!("str({a})")),
            inner.clone().prop_map(|a| format!("repr({a})")),
            inner.clone().prop_map(|a| format!("bool({a})")),
            prop::sample::select(vec![
                "'a b\\nc\\x1cd\\u2028e'",
                "'  x  '",
                "'A,b,,c'",
                "'one\\r\\ntwo'",
            ])
            .prop_flat_map(|s| prop::sample::select(vec![
                "upper()",
                "splitlines()",
                "split()",
                "split(',')",
                "strip()",
                "replace('b', 'BB')",
                "title()",
            ])
            .prop_map(move |m| format!("{s}.{m}"))),
        ]
    })
}

/// Runs each expression in CPython: its repr, or `!<ExceptionType>`, one line each.
fn cpython(python: &std::path::Path, exprs: &[String]) -> Vec<String> {
    let mut script = String::from(
        "import sys\nfor line in sys.stdin.read().split('\\0'):\n    if not line:\n        continue\n    try:\n        out = repr(eval(line))\n    except Exception as e:\n        out = '!' + type(e).__name__\n    print(out.encode('unicode_escape').decode('ascii'))\n",
    );
    script.push('\n');
    let mut child = std::process::Command::new(python)
        .args(["-c", &script])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().expect("stdin");
        stdin
            .write_all(exprs.join("\0").as_bytes())
            .expect("write expressions");
    }
    let out = child.wait_with_output().expect("python3 ends");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("ascii")
        .lines()
        .map(str::to_string)
        .collect()
}

/// The escaped form CPython's side prints (`unicode_escape` of the repr).
fn escaped(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || (0x7f..0x100).contains(&(c as u32)) => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if (c as u32) >= 0x100 && (c as u32) < 0x10000 => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) >= 0x10000 => out.push_str(&format!("\\U{:08x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// How many generated expressions the differential test runs.
const CASES: usize = 10_000;

#[tb_test_support::needs(python)]
#[test]
fn generated_expressions_agree_with_cpython() {
    let python = tb_test_support::need(tb_test_support::Need::Python);
    let mut runner = TestRunner::new_with_rng(
        Config::default(),
        TestRng::from_seed(RngAlgorithm::ChaCha, &[35; 32]),
    );
    let strategy = expr();
    let exprs: Vec<String> = (0..CASES)
        .map(|_| strategy.new_tree(&mut runner).expect("a case").current())
        .collect();
    let want = cpython(&python, &exprs);
    assert_eq!(want.len(), exprs.len());
    // All the expressions run in one body each, on the evaluator's thread.
    let mut differ = Vec::new();
    for (e, w) in exprs.iter().zip(&want) {
        let got = escaped(&tb_eval(e));
        if &got != w {
            differ.push(format!("{e}\n    tb:      {got}\n    CPython: {w}"));
        }
    }
    eprintln!(
        "{} generated expressions, {} agree with CPython",
        exprs.len(),
        exprs.len() - differ.len()
    );
    assert!(
        differ.is_empty(),
        "{} of {} differ:\n{}",
        differ.len(),
        exprs.len(),
        differ
            .iter()
            .take(40)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}
