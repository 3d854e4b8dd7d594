//! The reference's evaluator of a parsed filter on a row, with its quirks (see the module
//! above).

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

#[allow(clippy::wildcard_imports)]
use super::*;

/// A Python value an operand evaluates to.
#[derive(Debug, Clone, PartialEq)]
pub enum PyVal<'a> {
    /// A row value (JSON-loaded Python object) or a converted literal.
    Val(Value),
    /// An AST node kept as is.
    Node(&'a Node),
}

impl PyVal<'_> {
    pub(super) fn type_name(&self) -> &'static str {
        match self {
            PyVal::Val(v) => tb_python::type_name(v),
            PyVal::Node(n) => n.class(),
        }
    }
}

/// Python `==`; a comparison of AST nodes nested deeper than Python follows fails with its
/// `RecursionError`.
pub(super) fn py_eq(a: &PyVal, b: &PyVal) -> Result<bool, String> {
    match (a, b) {
        (PyVal::Val(x), PyVal::Val(y)) => Ok(tb_python::py_eq(x, y)),
        (PyVal::Node(x), PyVal::Node(y)) => node_eq(x, y, 0),
        _ => Ok(false),
    }
}

/// The dataclass `==` of two AST nodes: fields in order, stopping at the first difference.
pub(super) fn node_eq(a: &Node, b: &Node, depth: usize) -> Result<bool, String> {
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

pub(super) fn compare(a: &PyVal, b: &PyVal, op: &str) -> Result<bool, String> {
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
    pub(super) fn operand<'n>(&self, n: &'n Node) -> PyVal<'n> {
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

    pub(super) fn eval_at(&self, n: &Node, depth: usize) -> Result<bool, FilterError> {
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
pub(super) fn parse_int(s: &str) -> Value {
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
