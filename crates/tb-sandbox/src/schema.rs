//! Schemas as data: the kinds of values a field holds, models (rows and tool inputs), tables.
//!
//! The project writes its table and tool definitions in a compact text form (the `.tables` and
//! `.tools` files of each domain). This module parses that form. A field line is
//! `name kind [= default] [: description]`, where `kind` is one of
//! `str int float bool decimal datetime date any`, `enum["a","b"]`, `list<K>`, `dict<K>`, a
//! model name, a union `A|B`, each optionally followed by constraints `{min=1,ge=0}` and by `?`
//! for "or null". A default is a JSON literal, or `@now` (the session clock).

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// An error in a schema text, with its line.
#[derive(Debug, thiserror::Error)]
#[error("{source_name}:{line}: {message}")]
pub struct SchemaError {
    /// The text's name (a file name).
    pub source_name: String,
    /// 1-based line.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Numeric and length constraints, as pydantic `Field(ge=..., min_length=...)` declares them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Constraints {
    /// `min_length`.
    pub min_len: Option<usize>,
    /// `max_length`.
    pub max_len: Option<usize>,
    /// `ge`.
    pub ge: Option<f64>,
    /// `gt`.
    pub gt: Option<f64>,
    /// `le`.
    pub le: Option<f64>,
    /// `lt`.
    pub lt: Option<f64>,
}

impl Constraints {
    fn is_empty(&self) -> bool {
        *self == Constraints::default()
    }
}

/// Written as the JSON-schema keywords they come from (`maxLength=20, minimum=0`), or `none`.
impl std::fmt::Display for Constraints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lens = [("minLength", self.min_len), ("maxLength", self.max_len)];
        let bounds = [
            ("minimum", self.ge),
            ("exclusiveMinimum", self.gt),
            ("maximum", self.le),
            ("exclusiveMaximum", self.lt),
        ];
        let mut parts: Vec<String> = lens
            .iter()
            .filter_map(|(k, v)| v.map(|v| format!("{k}={v}")))
            .collect();
        parts.extend(
            bounds
                .iter()
                .filter_map(|(k, v)| v.map(|v| format!("{k}={v}"))),
        );
        if parts.is_empty() {
            f.write_str("none")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// What a field holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Kind {
    /// `str`.
    Str,
    /// `int`.
    Int,
    /// `float`.
    Float,
    /// `bool`.
    Bool,
    /// `Decimal`: dumped as a string that keeps its exponent.
    Decimal,
    /// `datetime`: dumped as ISO-8601, UTC as `Z`.
    DateTime,
    /// `date`: dumped as `YYYY-MM-DD`.
    Date,
    /// Anything JSON (`Any`).
    Any,
    /// A string enum: its values.
    Enum(Arc<Vec<String>>),
    /// `List[K]`.
    List(Box<Kind>),
    /// `Dict[str, K]`.
    Dict(Box<Kind>),
    /// `Optional[K]`.
    Optional(Box<Kind>),
    /// A nested model.
    Model(Arc<Model>),
    /// `Union[A, B, ...]` (smart mode: first exact match, else first that validates).
    Union(Vec<Kind>),
    /// A kind with constraints.
    Constrained(Box<Kind>, Constraints),
}

impl Kind {
    /// The lowercase name of a kind without parameters (`str`, `int`, `float`, `bool`,
    /// `decimal`, `datetime`, `date`, `any`); `None` for the others.
    pub fn scalar_name(&self) -> Option<&'static str> {
        Some(match self {
            Kind::Str => "str",
            Kind::Int => "int",
            Kind::Float => "float",
            Kind::Bool => "bool",
            Kind::Decimal => "decimal",
            Kind::DateTime => "datetime",
            Kind::Date => "date",
            Kind::Any => "any",
            _ => return None,
        })
    }

    /// The kind without `Optional` and constraints.
    pub fn base(&self) -> &Kind {
        match self {
            Kind::Optional(k) | Kind::Constrained(k, _) => k.base(),
            k => k,
        }
    }
}

/// A field's default.
#[derive(Debug, Clone, PartialEq)]
pub enum Default {
    /// No default: the field is required.
    Required,
    /// A JSON value (validated like input, as pydantic does not, but all v1 defaults are valid).
    Value(Value),
    /// The session clock (`default_factory=datetime.utcnow`).
    Now,
}

/// One field of a model.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: Kind,
    /// Default.
    pub default: Default,
    /// Our description (for tool input schemas).
    pub description: String,
}

/// A model: an ordered list of fields, like a pydantic `BaseModel`.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    /// Class name (used in union error locations).
    pub name: String,
    /// Fields, in declaration order (the dump order).
    pub fields: Vec<Field>,
    /// `extra="forbid"`: unknown keys are an error; otherwise they are ignored.
    pub forbid_extra: bool,
    /// Our description.
    pub description: String,
    /// The dump's shape (every field, in order, null values), built on first use: a
    /// validated row starts as a copy of it, so no field name is hashed per row.
    pub template: RowTemplate,
}

/// A model's fields as an empty row (names in order, null values), kept with the model and
/// built on first use. Not part of the model's identity: every template compares equal, and
/// a cloned model builds its own (its fields may be edited after the clone).
#[derive(Default)]
pub struct RowTemplate(
    std::sync::OnceLock<Option<serde_json::Map<String, Value>>>,
    std::sync::OnceLock<bool>,
);

impl RowTemplate {
    /// The template of `fields`, `None` when two fields share a name (the row then has fewer
    /// entries than the model has fields).
    pub fn get(&self, fields: &[Field]) -> Option<&serde_json::Map<String, Value>> {
        self.0
            .get_or_init(|| {
                let mut m = serde_json::Map::with_capacity(fields.len());
                for f in fields {
                    m.insert(f.name.clone(), Value::Null);
                }
                (m.len() == fields.len()).then_some(m)
            })
            .as_ref()
    }
}

impl Clone for RowTemplate {
    fn clone(&self) -> Self {
        RowTemplate::default()
    }
}

impl PartialEq for RowTemplate {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Debug for RowTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RowTemplate")
    }
}

impl Kind {
    /// Whether validating a value this kind gave (its JSON-mode dump) gives it back
    /// unchanged. Conservative: unions (pydantic's smart mode may pick another member for
    /// the dump than for the input) are not.
    fn revalidates_to_itself(&self) -> bool {
        match self {
            Kind::Str
            | Kind::Int
            | Kind::Float
            | Kind::Bool
            | Kind::Decimal
            | Kind::DateTime
            | Kind::Date
            | Kind::Any
            | Kind::Enum(_) => true,
            Kind::List(k) | Kind::Dict(k) | Kind::Optional(k) | Kind::Constrained(k, _) => {
                k.revalidates_to_itself()
            }
            Kind::Model(m) => m.fields_revalidate_to_themselves(),
            Kind::Union(_) => false,
        }
    }
}

impl Model {
    /// Whether validating a row this model gave (every field present, so no default is
    /// used) gives it back unchanged: true when no field's kind holds a union (see
    /// [`Kind`]'s rule). The reference validates a built model's dump again when it is
    /// stored; a store may skip that when this holds. Found once per model.
    pub fn revalidates_to_itself(&self) -> bool {
        *self
            .template
            .1
            .get_or_init(|| self.fields_revalidate_to_themselves())
    }

    fn fields_revalidate_to_themselves(&self) -> bool {
        self.fields.iter().all(|f| f.kind.revalidates_to_itself())
    }

    /// A field by name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// How a row's id is computed (`get_id()`).
#[derive(Debug, Clone, PartialEq)]
pub enum IdSpec {
    /// The value of one field.
    Field(String),
    /// A template of field values, e.g. `{catalog_id}_{pool_type}` (always a string).
    Template(String),
}

/// A table: a model plus where its rows start and how they are keyed.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    /// Table name (`<key>_<file stem>`).
    pub name: String,
    /// Initial-data file, relative to the toolslib folder, without `.json`.
    pub file: String,
    /// How `get_id()` is computed, if the model has one.
    pub id: Option<IdSpec>,
    /// Fields dropped from the stable state.
    pub unstable: Vec<String>,
    /// The row model.
    pub model: Arc<Model>,
    /// The rows' keys in stable order, escaped once (how a row's stable text is written).
    pub(crate) stable_keys: crate::pyjson::KeyPlanCell,
}

/// A toolset line: a folder of the reference package with its namespace.
#[derive(Debug, Clone, PartialEq)]
pub struct Toolset {
    /// Path relative to toolslib, e.g. `external_retail_toolset/oms`.
    pub path: String,
    /// Tool-name prefix, if any.
    pub namespace: Option<String>,
}

/// A tool's declaration: name, our description and its input model.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDecl {
    /// Full tool name as the agent sees it.
    pub name: String,
    /// The input model (its description is the tool description).
    pub input: Arc<Model>,
}

/// Everything a schema text declares.
#[derive(Debug, Clone, Default)]
pub struct SchemaDoc {
    /// Toolsets in order.
    pub toolsets: Vec<Toolset>,
    /// Tables in order.
    pub tables: Vec<TableDef>,
    /// Tools in order.
    pub tools: Vec<ToolDecl>,
    /// Named models.
    pub models: HashMap<String, Arc<Model>>,
}

enum Block {
    None,
    Table(usize),
    Model(String),
    Tool(usize),
}

/// Parses one or more schema texts into one document. Models may be used before they are
/// declared only if declared in an earlier text or earlier in the same text.
pub fn parse(texts: &[(&str, &str)]) -> Result<SchemaDoc, SchemaError> {
    let mut doc = SchemaDoc::default();
    for (source_name, text) in texts {
        parse_one(&mut doc, source_name, text)?;
    }
    Ok(doc)
}

fn parse_one(doc: &mut SchemaDoc, source_name: &str, text: &str) -> Result<(), SchemaError> {
    let err = |line: usize, message: String| SchemaError {
        source_name: source_name.to_string(),
        line,
        message,
    };
    let mut block = Block::None;
    // Models under construction are kept mutable until the block ends.
    let mut pending: Option<Model> = None;
    let finish = |doc: &mut SchemaDoc, block: &Block, pending: &mut Option<Model>| {
        if let Some(m) = pending.take() {
            let m = Arc::new(m);
            match block {
                Block::Table(i) => doc.tables[*i].model = m,
                Block::Model(name) => {
                    doc.models.insert(name.clone(), m);
                }
                Block::Tool(i) => doc.tools[*i].input = m,
                Block::None => {}
            }
        }
    };
    for (idx, raw) in text.lines().enumerate() {
        let lineno = idx + 1;
        let line = raw.trim_end();
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let indented = line.starts_with(' ');
        let line = line.trim();
        if !indented {
            finish(doc, &block, &mut pending);
            let (head, rest) = line.split_once(' ').unwrap_or((line, ""));
            let mut words = rest.split_whitespace();
            let name = words.next().unwrap_or("").to_string();
            if name.is_empty() && head != "toolset" {
                return Err(err(lineno, format!("`{head}` needs a name")));
            }
            match head {
                "toolset" => {
                    let mut ts = Toolset {
                        path: name,
                        namespace: None,
                    };
                    for w in words {
                        if let Some(ns) = w.strip_prefix("namespace=") {
                            ts.namespace = Some(ns.to_string());
                        }
                    }
                    doc.toolsets.push(ts);
                    block = Block::None;
                }
                "table" => {
                    let mut t = TableDef {
                        name: name.clone(),
                        file: String::new(),
                        id: None,
                        unstable: Vec::new(),
                        model: Arc::new(empty_model(&name)),
                        stable_keys: crate::pyjson::KeyPlanCell::default(),
                    };
                    let mut m = empty_model(&name);
                    for w in words {
                        if let Some(v) = w.strip_prefix("file=") {
                            t.file = v.to_string();
                        } else if let Some(v) = w.strip_prefix("id=") {
                            t.id = Some(if v.contains('{') {
                                IdSpec::Template(v.to_string())
                            } else {
                                IdSpec::Field(v.to_string())
                            });
                        } else if let Some(v) = w.strip_prefix("unstable=") {
                            t.unstable = v.split(',').map(str::to_string).collect();
                        } else if w == "forbid" {
                            m.forbid_extra = true;
                        } else if let Some(v) = w.strip_prefix("class=") {
                            m.name = v.to_string();
                        } else {
                            return Err(err(lineno, format!("unknown table option `{w}`")));
                        }
                    }
                    doc.tables.push(t);
                    block = Block::Table(doc.tables.len() - 1);
                    pending = Some(m);
                }
                "model" | "tool" => {
                    let mut m = empty_model(&name);
                    for w in words {
                        if w == "forbid" {
                            m.forbid_extra = true;
                        } else if let Some(v) = w.strip_prefix("class=") {
                            m.name = v.to_string();
                        } else {
                            return Err(err(lineno, format!("unknown {head} option `{w}`")));
                        }
                    }
                    if head == "model" {
                        block = Block::Model(name);
                    } else {
                        doc.tools.push(ToolDecl {
                            name,
                            input: Arc::new(m.clone()),
                        });
                        block = Block::Tool(doc.tools.len() - 1);
                    }
                    pending = Some(m);
                }
                other => return Err(err(lineno, format!("unknown declaration `{other}`"))),
            }
            continue;
        }
        let Some(model) = pending.as_mut() else {
            return Err(err(
                lineno,
                "indented line outside a table, model or tool".into(),
            ));
        };
        if let Some(doc_text) =
            line.strip_prefix("| ")
                .or(if line == "|" { Some("") } else { None })
        {
            if !model.description.is_empty() {
                model.description.push('\n');
            }
            model.description.push_str(doc_text);
            continue;
        }
        let field = parse_field(line, &doc.models).map_err(|m| err(lineno, m))?;
        if model.field(&field.name).is_some() {
            return Err(err(
                lineno,
                format!("field `{}` declared twice", field.name),
            ));
        }
        model.fields.push(field);
    }
    finish(doc, &block, &mut pending);
    Ok(())
}

fn empty_model(name: &str) -> Model {
    Model {
        name: name.to_string(),
        fields: Vec::new(),
        forbid_extra: false,
        description: String::new(),
        template: RowTemplate::default(),
    }
}

/// Parses `name kind [= default] [: description]`.
fn parse_field(line: &str, models: &HashMap<String, Arc<Model>>) -> Result<Field, String> {
    let (name, rest) = line
        .split_once(' ')
        .ok_or_else(|| format!("field `{line}` has no kind"))?;
    let rest = rest.trim_start();
    let kind_len = kind_token_len(rest)?;
    let kind = parse_kind(&rest[..kind_len], models)?;
    let mut rest = rest[kind_len..].trim_start();
    let mut default = Default::Required;
    if let Some(r) = rest.strip_prefix('=') {
        let r = r.trim_start();
        if let Some(after) = r.strip_prefix("@now") {
            default = Default::Now;
            rest = after.trim_start();
        } else {
            let mut stream = serde_json::Deserializer::from_str(r).into_iter::<Value>();
            let v = stream
                .next()
                .ok_or_else(|| format!("field `{name}`: default missing"))?
                .map_err(|e| format!("field `{name}`: bad default: {e}"))?;
            let used = stream.byte_offset();
            default = Default::Value(v);
            rest = r[used..].trim_start();
        }
    }
    let description = if let Some(d) = rest.strip_prefix(':') {
        d.trim().to_string()
    } else if rest.is_empty() {
        String::new()
    } else {
        return Err(format!("field `{name}`: unexpected `{rest}`"));
    };
    Ok(Field {
        name: name.to_string(),
        kind,
        default,
        description,
    })
}

/// Where a scan of a kind stands: bracket depth and string state.
#[derive(Default)]
struct Nesting {
    depth: i32,
    in_str: bool,
    escaped: bool,
}

impl Nesting {
    /// Takes the next character; true when it stands at depth 0 outside strings and is
    /// neither a bracket nor a quote.
    fn top(&mut self, c: char) -> bool {
        if self.in_str {
            if self.escaped {
                self.escaped = false;
            } else if c == '\\' {
                self.escaped = true;
            } else if c == '"' {
                self.in_str = false;
            }
            return false;
        }
        match c {
            '"' => self.in_str = true,
            '[' | '<' | '{' | '(' => self.depth += 1,
            ']' | '>' | '}' | ')' => self.depth -= 1,
            _ => return self.depth == 0,
        }
        false
    }
}

/// Length of the kind token: up to the first space outside brackets and quotes.
fn kind_token_len(s: &str) -> Result<usize, String> {
    let mut n = Nesting::default();
    for (i, c) in s.char_indices() {
        if n.top(c) && c == ' ' {
            return Ok(i);
        }
    }
    if n.depth != 0 || n.in_str {
        return Err(format!("unbalanced kind `{s}`"));
    }
    Ok(s.len())
}

/// Splits on `sep` at depth 0.
fn split_top(s: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut start = 0usize;
    let mut n = Nesting::default();
    for (i, c) in s.char_indices() {
        if n.top(c) && c == sep {
            parts.push(&s[start..i]);
            start = i + c.len_utf8();
        }
    }
    parts.push(&s[start..]);
    parts
}

/// Parses a kind expression.
pub fn parse_kind(s: &str, models: &HashMap<String, Arc<Model>>) -> Result<Kind, String> {
    if let Some(inner) = s.strip_suffix('?') {
        return Ok(Kind::Optional(Box::new(parse_kind(inner, models)?)));
    }
    let alts = split_top(s, '|');
    if alts.len() > 1 {
        return alts
            .into_iter()
            .map(|a| parse_kind(a, models))
            .collect::<Result<_, _>>()
            .map(Kind::Union);
    }
    // Constraints suffix `{...}` (not part of an enum's JSON list).
    if s.ends_with('}')
        && let Some(open) = s.rfind('{')
    {
        let base = parse_kind(&s[..open], models)?;
        let c = parse_constraints(&s[open + 1..s.len() - 1])?;
        return Ok(if c.is_empty() {
            base
        } else {
            Kind::Constrained(Box::new(base), c)
        });
    }
    if let Some(list) = s.strip_prefix("enum") {
        let values: Vec<String> =
            serde_json::from_str(list).map_err(|e| format!("bad enum `{s}`: {e}"))?;
        return Ok(Kind::Enum(Arc::new(values)));
    }
    if let Some(inner) = s.strip_prefix("list<").and_then(|r| r.strip_suffix('>')) {
        return Ok(Kind::List(Box::new(parse_kind(inner, models)?)));
    }
    if let Some(inner) = s.strip_prefix("dict<").and_then(|r| r.strip_suffix('>')) {
        return Ok(Kind::Dict(Box::new(parse_kind(inner, models)?)));
    }
    Ok(match s {
        "str" => Kind::Str,
        "int" => Kind::Int,
        "float" => Kind::Float,
        "bool" => Kind::Bool,
        "decimal" => Kind::Decimal,
        "datetime" => Kind::DateTime,
        "date" => Kind::Date,
        "any" => Kind::Any,
        name => Kind::Model(
            models
                .get(name)
                .cloned()
                .ok_or_else(|| format!("unknown kind or model `{name}`"))?,
        ),
    })
}

fn parse_constraints(s: &str) -> Result<Constraints, String> {
    let mut c = Constraints::default();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (k, v) = part
            .split_once('=')
            .ok_or_else(|| format!("bad constraint `{part}`"))?;
        let bad = || format!("bad constraint value `{part}`");
        let len = || v.parse::<usize>().map_err(|_| bad());
        let num = || v.parse::<f64>().map_err(|_| bad());
        match k {
            "min" => c.min_len = Some(len()?),
            "max" => c.max_len = Some(len()?),
            "ge" => c.ge = Some(num()?),
            "gt" => c.gt = Some(num()?),
            "le" => c.le = Some(num()?),
            "lt" => c.lt = Some(num()?),
            _ => return Err(format!("unknown constraint `{k}`")),
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_tables_models_and_tools() {
        let text = r#"
toolset zendesk namespace=zendesk
table zendesk_tickets file=zendesk/tickets id=id unstable=subject,description
  id str
  subject str{min=1}
  status enum["open","In Grace Period"]? = null
  tags list<str> = []
  created_at datetime = @now

model Addr forbid
  city str : The city
tool get_order
  | Looks up one order.
  order_id str : The order's id, e.g. "ORD-1"
  where Addr|str? = null : Where
  top int{ge=1,le=1000} = 512
"#;
        let doc = parse(&[("t.tables", text)]).unwrap();
        assert_eq!(doc.toolsets[0].namespace.as_deref(), Some("zendesk"));
        let t = &doc.tables[0];
        assert_eq!(t.unstable, vec!["subject", "description"]);
        assert_eq!(t.model.fields.len(), 5);
        assert_eq!(t.model.fields[4].default, Default::Now);
        assert!(
            matches!(&t.model.fields[2].kind, Kind::Optional(k) if matches!(**k, Kind::Enum(ref v) if v[1] == "In Grace Period"))
        );
        let tool = &doc.tools[0];
        assert_eq!(tool.input.description, "Looks up one order.");
        assert_eq!(
            tool.input.fields[0].description,
            "The order's id, e.g. \"ORD-1\""
        );
        assert!(
            matches!(&tool.input.fields[1].kind, Kind::Optional(k) if matches!(**k, Kind::Union(_)))
        );
        assert_eq!(
            tool.input.fields[2].default,
            Default::Value(serde_json::json!(512))
        );
    }

    #[test]
    fn errors_name_the_line() {
        let e = parse(&[("x.tools", "tool a\n  b nosuch\n")]).unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.to_string().starts_with("x.tools:2:"), "{e}");
    }
}
