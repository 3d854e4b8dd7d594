//! Servers whose tools are decorated functions (`@mcp.tool(name=..., description=...)`), as
//! the MCP SDK's `FastMCP` (`mcp.server.fastmcp`) and `fastmcp` 3 list them: one argument
//! model per function, its schema as each library builds it.

use crate::eval::{Env, Eval, Val};
use crate::pydantic::{Extra, ModelSpec, Pydantic, Ty, docstring};
use crate::source::Module;
use crate::{SurfaceError, SurfaceTool};
use ruff_python_ast::{Expr, Stmt, StmtFunctionDef};
use serde_json::Value;
use std::rc::Rc;

/// Which library serves the functions.
#[derive(Clone, Copy, PartialEq)]
enum Flavour {
    /// `mcp.server.fastmcp.FastMCP`: the argument model's `model_json_schema()` as it is
    /// (titles, `$defs`).
    Sdk,
    /// `fastmcp.FastMCP` (3.x): the function's schema with titles pruned and extra arguments
    /// forbidden.
    FastMcp3,
}

/// The function tools of a server module, or `None` when it creates no FastMCP server.
pub(crate) fn function_tools(
    ev: &Eval<'_>,
    p: &Pydantic<'_, '_>,
    m: &Rc<Module>,
) -> Result<Option<Vec<SurfaceTool>>, SurfaceError> {
    // `<var> = FastMCP(...)` at the top level.
    let mut server: Option<(String, Flavour)> = None;
    for s in &m.body {
        let Stmt::Assign(a) = s else { continue };
        let ([Expr::Name(var)], Expr::Call(c)) = (&*a.targets, &*a.value) else {
            continue;
        };
        if !matches!(&*c.func, Expr::Name(_) | Expr::Attribute(_)) {
            continue;
        }
        let flavour = match ev.eval(m, &c.func, &Env::default()) {
            Ok(Val::External(n)) if n == "mcp.server.fastmcp.FastMCP" => Flavour::Sdk,
            Ok(Val::External(n)) if n == "fastmcp.FastMCP" => Flavour::FastMcp3,
            _ => continue,
        };
        if server.is_some() {
            return Err(m.err(s, "a second FastMCP server in one module is not supported"));
        }
        server = Some((var.id.to_string(), flavour));
    }
    let Some((var, flavour)) = server else {
        return Ok(None);
    };
    let mut tools: Vec<SurfaceTool> = Vec::new();
    for s in &m.body {
        let Stmt::FunctionDef(f) = s else { continue };
        for d in &f.decorator_list {
            let Some((name, description)) = tool_decorator(ev, m, &var, &d.expression, f)? else {
                continue;
            };
            if name.starts_with("__reserved__") {
                continue;
            }
            let description = match (description, flavour) {
                (Some(d), _) => d,
                // The SDK takes the raw docstring.
                (None, Flavour::Sdk) => docstring(&f.body).unwrap_or("").to_string(),
                (None, Flavour::FastMcp3) => {
                    return Err(m.err(
                        f,
                        "a fastmcp 3 tool without `description=` is not supported",
                    ));
                }
            };
            let spec = arguments_model(p, m, f, flavour)?;
            let mut schema = p.json_schema(&spec)?;
            if flavour == Flavour::FastMcp3 {
                if schema.get("$defs").is_some() {
                    return Err(m.err(f, "models in fastmcp 3 tool arguments are not supported"));
                }
                prune_titles(&mut schema);
            }
            if tools.iter().any(|t| t.name == name) {
                return Err(m.err(d, format!("tool `{name}` is registered twice")));
            }
            let agent_input_schema = crate::client_transform(&schema);
            tools.push(SurfaceTool {
                name,
                description,
                input_schema: schema,
                agent_input_schema,
                request_model: spec.title.clone(),
                source: m.display.clone(),
            });
        }
    }
    Ok(Some(tools))
}

/// `@<var>.tool(name=..., description=...)`: the tool's name and description, if `e` is one.
fn tool_decorator(
    ev: &Eval<'_>,
    m: &Rc<Module>,
    var: &str,
    e: &Expr,
    f: &StmtFunctionDef,
) -> Result<Option<(String, Option<String>)>, SurfaceError> {
    let is_tool_attr = |x: &Expr| {
        matches!(x, Expr::Attribute(a) if a.attr.id.as_str() == "tool"
            && matches!(&*a.value, Expr::Name(n) if n.id.as_str() == var))
    };
    if is_tool_attr(e) {
        return Ok(Some((f.name.id.to_string(), None)));
    }
    let Expr::Call(c) = e else { return Ok(None) };
    if !is_tool_attr(&c.func) {
        return Ok(None);
    }
    if !c.arguments.args.is_empty() {
        return Err(m.err(e, "positional arguments to `.tool(...)` are not supported"));
    }
    let mut name = f.name.id.to_string();
    let mut description = None;
    for k in &c.arguments.keywords {
        let arg = k.arg.as_ref().map_or("**", |a| a.id.as_str());
        let v = ev.eval(m, &k.value, &Env::default())?;
        match (arg, v) {
            ("name", Val::Str(s)) => name = s,
            ("description", Val::Str(s)) => description = Some(s),
            ("description", Val::None) => {}
            (a, v) => {
                return Err(m.err(
                    k,
                    format!("`.tool({a}=...)` with {} is not supported", v.kind()),
                ));
            }
        }
    }
    Ok(Some((name, description)))
}

/// The argument model of a tool function (`<function>Arguments`).
fn arguments_model(
    p: &Pydantic<'_, '_>,
    m: &Rc<Module>,
    f: &StmtFunctionDef,
    flavour: Flavour,
) -> Result<ModelSpec, SurfaceError> {
    let ps = &f.parameters;
    if !ps.posonlyargs.is_empty() || ps.vararg.is_some() || ps.kwarg.is_some() {
        return Err(m.err(
            f,
            "tool functions with positional-only, *args or **kwargs parameters are not supported",
        ));
    }
    let mut fields = Vec::new();
    for a in ps.args.iter().chain(ps.kwonlyargs.iter()) {
        let name = a.parameter.name.id.as_str();
        let Some(ann) = &a.parameter.annotation else {
            return Err(m.err(a, format!("parameter `{name}` has no annotation")));
        };
        let field = p.field(m, name, ann, a.default.as_deref())?;
        if name.starts_with('_') {
            return Err(m.err(
                a,
                format!("parameter `{name}` starts with `_`, which the libraries treat specially"),
            ));
        }
        if has_decimal(&field.ty) {
            // Validation-mode schemas differ from the serialization-mode one the reader builds.
            return Err(m.err(a, "Decimal tool arguments are not supported"));
        }
        fields.push(field);
    }
    Ok(ModelSpec {
        module: m.clone(),
        at: f.range,
        title: format!("{}Arguments", f.name.id),
        doc: None,
        extra: if flavour == Flavour::FastMcp3 {
            Extra::Forbid
        } else {
            Extra::Ignore
        },
        fields,
    })
}

fn has_decimal(t: &Ty) -> bool {
    match t {
        Ty::Decimal => true,
        Ty::List(x) | Ty::Dict(x) => has_decimal(x),
        Ty::Union(xs) => xs.iter().any(has_decimal),
        _ => false,
    }
}

/// fastmcp's title pruning: `title` keys of schemas (not property names) removed.
fn prune_titles(v: &mut Value) {
    match v {
        Value::Object(o) => {
            if o.get("title").is_some_and(Value::is_string) {
                o.shift_remove("title");
            }
            for (k, x) in o.iter_mut() {
                if k == "properties" {
                    if let Value::Object(props) = x {
                        for (_, p) in props.iter_mut() {
                            prune_titles(p);
                        }
                    }
                } else {
                    prune_titles(x);
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(prune_titles),
        _ => {}
    }
}
