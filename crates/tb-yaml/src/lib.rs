//! YAML loading with exactly the semantics of PyYAML's `yaml.safe_load` (YAML 1.1), producing
//! [`serde_json::Value`] with mapping order kept.
//!
//! The reference harness reads every dataset file with `yaml.safe_load`, so `yes`/`on` are
//! booleans, `017` is 15, `1_000` is 1000, `1e3` stays a string, `2025-10-01` is a date, `<<`
//! merges mappings, and a double-quoted scalar whose continuation lines start at column 0 is
//! accepted. YAML 1.2 libraries differ on all of these, so the scanner and parser here follow
//! PyYAML's own (`scanner.py`, `parser.py`, `composer.py`, `constructor.py`).
//!
//! JSON mapping of Python values: str, int (within `i64`/`u64`), finite float, bool and None
//! map directly; dates and datetimes become their `isoformat()` strings; `!!omap`/`!!pairs`
//! become arrays of `[key, value]` arrays (what `json.dumps` would write). Non-string mapping
//! keys become the strings `json.dumps` writes for them (`1`, `true`, `null`, `1.5`), after
//! Python's key equality (`1 == 1.0 == True`) is applied. Values without a JSON form (NaN,
//! infinities, `!!binary`, `!!set`, integers beyond 64 bits, recursive aliases) are errors.

pub mod keys;
mod resolve;
mod scanner;

use scanner::{Directive, Mark, Scanner, Tok, Token};
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::rc::Rc;

pub use resolve::{ScalarKind, resolve_plain};

/// A YAML error with a 1-based position inside the YAML text.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}, column {column}: {message}")]
pub struct YamlError {
    /// 1-based line in the YAML text.
    pub line: usize,
    /// 1-based column in the YAML text.
    pub column: usize,
    /// What went wrong, in PyYAML's words where it has them.
    pub message: String,
}

impl YamlError {
    fn at(mark: Mark, message: impl Into<String>) -> Self {
        YamlError {
            line: mark.line + 1,
            column: mark.column + 1,
            message: message.into(),
        }
    }
}

const CORE: &str = "tag:yaml.org,2002:";
/// Nesting the reader follows (flow collections are refused as they open, in the scanner).
pub(crate) const MAX_DEPTH: usize = 128;
/// Nodes that alias expansion may copy in one document (guards against "billion laughs").
pub const MAX_ALIAS_NODES: usize = 1_000_000;
/// Bytes of scalar text (keys and values) that alias expansion may copy in one document: one
/// large scalar aliased many times is bounded by this, not by the node count.
pub const MAX_ALIAS_BYTES: usize = 32 << 20;

/// A composed node. Scalars carry their resolved tag.
#[derive(Debug, Clone)]
struct Node {
    kind: NodeKind,
    tag: String,
    mark: Mark,
}

#[derive(Debug, Clone)]
enum NodeKind {
    // Shared, so that an anchor (and every alias of it) costs a pointer, not a copy.
    Scalar(Rc<str>),
    Seq(Rc<Vec<Node>>),
    Map(Rc<Vec<(Node, Node)>>),
}

/// The type of a loaded value as an error message names it (`a string`, `a list`,
/// `a mapping`, ...); numbers as `a float` or `an integer` with `float_or_integer`, else as
/// `a number`.
pub fn type_name(v: &Value, float_or_integer: bool) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if float_or_integer && n.is_f64() => "a float",
        Value::Number(_) if float_or_integer => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

/// The wrong-type message of a typed field: ``field` must be {want}, found {type}` (`want`
/// as "a string", "a list", ...; the type as [`type_name`] names it, floats and integers apart).
pub fn must_be(field: &str, want: &str, found: &Value) -> String {
    format!("`{field}` must be {want}, found {}", type_name(found, true))
}

/// Load a YAML document as `yaml.safe_load` would, as JSON. An empty stream gives `Null`.
pub fn load(src: &str) -> Result<Value, YamlError> {
    load_with_lines(src, None)
}

/// Like [`load`], and also records the 1-based line of every node under its JSON pointer
/// (`""` for the root, `/tools/3/name`, ...), for error messages on typed fields.
pub fn load_with_lines(
    src: &str,
    lines: Option<&mut HashMap<String, usize>>,
) -> Result<Value, YamlError> {
    check_printable(src)?;
    let tokens = Scanner::scan(src)?;
    let mut p = Parser {
        tokens,
        pos: 0,
        tag_handles: default_handles(),
        anchors: HashMap::new(),
        open_anchors: Vec::new(),
        depth: 0,
        nodes: 0,
        alias_bytes: 0,
    };
    let Some(node) = p.parse_single_document()? else {
        return Ok(Value::Null);
    };
    let mut c = Constructor { lines, depth: 0 };
    let mut ptr = String::new();
    c.construct(&node, &mut ptr)
}

fn default_handles() -> HashMap<String, String> {
    HashMap::from([
        ("!".to_string(), "!".to_string()),
        ("!!".to_string(), CORE.to_string()),
    ])
}

/// PyYAML's reader refuses these characters anywhere in the input.
fn check_printable(src: &str) -> Result<(), YamlError> {
    let mut line = 0;
    let mut col = 0;
    let mut prev_cr = false;
    for (index, c) in src.chars().enumerate() {
        let ok = matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{7E}' | '\u{85}'
            | '\u{A0}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}');
        if !ok {
            return Err(YamlError::at(
                Mark {
                    index,
                    line,
                    column: col,
                },
                format!(
                    "unacceptable character #x{:04x}: special characters are not allowed",
                    c as u32
                ),
            ));
        }
        if c == '\n' || c == '\u{85}' || c == '\u{2028}' || c == '\u{2029}' {
            if !(c == '\n' && prev_cr) {
                line += 1;
            }
            col = 0;
        } else if c == '\r' {
            line += 1;
            col = 0;
        } else {
            col += 1;
        }
        prev_cr = c == '\r';
    }
    Ok(())
}

fn tok_name(t: &Tok) -> &'static str {
    match t {
        Tok::StreamStart => "<stream start>",
        Tok::StreamEnd => "<stream end>",
        Tok::Directive(_) => "<directive>",
        Tok::DocumentStart => "<document start>",
        Tok::DocumentEnd => "<document end>",
        Tok::BlockSequenceStart => "<block sequence start>",
        Tok::BlockMappingStart => "<block mapping start>",
        Tok::BlockEnd => "<block end>",
        Tok::FlowSequenceStart => "'['",
        Tok::FlowMappingStart => "'{'",
        Tok::FlowSequenceEnd => "']'",
        Tok::FlowMappingEnd => "'}'",
        Tok::Key => "'?'",
        Tok::Value => "':'",
        Tok::BlockEntry => "'-'",
        Tok::FlowEntry => "','",
        Tok::Alias(_) => "<alias>",
        Tok::Anchor(_) => "<anchor>",
        Tok::Tag(..) => "<tag>",
        Tok::Scalar { .. } => "<scalar>",
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    tag_handles: HashMap<String, String>,
    /// Each anchor's node, with its size once an alias has measured it.
    anchors: HashMap<String, (Node, Option<(usize, usize)>)>,
    open_anchors: Vec<String>,
    depth: usize,
    /// Nodes and bytes of text copied by aliases so far.
    nodes: usize,
    alias_bytes: usize,
}

#[derive(PartialEq, Eq, Clone, Copy)]
enum K {
    StreamEnd,
    Directive,
    DocStart,
    DocEnd,
    BlockSeqStart,
    BlockMapStart,
    BlockEnd,
    FlowSeqStart,
    FlowMapStart,
    FlowSeqEnd,
    FlowMapEnd,
    Key,
    Value,
    BlockEntry,
    FlowEntry,
    Alias,
    Anchor,
    Tag,
    Scalar,
    Other,
}

impl Parser {
    fn peek_tok(&self) -> &Token {
        // The scanner always ends with StreamEnd; never read past it.
        let i = self.pos.min(self.tokens.len().saturating_sub(1));
        &self.tokens[i]
    }

    fn kind(&self) -> K {
        match &self.peek_tok().tok {
            Tok::StreamEnd => K::StreamEnd,
            Tok::Directive(_) => K::Directive,
            Tok::DocumentStart => K::DocStart,
            Tok::DocumentEnd => K::DocEnd,
            Tok::BlockSequenceStart => K::BlockSeqStart,
            Tok::BlockMappingStart => K::BlockMapStart,
            Tok::BlockEnd => K::BlockEnd,
            Tok::FlowSequenceStart => K::FlowSeqStart,
            Tok::FlowMappingStart => K::FlowMapStart,
            Tok::FlowSequenceEnd => K::FlowSeqEnd,
            Tok::FlowMappingEnd => K::FlowMapEnd,
            Tok::Key => K::Key,
            Tok::Value => K::Value,
            Tok::BlockEntry => K::BlockEntry,
            Tok::FlowEntry => K::FlowEntry,
            Tok::Alias(_) => K::Alias,
            Tok::Anchor(_) => K::Anchor,
            Tok::Tag(..) => K::Tag,
            Tok::Scalar { .. } => K::Scalar,
            Tok::StreamStart => K::Other,
        }
    }

    fn is(&self, ks: &[K]) -> bool {
        ks.contains(&self.kind())
    }

    fn next(&mut self) -> Token {
        let t = self.peek_tok().clone();
        if self.pos < self.tokens.len() {
            self.pos += 1;
        }
        t
    }

    fn mark(&self) -> Mark {
        self.peek_tok().start
    }

    fn unexpected(&self, context: &str, expected: &str) -> YamlError {
        let t = self.peek_tok();
        YamlError::at(
            t.start,
            format!(
                "{context}: expected {expected}, but found {}",
                tok_name(&t.tok)
            ),
        )
    }

    fn parse_single_document(&mut self) -> Result<Option<Node>, YamlError> {
        // StreamStart
        self.next();
        let doc = if self.is(&[K::Directive, K::DocStart, K::StreamEnd]) {
            self.parse_explicit_document()?
        } else {
            // implicit document
            self.tag_handles = default_handles();
            let n = self.parse_node(true, false)?;
            Some(n)
        };
        let Some(doc) = doc else {
            return Ok(None);
        };
        // document end
        if self.kind() == K::DocEnd {
            self.next();
        }
        // a second document?
        while self.kind() == K::DocEnd {
            self.next();
        }
        if self.kind() != K::StreamEnd {
            return Err(YamlError::at(
                self.mark(),
                "expected a single document in the stream, but found another document",
            ));
        }
        Ok(Some(doc))
    }

    fn parse_explicit_document(&mut self) -> Result<Option<Node>, YamlError> {
        while self.kind() == K::DocEnd {
            self.next();
        }
        if self.kind() == K::StreamEnd {
            return Ok(None);
        }
        // directives
        let mut handles: HashMap<String, String> = HashMap::new();
        let mut version_seen = false;
        while self.kind() == K::Directive {
            let t = self.next();
            if let Tok::Directive(d) = t.tok {
                match d {
                    Directive::Yaml(major, _) => {
                        if version_seen {
                            return Err(YamlError::at(t.start, "found duplicate YAML directive"));
                        }
                        if major != 1 {
                            return Err(YamlError::at(
                                t.start,
                                "found incompatible YAML document (version 1.* is required)",
                            ));
                        }
                        version_seen = true;
                    }
                    Directive::Tag(h, p) => {
                        if handles.contains_key(&h) {
                            return Err(YamlError::at(
                                t.start,
                                format!("duplicate tag handle '{h}'"),
                            ));
                        }
                        handles.insert(h, p);
                    }
                    Directive::Other => {}
                }
            }
        }
        for (k, v) in default_handles() {
            handles.entry(k).or_insert(v);
        }
        self.tag_handles = handles;
        if self.kind() != K::DocStart {
            return Err(self.unexpected("while parsing a document", "'<document start>'"));
        }
        let start = self.next().start;
        if self.is(&[K::Directive, K::DocStart, K::DocEnd, K::StreamEnd]) {
            return Ok(Some(empty_scalar(start, None)));
        }
        Ok(Some(self.parse_node(true, false)?))
    }

    /// Counts what an alias copies against the alias budget (nodes and bytes of text).
    fn count(&mut self, mark: Mark, (nodes, bytes): (usize, usize)) -> Result<(), YamlError> {
        self.nodes = self.nodes.saturating_add(nodes);
        self.alias_bytes = self.alias_bytes.saturating_add(bytes);
        if self.nodes > MAX_ALIAS_NODES || self.alias_bytes > MAX_ALIAS_BYTES {
            return Err(YamlError::at(
                mark,
                format!(
                    "aliases expand to more than the alias budget ({MAX_ALIAS_NODES} nodes, {} MiB of text)",
                    MAX_ALIAS_BYTES >> 20
                ),
            ));
        }
        Ok(())
    }

    fn parse_node(&mut self, block: bool, indentless: bool) -> Result<Node, YamlError> {
        if self.kind() == K::Alias {
            let t = self.next();
            let Tok::Alias(name) = t.tok else {
                unreachable!("checked kind")
            };
            if self.open_anchors.contains(&name) {
                return Err(YamlError::at(
                    t.start,
                    format!("recursive alias '{name}' has no JSON form"),
                ));
            }
            let Some((n, size)) = self.anchors.get_mut(&name) else {
                return Err(YamlError::at(
                    t.start,
                    format!("found undefined alias '{name}'"),
                ));
            };
            // The size is measured once per anchor (the walk stops past the budget).
            let size = *size.get_or_insert_with(|| node_size(n));
            let mut n = n.clone();
            n.mark = t.start;
            self.count(t.start, size)?;
            return Ok(n);
        }
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(YamlError::at(self.mark(), "document nested too deeply"));
        }
        let mut anchor: Option<(String, Mark)> = None;
        let mut tag: Option<(Option<String>, String, Mark)> = None;
        let mut start: Option<Mark> = None;
        if self.kind() == K::Anchor {
            let t = self.next();
            start = Some(t.start);
            if let Tok::Anchor(a) = t.tok {
                anchor = Some((a, t.start));
            }
            if self.kind() == K::Tag {
                let t = self.next();
                if let Tok::Tag(h, s) = t.tok {
                    tag = Some((h, s, t.start));
                }
            }
        } else if self.kind() == K::Tag {
            let t = self.next();
            start = Some(t.start);
            if let Tok::Tag(h, s) = t.tok {
                tag = Some((h, s, t.start));
            }
            if self.kind() == K::Anchor {
                let t = self.next();
                if let Tok::Anchor(a) = t.tok {
                    anchor = Some((a, t.start));
                }
            }
        }
        let tag: Option<String> = match tag {
            None => None,
            Some((None, suffix, _)) => Some(suffix),
            Some((Some(handle), suffix, m)) => match self.tag_handles.get(&handle) {
                Some(prefix) => Some(format!("{prefix}{suffix}")),
                None => {
                    return Err(YamlError::at(
                        m,
                        format!("while parsing a node: found undefined tag handle '{handle}'"),
                    ));
                }
            },
        };
        if let Some((a, m)) = &anchor {
            if self.anchors.contains_key(a) || self.open_anchors.contains(a) {
                return Err(YamlError::at(*m, format!("found duplicate anchor '{a}'")));
            }
            self.open_anchors.push(a.clone());
        }
        let start = start.unwrap_or_else(|| self.mark());
        let implicit_tag = tag.is_none() || tag.as_deref() == Some("!");
        let coll_tag = |default: &str| -> String {
            match &tag {
                Some(t) if t != "!" => t.clone(),
                _ => format!("{CORE}{default}"),
            }
        };
        let node = if indentless && self.kind() == K::BlockEntry {
            let items = self.parse_indentless_sequence()?;
            Node {
                kind: NodeKind::Seq(Rc::new(items)),
                tag: coll_tag("seq"),
                mark: start,
            }
        } else {
            match self.kind() {
                K::Scalar => {
                    let t = self.next();
                    let Tok::Scalar { value, plain, .. } = t.tok else {
                        unreachable!("checked kind")
                    };
                    let resolved = if (plain && tag.is_none()) || tag.as_deref() == Some("!") {
                        resolve::resolve_plain(&value).tag().to_string()
                    } else if let Some(t) = &tag {
                        t.clone()
                    } else {
                        format!("{CORE}str")
                    };
                    Node {
                        kind: NodeKind::Scalar(value.into()),
                        tag: resolved,
                        mark: start,
                    }
                }
                K::FlowSeqStart => {
                    let items = self.parse_flow_sequence()?;
                    Node {
                        kind: NodeKind::Seq(Rc::new(items)),
                        tag: coll_tag("seq"),
                        mark: start,
                    }
                }
                K::FlowMapStart => {
                    let pairs = self.parse_flow_mapping()?;
                    Node {
                        kind: NodeKind::Map(Rc::new(pairs)),
                        tag: coll_tag("map"),
                        mark: start,
                    }
                }
                K::BlockSeqStart if block => {
                    let items = self.parse_block_sequence()?;
                    Node {
                        kind: NodeKind::Seq(Rc::new(items)),
                        tag: coll_tag("seq"),
                        mark: start,
                    }
                }
                K::BlockMapStart if block => {
                    let pairs = self.parse_block_mapping()?;
                    Node {
                        kind: NodeKind::Map(Rc::new(pairs)),
                        tag: coll_tag("map"),
                        mark: start,
                    }
                }
                _ if anchor.is_some() || tag.is_some() => {
                    let resolved = if implicit_tag {
                        resolve::resolve_plain("").tag().to_string()
                    } else {
                        tag.clone().unwrap_or_default()
                    };
                    Node {
                        kind: NodeKind::Scalar("".into()),
                        tag: resolved,
                        mark: start,
                    }
                }
                _ => {
                    let what = if block { "block" } else { "flow" };
                    return Err(self
                        .unexpected(&format!("while parsing a {what} node"), "the node content"));
                }
            }
        };
        if let Some((a, _)) = anchor {
            self.open_anchors.retain(|x| x != &a);
            self.anchors.insert(a, (node.clone(), None));
        }
        self.depth -= 1;
        Ok(node)
    }

    fn parse_indentless_sequence(&mut self) -> Result<Vec<Node>, YamlError> {
        let mut items = Vec::new();
        while self.kind() == K::BlockEntry {
            let t = self.next();
            if self.is(&[K::BlockEntry, K::Key, K::Value, K::BlockEnd]) {
                items.push(empty_scalar(t.start, None));
            } else {
                items.push(self.parse_node(true, false)?);
            }
        }
        Ok(items)
    }

    fn parse_block_sequence(&mut self) -> Result<Vec<Node>, YamlError> {
        self.next();
        let mut items = Vec::new();
        loop {
            if self.kind() == K::BlockEntry {
                let t = self.next();
                if self.is(&[K::BlockEntry, K::BlockEnd]) {
                    items.push(empty_scalar(t.start, None));
                } else {
                    items.push(self.parse_node(true, false)?);
                }
                continue;
            }
            if self.kind() != K::BlockEnd {
                return Err(self.unexpected("while parsing a block collection", "<block end>"));
            }
            self.next();
            return Ok(items);
        }
    }

    fn parse_block_mapping(&mut self) -> Result<Vec<(Node, Node)>, YamlError> {
        self.next();
        let mut pairs = Vec::new();
        loop {
            let key = if self.kind() == K::Key {
                let t = self.next();
                if self.is(&[K::Key, K::Value, K::BlockEnd]) {
                    empty_scalar(t.start, None)
                } else {
                    self.parse_node(true, true)?
                }
            } else {
                if self.kind() != K::BlockEnd {
                    return Err(self.unexpected("while parsing a block mapping", "<block end>"));
                }
                self.next();
                return Ok(pairs);
            };
            let value = self.pair_value(&[K::Key, K::Value, K::BlockEnd], true)?;
            pairs.push((key, value));
        }
    }

    /// The value after a key: the node after a `:` (empty when one of `stop` follows it), or
    /// empty when there is no `:`. `block`: the node may be a block collection.
    fn pair_value(&mut self, stop: &[K], block: bool) -> Result<Node, YamlError> {
        Ok(if self.kind() == K::Value {
            let t = self.next();
            if self.is(stop) {
                empty_scalar(t.start, None)
            } else {
                self.parse_node(block, block)?
            }
        } else {
            empty_scalar(self.mark(), None)
        })
    }

    /// At the start of a flow collection's entry: true after the collection's `end` token;
    /// false when an entry follows (its `,` taken unless it is the `first`). `error`: the
    /// context and what was expected, for a missing `,`.
    fn flow_entry_end(
        &mut self,
        end: K,
        first: &mut bool,
        error: (&str, &str),
    ) -> Result<bool, YamlError> {
        if self.kind() == end {
            self.next();
            return Ok(true);
        }
        if !*first {
            if self.kind() == K::FlowEntry {
                self.next();
            } else {
                return Err(self.unexpected(error.0, error.1));
            }
        }
        *first = false;
        Ok(false)
    }

    /// A `? key : value` pair inside a flow collection that ends with `end`, from its `?`.
    fn flow_pair(&mut self, end: K) -> Result<(Node, Node), YamlError> {
        let t = self.next();
        let key = if self.is(&[K::Value, K::FlowEntry, end]) {
            empty_scalar(t.start, None)
        } else {
            self.parse_node(false, false)?
        };
        let value = self.pair_value(&[K::FlowEntry, end], false)?;
        Ok((key, value))
    }

    fn parse_flow_sequence(&mut self) -> Result<Vec<Node>, YamlError> {
        self.next();
        let mut items = Vec::new();
        let mut first = true;
        loop {
            let seq = ("while parsing a flow sequence", "',' or ']'");
            if self.flow_entry_end(K::FlowSeqEnd, &mut first, seq)? {
                return Ok(items);
            }
            if self.kind() == K::Key {
                let start = self.mark();
                let (key, value) = self.flow_pair(K::FlowSeqEnd)?;
                items.push(Node {
                    kind: NodeKind::Map(Rc::new(vec![(key, value)])),
                    tag: format!("{CORE}map"),
                    mark: start,
                });
            } else if self.kind() != K::FlowSeqEnd {
                items.push(self.parse_node(false, false)?);
            }
        }
    }

    fn parse_flow_mapping(&mut self) -> Result<Vec<(Node, Node)>, YamlError> {
        self.next();
        let mut pairs = Vec::new();
        let mut first = true;
        loop {
            let map = ("while parsing a flow mapping", "',' or '}'");
            if self.flow_entry_end(K::FlowMapEnd, &mut first, map)? {
                return Ok(pairs);
            }
            if self.kind() == K::Key {
                pairs.push(self.flow_pair(K::FlowMapEnd)?);
            } else if self.kind() != K::FlowMapEnd {
                let key = self.parse_node(false, false)?;
                let value = empty_scalar(self.mark(), None);
                pairs.push((key, value));
            }
        }
    }
}

fn empty_scalar(mark: Mark, _tag: Option<String>) -> Node {
    Node {
        kind: NodeKind::Scalar("".into()),
        tag: format!("{CORE}null"),
        mark,
    }
}

/// Nodes and bytes of scalar text under `n` (saturating; the walk stops once either is past
/// the alias budget, so measuring a huge shared tree stays cheap).
fn node_size(n: &Node) -> (usize, usize) {
    // Deeper than the constructor goes is not walked: such a document is refused anyway.
    fn walk(n: &Node, depth: usize, acc: &mut (usize, usize)) {
        if acc.0 > MAX_ALIAS_NODES || acc.1 > MAX_ALIAS_BYTES || depth > MAX_DEPTH {
            return;
        }
        acc.0 += 1;
        match &n.kind {
            NodeKind::Scalar(s) => acc.1 = acc.1.saturating_add(s.len()),
            NodeKind::Seq(items) => items.iter().for_each(|i| walk(i, depth + 1, acc)),
            NodeKind::Map(pairs) => pairs.iter().for_each(|(k, v)| {
                walk(k, depth + 1, acc);
                walk(v, depth + 1, acc);
            }),
        }
    }
    let mut acc = (0, 0);
    walk(n, 0, &mut acc);
    acc
}

/// Python dict key identity: `1 == 1.0 == True`, `0 == False`.
#[derive(PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Int(i128),
    Float(u64),
    Str(String),
}

struct Constructor<'a> {
    lines: Option<&'a mut HashMap<String, usize>>,
    depth: usize,
}

impl Constructor<'_> {
    fn record(&mut self, ptr: &str, mark: Mark) {
        if let Some(l) = self.lines.as_deref_mut() {
            l.insert(ptr.to_string(), mark.line + 1);
        }
    }

    fn construct(&mut self, node: &Node, ptr: &mut String) -> Result<Value, YamlError> {
        self.record(ptr, node.mark);
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(YamlError::at(node.mark, "document nested too deeply"));
        }
        let v = self.construct_inner(node, ptr);
        self.depth -= 1;
        v
    }

    fn construct_inner(&mut self, node: &Node, ptr: &mut String) -> Result<Value, YamlError> {
        let tag = node.tag.as_str();
        let short = tag.strip_prefix(CORE);
        match (&node.kind, short) {
            (NodeKind::Scalar(s), Some(t)) => {
                resolve::construct_scalar(t, s).map_err(|m| YamlError::at(node.mark, m))
            }
            (NodeKind::Seq(items), Some("seq")) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, it) in items.iter().enumerate() {
                    let len = ptr.len();
                    ptr.push('/');
                    ptr.push_str(&i.to_string());
                    let v = self.construct(it, ptr);
                    ptr.truncate(len);
                    out.push(v?);
                }
                Ok(Value::Array(out))
            }
            (NodeKind::Map(_), Some("map")) => {
                let pairs = flatten_mapping(node)?;
                self.construct_mapping(&pairs, ptr)
            }
            (NodeKind::Seq(items), Some(t @ ("omap" | "pairs"))) => {
                let mut out = Vec::new();
                for it in items.iter() {
                    let NodeKind::Map(p) = &it.kind else {
                        return Err(YamlError::at(
                            it.mark,
                            format!(
                                "while constructing an ordered map: expected a mapping of length 1 (!!{t})"
                            ),
                        ));
                    };
                    if p.len() != 1 {
                        return Err(YamlError::at(
                            it.mark,
                            format!(
                                "while constructing an ordered map: expected a single mapping item, but found {} items",
                                p.len()
                            ),
                        ));
                    }
                    let (k, v) = &p[0];
                    let mut scratch = String::new();
                    let k = self.construct(k, &mut scratch)?;
                    let v = self.construct(v, &mut scratch)?;
                    out.push(Value::Array(vec![k, v]));
                }
                Ok(Value::Array(out))
            }
            _ => Err(YamlError::at(
                node.mark,
                format!(
                    "could not determine a constructor for the tag '{tag}' (or it has no JSON form)"
                ),
            )),
        }
    }

    fn construct_mapping(
        &mut self,
        pairs: &[(&Node, &Node)],
        ptr: &mut String,
    ) -> Result<Value, YamlError> {
        // First the Python dict (key identity as Python compares keys, first position kept,
        // last value wins), then its JSON text form read back (as json.dumps + json.loads:
        // equal JSON keys keep the first position and the last value).
        let mut entries: Vec<(String, Value)> = Vec::with_capacity(pairs.len());
        let mut ids: HashMap<KeyId, usize> = HashMap::new();
        for (k, v) in pairs {
            let (id, json_key) = self.key_of(k)?;
            let len = ptr.len();
            ptr.push('/');
            ptr.push_str(&json_key.replace('~', "~0").replace('/', "~1"));
            let value = self.construct(v, ptr);
            ptr.truncate(len);
            let value = value?;
            if let Some(&i) = ids.get(&id) {
                entries[i].1 = value;
            } else {
                ids.insert(id, entries.len());
                entries.push((json_key, value));
            }
        }
        let mut out = Map::with_capacity(entries.len());
        for (k, v) in entries {
            out.insert(k, v);
        }
        Ok(Value::Object(out))
    }

    fn key_of(&mut self, k: &Node) -> Result<(KeyId, String), YamlError> {
        if k.tag == format!("{CORE}value") {
            // PyYAML turns the `=` value key into a plain string key.
            if let NodeKind::Scalar(s) = &k.kind {
                return Ok((KeyId::Str(s.to_string()), s.to_string()));
            }
        }
        if !matches!(k.kind, NodeKind::Scalar(_)) {
            return Err(YamlError::at(
                k.mark,
                "while constructing a mapping: found unhashable key",
            ));
        }
        let mut scratch = String::new();
        let saved = self.lines.take();
        let v = self.construct(k, &mut scratch);
        self.lines = saved;
        let v = v?;
        Ok(match v {
            Value::Null => (KeyId::Null, "null".into()),
            Value::Bool(b) => (KeyId::Int(i128::from(b)), b.to_string()),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    (KeyId::Int(i128::from(i)), i.to_string())
                } else if let Some(u) = n.as_u64() {
                    (KeyId::Int(i128::from(u)), u.to_string())
                } else {
                    let f = n.as_f64().unwrap_or(0.0);
                    if f.fract() == 0.0 && f.abs() < 1e30 {
                        #[allow(clippy::cast_possible_truncation, reason = "integral, |f| < 1e30")]
                        let i = f as i128;
                        (KeyId::Int(i), tb_python::json_float(f))
                    } else {
                        (KeyId::Float(f.to_bits()), tb_python::json_float(f))
                    }
                }
            }
            Value::String(s) => (KeyId::Str(s.clone()), s),
            Value::Array(_) | Value::Object(_) => {
                return Err(YamlError::at(
                    k.mark,
                    "while constructing a mapping: found unhashable key",
                ));
            }
        })
    }
}

/// PyYAML's `SafeConstructor.flatten_mapping`: `<<` entries are removed and the pairs of the
/// merged mapping(s) are put in front (later mappings in a merge list are put first, so earlier
/// ones win).
fn flatten_mapping(node: &Node) -> Result<Vec<(&Node, &Node)>, YamlError> {
    let NodeKind::Map(pairs) = &node.kind else {
        return Err(YamlError::at(
            node.mark,
            "while constructing a mapping: expected a mapping node",
        ));
    };
    let mut merge: Vec<(&Node, &Node)> = Vec::new();
    let mut own: Vec<(&Node, &Node)> = Vec::new();
    for (k, v) in pairs.iter() {
        if k.tag == format!("{CORE}merge") {
            match &v.kind {
                NodeKind::Map(_) => merge.extend(flatten_mapping(v)?),
                NodeKind::Seq(items) => {
                    let mut sub = Vec::new();
                    for it in items.iter() {
                        if !matches!(it.kind, NodeKind::Map(_)) {
                            return Err(YamlError::at(
                                it.mark,
                                "while constructing a mapping: expected a mapping for merging",
                            ));
                        }
                        sub.push(flatten_mapping(it)?);
                    }
                    for s in sub.into_iter().rev() {
                        merge.extend(s);
                    }
                }
                NodeKind::Scalar(_) => {
                    return Err(YamlError::at(
                        v.mark,
                        "while constructing a mapping: expected a mapping or list of mappings for merging",
                    ));
                }
            }
        } else {
            own.push((k, v));
        }
    }
    merge.extend(own);
    Ok(merge)
}

#[cfg(test)]
mod tests;
