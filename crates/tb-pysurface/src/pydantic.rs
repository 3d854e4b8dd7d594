//! Pydantic v2 models read from their class definitions, and their JSON schema as
//! `model_json_schema(mode="serialization")` builds it: `$defs` for models and enums, titles
//! from names, keys sorted except directly under `properties` and `default`. Then the
//! servers' own post-processing (`get_schema_without_refs`): the top-level fields' `examples`
//! put back as written, `$ref`s inlined with their sibling keys merged, `$defs` dropped.

use crate::SurfaceError;
use crate::eval::{Env, Eval, Val, expr_kind};
use crate::source::{ClassRef, Module};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::TextRange;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::rc::Rc;

/// A field's type, as the reader understands it.
#[derive(Clone, Debug)]
pub(crate) enum Ty {
    Str,
    Int,
    Float,
    Bool,
    DateTime,
    Date,
    Decimal,
    Any,
    NoneT,
    List(Box<Ty>),
    /// `Dict[str, V]` (keys are always `str`): the value type.
    Dict(Box<Ty>),
    Union(Vec<Ty>),
    Literal(Vec<Val>),
    Enum(ClassRef),
    Model(ClassRef),
}

/// `extra=` of a model's config.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Extra {
    Ignore,
    Forbid,
    Allow,
}

/// One model field.
#[derive(Clone, Debug)]
pub(crate) struct FieldSpec {
    /// Python attribute name.
    pub name: String,
    /// Serialization alias, if any.
    pub alias: Option<String>,
    pub ty: Ty,
    /// `None`: no default (required, unless `default_factory`).
    pub default: Option<Val>,
    pub has_factory: bool,
    pub title: Option<String>,
    pub description: Option<String>,
    pub examples: Option<Vec<Val>>,
    /// JSON-schema constraint keys and values (`minLength`, `minimum`, ...), pydantic names.
    pub constraints: Vec<(&'static str, Val)>,
}

impl FieldSpec {
    /// The property name in the schema (the alias when there is one).
    pub fn key(&self) -> &str {
        self.alias.as_deref().unwrap_or(&self.name)
    }
    pub fn required(&self) -> bool {
        self.default.is_none() && !self.has_factory
    }
}

/// A model class.
#[derive(Clone, Debug)]
pub(crate) struct ModelSpec {
    /// Where it is defined (for errors).
    pub module: Rc<Module>,
    pub at: TextRange,
    pub title: String,
    pub doc: Option<String>,
    pub extra: Extra,
    pub fields: Vec<FieldSpec>,
}

/// What a class is to pydantic.
pub(crate) enum ClassKind {
    Model,
    Enum,
    Other,
}

#[derive(Default)]
struct FieldArgs {
    default: Option<Val>,
    has_factory: bool,
    title: Option<String>,
    description: Option<String>,
    examples: Option<Vec<Val>>,
    alias: Option<String>,
    serialization_alias: Option<String>,
    constraints: Vec<(&'static str, Val)>,
}

impl FieldArgs {
    /// Later arguments override earlier ones (`Annotated[..., Field(a)] = Field(b)`).
    fn merge(&mut self, o: FieldArgs) {
        if o.default.is_some() || o.has_factory {
            self.default = o.default;
            self.has_factory = o.has_factory;
        }
        macro_rules! take {
            ($($f:ident),*) => { $( if o.$f.is_some() { self.$f = o.$f; } )* };
        }
        take!(title, description, examples, alias, serialization_alias);
        for (k, v) in o.constraints {
            self.constraints.retain(|(ek, _)| *ek != k);
            self.constraints.push((k, v));
        }
    }
}

/// Pydantic's reading of classes, with a cache per class.
pub(crate) struct Pydantic<'e, 's> {
    pub ev: &'e Eval<'s>,
    models: std::cell::RefCell<HashMap<String, Rc<ModelSpec>>>,
}

impl<'e, 's> Pydantic<'e, 's> {
    pub fn new(ev: &'e Eval<'s>) -> Self {
        Pydantic {
            ev,
            models: std::cell::RefCell::default(),
        }
    }

    pub fn class_kind(&self, c: &ClassRef) -> Result<ClassKind, SurfaceError> {
        let ext = self.ev.all_external_bases(c)?;
        let has = |n: &[&str]| ext.iter().any(|e| n.contains(&e.as_str()));
        if has(&["enum.Enum", "enum.IntEnum", "enum.StrEnum"]) {
            Ok(ClassKind::Enum)
        } else if has(&["pydantic.BaseModel", "pydantic.main.BaseModel"]) {
            Ok(ClassKind::Model)
        } else {
            Ok(ClassKind::Other)
        }
    }

    /// Reads a model class (and, through its MRO, its bases' fields).
    pub fn model(&self, c: &ClassRef) -> Result<Rc<ModelSpec>, SurfaceError> {
        if let Some(m) = self.models.borrow().get(&c.key()) {
            return Ok(m.clone());
        }
        if !matches!(self.class_kind(c)?, ClassKind::Model) {
            return Err(c
                .module
                .err(c.def(), format!("`{}` is not a pydantic model", c.name())));
        }
        let mro = self.ev.mro(c)?;
        let mut fields: Vec<FieldSpec> = Vec::new();
        let mut extra = Extra::Ignore;
        let mut title = None;
        for k in mro.iter().rev() {
            let (own, cfg) = self.own_fields(k)?;
            for f in own {
                if let Some(slot) = fields.iter_mut().find(|x| x.name == f.name) {
                    *slot = f;
                } else {
                    fields.push(f);
                }
            }
            if let Some((e, t)) = cfg {
                if let Some(e) = e {
                    extra = e;
                }
                if t.is_some() {
                    title = t;
                }
            }
        }
        let spec = Rc::new(ModelSpec {
            module: c.module.clone(),
            at: c.def().range,
            title: title.unwrap_or_else(|| c.name().to_string()),
            doc: docstring(&c.def().body).map(cleandoc),
            extra,
            fields,
        });
        self.models.borrow_mut().insert(c.key(), spec.clone());
        Ok(spec)
    }

    /// The fields a class body declares, and its `model_config` (extra, title), if any.
    #[allow(clippy::type_complexity)]
    fn own_fields(
        &self,
        c: &ClassRef,
    ) -> Result<(Vec<FieldSpec>, Option<(Option<Extra>, Option<String>)>), SurfaceError> {
        let m = &c.module;
        let mut out = Vec::new();
        let mut cfg = None;
        for (i, stmt) in c.def().body.iter().enumerate() {
            match stmt {
                Stmt::Expr(x) if i == 0 && matches!(&*x.value, Expr::StringLiteral(_)) => {}
                Stmt::Pass(_) => {}
                Stmt::AnnAssign(a) => {
                    let Expr::Name(n) = &*a.target else {
                        return Err(m.err(stmt, "unsupported annotated assignment in a model"));
                    };
                    let name = n.id.as_str();
                    if name.starts_with('_') || self.is_classvar(m, &a.annotation)? {
                        continue;
                    }
                    if name == "model_config" {
                        return Err(m.err(stmt, "annotated `model_config` is not supported"));
                    }
                    out.push(self.field(m, name, &a.annotation, a.value.as_deref())?);
                }
                Stmt::Assign(a) => {
                    let [Expr::Name(n)] = &*a.targets else {
                        return Err(m.err(stmt, "unsupported assignment in a model"));
                    };
                    let name = n.id.as_str();
                    if name == "model_config" {
                        cfg = Some(self.config(m, &a.value)?);
                    } else if !name.starts_with('_') {
                        return Err(m.err(
                            stmt,
                            format!("non-annotated attribute `{name}` in a model is not supported"),
                        ));
                    }
                }
                Stmt::FunctionDef(f) => {
                    for d in &f.decorator_list {
                        let dn = decorator_name(&d.expression);
                        const OK: &[&str] = &[
                            "field_validator",
                            "model_validator",
                            "validator",
                            "root_validator",
                            "classmethod",
                            "staticmethod",
                            "property",
                        ];
                        if !OK.contains(&dn) {
                            return Err(m.err(
                                d,
                                format!("decorator `@{dn}` in a model is not supported (it may change the schema)"),
                            ));
                        }
                    }
                }
                _ => {
                    return Err(m.err(
                        stmt,
                        format!("unsupported statement in model `{}`", c.name()),
                    ));
                }
            }
        }
        Ok((out, cfg))
    }

    fn is_classvar(&self, m: &Rc<Module>, ann: &Expr) -> Result<bool, SurfaceError> {
        let head = match ann {
            Expr::Subscript(s) => &*s.value,
            e => e,
        };
        if !matches!(head, Expr::Name(_) | Expr::Attribute(_)) {
            return Ok(false);
        }
        Ok(matches!(self.ev.eval(m, head, &Env::default())?,
            Val::External(n) if n == "typing.ClassVar" || n == "typing_extensions.ClassVar"))
    }

    /// `model_config = ConfigDict(...)`.
    fn config(
        &self,
        m: &Rc<Module>,
        e: &Expr,
    ) -> Result<(Option<Extra>, Option<String>), SurfaceError> {
        let Expr::Call(call) = e else {
            return Err(m.err(e, "`model_config` must be a `ConfigDict(...)` call"));
        };
        match self.ev.eval(m, &call.func, &Env::default())? {
            Val::External(n) if n == "pydantic.ConfigDict" => {}
            other => {
                return Err(m.err(
                    e,
                    format!("`model_config` built by {} is not supported", other.kind()),
                ));
            }
        }
        if !call.arguments.args.is_empty() {
            return Err(m.err(e, "positional arguments to ConfigDict are not supported"));
        }
        let mut extra = None;
        let mut title = None;
        for k in &call.arguments.keywords {
            let Some(arg) = &k.arg else {
                return Err(m.err(k, "`**` in ConfigDict is not supported"));
            };
            let v = self.ev.eval(m, &k.value, &Env::default())?;
            match arg.id.as_str() {
                "extra" => {
                    extra = Some(match v {
                        Val::Str(s) if s == "forbid" => Extra::Forbid,
                        Val::Str(s) if s == "allow" => Extra::Allow,
                        Val::Str(s) if s == "ignore" => Extra::Ignore,
                        other => {
                            return Err(
                                m.err(k, format!("extra={} is not supported", other.kind()))
                            );
                        }
                    });
                }
                "title" => match v {
                    Val::Str(s) => title = Some(s),
                    other => {
                        return Err(m.err(k, format!("title={} is not supported", other.kind())));
                    }
                },
                // Settings that do not change the JSON schema.
                "populate_by_name"
                | "validate_assignment"
                | "use_enum_values"
                | "arbitrary_types_allowed"
                | "from_attributes"
                | "frozen"
                | "validate_default"
                | "str_strip_whitespace"
                | "protected_namespaces"
                | "validate_by_name"
                | "validate_by_alias"
                | "revalidate_instances" => {}
                other => {
                    return Err(m.err(k, format!("ConfigDict option `{other}` is not supported")));
                }
            }
        }
        Ok((extra, title))
    }

    /// One field: its annotation and the value assigned to it.
    pub fn field(
        &self,
        m: &Rc<Module>,
        name: &str,
        ann: &Expr,
        value: Option<&Expr>,
    ) -> Result<FieldSpec, SurfaceError> {
        let mut args = FieldArgs::default();
        let ty = match annotated_parts(ann) {
            Some((inner, meta))
                if self.is_external(
                    m,
                    ann_head(ann),
                    &["typing.Annotated", "typing_extensions.Annotated"],
                )? =>
            {
                for md in meta {
                    if let Some(fa) = self.field_call(m, md)? {
                        args.merge(fa);
                    } else {
                        // Objects pydantic does not know (markers such as `UnstableField()`) are
                        // ignored by it; accept only calls of the checkout's own classes.
                        let ok = match md {
                            Expr::Call(c) => {
                                matches!(self.ev.eval(m, &c.func, &Env::default())?, Val::Class(_))
                            }
                            _ => false,
                        };
                        if !ok {
                            return Err(m.err(md, "unsupported `Annotated` metadata"));
                        }
                    }
                }
                self.ty(m, inner)?
            }
            _ => self.ty(m, ann)?,
        };
        if let Some(v) = value {
            if let Some(fa) = self.field_call(m, v)? {
                args.merge(fa);
            } else {
                let d = self.ev.eval(m, v, &Env::default())?;
                args.merge(FieldArgs {
                    default: Some(d),
                    ..Default::default()
                });
            }
        }
        Ok(FieldSpec {
            name: name.to_string(),
            alias: args.serialization_alias.or(args.alias),
            ty,
            default: args.default,
            has_factory: args.has_factory,
            title: args.title,
            description: args.description,
            examples: args.examples,
            constraints: args.constraints,
        })
    }

    fn is_external(&self, m: &Rc<Module>, e: &Expr, names: &[&str]) -> Result<bool, SurfaceError> {
        if !matches!(e, Expr::Name(_) | Expr::Attribute(_)) {
            return Ok(false);
        }
        Ok(
            matches!(self.ev.eval(m, e, &Env::default())?, Val::External(n) if names.contains(&n.as_str())),
        )
    }

    /// `Field(...)`: its arguments, or `None` when `e` is not a `Field` call.
    fn field_call(&self, m: &Rc<Module>, e: &Expr) -> Result<Option<FieldArgs>, SurfaceError> {
        let Expr::Call(call) = e else { return Ok(None) };
        if !self.is_external(m, &call.func, &["pydantic.Field", "pydantic.fields.Field"])? {
            return Ok(None);
        }
        let env = Env::default();
        let mut fa = FieldArgs::default();
        match &*call.arguments.args {
            [] => {}
            [d] => {
                let v = self.ev.eval(m, d, &env)?;
                if !matches!(v, Val::Ellipsis) {
                    fa.default = Some(v);
                }
            }
            _ => return Err(m.err(e, "Field() takes at most one positional argument")),
        }
        for k in &call.arguments.keywords {
            let Some(arg) = &k.arg else {
                return Err(m.err(k, "`**` in Field() is not supported"));
            };
            let arg = arg.id.as_str();
            if arg == "default_factory" {
                fa.has_factory = true;
                fa.default = None;
                continue;
            }
            let v = self.ev.eval(m, &k.value, &env)?;
            let s = |v: Val| match v {
                Val::Str(s) => Ok(s),
                other => Err(m.err(
                    k,
                    format!("Field({arg}=...) must be a string, not {}", other.kind()),
                )),
            };
            match arg {
                "default" => {
                    if !matches!(v, Val::Ellipsis) {
                        fa.default = Some(v);
                    }
                }
                "description" => fa.description = Some(s(v)?),
                "title" => fa.title = Some(s(v)?),
                "alias" => fa.alias = Some(s(v)?),
                "serialization_alias" => fa.serialization_alias = Some(s(v)?),
                "validation_alias" => {
                    s(v)?;
                }
                "examples" => match v {
                    Val::List(items) => fa.examples = Some(items),
                    other => {
                        return Err(m.err(
                            k,
                            format!("Field(examples=...) must be a list, not {}", other.kind()),
                        ));
                    }
                },
                "ge" | "le" | "gt" | "lt" | "multiple_of" => {
                    if !matches!(v, Val::Int(_) | Val::Float(_)) {
                        return Err(m.err(k, format!("Field({arg}=...) must be a number")));
                    }
                    let key = match arg {
                        "ge" => "minimum",
                        "le" => "maximum",
                        "gt" => "exclusiveMinimum",
                        "lt" => "exclusiveMaximum",
                        _ => "multipleOf",
                    };
                    fa.constraints.push((key, v));
                }
                "min_length" | "max_length" => {
                    if !matches!(v, Val::Int(i) if i >= 0) {
                        return Err(
                            m.err(k, format!("Field({arg}=...) must be a non-negative int"))
                        );
                    }
                    fa.constraints.push((
                        if arg == "min_length" {
                            "min_length"
                        } else {
                            "max_length"
                        },
                        v,
                    ));
                }
                "pattern" => {
                    s(v.clone())?;
                    fa.constraints.push(("pattern", v));
                }
                // No effect on the JSON schema.
                "frozen" | "strict" | "validate_default" | "repr" | "init" | "kw_only" => {}
                other => return Err(m.err(k, format!("Field({other}=...) is not supported"))),
            }
        }
        Ok(Some(fa))
    }

    /// A type annotation.
    pub fn ty(&self, m: &Rc<Module>, e: &Expr) -> Result<Ty, SurfaceError> {
        let env = Env::default();
        match e {
            Expr::NoneLiteral(_) => Ok(Ty::NoneT),
            Expr::BinOp(b) if b.op == ast::Operator::BitOr => {
                let mut v = Vec::new();
                push_union(&mut v, self.ty(m, &b.left)?);
                push_union(&mut v, self.ty(m, &b.right)?);
                Ok(Ty::Union(v))
            }
            Expr::Name(_) | Expr::Attribute(_) => {
                let v = self.ev.eval(m, e, &env)?;
                self.ty_of_value(m, e, v)
            }
            Expr::Subscript(s) => {
                let head = self.ev.eval(m, &s.value, &env)?;
                let Val::External(h) = head else {
                    return Err(m.err(e, format!("subscripting {} is not supported", head.kind())));
                };
                let h = h
                    .strip_prefix("typing_extensions.")
                    .map_or(h.clone(), |x| format!("typing.{x}"));
                let args: Vec<&Expr> = match &*s.slice {
                    Expr::Tuple(t) => t.elts.iter().collect(),
                    x => vec![x],
                };
                match (h.as_str(), args.as_slice()) {
                    ("typing.Optional", [x]) => {
                        let mut v = Vec::new();
                        push_union(&mut v, self.ty(m, x)?);
                        push_union(&mut v, Ty::NoneT);
                        Ok(Ty::Union(v))
                    }
                    ("typing.Union", xs) if !xs.is_empty() => {
                        let mut v = Vec::new();
                        for x in xs {
                            push_union(&mut v, self.ty(m, x)?);
                        }
                        Ok(Ty::Union(v))
                    }
                    ("typing.List" | "builtins.list" | "typing.Sequence", [x]) => {
                        Ok(Ty::List(Box::new(self.ty(m, x)?)))
                    }
                    ("typing.Dict" | "builtins.dict" | "typing.Mapping", [k, v]) => {
                        if !matches!(self.ty(m, k)?, Ty::Str) {
                            return Err(m.err(k, "dict keys other than `str` are not supported"));
                        }
                        Ok(Ty::Dict(Box::new(self.ty(m, v)?)))
                    }
                    ("typing.Literal", xs) => Ok(Ty::Literal(
                        xs.iter()
                            .map(|x| self.ev.eval(m, x, &env))
                            .collect::<Result<_, _>>()?,
                    )),
                    ("typing.Annotated", _) => {
                        Err(m.err(e, "`Annotated` is supported only as a field's outer type"))
                    }
                    (h, _) => Err(m.err(e, format!("type `{h}[...]` is not supported"))),
                }
            }
            Expr::StringLiteral(_) => Err(m.err(
                e,
                "string (forward-reference) annotations are not supported",
            )),
            other => Err(m.err(
                e,
                format!("unsupported type expression `{}`", expr_kind(other)),
            )),
        }
    }

    fn ty_of_value(&self, m: &Module, e: &Expr, v: Val) -> Result<Ty, SurfaceError> {
        Ok(match v {
            Val::External(n) => match n.as_str() {
                "builtins.str" => Ty::Str,
                "builtins.int" => Ty::Int,
                "builtins.float" => Ty::Float,
                "builtins.bool" => Ty::Bool,
                "builtins.dict" | "typing.Dict" => Ty::Dict(Box::new(Ty::Any)),
                "builtins.list" | "typing.List" => Ty::List(Box::new(Ty::Any)),
                "typing.Any" => Ty::Any,
                "datetime.datetime" => Ty::DateTime,
                "datetime.date" => Ty::Date,
                "decimal.Decimal" => Ty::Decimal,
                other => return Err(m.err(e, format!("type `{other}` is not supported"))),
            },
            Val::None => Ty::NoneT,
            Val::Class(c) => match self.class_kind(&c)? {
                ClassKind::Model => Ty::Model(c),
                ClassKind::Enum => Ty::Enum(c),
                ClassKind::Other => {
                    return Err(m.err(
                        e,
                        format!(
                            "class `{}` is neither a pydantic model nor an enum",
                            c.name()
                        ),
                    ));
                }
            },
            other => return Err(m.err(e, format!("{} is not a type", other.kind()))),
        })
    }

    /// Pydantic's `model_json_schema()` of a model: `$defs` kept, keys sorted.
    pub fn json_schema(&self, spec: &ModelSpec) -> Result<Value, SurfaceError> {
        let mut g = Gen {
            p: self,
            defs: Map::new(),
            names: HashMap::new(),
            active: Vec::new(),
        };
        let mut top = g.model_schema(spec)?;
        if !g.defs.is_empty() {
            let defs = std::mem::take(&mut g.defs);
            top.as_object_mut()
                .expect("object")
                .insert("$defs".into(), Value::Object(defs));
        }
        Ok(pyd_sort(top, None))
    }

    /// The schema a tool server lists for a request model: pydantic's schema, then the
    /// servers' `get_schema_without_refs`.
    pub fn server_schema(&self, c: &ClassRef) -> Result<Value, SurfaceError> {
        let spec = self.model(c)?;
        let mut top = self.json_schema(&spec)?;
        // `_preserve_field_examples`: the top-level fields' examples as written.
        if let Some(Value::Object(props)) = top.get_mut("properties") {
            for f in &spec.fields {
                let (Some(ex), Some(Value::Object(p))) = (&f.examples, props.get_mut(&f.name))
                else {
                    continue;
                };
                let raw = examples_json(&spec, f, ex)?;
                p.insert("examples".into(), raw);
            }
        }
        let defs = match top.get("$defs") {
            Some(Value::Object(d)) => d.clone(),
            _ => Map::new(),
        };
        let mut out = inline_refs(&top, &defs, 0).map_err(|msg| {
            spec.module
                .err(&spec.at, format!("model `{}`: {msg}", spec.title))
        })?;
        if let Value::Object(o) = &mut out {
            o.shift_remove("$defs");
        }
        Ok(out)
    }
}

fn examples_json(spec: &ModelSpec, f: &FieldSpec, ex: &[Val]) -> Result<Value, SurfaceError> {
    ex.iter()
        .map(super::eval::Val::to_json)
        .collect::<Result<Vec<_>, _>>()
        .map(Value::Array)
        .map_err(|msg| {
            spec.module
                .err(&spec.at, format!("field `{}` examples: {msg}", f.name))
        })
}

fn push_union(v: &mut Vec<Ty>, t: Ty) {
    match t {
        Ty::Union(inner) => v.extend(inner),
        t => v.push(t),
    }
}

fn ann_head(e: &Expr) -> &Expr {
    match e {
        Expr::Subscript(s) => &s.value,
        e => e,
    }
}

fn annotated_parts(e: &Expr) -> Option<(&Expr, Vec<&Expr>)> {
    let Expr::Subscript(s) = e else { return None };
    let Expr::Tuple(t) = &*s.slice else {
        return None;
    };
    let (first, rest) = t.elts.split_first()?;
    Some((first, rest.iter().collect()))
}

fn decorator_name(e: &Expr) -> &str {
    match e {
        Expr::Name(n) => n.id.as_str(),
        Expr::Attribute(a) => a.attr.id.as_str(),
        Expr::Call(c) => decorator_name(&c.func),
        _ => "?",
    }
}

/// The docstring of a body, raw.
pub(crate) fn docstring(body: &[Stmt]) -> Option<&str> {
    match body.first()? {
        Stmt::Expr(x) => match &*x.value {
            Expr::StringLiteral(s) => Some(s.value.to_str()),
            _ => None,
        },
        _ => None,
    }
}

/// Python's `inspect.cleandoc`.
pub(crate) fn cleandoc(doc: &str) -> String {
    let expanded: Vec<String> = doc.split('\n').map(expandtabs).collect();
    let mut lines: Vec<&str> = expanded.iter().map(String::as_str).collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter_map(|l| {
            let content = l.trim_start_matches(' ');
            (!content.is_empty()).then(|| l.len() - content.len())
        })
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    if let Some(first) = lines.first_mut() {
        out.push(first.trim_start_matches(' ').to_string());
    }
    for l in lines.iter().skip(1) {
        out.push(l.get(indent..).unwrap_or("").to_string());
    }
    // Python strips with str.lstrip()/rstrip-free rules: only leading spaces are removed above.
    while out.last().is_some_and(|l| l.trim().is_empty()) {
        out.pop();
    }
    while out.first().is_some_and(|l| l.trim().is_empty()) {
        out.remove(0);
    }
    out.join("\n")
}

fn expandtabs(l: &str) -> String {
    if !l.contains('\t') {
        return l.to_string();
    }
    let mut s = String::new();
    let mut col = 0;
    for ch in l.chars() {
        if ch == '\t' {
            let n = 8 - col % 8;
            s.extend(std::iter::repeat_n(' ', n));
            col += n;
        } else {
            s.push(ch);
            col += 1;
        }
    }
    s
}

/// Python's `str.title()` (ASCII-and-beyond approximation by Unicode case).
pub(crate) fn py_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_cased = false;
    for ch in s.chars() {
        let cased = ch.is_lowercase() || ch.is_uppercase();
        if cased {
            if prev_cased {
                out.extend(ch.to_lowercase());
            } else {
                out.extend(ch.to_uppercase());
            }
        } else {
            out.push(ch);
        }
        prev_cased = cased;
    }
    out
}

/// Pydantic's title for a field name: `name.title().replace('_', ' ').strip()`.
pub(crate) fn title_from_name(name: &str) -> String {
    py_title(name).replace('_', " ").trim().to_string()
}

/// Pydantic's key sorting: every object sorted, except those directly under `properties` and
/// `default`; list items inherit their list's key.
pub(crate) fn pyd_sort(v: Value, parent_key: Option<&str>) -> Value {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(String, Value)> = m.into_iter().collect();
            if !matches!(parent_key, Some("properties" | "default")) {
                entries.sort_by(|a, b| a.0.cmp(&b.0));
            }
            let mut out = Map::new();
            for (k, v) in entries {
                let v = pyd_sort(v, Some(&k));
                out.insert(k, v);
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.into_iter().map(|x| pyd_sort(x, parent_key)).collect()),
        v => v,
    }
}

/// The servers' `_inline_refs`: a `$ref` object becomes its definition (itself inlined), with
/// the object's other keys added, or replacing `examples`, `title` and `description`; `$defs`
/// keys are dropped everywhere.
pub(crate) fn inline_refs(
    v: &Value,
    defs: &Map<String, Value>,
    depth: usize,
) -> Result<Value, String> {
    if depth > 64 {
        return Err("definitions nest too deeply (a recursive model?)".into());
    }
    match v {
        Value::Object(m) => {
            if let Some(r) = m.get("$ref") {
                if let Some(name) = r.as_str().and_then(|r| r.strip_prefix("#/$defs/")) {
                    let name = name.rsplit('/').next().unwrap_or(name);
                    if let Some(d) = defs.get(name) {
                        let mut result = inline_refs(d, defs, depth + 1)?;
                        if let Value::Object(res) = &mut result {
                            for (k, val) in m {
                                if k != "$ref"
                                    && (!res.contains_key(k)
                                        || matches!(
                                            k.as_str(),
                                            "examples" | "title" | "description"
                                        ))
                                {
                                    res.insert(k.clone(), val.clone());
                                }
                            }
                        }
                        return Ok(result);
                    }
                }
                return Ok(v.clone());
            }
            let mut out = Map::new();
            for (k, val) in m {
                if k != "$defs" {
                    out.insert(k.clone(), inline_refs(val, defs, depth + 1)?);
                }
            }
            Ok(Value::Object(out))
        }
        Value::Array(a) => Ok(Value::Array(
            a.iter()
                .map(|x| inline_refs(x, defs, depth + 1))
                .collect::<Result<_, _>>()?,
        )),
        v => Ok(v.clone()),
    }
}

/// Pydantic's JSON-schema generator state.
struct Gen<'p, 'e, 's> {
    p: &'p Pydantic<'e, 's>,
    defs: Map<String, Value>,
    /// Class key -> definition name.
    names: HashMap<String, String>,
    /// Models being generated (recursion guard).
    active: Vec<String>,
}

impl Gen<'_, '_, '_> {
    fn def_ref(&mut self, c: &ClassRef) -> Result<Value, SurfaceError> {
        let key = c.key();
        if let Some(n) = self.names.get(&key) {
            return Ok(json!({ "$ref": format!("#/$defs/{n}") }));
        }
        if self.active.contains(&key) {
            return Err(c.module.err(
                c.def(),
                format!("recursive model `{}` is not supported", c.name()),
            ));
        }
        let mut name = c.name().to_string();
        let mut i = 2;
        while self.defs.contains_key(&name) || self.names.values().any(|n| *n == name) {
            name = format!("{}__{i}", c.name());
            i += 1;
        }
        self.active.push(key.clone());
        let schema = match self.p.class_kind(c)? {
            ClassKind::Model => {
                let spec = self.p.model(c)?;
                self.model_schema(&spec)?
            }
            ClassKind::Enum => self.enum_schema(c)?,
            ClassKind::Other => unreachable!("types are models or enums"),
        };
        self.active.pop();
        self.names.insert(key, name.clone());
        self.defs.insert(name.clone(), schema);
        Ok(json!({ "$ref": format!("#/$defs/{name}") }))
    }

    fn enum_schema(&mut self, c: &ClassRef) -> Result<Value, SurfaceError> {
        let members = self.p.ev.enum_members(c)?;
        let mut s = Map::new();
        s.insert("title".into(), json!(c.name()));
        if let Some(d) = docstring(&c.def().body) {
            let d = cleandoc(d);
            if !d.is_empty() && d != "An enumeration." {
                s.insert("description".into(), json!(d));
            }
        }
        let vals: Vec<Value> = members
            .iter()
            .map(|(_, v)| v.to_json().map_err(|msg| c.module.err(c.def(), msg)))
            .collect::<Result<_, _>>()?;
        let ty = json_type_of(&vals);
        s.insert("enum".into(), Value::Array(vals));
        if let Some(t) = ty {
            s.insert("type".into(), json!(t));
        }
        Ok(Value::Object(s))
    }

    fn model_schema(&mut self, spec: &ModelSpec) -> Result<Value, SurfaceError> {
        let mut props = Map::new();
        let mut required = Vec::new();
        for f in &spec.fields {
            let fs = self.field_schema(spec, f)?;
            props.insert(f.key().to_string(), fs);
            if f.required() {
                required.push(json!(f.key()));
            }
        }
        let mut s = Map::new();
        s.insert("properties".into(), Value::Object(props));
        if !required.is_empty() {
            s.insert("required".into(), Value::Array(required));
        }
        s.insert("title".into(), json!(spec.title));
        s.insert("type".into(), json!("object"));
        if let Some(d) = &spec.doc {
            s.insert("description".into(), json!(d));
        }
        match spec.extra {
            Extra::Forbid => {
                s.insert("additionalProperties".into(), json!(false));
            }
            Extra::Allow => {
                s.insert("additionalProperties".into(), json!(true));
            }
            Extra::Ignore => {}
        }
        Ok(Value::Object(s))
    }

    fn field_schema(&mut self, spec: &ModelSpec, f: &FieldSpec) -> Result<Value, SurfaceError> {
        let m = &spec.module;
        let at = |msg: String| {
            m.err(
                &spec.at,
                format!("model `{}`, field `{}`: {msg}", spec.title, f.name),
            )
        };
        let mut s = self.ty_schema(&f.ty)?;
        if !f.constraints.is_empty() {
            apply_constraints(&mut s, &f.ty, &f.constraints).map_err(at)?;
        }
        let o = s.as_object_mut().expect("schemas are objects");
        if let Some(d) = &f.default {
            o.insert(
                "default".into(),
                d.to_json().map_err(|e| at(format!("default: {e}")))?,
            );
        }
        if let Some(t) = &f.title {
            o.insert("title".into(), json!(t));
        } else if title_should_be_set(&f.ty) {
            o.insert("title".into(), json!(title_from_name(f.key())));
        }
        if let Some(d) = &f.description {
            o.insert("description".into(), json!(d));
        }
        if let Some(ex) = &f.examples {
            let v = ex
                .iter()
                .map(Val::to_json)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| at(format!("examples: {e}")))?;
            o.insert("examples".into(), Value::Array(v));
        }
        Ok(s)
    }

    fn ty_schema(&mut self, t: &Ty) -> Result<Value, SurfaceError> {
        Ok(match t {
            Ty::Str => json!({"type": "string"}),
            Ty::Int => json!({"type": "integer"}),
            Ty::Float => json!({"type": "number"}),
            Ty::Bool => json!({"type": "boolean"}),
            Ty::DateTime => json!({"format": "date-time", "type": "string"}),
            Ty::Date => json!({"format": "date", "type": "string"}),
            Ty::Decimal => json!({"type": "string"}),
            Ty::Any => json!({}),
            Ty::NoneT => json!({"type": "null"}),
            Ty::List(x) => json!({"items": self.ty_schema(x)?, "type": "array"}),
            Ty::Dict(v) => {
                let mut vs = self.ty_schema(v)?;
                if let Value::Object(o) = &mut vs {
                    o.shift_remove("title");
                }
                let ap = if vs.as_object().is_some_and(Map::is_empty) {
                    json!(true)
                } else {
                    vs
                };
                json!({"additionalProperties": ap, "type": "object"})
            }
            Ty::Union(members) => {
                let has_none = members.iter().any(|m| matches!(m, Ty::NoneT));
                let rest: Vec<&Ty> = members.iter().filter(|m| !matches!(m, Ty::NoneT)).collect();
                let inner = match rest.as_slice() {
                    [] => json!({"type": "null"}),
                    [one] => self.ty_schema(one)?,
                    many => {
                        let generated = many
                            .iter()
                            .map(|x| self.ty_schema(x))
                            .collect::<Result<Vec<_>, _>>()?;
                        flattened_anyof(generated)
                    }
                };
                if has_none && !rest.is_empty() {
                    flattened_anyof(vec![inner, json!({"type": "null"})])
                } else {
                    inner
                }
            }
            Ty::Literal(vals) => {
                let vals: Vec<Value> = vals
                    .iter()
                    .map(super::eval::Val::to_json)
                    .collect::<Result<_, _>>()
                    .map_err(|e| SurfaceError::Other(format!("Literal value: {e}")))?;
                let mut s = Map::new();
                let ty = json_type_of(&vals);
                if vals.len() == 1 {
                    s.insert("const".into(), vals[0].clone());
                } else {
                    s.insert("enum".into(), Value::Array(vals));
                }
                if let Some(t) = ty {
                    s.insert("type".into(), json!(t));
                }
                Value::Object(s)
            }
            Ty::Enum(c) | Ty::Model(c) => self.def_ref(c)?,
        })
    }
}

/// Pydantic's `get_flattened_anyof`: members that are bare `anyOf`s are spliced in, repeats
/// dropped, a single member returned as itself.
fn flattened_anyof(schemas: Vec<Value>) -> Value {
    let mut members: Vec<Value> = Vec::new();
    for s in schemas {
        match s {
            Value::Object(o) if o.len() == 1 && o.contains_key("anyOf") => {
                if let Some(Value::Array(a)) = o.into_iter().next().map(|(_, v)| v) {
                    for x in a {
                        if !members.contains(&x) {
                            members.push(x);
                        }
                    }
                }
            }
            s => {
                if !members.contains(&s) {
                    members.push(s);
                }
            }
        }
    }
    if members.len() == 1 {
        members.pop().expect("one")
    } else {
        json!({ "anyOf": members })
    }
}

fn json_type_of(vals: &[Value]) -> Option<&'static str> {
    let all = |f: fn(&Value) -> bool| !vals.is_empty() && vals.iter().all(f);
    if all(Value::is_string) {
        Some("string")
    } else if all(|v| v.is_i64() || v.is_u64()) {
        Some("integer")
    } else if all(Value::is_f64) {
        Some("number")
    } else if all(Value::is_boolean) {
        Some("boolean")
    } else {
        None
    }
}

/// Pydantic's `field_title_should_be_set`: not for a (nullable) model or enum.
fn title_should_be_set(t: &Ty) -> bool {
    let inner = match t {
        Ty::Union(ms) => {
            let rest: Vec<&Ty> = ms.iter().filter(|m| !matches!(m, Ty::NoneT)).collect();
            match rest.as_slice() {
                [one] => *one,
                _ => return true,
            }
        }
        t => t,
    };
    !matches!(inner, Ty::Enum(_) | Ty::Model(_))
}

/// Puts `Field(ge=..., min_length=...)` constraints on the schema of the (non-null) type.
fn apply_constraints(s: &mut Value, t: &Ty, cs: &[(&'static str, Val)]) -> Result<(), String> {
    // Optional[X]: the constraints go on X.
    if let Ty::Union(ms) = t {
        let rest: Vec<&Ty> = ms.iter().filter(|m| !matches!(m, Ty::NoneT)).collect();
        let [one] = rest.as_slice() else {
            return Err("constraints on a union are not supported".into());
        };
        let Some(Value::Array(any)) = s.get_mut("anyOf") else {
            return Err("constraints on a union are not supported".into());
        };
        let idx = any
            .iter()
            .position(|x| x != &json!({"type": "null"}))
            .ok_or("constraints on null")?;
        return apply_constraints(&mut any[idx], one, cs);
    }
    let o = s.as_object_mut().ok_or("schema is not an object")?;
    if o.contains_key("$ref") {
        return Err("constraints on a model or enum are not supported".into());
    }
    for (k, v) in cs {
        let key = match (*k, t) {
            ("min_length", Ty::List(_)) => "minItems",
            ("max_length", Ty::List(_)) => "maxItems",
            ("min_length", Ty::Str) => "minLength",
            ("max_length", Ty::Str) => "maxLength",
            ("pattern", Ty::Str) => "pattern",
            (
                "minimum" | "maximum" | "exclusiveMinimum" | "exclusiveMaximum" | "multipleOf",
                Ty::Int | Ty::Float,
            ) => k,
            (k, t) => return Err(format!("constraint `{k}` on {t:?} is not supported")),
        };
        o.insert(key.into(), v.to_json()?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleandoc_as_python() {
        assert_eq!(cleandoc("One line."), "One line.");
        assert_eq!(
            cleandoc("  First.\n\n    Second\n      indented\n  "),
            "First.\n\nSecond\n  indented"
        );
        assert_eq!(
            cleandoc("\n    Starts on line two.\n    "),
            "Starts on line two."
        );
        assert_eq!(cleandoc("A\n\tB"), "A\nB");
    }

    #[test]
    fn titles_as_pydantic() {
        assert_eq!(title_from_name("engagement_code"), "Engagement Code");
        assert_eq!(title_from_name("$filter"), "$Filter");
        assert_eq!(title_from_name("ssn_last_4"), "Ssn Last 4");
        assert_eq!(title_from_name("a1b"), "A1B");
        assert_eq!(title_from_name("_x_"), "X");
        assert_eq!(title_from_name("ItemInternalId"), "Iteminternalid");
    }

    #[test]
    fn sort_skips_properties_and_default_only() {
        let v = json!({"type": "object", "properties": {"b": {"type": "x", "description": "d"}, "a": {}},
            "default": {"z": 1, "y": {"k": 1, "j": 2}}, "examples": [{"b": 1, "a": 2}]});
        let s = pyd_sort(v, None);
        assert_eq!(
            serde_json::to_string(&s).unwrap(),
            r#"{"default":{"z":1,"y":{"j":2,"k":1}},"examples":[{"a":2,"b":1}],"properties":{"b":{"description":"d","type":"x"},"a":{}},"type":"object"}"#
        );
    }

    #[test]
    fn inline_refs_merges_siblings_like_the_servers() {
        let defs = json!({"E": {"description": "enum doc", "enum": ["a"], "title": "E", "type": "string"}});
        let v = json!({"p": {"$ref": "#/$defs/E", "default": "a", "description": "field doc", "examples": ["a"], "type": "ignored"}});
        let out = inline_refs(&v, defs.as_object().unwrap(), 0).unwrap();
        assert_eq!(
            serde_json::to_string(&out).unwrap(),
            r#"{"p":{"description":"field doc","enum":["a"],"title":"E","type":"string","default":"a","examples":["a"]}}"#
        );
        let cyclic = json!({"A": {"items": {"$ref": "#/$defs/A"}}});
        assert!(
            inline_refs(
                &json!({"$ref": "#/$defs/A"}),
                cyclic.as_object().unwrap(),
                0
            )
            .is_err()
        );
    }

    #[test]
    fn anyof_flattening_and_dedup() {
        let s = flattened_anyof(vec![
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}]}),
            json!({"type": "null"}),
        ]);
        assert_eq!(
            s,
            json!({"anyOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]})
        );
        assert_eq!(
            flattened_anyof(vec![json!({"type": "string"}), json!({"type": "string"})]),
            json!({"type": "string"})
        );
    }
}
