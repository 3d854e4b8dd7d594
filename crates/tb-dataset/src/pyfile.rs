//! Just enough of Python's tokenizer to read ThinkingBox test-case files: module-level string
//! statements, module-level `def`s, the first statement of each function body, and the names
//! the body calls. Strings are decoded exactly (prefixes, quotes, escapes); `\N{...}` is
//! reported as unsupported (it does not occur in the official data).

use crate::Check;
use std::borrow::Cow;

/// A module-level item of a test file, in source order.
#[derive(Debug, Clone, PartialEq)]
pub enum PyItem {
    /// A statement made of one string constant (implicit concatenation included).
    Str {
        /// The decoded value.
        value: String,
        /// 1-based line of the statement's first token.
        line: usize,
    },
    /// A module-level `def`.
    Function(PyFunction),
}

/// A module-level function.
#[derive(Debug, Clone, PartialEq)]
pub struct PyFunction {
    /// Its name.
    pub name: String,
    /// 1-based line of the `def` keyword.
    pub line: usize,
    /// 1-based last line of the body.
    pub end_line: usize,
    /// The first body statement if it is a string constant: (decoded value, 1-based line).
    pub docstring: Option<(String, usize)>,
    /// Checks the body calls, first occurrence order, no repeats.
    pub checks: Vec<Check>,
}

/// A tokenizer/structure error with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyError {
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A token. Names and string values borrow the source (a string is copied only when it has
/// escapes to decode), so lexing a large file allocates little.
#[derive(Debug, Clone, PartialEq)]
enum T<'a> {
    Name(&'a str),
    /// `value` is `None` for f-strings and bytes (not a `str` constant).
    Str(Option<Cow<'a, str>>),
    Op(char),
    Other,
}

#[derive(Debug, Clone)]
struct Tok<'a> {
    t: T<'a>,
    line: usize,
    end_line: usize,
}

/// One logical line: its indentation (0 means module level) and tokens.
#[derive(Debug)]
struct Logical<'a> {
    indent: usize,
    toks: Vec<Tok<'a>>,
}

struct Lexer<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
    line: usize,
}

fn perr(line: usize, message: impl Into<String>) -> PyError {
    PyError {
        line,
        message: message.into(),
    }
}

impl<'a> Lexer<'a> {
    /// A lexer at the start of `src`.
    fn new(src: &'a str) -> Self {
        Lexer {
            s: src.as_bytes(),
            src,
            i: 0,
            line: 1,
        }
    }

    fn peek(&self, k: usize) -> u8 {
        self.s.get(self.i + k).copied().unwrap_or(0)
    }

    /// Split the source into logical lines.
    fn logical_lines(&mut self) -> Result<Vec<Logical<'a>>, PyError> {
        let mut out = Vec::new();
        let mut cur: Vec<Tok<'a>> = Vec::new();
        let mut indent = 0usize;
        let mut depth = 0usize;
        let mut at_line_start = true;
        while self.i < self.s.len() {
            if at_line_start && depth == 0 {
                // measure indentation
                let mut col = 0;
                while matches!(self.peek(0), b' ' | b'\t' | b'\x0c') {
                    col = match self.peek(0) {
                        b'\t' => (col / 8 + 1) * 8,
                        b'\x0c' => 0,
                        _ => col + 1,
                    };
                    self.i += 1;
                }
                indent = col;
                at_line_start = false;
            }
            let c = self.peek(0);
            match c {
                b'\n' => {
                    self.i += 1;
                    self.line += 1;
                    if depth == 0 {
                        if !cur.is_empty() {
                            out.push(Logical {
                                indent,
                                toks: std::mem::take(&mut cur),
                            });
                        }
                        at_line_start = true;
                    }
                }
                b' ' | b'\t' | b'\x0c' | b'\r' => self.i += 1,
                b'#' => {
                    while self.i < self.s.len() && self.peek(0) != b'\n' {
                        self.i += 1;
                    }
                }
                b'\\' => {
                    if self.peek(1) == b'\n' {
                        self.i += 2;
                        self.line += 1;
                    } else if self.peek(1) == b'\r' && self.peek(2) == b'\n' {
                        self.i += 3;
                        self.line += 1;
                    } else {
                        return Err(perr(
                            self.line,
                            "unexpected character after line continuation character",
                        ));
                    }
                }
                b'(' | b'[' | b'{' => {
                    depth += 1;
                    cur.push(self.tok(T::Op(c as char)));
                    self.i += 1;
                }
                b')' | b']' | b'}' => {
                    if depth == 0 {
                        return Err(perr(self.line, format!("unmatched '{}'", c as char)));
                    }
                    depth -= 1;
                    cur.push(self.tok(T::Op(c as char)));
                    self.i += 1;
                }
                b'\'' | b'"' => {
                    let t = self.string(0)?;
                    cur.push(t);
                }
                _ if c.is_ascii_alphabetic() || c == b'_' || c >= 0x80 => {
                    let start = self.i;
                    while self.i < self.s.len() {
                        let b = self.peek(0);
                        if b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80 {
                            self.i += 1;
                        } else {
                            break;
                        }
                    }
                    let src: &'a str = self.src;
                    let word = &src[start..self.i];
                    let q = self.peek(0);
                    if (q == b'\'' || q == b'"') && is_string_prefix(word) {
                        self.i = start;
                        let t = self.string(word.len())?;
                        cur.push(t);
                    } else {
                        cur.push(self.tok(T::Name(word)));
                    }
                }
                b'0'..=b'9' => {
                    while self.peek(0).is_ascii_alphanumeric()
                        || self.peek(0) == b'_'
                        || self.peek(0) == b'.'
                        || ((self.peek(0) == b'+' || self.peek(0) == b'-')
                            && matches!(self.s.get(self.i.wrapping_sub(1)), Some(b'e' | b'E')))
                    {
                        self.i += 1;
                    }
                    cur.push(self.tok(T::Other));
                }
                b':' | b';' | b'.' | b',' | b'=' | b'@' => {
                    cur.push(self.tok(T::Op(c as char)));
                    self.i += 1;
                }
                _ => {
                    cur.push(self.tok(T::Other));
                    self.i += 1;
                }
            }
        }
        if depth > 0 {
            return Err(perr(self.line, "unexpected end of file inside brackets"));
        }
        if !cur.is_empty() {
            out.push(Logical { indent, toks: cur });
        }
        Ok(out)
    }

    fn tok(&self, t: T<'a>) -> Tok<'a> {
        Tok {
            t,
            line: self.line,
            end_line: self.line,
        }
    }

    /// Scan a string literal starting at `self.i` (prefix of `plen` bytes).
    fn string(&mut self, plen: usize) -> Result<Tok<'a>, PyError> {
        let start_line = self.line;
        let prefix = self.s.get(self.i..self.i + plen).unwrap_or_default();
        let has = |c: u8| prefix.iter().any(|p| p.to_ascii_lowercase() == c);
        let raw = has(b'r');
        let bytes = has(b'b');
        let fstr = has(b'f') || has(b't');
        self.i += plen;
        let q = self.peek(0);
        let triple = self.peek(1) == q && self.peek(2) == q;
        let qlen = if triple { 3 } else { 1 };
        self.i += qlen;
        let body_start = self.i;
        let mut fdepth = 0usize;
        loop {
            if self.i >= self.s.len() {
                return Err(perr(
                    start_line,
                    if triple {
                        "unterminated triple-quoted string literal"
                    } else {
                        "unterminated string literal"
                    },
                ));
            }
            if !fstr {
                // Only a quote, a backslash or a newline ends or changes the scan: skip to the
                // next one (a test file's docstrings are most of its bytes).
                let rest = self.s.get(self.i..).unwrap_or_default();
                let Some(off) = memchr::memchr3(q, b'\\', b'\n', rest) else {
                    self.i = self.s.len();
                    continue;
                };
                self.i += off;
            }
            let c = self.peek(0);
            if fstr && fdepth > 0 {
                // inside an f-string replacement field: skip nested strings and brackets
                match c {
                    b'\'' | b'"' => {
                        let _ = self.string(0)?;
                        continue;
                    }
                    b'{' | b'(' | b'[' => fdepth += 1,
                    b'}' | b')' | b']' => fdepth -= 1,
                    b'\n' => self.line += 1,
                    _ => {}
                }
                self.i += 1;
                continue;
            }
            if c == b'\\' {
                if self.peek(1) == b'\n' {
                    self.line += 1;
                }
                self.i += 2;
                continue;
            }
            if fstr && c == b'{' {
                if self.peek(1) == b'{' {
                    self.i += 2;
                } else {
                    fdepth = 1;
                    self.i += 1;
                }
                continue;
            }
            if c == b'\n' {
                if !triple {
                    return Err(perr(start_line, "unterminated string literal"));
                }
                self.line += 1;
            }
            if c == q && (!triple || (self.peek(1) == q && self.peek(2) == q)) {
                break;
            }
            self.i += 1;
        }
        let src: &'a str = self.src;
        let body = &src[body_start..self.i];
        self.i += qlen;
        let value = if bytes || fstr {
            None
        } else if raw || memchr::memchr(b'\\', body.as_bytes()).is_none() {
            // Without a backslash the value is the body as written.
            Some(Cow::Borrowed(body))
        } else {
            Some(Cow::Owned(decode_escapes(body, start_line)?))
        };
        Ok(Tok {
            t: T::Str(value),
            line: start_line,
            end_line: self.line,
        })
    }
}

fn is_string_prefix(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "f" | "t" | "br" | "rb" | "fr" | "rf" | "tr" | "rt"
    )
}

/// Decode the escapes of a non-raw `str` literal body.
fn decode_escapes(body: &str, start_line: usize) -> Result<String, PyError> {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    let mut line = start_line;
    while let Some(c) = chars.next() {
        if c == '\n' {
            line += 1;
        }
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(e) = chars.next() else {
            out.push('\\');
            break;
        };
        match e {
            '\n' => line += 1,
            '\\' => out.push('\\'),
            '\'' => out.push('\''),
            '"' => out.push('"'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'f' => out.push('\x0c'),
            'n' => out.push('\n'),
            'r' => out.push('\r'),
            't' => out.push('\t'),
            'v' => out.push('\x0b'),
            '0'..='7' => {
                let mut v = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(v).unwrap_or('\u{FFFD}'));
            }
            'x' | 'u' | 'U' => {
                let n = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut v: u32 = 0;
                for _ in 0..n {
                    match chars.next().and_then(|d| d.to_digit(16)) {
                        Some(d) => v = v.wrapping_mul(16).wrapping_add(d),
                        None => {
                            return Err(perr(
                                line,
                                format!("truncated \\{e} escape in string literal"),
                            ));
                        }
                    }
                }
                match char::from_u32(v) {
                    Some(ch) => out.push(ch),
                    None => {
                        return Err(perr(
                            line,
                            format!("illegal Unicode character in \\{e} escape"),
                        ));
                    }
                }
            }
            'N' => {
                return Err(perr(
                    line,
                    "\\N{...} escapes in test-case strings are not supported; write the character itself",
                ));
            }
            other => {
                // Python keeps unknown escapes as written (with a warning).
                out.push('\\');
                out.push(other);
                if other == '\n' {
                    line += 1;
                }
            }
        }
    }
    Ok(out)
}

/// If `toks` is one string-constant expression (adjacent strings, optionally parenthesised),
/// its value. `None` if it is anything else or not a `str` (bytes, f-string).
fn string_statement(toks: &[Tok<'_>]) -> Option<String> {
    let mut toks = toks;
    // a trailing ';' ends the statement
    if let Some(Tok { t: T::Op(';'), .. }) = toks.last() {
        toks = &toks[..toks.len() - 1];
    }
    while toks.len() >= 2 && toks[0].t == T::Op('(') && toks[toks.len() - 1].t == T::Op(')') {
        toks = &toks[1..toks.len() - 1];
    }
    if toks.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut any_fstring_or_bytes = false;
    for t in toks {
        match &t.t {
            T::Str(Some(v)) => out.push_str(v),
            T::Str(None) => any_fstring_or_bytes = true,
            _ => return None,
        }
    }
    if any_fstring_or_bytes {
        return None;
    }
    Some(out)
}

/// A simple assignment `NAME = value` found anywhere in a file (module level or inside a
/// function body), for reading a framework's prompt constants.
#[derive(Debug, Clone, PartialEq)]
pub struct PyAssign {
    /// The assigned name.
    pub name: String,
    /// 1-based line of the name.
    pub line: usize,
    /// The module-level function the assignment is in (`None` at module level).
    pub function: Option<String>,
    /// The value, if it is one we read.
    pub value: PyValue,
}

/// The value of a [`PyAssign`].
#[derive(Debug, Clone, PartialEq)]
pub enum PyValue {
    /// A string constant (implicit concatenation and parentheses included).
    Str(String),
    /// A dict literal of string keys and string values, in source order.
    StrDict(Vec<(String, String)>),
    /// Anything else (an expression we do not evaluate).
    Other,
}

fn str_dict(toks: &[Tok<'_>]) -> Option<Vec<(String, String)>> {
    let inner = match (toks.first(), toks.last()) {
        (Some(a), Some(b)) if a.t == T::Op('{') && b.t == T::Op('}') && toks.len() >= 2 => {
            &toks[1..toks.len() - 1]
        }
        _ => return None,
    };
    let mut out = Vec::new();
    for item in split_top(inner, ',') {
        let colon = item.iter().position(|t| t.t == T::Op(':'))?;
        let k = string_statement(&item[..colon])?;
        let v = string_statement(&item[colon + 1..])?;
        out.push((k, v));
    }
    Some(out)
}

/// Source text as Python reads it: without a byte-order mark, with universal newlines.
fn python_source(src: &str) -> std::borrow::Cow<'_, str> {
    let src = src.strip_prefix('\u{FEFF}').unwrap_or(src);
    if src.contains('\r') {
        std::borrow::Cow::Owned(src.replace("\r\n", "\n").replace('\r', "\n"))
    } else {
        std::borrow::Cow::Borrowed(src)
    }
}

/// Every simple assignment `NAME = value` of a Python file, in source order, with the
/// module-level function it is in. Values other than string constants and dicts of strings
/// are [`PyValue::Other`]. Errors are the tokenizer's, with their line.
pub fn py_assignments(src: &str) -> Result<Vec<PyAssign>, PyError> {
    let src = python_source(src);
    let mut lx = Lexer::new(&src);
    let mut out = Vec::new();
    let mut function: Option<String> = None;
    for l in lx.logical_lines()? {
        let toks = &l.toks;
        if l.indent == 0 {
            function = None;
            let def_at = match toks.first().map(|t| &t.t) {
                Some(T::Name(n)) if *n == "def" => Some(1),
                Some(T::Name(n)) if *n == "async" => Some(2),
                _ => None,
            };
            if let Some(k) = def_at {
                if let Some(T::Name(n)) = toks.get(k).map(|t| &t.t) {
                    function = Some((*n).to_string());
                }
                continue;
            }
        }
        for stmt in split_statements(toks) {
            let (
                Some(Tok {
                    t: T::Name(name),
                    line,
                    ..
                }),
                Some(Tok { t: T::Op('='), .. }),
            ) = (stmt.first(), stmt.get(1))
            else {
                continue;
            };
            let rest = &stmt[2..];
            if rest.first().is_some_and(|t| t.t == T::Op('=')) {
                continue;
            }
            let value = if let Some(s) = string_statement(rest) {
                PyValue::Str(s)
            } else if let Some(d) = str_dict(rest) {
                PyValue::StrDict(d)
            } else {
                PyValue::Other
            };
            out.push(PyAssign {
                name: (*name).to_string(),
                line: *line,
                function: function.clone(),
                value,
            });
        }
    }
    Ok(out)
}

/// Split tokens on top-level `;` (statements on one line).
fn split_statements<'t, 'a>(toks: &'t [Tok<'a>]) -> Vec<&'t [Tok<'a>]> {
    split_top(toks, ';')
}

/// Split tokens on `sep` outside brackets; a trailing empty part is left out.
fn split_top<'t, 'a>(toks: &'t [Tok<'a>], sep: char) -> Vec<&'t [Tok<'a>]> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, t) in toks.iter().enumerate() {
        match t.t {
            T::Op('(' | '[' | '{') => depth += 1,
            T::Op(')' | ']' | '}') => depth -= 1,
            T::Op(c) if c == sep && depth == 0 => {
                out.push(&toks[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if start < toks.len() {
        out.push(&toks[start..]);
    }
    out
}

fn checks_in(toks: &[Tok<'_>], checks: &mut Vec<Check>) {
    for w in toks.windows(2) {
        if let (T::Name(n), T::Op('(')) = (&w[0].t, &w[1].t) {
            let c = match *n {
                "validate_database" => Check::ValidateDatabase,
                "validate_rubrics_yesno" => Check::ValidateRubricsYesno,
                _ => continue,
            };
            if !checks.contains(&c) {
                checks.push(c);
            }
        }
    }
}

/// Keywords that start a compound statement (a `;` after their `:` does not split them).
const COMPOUND: &[&str] = &[
    "if", "for", "while", "with", "try", "class", "async", "elif", "else", "except", "finally",
    "match", "case",
];

/// Parse a test-case file's structure.
pub fn parse_py(src: &str) -> Result<Vec<PyItem>, PyError> {
    parse_py_for(src, None)
}

/// [`parse_py`] keeping, of the module-level functions, only those named `only` (all when
/// `None`): the whole file is still tokenized (so every error of [`parse_py`] is reported, at
/// the same line), but the other functions' first statements are not built. The items it
/// returns are exactly [`parse_py`]'s with the other functions left out.
pub(crate) fn parse_py_for(src: &str, only: Option<&str>) -> Result<Vec<PyItem>, PyError> {
    let src = python_source(src);
    let mut lx = Lexer::new(&src);
    let lines = lx.logical_lines()?;
    let mut items = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = &lines[i];
        if l.indent != 0 {
            // Belongs to a compound statement we are not interested in (class, if, ...).
            i += 1;
            continue;
        }
        let first = &l.toks[0];
        let is_def = matches!(&first.t, T::Name(n) if *n == "def");
        if !is_def {
            let stmts = split_statements(&l.toks);
            let compound =
                matches!(&first.t, T::Name(n) if COMPOUND.contains(n)) || first.t == T::Op('@');
            if stmts.len() > 1 && !compound {
                return Err(perr(
                    first.line,
                    "multiple statements on the same line in the global scope",
                ));
            }
            if let Some(v) = stmts.first().and_then(|s| string_statement(s)) {
                items.push(PyItem::Str {
                    value: v,
                    line: first.line,
                });
            }
            i += 1;
            continue;
        }
        let name = match l.toks.get(1).map(|t| &t.t) {
            Some(T::Name(n)) => (*n).to_string(),
            _ => return Err(perr(first.line, "expected a function name after 'def'")),
        };
        // header ends at the first ':' at bracket depth 0 after the parameter list
        let mut depth = 0i32;
        let mut colon = None;
        for (k, t) in l.toks.iter().enumerate().skip(2) {
            match t.t {
                T::Op('(' | '[' | '{') => depth += 1,
                T::Op(')' | ']' | '}') => depth -= 1,
                T::Op(':') if depth == 0 => {
                    colon = Some(k);
                    break;
                }
                _ => {}
            }
        }
        let Some(colon) = colon else {
            return Err(perr(
                first.line,
                format!("expected ':' after 'def {name}(...)'"),
            ));
        };
        let inline = &l.toks[colon + 1..];
        let mut body: Vec<&[Tok]> = Vec::new();
        let mut end_line = l.toks.last().map_or(first.line, |t| t.end_line);
        if inline.is_empty() {
            i += 1;
            let mut first_body = true;
            while i < lines.len() && lines[i].indent > 0 {
                if first_body {
                    body.extend(split_statements(&lines[i].toks));
                    first_body = false;
                } else {
                    body.push(&lines[i].toks);
                }
                end_line = lines[i].toks.last().map_or(end_line, |t| t.end_line);
                i += 1;
            }
            if first_body {
                return Err(perr(
                    first.line,
                    format!("expected an indented block after 'def {name}'"),
                ));
            }
        } else {
            body.extend(split_statements(inline));
            i += 1;
        }
        if only.is_some_and(|o| o != name) {
            continue;
        }
        let docstring = body.first().and_then(|s| {
            let line = s.first().map_or(first.line, |t| t.line);
            string_statement(s).map(|v| (v, line))
        });
        let mut checks = Vec::new();
        for s in &body {
            checks_in(s, &mut checks);
        }
        items.push(PyItem::Function(PyFunction {
            name,
            line: first.line,
            end_line,
            docstring,
            checks,
        }));
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assignments_with_their_function() {
        let src = "A = 'x' \\\n  \"y\"\nB = {'k': 'v', \"k2\": r'\\d'}\nC = f(1)\ndef g():\n    D = ('a'\n         'b')\n    if D == 'ab': pass\nE = \"\"\"\\\nz\"\"\"\n";
        let a = py_assignments(src).unwrap();
        let got: Vec<(&str, usize, Option<&str>, &PyValue)> = a
            .iter()
            .map(|x| (x.name.as_str(), x.line, x.function.as_deref(), &x.value))
            .collect();
        assert_eq!(
            got,
            vec![
                ("A", 1, None, &PyValue::Str("xy".into())),
                (
                    "B",
                    3,
                    None,
                    &PyValue::StrDict(vec![("k".into(), "v".into()), ("k2".into(), "\\d".into())])
                ),
                ("C", 4, None, &PyValue::Other),
                ("D", 6, Some("g"), &PyValue::Str("ab".into())),
                ("E", 9, None, &PyValue::Str("z".into())),
            ]
        );
        assert_eq!(py_assignments("A = 'open\n").unwrap_err().line, 1);
    }

    fn funcs(src: &str) -> Vec<PyFunction> {
        parse_py(src)
            .unwrap()
            .into_iter()
            .filter_map(|i| match i {
                PyItem::Function(f) => Some(f),
                PyItem::Str { .. } => None,
            })
            .collect()
    }

    #[test]
    fn module_strings_and_functions() {
        let src = "import x\n\"\"\"!\nscenario: s\n\"\"\"\n\n\ndef test_a(x):\n    \"\"\"!\n    query: q\n    \"\"\"\n    validate_database(x)\n\n\ndef helper():\n    return 1\n";
        let items = parse_py(src).unwrap();
        assert_eq!(
            items[0],
            PyItem::Str {
                value: "!\nscenario: s\n".into(),
                line: 2
            }
        );
        let f = funcs(src);
        assert_eq!(f[0].name, "test_a");
        assert_eq!(f[0].line, 7);
        assert_eq!(f[0].end_line, 11);
        assert_eq!(f[0].docstring, Some(("!\n    query: q\n    ".into(), 8)));
        assert_eq!(f[0].checks, vec![Check::ValidateDatabase]);
        assert_eq!(f[1].name, "helper");
        assert_eq!(f[1].docstring, None);
    }

    #[test]
    fn escapes_prefixes_and_concatenation() {
        let src = "def f():\n    r'!a\\n' \"b\\tc\\x41\\u00e9\\101\\q\"\n";
        assert_eq!(
            funcs(src)[0].docstring.as_ref().unwrap().0,
            "!a\\nb\tcAéA\\q"
        );
        let src = "def f():\n    (\n      '!x'\n      'y'\n    )\n    pass\n";
        assert_eq!(funcs(src)[0].docstring.as_ref().unwrap().0, "!xy");
        let src = "def f():\n    f'!{x}'\n";
        assert_eq!(funcs(src)[0].docstring, None);
        let src = "def f():\n    b'!x'\n";
        assert_eq!(funcs(src)[0].docstring, None);
        let src = "def f():\n    '''!a\\\nb'''\n";
        assert_eq!(funcs(src)[0].docstring.as_ref().unwrap().0, "!ab");
    }

    #[test]
    fn bodies_end_by_indentation_not_comments_or_strings() {
        let src = "def f():\n    '!a'\n# comment at col 0\n    x = '''\ndef g():\n'''\n    validate_rubrics_yesno(x, j)\n    validate_database(x)\ndef g(): '!b'; validate_database(x)\n";
        let f = funcs(src);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].end_line, 8);
        assert_eq!(
            f[0].checks,
            vec![Check::ValidateRubricsYesno, Check::ValidateDatabase]
        );
        assert_eq!(f[1].name, "g");
        assert_eq!(f[1].docstring, Some(("!b".into(), 9)));
        assert_eq!(f[1].checks, vec![Check::ValidateDatabase]);
    }

    #[test]
    fn nested_defs_and_methods_are_not_module_functions() {
        let src =
            "class A:\n    def m(self):\n        '!x'\nif True:\n    def g():\n        '!y'\n";
        assert!(funcs(src).is_empty());
    }

    #[test]
    fn fstring_with_nested_quotes() {
        let src = "def f():\n    '!a'\n    x = f\"{d.get('path', \"N/A\")} }}\"\n    validate_database(x)\n";
        let f = funcs(src);
        assert_eq!(f[0].checks, vec![Check::ValidateDatabase]);
    }

    /// Pieces of test files that could fool a reader looking for one function: a `def` of
    /// the same name inside strings (single and triple quoted, raw, f-strings), comments,
    /// nested defs and methods, one-line defs, escapes, and a few malformed pieces.
    const PIECES: &[&str] = &[
        "\"\"\"!\nscenario: s\n\"\"\"\n",
        "'!tags: [m]'\n",
        "def f0(x):\n    \"\"\"!\n    query: q0\n    \"\"\"\n    validate_database(x)\n",
        "def f1(x, judge):\n    '!query: q1'\n    validate_rubrics_yesno(x, judge)\n",
        "def f2(): '!query: q2'; validate_database(x)\n",
        "def f0():\n    s = '''\ndef f1():\n    \"\"\"!\n    query: fake\n    \"\"\"\n'''\n    return s\n",
        "x = 'def f2(): pass'\n",
        "# def f1():\n#     '!query: commented'\n",
        "class C:\n    def f1(self):\n        '!query: method'\n",
        "if True:\n    def f2():\n        '!query: nested'\n",
        "def f1():\n    def f0():\n        '!query: inner'\n    return f0\n",
        "def f2():\n    r'!query: a\\n'\n    f\"{d.get('k', \"def f0(): x\")}\"\n",
        "def f0():\n    '!query: \\x41\\u00e9 \\\n      tail'\n",
        "@decorator\ndef f1(\n    x,\n):\n    b'!query: bytes'\n",
        "async def f2():\n    '!query: async'\n",
        "y = (\n  'def f0():'\n  '    \"!x\"'\n)\n",
        "\n\n",
        "def f1():\n    '\\N{BULLET}'\n",
        "z = '''never closed\n",
        "w = (1,\n",
        "def f2()\n    pass\n",
        "x = 1; y = 2\n",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]

        /// Reading a file for one function gives exactly the whole-file parse with the other
        /// functions left out, and the same error (message and line) on a malformed file.
        #[test]
        fn parse_for_one_function_equals_the_whole_file_parse(
            picks in proptest::collection::vec(0..PIECES.len(), 0..10),
            name in 0usize..4,
        ) {
            let src: String = picks.iter().map(|&i| PIECES[i]).collect();
            let name = format!("f{name}");
            match (parse_py(&src), parse_py_for(&src, Some(&name))) {
                (Ok(all), Ok(some)) => {
                    let want: Vec<PyItem> = all
                        .into_iter()
                        .filter(|it| match it {
                            PyItem::Function(f) => f.name == name,
                            PyItem::Str { .. } => true,
                        })
                        .collect();
                    proptest::prop_assert_eq!(some, want, "{}", src);
                }
                (Err(a), Err(b)) => proptest::prop_assert_eq!(a, b, "{}", src),
                (a, b) => proptest::prop_assert!(false, "{src}\n{a:?}\n{b:?}"),
            }
        }
    }

    /// A string's value is decoded only when it has a backslash; either way it is the
    /// string's value (the fake `def` inside the triple-quoted string is not a function).
    #[test]
    fn strings_with_and_without_escapes() {
        let src = "def f0():\n    s = '''\ndef f1():\n    '!fake'\n'''\n    return s\ndef f1():\n    '!a\\tb'\n";
        let f = funcs(src);
        assert_eq!(f.len(), 2);
        assert_eq!(f[0].docstring, None);
        assert_eq!(f[1].line, 7);
        assert_eq!(f[1].docstring, Some(("!a\tb".into(), 8)));
        let only = parse_py_for(src, Some("f1")).unwrap();
        assert_eq!(only, vec![PyItem::Function(f[1].clone())]);
        let e = parse_py_for("def f0():\n    '!ok'\ndef f1():\n    '\\x4'\n", Some("f0"));
        assert_eq!(
            e.unwrap_err().line,
            4,
            "an error after the function is still seen"
        );
    }

    #[test]
    fn errors_have_lines() {
        let e = parse_py("x = 1\ny = '''abc\n").unwrap_err();
        assert_eq!(e.line, 2);
        let e = parse_py("def f():\n    '\\N{BULLET}'\n").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(parse_py("x = (1,\n").is_err());
    }
}
