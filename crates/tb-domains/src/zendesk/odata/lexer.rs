//! The tokens of an OData `$filter`, as the library's lexer makes them (patterns in its order,
//! case-insensitive, the first match wins).

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

#[allow(clippy::wildcard_imports)]
use super::*;

/// A token kind, named as the library names them.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tk {
    Ident(String, Vec<String>),
    Lit(Lit),
    Op(Op),
    Ws(String),
    Punct(char),
}

/// Binary, unary and collection operator tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    UMinus,
    And,
    Or,
    Not,
    /// A comparison (`in` included).
    Cmp(Cmp),
    Any,
    All,
}

impl Op {
    pub(super) fn type_name(self) -> &'static str {
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
            Op::Cmp(c) => c.type_name(),
            Op::Any => "ANY",
            Op::All => "ALL",
        }
    }

    /// The AST class the token's value is.
    pub(super) fn class(self) -> &'static str {
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
            Op::Cmp(c) => c.class(),
            Op::Any => "Any",
            Op::All => "All",
        }
    }

    /// Binding power of binary operators (low to high, as the grammar's precedence table).
    pub(super) fn binary_prec(self) -> Option<u8> {
        Some(match self {
            Op::Or => 1,
            Op::And => 2,
            Op::Cmp(Cmp::Eq | Cmp::Ne) => 3,
            Op::Cmp(Cmp::Gt | Cmp::Ge | Cmp::Lt | Cmp::Le) => 4,
            Op::Add | Op::Sub => 5,
            Op::Mul | Op::Div | Op::Mod => 6,
            Op::Cmp(Cmp::In) => 8,
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
    pub(super) fn token_type(&self) -> &'static str {
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

    pub(super) fn class(&self) -> &'static str {
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

    pub(super) fn repr(&self) -> String {
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
pub(super) struct Token {
    pub(super) kind: Tk,
    /// Index in characters (Python string index).
    pub(super) index: usize,
}

pub(super) fn tuple_repr(items: &[String]) -> String {
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

pub(super) fn is_ws(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

pub(super) fn is_word(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Matches regex pieces on a char slice, case-insensitively for letters.
pub(super) struct Scan<'a> {
    s: &'a [char],
}

impl Scan<'_> {
    pub(super) fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    /// A literal word, ASCII case-insensitive.
    pub(super) fn word(&self, i: usize, w: &str) -> Option<usize> {
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

    pub(super) fn digits(&self, i: usize) -> usize {
        let mut j = i;
        while self.at(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        j
    }

    /// `\d{n}`.
    pub(super) fn ndigits(&self, i: usize, n: usize) -> Option<usize> {
        (i..i + n)
            .all(|j| self.at(j).is_some_and(|c| c.is_ascii_digit()))
            .then_some(i + n)
    }

    pub(super) fn ch(&self, i: usize, f: impl Fn(char) -> bool) -> Option<usize> {
        self.at(i).filter(|c| f(*c)).map(|_| i + 1)
    }

    pub(super) fn wsp(&self, i: usize) -> Option<usize> {
        let mut j = i;
        while self.at(j).is_some_and(is_ws) {
            j += 1;
        }
        (j > i).then_some(j)
    }

    /// `'(?:[^']|'')*'` from `i` (at the opening quote): the longest match.
    pub(super) fn quoted(&self, i: usize) -> Option<usize> {
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
    pub(super) fn date(&self, i: usize) -> Option<usize> {
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
    pub(super) fn hour(&self, i: usize) -> Option<usize> {
        match self.at(i)? {
            '0' | '1' => self.ndigits(i + 1, 1),
            '2' => self.ch(i + 1, |c| ('0'..='3').contains(&c)),
            _ => None,
        }
    }

    /// `[0-5]\d`.
    pub(super) fn sixty(&self, i: usize) -> Option<usize> {
        let j = self.ch(i, |c| ('0'..='5').contains(&c))?;
        self.ndigits(j, 1)
    }

    /// `(?:[01]\d|2[0-3]):[0-5]\d(:?:[0-5]\d(?:\.\d{1,12})?)`: seconds are required.
    pub(super) fn time(&self, i: usize) -> Option<usize> {
        let j = self.hour(i)?;
        let j = self.ch(j, |c| c == ':')?;
        let j = self.sixty(j)?;
        self.seconds(j)
    }

    /// `(:?:[0-5]\d(?:\.\d{1,12})?)`.
    pub(super) fn seconds(&self, j: usize) -> Option<usize> {
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
    pub(super) fn datetime(&self, i: usize) -> Option<usize> {
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

    pub(super) fn duration(&self, i: usize) -> Option<usize> {
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

    pub(super) fn guid(&self, i: usize) -> Option<usize> {
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

    pub(super) fn integer(&self, i: usize) -> Option<usize> {
        let j = if matches!(self.at(i), Some('+' | '-')) {
            i + 1
        } else {
            i
        };
        let d = self.digits(j);
        (d > j).then_some(d)
    }

    /// `e[-+]?\d+`.
    pub(super) fn exponent(&self, i: usize) -> Option<usize> {
        let j = self.ch(i, |c| c == 'e' || c == 'E')?;
        let j = if matches!(self.at(j), Some('+' | '-')) {
            j + 1
        } else {
            j
        };
        let d = self.digits(j);
        (d > j).then_some(d)
    }

    pub(super) fn decimal(&self, i: usize) -> Option<usize> {
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
    pub(super) fn spaced(&self, i: usize, w: &str) -> Option<usize> {
        let j = self.wsp(i)?;
        let j = self.word(j, w)?;
        self.wsp(j)
    }

    pub(super) fn ident(&self, i: usize) -> Option<usize> {
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
pub(super) fn tokenize(text: &str) -> (Vec<Token>, Option<FilterError>) {
    let chars: Vec<char> = text.chars().collect();
    let sc = Scan { s: &chars };
    let mut toks = Vec::new();
    let mut i = 0;
    let s = |a: usize, b: usize| {
        chars
            .get(a..b)
            .unwrap_or_default()
            .iter()
            .collect::<String>()
    };
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
            .or_else(|| op(Op::Cmp(Cmp::Eq), sc.spaced(i, "eq")))
            .or_else(|| op(Op::Cmp(Cmp::Ne), sc.spaced(i, "ne")))
            .or_else(|| op(Op::Cmp(Cmp::Lt), sc.spaced(i, "lt")))
            .or_else(|| op(Op::Cmp(Cmp::Le), sc.spaced(i, "le")))
            .or_else(|| op(Op::Cmp(Cmp::Gt), sc.spaced(i, "gt")))
            .or_else(|| op(Op::Cmp(Cmp::Ge), sc.spaced(i, "ge")))
            .or_else(|| op(Op::Cmp(Cmp::In), sc.spaced(i, "in")))
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
                let c = *chars.get(i)?;
                "(),/:=".contains(c).then_some((Tk::Punct(c), i + 1))
            });
        if let Some((kind, end)) = found {
            toks.push(Token { kind, index: start });
            i = end;
        } else {
            let rest: String = chars.get(i..).unwrap_or_default().iter().collect();
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
