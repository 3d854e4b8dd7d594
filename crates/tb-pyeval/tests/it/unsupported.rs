use tb_pyeval::{PyEvalError, TestFile};

fn check(src: &str) -> String {
    match TestFile::parse("mine.py", src).and_then(|f| f.check()) {
        Ok(()) => "ok".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unsupported_constructs_name_file_and_line() {
    assert_eq!(
        check(
            "def test_a(x, judge):\n    \"\"\"!\n    query: hi\n    \"\"\"\n    with open('f') as f:\n        pass\n"
        ),
        "mine.py:5: not supported by tb's test-body evaluator: with statement"
    );
    assert_eq!(
        check("class A:\n    pass\n"),
        "mine.py:1: not supported by tb's test-body evaluator: class definition"
    );
    assert_eq!(
        check("import os\n"),
        "mine.py:1: not supported by tb's test-body evaluator: import of module os"
    );
    assert_eq!(
        check("def f(*args):\n    return 1\n"),
        "mine.py:1: not supported by tb's test-body evaluator: parameters other than name and name=default (*args, **kwargs, keyword-only, positional-only)"
    );
    assert_eq!(
        check("y = [(a := 1)]\n"),
        "mine.py:1: not supported by tb's test-body evaluator: assignment expression (:=)"
    );
    assert_eq!(check("x = 1\nassert x == 1, f'{x!r}'\n"), "ok");
}

#[test]
fn syntax_errors_name_file_and_line() {
    let err = TestFile::parse("bad.py", "x = 1\ndef (:\n").unwrap_err();
    assert!(matches!(err, PyEvalError::Syntax { line: 2, .. }), "{err}");
}
