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

// ------------------------------------------------------------------------------------------
// Tokens
// ------------------------------------------------------------------------------------------

/// A token kind, named as the library names them.
#[derive(Debug, Clone, PartialEq)]
enum Tk {
    Ident(String, Vec<String>),
    Lit(Lit),
    Op(Op),
    Ws(String),
    Punct(char),
}

/// Binary, unary and collection operator tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    UMinus,
    And,
    Or,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Any,
    All,
}

impl Op {
    fn type_name(self) -> &'static str {
        match self {
            Op::Add => "ADD",
            Op::Sub => "SUB",
            Op::Mul => "MUL",
            Op::Div => "DIV",
            Op::Mod => "MOD",
            Op::UMinus => "UMINUS",
            Op::And => "AND",
            Op::Or => "OR",
            Op::Not => "NOT",
            Op::Eq => "EQ",
            Op::Ne => "NE",
            Op::Lt => "LT",
            Op::Le => "LE",
            Op::Gt => "GT",
            Op::Ge => "GE",
            Op::In => "IN",
            Op::Any => "ANY",
            Op::All => "ALL",
        }
    }

    /// The AST class the token's value is.
    fn class(self) -> &'static str {
        match self {
            Op::Add => "Add",
            Op::Sub => "Sub",
            Op::Mul => "Mult",
            Op::Div => "Div",
            Op::Mod => "Mod",
            Op::UMinus => "USub",
            Op::And => "And",
            Op::Or => "Or",
            Op::Not => "Not",
            Op::Eq => "Eq",
            Op::Ne => "NotEq",
            Op::Lt => "Lt",
            Op::Le => "LtE",
            Op::Gt => "Gt",
            Op::Ge => "GtE",
            Op::In => "In",
            Op::Any => "Any",
            Op::All => "All",
        }
    }

    /// Binding power of binary operators (low to high, as the grammar's precedence table).
    fn binary_prec(self) -> Option<u8> {
        Some(match self {
            Op::Or => 1,
            Op::And => 2,
            Op::Eq | Op::Ne => 3,
            Op::Gt | Op::Ge | Op::Lt | Op::Le => 4,
            Op::Add | Op::Sub => 5,
            Op::Mul | Op::Div | Op::Mod => 6,
            Op::In => 8,
            _ => return None,
        })
    }
}

/// A literal, with the library's raw text.
#[derive(Debug, Clone, PartialEq)]
pub enum Lit {
    /// `null`.
    Null,
    /// An integer, e.g. `+5`.
    Integer(String),
    /// A decimal with fraction or exponent.
    Float(String),
    /// `true`/`false` in any case.
    Boolean(String),
    /// A single-quoted string, unescaped.
    String(String),
    /// `geography'...'`.
    Geography(String),
    /// A GUID.
    Guid(String),
    /// `YYYY-MM-DD`.
    Date(String),
    /// A time of day.
    Time(String),
    /// A date and time.
    DateTime(String),
    /// `duration'P...'` (upper-cased, unquoted).
    Duration(String),
}

impl Lit {
    fn token_type(&self) -> &'static str {
        match self {
            Lit::Null => "NULL",
            Lit::Integer(_) => "INTEGER",
            Lit::Float(_) => "DECIMAL",
            Lit::Boolean(_) => "BOOLEAN",
            Lit::String(_) => "STRING",
            Lit::Geography(_) => "GEOGRAPHY",
            Lit::Guid(_) => "GUID",
            Lit::Date(_) => "DATE",
            Lit::Time(_) => "TIME",
            Lit::DateTime(_) => "DATETIME",
            Lit::Duration(_) => "DURATION",
        }
    }

    fn class(&self) -> &'static str {
        match self {
            Lit::Null => "Null",
            Lit::Integer(_) => "Integer",
            Lit::Float(_) => "Float",
            Lit::Boolean(_) => "Boolean",
            Lit::String(_) => "String",
            Lit::Geography(_) => "Geography",
            Lit::Guid(_) => "GUID",
            Lit::Date(_) => "Date",
            Lit::Time(_) => "Time",
            Lit::DateTime(_) => "DateTime",
            Lit::Duration(_) => "Duration",
        }
    }

    fn repr(&self) -> String {
        match self {
            Lit::Null => "Null()".into(),
            Lit::Integer(v)
            | Lit::Float(v)
            | Lit::Boolean(v)
            | Lit::String(v)
            | Lit::Geography(v)
            | Lit::Guid(v)
            | Lit::Date(v)
            | Lit::Time(v)
            | Lit::DateTime(v)
            | Lit::Duration(v) => format!("{}(val={})", self.class(), str_repr(v)),
        }
    }
}

#[derive(Debug, Clone)]
struct Token {
    kind: Tk,
    /// Index in characters (Python string index).
    index: usize,
}

fn tuple_repr(items: &[String]) -> String {
    match items {
        [] => "()".into(),
        [one] => format!("({},)", str_repr(one)),
        many => format!(
            "({})",
            many.iter()
                .map(|s| str_repr(s))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

impl fmt::Display for Token {
    /// SLY's `Token.__repr__`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (ty, value) = match &self.kind {
            Tk::Ident(name, ns) => (
                "ODATA_IDENTIFIER".to_string(),
                format!(
                    "Identifier(name={}, namespace={})",
                    str_repr(name),
                    tuple_repr(ns)
                ),
            ),
            Tk::Lit(l) => (l.token_type().to_string(), l.repr()),
            Tk::Op(o) => (o.type_name().to_string(), format!("{}()", o.class())),
            Tk::Ws(s) => ("WS".to_string(), str_repr(s)),
            Tk::Punct(c) => (c.to_string(), str_repr(&c.to_string())),
        };
        write!(
            f,
            "Token(type={}, value={}, lineno=1, index={})",
            str_repr(&ty),
            value,
            self.index
        )
    }
}

// ------------------------------------------------------------------------------------------
// Lexer
// ------------------------------------------------------------------------------------------

fn is_ws(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Matches regex pieces on a char slice, case-insensitively for letters.
struct Scan<'a> {
    s: &'a [char],
}

impl Scan<'_> {
    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    /// A literal word, ASCII case-insensitive.
    fn word(&self, i: usize, w: &str) -> Option<usize> {
        let mut j = i;
        for wc in w.chars() {
            let c = self.at(j)?;
            if !c.eq_ignore_ascii_case(&wc) {
                return None;
            }
            j += 1;
        }
        Some(j)
    }

    fn digits(&self, i: usize) -> usize {
        let mut j = i;
        while self.at(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        j
    }

    /// `\d{n}`.
    fn ndigits(&self, i: usize, n: usize) -> Option<usize> {
        (i..i + n)
            .all(|j| self.at(j).is_some_and(|c| c.is_ascii_digit()))
            .then_some(i + n)
    }

    fn ch(&self, i: usize, f: impl Fn(char) -> bool) -> Option<usize> {
        self.at(i).filter(|c| f(*c)).map(|_| i + 1)
    }

    fn wsp(&self, i: usize) -> Option<usize> {
        let mut j = i;
        while self.at(j).is_some_and(is_ws) {
            j += 1;
        }
        (j > i).then_some(j)
    }

    /// `'(?:[^']|'')*'` from `i` (at the opening quote): the longest match.
    fn quoted(&self, i: usize) -> Option<usize> {
        if self.at(i) != Some('\'') {
            return None;
        }
        let mut j = i + 1;
        let mut candidate = None;
        loop {
            match self.at(j) {
                None => return candidate,
                Some('\'') => {
                    if self.at(j + 1) == Some('\'') {
                        candidate = Some(j + 1);
                        j += 2;
                    } else {
                        return Some(j + 1);
                    }
                }
                Some(_) => j += 1,
            }
        }
    }

    /// `[1-9]\d{3}-(?:0\d|1[0-2])-(?:[0-2]\d|3[01])`.
    fn date(&self, i: usize) -> Option<usize> {
        let j = self.ch(i, |c| ('1'..='9').contains(&c))?;
        let j = self.ndigits(j, 3)?;
        let j = self.ch(j, |c| c == '-')?;
        let j = match self.at(j)? {
            '0' => self.ndigits(j + 1, 1)?,
            '1' => self.ch(j + 1, |c| ('0'..='2').contains(&c))?,
            _ => return None,
        };
        let j = self.ch(j, |c| c == '-')?;
        match self.at(j)? {
            '0'..='2' => self.ndigits(j + 1, 1),
            '3' => self.ch(j + 1, |c| c == '0' || c == '1'),
            _ => None,
        }
    }

    /// `(?:[01]\d|2[0-3])`.
    fn hour(&self, i: usize) -> Option<usize> {
        match self.at(i)? {
            '0' | '1' => self.ndigits(i + 1, 1),
            '2' => self.ch(i + 1, |c| ('0'..='3').contains(&c)),
            _ => None,
        }
    }

    /// `[0-5]\d`.
    fn sixty(&self, i: usize) -> Option<usize> {
        let j = self.ch(i, |c| ('0'..='5').contains(&c))?;
        self.ndigits(j, 1)
    }

    /// `(?:[01]\d|2[0-3]):[0-5]\d(:?:[0-5]\d(?:\.\d{1,12})?)`: seconds are required.
    fn time(&self, i: usize) -> Option<usize> {
        let j = self.hour(i)?;
        let j = self.ch(j, |c| c == ':')?;
        let j = self.sixty(j)?;
        self.seconds(j)
    }

    /// `(:?:[0-5]\d(?:\.\d{1,12})?)`.
    fn seconds(&self, j: usize) -> Option<usize> {
        let j = if self.at(j) == Some(':') && self.at(j + 1) == Some(':') {
            j + 2
        } else {
            self.ch(j, |c| c == ':')?
        };
        let j = self.sixty(j)?;
        if self.at(j) == Some('.') && self.at(j + 1).is_some_and(|c| c.is_ascii_digit()) {
            let mut k = j + 1;
            while k < j + 13 && self.at(k).is_some_and(|c| c.is_ascii_digit()) {
                k += 1;
            }
            return Some(k);
        }
        Some(j)
    }

    /// `_DATE T _TIME? tz?`: the `?` binds to the seconds group of `_TIME`, so hours and
    /// minutes are required and seconds are optional.
    fn datetime(&self, i: usize) -> Option<usize> {
        let j = self.date(i)?;
        let j = self.ch(j, |c| c == 'T' || c == 't')?;
        let j = self.hour(j)?;
        let j = self.ch(j, |c| c == ':')?;
        let j = self.sixty(j)?;
        let j = self.seconds(j).unwrap_or(j);
        match self.at(j) {
            Some('Z' | 'z') => Some(j + 1),
            Some('+' | '-') => {
                let tz = self
                    .hour(j + 1)
                    .and_then(|k| self.ch(k, |c| c == ':'))
                    .and_then(|k| self.sixty(k));
                Some(tz.unwrap_or(j))
            }
            _ => Some(j),
        }
    }

    fn duration(&self, i: usize) -> Option<usize> {
        let mut j = self.word(i, "duration'")?;
        if matches!(self.at(j), Some('+' | '-')) {
            j += 1;
        }
        j = self.word(j, "P")?;
        let group = |j: usize, letter: &str| -> usize {
            let d = self.digits(j);
            if d > j {
                self.word(d, letter).unwrap_or(j)
            } else {
                j
            }
        };
        j = group(j, "Y");
        j = group(j, "M");
        j = group(j, "D");
        if let Some(t) = self.word(j, "T") {
            let mut k = group(t, "H");
            k = group(k, "M");
            let d = self.digits(k);
            if d > k {
                let mut e = d;
                if self.at(e) == Some('.') && self.digits(e + 1) > e + 1 {
                    e = self.digits(e + 1);
                }
                if let Some(s) = self.word(e, "S") {
                    k = s;
                } else if let Some(s) = self.word(d, "S") {
                    k = s;
                }
            }
            if self.at(k) == Some('\'') {
                return Some(k + 1);
            }
        }
        (self.at(j) == Some('\'')).then_some(j + 1)
    }

    fn guid(&self, i: usize) -> Option<usize> {
        let mut j = i;
        for (n, len) in [8, 4, 4, 4, 12].into_iter().enumerate() {
            if n > 0 {
                j = self.ch(j, |c| c == '-')?;
            }
            for _ in 0..len {
                j = self.ch(j, |c| c.is_ascii_hexdigit())?;
            }
        }
        Some(j)
    }

    fn integer(&self, i: usize) -> Option<usize> {
        let j = if matches!(self.at(i), Some('+' | '-')) {
            i + 1
        } else {
            i
        };
        let d = self.digits(j);
        (d > j).then_some(d)
    }

    /// `e[-+]?\d+`.
    fn exponent(&self, i: usize) -> Option<usize> {
        let j = self.ch(i, |c| c == 'e' || c == 'E')?;
        let j = if matches!(self.at(j), Some('+' | '-')) {
            j + 1
        } else {
            j
        };
        let d = self.digits(j);
        (d > j).then_some(d)
    }

    fn decimal(&self, i: usize) -> Option<usize> {
        let j = self.integer(i)?;
        if self.at(j) == Some('.') {
            let d = self.digits(j + 1);
            if d > j + 1 {
                return Some(self.exponent(d).unwrap_or(d));
            }
        }
        self.exponent(j)
    }

    /// `\s+word\s+`.
    fn spaced(&self, i: usize, w: &str) -> Option<usize> {
        let j = self.wsp(i)?;
        let j = self.word(j, w)?;
        self.wsp(j)
    }

    fn ident(&self, i: usize) -> Option<usize> {
        let mut j = self.ch(i, |c| c.is_ascii_alphabetic() || c == '_')?;
        for _ in 0..127 {
            if self.at(j) == Some('.') && self.at(j + 1).is_some_and(is_word) {
                j += 2;
            } else if self.at(j).is_some_and(is_word) {
                j += 1;
            } else {
                break;
            }
        }
        Some(j)
    }
}

/// Tokenizes `text`. Stops at the first character no pattern matches; that failure is the
/// last element and only surfaces if the parser gets that far.
fn tokenize(text: &str) -> (Vec<Token>, Option<FilterError>) {
    let chars: Vec<char> = text.chars().collect();
    let sc = Scan { s: &chars };
    let mut toks = Vec::new();
    let mut i = 0;
    let s = |a: usize, b: usize| chars[a..b].iter().collect::<String>();
    while i < chars.len() {
        let start = i;
        let op = |o: Op, end: Option<usize>| end.map(|e| (Tk::Op(o), e));
        let found: Option<(Tk, usize)> = sc
            .duration(i)
            .map(|e| {
                let v = s(i, e).to_uppercase();
                let inner: String = v
                    .chars()
                    .skip("DURATION'".len())
                    .take(v.chars().count().saturating_sub(10))
                    .collect();
                (Tk::Lit(Lit::Duration(inner)), e)
            })
            .or_else(|| {
                sc.quoted(i)
                    .map(|e| (Tk::Lit(Lit::String(s(i + 1, e - 1).replace("''", "'"))), e))
            })
            .or_else(|| {
                sc.word(i, "geography")
                    .and_then(|j| sc.quoted(j))
                    .map(|e| (Tk::Lit(Lit::Geography(s(i + 10, e - 1))), e))
            })
            .or_else(|| sc.guid(i).map(|e| (Tk::Lit(Lit::Guid(s(i, e))), e)))
            .or_else(|| sc.datetime(i).map(|e| (Tk::Lit(Lit::DateTime(s(i, e))), e)))
            .or_else(|| sc.date(i).map(|e| (Tk::Lit(Lit::Date(s(i, e))), e)))
            .or_else(|| sc.time(i).map(|e| (Tk::Lit(Lit::Time(s(i, e))), e)))
            .or_else(|| sc.decimal(i).map(|e| (Tk::Lit(Lit::Float(s(i, e))), e)))
            .or_else(|| sc.integer(i).map(|e| (Tk::Lit(Lit::Integer(s(i, e))), e)))
            .or_else(|| {
                sc.word(i, "true")
                    .or_else(|| sc.word(i, "false"))
                    .map(|e| (Tk::Lit(Lit::Boolean(s(i, e))), e))
            })
            .or_else(|| sc.word(i, "null").map(|e| (Tk::Lit(Lit::Null), e)))
            .or_else(|| op(Op::Add, sc.spaced(i, "add")))
            .or_else(|| op(Op::Sub, sc.spaced(i, "sub")))
            .or_else(|| op(Op::Mul, sc.spaced(i, "mul")))
            .or_else(|| op(Op::Div, sc.spaced(i, "div")))
            .or_else(|| op(Op::Mod, sc.spaced(i, "mod")))
            .or_else(|| op(Op::UMinus, sc.ch(i, |c| c == '-')))
            .or_else(|| op(Op::And, sc.spaced(i, "and")))
            .or_else(|| op(Op::Or, sc.spaced(i, "or")))
            .or_else(|| op(Op::Not, sc.word(i, "not").and_then(|j| sc.wsp(j))))
            .or_else(|| op(Op::Eq, sc.spaced(i, "eq")))
            .or_else(|| op(Op::Ne, sc.spaced(i, "ne")))
            .or_else(|| op(Op::Lt, sc.spaced(i, "lt")))
            .or_else(|| op(Op::Le, sc.spaced(i, "le")))
            .or_else(|| op(Op::Gt, sc.spaced(i, "gt")))
            .or_else(|| op(Op::Ge, sc.spaced(i, "ge")))
            .or_else(|| op(Op::In, sc.spaced(i, "in")))
            .or_else(|| op(Op::Any, sc.word(i, "any")))
            .or_else(|| op(Op::All, sc.word(i, "all")))
            .or_else(|| {
                sc.ident(i).map(|e| {
                    let full = s(i, e);
                    let mut parts: Vec<String> = full.split('.').map(str::to_string).collect();
                    let name = parts.pop().unwrap_or_default();
                    (Tk::Ident(name, parts), e)
                })
            })
            .or_else(|| sc.wsp(i).map(|e| (Tk::Ws(s(i, e)), e)))
            .or_else(|| {
                let c = chars[i];
                "(),/:=".contains(c).then_some((Tk::Punct(c), i + 1))
            });
        if let Some((kind, end)) = found {
            toks.push(Token { kind, index: start });
            i = end;
        } else {
            let rest: String = chars[i..].iter().collect();
            let err = format!(
                "Token(type='ERROR', value={}, lineno=1, index={})",
                str_repr(&rest),
                i
            );
            return (toks, Some(FilterError::Tokenize(err)));
        }
    }
    (toks, None)
}

// ------------------------------------------------------------------------------------------
// AST and parser
// ------------------------------------------------------------------------------------------

/// Comparison operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `lt`.
    Lt,
    /// `le`.
    Le,
    /// `gt`.
    Gt,
    /// `ge`.
    Ge,
    /// `in`.
    In,
}

/// The parsed filter (the library's AST, as far as the evaluator tells nodes apart).
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A field name (the namespace part is ignored by the evaluator).
    Ident(String, Vec<String>),
    /// `a/b`.
    Attribute(Box<Node>, String),
    /// A literal.
    Lit(Lit),
    /// `(a, b)`.
    List(Vec<Node>),
    /// Arithmetic.
    BinOp(&'static str, Box<Node>, Box<Node>),
    /// `not x` (true) or `-x` (false).
    Unary(bool, Box<Node>),
    /// A comparison.
    Compare(Cmp, Box<Node>, Box<Node>),
    /// `and` (true) / `or` (false).
    BoolOp(bool, Box<Node>, Box<Node>),
    /// A function call: name, namespace, arguments.
    Call(String, Vec<String>, Vec<Node>),
    /// `name=value` inside a call: name, namespace, value.
    NamedParam(String, Vec<String>, Box<Node>),
    /// `x/any(v: ...)` (true) or `x/all(v: ...)`: owner, any, variable and body.
    Lambda(Box<Node>, bool, Option<(String, Vec<String>, Box<Node>)>),
}

impl Node {
    /// The AST class name (what Python prints in a `TypeError`).
    fn class(&self) -> &'static str {
        match self {
            Node::Ident(..) => "Identifier",
            Node::Attribute(..) => "Attribute",
            Node::Lit(l) => l.class(),
            Node::List(_) => "List",
            Node::BinOp(..) => "BinOp",
            Node::Unary(..) => "UnaryOp",
            Node::Compare(..) => "Compare",
            Node::BoolOp(..) => "BoolOp",
            Node::Call(..) => "Call",
            Node::NamedParam(..) => "NamedParam",
            Node::Lambda(..) => "CollectionLambda",
        }
    }
}

impl Node {
    fn is_leaf(&self) -> bool {
        matches!(self, Node::Ident(..) | Node::Lit(_))
    }

    /// Moves this node's non-leaf children into `out` (leaving leaves behind).
    fn take_children(&mut self, out: &mut Vec<Node>) {
        let mut take = |b: &mut Node| {
            if !b.is_leaf() {
                out.push(std::mem::replace(b, Node::Lit(Lit::Null)));
            }
        };
        match self {
            Node::Ident(..) | Node::Lit(_) => {}
            Node::Attribute(o, _) | Node::Unary(_, o) | Node::NamedParam(_, _, o) => take(o),
            Node::BinOp(_, l, r) | Node::Compare(_, l, r) | Node::BoolOp(_, l, r) => {
                take(l);
                take(r);
            }
            Node::List(items) | Node::Call(_, _, items) => items.iter_mut().for_each(take),
            Node::Lambda(o, _, l) => {
                take(o);
                if let Some((_, _, body)) = l {
                    take(body);
                }
            }
        }
    }

    /// The tree's depth, counted without recursion.
    fn depth<'a>(&'a self) -> usize {
        let mut max = 0;
        let mut stack: Vec<(&'a Node, usize)> = vec![(self, 1usize)];
        while let Some((n, d)) = stack.pop() {
            max = max.max(d);
            let mut push = |c: &'a Node| stack.push((c, d + 1));
            match n {
                Node::Ident(..) | Node::Lit(_) => {}
                Node::Attribute(o, _) | Node::Unary(_, o) | Node::NamedParam(_, _, o) => push(o),
                Node::BinOp(_, l, r) | Node::Compare(_, l, r) | Node::BoolOp(_, l, r) => {
                    push(l);
                    push(r);
                }
                Node::List(items) | Node::Call(_, _, items) => items.iter().for_each(push),
                Node::Lambda(o, _, l) => {
                    push(o);
                    if let Some((_, _, body)) = l {
                        push(body);
                    }
                }
            }
        }
        max
    }
}

impl Drop for Node {
    /// Dismantles the tree with a heap stack: a deep tree never recurses on drop.
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.take_children(&mut stack);
        while let Some(mut n) = stack.pop() {
            n.take_children(&mut stack);
        }
    }
}

impl fmt::Display for Node {
    /// The library's dataclass `repr()` of the AST.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ident = |n: &str, ns: &[String]| {
            format!(
                "Identifier(name={}, namespace={})",
                str_repr(n),
                tuple_repr(ns)
            )
        };
        let list = |items: &[Node]| {
            items
                .iter()
                .map(Node::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Node::Ident(n, ns) => f.write_str(&ident(n, ns)),
            Node::Attribute(o, a) => write!(f, "Attribute(owner={o}, attr={})", str_repr(a)),
            Node::Lit(l) => f.write_str(&l.repr()),
            Node::List(items) => write!(f, "List(val=[{}])", list(items)),
            Node::BinOp(op, l, r) => write!(f, "BinOp(op={op}(), left={l}, right={r})"),
            Node::Unary(not, x) => write!(
                f,
                "UnaryOp(op={}(), operand={x})",
                if *not { "Not" } else { "USub" }
            ),
            Node::Compare(c, l, r) => {
                let name = match c {
                    Cmp::Eq => "Eq",
                    Cmp::Ne => "NotEq",
                    Cmp::Lt => "Lt",
                    Cmp::Le => "LtE",
                    Cmp::Gt => "Gt",
                    Cmp::Ge => "GtE",
                    Cmp::In => "In",
                };
                write!(f, "Compare(comparator={name}(), left={l}, right={r})")
            }
            Node::BoolOp(and, l, r) => write!(
                f,
                "BoolOp(op={}(), left={l}, right={r})",
                if *and { "And" } else { "Or" }
            ),
            Node::Call(n, ns, args) => {
                write!(f, "Call(func={}, args=[{}])", ident(n, ns), list(args))
            }
            Node::NamedParam(n, ns, p) => write!(f, "NamedParam(name={}, param={p})", ident(n, ns)),
            Node::Lambda(o, any, l) => {
                let op = if *any { "Any" } else { "All" };
                match l {
                    Some((v, ns, body)) => write!(
                        f,
                        "CollectionLambda(owner={o}, operator={op}(), lambda_=Lambda(identifier={}, expression={body}))",
                        ident(v, ns)
                    ),
                    None => write!(
                        f,
                        "CollectionLambda(owner={o}, operator={op}(), lambda_=None)"
                    ),
                }
            }
        }
    }
}

/// Known function names and their argument counts (min, max).
fn function_arity(name: &str) -> Option<(usize, usize)> {
    Some(match name {
        "concat" | "contains" | "endswith" | "indexof" | "startswith" | "matchesPattern" => (2, 2),
        "length" | "tolower" | "toupper" | "trim" => (1, 1),
        "substring" => (2, 3),
        "year" | "month" | "day" | "hour" | "minute" | "second" | "fractionalseconds"
        | "totalseconds" | "date" | "time" | "totaloffsetminutes" => (1, 1),
        "mindatetime" | "maxdatetime" | "now" => (0, 0),
        "round" | "floor" | "ceiling" => (1, 1),
        "geo.distance" | "geo.intersects" => (2, 2),
        "geo.length" => (1, 1),
        "hassubset" | "hassubsequence" => (2, 2),
        _ => return None,
    })
}

struct Parser {
    toks: Vec<Token>,
    lex_error: Option<FilterError>,
    pos: usize,
    /// Current nesting of `expr` calls (every recursive path goes through `expr`).
    depth: usize,
}

type PResult<T> = Result<T, FilterError>;

impl Parser {
    /// The lookahead (None at the end); reaching an untokenizable spot fails there.
    fn peek(&self) -> PResult<Option<&Token>> {
        match self.toks.get(self.pos) {
            Some(t) => Ok(Some(t)),
            None => match &self.lex_error {
                Some(e) => Err(e.clone()),
                None => Ok(None),
            },
        }
    }

    fn peek_kind(&self) -> PResult<Option<&Tk>> {
        Ok(self.peek()?.map(|t| &t.kind))
    }

    fn fail<T>(&self) -> PResult<T> {
        let t = self.peek()?;
        Err(FilterError::Parse(t.map_or_else(
            || "None".to_string(),
            std::string::ToString::to_string,
        )))
    }

    fn is_punct(&self, c: char) -> PResult<bool> {
        Ok(matches!(self.peek_kind()?, Some(Tk::Punct(p)) if *p == c))
    }

    fn expect(&mut self, c: char) -> PResult<()> {
        if self.is_punct(c)? {
            self.pos += 1;
            Ok(())
        } else {
            self.fail()
        }
    }

    /// Optional whitespace where the grammar allows it.
    fn bws(&mut self) -> PResult<()> {
        if matches!(self.peek_kind()?, Some(Tk::Ws(_))) {
            self.pos += 1;
        }
        Ok(())
    }

    fn filter(&mut self) -> PResult<Node> {
        let e = self.expr(0)?;
        if self.peek()?.is_some() {
            return self.fail();
        }
        Ok(e)
    }

    fn expr(&mut self, min_prec: u8) -> PResult<Node> {
        if self.depth >= MAX_NESTING {
            return Err(FilterError::Other(RECURSION_ERROR.into()));
        }
        self.depth += 1;
        let e = self.expr_inner(min_prec);
        self.depth -= 1;
        e
    }

    fn expr_inner(&mut self, min_prec: u8) -> PResult<Node> {
        let mut left = self.unary()?;
        while let Some(Tk::Op(op)) = self.peek_kind()?.cloned() {
            let Some(prec) = op.binary_prec() else { break };
            if prec < min_prec {
                break;
            }
            self.pos += 1;
            left = if op == Op::In {
                let list = self.list_expr()?;
                Node::Compare(Cmp::In, Box::new(left), Box::new(list))
            } else {
                let right = self.expr(prec + 1)?;
                let (l, r) = (Box::new(left), Box::new(right));
                match op {
                    Op::Or => Node::BoolOp(false, l, r),
                    Op::And => Node::BoolOp(true, l, r),
                    Op::Eq => Node::Compare(Cmp::Eq, l, r),
                    Op::Ne => Node::Compare(Cmp::Ne, l, r),
                    Op::Lt => Node::Compare(Cmp::Lt, l, r),
                    Op::Le => Node::Compare(Cmp::Le, l, r),
                    Op::Gt => Node::Compare(Cmp::Gt, l, r),
                    Op::Ge => Node::Compare(Cmp::Ge, l, r),
                    other => Node::BinOp(other.class(), l, r),
                }
            };
        }
        Ok(left)
    }

    fn unary(&mut self) -> PResult<Node> {
        match self.peek_kind()? {
            Some(Tk::Op(Op::Not)) => {
                self.pos += 1;
                Ok(Node::Unary(true, Box::new(self.expr(8)?)))
            }
            Some(Tk::Op(Op::UMinus)) => {
                self.pos += 1;
                self.bws()?;
                Ok(Node::Unary(false, Box::new(self.expr(8)?)))
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> PResult<Node> {
        let Some(tok) = self.peek()?.cloned() else {
            return self.fail();
        };
        match tok.kind {
            Tk::Punct('(') => {
                self.pos += 1;
                self.bws()?;
                let first = self.expr(0)?;
                self.bws()?;
                if self.is_punct(')')? {
                    self.pos += 1;
                    return Ok(first);
                }
                self.list_rest(first).map(Node::List)
            }
            Tk::Lit(l) => {
                self.pos += 1;
                Ok(Node::Lit(l))
            }
            Tk::Ident(name, ns) => {
                self.pos += 1;
                self.ident_tail(name, ns)
            }
            _ => self.fail(),
        }
    }

    /// After `( first BWS`: `, BWS )` or `, BWS e (BWS , BWS e)* BWS )`.
    fn list_rest(&mut self, first: Node) -> PResult<Vec<Node>> {
        self.expect(',')?;
        self.bws()?;
        if self.is_punct(')')? {
            self.pos += 1;
            return Ok(vec![first]);
        }
        let mut items = vec![first, self.expr(0)?];
        loop {
            self.bws()?;
            if self.is_punct(')')? {
                self.pos += 1;
                return Ok(items);
            }
            self.expect(',')?;
            self.bws()?;
            items.push(self.expr(0)?);
        }
    }

    /// The right side of `in`: a parenthesised list with at least one comma.
    fn list_expr(&mut self) -> PResult<Node> {
        self.expect('(')?;
        self.bws()?;
        let first = self.expr(0)?;
        self.bws()?;
        self.list_rest(first).map(Node::List)
    }

    fn ident_tail(&mut self, name: String, ns: Vec<String>) -> PResult<Node> {
        if self.is_punct('(')? {
            self.pos += 1;
            return self.call(name, ns);
        }
        let mut node = Node::Ident(name, ns);
        while self.is_punct('/')? {
            self.pos += 1;
            match self.peek_kind()?.cloned() {
                Some(Tk::Ident(n, _)) => {
                    self.pos += 1;
                    node = Node::Attribute(Box::new(node), n);
                }
                Some(Tk::Op(op @ (Op::Any | Op::All))) => {
                    self.pos += 1;
                    self.expect('(')?;
                    self.bws()?;
                    let lambda = if op == Op::Any && self.is_punct(')')? {
                        None
                    } else {
                        let Some(Tk::Ident(var, var_ns)) = self.peek_kind()?.cloned() else {
                            return self.fail();
                        };
                        self.pos += 1;
                        self.bws()?;
                        self.expect(':')?;
                        self.bws()?;
                        let body = self.expr(0)?;
                        self.bws()?;
                        Some((var, var_ns, Box::new(body)))
                    };
                    self.expect(')')?;
                    return Ok(Node::Lambda(Box::new(node), op == Op::Any, lambda));
                }
                _ => return self.fail(),
            }
        }
        Ok(node)
    }

    fn named_param(&mut self) -> PResult<Node> {
        let Some(Tk::Ident(n, ns)) = self.peek_kind()?.cloned() else {
            return self.fail();
        };
        self.pos += 1;
        self.expect('=')?;
        Ok(Node::NamedParam(n, ns, Box::new(self.expr(0)?)))
    }

    /// After `name (`.
    fn call(&mut self, name: String, ns: Vec<String>) -> PResult<Node> {
        let mut args = Vec::new();
        if self.is_punct(')')? {
            self.pos += 1;
        } else {
            self.bws()?;
            let named = matches!(self.peek_kind()?, Some(Tk::Ident(..)))
                && matches!(
                    self.toks.get(self.pos + 1).map(|t| &t.kind),
                    Some(Tk::Punct('='))
                );
            if named {
                args.push(self.named_param()?);
                self.bws()?;
                let mut count = 1;
                while self.is_punct(',')? {
                    self.pos += 1;
                    self.bws()?;
                    args.push(self.named_param()?);
                    self.bws()?;
                    count += 1;
                    if count > 2 {
                        // The library's rule for three or more reads a symbol that does not exist.
                        return Err(FilterError::Other(
                            "No symbol list_items. Must be one of {list_named_param, BWS0, ,, BWS1, named_param}.".into(),
                        ));
                    }
                }
                self.expect(')')?;
            } else {
                let first = self.expr(0)?;
                self.bws()?;
                if self.is_punct(')')? {
                    self.pos += 1;
                    args.push(first);
                } else {
                    args = self.list_rest(first)?;
                }
            }
        }
        // The parser checks the call when it reduces it, which needs a lookahead that can
        // follow an expression; any other token fails first.
        match self.peek_kind()? {
            None | Some(Tk::Ws(_) | Tk::Punct(')' | ',')) => {}
            Some(Tk::Op(op)) if op.binary_prec().is_some() => {}
            Some(_) => return self.fail(),
        }
        let full = if ns.is_empty() {
            name.clone()
        } else {
            format!("{}.{name}", ns.join("."))
        };
        if ns.is_empty() || ns == ["geo"] {
            let Some((lo, hi)) = function_arity(&full) else {
                return Err(FilterError::Other(format!("Unknown function: '{full}'")));
            };
            let n = args.len();
            if n < lo || n > hi {
                return Err(FilterError::Other(if lo == hi {
                    format!("Function '{full}' takes {lo} arguments. {n} given.")
                } else {
                    format!("Function '{full}' takes between {lo} and {hi} arguments. {n} given.")
                }));
            }
        }
        Ok(Node::Call(name, ns, args))
    }
}

/// Parses a `$filter` text as `odata-query` does.
pub fn parse(text: &str) -> Result<Node, FilterError> {
    let (toks, lex_error) = tokenize(text);
    let ast = Parser {
        toks,
        lex_error,
        pos: 0,
        depth: 0,
    }
    .filter()?;
    if ast.depth() > MAX_DEPTH {
        return Err(FilterError::Other(RECURSION_ERROR.into()));
    }
    Ok(ast)
}

// ------------------------------------------------------------------------------------------
// Evaluation
// ------------------------------------------------------------------------------------------

/// A Python value an operand evaluates to.
#[derive(Debug, Clone, PartialEq)]
pub enum PyVal<'a> {
    /// A row value (JSON-loaded Python object) or a converted literal.
    Val(Value),
    /// An AST node kept as is.
    Node(&'a Node),
}

impl PyVal<'_> {
    fn type_name(&self) -> &'static str {
        match self {
            PyVal::Val(v) => tb_python::type_name(v),
            PyVal::Node(n) => n.class(),
        }
    }
}

/// Python `==`; a comparison of AST nodes nested deeper than Python follows fails with its
/// `RecursionError`.
fn py_eq(a: &PyVal, b: &PyVal) -> Result<bool, String> {
    match (a, b) {
        (PyVal::Val(x), PyVal::Val(y)) => Ok(tb_python::py_eq(x, y)),
        (PyVal::Node(x), PyVal::Node(y)) => node_eq(x, y, 0),
        _ => Ok(false),
    }
}

/// The dataclass `==` of two AST nodes: fields in order, stopping at the first difference.
fn node_eq(a: &Node, b: &Node, depth: usize) -> Result<bool, String> {
    if depth >= MAX_NODE_EQ_DEPTH {
        return Err(RECURSION_ERROR.into());
    }
    let d = depth + 1;
    let all = |x: &[Node], y: &[Node]| -> Result<bool, String> {
        for (p, q) in x.iter().zip(y) {
            if !node_eq(p, q, d)? {
                return Ok(false);
            }
        }
        Ok(x.len() == y.len())
    };
    Ok(match (a, b) {
        (Node::Ident(..), Node::Ident(..)) | (Node::Lit(_), Node::Lit(_)) => a == b,
        (Node::Attribute(o, x), Node::Attribute(p, y)) => node_eq(o, p, d)? && x == y,
        (Node::List(x), Node::List(y)) => all(x, y)?,
        (Node::BinOp(o, l, r), Node::BinOp(p, m, s)) => {
            o == p && node_eq(l, m, d)? && node_eq(r, s, d)?
        }
        (Node::Unary(o, x), Node::Unary(p, y)) => o == p && node_eq(x, y, d)?,
        (Node::Compare(o, l, r), Node::Compare(p, m, s)) => {
            o == p && node_eq(l, m, d)? && node_eq(r, s, d)?
        }
        (Node::BoolOp(o, l, r), Node::BoolOp(p, m, s)) => {
            o == p && node_eq(l, m, d)? && node_eq(r, s, d)?
        }
        (Node::Call(n, ns, x), Node::Call(m, ms, y)) => n == m && ns == ms && all(x, y)?,
        (Node::NamedParam(n, ns, x), Node::NamedParam(m, ms, y)) => {
            n == m && ns == ms && node_eq(x, y, d)?
        }
        (Node::Lambda(o, x, l), Node::Lambda(p, y, m)) => {
            node_eq(o, p, d)?
                && x == y
                && match (l, m) {
                    (None, None) => true,
                    (Some((v, vs, e)), Some((w, ws, f))) => v == w && vs == ws && node_eq(e, f, d)?,
                    _ => false,
                }
        }
        _ => false,
    })
}

fn compare(a: &PyVal, b: &PyVal, op: &str) -> Result<bool, String> {
    let (PyVal::Val(x), PyVal::Val(y)) = (a, b) else {
        return Err(format!(
            "'{op}' not supported between instances of '{}' and '{}'",
            a.type_name(),
            b.type_name()
        ));
    };
    let o = tb_python::cmp::py_order_op(op, x, y)?;
    Ok(match op {
        "<" => o == Ordering::Less,
        ">" => o == Ordering::Greater,
        "<=" => o != Ordering::Greater,
        _ => o != Ordering::Less,
    })
}

/// How the evaluator reads a row and which comparator names it knows.
pub struct Evaluator<'a> {
    /// `getattr(row, name, None)`: the row's field, or a class attribute, else None.
    pub lookup: &'a dyn Fn(&str) -> Value,
    /// The generic toolset's quirk: `ne`, `ge` and `le` are true for every row.
    pub ne_ge_le_always_true: bool,
}

impl Evaluator<'_> {
    fn operand<'n>(&self, n: &'n Node) -> PyVal<'n> {
        match n {
            Node::Ident(name, _) => PyVal::Val((self.lookup)(name)),
            Node::Lit(Lit::String(s)) => PyVal::Val(Value::String(s.clone())),
            Node::Lit(Lit::Boolean(s)) => PyVal::Val(Value::String(s.clone())),
            Node::Lit(Lit::Integer(s)) => PyVal::Val(parse_int(s)),
            Node::Lit(Lit::Float(s)) => PyVal::Val(
                s.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or(Value::Null, Value::Number),
            ),
            other => PyVal::Node(other),
        }
    }

    /// Whether the row passes; a Python exception's text on failure.
    pub fn eval(&self, n: &Node) -> Result<bool, FilterError> {
        self.eval_at(n, 0)
    }

    fn eval_at(&self, n: &Node, depth: usize) -> Result<bool, FilterError> {
        if depth >= MAX_EVAL_DEPTH {
            return Err(FilterError::Other(RECURSION_ERROR.into()));
        }
        match n {
            Node::Compare(op, l, r) => {
                let (a, b) = (self.operand(l), self.operand(r));
                let quirk = self.ne_ge_le_always_true;
                let res = match op {
                    Cmp::Eq => py_eq(&a, &b),
                    Cmp::Ne if quirk => Ok(true),
                    Cmp::Ne => py_eq(&a, &b).map(|e| !e),
                    Cmp::Gt => compare(&a, &b, ">"),
                    Cmp::Ge if quirk => Ok(true),
                    Cmp::Ge => compare(&a, &b, ">="),
                    Cmp::Lt => compare(&a, &b, "<"),
                    Cmp::Le if quirk => Ok(true),
                    Cmp::Le => compare(&a, &b, "<="),
                    Cmp::In => Ok(true),
                };
                res.map_err(FilterError::Other)
            }
            Node::BoolOp(true, l, r) => {
                Ok(self.eval_at(l, depth + 1)? && self.eval_at(r, depth + 1)?)
            }
            Node::BoolOp(false, l, r) => {
                Ok(self.eval_at(l, depth + 1)? || self.eval_at(r, depth + 1)?)
            }
            _ => Ok(true),
        }
    }
}

/// Python `int(text)` for an INTEGER token (sign, leading zeros); huge values as floats.
fn parse_int(s: &str) -> Value {
    let t = s.strip_prefix('+').unwrap_or(s);
    match t.parse::<i64>() {
        Ok(i) => Value::from(i),
        Err(_) => t
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Null, Value::Number),
    }
}

#[cfg(test)]
mod tests {
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
        assert_eq!(
            run("priority gt 'a'", false),
            Err("'>' not supported between instances of 'NoneType' and 'str'".into())
        );
        assert_eq!(
            run("status lt 3", false),
            Err("'<' not supported between instances of 'str' and 'int'".into())
        );
        assert_eq!(
            run("n gt null", false),
            Err("'>' not supported between instances of 'int' and 'Null'".into())
        );
        assert_eq!(
            run("verified gt true", false),
            Err("'>' not supported between instances of 'bool' and 'str'".into())
        );
        assert_eq!(
            run("due_at gt 2025-01-01", false),
            Err("'>' not supported between instances of 'NoneType' and 'Date'".into())
        );
    }

    #[test]
    fn parse_errors_match_the_library() {
        let e = |s: &str| parse(s).unwrap_err().to_string();
        assert_eq!(
            e("email eq \"x@y.com\""),
            "Failed to tokenize at: Token(type='ERROR', value='\"x@y.com\"', lineno=1, index=9)"
        );
        assert_eq!(
            e("status eq"),
            "Failed to parse at: Token(type='WS', value=' ', lineno=1, index=6)"
        );
        assert_eq!(
            e("status eq 'open' "),
            "Failed to parse at: Token(type='WS', value=' ', lineno=1, index=16)"
        );
        assert_eq!(e("(a eq 1"), "Failed to parse at: None");
        assert_eq!(e("foo(a)"), "Unknown function: 'foo'");
        assert_eq!(
            e("contains(a)"),
            "Function 'contains' takes 2 arguments. 1 given."
        );
        assert_eq!(
            e("substring(a)"),
            "Function 'substring' takes between 2 and 3 arguments. 1 given."
        );
        assert_eq!(
            e("a in ('x')"),
            "Failed to parse at: Token(type=')', value=')', lineno=1, index=9)"
        );
        assert_eq!(
            e("anything eq 1"),
            "Failed to parse at: Token(type='ANY', value=Any(), lineno=1, index=0)"
        );
        assert_eq!(
            e("a eq 'it''s"),
            "Failed to tokenize at: Token(type='ERROR', value=\"'s\", lineno=1, index=9)"
        );
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
        assert_eq!(
            kinds("x.y.z")[0],
            "Token(type='ODATA_IDENTIFIER', value=Identifier(name='z', namespace=('x', 'y')), lineno=1, index=0)"
        );
        assert_eq!(
            kinds("TRUE")[0],
            "Token(type='BOOLEAN', value=Boolean(val='TRUE'), lineno=1, index=0)"
        );
        assert_eq!(
            kinds("1.5e3")[0],
            "Token(type='DECIMAL', value=Float(val='1.5e3'), lineno=1, index=0)"
        );
        assert_eq!(
            kinds("duration'p1dt2h'")[0],
            "Token(type='DURATION', value=Duration(val='P1DT2H'), lineno=1, index=0)"
        );
    }

    /// Outcomes of the `odata-query` library on the filters of the golden traces, hand-picked
    /// edge cases and random token soup (generated once with the library, kept as data).
    #[test]
    fn agrees_with_the_library_corpus() {
        let corpus: Vec<Value> =
            serde_json::from_str(include_str!("odata_corpus.json")).unwrap_or_default();
        assert!(corpus.len() > 1000);
        let mut bad = Vec::new();
        for case in &corpus {
            let (Some(f), Some(want)) = (case["filter"].as_str(), case["result"].as_str()) else {
                continue;
            };
            let got = match parse(f) {
                Ok(ast) => format!("ok:{ast}"),
                Err(e) => format!("err:{e}"),
            };
            if got != want {
                bad.push(format!("{f:?}\n   want {want}\n   got  {got}"));
            }
        }
        assert!(
            bad.is_empty(),
            "{} of {} differ:\n{}",
            bad.len(),
            corpus.len(),
            bad.iter().take(25).cloned().collect::<Vec<_>>().join("\n")
        );
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
            let soup = prop::collection::vec(prop::sample::select(PIECES), 0..120)
                .prop_map(|v| v.concat());
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
        prop::sample::select(vec!["status", "priority", "n", "verified", "id"])
            .prop_map(str::to_string)
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
}
