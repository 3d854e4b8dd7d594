//! Errors of the dataset loader. Every variant names the file and, where there is one, the line.

use std::path::PathBuf;

/// `path:line` for messages (`path` alone when the line is unknown).
fn at(path: &std::path::Path, line: usize) -> String {
    if line == 0 {
        path.display().to_string()
    } else {
        format!("{}:{line}", path.display())
    }
}

/// Anything that can go wrong while loading a dataset.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// No `dataset/` directory (with `scenario/` and `test_case/`) at the given root.
    #[error("{}: not a ThinkingBox data root (expected {}/dataset/{{scenario,test_case}} or a dataset dir itself)", .path.display(), .path.display())]
    NotADataset {
        /// The path given.
        path: PathBuf,
    },
    /// A file could not be read.
    #[error("{}: cannot read", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// YAML that PyYAML's `safe_load` would reject (or that has no JSON form).
    #[error("{}: invalid YAML{}: {message}", at(.path, *.line), .context.as_deref().map(|c| format!(" in {c}")).unwrap_or_default())]
    Yaml {
        /// The file.
        path: PathBuf,
        /// 1-based line in the file.
        line: usize,
        /// Where in the file (e.g. "the docstring of test_x").
        context: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// A Python test file the tokenizer cannot read.
    #[error("{}: invalid Python: {message}", at(.path, *.line))]
    Python {
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// A test id that is not `file.py:function`.
    #[error("{}: invalid test id {id:?}: expected `file.py:function`", at(.path, *.line))]
    BadTestId {
        /// Where the id came from (test list, or `<argument>`).
        path: PathBuf,
        /// 1-based line in the test list (0 if not from a list).
        line: usize,
        /// The id.
        id: String,
    },
    /// The test-case file of an id was not found.
    #[error("{}: test-case file {file:?} not found (looked for {})", at(.path, *.line), .tried.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "))]
    TestFileNotFound {
        /// Where the id came from (test list, or `<argument>`).
        path: PathBuf,
        /// 1-based line in the test list (0 if not from a list).
        line: usize,
        /// The file name from the id.
        file: String,
        /// Every path tried, in order.
        tried: Vec<PathBuf>,
    },
    /// The test-case file has no test function of that name.
    #[error("{}: no test function {function:?} in {} (a test function is a module-level `def` whose first statement is a string starting with '!')", at(.path, *.line), .file.display())]
    UnknownTest {
        /// Where the id came from (test list, or the test file itself).
        path: PathBuf,
        /// 1-based line in the test list (0 if not from a list).
        line: usize,
        /// The test-case file searched.
        file: PathBuf,
        /// The function name.
        function: String,
    },
    /// A task names a scenario without `scenario/<name>.yaml`.
    #[error("{}: unknown scenario {name:?} (no {})", at(.path, *.line), .expected.display())]
    UnknownScenario {
        /// The test-case file.
        path: PathBuf,
        /// 1-based line of the test function.
        line: usize,
        /// The scenario name.
        name: String,
        /// The file that would define it.
        expected: PathBuf,
    },
    /// An agent config that does not exist.
    #[error("unknown agent {name:?} (no {})", .expected.display())]
    UnknownAgent {
        /// The agent name.
        name: String,
        /// The file that would define it.
        expected: PathBuf,
    },
    /// Well-formed YAML with the wrong shape or types.
    #[error("{}: {message}", at(.path, *.line))]
    Invalid {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 if unknown).
        line: usize,
        /// What is wrong, naming the field.
        message: String,
    },
}

impl DatasetError {
    /// The file the error is about.
    pub fn path(&self) -> Option<&std::path::Path> {
        match self {
            DatasetError::UnknownAgent { expected, .. } => Some(expected),
            DatasetError::NotADataset { path }
            | DatasetError::Io { path, .. }
            | DatasetError::Yaml { path, .. }
            | DatasetError::Python { path, .. }
            | DatasetError::BadTestId { path, .. }
            | DatasetError::TestFileNotFound { path, .. }
            | DatasetError::UnknownTest { path, .. }
            | DatasetError::UnknownScenario { path, .. }
            | DatasetError::Invalid { path, .. } => Some(path),
        }
    }

    /// The 1-based line the error is about (0 if none).
    pub fn line(&self) -> usize {
        match self {
            DatasetError::Yaml { line, .. }
            | DatasetError::Python { line, .. }
            | DatasetError::BadTestId { line, .. }
            | DatasetError::TestFileNotFound { line, .. }
            | DatasetError::UnknownTest { line, .. }
            | DatasetError::UnknownScenario { line, .. }
            | DatasetError::Invalid { line, .. } => *line,
            _ => 0,
        }
    }
}
