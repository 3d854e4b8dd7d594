//! Hostile test bodies: deep or self-referencing values, deeply nested source, slow loops and
//! values that grow without bound. Each is that test's system error naming the bound or the
//! budget, never an abort of the process.

use std::sync::Arc;
use std::time::Duration;

use tb_pyeval::{FixedJudge, Limits, PyEvalError, TestFile, TestOutcome};

/// A test file whose test function `test_it` runs `code` (4-space indented lines).
pub fn file_of(code: &str) -> String {
    let mut src = String::from("def test_it(x, judge):\n    \"\"\"!\n    query: q\n    \"\"\"\n");
    for line in code.lines() {
        src.push_str("    ");
        src.push_str(line);
        src.push('\n');
    }
    src
}

pub fn run_limited(code: &str, limits: &Limits) -> TestOutcome {
    let file = TestFile::parse("body.py", &file_of(code)).expect("parses");
    file.check().expect("supported");
    file.run_limited(
        "test_it",
        &Arc::new(serde_json::json!({})),
        &mut FixedJudge::new(true),
        limits,
    )
    .expect("runs")
}

pub fn run(code: &str) -> TestOutcome {
    run_limited(code, &Limits::default())
}

/// A system error whose message starts with `prefix` and holds `holds`.
#[track_caller]
fn system_error(o: &TestOutcome, prefix: &str, holds: &str) {
    assert!(
        !o.passed && o.system_error,
        "not a system error: {o:?} (wanted {prefix})"
    );
    assert!(
        o.message.starts_with(prefix) && o.message.contains(holds),
        "{:?} does not start with {prefix:?} and hold {holds:?}",
        o.message
    );
}

#[track_caller]
fn passes(o: &TestOutcome) {
    assert!(o.passed, "{o:?}");
}

#[test]
fn walks_over_deep_values_are_recursion_errors() {
    let deep = "a = []\nb = []\nfor i in range(100000):\n    a = [a]\n    b = [b]\n";
    for (what, code) in [
        ("==", format!("{deep}assert a == b\n")),
        ("<", format!("{deep}assert a < b\n")),
        ("sorted", format!("{deep}sorted([a, b])\n")),
        ("repr", format!("{deep}repr(a)\n")),
        ("str", format!("{deep}s = f'{{a}}'\n")),
        ("json", format!("import json\n{deep}json.dumps(a)\n")),
        (
            "tuple hash",
            "t = ()\nfor i in range(100000):\n    t = (t,)\ns = {t}\n".to_string(),
        ),
        (
            "dict ==",
            "a = {}\nb = {}\nfor i in range(100000):\n    a = {'k': a}\n    b = {'k': b}\nassert a == b\n"
                .to_string(),
        ),
        (
            "cycle ==",
            "a = []\na.append(a)\nb = []\nb.append(b)\nassert a == b\n".to_string(),
        ),
        (
            "tuple in list",
            "t = ()\nfor i in range(100000):\n    t = (t, 1)\nassert t in [t[0]]\n".to_string(),
        ),
    ] {
        let o = run(&code);
        system_error(&o, "RecursionError: maximum recursion depth exceeded", "");
        assert!(o.lineno.is_some_and(|l| l > 4), "{what}: {o:?}");
    }
    // As in CPython, the error can be caught, and the run goes on.
    passes(&run(&format!(
        "{deep}try:\n    repr(a)\n    assert False, 'no error'\nexcept RecursionError:\n    pass\n"
    )));
}

#[test]
fn deep_values_are_dropped_without_recursing() {
    for code in [
        "l = []\nfor i in range(200000):\n    l = [l]\n",
        "t = ()\nfor i in range(200000):\n    t = (t,)\n",
        "d = {}\nfor i in range(200000):\n    d = {'k': d}\n",
        "f = None\nfor i in range(100000):\n    f = lambda f=f: f\n",
        "def wrap(prev):\n    def g():\n        return prev\n    return g\n\ng = None\nfor i in range(100000):\n    g = wrap(g)\n",
    ] {
        passes(&run(code));
    }
}

#[test]
fn helper_recursion_follows_cpythons_limit() {
    let helper = "def depth(n):\n    if n == 0:\n        return 0\n    return depth(n - 1) + 1\n\n";
    let file = |n: u32| {
        format!(
            "{helper}def test_it(x, judge):\n    \"\"\"!\n    q\n    \"\"\"\n    assert depth({n}) == {n}\n"
        )
    };
    let go = |src: &str| {
        TestFile::parse("r.py", src)
            .unwrap()
            .run(
                "test_it",
                &serde_json::json!({}),
                &mut FixedJudge::new(true),
            )
            .unwrap()
    };
    // CPython 3.11 runs 990 nested calls under its limit of 1000 frames and stops near 998.
    passes(&go(&file(990)));
    let o = go(&file(1200));
    system_error(&o, "RecursionError: maximum recursion depth exceeded", "");
}

fn parse_error(src: &str) -> String {
    match TestFile::parse("deep.py", src) {
        Err(e @ PyEvalError::Syntax { .. }) => e.to_string(),
        Err(e) => panic!("not a syntax error: {e}"),
        Ok(_) => panic!("parsed"),
    }
}

#[test]
fn deeply_nested_source_is_a_syntax_error_before_parsing() {
    let parens = format!("x = {}1{}\n", "(".repeat(1000), ")".repeat(1000));
    assert_eq!(
        parse_error(&parens),
        "deep.py:1: Python syntax error: too many nested parentheses"
    );
    let mut ifs = String::new();
    for i in 0..5000 {
        ifs.push_str(&" ".repeat(i));
        ifs.push_str("if x:\n");
    }
    ifs.push_str(&" ".repeat(5000));
    ifs.push_str("pass\n");
    assert_eq!(
        parse_error(&ifs),
        "deep.py:101: Python syntax error: too many levels of indentation"
    );
    let mut tries = String::new();
    for i in 0..5000 {
        tries.push_str(&" ".repeat(i));
        tries.push_str("try:\n");
    }
    assert!(parse_error(&tries).contains("too many levels of indentation"));
    for src in [
        format!("x = {}1\n", "-".repeat(100_000)),
        format!("x = {}1\n", "not ".repeat(100_000)),
        format!("x = {}\n", vec!["1"; 100_000].join(" + ")),
        format!("x = a{}\n", ".b".repeat(100_000)),
        format!("x = a{}\n", "[0]".repeat(100_000)),
        format!("x = {}\n", vec!["2"; 100_000].join(" ** ")),
        format!("x = {}1\n", "lambda: ".repeat(100_000)),
    ] {
        let e = parse_error(&src);
        assert!(
            e.starts_with("deep.py:1: Python syntax error: expression nested too deeply"),
            "{e}"
        );
    }
    // What CPython compiles still parses and runs: 200 parentheses, 96 blocks, 900 operators.
    let ok = format!(
        "{}1{} + {}\n",
        "(".repeat(200),
        ")".repeat(200),
        vec!["1"; 900].join(" + ")
    );
    passes(&run(&format!("x = {ok}assert x == 901\n")));
    let mut nested = String::new();
    for i in 0..95 {
        nested.push_str(&" ".repeat(i));
        nested.push_str("if True:\n");
    }
    nested.push_str(&" ".repeat(95));
    nested.push_str("y = 1\n");
    passes(&run(&format!("{nested}assert y == 1\n")));
}

#[test]
fn a_slow_body_stops_at_its_time_budget() {
    let limits = Limits {
        time: Some(Duration::from_millis(200)),
        ..Limits::default()
    };
    for code in [
        "while True:\n    pass\n",
        "n = 0\nfor i in range(10000000):\n    for j in range(10000000):\n        n += 1\n",
        // No handler catches the budget.
        "try:\n    while True:\n        pass\nexcept Exception:\n    pass\nwhile True:\n    pass\n",
        "def spin():\n    while True:\n        pass\ntry:\n    spin()\nfinally:\n    while True:\n        pass\n",
        "s = [i for i in range(10000000) for j in range(10000000)]\n",
    ] {
        let o = run_limited(code, &limits);
        system_error(
            &o,
            "TimeoutError: the test body ran past its time budget of 0.200s",
            "",
        );
    }
}

#[test]
fn values_that_grow_stop_at_the_memory_budget() {
    let limits = Limits {
        memory: 16 << 20,
        ..Limits::default()
    };
    let budget = "MemoryError: the test body built more than 16 MiB of values (tb's memory budget for a test body)";
    for code in [
        "s = 'x'\nwhile True:\n    s = s + s\n",
        "s = 'x'\nwhile True:\n    s += s\n",
        "l = [1]\nwhile True:\n    l = l + l\n",
        "l = [1]\nwhile True:\n    l += l\n",
        "l = [1]\nwhile True:\n    l.extend(l)\n",
        "l = []\nwhile True:\n    l.append(1)\n",
        "t = (1,)\nwhile True:\n    t = t + t\n",
        "l = [[0] * 1000 for i in range(1000000)]\n",
        "l = [0 for i in range(10000) for j in range(10000)]\n",
        "s = ''.join(['x' * 1000] * 100000)\n",
        "s = 'a' * 10000\ns = s.replace('a', s)\n",
        "s = 'x' * 1000000\nwhile True:\n    s = s.replace('x', 'xx')\n",
        "l = ['x' * 10000] * 10000\nr = repr(l)\n",
        "import json\nl = ['x' * 10000] * 10000\nr = json.dumps(l)\n",
        "l = ['x' * 10000] * 10000\nr = f'{l}'\n",
        "while True:\n    print('x' * 10000)\n",
        "d = {}\ni = 0\nwhile True:\n    d[i] = i\n    i += 1\n",
        "s = set()\ni = 0\nwhile True:\n    s.add(i)\n    i += 1\n",
        "s = 'x' * 100000000\n",
        "l = list(range(100000000))\n",
        // No handler catches the budget.
        "try:\n    s = 'x'\n    while True:\n        s = s + s\nexcept Exception:\n    pass\nassert False, 'caught'\n",
    ] {
        let o = run_limited(code, &limits);
        system_error(&o, budget, "");
    }
    // Short of the budget, the same kinds of values are built.
    passes(&run_limited(
        "s = 'x'\nfor i in range(10):\n    s = s + s\nassert len(s) == 1024\nl = [0 for i in range(1000)]\nassert len(', '.join(str(i) for i in l)) > 0\n",
        &limits,
    ));
}
