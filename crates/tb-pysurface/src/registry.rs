//! How a server module registers its tools: the toolsets it builds (in order), the tool
//! classes of each toolset's `tools` package (modules by file name, then members by name, as
//! `pkgutil.iter_modules` and `inspect.getmembers` give them), and each tool's `name`,
//! `description` and `request_model`.

use crate::eval::{Env, Eval, Val};
use crate::pydantic::Pydantic;
use crate::source::{ClassRef, Module};
use crate::{SurfaceError, SurfaceTool};
use ruff_python_ast::{Expr, Stmt, StmtFunctionDef};
use std::rc::Rc;

/// A `ToolSet(path=, namespace=, db_namespace=)` of the server module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolset {
    /// Import path of the toolset package.
    pub path: String,
    /// Tool-name prefix (`<namespace>_<name>`), if any.
    pub namespace: Option<String>,
    /// Table-name prefix, if any.
    pub db_namespace: Option<String>,
}

/// One discovered tool before its schema is built.
pub(crate) struct FoundTool {
    pub name: String,
    pub description: String,
    pub request_model: ClassRef,
}

pub(crate) struct Registry<'e, 's> {
    pub ev: &'e Eval<'s>,
}

impl Registry<'_, '_> {
    /// The toolsets the server module's `initialize_sandbox_system()` builds.
    pub fn toolsets(&self, m: &Rc<Module>) -> Result<Vec<Toolset>, SurfaceError> {
        let Some(init) = function(m, "initialize_sandbox_system") else {
            return Err(SurfaceError::Source {
                file: m.display.clone(),
                line: 1,
                message:
                    "no `initialize_sandbox_system()` function: the reader knows servers built on \
                          SandboxToolsSystem only"
                        .into(),
            });
        };
        // `<x> = SandboxToolsSystem(toolsets=<arg>)` at the function's top level.
        let mut arg = None;
        for (i, s) in init.body.iter().enumerate() {
            let Stmt::Assign(a) = s else { continue };
            let Expr::Call(c) = &*a.value else { continue };
            let f = self.ev.eval(m, &c.func, &Env::default());
            if !matches!(&f, Ok(Val::Class(k)) if k.name() == "SandboxToolsSystem") {
                continue;
            }
            let e = c
                .arguments
                .keywords
                .iter()
                .find(|k| k.arg.as_ref().is_some_and(|a| a.id.as_str() == "toolsets"))
                .map(|k| &k.value)
                .or(c.arguments.args.first())
                .ok_or_else(|| m.err(s, "SandboxToolsSystem(...) without toolsets"))?;
            arg = Some((i, e));
            break;
        }
        let Some((at, e)) = arg else {
            return Err(m.err(
                init,
                "`initialize_sandbox_system()` does not build a SandboxToolsSystem",
            ));
        };
        let list = match e {
            Expr::Name(n) => {
                // The last assignment to that name before the call.
                let value = init.body[..at]
                    .iter()
                    .rev()
                    .find_map(|s| match s {
                        Stmt::Assign(a) if matches!(&*a.targets, [Expr::Name(t)] if t.id == n.id) => Some(&*a.value),
                        Stmt::AnnAssign(a) if matches!(&*a.target, Expr::Name(t) if t.id == n.id) => a.value.as_deref(),
                        _ => None,
                    })
                    .ok_or_else(|| m.err(e, format!("`{}` is not assigned before use", n.id)))?;
                self.toolset_list_expr(m, value)?
            }
            other => self.toolset_list_expr(m, other)?,
        };
        list.iter().map(|x| self.toolset(m, x)).collect()
    }

    /// A list literal of `ToolSet(...)`, or a call of a module function returning one.
    fn toolset_list_expr<'a>(
        &self,
        m: &'a Module,
        e: &'a Expr,
    ) -> Result<&'a [Expr], SurfaceError> {
        match e {
            Expr::List(l) => Ok(&l.elts),
            Expr::Call(c) if c.arguments.args.is_empty() && c.arguments.keywords.is_empty() => {
                let Expr::Name(n) = &*c.func else {
                    return Err(m.err(e, "unsupported toolset list"));
                };
                let f = function(m, n.id.as_str())
                    .ok_or_else(|| m.err(e, format!("no function `{}`", n.id)))?;
                let mut body = f.body.as_slice();
                if matches!(body.first(), Some(Stmt::Expr(x)) if matches!(&*x.value, Expr::StringLiteral(_)))
                {
                    body = &body[1..];
                }
                match body {
                    [Stmt::Return(r)] => match r.value.as_deref() {
                        Some(Expr::List(l)) => Ok(&l.elts),
                        _ => Err(m.err(&body[0], "toolset function must return a list literal")),
                    },
                    _ => Err(m.err(f, "toolset function must be a single `return [...]`")),
                }
            }
            other => Err(m.err(
                other,
                "unsupported toolset list (a list literal or a function returning one)",
            )),
        }
    }

    fn toolset(&self, m: &Rc<Module>, e: &Expr) -> Result<Toolset, SurfaceError> {
        let Expr::Call(c) = e else {
            return Err(m.err(e, "toolset entry must be a `ToolSet(...)` call"));
        };
        match self.ev.eval(m, &c.func, &Env::default())? {
            Val::Class(k) if k.name() == "ToolSet" => {}
            other => {
                return Err(m.err(
                    e,
                    format!("toolset entry calls {}, not ToolSet", other.kind()),
                ));
            }
        }
        let names = ["path", "namespace", "db_namespace"];
        let mut vals: [Option<Val>; 3] = [None, None, None];
        if c.arguments.args.len() > 3 {
            return Err(m.err(e, "too many arguments to ToolSet"));
        }
        for (i, a) in c.arguments.args.iter().enumerate() {
            vals[i] = Some(self.ev.eval(m, a, &Env::default())?);
        }
        for k in &c.arguments.keywords {
            let name = k.arg.as_ref().map_or("**", |a| a.id.as_str());
            let Some(i) = names.iter().position(|n| *n == name) else {
                return Err(m.err(k, format!("unknown ToolSet argument `{name}`")));
            };
            vals[i] = Some(self.ev.eval(m, &k.value, &Env::default())?);
        }
        let s = |i: usize| -> Result<Option<String>, SurfaceError> {
            match &vals[i] {
                None | Some(Val::None) => Ok(None),
                Some(Val::Str(s)) => Ok(Some(s.clone())),
                Some(other) => Err(m.err(
                    e,
                    format!(
                        "ToolSet {}= must be a string, not {}",
                        names[i],
                        other.kind()
                    ),
                )),
            }
        };
        Ok(Toolset {
            path: s(0)?.ok_or_else(|| m.err(e, "ToolSet without a path"))?,
            namespace: s(1)?,
            db_namespace: s(2)?,
        })
    }

    /// The tools of one toolset, in discovery order (a repeated name keeps its first place and
    /// takes the last class, like the reference's dict).
    pub fn toolset_tools(
        &self,
        ts: &Toolset,
        tool_base: &ClassRef,
    ) -> Result<Vec<FoundTool>, SurfaceError> {
        let src = self.ev.src;
        let pkg_dir = src.package_dir(&ts.path).ok_or_else(|| SurfaceError::Io {
            path: format!("servers/*/{}", ts.path.replace('.', "/")),
            message: format!("toolset package `{}` not found", ts.path),
        })?;
        let tools_dir = pkg_dir.join("tools");
        let mut found: Vec<FoundTool> = Vec::new();
        if !tools_dir.is_dir() {
            return Ok(found); // the reference logs a warning and registers nothing
        }
        let mut files: Vec<String> = std::fs::read_dir(&tools_dir)
            .map_err(|e| SurfaceError::Io {
                path: tools_dir.display().to_string(),
                message: e.to_string(),
            })?
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        files.sort();
        let mut modules: Vec<String> = Vec::new();
        for f in files {
            let p = tools_dir.join(&f);
            let modname = if let Some(stem) = f.strip_suffix(".py") {
                stem.to_string()
            } else if [".pyc", ".so", ".pyd", ".pyw"]
                .iter()
                .any(|s| f.ends_with(s))
            {
                return Err(SurfaceError::Io {
                    path: p.display().to_string(),
                    message: "compiled or unusual module in a tools package: the reader needs Python sources".into(),
                });
            } else if p.is_dir() && !f.contains('.') && p.join("__init__.py").is_file() {
                f.clone()
            } else {
                continue;
            };
            if modname == "__init__" || modname.contains('.') || modules.contains(&modname) {
                continue;
            }
            modules.push(modname);
        }
        for modname in modules {
            let dotted = format!("{}.tools.{modname}", ts.path);
            let tm = src.require(&dotted)?;
            check_module_statements(&tm)?;
            let mut names: Vec<&String> = tm.symbols.keys().collect();
            names.sort();
            for name in names {
                let Some(c) = self.member_class(&tm, name)? else {
                    continue;
                };
                if c.same(tool_base) {
                    continue;
                }
                let mro = self.ev.mro(&c)?;
                if !mro.iter().any(|k| k.same(tool_base)) {
                    continue;
                }
                if self.is_abstract(&mro)? {
                    continue;
                }
                let t = self.instantiate(&c, &mro)?;
                if let Some(slot) = found.iter_mut().find(|x| x.name == t.name) {
                    *slot = t;
                } else {
                    found.push(t);
                }
            }
        }
        Ok(found)
    }

    /// A module member that is a project class (following imports and name aliases, without
    /// evaluating other values).
    fn member_class(&self, m: &Rc<Module>, name: &str) -> Result<Option<ClassRef>, SurfaceError> {
        self.ev.class_binding(m, name, 0)
    }

    /// `inspect.isabstract`: some abstract method of the MRO is not overridden.
    fn is_abstract(&self, mro: &[ClassRef]) -> Result<bool, SurfaceError> {
        let mut abstract_names: Vec<String> = Vec::new();
        for k in mro {
            for s in &k.def().body {
                if let Stmt::FunctionDef(f) = s
                    && f.decorator_list
                        .iter()
                        .any(|d| deco_is(&d.expression, "abstractmethod"))
                    && !abstract_names.iter().any(|n| n == f.name.id.as_str())
                {
                    abstract_names.push(f.name.id.to_string());
                }
            }
        }
        for n in &abstract_names {
            let def = mro.iter().find_map(|k| defines(k, n));
            match def {
                Some(Stmt::FunctionDef(f))
                    if f.decorator_list
                        .iter()
                        .any(|d| deco_is(&d.expression, "abstractmethod")) =>
                {
                    return Ok(true);
                }
                None => return Ok(true),
                _ => {}
            }
        }
        Ok(false)
    }

    /// `obj()` of a tool class: its name, description and request model.
    fn instantiate(&self, c: &ClassRef, mro: &[ClassRef]) -> Result<FoundTool, SurfaceError> {
        let name = match self.property(c, mro, "name")? {
            Val::Str(s) => s,
            other => {
                return Err(c.module.err(
                    c.def(),
                    format!("tool `name` is {}, not a string", other.kind()),
                ));
            }
        };
        let description = match self.property(c, mro, "description")? {
            Val::Str(s) => s,
            other => {
                return Err(c.module.err(
                    c.def(),
                    format!("tool `description` is {}, not a string", other.kind()),
                ));
            }
        };
        let request_model = match self.property(c, mro, "request_model")? {
            Val::Class(k) => k,
            other => {
                return Err(c.module.err(
                    c.def(),
                    format!("tool `request_model` is {}, not a class", other.kind()),
                ));
            }
        };
        Ok(FoundTool {
            name,
            description,
            request_model,
        })
    }

    /// The value of a property (or class attribute) of a tool instance.
    fn property(&self, c: &ClassRef, mro: &[ClassRef], attr: &str) -> Result<Val, SurfaceError> {
        for k in mro {
            let Some(stmt) = defines(k, attr) else {
                continue;
            };
            let m = &k.module;
            return match stmt {
                Stmt::FunctionDef(f) => {
                    if !f
                        .decorator_list
                        .iter()
                        .any(|d| deco_is(&d.expression, "property"))
                    {
                        return Err(m.err(f, format!("`{attr}` must be a property")));
                    }
                    let env = Env::default().with("self", Val::SelfOf(c.clone()));
                    match self.run(m, &f.body, &env, 0)? {
                        Some(v) => Ok(v),
                        None => Ok(Val::None),
                    }
                }
                Stmt::Assign(a) => self.ev.eval(m, &a.value, &Env::default()),
                Stmt::AnnAssign(a) => match &a.value {
                    Some(v) => self.ev.eval(m, v, &Env::default()),
                    None => Err(m.err(stmt, format!("`{attr}` has no value"))),
                },
                _ => unreachable!(),
            };
        }
        Err(c.module.err(
            c.def(),
            format!("tool class `{}` defines no `{attr}`", c.name()),
        ))
    }

    /// Runs a property body: `return <expr>` and `if <expr>:` blocks only.
    fn run(
        &self,
        m: &Rc<Module>,
        body: &[Stmt],
        env: &Env,
        depth: usize,
    ) -> Result<Option<Val>, SurfaceError> {
        if depth > 32 {
            return Err(m.err(&body[0], "blocks nest too deeply"));
        }
        for (i, s) in body.iter().enumerate() {
            match s {
                Stmt::Expr(x) if i == 0 && matches!(&*x.value, Expr::StringLiteral(_)) => {}
                Stmt::Pass(_) => {}
                Stmt::Return(r) => {
                    return Ok(Some(match &r.value {
                        Some(v) => self.ev.eval(m, v, env)?,
                        None => Val::None,
                    }));
                }
                Stmt::If(ifs) => {
                    let mut branch = None;
                    if self.truth(m, &ifs.test, env)? {
                        branch = Some(&ifs.body);
                    } else {
                        for cl in &ifs.elif_else_clauses {
                            match &cl.test {
                                Some(t) if !self.truth(m, t, env)? => {}
                                _ => {
                                    branch = Some(&cl.body);
                                    break;
                                }
                            }
                        }
                    }
                    if let Some(b) = branch
                        && let Some(v) = self.run(m, b, env, depth + 1)?
                    {
                        return Ok(Some(v));
                    }
                }
                other => {
                    return Err(m.err(
                        other,
                        "unsupported statement in a tool property (only `return` and `if`)",
                    ));
                }
            }
        }
        Ok(None)
    }

    fn truth(&self, m: &Rc<Module>, e: &Expr, env: &Env) -> Result<bool, SurfaceError> {
        let v = self.ev.eval(m, e, env)?;
        v.truthy().ok_or_else(|| {
            m.err(
                e,
                format!("the truth value of {} is unknown to the reader", v.kind()),
            )
        })
    }
}

/// A tool with its schemas, built from a found tool.
pub(crate) fn build_tool(
    p: &Pydantic<'_, '_>,
    full_name: String,
    t: &FoundTool,
) -> Result<SurfaceTool, SurfaceError> {
    let input_schema = p.server_schema(&t.request_model)?;
    let agent_input_schema = crate::client_transform(&input_schema);
    Ok(SurfaceTool {
        name: full_name,
        description: t.description.clone(),
        input_schema,
        agent_input_schema,
        request_model: t.request_model.name().to_string(),
        source: t.request_model.module.display.clone(),
    })
}

fn function<'a>(m: &'a Module, name: &str) -> Option<&'a StmtFunctionDef> {
    m.body.iter().rev().find_map(|s| match s {
        Stmt::FunctionDef(f) if f.name.id.as_str() == name => Some(f),
        _ => None,
    })
}

/// The statement of a class body that defines `name` (a method or an assignment).
fn defines<'a>(k: &'a ClassRef, name: &str) -> Option<&'a Stmt> {
    k.def().body.iter().rev().find(|s| match s {
        Stmt::FunctionDef(f) => f.name.id.as_str() == name,
        Stmt::Assign(a) => a
            .targets
            .iter()
            .any(|t| matches!(t, Expr::Name(n) if n.id.as_str() == name)),
        Stmt::AnnAssign(a) => {
            a.value.is_some() && matches!(&*a.target, Expr::Name(n) if n.id.as_str() == name)
        }
        _ => false,
    })
}

fn deco_is(e: &Expr, name: &str) -> bool {
    match e {
        Expr::Name(n) => n.id.as_str() == name,
        Expr::Attribute(a) => a.attr.id.as_str() == name,
        _ => false,
    }
}

/// A tools module may hold only statements whose effect on its names the reader knows.
fn check_module_statements(m: &Module) -> Result<(), SurfaceError> {
    for (i, s) in m.body.iter().enumerate() {
        match s {
            Stmt::Expr(x) if i == 0 && matches!(&*x.value, Expr::StringLiteral(_)) => {}
            Stmt::Import(_)
            | Stmt::ImportFrom(_)
            | Stmt::ClassDef(_)
            | Stmt::FunctionDef(_)
            | Stmt::Pass(_) => {}
            Stmt::Assign(a) if a.targets.iter().all(|t| matches!(t, Expr::Name(_))) => {}
            Stmt::AnnAssign(a) if matches!(&*a.target, Expr::Name(_)) => {}
            other => {
                return Err(m.err(
                    other,
                    "unsupported top-level statement in a tools module (it may define tools the reader cannot see)",
                ));
            }
        }
    }
    Ok(())
}
