//! The structure read from the reference's sources against our own tool declarations: tool
//! names, parameter names and order, types, enums, constraints, required and defaults.

use crate::{ServerSurface, SurfaceError};
use serde_json::Value;
use tb_sandbox::Domain;
use tb_sandbox::schema::{Constraints, Default as Dflt, Kind, Model};

/// One disagreement between the reference's sources and our declarations.
#[derive(Debug, Clone, PartialEq)]
pub struct Mismatch {
    /// Server name.
    pub server: String,
    /// Tool name.
    pub tool: String,
    /// Parameter path (`item.subject`), when the mismatch is about one.
    pub param: Option<String>,
    /// Where the reference's request model is defined (file relative to the data root).
    pub source: String,
    /// What differs.
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.param {
            Some(p) => write!(
                f,
                "{}: tool `{}`, parameter `{p}` ({}): {}",
                self.server, self.tool, self.source, self.message
            ),
            None => write!(
                f,
                "{}: tool `{}` ({}): {}",
                self.server, self.tool, self.source, self.message
            ),
        }
    }
}

/// Checks a surface read from the sources against a domain's declarations. Every mismatch is
/// listed in the error.
pub fn check_against_declarations(
    surface: &ServerSurface,
    domain: &Domain,
) -> Result<(), SurfaceError> {
    let mut out = Vec::new();
    let mk = |tool: &str, source: &str, param: Option<String>, message: String| Mismatch {
        server: surface.server.clone(),
        tool: tool.to_string(),
        param,
        source: source.to_string(),
        message,
    };
    for t in &surface.tools {
        let Some(decl) = domain.tool(&t.name) else {
            out.push(mk(
                &t.name,
                &t.source,
                None,
                "listed by the reference, not declared by us".into(),
            ));
            continue;
        };
        let mut diffs = Vec::new();
        compare_model(&t.input_schema, &decl.decl.input, "", &mut diffs);
        for (param, message) in diffs {
            out.push(mk(&t.name, &t.source, param, message));
        }
    }
    for d in domain.tools() {
        if !surface.tools.iter().any(|t| t.name == d.decl.name) {
            out.push(mk(
                &d.decl.name,
                "-",
                None,
                "declared by us, not listed by the reference".into(),
            ));
        }
    }
    if out.is_empty() {
        Ok(())
    } else {
        Err(SurfaceError::Mismatch(out))
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// Compares an object schema with a model, field by field.
fn compare_model(
    schema: &Value,
    model: &Model,
    prefix: &str,
    out: &mut Vec<(Option<String>, String)>,
) {
    let at = |p: &str| {
        if p.is_empty() {
            None
        } else {
            Some(p.to_string())
        }
    };
    let empty = serde_json::Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let theirs: Vec<&String> = props.keys().collect();
    let ours: Vec<&String> = model.fields.iter().map(|f| &f.name).collect();
    for name in &theirs {
        if !ours.contains(name) {
            out.push((
                Some(join(prefix, name)),
                "reference parameter missing from our declaration".into(),
            ));
        }
    }
    for name in &ours {
        if !theirs.contains(name) {
            out.push((
                Some(join(prefix, name)),
                "declared by us, not in the reference's model".into(),
            ));
        }
    }
    let common_theirs: Vec<&&String> = theirs.iter().filter(|n| ours.contains(n)).collect();
    let common_ours: Vec<&&String> = ours.iter().filter(|n| theirs.contains(n)).collect();
    if common_theirs != common_ours {
        out.push((
            at(prefix),
            format!("parameter order differs: reference {common_theirs:?}, ours {common_ours:?}"),
        ));
    }
    let forbid = schema.get("additionalProperties") == Some(&Value::Bool(false));
    if forbid != model.forbid_extra {
        out.push((
            at(prefix),
            format!(
                "extra=\"forbid\": reference {forbid}, ours {}",
                model.forbid_extra
            ),
        ));
    }
    for f in &model.fields {
        let Some(p) = props.get(&f.name) else {
            continue;
        };
        let path = join(prefix, &f.name);
        let req = required.contains(&f.name.as_str());
        match (&f.default, req, p.get("default")) {
            (Dflt::Required, true, None) => {}
            (Dflt::Required, _, _) => out.push((
                Some(path.clone()),
                "required by us, optional in the reference".into(),
            )),
            (_, true, _) => out.push((
                Some(path.clone()),
                "required in the reference, optional by us".into(),
            )),
            (Dflt::Now, false, None) => {}
            (Dflt::Now, false, Some(d)) => {
                out.push((
                    Some(path.clone()),
                    format!("default: reference {d}, ours the clock"),
                ));
            }
            // No default listed and not required: a `default_factory` (ours: its value).
            (Dflt::Value(_), false, None) => {}
            (Dflt::Value(v), false, d) => {
                if !d.is_some_and(|d| json_eq(d, v)) {
                    out.push((
                        Some(path.clone()),
                        format!(
                            "default: reference {}, ours {v}",
                            d.map_or_else(String::new, Value::to_string)
                        ),
                    ));
                }
            }
        }
        compare_kind(p, &f.kind, &path, out);
    }
}

/// Numbers equal by value (`0` and `0.0`), everything else structurally.
fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_eq(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Compares a property schema with a kind.
fn compare_kind(s: &Value, k: &Kind, path: &str, out: &mut Vec<(Option<String>, String)>) {
    let here = || Some(path.to_string());
    match k {
        Kind::Optional(inner) => {
            let Some(members) = s.get("anyOf").and_then(Value::as_array) else {
                out.push((
                    here(),
                    "optional (or null) by us, not nullable in the reference".into(),
                ));
                return;
            };
            let null = serde_json::json!({"type": "null"});
            if members.last() != Some(&null) {
                out.push((
                    here(),
                    "optional by us, not nullable in the reference".into(),
                ));
                return;
            }
            let rest = &members[..members.len() - 1];
            match (inner.as_ref(), rest) {
                (Kind::Union(alts), rest) if rest.len() > 1 => compare_union(rest, alts, path, out),
                (Kind::Constrained(b, _), rest)
                    if matches!(b.as_ref(), Kind::Union(_)) && rest.len() > 1 =>
                {
                    out.push((here(), "constraints on a union are not compared".into()));
                }
                (inner, [one]) => compare_kind(one, inner, path, out),
                _ => out.push((here(), "union members differ".into())),
            }
        }
        Kind::Union(alts) => match s.get("anyOf").and_then(Value::as_array) {
            Some(members) => compare_union(members, alts, path, out),
            None => out.push((here(), "a union by us, not in the reference".into())),
        },
        Kind::Constrained(inner, c) => {
            let theirs = constraints_of(s);
            if theirs != *c {
                out.push((here(), format!("constraints: reference {theirs}, ours {c}")));
            }
            compare_base(s, inner, path, out);
        }
        k => {
            let theirs = constraints_of(s);
            if theirs != Constraints::default() {
                out.push((
                    here(),
                    format!("constraints: reference {theirs}, ours none"),
                ));
            }
            compare_base(s, k, path, out);
        }
    }
}

fn compare_union(
    members: &[Value],
    alts: &[Kind],
    path: &str,
    out: &mut Vec<(Option<String>, String)>,
) {
    if members.len() != alts.len() {
        out.push((
            Some(path.to_string()),
            format!(
                "union of {} types in the reference, {} by us",
                members.len(),
                alts.len()
            ),
        ));
        return;
    }
    for (i, (m, a)) in members.iter().zip(alts).enumerate() {
        compare_kind(m, a, &format!("{path}[{i}]"), out);
    }
}

fn compare_base(s: &Value, k: &Kind, path: &str, out: &mut Vec<(Option<String>, String)>) {
    let here = || Some(path.to_string());
    let ty = s.get("type").and_then(Value::as_str);
    let fmt = s.get("format").and_then(Value::as_str);
    if s.get("anyOf").is_some() {
        out.push((
            here(),
            format!(
                "nullable or a union in the reference, `{}` by us",
                kind_name(k)
            ),
        ));
        return;
    }
    let ok = match k {
        Kind::Str => ty == Some("string") && fmt.is_none() && s.get("enum").is_none(),
        // Decimal is listed as a string in serialization mode.
        Kind::Decimal => ty == Some("string") && fmt.is_none() && s.get("enum").is_none(),
        Kind::Int => ty == Some("integer"),
        Kind::Float => ty == Some("number"),
        Kind::Bool => ty == Some("boolean"),
        Kind::DateTime => ty == Some("string") && fmt == Some("date-time"),
        Kind::Date => ty == Some("string") && fmt == Some("date"),
        Kind::Any => ty.is_none() && s.get("enum").is_none() && s.get("properties").is_none(),
        Kind::Enum(vals) => {
            let theirs: Option<Vec<&str>> = s
                .get("enum")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect());
            match theirs {
                Some(t) if t == vals.iter().map(String::as_str).collect::<Vec<_>>() => true,
                Some(t) => {
                    out.push((
                        here(),
                        format!("enum values: reference {t:?}, ours {:?}", vals.as_ref()),
                    ));
                    return;
                }
                None => false,
            }
        }
        Kind::List(inner) => {
            if ty == Some("array") {
                match s.get("items") {
                    Some(items) => compare_kind(items, inner, &format!("{path}[]"), out),
                    None => out.push((here(), "array without items in the reference".into())),
                }
                return;
            }
            false
        }
        Kind::Dict(inner) => {
            if ty == Some("object") && s.get("properties").is_none() {
                match s.get("additionalProperties") {
                    Some(Value::Bool(true)) if matches!(inner.as_ref(), Kind::Any) => {}
                    Some(v @ Value::Object(_)) => {
                        compare_kind(v, inner, &format!("{path}{{}}"), out);
                    }
                    other => out.push((
                        here(),
                        format!(
                            "dict values: reference {}, ours {}",
                            other.map_or_else(|| "none".to_string(), Value::to_string),
                            kind_name(inner)
                        ),
                    )),
                }
                return;
            }
            false
        }
        Kind::Model(m) => {
            if ty == Some("object") && s.get("properties").is_some() {
                compare_model(s, m, path, out);
                return;
            }
            false
        }
        Kind::Optional(_) | Kind::Union(_) | Kind::Constrained(..) => {
            compare_kind(s, k, path, out);
            return;
        }
    };
    if !ok {
        out.push((
            here(),
            format!("type: reference {}, ours `{}`", short(s), kind_name(k)),
        ));
    }
}

fn constraints_of(s: &Value) -> Constraints {
    let n = |k: &str| s.get(k).and_then(Value::as_f64);
    let u = |k: &str| {
        s.get(k)
            .and_then(Value::as_u64)
            .map(|x| usize::try_from(x).unwrap_or(usize::MAX))
    };
    Constraints {
        min_len: u("minLength").or(u("minItems")),
        max_len: u("maxLength").or(u("maxItems")),
        ge: n("minimum"),
        gt: n("exclusiveMinimum"),
        le: n("maximum"),
        lt: n("exclusiveMaximum"),
    }
}

fn short(s: &Value) -> String {
    let mut t = s.clone();
    if let Value::Object(o) = &mut t {
        for k in ["description", "examples", "title", "default", "properties"] {
            o.shift_remove(k);
        }
    }
    t.to_string()
}

fn kind_name(k: &Kind) -> String {
    match k {
        Kind::Enum(v) => format!("enum{:?}", v.as_ref()),
        Kind::List(k) => format!("list<{}>", kind_name(k)),
        Kind::Dict(k) => format!("dict<{}>", kind_name(k)),
        Kind::Optional(k) => format!("{}?", kind_name(k)),
        Kind::Model(m) => m.name.clone(),
        Kind::Union(a) => a.iter().map(kind_name).collect::<Vec<_>>().join("|"),
        Kind::Constrained(k, _) => format!("{}{{..}}", kind_name(k)),
        scalar => scalar.scalar_name().unwrap_or_default().into(),
    }
}
