//! The OData `$filter` subset of the reference's zendesk `get_items`: a lexer and parser that
//! accept and reject exactly what the `odata-query` library (0.10, a SLY grammar) does, with its
//! error texts, and the reference's small evaluator with its quirks:
//!
//! - only `Compare` and `and`/`or` are evaluated; everything else (`not`, `in`, function calls,
//!   a bare literal or identifier) is true for every row;
//! - a compared identifier is the row's field (enums as their value; unknown names are `None`);
//!   literals become Python values, except that a Boolean literal stays its raw text
//!   (`'true'`), and every other literal or expression stays an AST node, which equals only an
//!   identical node and cannot be ordered;
//! - `<`/`>` between incompatible Python types raise `TypeError`, which the tool reports as a
//!   parse failure;
//! - the generic (retail) toolset tests comparator names that the library does not use for
//!   `ne`, `ge` and `le`, so there these three are true for every row.
//!
//! Tokens match case-insensitively, the first pattern in the library's order wins (not the
//! longest), and binary operators include their surrounding whitespace. Whitespace elsewhere
//! is a token that only the grammar's "bad whitespace" spots accept.

use serde_json::Value;
use std::cmp::Ordering;
use std::fmt;
use tb_python::str_repr;

/// A failed parse (or evaluation), displayed as the library's (or Python's) message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// No token pattern matches at this point (`Token(type='ERROR', ...)`).
    #[error("Failed to tokenize at: {0}")]
    Tokenize(String),
    /// The token (or end of input, `None`) at which the grammar fails.
    #[error("Failed to parse at: {0}")]
    Parse(String),
    /// A function-call check of the parser, or a Python exception during evaluation.
    #[error("{0}")]
    Other(String),
}

/// Python's `RecursionError` text: what the reference answers (wrapped in "Failed to parse
/// OData filter: ...") when its recursive evaluator or the AST's `==` nests too deep.
pub const RECURSION_ERROR: &str = "maximum recursion depth exceeded";

/// How deep the parsed tree may be (long `and`/`or` chains nest one level per clause). The reference's
/// LALR parser has no such limit, but its evaluator (and Python's `==` on AST nodes) recurse
/// and hit Python's recursion limit of 1000 frames; beyond this depth we answer with the same
/// `RecursionError` text at parse time. Every recursion over a tree (drop included) is bounded.
pub const MAX_DEPTH: usize = 1000;

/// How deep the parser itself may recurse (nested parentheses, `not`, `-`, calls, lambdas,
/// lists); beyond it, the same `RecursionError` text. Real filters nest a few levels; this
/// keeps the parse well inside a 2 MiB thread stack even in debug builds.
pub const MAX_NESTING: usize = 100;

/// Nested `and`/`or` levels the evaluator follows before failing as Python does (its limit of
/// 1000 frames, less the frames of the reference's tool call).
pub const MAX_EVAL_DEPTH: usize = 960;

/// Nested AST levels Python's dataclass `==` follows before its `RecursionError` (about three
/// interpreter frames per level).
pub const MAX_NODE_EQ_DEPTH: usize = 330;

mod eval;
mod lexer;
mod parser;
#[cfg(test)]
mod tests;

pub use eval::{Evaluator, PyVal};
pub use lexer::Lit;
pub use parser::{Cmp, Node, parse};

#[allow(clippy::wildcard_imports)]
use lexer::*;
