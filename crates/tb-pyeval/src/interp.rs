//! The evaluator: statements and expressions of the parsed test file, with Python's scoping
//! (function locals, comprehension scopes, globals, builtins) and exceptions.

// The test file's code reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;
use std::sync::Arc;

use ruff_python_ast::{
    self as ast, BoolOp, CmpOp, Expr, InterpolatedStringElement, Number, Stmt, UnaryOp,
};
use ruff_text_size::Ranged;

use crate::builtins;
use crate::repr::{repr, to_str};
use crate::value::{Builtin, Dict, FastState, Kwargs, Module, Set, TypeKind, Value, py_eq};
use crate::{Judge, LineIndex};

pub use crate::budget::MAX_EVAL_DEPTH;

/// The exception kinds a test body can raise.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExcKind {
    AssertionError,
    KeyError,
    IndexError,
    TypeError,
    ValueError,
    AttributeError,
    NameError,
    UnboundLocalError,
    ZeroDivisionError,
    OverflowError,
    RecursionError,
    NotImplementedError,
    StopIteration,
    /// The run built more than its memory budget (never caught by `except`).
    MemoryError,
    /// The run passed its time budget (never caught by `except`).
    TimeoutError,
    Exception,
    /// The judge model failed (`JudgeException` in the reference).
    JudgeException,
}

impl ExcKind {
    pub fn name(self) -> &'static str {
        match self {
            ExcKind::AssertionError => "AssertionError",
            ExcKind::KeyError => "KeyError",
            ExcKind::IndexError => "IndexError",
            ExcKind::TypeError => "TypeError",
            ExcKind::ValueError => "ValueError",
            ExcKind::AttributeError => "AttributeError",
            ExcKind::NameError => "NameError",
            ExcKind::UnboundLocalError => "UnboundLocalError",
            ExcKind::ZeroDivisionError => "ZeroDivisionError",
            ExcKind::OverflowError => "OverflowError",
            ExcKind::RecursionError => "RecursionError",
            ExcKind::NotImplementedError => "NotImplementedError",
            ExcKind::StopIteration => "StopIteration",
            ExcKind::MemoryError => "MemoryError",
            ExcKind::TimeoutError => "TimeoutError",
            ExcKind::Exception => "Exception",
            ExcKind::JudgeException => "JudgeException",
        }
    }
    /// A budget of the run ran out: no handler catches it.
    pub fn is_budget(self) -> bool {
        matches!(self, ExcKind::MemoryError | ExcKind::TimeoutError)
    }
    fn from_name(name: &str) -> Option<ExcKind> {
        Some(match name {
            "AssertionError" => ExcKind::AssertionError,
            "KeyError" => ExcKind::KeyError,
            "IndexError" => ExcKind::IndexError,
            "TypeError" => ExcKind::TypeError,
            "ValueError" => ExcKind::ValueError,
            "AttributeError" => ExcKind::AttributeError,
            "NameError" => ExcKind::NameError,
            "ZeroDivisionError" => ExcKind::ZeroDivisionError,
            "OverflowError" => ExcKind::OverflowError,
            "RecursionError" => ExcKind::RecursionError,
            "NotImplementedError" => ExcKind::NotImplementedError,
            "Exception" => ExcKind::Exception,
            _ => return None,
        })
    }
    /// Whether `except <handler>` catches this kind.
    fn caught_by(self, handler: ExcKind) -> bool {
        if self.is_budget() {
            return false;
        }
        handler == self
            || handler == ExcKind::Exception
            || (handler == ExcKind::NameError && self == ExcKind::UnboundLocalError)
    }
}

/// A raised exception: its kind, `str(e)`, and the line it was raised on.
#[derive(Clone, Debug)]
pub struct PyExc {
    pub kind: ExcKind,
    pub message: String,
    pub line: u32,
}

impl PyExc {
    /// The reference's `"<ExceptionType>: <message>"` (just the type when the message is empty).
    pub fn display(&self) -> String {
        if self.message.is_empty() {
            self.kind.name().to_string()
        } else {
            format!("{}: {}", self.kind.name(), self.message)
        }
    }
}

/// Why evaluation left a block.
pub enum Flow {
    Exc(PyExc),
    Return(Value),
    Break,
    Continue,
}

pub type R<T> = Result<T, Flow>;

/// Raises `kind(message)` (line filled in by the statement that catches it on the way out).
pub fn raise<T>(kind: ExcKind, message: impl Into<String>) -> R<T> {
    Err(Flow::Exc(PyExc {
        kind,
        message: message.into(),
        line: 0,
    }))
}

/// A user function (a `def` or a `lambda`).
#[derive(Debug)]
pub struct Function {
    pub name: String,
    pub def: FnDef,
    /// Evaluated default values, by parameter position.
    pub defaults: Vec<Option<Value>>,
    /// Names local to the function body (assigned anywhere in it).
    pub local_names: Arc<HashSet<String>>,
    pub env: Rc<Env>,
}

impl Function {
    /// Moves out the values this function holds alone (its defaults, and the variables of
    /// the scope it closes over when no one else holds it), to drop them without recursing.
    pub(crate) fn drain_into(&mut self, stack: &mut Vec<Value>) {
        stack.extend(std::mem::take(&mut self.defaults).into_iter().flatten());
        if let Some(env) = Rc::get_mut(&mut self.env) {
            stack.extend(std::mem::take(env.vars.get_mut()).into_values());
        }
    }
}

impl Drop for Function {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.drain_into(&mut stack);
        if !stack.is_empty() {
            crate::value::drop_values(stack);
        }
    }
}

#[derive(Debug)]
pub enum FnDef {
    Def(Arc<ast::StmtFunctionDef>),
    Lambda(Rc<ast::ExprLambda>),
}

impl FnDef {
    fn parameters(&self) -> Option<&ast::Parameters> {
        match self {
            FnDef::Def(d) => Some(&d.parameters),
            FnDef::Lambda(l) => l.parameters.as_deref(),
        }
    }
}

/// A scope: the module (globals), a function call's locals, or a comprehension's.
#[derive(Debug)]
pub struct Env {
    pub vars: RefCell<HashMap<String, Value, FastState>>,
    /// For function scopes: names that are local (read before assignment is an error).
    pub local_names: Option<Arc<HashSet<String>>>,
    pub parent: Option<Rc<Env>>,
}

impl Env {
    pub fn module() -> Rc<Env> {
        Rc::new(Env {
            vars: RefCell::new(HashMap::default()),
            local_names: None,
            parent: None,
        })
    }
    fn child(parent: &Rc<Env>, local_names: Option<Arc<HashSet<String>>>) -> Rc<Env> {
        Rc::new(Env {
            vars: RefCell::new(HashMap::default()),
            local_names,
            parent: Some(parent.clone()),
        })
    }
}

/// The top-level defs of a parsed file, made once and shared by every run of its tests: each
/// def (by the address of its statement in the file) and its local names (by the address of
/// the shared def).
#[derive(Debug, Default)]
pub struct SharedDefs {
    defs: HashMap<usize, Arc<ast::StmtFunctionDef>, FastState>,
    locals: HashMap<usize, Arc<HashSet<String>>, FastState>,
}

impl SharedDefs {
    /// Shares the def `stmt` (a statement of the file, which must outlive its runs).
    pub fn add(&mut self, stmt: &ast::StmtFunctionDef) {
        let def = Arc::new(stmt.clone());
        let names = local_names(&FnDef::Def(def.clone()));
        self.locals
            .insert(Arc::as_ptr(&def).cast::<u8>() as usize, Arc::new(names));
        self.defs.insert(std::ptr::from_ref(stmt) as usize, def);
    }
}

/// The names local to a function: its parameters and every name assigned in its body.
fn local_names(def: &FnDef) -> HashSet<String> {
    let mut names = HashSet::new();
    if let Some(params) = def.parameters() {
        for p in &params.args {
            names.insert(p.parameter.name.id.to_string());
        }
    }
    if let FnDef::Def(d) = def {
        crate::check::collect_assigned(&d.body, &mut names);
    }
    names
}

/// One evaluation of a test file.
pub struct Interp<'a> {
    pub judge: &'a mut dyn Judge,
    pub lines: &'a LineIndex,
    pub prints: String,
    /// Nested expressions and blocks being evaluated.
    depth: usize,
    /// Python call frames (the module's counts as one, as in CPython).
    calls: usize,
    recursion_limit: usize,
    clock: crate::budget::Clock,
    /// Cache of local-name sets per function definition (by address of the def).
    locals_cache: HashMap<usize, Arc<HashSet<String>>>,
    /// Top-level defs, shared instead of cloned.
    shared: Option<&'a SharedDefs>,
}

impl<'a> Interp<'a> {
    pub fn new(judge: &'a mut dyn Judge, lines: &'a LineIndex) -> Self {
        Interp {
            judge,
            lines,
            prints: String::new(),
            depth: 0,
            calls: 1,
            recursion_limit: crate::budget::DEFAULT_RECURSION_LIMIT,
            clock: crate::budget::Clock::new(Some(crate::budget::DEFAULT_TIME)),
            locals_cache: HashMap::new(),
            shared: None,
        }
    }

    /// Evaluates within these budgets (time counted from now).
    #[must_use]
    pub fn with_limits(mut self, limits: &crate::budget::Limits) -> Self {
        self.recursion_limit = limits.recursion_limit;
        self.clock = crate::budget::Clock::new(limits.time);
        self
    }

    /// Adds printed text to the print buffer (counted against the memory budget).
    pub(crate) fn print(&mut self, text: &str) -> R<()> {
        crate::budget::fits(text.len())?;
        crate::budget::charge(text.len());
        self.prints.push_str(text);
        Ok(())
    }

    /// The exception a budget left pending (a walk over values too deep, memory spent).
    pub fn pending(&self) -> Option<Flow> {
        crate::budget::pending()
    }

    /// Evaluates with the top-level defs of the file shared (not cloned per run).
    #[must_use]
    pub fn with_shared(mut self, shared: &'a SharedDefs) -> Self {
        self.shared = Some(shared);
        self
    }

    fn line_of(&self, node: &impl Ranged) -> u32 {
        self.lines.line(node.range().start().to_usize())
    }

    // ---- statements ----

    pub fn exec_block(&mut self, body: &[Stmt], env: &Rc<Env>) -> R<()> {
        for stmt in body {
            self.exec(stmt, env).map_err(|f| self.locate(f, stmt))?;
        }
        Ok(())
    }

    /// Fills in the line of an exception raised by `stmt` (the innermost statement wins).
    fn locate(&self, flow: Flow, stmt: &Stmt) -> Flow {
        match flow {
            Flow::Exc(mut e) if e.line == 0 => {
                e.line = self.line_of(stmt);
                Flow::Exc(e)
            }
            other => other,
        }
    }

    fn exec(&mut self, stmt: &Stmt, env: &Rc<Env>) -> R<()> {
        match stmt {
            Stmt::Expr(s) => {
                self.eval(&s.value, env)?;
            }
            Stmt::Pass(_) => {}
            Stmt::Break(_) => return Err(Flow::Break),
            Stmt::Continue(_) => return Err(Flow::Continue),
            Stmt::Return(s) => {
                let v = match &s.value {
                    Some(e) => self.eval(e, env)?,
                    None => Value::None,
                };
                return Err(Flow::Return(v));
            }
            Stmt::Assign(s) => {
                let v = self.eval(&s.value, env)?;
                for t in &s.targets {
                    self.assign(t, v.clone(), env)?;
                }
            }
            Stmt::AnnAssign(s) => {
                if let Some(value) = &s.value {
                    let v = self.eval(value, env)?;
                    self.assign(&s.target, v, env)?;
                }
            }
            Stmt::AugAssign(s) => self.aug_assign(s, env)?,
            Stmt::If(s) => {
                if self.eval(&s.test, env)?.truthy() {
                    self.exec_block(&s.body, env)?;
                } else {
                    for clause in &s.elif_else_clauses {
                        let take = match &clause.test {
                            Some(t) => self.eval(t, env)?.truthy(),
                            None => true,
                        };
                        if take {
                            self.exec_block(&clause.body, env)?;
                            break;
                        }
                    }
                }
            }
            Stmt::For(s) => {
                let items = self.for_iter(&s.iter, env)?;
                let mut broke = false;
                for item in items {
                    self.assign(&s.target, item, env)?;
                    if self.loop_body(&s.body, env)? {
                        broke = true;
                        break;
                    }
                }
                if !broke {
                    self.exec_block(&s.orelse, env)?;
                }
            }
            Stmt::While(s) => {
                let mut broke = false;
                while self.eval(&s.test, env)?.truthy() {
                    if self.loop_body(&s.body, env)? {
                        broke = true;
                        break;
                    }
                }
                if !broke {
                    self.exec_block(&s.orelse, env)?;
                }
            }
            Stmt::Assert(s) => {
                if !self.eval(&s.test, env)?.truthy() {
                    let message = match &s.msg {
                        Some(m) => to_str(&self.eval(m, env)?),
                        None => String::new(),
                    };
                    return raise(ExcKind::AssertionError, message);
                }
            }
            Stmt::FunctionDef(def) => {
                let shared = self
                    .shared
                    .and_then(|s| s.defs.get(&(std::ptr::from_ref(def) as usize)));
                let rc = match shared {
                    Some(rc) => rc.clone(),
                    None => Arc::new(def.clone()),
                };
                let f = self.make_function(def.name.id.to_string(), FnDef::Def(rc), env)?;
                env.vars.borrow_mut().insert(def.name.id.to_string(), f);
            }
            Stmt::Import(s) => {
                for alias in &s.names {
                    let name = alias.name.id.as_str();
                    let module = match name {
                        "json" => Value::Module(Module::Json),
                        _ => {
                            return raise(
                                ExcKind::NotImplementedError,
                                format!("import of module {name:?} is not supported"),
                            );
                        }
                    };
                    let bind = alias.asname.as_ref().map_or(name, |a| a.id.as_str());
                    env.vars.borrow_mut().insert(bind.to_string(), module);
                }
            }
            Stmt::ImportFrom(s) => {
                let module = s.module.as_ref().map_or("", |m| m.id.as_str());
                for alias in &s.names {
                    let name = alias.name.id.as_str();
                    let value = import_from(module, name)?;
                    let bind = alias.asname.as_ref().map_or(name, |a| a.id.as_str());
                    env.vars.borrow_mut().insert(bind.to_string(), value);
                }
            }
            Stmt::Raise(s) => {
                let Some(exc) = &s.exc else {
                    return raise(ExcKind::NotImplementedError, "bare raise is not supported");
                };
                return Err(Flow::Exc(self.make_exception(exc, env)?));
            }
            Stmt::Try(s) => return self.exec_try(s, env),
            other => {
                return raise(
                    ExcKind::NotImplementedError,
                    format!(
                        "statement not supported: {}",
                        crate::check::stmt_name(other)
                    ),
                );
            }
        }
        Ok(())
    }

    /// Runs one round of a loop body: `Ok(true)` when it breaks out of the loop.
    fn loop_body(&mut self, body: &[Stmt], env: &Rc<Env>) -> R<bool> {
        self.clock.tick()?;
        match self.exec_block(body, env) {
            Ok(()) | Err(Flow::Continue) => Ok(false),
            Err(Flow::Break) => Ok(true),
            Err(other) => Err(other),
        }
    }

    fn exec_try(&mut self, s: &ast::StmtTry, env: &Rc<Env>) -> R<()> {
        let result = match self.exec_block(&s.body, env) {
            Err(Flow::Exc(e)) => {
                let mut handled = None;
                for handler in &s.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = handler;
                    let catches = match &h.type_ {
                        None => true,
                        Some(t) => self.handler_kinds(t)?.iter().any(|k| e.kind.caught_by(*k)),
                    };
                    if catches {
                        if let Some(name) = &h.name {
                            let obj = crate::value::Object::new_value(
                                e.kind.name(),
                                [("args", Value::tuple(vec![Value::str(&e.message)]))],
                            );
                            env.vars.borrow_mut().insert(name.id.to_string(), obj);
                            // `str(e)` is looked up through the object's class name.
                            env.vars
                                .borrow_mut()
                                .insert(format!("\0exc:{}", name.id), Value::str(&e.message));
                        }
                        handled = Some(self.exec_block(&h.body, env));
                        // As in CPython, the name is unbound when the handler ends.
                        if let Some(name) = &h.name {
                            let mut vars = env.vars.borrow_mut();
                            vars.remove(name.id.as_str());
                            vars.remove(&format!("\0exc:{}", name.id));
                        }
                        break;
                    }
                }
                match handled {
                    Some(r) => r,
                    None => Err(Flow::Exc(e)),
                }
            }
            Ok(()) => self.exec_block(&s.orelse, env),
            other => other,
        };
        if !s.finalbody.is_empty() {
            self.exec_block(&s.finalbody, env)?;
        }
        result
    }

    fn handler_kinds(&mut self, t: &Expr) -> R<Vec<ExcKind>> {
        let names: Vec<&Expr> = match t {
            Expr::Tuple(tup) => tup.elts.iter().collect(),
            other => vec![other],
        };
        let mut out = Vec::new();
        for n in names {
            let Expr::Name(name) = n else {
                return raise(
                    ExcKind::NotImplementedError,
                    "except clause must name exception classes",
                );
            };
            match ExcKind::from_name(name.id.as_str()) {
                Some(k) => out.push(k),
                None => {
                    return raise(
                        ExcKind::NotImplementedError,
                        format!("exception class {} is not supported", name.id),
                    );
                }
            }
        }
        Ok(out)
    }

    fn make_exception(&mut self, exc: &Expr, env: &Rc<Env>) -> R<PyExc> {
        let (name, args): (&str, Vec<Value>) = match exc {
            Expr::Name(n) => (n.id.as_str(), Vec::new()),
            Expr::Call(c) => {
                let Expr::Name(n) = &*c.func else {
                    return raise(
                        ExcKind::NotImplementedError,
                        "raise of a computed exception is not supported",
                    );
                };
                let mut args = Vec::new();
                for a in &c.arguments.args {
                    args.push(self.eval(a, env)?);
                }
                (n.id.as_str(), args)
            }
            _ => {
                return raise(
                    ExcKind::NotImplementedError,
                    "raise of a computed exception is not supported",
                );
            }
        };
        let Some(kind) = ExcKind::from_name(name) else {
            return raise(
                ExcKind::NotImplementedError,
                format!("exception class {name} is not supported"),
            );
        };
        let message = match args.as_slice() {
            [] => String::new(),
            [one] if kind == ExcKind::KeyError => repr(one),
            [one] => to_str(one),
            many => repr(&Value::tuple(many.to_vec())),
        };
        Ok(PyExc {
            kind,
            message,
            line: 0,
        })
    }

    fn make_function(&mut self, name: String, def: FnDef, env: &Rc<Env>) -> R<Value> {
        let mut defaults = Vec::new();
        if let Some(params) = def.parameters() {
            if params.vararg.is_some()
                || params.kwarg.is_some()
                || !params.kwonlyargs.is_empty()
                || !params.posonlyargs.is_empty()
            {
                return raise(
                    ExcKind::NotImplementedError,
                    "only plain parameters (name, name=default) are supported",
                );
            }
            for p in &params.args {
                defaults.push(match &p.default {
                    Some(d) => Some(self.eval(d, env)?),
                    None => None,
                });
            }
        }
        let key = match &def {
            FnDef::Def(d) => Arc::as_ptr(d).cast::<u8>() as usize,
            FnDef::Lambda(l) => Rc::as_ptr(l).cast::<u8>() as usize,
        };
        let cached = self
            .shared
            .and_then(|s| s.locals.get(&key))
            .or_else(|| self.locals_cache.get(&key));
        let local_names = if let Some(l) = cached {
            l.clone()
        } else {
            let rc = Arc::new(local_names(&def));
            self.locals_cache.insert(key, rc.clone());
            rc
        };
        Ok(Value::Func(Rc::new(Function {
            name,
            def,
            defaults,
            local_names,
            env: env.clone(),
        })))
    }

    // ---- assignment ----

    fn assign(&mut self, target: &Expr, value: Value, env: &Rc<Env>) -> R<()> {
        match target {
            Expr::Name(n) => {
                // Rebinding (every round of a loop) allocates no new name.
                let mut vars = env.vars.borrow_mut();
                match vars.get_mut(n.id.as_str()) {
                    Some(slot) => *slot = value,
                    None => {
                        vars.insert(n.id.to_string(), value);
                    }
                }
            }
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                let items = builtins::iterate(&value)?;
                if items.len() != elts.len() {
                    return if items.len() > elts.len() {
                        raise(
                            ExcKind::ValueError,
                            format!("too many values to unpack (expected {})", elts.len()),
                        )
                    } else {
                        raise(
                            ExcKind::ValueError,
                            format!(
                                "not enough values to unpack (expected {}, got {})",
                                elts.len(),
                                items.len()
                            ),
                        )
                    };
                }
                for (t, v) in elts.iter().zip(items) {
                    self.assign(t, v, env)?;
                }
            }
            Expr::Subscript(s) => {
                let container = self.eval(&s.value, env)?;
                let index = self.eval(&s.slice, env)?;
                builtins::set_item(&container, index, value)?;
            }
            Expr::Attribute(a) => {
                let obj = self.eval(&a.value, env)?;
                match obj {
                    Value::Object(o) => {
                        o.attrs
                            .borrow_mut()
                            .insert(Rc::from(a.attr.id.as_str()), value);
                    }
                    other => {
                        return raise(
                            ExcKind::AttributeError,
                            format!(
                                "'{}' object attribute '{}' is read-only",
                                other.type_name(),
                                a.attr.id
                            ),
                        );
                    }
                }
            }
            _ => {
                return raise(
                    ExcKind::NotImplementedError,
                    "assignment target not supported",
                );
            }
        }
        Ok(())
    }

    fn aug_assign(&mut self, s: &ast::StmtAugAssign, env: &Rc<Env>) -> R<()> {
        let rhs = self.eval(&s.value, env)?;
        match &*s.target {
            Expr::Name(n) => {
                let cur = self.lookup(n.id.as_str(), env)?;
                let new = builtins::inplace_op(s.op, cur, rhs)?;
                env.vars.borrow_mut().insert(n.id.to_string(), new);
            }
            Expr::Subscript(sub) => {
                let container = self.eval(&sub.value, env)?;
                let index = self.eval(&sub.slice, env)?;
                let cur = builtins::get_item(&container, &index)?;
                let new = builtins::inplace_op(s.op, cur, rhs)?;
                builtins::set_item(&container, index, new)?;
            }
            _ => {
                return raise(
                    ExcKind::NotImplementedError,
                    "augmented assignment target not supported",
                );
            }
        }
        Ok(())
    }

    // ---- names ----

    pub fn lookup(&self, name: &str, env: &Rc<Env>) -> R<Value> {
        let mut cur = Some(env);
        while let Some(e) = cur {
            if let Some(v) = e.vars.borrow().get(name) {
                return Ok(v.clone());
            }
            if e.local_names.as_ref().is_some_and(|l| l.contains(name)) {
                return raise(
                    ExcKind::UnboundLocalError,
                    format!(
                        "cannot access local variable '{name}' where it is not associated with a value"
                    ),
                );
            }
            cur = e.parent.as_ref();
        }
        match builtins::builtin_name(name) {
            Some(v) => Ok(v),
            None => raise(ExcKind::NameError, format!("name '{name}' is not defined")),
        }
    }

    // ---- expressions ----

    pub fn eval(&mut self, expr: &Expr, env: &Rc<Env>) -> R<Value> {
        self.clock.tick()?;
        if self.depth >= MAX_EVAL_DEPTH {
            return raise(
                ExcKind::RecursionError,
                format!(
                    "maximum recursion depth exceeded (tb's limit of {MAX_EVAL_DEPTH} nested \
                     expressions and blocks)"
                ),
            );
        }
        self.depth += 1;
        let r = self.eval_inner(expr, env);
        self.depth -= 1;
        // A walk over values that went too deep, or values built past the memory budget,
        // raise here, at the expression that did it.
        match crate::budget::pending() {
            Some(flow) => Err(flow),
            None => r,
        }
    }

    fn eval_inner(&mut self, expr: &Expr, env: &Rc<Env>) -> R<Value> {
        Ok(match expr {
            Expr::NoneLiteral(_) => Value::None,
            Expr::BooleanLiteral(b) => Value::Bool(b.value),
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => match i.as_i64() {
                    Some(v) => Value::Int(v),
                    None => {
                        return raise(
                            ExcKind::OverflowError,
                            format!("integer literal {i} is too large"),
                        );
                    }
                },
                Number::Float(f) => Value::Float(*f),
                Number::Complex { .. } => {
                    return raise(
                        ExcKind::NotImplementedError,
                        "complex numbers are not supported",
                    );
                }
            },
            Expr::StringLiteral(s) => Value::str(s.value.to_str()),
            Expr::FString(f) => self.eval_fstring(f, env)?,
            Expr::Name(n) => self.lookup(n.id.as_str(), env)?,
            Expr::List(l) => {
                let mut items = Vec::with_capacity(l.elts.len());
                for e in &l.elts {
                    items.push(self.eval(e, env)?);
                }
                Value::list(items)
            }
            Expr::Tuple(t) => {
                let mut items = Vec::with_capacity(t.elts.len());
                for e in &t.elts {
                    items.push(self.eval(e, env)?);
                }
                Value::tuple(items)
            }
            Expr::Set(s) => {
                let mut set = Set::default();
                for e in &s.elts {
                    let v = self.eval(e, env)?;
                    let k = builtins::hash_key(&v)?;
                    set.insert(k, v);
                }
                Value::set(set)
            }
            Expr::Dict(d) => {
                let mut dict = Dict::default();
                for item in &d.items {
                    if let Some(k) = &item.key {
                        let kv = self.eval(k, env)?;
                        let v = self.eval(&item.value, env)?;
                        dict.insert(builtins::hash_key(&kv)?, kv, v);
                    } else {
                        // `{**other}`
                        let other = self.eval(&item.value, env)?;
                        let Value::Dict(o) = other else {
                            return raise(
                                ExcKind::TypeError,
                                format!("'{}' object is not a mapping", other.type_name()),
                            );
                        };
                        for (k, (kv, v)) in o.borrow().map() {
                            dict.insert(k.clone(), kv.clone(), v.clone());
                        }
                    }
                }
                Value::dict(dict)
            }
            Expr::BoolOp(b) => {
                let mut last = Value::None;
                for (i, v) in b.values.iter().enumerate() {
                    last = self.eval(v, env)?;
                    let t = last.truthy();
                    let stop = match b.op {
                        BoolOp::And => !t,
                        BoolOp::Or => t,
                    };
                    if stop || i + 1 == b.values.len() {
                        break;
                    }
                }
                last
            }
            Expr::UnaryOp(u) => {
                let v = self.eval(&u.operand, env)?;
                match u.op {
                    UnaryOp::Not => Value::Bool(!v.truthy()),
                    UnaryOp::USub => builtins::negate(&v)?,
                    UnaryOp::UAdd => match v {
                        Value::Bool(b) => Value::Int(i64::from(b)),
                        Value::Int(_) | Value::Float(_) => v,
                        other => {
                            return raise(
                                ExcKind::TypeError,
                                format!("bad operand type for unary +: '{}'", other.type_name()),
                            );
                        }
                    },
                    UnaryOp::Invert => match v {
                        Value::Int(i) => Value::Int(!i),
                        Value::Bool(b) => Value::Int(!i64::from(b)),
                        other => {
                            return raise(
                                ExcKind::TypeError,
                                format!("bad operand type for unary ~: '{}'", other.type_name()),
                            );
                        }
                    },
                }
            }
            Expr::BinOp(b) => {
                let l = self.eval(&b.left, env)?;
                let r = self.eval(&b.right, env)?;
                builtins::binary_op(b.op, &l, &r)?
            }
            Expr::Compare(c) => {
                let mut left = self.eval(&c.left, env)?;
                for (op, right_e) in c.ops.iter().zip(c.comparators.iter()) {
                    let right = self.eval(right_e, env)?;
                    if !compare(*op, &left, &right)? {
                        return Ok(Value::Bool(false));
                    }
                    left = right;
                }
                Value::Bool(true)
            }
            Expr::If(i) => {
                if self.eval(&i.test, env)?.truthy() {
                    self.eval(&i.body, env)?
                } else {
                    self.eval(&i.orelse, env)?
                }
            }
            Expr::Attribute(a) => {
                let obj = self.eval(&a.value, env)?;
                builtins::get_attr(&obj, a.attr.id.as_str())?
            }
            Expr::Subscript(s) => {
                let obj = self.eval(&s.value, env)?;
                if let Expr::Slice(sl) = &*s.slice {
                    let lower = self.eval_opt(sl.lower.as_deref(), env)?;
                    let upper = self.eval_opt(sl.upper.as_deref(), env)?;
                    let step = self.eval_opt(sl.step.as_deref(), env)?;
                    builtins::slice(&obj, lower, upper, step)?
                } else {
                    let index = self.eval(&s.slice, env)?;
                    builtins::get_item(&obj, &index)?
                }
            }
            Expr::Call(c) => self.eval_call(c, env)?,
            Expr::ListComp(c) => {
                Value::list_counted(self.comprehension_values(&c.generators, &c.elt, env)?)
            }
            // Generators are evaluated eagerly: the test files only consume them whole
            // (`all(...)`, `any(...)`, `sum(...)`, `set(...)`).
            Expr::Generator(c) => {
                Value::list_counted(self.comprehension_values(&c.generators, &c.elt, env)?)
            }
            Expr::SetComp(c) => {
                let mut out = Set::default();
                self.comprehension(&c.generators, env, &mut |me, scope| {
                    let v = me.eval(&c.elt, scope)?;
                    out.insert(builtins::hash_key(&v)?, v);
                    Ok(())
                })?;
                Value::set(out)
            }
            Expr::DictComp(c) => {
                let mut out = Dict::default();
                self.comprehension(&c.generators, env, &mut |me, scope| {
                    let k = me.eval(&c.key, scope)?;
                    let v = me.eval(&c.value, scope)?;
                    out.insert(builtins::hash_key(&k)?, k, v);
                    Ok(())
                })?;
                Value::dict(out)
            }
            Expr::Lambda(l) => {
                self.make_function("<lambda>".into(), FnDef::Lambda(Rc::new(l.clone())), env)?
            }
            Expr::Starred(_) => {
                return raise(
                    ExcKind::NotImplementedError,
                    "starred expression is not supported here",
                );
            }
            other => {
                return raise(
                    ExcKind::NotImplementedError,
                    format!(
                        "expression not supported: {}",
                        crate::check::expr_name(other)
                    ),
                );
            }
        })
    }

    fn eval_opt(&mut self, e: Option<&Expr>, env: &Rc<Env>) -> R<Option<Value>> {
        match e {
            Some(e) => Ok(Some(self.eval(e, env)?)),
            None => Ok(None),
        }
    }

    /// The values of a list comprehension or generator expression, in order.
    fn comprehension_values(
        &mut self,
        generators: &[ast::Comprehension],
        elt: &Expr,
        env: &Rc<Env>,
    ) -> R<Vec<Value>> {
        let mut out = Vec::new();
        self.comprehension(generators, env, &mut |me, scope| {
            let v = me.eval(elt, scope)?;
            builtins::grow(1)?;
            out.push(v);
            Ok(())
        })?;
        Ok(out)
    }

    /// Runs the generators of a comprehension in their own scope, calling `body` for each
    /// innermost binding. The first iterable is evaluated in the enclosing scope, as in Python.
    fn comprehension(
        &mut self,
        generators: &[ast::Comprehension],
        env: &Rc<Env>,
        body: &mut dyn FnMut(&mut Self, &Rc<Env>) -> R<()>,
    ) -> R<()> {
        let scope = Env::child(env, None);
        let Some(first) = generators.first() else {
            return Ok(());
        };
        let items = self.for_iter(&first.iter, env)?;
        self.comp_level(generators, 0, items, &scope, body)
    }

    /// What `for ... in <iter>` walks: `range(...)` lazily, anything else by its items.
    fn for_iter(&mut self, iter: &Expr, env: &Rc<Env>) -> R<builtins::ForIter> {
        if let Expr::Call(c) = iter
            && c.arguments.keywords.is_empty()
            && !c.arguments.args.iter().any(Expr::is_starred_expr)
        {
            let func = self.eval(&c.func, env)?;
            if matches!(func, Value::Builtin(Builtin::Range)) {
                let mut args = Vec::with_capacity(c.arguments.args.len());
                for a in &c.arguments.args {
                    args.push(self.eval(a, env)?);
                }
                let (next, stop, step) = builtins::range_bounds(&args)?;
                return Ok(builtins::ForIter::Range {
                    next,
                    stop,
                    step,
                    done: false,
                });
            }
            let v = self.eval_call_of(func, c, env)?;
            return Ok(builtins::ForIter::Items(builtins::iterate(&v)?.into_iter()));
        }
        let v = self.eval(iter, env)?;
        Ok(builtins::ForIter::Items(builtins::iterate(&v)?.into_iter()))
    }

    fn comp_level(
        &mut self,
        generators: &[ast::Comprehension],
        level: usize,
        items: builtins::ForIter,
        scope: &Rc<Env>,
        body: &mut dyn FnMut(&mut Self, &Rc<Env>) -> R<()>,
    ) -> R<()> {
        let Some(g) = generators.get(level) else {
            return Ok(());
        };
        'items: for item in items {
            self.assign(&g.target, item, scope)?;
            for cond in &g.ifs {
                if !self.eval(cond, scope)?.truthy() {
                    continue 'items;
                }
            }
            if let Some(next) = generators.get(level + 1) {
                let items = self.for_iter(&next.iter, scope)?;
                self.comp_level(generators, level + 1, items, scope, body)?;
            } else {
                body(self, scope)?;
            }
        }
        Ok(())
    }

    fn eval_fstring(&mut self, f: &ast::ExprFString, env: &Rc<Env>) -> R<Value> {
        let mut out = String::new();
        for part in &f.value {
            match part {
                ast::FStringPart::Literal(lit) => out.push_str(lit.as_str()),
                ast::FStringPart::FString(fs) => {
                    for el in &fs.elements {
                        match el {
                            InterpolatedStringElement::Literal(l) => out.push_str(&l.value),
                            InterpolatedStringElement::Interpolation(i) => {
                                let v = self.eval(&i.expression, env)?;
                                if let Some(debug) = &i.debug_text {
                                    out.push_str(&debug.leading);
                                    out.push_str(&self.lines.slice(i.expression.range()));
                                    out.push_str(&debug.trailing);
                                }
                                let text = match i.conversion {
                                    ast::ConversionFlag::Repr => repr(&v),
                                    ast::ConversionFlag::Ascii => builtins::ascii(&repr(&v)),
                                    ast::ConversionFlag::Str => to_str(&v),
                                    ast::ConversionFlag::None
                                        if i.debug_text.is_some() && i.format_spec.is_none() =>
                                    {
                                        repr(&v)
                                    }
                                    ast::ConversionFlag::None => to_str(&v),
                                };
                                if let Some(spec) = &i.format_spec {
                                    let mut spec_text = String::new();
                                    for el in &spec.elements {
                                        match el {
                                            InterpolatedStringElement::Literal(l) => {
                                                spec_text.push_str(&l.value);
                                            }
                                            InterpolatedStringElement::Interpolation(_) => {
                                                return raise(
                                                    ExcKind::NotImplementedError,
                                                    "nested f-string format specs are not supported",
                                                );
                                            }
                                        }
                                    }
                                    let formatted = if i.conversion == ast::ConversionFlag::None {
                                        builtins::format_value(&v, &spec_text)?
                                    } else {
                                        builtins::format_value(&Value::str(&text), &spec_text)?
                                    };
                                    out.push_str(&formatted);
                                } else {
                                    out.push_str(&text);
                                }
                            }
                        }
                    }
                }
            }
        }
        Ok(Value::str(&out))
    }

    fn eval_call(&mut self, c: &ast::ExprCall, env: &Rc<Env>) -> R<Value> {
        let func = self.eval(&c.func, env)?;
        self.eval_call_of(func, c, env)
    }

    /// A call whose function is already evaluated.
    fn eval_call_of(&mut self, func: Value, c: &ast::ExprCall, env: &Rc<Env>) -> R<Value> {
        let mut args = Vec::with_capacity(c.arguments.args.len());
        for a in &c.arguments.args {
            if let Expr::Starred(st) = a {
                let v = self.eval(&st.value, env)?;
                args.extend(builtins::iterate(&v)?);
            } else {
                args.push(self.eval(a, env)?);
            }
        }
        let mut kwargs = Vec::new();
        for k in &c.arguments.keywords {
            let v = self.eval(&k.value, env)?;
            if let Some(name) = &k.arg {
                kwargs.push((name.id.to_string(), v));
            } else {
                let Value::Dict(d) = v else {
                    return raise(ExcKind::TypeError, "argument after ** must be a mapping");
                };
                for (kv, vv) in d.borrow().map().values() {
                    kwargs.push((to_str(kv), vv.clone()));
                }
            }
        }
        self.call(&func, args, kwargs)
    }

    /// Calls any callable value.
    pub fn call(&mut self, func: &Value, args: Vec<Value>, kwargs: Kwargs) -> R<Value> {
        match func {
            Value::Func(f) => self.call_function(f, args, kwargs),
            Value::Builtin(b) => builtins::call_builtin(self, *b, args, kwargs),
            Value::Type(t) => builtins::construct(self, *t, args, kwargs),
            Value::Method(recv, name) => builtins::call_method(self, recv, name, args, kwargs),
            other => raise(
                ExcKind::TypeError,
                format!("'{}' object is not callable", other.type_name()),
            ),
        }
    }

    fn call_function(&mut self, f: &Rc<Function>, args: Vec<Value>, kwargs: Kwargs) -> R<Value> {
        if self.calls >= self.recursion_limit {
            return raise(ExcKind::RecursionError, "maximum recursion depth exceeded");
        }
        self.calls += 1;
        let r = self.call_function_inner(f, args, kwargs);
        self.calls -= 1;
        r
    }

    fn call_function_inner(
        &mut self,
        f: &Rc<Function>,
        args: Vec<Value>,
        kwargs: Kwargs,
    ) -> R<Value> {
        let scope = Env::child(&f.env, Some(f.local_names.clone()));
        let params: Vec<String> = f
            .def
            .parameters()
            .map(|p| {
                p.args
                    .iter()
                    .map(|a| a.parameter.name.id.to_string())
                    .collect()
            })
            .unwrap_or_default();
        if args.len() > params.len() {
            return raise(
                ExcKind::TypeError,
                format!(
                    "{}() takes {} positional argument{} but {} were given",
                    f.name,
                    params.len(),
                    if params.len() == 1 { "" } else { "s" },
                    args.len()
                ),
            );
        }
        let mut bound: Vec<Option<Value>> = vec![None; params.len()];
        for (slot, a) in bound.iter_mut().zip(args) {
            *slot = Some(a);
        }
        for (name, v) in kwargs {
            match params
                .iter()
                .position(|p| *p == name)
                .and_then(|i| bound.get_mut(i))
            {
                Some(slot) if slot.is_none() => *slot = Some(v),
                Some(_) => {
                    return raise(
                        ExcKind::TypeError,
                        format!("{}() got multiple values for argument '{name}'", f.name),
                    );
                }
                None => {
                    return raise(
                        ExcKind::TypeError,
                        format!("{}() got an unexpected keyword argument '{name}'", f.name),
                    );
                }
            }
        }
        for (i, (p, slot)) in params.iter().zip(&mut bound).enumerate() {
            let v = match slot.take() {
                Some(v) => v,
                None => match f.defaults.get(i).cloned().flatten() {
                    Some(d) => d,
                    None => {
                        return raise(
                            ExcKind::TypeError,
                            format!("{}() missing 1 required positional argument: '{p}'", f.name),
                        );
                    }
                },
            };
            scope.vars.borrow_mut().insert(p.clone(), v);
        }
        match &f.def {
            FnDef::Def(d) => match self.exec_block(&d.body, &scope) {
                Ok(()) => Ok(Value::None),
                Err(Flow::Return(v)) => Ok(v),
                Err(Flow::Break | Flow::Continue) => raise(
                    ExcKind::NotImplementedError,
                    "break or continue outside a loop",
                ),
                Err(e) => Err(e),
            },
            FnDef::Lambda(l) => self.eval(&l.body, &scope),
        }
    }
}

fn import_from(module: &str, name: &str) -> R<Value> {
    let v = match (module, name) {
        ("thinkingbox.common" | "thinkingbox.common.chat_types", "TestContext")
        | ("thinkingbox.common" | "thinkingbox.common.judge", "Judge") => {
            Value::Type(TypeKind::Object)
        }
        ("thinkingbox.common" | "thinkingbox.common.chat_types", "Text") => {
            Value::Type(TypeKind::Text)
        }
        (
            "typing",
            "Any" | "Optional" | "List" | "Dict" | "Tuple" | "Set" | "Union" | "Iterable"
            | "Sequence",
        ) => Value::Type(TypeKind::Object),
        ("json", "dumps") => Value::Builtin(Builtin::JsonDumps),
        ("json", "loads") => Value::Builtin(Builtin::JsonLoads),
        _ => {
            return raise(
                ExcKind::NotImplementedError,
                format!("import of {name:?} from {module:?} is not supported"),
            );
        }
    };
    Ok(v)
}

/// One comparison `a <op> b`.
pub fn compare(op: CmpOp, a: &Value, b: &Value) -> R<bool> {
    Ok(match op {
        CmpOp::Eq => py_eq(a, b),
        CmpOp::NotEq => !py_eq(a, b),
        CmpOp::Is => builtins::is_same(a, b),
        CmpOp::IsNot => !builtins::is_same(a, b),
        CmpOp::In => builtins::contains(b, a)?,
        CmpOp::NotIn => !builtins::contains(b, a)?,
        CmpOp::Lt | CmpOp::LtE | CmpOp::Gt | CmpOp::GtE => builtins::order(op, a, b)?,
    })
}
