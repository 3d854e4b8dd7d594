//! What the evaluator supports, checked before anything runs: every statement and expression
//! of a test file is walked once, and the first construct outside the subset is reported with
//! its line ("parsing never fails": an unsupported file is an error, never a guess).

use std::collections::HashSet;

use ruff_python_ast::{self as ast, Expr, InterpolatedStringElement, Number, Stmt};
use ruff_text_size::Ranged;

use crate::LineIndex;

/// A construct the evaluator does not run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub line: u32,
    pub construct: String,
}

pub fn stmt_name(s: &Stmt) -> &'static str {
    match s {
        Stmt::FunctionDef(_) => "function definition",
        Stmt::ClassDef(_) => "class definition",
        Stmt::Return(_) => "return",
        Stmt::Delete(_) => "del statement",
        Stmt::TypeAlias(_) => "type alias",
        Stmt::Assign(_) => "assignment",
        Stmt::AugAssign(_) => "augmented assignment",
        Stmt::AnnAssign(_) => "annotated assignment",
        Stmt::For(_) => "for loop",
        Stmt::While(_) => "while loop",
        Stmt::If(_) => "if statement",
        Stmt::With(_) => "with statement",
        Stmt::Match(_) => "match statement",
        Stmt::Raise(_) => "raise",
        Stmt::Try(_) => "try statement",
        Stmt::Assert(_) => "assert",
        Stmt::Import(_) => "import",
        Stmt::ImportFrom(_) => "from-import",
        Stmt::Global(_) => "global statement",
        Stmt::Nonlocal(_) => "nonlocal statement",
        Stmt::Expr(_) => "expression statement",
        Stmt::Pass(_) => "pass",
        Stmt::Break(_) => "break",
        Stmt::Continue(_) => "continue",
        Stmt::IpyEscapeCommand(_) => "IPython escape command",
    }
}

pub fn expr_name(e: &Expr) -> &'static str {
    match e {
        Expr::BoolOp(_) => "boolean operation",
        Expr::Named(_) => "assignment expression (:=)",
        Expr::BinOp(_) => "binary operation",
        Expr::UnaryOp(_) => "unary operation",
        Expr::Lambda(_) => "lambda",
        Expr::If(_) => "conditional expression",
        Expr::Dict(_) => "dict display",
        Expr::Set(_) => "set display",
        Expr::ListComp(_) => "list comprehension",
        Expr::SetComp(_) => "set comprehension",
        Expr::DictComp(_) => "dict comprehension",
        Expr::Generator(_) => "generator expression",
        Expr::Await(_) => "await",
        Expr::Yield(_) => "yield",
        Expr::YieldFrom(_) => "yield from",
        Expr::Compare(_) => "comparison",
        Expr::Call(_) => "call",
        Expr::FString(_) => "f-string",
        Expr::TString(_) => "t-string",
        Expr::StringLiteral(_) => "string literal",
        Expr::BytesLiteral(_) => "bytes literal",
        Expr::NumberLiteral(_) => "number literal",
        Expr::BooleanLiteral(_) => "boolean literal",
        Expr::NoneLiteral(_) => "None",
        Expr::EllipsisLiteral(_) => "Ellipsis (...)",
        Expr::Attribute(_) => "attribute access",
        Expr::Subscript(_) => "subscript",
        Expr::Starred(_) => "starred expression",
        Expr::Name(_) => "name",
        Expr::List(_) => "list display",
        Expr::Tuple(_) => "tuple display",
        Expr::Slice(_) => "slice",
        Expr::IpyEscapeCommand(_) => "IPython escape command",
    }
}

/// Walks a module and returns every unsupported construct, in source order.
pub fn unsupported(body: &[Stmt], lines: &LineIndex) -> Vec<Unsupported> {
    let mut w = Walker {
        lines,
        found: Vec::new(),
        depth: 0,
    };
    w.block(body);
    w.found
}

struct Walker<'a> {
    lines: &'a LineIndex,
    found: Vec<Unsupported>,
    depth: usize,
}

impl Walker<'_> {
    fn flag(&mut self, node: &impl Ranged, construct: impl Into<String>) {
        let line = self.lines.line(node.range().start().to_usize());
        self.found.push(Unsupported {
            line,
            construct: construct.into(),
        });
    }

    fn block(&mut self, body: &[Stmt]) {
        for s in body {
            self.stmt(s);
        }
    }

    fn params(&mut self, node: &impl Ranged, p: &ast::Parameters) {
        if p.vararg.is_some()
            || p.kwarg.is_some()
            || !p.kwonlyargs.is_empty()
            || !p.posonlyargs.is_empty()
        {
            self.flag(node, "parameters other than name and name=default (*args, **kwargs, keyword-only, positional-only)");
        }
        for a in &p.args {
            if let Some(d) = &a.default {
                self.expr(d);
            }
        }
    }

    fn stmt(&mut self, s: &Stmt) {
        match s {
            Stmt::FunctionDef(f) => {
                if f.is_async {
                    self.flag(s, "async function");
                }
                if !f.decorator_list.is_empty() {
                    self.flag(s, "decorator");
                }
                if f.type_params.is_some() {
                    self.flag(s, "type parameters");
                }
                self.params(s, &f.parameters);
                self.block(&f.body);
            }
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    self.expr(v);
                }
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    self.target(t);
                }
                self.expr(&a.value);
            }
            Stmt::AugAssign(a) => {
                if !matches!(&*a.target, Expr::Name(_) | Expr::Subscript(_)) {
                    self.flag(s, "augmented assignment to this target");
                }
                self.target(&a.target);
                self.expr(&a.value);
            }
            Stmt::AnnAssign(a) => {
                self.target(&a.target);
                if let Some(v) = &a.value {
                    self.expr(v);
                }
            }
            Stmt::For(f) => {
                if f.is_async {
                    self.flag(s, "async for");
                }
                self.target(&f.target);
                self.expr(&f.iter);
                self.block(&f.body);
                self.block(&f.orelse);
            }
            Stmt::While(w) => {
                self.expr(&w.test);
                self.block(&w.body);
                self.block(&w.orelse);
            }
            Stmt::If(i) => {
                self.expr(&i.test);
                self.block(&i.body);
                for c in &i.elif_else_clauses {
                    if let Some(t) = &c.test {
                        self.expr(t);
                    }
                    self.block(&c.body);
                }
            }
            Stmt::Raise(r) => {
                if r.cause.is_some() {
                    self.flag(s, "raise ... from");
                }
                match r.exc.as_deref() {
                    None => self.flag(s, "bare raise"),
                    Some(Expr::Name(_)) => {}
                    Some(Expr::Call(c)) if matches!(&*c.func, Expr::Name(_)) => {
                        for a in &c.arguments.args {
                            self.expr(a);
                        }
                    }
                    Some(_) => self.flag(s, "raise of a computed exception"),
                }
            }
            Stmt::Try(t) => {
                if t.is_star {
                    self.flag(s, "try/except*");
                }
                self.block(&t.body);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    self.block(&h.body);
                }
                self.block(&t.orelse);
                self.block(&t.finalbody);
            }
            Stmt::Assert(a) => {
                self.expr(&a.test);
                if let Some(m) = &a.msg {
                    self.expr(m);
                }
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    if a.name.id.as_str() != "json" {
                        self.flag(s, format!("import of module {}", a.name.id));
                    }
                }
            }
            Stmt::ImportFrom(i) => {
                let module = i.module.as_ref().map_or("", |m| m.id.as_str());
                let known = matches!(
                    module,
                    "thinkingbox.common"
                        | "thinkingbox.common.chat_types"
                        | "thinkingbox.common.judge"
                        | "typing"
                        | "json"
                );
                if !known || i.level > 0 {
                    self.flag(s, format!("import from module {module}"));
                }
            }
            Stmt::Expr(e) => self.expr(&e.value),
            Stmt::Pass(_) | Stmt::Break(_) | Stmt::Continue(_) => {}
            other => self.flag(other, stmt_name(other)),
        }
    }

    fn target(&mut self, t: &Expr) {
        match t {
            Expr::Name(_) => {}
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                for e in elts {
                    if matches!(e, Expr::Starred(_)) {
                        self.flag(e, "starred assignment target");
                    } else {
                        self.target(e);
                    }
                }
            }
            Expr::Subscript(s) => {
                self.expr(&s.value);
                self.expr(&s.slice);
            }
            Expr::Attribute(a) => self.expr(&a.value),
            other => self.flag(other, format!("assignment to {}", expr_name(other))),
        }
    }

    fn comprehension(&mut self, gens: &[ast::Comprehension]) {
        for g in gens {
            if g.is_async {
                self.flag(&g.iter, "async comprehension");
            }
            self.target(&g.target);
            self.expr(&g.iter);
            for c in &g.ifs {
                self.expr(c);
            }
        }
    }

    fn expr(&mut self, e: &Expr) {
        self.depth += 1;
        if self.depth > crate::budget::MAX_SOURCE_DEPTH {
            self.flag(e, "expression nested too deeply");
            self.depth -= 1;
            return;
        }
        self.expr_inner(e);
        self.depth -= 1;
    }

    fn expr_inner(&mut self, e: &Expr) {
        match e {
            Expr::BoolOp(b) => b.values.iter().for_each(|v| self.expr(v)),
            Expr::BinOp(b) => {
                if matches!(b.op, ast::Operator::MatMult) {
                    self.flag(e, "matrix multiplication (@)");
                }
                self.expr(&b.left);
                self.expr(&b.right);
            }
            Expr::UnaryOp(u) => self.expr(&u.operand),
            Expr::Lambda(l) => {
                if let Some(p) = &l.parameters {
                    self.params(e, p);
                }
                self.expr(&l.body);
            }
            Expr::If(i) => {
                self.expr(&i.test);
                self.expr(&i.body);
                self.expr(&i.orelse);
            }
            Expr::Dict(d) => {
                for item in &d.items {
                    if let Some(k) = &item.key {
                        self.expr(k);
                    }
                    self.expr(&item.value);
                }
            }
            Expr::Set(s) => s.elts.iter().for_each(|v| self.expr(v)),
            Expr::List(l) => l.elts.iter().for_each(|v| self.expr(v)),
            Expr::Tuple(t) => t.elts.iter().for_each(|v| self.expr(v)),
            Expr::ListComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::SetComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::Generator(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.elt);
            }
            Expr::DictComp(c) => {
                self.comprehension(&c.generators);
                self.expr(&c.key);
                self.expr(&c.value);
            }
            Expr::Compare(c) => {
                self.expr(&c.left);
                c.comparators.iter().for_each(|v| self.expr(v));
            }
            Expr::Call(c) => {
                self.expr(&c.func);
                for a in &c.arguments.args {
                    match a {
                        Expr::Starred(s) => self.expr(&s.value),
                        other => self.expr(other),
                    }
                }
                for k in &c.arguments.keywords {
                    self.expr(&k.value);
                }
            }
            Expr::FString(f) => {
                for el in f.value.elements() {
                    if let InterpolatedStringElement::Interpolation(i) = el {
                        self.expr(&i.expression);
                        if let Some(spec) = &i.format_spec
                            && spec
                                .elements
                                .iter()
                                .any(|s| matches!(s, InterpolatedStringElement::Interpolation(_)))
                        {
                            self.flag(e, "nested f-string format spec");
                        }
                    }
                }
            }
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) if i.as_i64().is_none() => {
                    self.flag(e, "integer literal beyond 64 bits");
                }
                Number::Complex { .. } => self.flag(e, "complex number"),
                _ => {}
            },
            Expr::Attribute(a) => self.expr(&a.value),
            Expr::Subscript(s) => {
                self.expr(&s.value);
                if let Expr::Slice(sl) = &*s.slice {
                    for part in [&sl.lower, &sl.upper, &sl.step].into_iter().flatten() {
                        self.expr(part);
                    }
                } else {
                    self.expr(&s.slice);
                }
            }
            Expr::StringLiteral(_)
            | Expr::BooleanLiteral(_)
            | Expr::NoneLiteral(_)
            | Expr::Name(_) => {}
            other => self.flag(other, expr_name(other)),
        }
    }
}

/// Names a function body binds (its locals), not looking into nested functions, lambdas or
/// comprehensions, which have scopes of their own.
#[allow(clippy::implicit_hasher, reason = "one caller, one set type")]
pub fn collect_assigned(body: &[Stmt], out: &mut HashSet<String>) {
    for s in body {
        match s {
            Stmt::FunctionDef(f) => {
                out.insert(f.name.id.to_string());
            }
            Stmt::Assign(a) => a.targets.iter().for_each(|t| target_names(t, out)),
            Stmt::AugAssign(a) => target_names(&a.target, out),
            Stmt::AnnAssign(a) => target_names(&a.target, out),
            Stmt::For(f) => {
                target_names(&f.target, out);
                collect_assigned(&f.body, out);
                collect_assigned(&f.orelse, out);
            }
            Stmt::While(w) => {
                collect_assigned(&w.body, out);
                collect_assigned(&w.orelse, out);
            }
            Stmt::If(i) => {
                collect_assigned(&i.body, out);
                for c in &i.elif_else_clauses {
                    collect_assigned(&c.body, out);
                }
            }
            Stmt::Try(t) => {
                collect_assigned(&t.body, out);
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        out.insert(n.id.to_string());
                    }
                    collect_assigned(&h.body, out);
                }
                collect_assigned(&t.orelse, out);
                collect_assigned(&t.finalbody, out);
            }
            Stmt::Import(i) => {
                for a in &i.names {
                    out.insert(a.asname.as_ref().unwrap_or(&a.name).id.to_string());
                }
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    out.insert(a.asname.as_ref().unwrap_or(&a.name).id.to_string());
                }
            }
            _ => {}
        }
    }
}

fn target_names(t: &Expr, out: &mut HashSet<String>) {
    match t {
        Expr::Name(n) => {
            out.insert(n.id.to_string());
        }
        Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
            for e in elts {
                target_names(e, out);
            }
        }
        Expr::Starred(s) => target_names(&s.value, out),
        _ => {}
    }
}
