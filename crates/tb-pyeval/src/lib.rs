//! Runs the Python test bodies of published ThinkingBox test files inside `tb`.
//!
//! The reference executes a test file with `exec` (every other test function blanked, so line
//! numbers hold), calls the test function as `fn(x=TestContext, judge=Judge)`, and reads the
//! outcome: an `AssertionError` is a failed test with its message, any other exception a
//! system error, and a returned value the reward. This crate does the same for the subset of
//! Python that test files use, parsed with the ruff parser and evaluated with Python's
//! semantics (int/float equality and hashing, dict insertion order, truthiness, `repr`,
//! f-strings with conversions, comprehension scopes, exceptions). A construct outside the
//! subset is reported by [`TestFile::check`] with its file and line before anything runs.
//!
//! Architecture Invariant: evaluation never panics and never recurses without bound on its
//! input. Source is parsed, checked and run on a thread with a large known stack
//! ([`budget::STACK_SIZE`]) after its nesting is bounded ([`budget::MAX_SOURCE_DEPTH`]);
//! calls past the recursion limit (CPython's 1000) and walks over values nested past
//! [`budget::MAX_VALUE_DEPTH`] are a `RecursionError`; nested values are dropped without
//! recursing. A run has a time and a memory budget ([`budget::Limits`]): past either it
//! stops with an exception no `except` catches, naming the budget (a system error).
//! Integers that leave 64 bits are an `OverflowError`.

pub mod budget;
mod builtins;
pub mod check;
mod host;
pub mod interp;
pub mod repr;
pub mod value;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use ruff_python_ast::{Expr, ModModule, Stmt};

pub use budget::Limits;
pub use check::Unsupported;
use interp::{Env, Flow, Interp};

/// The judge model as a test body sees it (`judge.text_yesno`, `judge.compare_yesno`,
/// `judge.no_repeat`). Errors become the reference's `JudgeException` (a system error).
pub trait Judge {
    fn text_yesno(&mut self, text: &str, question: &str) -> Result<bool, String>;
    fn compare_yesno(&mut self, first: &str, second: &str, question: &str) -> Result<bool, String>;
    fn yesno(&mut self, question: &str) -> Result<bool, String> {
        let _ = question;
        Err("this judge does not answer bare yes/no questions".into())
    }
    /// The question `no_repeat` asks `compare_yesno` for each direct response.
    fn repeat_question(&self) -> String {
        "Does the first text repeat the content of the second text?".into()
    }
}

/// A judge that answers every question the same way, as the recorded reference runs do with
/// their stubbed judge; it keeps every call.
#[derive(Debug, Default)]
pub struct FixedJudge {
    pub answer: bool,
    pub calls: Vec<Vec<String>>,
}

impl FixedJudge {
    pub fn new(answer: bool) -> Self {
        FixedJudge {
            answer,
            calls: Vec::new(),
        }
    }
}

impl Judge for FixedJudge {
    fn text_yesno(&mut self, text: &str, question: &str) -> Result<bool, String> {
        self.calls.push(vec![text.into(), question.into()]);
        Ok(self.answer)
    }
    fn compare_yesno(&mut self, first: &str, second: &str, question: &str) -> Result<bool, String> {
        self.calls
            .push(vec![first.into(), second.into(), question.into()]);
        Ok(self.answer)
    }
    fn yesno(&mut self, question: &str) -> Result<bool, String> {
        self.calls.push(vec![question.into()]);
        Ok(self.answer)
    }
}

/// Errors before a test runs: the file does not parse, or uses what the evaluator does not.
#[derive(Debug, thiserror::Error)]
pub enum PyEvalError {
    #[error("{file}:{line}: Python syntax error: {message}")]
    Syntax {
        file: PathBuf,
        line: u32,
        message: String,
    },
    #[error("{file}:{line}: not supported by tb's test-body evaluator: {construct}")]
    Unsupported {
        file: PathBuf,
        line: u32,
        construct: String,
    },
    #[error("{file}: no test function {name}")]
    NoSuchTest { file: PathBuf, name: String },
    #[error("{file}: the evaluator's thread failed (it could not start, or it panicked)")]
    NoThread { file: PathBuf },
}

/// Byte offsets to 1-based line numbers.
#[derive(Debug)]
pub struct LineIndex {
    starts: Vec<usize>,
    text: Arc<str>,
}

impl LineIndex {
    pub fn new(text: &str) -> Self {
        let mut starts = vec![0];
        for (i, b) in text.bytes().enumerate() {
            if b == b'\n' {
                starts.push(i + 1);
            }
        }
        LineIndex {
            starts,
            text: Arc::from(text),
        }
    }
    pub fn line(&self, offset: usize) -> u32 {
        let i = self.starts.partition_point(|&s| s <= offset);
        u32::try_from(i).unwrap_or(u32::MAX)
    }
    /// The text of a line (1-based), without its newline.
    pub fn line_text(&self, line: u32) -> Option<&str> {
        let i = usize::try_from(line).ok()?.checked_sub(1)?;
        let start = *self.starts.get(i)?;
        let end = self
            .starts
            .get(i + 1)
            .map_or(self.text.len(), |e| e.saturating_sub(1));
        self.text.get(start..end)
    }
    pub fn slice(&self, range: ruff_text_size::TextRange) -> String {
        self.text
            .get(range.start().to_usize()..range.end().to_usize())
            .unwrap_or_default()
            .to_string()
    }
}

/// The outcome of one test body, in the reference's `TestResult` terms.
#[derive(Clone, Debug, PartialEq)]
pub struct TestOutcome {
    pub passed: bool,
    pub system_error: bool,
    /// `""` on pass, else `"<ExceptionType>: <message>"` (just the type for an empty message).
    pub message: String,
    pub lineno: Option<u32>,
    pub line_content: Option<String>,
    pub reward: f64,
    /// What the test printed.
    pub prints: String,
}

/// A parsed test file.
pub struct TestFile {
    path: PathBuf,
    lines: LineIndex,
    body: Vec<Stmt>,
    /// Test functions (a first statement that is a `"""!` string), by name, with their index
    /// in `body`.
    tests: Vec<(String, usize)>,
    shared_defs: interp::SharedDefs,
}

impl std::fmt::Debug for TestFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TestFile")
            .field("path", &self.path)
            .field("tests", &self.tests)
            .finish_non_exhaustive()
    }
}

fn is_test_function(s: &Stmt) -> Option<String> {
    let Stmt::FunctionDef(f) = s else { return None };
    let Some(Stmt::Expr(first)) = f.body.first() else {
        return None;
    };
    let Expr::StringLiteral(lit) = &*first.value else {
        return None;
    };
    lit.value
        .to_str()
        .starts_with('!')
        .then(|| f.name.id.to_string())
}

/// Python's `json.loads` for the evaluator (serde_json keeps key order and float text).
pub(crate) fn parse_json(text: &str) -> Result<serde_json::Value, String> {
    serde_json::from_str(text).map_err(|e| e.to_string())
}

impl TestFile {
    /// Parses a test file's source. Syntax errors name the file and line.
    ///
    /// Nesting past CPython's limits (200 parentheses, 100 blocks) or past
    /// [`budget::MAX_SOURCE_DEPTH`] levels in one expression is a syntax error before the
    /// parser runs; the parser runs on a thread with a stack of [`budget::STACK_SIZE`].
    pub fn parse(path: impl Into<PathBuf>, source: &str) -> Result<TestFile, PyEvalError> {
        let path = path.into();
        if let Err((line, message)) = budget::check_source_nesting(source) {
            return Err(PyEvalError::Syntax {
                file: path,
                line,
                message,
            });
        }
        let on_thread = path.clone();
        budget::on_big_stack(move || TestFile::parse_here(on_thread, source))
            .unwrap_or(Err(PyEvalError::NoThread { file: path }))
    }

    fn parse_here(path: PathBuf, source: &str) -> Result<TestFile, PyEvalError> {
        let lines = LineIndex::new(source);
        let parsed = ruff_python_parser::parse_module(source).map_err(|e| PyEvalError::Syntax {
            file: path.clone(),
            line: lines.line(e.location.start().to_usize()),
            message: e.error.to_string(),
        })?;
        let module: ModModule = parsed.into_syntax();
        let mut body = module.body;
        let mut tests = Vec::new();
        let mut shared_defs = interp::SharedDefs::default();
        for (i, s) in body.iter_mut().enumerate() {
            if let Some(name) = is_test_function(s) {
                tests.push((name, i));
            }
            if let Stmt::FunctionDef(f) = s {
                shared_defs.add(f);
            }
        }
        Ok(TestFile {
            path,
            lines,
            body,
            tests,
            shared_defs,
        })
    }

    /// Reads and parses a test file.
    pub fn read(path: &Path) -> Result<TestFile, PyEvalError> {
        let source = std::fs::read_to_string(path).map_err(|e| PyEvalError::Syntax {
            file: path.to_path_buf(),
            line: 0,
            message: format!("cannot read the file: {e}"),
        })?;
        TestFile::parse(path, &source)
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The test functions, in file order.
    pub fn test_names(&self) -> impl Iterator<Item = &str> {
        self.tests.iter().map(|(n, _)| n.as_str())
    }

    /// Every construct outside the evaluator's subset, with its line. `Ok` when there is none.
    pub fn check(&self) -> Result<(), PyEvalError> {
        match self.unsupported().into_iter().next() {
            None => Ok(()),
            Some(u) => Err(PyEvalError::Unsupported {
                file: self.path.clone(),
                line: u.line,
                construct: u.construct,
            }),
        }
    }

    /// All unsupported constructs (for `tb validate`'s listing).
    pub fn unsupported(&self) -> Vec<Unsupported> {
        budget::on_big_stack(|| check::unsupported(&self.body, &self.lines)).unwrap_or_else(|| {
            vec![Unsupported {
                line: 0,
                construct: "cannot start the evaluator's thread".into(),
            }]
        })
    }

    /// Runs one test function on a context (the reference's JSON form of `TestContext`).
    /// Copies the context once; [`TestFile::run_shared`] reads it in place.
    pub fn run(
        &self,
        test: &str,
        ctx: &serde_json::Value,
        judge: &mut (dyn Judge + Send),
    ) -> Result<TestOutcome, PyEvalError> {
        self.run_shared(test, &Arc::new(ctx.clone()), judge)
    }

    /// [`TestFile::run`] on a shared context: the effects are read in place, each entry
    /// converted to a Python value only when the body reads it, so a body that reads two keys
    /// of a large state pays for two keys.
    pub fn run_shared(
        &self,
        test: &str,
        ctx: &Arc<serde_json::Value>,
        judge: &mut (dyn Judge + Send),
    ) -> Result<TestOutcome, PyEvalError> {
        self.run_limited(test, ctx, judge, &Limits::default())
    }

    /// [`TestFile::run_shared`] within `limits`, on a thread of its own with a stack of
    /// [`budget::STACK_SIZE`]. A budget that runs out is the test's system error
    /// (`MemoryError`, `TimeoutError` or `RecursionError`, naming the budget).
    pub fn run_limited(
        &self,
        test: &str,
        ctx: &Arc<serde_json::Value>,
        judge: &mut (dyn Judge + Send),
        limits: &Limits,
    ) -> Result<TestOutcome, PyEvalError> {
        budget::on_big_stack(|| {
            budget::install(limits);
            self.run_here(test, ctx, judge, limits)
        })
        .unwrap_or_else(|| {
            Err(PyEvalError::NoThread {
                file: self.path.clone(),
            })
        })
    }

    fn run_here(
        &self,
        test: &str,
        ctx: &Arc<serde_json::Value>,
        judge: &mut dyn Judge,
        limits: &Limits,
    ) -> Result<TestOutcome, PyEvalError> {
        let Some(&(_, index)) = self.tests.iter().find(|(n, _)| n == test) else {
            return Err(PyEvalError::NoSuchTest {
                file: self.path.clone(),
                name: test.to_string(),
            });
        };
        let mut interp = Interp::new(judge, &self.lines)
            .with_shared(&self.shared_defs)
            .with_limits(limits);
        let globals = Env::module();
        let x = host::context_value(ctx);
        let judge_v = host::judge_value();
        // The module as the reference execs it: every test function but this one blanked.
        let other_tests: Vec<usize> = self
            .tests
            .iter()
            .map(|(_, i)| *i)
            .filter(|i| *i != index)
            .collect();
        let mut result = Ok(());
        for (i, stmt) in self.body.iter().enumerate() {
            if other_tests.contains(&i) {
                continue;
            }
            if let Err(e) = interp.exec_block(std::slice::from_ref(stmt), &globals) {
                result = Err(e);
                break;
            }
        }
        let outcome = result.and_then(|()| {
            let f = interp.lookup(test, &globals)?;
            let v = interp.call(
                &f,
                Vec::new(),
                vec![("x".into(), x), ("judge".into(), judge_v)],
            )?;
            match interp.pending() {
                Some(flow) => Err(flow),
                None => Ok(v),
            }
        });
        let prints = std::mem::take(&mut interp.prints);
        Ok(match outcome {
            Ok(v) => TestOutcome {
                passed: true,
                system_error: false,
                message: String::new(),
                lineno: None,
                line_content: None,
                reward: match v {
                    value::Value::None => 1.0,
                    other => value::as_f64(&other).unwrap_or(1.0),
                },
                prints,
            },
            Err(Flow::Exc(e)) => TestOutcome {
                passed: false,
                system_error: e.kind != interp::ExcKind::AssertionError,
                message: e.display(),
                lineno: Some(e.line),
                line_content: self.lines.line_text(e.line).map(str::to_string),
                reward: 0.0,
                prints,
            },
            Err(Flow::Return(_) | Flow::Break | Flow::Continue) => TestOutcome {
                passed: false,
                system_error: true,
                message: "SyntaxError: 'return', 'break' or 'continue' outside a function or loop"
                    .into(),
                lineno: None,
                line_content: None,
                reward: 0.0,
                prints,
            },
        })
    }
}
