//! A small evaluator of the constant expressions the tool modules use: literals, names bound
//! to classes, imports and module constants, enum members, `self` attributes set by `__init__`.
//! Anything else is an error naming the file and line.

use crate::SurfaceError;
use crate::source::{ClassRef, Module, Sources, Sym};
use ruff_python_ast::{self as ast, Expr, Number, Stmt, UnaryOp};
use ruff_text_size::Ranged;
use serde_json::{Map, Value};
use std::rc::Rc;

/// How deep names may chain (`a = b`, `b = c`, ...) or values nest before we give up.
const MAX_DEPTH: usize = 64;

/// A Python value, as far as the reader needs one.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    Ellipsis,
    List(Vec<Val>),
    Tuple(Vec<Val>),
    Dict(Vec<(Val, Val)>),
    /// A class defined in the checkout.
    Class(ClassRef),
    /// Something from outside the checkout, by dotted name (`typing.Optional`, `builtins.str`).
    External(String),
    /// A project module.
    Module(ModuleRef),
    /// `EnumClass.MEMBER`: class, member name, value.
    EnumMember(ClassRef, String, Box<Val>),
    /// `Decimal("1.5")`.
    Decimal(String),
    /// The tool instance (`self`) of a class.
    SelfOf(ClassRef),
}

/// A module as a value (`import x`).
#[derive(Clone)]
pub(crate) struct ModuleRef(pub Rc<Module>);

impl std::fmt::Debug for ModuleRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<module {}>", self.0.name)
    }
}

impl Val {
    /// Python truthiness, where the reader knows it.
    pub fn truthy(&self) -> Option<bool> {
        Some(match self {
            Val::None => false,
            Val::Bool(b) => *b,
            Val::Int(i) => *i != 0,
            Val::Float(f) => *f != 0.0,
            Val::Str(s) => !s.is_empty(),
            Val::List(v) | Val::Tuple(v) => !v.is_empty(),
            Val::Dict(v) => !v.is_empty(),
            Val::Ellipsis | Val::Class(_) | Val::Module(_) | Val::SelfOf(_) => true,
            Val::EnumMember(..) => true,
            Val::External(_) | Val::Decimal(_) => return None,
        })
    }

    /// A short name of the value's kind, for errors.
    pub fn kind(&self) -> String {
        match self {
            Val::None => "None".into(),
            Val::Bool(_) => "a bool".into(),
            Val::Int(_) => "an int".into(),
            Val::Float(_) => "a float".into(),
            Val::Str(_) => "a string".into(),
            Val::Ellipsis => "`...`".into(),
            Val::List(_) => "a list".into(),
            Val::Tuple(_) => "a tuple".into(),
            Val::Dict(_) => "a dict".into(),
            Val::Class(c) => format!("class `{}`", c.name()),
            Val::External(n) => format!("`{n}`"),
            Val::Module(m) => format!("module `{}`", m.0.name),
            Val::EnumMember(c, m, _) => format!("`{}.{m}`", c.name()),
            Val::Decimal(_) => "a Decimal".into(),
            Val::SelfOf(_) => "`self`".into(),
        }
    }

    /// The value as pydantic's `to_jsonable_python` gives it (dict keys in their order).
    pub fn to_json(&self) -> Result<Value, String> {
        Ok(match self {
            Val::None => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(i) => Value::from(*i),
            Val::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .ok_or_else(|| format!("float {f} has no JSON form"))?,
            Val::Str(s) => Value::String(s.clone()),
            Val::List(v) | Val::Tuple(v) => {
                Value::Array(v.iter().map(Val::to_json).collect::<Result<_, _>>()?)
            }
            Val::Dict(items) => {
                let mut m = Map::new();
                for (k, v) in items {
                    let key = match k {
                        Val::Str(s) => s.clone(),
                        Val::EnumMember(_, _, v) => match &**v {
                            Val::Str(s) => s.clone(),
                            other => {
                                return Err(format!("dict key {} has no JSON form", other.kind()));
                            }
                        },
                        other => return Err(format!("dict key {} has no JSON form", other.kind())),
                    };
                    m.insert(key, v.to_json()?);
                }
                Value::Object(m)
            }
            Val::EnumMember(_, _, v) => v.to_json()?,
            Val::Decimal(s) => Value::String(s.clone()),
            other => return Err(format!("{} has no JSON form", other.kind())),
        })
    }
}

/// Names bound locally while evaluating a function body.
#[derive(Default, Clone)]
pub(crate) struct Env {
    vars: Vec<(String, Val)>,
}

impl Env {
    pub fn with(mut self, name: &str, v: Val) -> Env {
        self.vars.push((name.to_string(), v));
        self
    }
    fn get(&self, name: &str) -> Option<&Val> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v)
    }
}

/// The evaluator over a checkout's sources.
pub(crate) struct Eval<'s> {
    pub src: &'s Sources,
}

const BUILTINS: &[&str] = &[
    "str",
    "int",
    "float",
    "bool",
    "dict",
    "list",
    "tuple",
    "set",
    "frozenset",
    "bytes",
    "object",
    "type",
    "Exception",
    "BaseException",
    "ValueError",
    "TypeError",
    "KeyError",
    "RuntimeError",
    "LookupError",
    "AttributeError",
    "NotImplementedError",
    "IndexError",
];

impl Eval<'_> {
    /// Resolves a top-level name of a module.
    pub fn lookup(
        &self,
        m: &Rc<Module>,
        name: &str,
        node: &impl Ranged,
    ) -> Result<Val, SurfaceError> {
        self.lookup_depth(m, name, node, 0)
    }

    fn lookup_depth(
        &self,
        m: &Rc<Module>,
        name: &str,
        node: &impl Ranged,
        depth: usize,
    ) -> Result<Val, SurfaceError> {
        if depth > MAX_DEPTH {
            return Err(m.err(
                node,
                format!("name `{name}` resolves through too many steps"),
            ));
        }
        let Some(sym) = m.symbols.get(name).copied() else {
            if BUILTINS.contains(&name) {
                return Ok(Val::External(format!("builtins.{name}")));
            }
            if let Some(sub) = self.submodule(m, name)? {
                return Ok(sub);
            }
            return Err(m.err(
                node,
                format!(
                    "name `{name}` is not defined at the top level of `{}`",
                    m.name
                ),
            ));
        };
        match sym {
            Sym::Class(i) => Ok(Val::Class(ClassRef {
                module: m.clone(),
                idx: i,
            })),
            Sym::Function(i) => Err(m.err(
                &m.body[i],
                format!("`{name}` is a function; the reader does not run functions here"),
            )),
            Sym::Assign(i) => {
                let value = match &m.body[i] {
                    Stmt::Assign(a) => &*a.value,
                    Stmt::AnnAssign(a) => a.value.as_deref().expect("symbol has a value"),
                    _ => unreachable!(),
                };
                self.eval_depth(m, value, &Env::default(), depth + 1)
            }
            Sym::ImportFrom(i, j) => {
                let Stmt::ImportFrom(imp) = &m.body[i] else {
                    unreachable!()
                };
                let target = self.absolute(m, imp, node)?;
                let al = &imp.names[j];
                let member = al.name.id.as_str();
                if !self.src.is_project(&target) {
                    return Ok(Val::External(format!("{target}.{member}")));
                }
                let Some(tm) = self.src.module(&target)? else {
                    return Err(m.err(imp, format!("module `{target}` not found in the checkout")));
                };
                if tm.symbols.contains_key(member) {
                    return self.lookup_depth(&tm, member, al, depth + 1);
                }
                let sub = format!("{target}.{member}");
                match self.src.module(&sub)? {
                    Some(sm) => Ok(Val::Module(ModuleRef(sm))),
                    None => Err(m.err(al, format!("`{target}` has no name `{member}`"))),
                }
            }
            Sym::Import(i, j) => {
                let Stmt::Import(imp) = &m.body[i] else {
                    unreachable!()
                };
                let al = &imp.names[j];
                let full = al.name.id.as_str();
                let bound = if al.asname.is_some() {
                    full.to_string()
                } else {
                    full.split('.').next().unwrap_or("").to_string()
                };
                if !self.src.is_project(&bound) {
                    return Ok(Val::External(bound));
                }
                match self.src.module(&bound)? {
                    Some(sm) => Ok(Val::Module(ModuleRef(sm))),
                    None => Err(m.err(al, format!("module `{bound}` not found in the checkout"))),
                }
            }
        }
    }

    /// The class a top-level name is bound to, if it is one: imports followed, a name bound to
    /// a plain name or attribute evaluated, other values (calls, literals) not classes.
    pub fn class_binding(
        &self,
        m: &Rc<Module>,
        name: &str,
        depth: usize,
    ) -> Result<Option<ClassRef>, SurfaceError> {
        if depth > MAX_DEPTH {
            return Err(m.err(
                &m.body[0],
                format!("name `{name}` resolves through too many steps"),
            ));
        }
        let Some(sym) = m.symbols.get(name).copied() else {
            return Ok(None);
        };
        match sym {
            Sym::Class(i) => Ok(Some(ClassRef {
                module: m.clone(),
                idx: i,
            })),
            Sym::Function(_) | Sym::Import(..) => Ok(None),
            Sym::Assign(i) => {
                let value = match &m.body[i] {
                    Stmt::Assign(a) => &*a.value,
                    Stmt::AnnAssign(a) => a.value.as_deref().expect("symbol has a value"),
                    _ => unreachable!(),
                };
                if !matches!(value, Expr::Name(_) | Expr::Attribute(_)) {
                    return Ok(None);
                }
                match self.eval(m, value, &Env::default())? {
                    Val::Class(c) => Ok(Some(c)),
                    _ => Ok(None),
                }
            }
            Sym::ImportFrom(i, j) => {
                let Stmt::ImportFrom(imp) = &m.body[i] else {
                    unreachable!()
                };
                let target = self.absolute(m, imp, imp)?;
                if !self.src.is_project(&target) {
                    return Ok(None);
                }
                let al = &imp.names[j];
                let Some(tm) = self.src.module(&target)? else {
                    return Err(m.err(imp, format!("module `{target}` not found in the checkout")));
                };
                let member = al.name.id.as_str();
                if tm.symbols.contains_key(member) {
                    return self.class_binding(&tm, member, depth + 1);
                }
                if self.src.module(&format!("{target}.{member}"))?.is_some() {
                    return Ok(None);
                }
                Err(m.err(al, format!("`{target}` has no name `{member}`")))
            }
        }
    }

    /// A package's submodule used as an attribute (`pkg.sub`), when the module is a package.
    fn submodule(&self, m: &Rc<Module>, name: &str) -> Result<Option<Val>, SurfaceError> {
        if !m.is_package {
            return Ok(None);
        }
        Ok(self
            .src
            .module(&format!("{}.{name}", m.name))?
            .map(|sm| Val::Module(ModuleRef(sm))))
    }

    /// The absolute module of a `from ... import`.
    pub fn absolute(
        &self,
        m: &Module,
        imp: &ast::StmtImportFrom,
        node: &impl Ranged,
    ) -> Result<String, SurfaceError> {
        let module = imp.module.as_ref().map(|i| i.id.as_str());
        if imp.level == 0 {
            return module
                .map(str::to_string)
                .ok_or_else(|| m.err(node, "`from import` without a module"));
        }
        let mut base: Vec<&str> = m.package().split('.').filter(|s| !s.is_empty()).collect();
        for _ in 1..imp.level {
            if base.pop().is_none() {
                return Err(m.err(node, "relative import goes above the top-level package"));
            }
        }
        if base.is_empty() {
            return Err(m.err(node, "relative import outside a package"));
        }
        let mut s = base.join(".");
        if let Some(md) = module {
            s.push('.');
            s.push_str(md);
        }
        Ok(s)
    }

    /// Evaluates an expression of module `m`.
    pub fn eval(&self, m: &Rc<Module>, e: &Expr, env: &Env) -> Result<Val, SurfaceError> {
        self.eval_depth(m, e, env, 0)
    }

    fn eval_depth(
        &self,
        m: &Rc<Module>,
        e: &Expr,
        env: &Env,
        depth: usize,
    ) -> Result<Val, SurfaceError> {
        if depth > MAX_DEPTH {
            return Err(m.err(e, "expression nests too deeply"));
        }
        let d = depth + 1;
        Ok(match e {
            Expr::StringLiteral(s) => Val::Str(s.value.to_str().to_string()),
            Expr::NumberLiteral(n) => match &n.value {
                Number::Int(i) => Val::Int(
                    i.as_i64()
                        .ok_or_else(|| m.err(e, "integer literal out of range"))?,
                ),
                Number::Float(f) => Val::Float(*f),
                Number::Complex { .. } => return Err(m.err(e, "complex numbers are not supported")),
            },
            Expr::BooleanLiteral(b) => Val::Bool(b.value),
            Expr::NoneLiteral(_) => Val::None,
            Expr::EllipsisLiteral(_) => Val::Ellipsis,
            Expr::UnaryOp(u) if u.op == UnaryOp::USub => {
                match self.eval_depth(m, &u.operand, env, d)? {
                    Val::Int(i) => Val::Int(-i),
                    Val::Float(f) => Val::Float(-f),
                    other => return Err(m.err(e, format!("cannot negate {}", other.kind()))),
                }
            }
            Expr::List(l) => Val::List(
                l.elts
                    .iter()
                    .map(|x| self.eval_depth(m, x, env, d))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Tuple(t) => Val::Tuple(
                t.elts
                    .iter()
                    .map(|x| self.eval_depth(m, x, env, d))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Dict(dict) => {
                let mut items = Vec::new();
                for it in &dict.items {
                    let Some(k) = &it.key else {
                        return Err(m.err(e, "`**` in a dict literal is not supported"));
                    };
                    let k = self.eval_depth(m, k, env, d)?;
                    let v = self.eval_depth(m, &it.value, env, d)?;
                    // A repeated key keeps its first position and takes the last value.
                    if let Some(slot) = items
                        .iter_mut()
                        .find(|(ek, _): &&mut (Val, Val)| same_key(ek, &k))
                    {
                        slot.1 = v;
                    } else {
                        items.push((k, v));
                    }
                }
                Val::Dict(items)
            }
            Expr::BinOp(b) if b.op == ast::Operator::Add => {
                let l = self.eval_depth(m, &b.left, env, d)?;
                let r = self.eval_depth(m, &b.right, env, d)?;
                match (l, r) {
                    (Val::Str(a), Val::Str(b)) => Val::Str(a + &b),
                    (Val::Int(a), Val::Int(b)) => Val::Int(
                        a.checked_add(b)
                            .ok_or_else(|| m.err(e, "integer overflow"))?,
                    ),
                    (Val::List(mut a), Val::List(b)) => {
                        a.extend(b);
                        Val::List(a)
                    }
                    (l, r) => {
                        return Err(m.err(e, format!("cannot add {} and {}", l.kind(), r.kind())));
                    }
                }
            }
            Expr::Name(n) => {
                let name = n.id.as_str();
                if let Some(v) = env.get(name) {
                    v.clone()
                } else {
                    self.lookup_depth(m, name, e, d)?
                }
            }
            Expr::Attribute(a) => {
                let base = self.eval_depth(m, &a.value, env, d)?;
                self.attribute(m, base, a.attr.id.as_str(), e, d)?
            }
            Expr::Call(c) => {
                let f = self.eval_depth(m, &c.func, env, d)?;
                match f {
                    Val::External(n) if n == "decimal.Decimal" => {
                        let [arg] = &*c.arguments.args else {
                            return Err(m.err(e, "Decimal(...) takes one argument here"));
                        };
                        match self.eval_depth(m, arg, env, d)? {
                            Val::Str(s) => Val::Decimal(s),
                            Val::Int(i) => Val::Decimal(i.to_string()),
                            other => {
                                return Err(m.err(
                                    e,
                                    format!("Decimal({}) is not supported", other.kind()),
                                ));
                            }
                        }
                    }
                    other => {
                        return Err(m.err(
                            e,
                            format!(
                                "calling {} is not supported in a constant expression",
                                other.kind()
                            ),
                        ));
                    }
                }
            }
            Expr::FString(_) => return Err(m.err(e, "f-strings are not supported")),
            other => {
                return Err(m.err(e, format!("unsupported expression `{}`", expr_kind(other))));
            }
        })
    }

    /// `base.attr`.
    fn attribute(
        &self,
        m: &Rc<Module>,
        base: Val,
        attr: &str,
        e: &Expr,
        depth: usize,
    ) -> Result<Val, SurfaceError> {
        match base {
            Val::Class(c) => self.class_attr(&c, attr, e, m),
            Val::Module(md) => {
                let md = md.0;
                self.lookup_depth(&md, attr, e, depth)
            }
            Val::External(n) => Ok(Val::External(format!("{n}.{attr}"))),
            Val::SelfOf(c) => self.instance_attr(&c, attr, e, m),
            Val::EnumMember(_, _, v) if attr == "value" => Ok(*v),
            other => Err(m.err(
                e,
                format!("attribute `{attr}` of {} is not supported", other.kind()),
            )),
        }
    }

    /// `Class.NAME`: an enum member.
    fn class_attr(
        &self,
        c: &ClassRef,
        attr: &str,
        e: &Expr,
        m: &Module,
    ) -> Result<Val, SurfaceError> {
        for (name, value) in self.enum_members(c)? {
            if name == attr {
                return Ok(Val::EnumMember(c.clone(), name, Box::new(value)));
            }
        }
        Err(m.err(
            e,
            format!(
                "`{}.{attr}` is not an enum member the reader knows",
                c.name()
            ),
        ))
    }

    /// The members of an enum class (`__members__`: definition order, aliases included).
    pub fn enum_members(&self, c: &ClassRef) -> Result<Vec<(String, Val)>, SurfaceError> {
        let m = &c.module;
        let def = c.def();
        let mut out: Vec<(String, Val)> = Vec::new();
        for (i, stmt) in def.body.iter().enumerate() {
            match stmt {
                Stmt::Expr(x) if i == 0 && matches!(&*x.value, Expr::StringLiteral(_)) => {}
                Stmt::Assign(a) => {
                    let [Expr::Name(n)] = &*a.targets else {
                        return Err(m.err(stmt, "enum member assignment must bind one name"));
                    };
                    let name = n.id.as_str();
                    if name.starts_with('_') {
                        return Err(
                            m.err(stmt, format!("enum attribute `{name}` is not supported"))
                        );
                    }
                    let v = self.eval(m, &a.value, &Env::default())?;
                    if !matches!(v, Val::Str(_) | Val::Int(_) | Val::Float(_) | Val::Bool(_)) {
                        return Err(m.err(
                            stmt,
                            format!("enum member value {} is not supported", v.kind()),
                        ));
                    }
                    // Aliases (repeated values) stay: pydantic lists `__members__`, aliases included.
                    out.push((name.to_string(), v));
                }
                Stmt::FunctionDef(_) | Stmt::Pass(_) => {}
                _ => {
                    return Err(m.err(
                        stmt,
                        format!("unsupported statement in enum `{}`", c.name()),
                    ));
                }
            }
        }
        Ok(out)
    }

    /// `self.attr` of a tool instance built with no arguments: a property returning a
    /// constant, or an attribute `__init__` assigns from a parameter default or a constant.
    fn instance_attr(
        &self,
        c: &ClassRef,
        attr: &str,
        e: &Expr,
        at: &Module,
    ) -> Result<Val, SurfaceError> {
        let mro = self.mro(c)?;
        // The first class of the MRO that defines `__init__`.
        for k in &mro {
            let Some(init) = k.def().body.iter().find_map(|s| match s {
                Stmt::FunctionDef(f) if f.name.id.as_str() == "__init__" => Some(f),
                _ => None,
            }) else {
                continue;
            };
            let m = &k.module;
            let mut env = Env::default().with("self", Val::SelfOf(c.clone()));
            let params = &init.parameters;
            if !params.posonlyargs.is_empty() || params.vararg.is_some() || params.kwarg.is_some() {
                return Err(m.err(init, "`__init__` with *args/**kwargs is not supported"));
            }
            for p in params.args.iter().skip(1).chain(params.kwonlyargs.iter()) {
                let Some(d) = &p.default else {
                    return Err(m.err(p, "`__init__` parameter without a default: the tool is built with no arguments"));
                };
                let v = self.eval(m, d, &Env::default())?;
                env = env.with(p.parameter.name.id.as_str(), v);
            }
            let mut found = None;
            for (i, s) in init.body.iter().enumerate() {
                match s {
                    Stmt::Expr(x) if i == 0 && matches!(&*x.value, Expr::StringLiteral(_)) => {}
                    Stmt::Assign(a) => {
                        let [Expr::Attribute(t)] = &*a.targets else {
                            return Err(m.err(s, "unsupported assignment in `__init__`"));
                        };
                        if !matches!(&*t.value, Expr::Name(n) if n.id.as_str() == "self") {
                            return Err(m.err(s, "unsupported assignment in `__init__`"));
                        }
                        if t.attr.id.as_str() == attr {
                            found = Some(self.eval(m, &a.value, &env)?);
                        }
                    }
                    _ => return Err(m.err(s, "unsupported statement in `__init__`")),
                }
            }
            return found
                .ok_or_else(|| at.err(e, format!("`self.{attr}` is not set by `__init__`")));
        }
        Err(at.err(
            e,
            format!("`self.{attr}` is not set: `{}` has no `__init__`", c.name()),
        ))
    }

    /// The bases of a class, resolved.
    pub fn bases(&self, c: &ClassRef) -> Result<Vec<Val>, SurfaceError> {
        let def = c.def();
        let Some(args) = &def.arguments else {
            return Ok(Vec::new());
        };
        if let Some(k) = args.keywords.first() {
            return Err(c
                .module
                .err(k, "class keywords (metaclass=...) are not supported"));
        }
        args.args
            .iter()
            .map(|b| self.eval(&c.module, b, &Env::default()))
            .collect()
    }

    /// The method resolution order of a class, project classes only (C3 linearisation).
    pub fn mro(&self, c: &ClassRef) -> Result<Vec<ClassRef>, SurfaceError> {
        self.mro_depth(c, 0)
    }

    fn mro_depth(&self, c: &ClassRef, depth: usize) -> Result<Vec<ClassRef>, SurfaceError> {
        if depth > MAX_DEPTH {
            return Err(c
                .module
                .err(c.def(), "class hierarchy too deep (or circular)"));
        }
        let mut seqs: Vec<Vec<ClassRef>> = Vec::new();
        let mut direct = Vec::new();
        for b in self.bases(c)? {
            if let Val::Class(bc) = b {
                seqs.push(self.mro_depth(&bc, depth + 1)?);
                direct.push(bc);
            }
        }
        seqs.push(direct);
        let mut out = vec![c.clone()];
        loop {
            seqs.retain(|s| !s.is_empty());
            if seqs.is_empty() {
                return Ok(out);
            }
            let head = seqs
                .iter()
                .map(|s| &s[0])
                .find(|h| !seqs.iter().any(|s| s[1..].iter().any(|x| x.same(h))));
            let Some(head) = head.cloned() else {
                return Err(c.module.err(c.def(), "inconsistent class hierarchy"));
            };
            for s in &mut seqs {
                if s[0].same(&head) {
                    s.remove(0);
                }
            }
            out.push(head);
        }
    }

    /// Every base (project class or external name) reachable from a class.
    pub fn all_external_bases(&self, c: &ClassRef) -> Result<Vec<String>, SurfaceError> {
        let mut out = Vec::new();
        for k in self.mro(c)? {
            for b in self.bases(&k)? {
                if let Val::External(n) = b
                    && !out.contains(&n)
                {
                    out.push(n);
                }
            }
        }
        Ok(out)
    }
}

fn same_key(a: &Val, b: &Val) -> bool {
    match (a, b) {
        (Val::Str(x), Val::Str(y)) => x == y,
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Float(x), Val::Float(y)) => x == y,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::None, Val::None) => true,
        (Val::EnumMember(c, x, _), Val::EnumMember(d, y, _)) => c.same(d) && x == y,
        _ => false,
    }
}

/// A short name of an expression's kind.
pub(crate) fn expr_kind(e: &Expr) -> &'static str {
    match e {
        Expr::BoolOp(_) => "and/or",
        Expr::Named(_) => ":=",
        Expr::BinOp(_) => "binary operator",
        Expr::UnaryOp(_) => "unary operator",
        Expr::Lambda(_) => "lambda",
        Expr::If(_) => "conditional expression",
        Expr::Dict(_) => "dict",
        Expr::Set(_) => "set",
        Expr::ListComp(_) | Expr::SetComp(_) | Expr::DictComp(_) | Expr::Generator(_) => {
            "comprehension"
        }
        Expr::Await(_) => "await",
        Expr::Yield(_) | Expr::YieldFrom(_) => "yield",
        Expr::Compare(_) => "comparison",
        Expr::Call(_) => "call",
        Expr::FString(_) => "f-string",
        Expr::TString(_) => "t-string",
        Expr::StringLiteral(_) => "string",
        Expr::BytesLiteral(_) => "bytes",
        Expr::NumberLiteral(_) => "number",
        Expr::BooleanLiteral(_) => "bool",
        Expr::NoneLiteral(_) => "None",
        Expr::EllipsisLiteral(_) => "...",
        Expr::Attribute(_) => "attribute",
        Expr::Subscript(_) => "subscript",
        Expr::Starred(_) => "starred",
        Expr::Name(_) => "name",
        Expr::List(_) => "list",
        Expr::Tuple(_) => "tuple",
        Expr::Slice(_) => "slice",
        Expr::IpyEscapeCommand(_) => "IPython escape",
    }
}
