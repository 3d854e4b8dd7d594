//! The filter's syntax tree and the parser that accepts and rejects what the library's
//! grammar does, with its error texts.

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

#[allow(clippy::wildcard_imports)]
use super::*;

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

impl Cmp {
    /// The lexer's token type of the operator.
    pub(super) fn type_name(self) -> &'static str {
        match self {
            Cmp::Eq => "EQ",
            Cmp::Ne => "NE",
            Cmp::Lt => "LT",
            Cmp::Le => "LE",
            Cmp::Gt => "GT",
            Cmp::Ge => "GE",
            Cmp::In => "IN",
        }
    }

    /// The AST class of the comparator.
    pub(super) fn class(self) -> &'static str {
        match self {
            Cmp::Eq => "Eq",
            Cmp::Ne => "NotEq",
            Cmp::Lt => "Lt",
            Cmp::Le => "LtE",
            Cmp::Gt => "Gt",
            Cmp::Ge => "GtE",
            Cmp::In => "In",
        }
    }
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
    pub(super) fn class(&self) -> &'static str {
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
    pub(super) fn is_leaf(&self) -> bool {
        matches!(self, Node::Ident(..) | Node::Lit(_))
    }

    /// Moves this node's non-leaf children into `out` (leaving leaves behind).
    pub(super) fn take_children(&mut self, out: &mut Vec<Node>) {
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
    pub(super) fn depth<'a>(&'a self) -> usize {
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
                write!(
                    f,
                    "Compare(comparator={}(), left={l}, right={r})",
                    c.class()
                )
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
pub(super) fn function_arity(name: &str) -> Option<(usize, usize)> {
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

pub(super) struct Parser {
    toks: Vec<Token>,
    lex_error: Option<FilterError>,
    pos: usize,
    /// Current nesting of `expr` calls (every recursive path goes through `expr`).
    depth: usize,
}

pub(super) type PResult<T> = Result<T, FilterError>;

impl Parser {
    /// The lookahead (None at the end); reaching an untokenizable spot fails there.
    pub(super) fn peek(&self) -> PResult<Option<&Token>> {
        match self.toks.get(self.pos) {
            Some(t) => Ok(Some(t)),
            None => match &self.lex_error {
                Some(e) => Err(e.clone()),
                None => Ok(None),
            },
        }
    }

    pub(super) fn peek_kind(&self) -> PResult<Option<&Tk>> {
        Ok(self.peek()?.map(|t| &t.kind))
    }

    pub(super) fn fail<T>(&self) -> PResult<T> {
        let t = self.peek()?;
        Err(FilterError::Parse(t.map_or_else(
            || "None".to_string(),
            std::string::ToString::to_string,
        )))
    }

    pub(super) fn is_punct(&self, c: char) -> PResult<bool> {
        Ok(matches!(self.peek_kind()?, Some(Tk::Punct(p)) if *p == c))
    }

    pub(super) fn expect(&mut self, c: char) -> PResult<()> {
        if self.is_punct(c)? {
            self.pos += 1;
            Ok(())
        } else {
            self.fail()
        }
    }

    /// Optional whitespace where the grammar allows it.
    pub(super) fn bws(&mut self) -> PResult<()> {
        if matches!(self.peek_kind()?, Some(Tk::Ws(_))) {
            self.pos += 1;
        }
        Ok(())
    }

    pub(super) fn filter(&mut self) -> PResult<Node> {
        let e = self.expr(0)?;
        if self.peek()?.is_some() {
            return self.fail();
        }
        Ok(e)
    }

    pub(super) fn expr(&mut self, min_prec: u8) -> PResult<Node> {
        if self.depth >= MAX_NESTING {
            return Err(FilterError::Other(RECURSION_ERROR.into()));
        }
        self.depth += 1;
        let e = self.expr_inner(min_prec);
        self.depth -= 1;
        e
    }

    pub(super) fn expr_inner(&mut self, min_prec: u8) -> PResult<Node> {
        let mut left = self.unary()?;
        while let Some(Tk::Op(op)) = self.peek_kind()?.cloned() {
            let Some(prec) = op.binary_prec() else { break };
            if prec < min_prec {
                break;
            }
            self.pos += 1;
            left = if op == Op::Cmp(Cmp::In) {
                let list = self.list_expr()?;
                Node::Compare(Cmp::In, Box::new(left), Box::new(list))
            } else {
                let right = self.expr(prec + 1)?;
                let (l, r) = (Box::new(left), Box::new(right));
                match op {
                    Op::Or => Node::BoolOp(false, l, r),
                    Op::And => Node::BoolOp(true, l, r),
                    Op::Cmp(c) => Node::Compare(c, l, r),
                    other => Node::BinOp(other.class(), l, r),
                }
            };
        }
        Ok(left)
    }

    pub(super) fn unary(&mut self) -> PResult<Node> {
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

    pub(super) fn primary(&mut self) -> PResult<Node> {
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
    pub(super) fn list_rest(&mut self, first: Node) -> PResult<Vec<Node>> {
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
    pub(super) fn list_expr(&mut self) -> PResult<Node> {
        self.expect('(')?;
        self.bws()?;
        let first = self.expr(0)?;
        self.bws()?;
        self.list_rest(first).map(Node::List)
    }

    pub(super) fn ident_tail(&mut self, name: String, ns: Vec<String>) -> PResult<Node> {
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

    pub(super) fn named_param(&mut self) -> PResult<Node> {
        let Some(Tk::Ident(n, ns)) = self.peek_kind()?.cloned() else {
            return self.fail();
        };
        self.pos += 1;
        self.expect('=')?;
        Ok(Node::NamedParam(n, ns, Box::new(self.expr(0)?)))
    }

    /// After `name (`.
    pub(super) fn call(&mut self, name: String, ns: Vec<String>) -> PResult<Node> {
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
