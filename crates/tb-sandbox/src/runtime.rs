//! The tool runtime: a domain is a table layout plus tools (a declared input model and a
//! function); a session is one attempt's state with its clock, and runs tools the way the
//! reference's servers do, including the exact shape of every error the agent sees.

use crate::coerce::{self, Ctx};
use crate::pyjson;
use crate::schema::{self, Kind, Model, SchemaDoc, SchemaError, ToolDecl};
use crate::state::{Layout, Row, SharedRow, State, StateError, Store};
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub use crate::tool::{Output, ToolError, ToolFn, ToolResult, Tools};

/// What the agent reads when a tool panics (the reference's shape for an unexpected
/// exception, without any internal text).
pub const TOOL_PANIC_ERROR: &str = "Tool execution failed: internal error";

/// Validated tool arguments: the input model's fields, coerced, defaults filled, in model order.
pub type Args = Map<String, Value>;

/// A tool: its declaration (name, input model with our descriptions) and its function.
#[derive(Clone)]
pub struct Tool {
    /// Name and input model.
    pub decl: ToolDecl,
    /// What it does.
    pub run: ToolFn,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.decl.name)
            .finish_non_exhaustive()
    }
}

/// Errors building a domain.
#[derive(Debug, thiserror::Error)]
pub enum DomainError {
    /// A schema text is malformed.
    #[error(transparent)]
    Schema(#[from] SchemaError),
    /// Declared tools and functions do not pair up.
    #[error("domain {domain}: {message}")]
    Tools {
        /// Domain.
        domain: String,
        /// What is wrong.
        message: String,
    },
    /// Initial data could not be loaded.
    #[error(transparent)]
    State(#[from] StateError),
}

/// A domain: a server of the reference (tables and tools), ready to open sessions.
#[derive(Debug)]
pub struct Domain {
    /// The server name (also the scenario and `init.<server>` key).
    pub name: String,
    layout: Layout,
    tools: Vec<Tool>,
    index: foldhash::HashMap<String, usize>,
    patched: Mutex<PatchCache>,
    /// The tool list shown to clients when it is not the declarations' own (a tool surface:
    /// the reference's order, descriptions and schemas).
    listing: Option<Arc<Vec<Value>>>,
}

/// Patched base states by (naive clock, data patch): sessions of the same task start from one
/// shared copy-on-write state instead of each copying the tables the patch touches. Entries
/// are found by a fingerprint and confirmed by exact (order-sensitive) equality of the patch,
/// the clock and the identity of the base tables. Also the distinct policy `sources` seen, so
/// sessions share them.
#[derive(Debug, Default)]
struct PatchCache {
    entries: HashMap<u64, Vec<PatchEntry>>,
    len: usize,
    sources: Vec<Arc<Vec<Value>>>,
}

#[derive(Debug)]
struct PatchEntry {
    now: String,
    patch: Value,
    base: State,
    state: State,
}

impl PatchCache {
    /// Entries kept before the cache starts over (each holds copies of a few tables).
    const MAX: usize = 4096;
    /// Distinct `sources` lists kept.
    const MAX_SOURCES: usize = 64;
}

/// JSON equality that also requires the same key order (a patch's key order can reach rows
/// through `dict`/`any` fields, and from there the text of tool results).
fn eq_ordered(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .all(|((k1, v1), (k2, v2))| k1 == k2 && eq_ordered(v1, v2))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| eq_ordered(p, q))
        }
        _ => a == b,
    }
}

/// A fast structural fingerprint (not cryptographic; equality is always confirmed).
fn fingerprint(v: &Value, h: &mut u64) {
    fn mix(h: &mut u64, x: u64) {
        *h = (h.rotate_left(5) ^ x).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
    fn bytes(h: &mut u64, b: &[u8]) {
        let mut chunks = b.chunks_exact(8);
        for c in &mut chunks {
            mix(
                h,
                u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]),
            );
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        mix(h, u64::from_le_bytes(last) ^ (b.len() as u64) << 56);
    }
    match v {
        Value::Null => mix(h, 1),
        Value::Bool(b) => mix(h, 2 + u64::from(*b)),
        Value::Number(n) => {
            mix(h, 4);
            match (n.as_i64(), n.as_u64()) {
                (Some(i), _) => mix(h, i.cast_unsigned()),
                (None, Some(u)) => mix(h, u ^ 0x8000_0000_0000_0000),
                _ => mix(
                    h,
                    n.as_f64().unwrap_or(0.0).to_bits() ^ 0x4000_0000_0000_0000,
                ),
            }
        }
        Value::String(s) => {
            mix(h, 5);
            bytes(h, s.as_bytes());
        }
        Value::Array(a) => {
            mix(h, 6 + ((a.len() as u64) << 8));
            for x in a {
                fingerprint(x, h);
            }
        }
        Value::Object(m) => {
            mix(h, 7 + ((m.len() as u64) << 8));
            for (k, x) in m {
                bytes(h, k.as_bytes());
                fingerprint(x, h);
            }
        }
    }
}

impl Domain {
    /// Builds a domain from schema texts (`.tables`, `.tools`) and the tools' functions. Every
    /// declared tool must have exactly one function and every function a declaration.
    pub fn new(name: &str, texts: &[(&str, &str)], functions: Tools) -> Result<Self, DomainError> {
        let doc: SchemaDoc = schema::parse(texts)?;
        let fail = |message: String| DomainError::Tools {
            domain: name.to_string(),
            message,
        };
        let mut fns: HashMap<String, ToolFn> = HashMap::new();
        for (n, f) in functions.into_entries() {
            if fns.contains_key(&n) {
                return Err(fail(format!("function for `{n}` given twice")));
            }
            fns.insert(n, f);
        }
        let mut tools = Vec::new();
        for decl in &doc.tools {
            let run = fns
                .remove(decl.name.as_str())
                .ok_or_else(|| fail(format!("tool `{}` has no function", decl.name)))?;
            tools.push(Tool {
                decl: decl.clone(),
                run,
            });
        }
        if let Some(extra) = fns.keys().next() {
            return Err(fail(format!("function `{extra}` has no declaration")));
        }
        let index = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.decl.name.clone(), i))
            .collect();
        Ok(Domain {
            name: name.to_string(),
            layout: Layout::new(doc),
            tools,
            index,
            patched: Mutex::new(PatchCache::default()),
            listing: None,
        })
    }

    /// The table layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// The tools, in declaration order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// A tool by name.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    /// The same domain (tables, tools, functions) showing another tool list: `list` holds
    /// MCP-shaped entries (`name`, `description`, `inputSchema`) in the order clients see
    /// them. Every entry must name a declared tool and every declared tool must be listed.
    pub fn with_listing(&self, list: Vec<Value>) -> Result<Domain, DomainError> {
        self.with_listing_shared(Arc::new(list))
    }

    /// [`Domain::with_listing`] with a list shared with the caller (not copied).
    pub fn with_listing_shared(&self, list: Arc<Vec<Value>>) -> Result<Domain, DomainError> {
        let fail = |message: String| DomainError::Tools {
            domain: self.name.clone(),
            message,
        };
        let mut seen = std::collections::HashSet::new();
        for t in list.iter() {
            let name = t
                .get("name")
                .and_then(Value::as_str)
                .ok_or_else(|| fail("a listed tool has no name".into()))?;
            if !self.index.contains_key(name) {
                return Err(fail(format!("listed tool `{name}` is not declared")));
            }
            if !seen.insert(name.to_string()) {
                return Err(fail(format!("tool `{name}` is listed twice")));
            }
        }
        if let Some(t) = self.tools.iter().find(|t| !seen.contains(&t.decl.name)) {
            return Err(fail(format!(
                "declared tool `{}` is not listed",
                t.decl.name
            )));
        }
        Ok(Domain {
            name: self.name.clone(),
            layout: self.layout.clone(),
            tools: self
                .tools
                .iter()
                .map(|t| Tool {
                    decl: t.decl.clone(),
                    run: t.run.clone(),
                })
                .collect(),
            index: self.index.clone(),
            patched: Mutex::new(PatchCache::default()),
            listing: Some(list),
        })
    }

    /// The tool list from the declarations (ignoring [`Domain::with_listing`]).
    pub fn declared_tool_list(&self) -> Vec<Value> {
        self.tools
            .iter()
            .map(|t| json!({"name": t.decl.name, "description": t.decl.input.description, "inputSchema": input_schema(&t.decl.input)}))
            .collect()
    }

    /// The MCP tool list: name, description and JSON input schema of each tool, in the
    /// order clients see them.
    pub fn tool_list(&self) -> Vec<Value> {
        match &self.listing {
            Some(l) => l.as_ref().clone(),
            None => self.declared_tool_list(),
        }
    }

    /// Loads the initial data under `toolslib` into a base state for sessions.
    pub fn load(self: &Arc<Self>, toolslib: &Path) -> Result<Loaded, DomainError> {
        let clock = Clock::default();
        let now = clock.now_naive_iso();
        let base = State::load_initial(self.layout.clone(), toolslib, Ctx { now: &now })?;
        // Every session starts from these rows: hash them once, so a session's first hash
        // resumes after the base rows before the first row its data patch wrote.
        base.hash();
        Ok(Loaded {
            domain: self.clone(),
            base,
        })
    }
}

/// A domain with its initial data loaded: the base every session starts from.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The domain.
    pub domain: Arc<Domain>,
    /// Initial state (before any data patch).
    pub base: State,
}

impl Loaded {
    /// A fresh session: a copy of the base state with the config's `data_patch` applied.
    /// `config` is what the reference sends to `__reserved__init` (`sources`, `data_patch`, ...).
    ///
    /// The patched state is built once per (patch, clock) and shared copy-on-write by every
    /// later session of the same patch; each session still owns its state (the first write to
    /// a table copies that table for that session alone).
    pub fn session(&self, config: &Value, clock: Clock) -> Result<Session, StateError> {
        self.open(config, clock, true)
    }

    /// [`Loaded::session`] without the shared patched state: copies and patches the tables
    /// every time (what a cold first session of a task costs).
    pub fn session_uncached(&self, config: &Value, clock: Clock) -> Result<Session, StateError> {
        self.open(config, clock, false)
    }

    fn open(&self, config: &Value, clock: Clock, cached: bool) -> Result<Session, StateError> {
        let now = clock.now_naive_iso();
        let state = match config.get("data_patch") {
            None | Some(Value::Null) => self.base.clone(),
            Some(patch) if cached => self.patched(patch, &now)?,
            Some(patch) => {
                let mut state = self.base.clone();
                state.apply_patch(patch, Ctx { now: &now })?;
                state
            }
        };
        let sources = match config.get("sources") {
            Some(Value::Array(a)) => self.shared_sources(a),
            _ => Arc::new(Vec::new()),
        };
        Ok(Session {
            domain: self.domain.clone(),
            state,
            clock,
            sources,
            now_naive: now,
        })
    }

    /// A config made ready for sessions once (at load, before any session): its data patch
    /// validated and upserted over the base here, the rows kept to be shared by pointer by
    /// every session opened from it ([`Prepared::session`]), each session building its own
    /// tables from them. The rows of `@now` defaults take `clock`, so a prepared config is for
    /// that clock (its sessions run on it). A patch that fails is kept as failing: every
    /// session of it fails with the error [`Loaded::session_uncached`] gives.
    pub fn prepare(&self, config: &Value, clock: Clock) -> Prepared {
        let now = clock.now_naive_iso();
        let patch = match config.get("data_patch") {
            None | Some(Value::Null) => PreparedPatch::None,
            Some(patch) => {
                let mut state = self.base.clone();
                match state.apply_patch(patch, Ctx { now: &now }) {
                    Ok(()) => PreparedPatch::Rows(state.patched_over(&self.base)),
                    Err(_) => PreparedPatch::Fails(patch.clone()),
                }
            }
        };
        let sources = match config.get("sources") {
            Some(Value::Array(a)) => self.shared_sources(a),
            _ => Arc::new(Vec::new()),
        };
        Prepared {
            loaded: self.clone(),
            clock,
            now,
            patch,
            sources,
        }
    }

    /// One shared copy of each distinct `sources` list.
    fn shared_sources(&self, list: &[Value]) -> Arc<Vec<Value>> {
        let same = |a: &Arc<Vec<Value>>| {
            a.len() == list.len() && a.iter().zip(list).all(|(x, y)| eq_ordered(x, y))
        };
        let Ok(mut c) = self.domain.patched.lock() else {
            return Arc::new(list.to_vec());
        };
        if let Some(a) = c.sources.iter().find(|a| same(a)) {
            return a.clone();
        }
        let a = Arc::new(list.to_vec());
        if c.sources.len() < PatchCache::MAX_SOURCES {
            c.sources.push(a.clone());
        }
        a
    }

    fn patched(&self, patch: &Value, now: &str) -> Result<State, StateError> {
        let mut key = 0u64;
        fingerprint(patch, &mut key);
        let found = |e: &PatchEntry| {
            e.now == now && e.base.same_tables(&self.base) && eq_ordered(&e.patch, patch)
        };
        let cache = &self.domain.patched;
        if let Ok(c) = cache.lock()
            && let Some(list) = c.entries.get(&key)
            && let Some(e) = list.iter().find(|e| found(e))
        {
            return Ok(e.state.clone());
        }
        let mut state = self.base.clone();
        state.apply_patch(patch, Ctx { now })?;
        if let Ok(mut c) = cache.lock() {
            if c.len >= PatchCache::MAX {
                c.entries.clear();
                c.len = 0;
            }
            let list = c.entries.entry(key).or_default();
            if !list.iter().any(found) {
                list.push(PatchEntry {
                    now: now.to_string(),
                    patch: patch.clone(),
                    base: self.base.clone(),
                    state: state.clone(),
                });
                c.len += 1;
            }
        }
        Ok(state)
    }
}

/// A task config made ready for sessions by [`Loaded::prepare`]. Cheap to clone (the rows are
/// shared).
#[derive(Debug, Clone)]
pub struct Prepared {
    loaded: Loaded,
    clock: Clock,
    now: String,
    patch: PreparedPatch,
    sources: Arc<Vec<Value>>,
}

#[derive(Debug, Clone)]
enum PreparedPatch {
    /// No data patch: sessions start from the base.
    None,
    /// The tables the patch wrote, with their rows.
    Rows(crate::state::PatchedTables),
    /// A patch that does not apply (kept to give its error again).
    Fails(Value),
}

impl Prepared {
    /// A fresh session: the base state (one pointer per table) with the prepared tables put in
    /// place, each a new table of this session holding the prepared rows (shared by pointer;
    /// the session's first write to a table copies its row list, a write to a row copies that
    /// row). Nothing in it comes from an earlier session; no row is validated again. Equal,
    /// state and write count, to [`Loaded::session_uncached`] of the config on the same clock.
    pub fn session(&self) -> Result<Session, StateError> {
        let base = &self.loaded.base;
        let state = match &self.patch {
            PreparedPatch::None => base.clone(),
            PreparedPatch::Rows(p) => base.with_patched(p),
            PreparedPatch::Fails(patch) => {
                let mut state = base.clone();
                state.apply_patch(patch, Ctx { now: &self.now })?;
                // Not reached (the patch failed on the same base and clock); answered as
                // the uncached path would be.
                state
            }
        };
        Ok(Session {
            domain: self.loaded.domain.clone(),
            state,
            clock: self.clock,
            sources: self.sources.clone(),
            now_naive: self.now.clone(),
        })
    }

    /// The clock its sessions run on.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The domain and base it was prepared on.
    pub fn loaded(&self) -> &Loaded {
        &self.loaded
    }
}

/// The time a session's tools see. Pinned, never the wall clock unless asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clock {
    /// Now.
    pub now: DateTime<Utc>,
}

impl Default for Clock {
    /// 2025-10-01T13:00:00Z, the current time the v1 scenarios state.
    fn default() -> Self {
        Clock {
            now: DateTime::parse_from_rfc3339("2025-10-01T13:00:00Z")
                .map(|d| d.with_timezone(&Utc))
                .unwrap_or_default(),
        }
    }
}

impl Clock {
    /// A clock pinned at `now`.
    pub fn at(now: DateTime<Utc>) -> Self {
        Clock { now }
    }

    /// Parses an RFC 3339 instant.
    pub fn parse(s: &str) -> Result<Self, String> {
        DateTime::parse_from_rfc3339(s)
            .map(|d| Clock {
                now: d.with_timezone(&Utc),
            })
            .map_err(|e| {
                format!("invalid time `{s}` (want RFC 3339, e.g. 2025-10-01T13:00:00Z): {e}")
            })
    }

    /// `datetime.utcnow().isoformat()`-like text (naive), used for `default_factory=utcnow`.
    pub fn now_naive_iso(&self) -> String {
        use chrono::{Datelike, Timelike};
        let t = self.now.naive_utc();
        let year = t.year();
        if !(0..=9999).contains(&year) || t.nanosecond() >= 1_000_000_000 {
            // Years chrono writes with a sign or more digits, and leap seconds (`:60`).
            return t.format("%Y-%m-%dT%H:%M:%S").to_string();
        }
        // `%Y-%m-%dT%H:%M:%S` written digit by digit (chrono's formatter parses its pattern
        // on every call; this runs once per session).
        let mut out = String::with_capacity(19);
        let mut two = |n: u32, sep: Option<char>| {
            out.push(char::from(b'0' + u8::try_from(n / 10 % 10).unwrap_or(0)));
            out.push(char::from(b'0' + u8::try_from(n % 10).unwrap_or(0)));
            if let Some(c) = sep {
                out.push(c);
            }
        };
        let year = year.unsigned_abs();
        two(year / 100, None);
        two(year % 100, Some('-'));
        two(t.month(), Some('-'));
        two(t.day(), Some('T'));
        two(t.hour(), Some(':'));
        two(t.minute(), Some(':'));
        two(t.second(), None);
        out
    }

    /// ISO-8601 UTC with `Z`.
    pub fn now_iso(&self) -> String {
        self.now.to_rfc3339_opts(SecondsFormat::Secs, true)
    }
}

/// What calling a tool gave.
#[derive(Debug, Clone, PartialEq)]
pub enum CallOutcome {
    /// The tool ran; its result (rows it shows may be shared with the state).
    Ok(Output),
    /// The tool failed; the full error message (`Tool execution failed: ...`).
    ToolFailed(String),
    /// No such tool in this session.
    UnknownTool(String),
    /// A server that answers with its own texts (the airline and setup-check servers): its
    /// reply as it sent it, errors included (`Error!\n...`, validation texts).
    Reply(ToolReply),
}

impl CallOutcome {
    /// The JSON the MCP server sends back as text: the result, or `{"error", "tool"}`.
    /// An unknown tool is reported as the in-process system does (`Unknown tool: x`).
    pub fn to_json(&self, tool: &str) -> Value {
        match self {
            CallOutcome::Ok(v) => v.to_value(),
            CallOutcome::ToolFailed(msg) => json!({"error": msg, "tool": tool}),
            CallOutcome::UnknownTool(name) => {
                json!({"error": format!("Unknown tool: {name}"), "tool": tool})
            }
            CallOutcome::Reply(r) => Value::String(r.text.clone()),
        }
    }

    /// The MCP text content: Python `json.dumps` of [`CallOutcome::to_json`].
    pub fn to_text(&self, tool: &str) -> String {
        match self {
            CallOutcome::Reply(r) => r.text.clone(),
            // The result written as it is (not copied first; shared rows read in place).
            CallOutcome::Ok(Output::Value(v)) => pyjson::dumps(v, pyjson::Layout::Default),
            CallOutcome::Ok(o) => {
                let mut s = String::with_capacity(1024);
                o.write_text(&mut s);
                s
            }
            _ => pyjson::dumps(&self.to_json(tool), pyjson::Layout::Default),
        }
    }

    /// Whether the tool ran without error.
    pub fn is_ok(&self) -> bool {
        match self {
            CallOutcome::Ok(_) => true,
            CallOutcome::Reply(r) => !r.is_error,
            CallOutcome::ToolFailed(_) | CallOutcome::UnknownTool(_) => false,
        }
    }
}

/// One attempt's backend: state, clock and the policy sources, bound to a domain.
#[derive(Debug, Clone)]
pub struct Session {
    /// The domain.
    pub domain: Arc<Domain>,
    /// The live state.
    pub state: State,
    /// The clock tools read.
    pub clock: Clock,
    /// The scenario's policy sources (for policy search), shared by the sessions of a domain.
    pub sources: Arc<Vec<Value>>,
    now_naive: String,
}

impl Session {
    /// Validation context (the clock for `@now` defaults).
    pub fn ctx(&self) -> Ctx<'_> {
        Ctx {
            now: &self.now_naive,
        }
    }

    /// Validates and inserts a row (`db.create`).
    pub fn insert(&mut self, table: &str, row: &Value) -> Result<Row, ToolError> {
        self.with_state(|state, ctx| state.insert(table, row, ctx))
    }

    /// Validates and replaces a row by id (`db.update`).
    pub fn replace(&mut self, table: &str, row: &Value) -> Result<Row, ToolError> {
        self.with_state(|state, ctx| state.replace(table, row, ctx))
    }

    /// `db.create(model)` of a row built by [`State::validate_row`], the stored row shared
    /// with the result ([`State::store_built_shared`]).
    pub fn insert_built_shared(&mut self, table: &str, row: Row) -> Result<SharedRow, ToolError> {
        self.with_state(|state, ctx| state.store_built_shared(Store::Insert, table, row, ctx))
    }

    /// `db.update(model)` of a row built by [`State::validate_row`], the stored row shared
    /// with the result ([`State::store_built_shared`]).
    pub fn replace_built_shared(&mut self, table: &str, row: Row) -> Result<SharedRow, ToolError> {
        self.with_state(|state, ctx| state.store_built_shared(Store::Replace, table, row, ctx))
    }

    /// Runs a write on the state with the session's validation context.
    fn with_state<T>(
        &mut self,
        write: impl FnOnce(&mut State, Ctx<'_>) -> Result<T, StateError>,
    ) -> Result<T, ToolError> {
        let ctx = Ctx {
            now: &self.now_naive,
        };
        Ok(write(&mut self.state, ctx)?)
    }

    /// Calls a tool by name with raw JSON arguments, as the reference's server does: input
    /// validation first (errors as `Input validation failed: loc: msg; ...`), then the tool.
    ///
    /// A panic inside validation or the tool (a bug of ours) is caught here and answered as
    /// the reference answers an unexpected exception: a tool error the agent reads
    /// (`Tool execution failed: ...`), never the panic text; the session goes on.
    pub fn call(&mut self, name: &str, args: &Value) -> CallOutcome {
        let domain = self.domain.clone();
        let Some(tool) = domain.tool(name) else {
            return CallOutcome::UnknownTool(name.to_string());
        };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.run(tool, args)));
        ran.unwrap_or_else(|panic| {
            let msg = panic
                .downcast_ref::<&str>()
                .copied()
                .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                .unwrap_or("(no message)");
            tracing::error!(
                tool = name,
                panic = msg,
                "tool panicked; answered as a tool error"
            );
            CallOutcome::ToolFailed(TOOL_PANIC_ERROR.to_string())
        })
    }

    fn run(&mut self, tool: &Tool, args: &Value) -> CallOutcome {
        let validated = match coerce::validate_model(&tool.decl.input, args, self.ctx()) {
            Ok(a) => a,
            Err(errors) => {
                let details: Vec<String> = errors
                    .iter()
                    .map(super::coerce::ValidationError::display)
                    .collect();
                return CallOutcome::ToolFailed(format!(
                    "Tool execution failed: {}",
                    ToolError::with_details("Input validation failed", &details)
                ));
            }
        };
        // A failing tool leaves the state as it was at the failure point, as in the reference.
        // The raw arguments are lent to the tools that read them ([`ToolFn::with_raw_args`]).
        match tool.run.call_output(self, &validated, args) {
            Ok(v) => CallOutcome::Ok(v),
            Err(e) => CallOutcome::ToolFailed(format!("Tool execution failed: {e}")),
        }
    }
}

/// The JSON schema of a tool input model: the structure pydantic gives (types, enums,
/// nullability, defaults, required, nested models inlined) with our descriptions.
pub fn input_schema(model: &Model) -> Value {
    let mut props = Map::new();
    let mut required = Vec::new();
    for f in &model.fields {
        let mut s = kind_schema(&f.kind);
        if let Value::Object(m) = &mut s {
            if !f.description.is_empty() {
                m.insert("description".into(), Value::String(f.description.clone()));
            }
            match &f.default {
                schema::Default::Required => required.push(Value::String(f.name.clone())),
                schema::Default::Value(v) => {
                    m.insert("default".into(), v.clone());
                }
                schema::Default::Now => {}
            }
        }
        props.insert(f.name.clone(), s);
    }
    let mut out = Map::new();
    if !model.description.is_empty() {
        out.insert(
            "description".into(),
            Value::String(model.description.clone()),
        );
    }
    out.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    out.insert("type".into(), json!("object"));
    if model.forbid_extra {
        out.insert("additionalProperties".into(), json!(false));
    }
    Value::Object(out)
}

fn kind_schema(kind: &Kind) -> Value {
    match kind {
        Kind::Str => json!({"type": "string"}),
        Kind::Int => json!({"type": "integer"}),
        Kind::Float => json!({"type": "number"}),
        Kind::Bool => json!({"type": "boolean"}),
        Kind::Decimal => json!({"type": "string"}), // serialization-mode schema, as the reference lists it
        Kind::DateTime => json!({"type": "string", "format": "date-time"}),
        Kind::Date => json!({"type": "string", "format": "date"}),
        Kind::Any => json!({}),
        Kind::Enum(values) => json!({"enum": values.as_ref(), "type": "string"}),
        Kind::List(k) => json!({"items": kind_schema(k), "type": "array"}),
        Kind::Dict(k) => json!({"additionalProperties": kind_schema(k), "type": "object"}),
        Kind::Optional(k) => json!({"anyOf": [kind_schema(k), {"type": "null"}]}),
        Kind::Model(m) => input_schema(m),
        Kind::Union(alts) => json!({"anyOf": alts.iter().map(kind_schema).collect::<Vec<_>>()}),
        Kind::Constrained(k, c) => {
            let mut s = kind_schema(k);
            if let Value::Object(m) = &mut s {
                let is_list = matches!(k.as_ref(), Kind::List(_));
                if let Some(v) = c.min_len {
                    m.insert(
                        if is_list { "minItems" } else { "minLength" }.into(),
                        json!(v),
                    );
                }
                if let Some(v) = c.max_len {
                    m.insert(
                        if is_list { "maxItems" } else { "maxLength" }.into(),
                        json!(v),
                    );
                }
                let num = |x: f64| {
                    if x.fract() == 0.0 {
                        // An integral bound prints as Python's `int`; the declared bounds are
                        // far inside i64.
                        #[allow(clippy::cast_possible_truncation, reason = "integral bound")]
                        let i = x as i64;
                        json!(i)
                    } else {
                        json!(x)
                    }
                };
                for (key, v) in [
                    ("minimum", c.ge),
                    ("exclusiveMinimum", c.gt),
                    ("maximum", c.le),
                    ("exclusiveMaximum", c.lt),
                ] {
                    if let Some(v) = v {
                        m.insert(key.into(), num(v));
                    }
                }
            }
            s
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Plain = fn(&mut Session, &Args) -> Result<Value, ToolError>;

    fn registry(list: &[(&str, Plain)]) -> Tools {
        let mut t = Tools::new();
        for (n, f) in list {
            t.add(n, *f);
        }
        t
    }

    fn bump(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
        let id = a["id"].clone();
        let row =
            s.state.get("items", &id)?.cloned().ok_or_else(|| {
                ToolError::new(format!("Item {} not found", tb_python::py_str(&id)))
            })?;
        let mut row = row;
        let n = row["n"].as_i64().unwrap_or(0) + a["by"].as_i64().unwrap_or(1);
        row.insert("n".into(), json!(n));
        s.replace("items", &Value::Object(row.clone()))?;
        Ok(json!({"item": row}))
    }

    fn explode(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
        // A bug: byte slicing inside a multibyte character panics.
        let id = a["id"].as_str().unwrap_or_default();
        s.replace("items", &json!({"id": "a", "n": 99}))?;
        Ok(json!({"head": &id[..1]}))
    }

    #[test]
    fn a_panicking_tool_is_a_tool_error_and_the_session_goes_on() {
        let tables = "table items file=x/items id=id forbid\n  id str\n  n int = 0\n";
        let tools =
            "tool explode class=ExplodeInput\n  | Fails on non-ASCII ids.\n  id str : Which item\n";
        let d = Arc::new(
            Domain::new(
                "demo",
                &[("demo.tables", tables), ("demo.tools", tools)],
                registry(&[("explode", explode)]),
            )
            .unwrap(),
        );
        let mut s = session_with_item_a(&d);
        let out = s.call("explode", &json!({"id": "\u{e9}t\u{e9}"}));
        assert_eq!(out, CallOutcome::ToolFailed(TOOL_PANIC_ERROR.into()));
        let text = out.to_text("explode");
        assert_eq!(
            text,
            r#"{"error": "Tool execution failed: internal error", "tool": "explode"}"#
        );
        assert!(!text.contains("char boundary"), "no panic text: {text}");
        // The session is still usable, and keeps what the tool wrote before failing.
        assert_eq!(
            s.call("explode", &json!({"id": "ab"})),
            CallOutcome::Ok(json!({"head": "a"}).into())
        );
        assert_eq!(
            s.state.get("items", &json!("a")).unwrap().unwrap()["n"],
            json!(99)
        );
    }

    /// A session of `d` on empty tables with the row `items` `{"id": "a"}` patched in.
    fn session_with_item_a(d: &Arc<Domain>) -> Session {
        let loaded = Loaded {
            domain: d.clone(),
            base: State::empty(d.layout().clone()),
        };
        loaded
            .session(
                &json!({"data_patch": {"items": [{"id": "a"}]}}),
                Clock::default(),
            )
            .unwrap()
    }

    fn domain() -> Arc<Domain> {
        let tables = "table items file=x/items id=id forbid\n  id str\n  n int = 0\n";
        let tools = "tool bump class=BumpInput\n  | Adds to a counter.\n  id str : Which item\n  by int{ge=1} = 1 : How much\n";
        Arc::new(
            Domain::new(
                "demo",
                &[("demo.tables", tables), ("demo.tools", tools)],
                registry(&[("bump", bump)]),
            )
            .unwrap(),
        )
    }

    #[test]
    fn calls_validate_run_and_shape_errors() {
        let d = domain();
        let mut s = session_with_item_a(&d);
        assert_eq!(
            s.call("bump", &json!({"id": "a", "by": "2"})),
            CallOutcome::Ok(json!({"item": {"id": "a", "n": 2}}).into())
        );
        assert_eq!(
            s.call("bump", &json!({"by": 0})).to_text("bump"),
            r#"{"error": "Tool execution failed: Input validation failed: id: Field required; by: Input should be greater than or equal to 1", "tool": "bump"}"#
        );
        assert_eq!(
            s.call("bump", &json!({"id": "zz"})).to_json("bump")["error"],
            json!("Tool execution failed: Item zz not found")
        );
        assert_eq!(
            s.call("nope", &json!({})),
            CallOutcome::UnknownTool("nope".into())
        );
        assert_eq!(
            s.call("bump", &Value::Null).to_json("bump")["error"],
            json!(
                "Tool execution failed: Input validation failed: unknown: Input should be a valid dictionary or instance of BumpInput"
            )
        );
        let schema = &d.tool_list()[0]["inputSchema"];
        assert_eq!(schema["required"], json!(["id"]));
        assert_eq!(schema["properties"]["by"]["minimum"], json!(1));
    }

    #[test]
    fn the_naive_clock_text_is_chronos() {
        let want = |c: &Clock| c.now.naive_utc().format("%Y-%m-%dT%H:%M:%S").to_string();
        for text in [
            "2025-10-01T13:00:00Z",
            "2026-11-30T12:00:00Z",
            "0001-01-01T00:00:00Z",
            "0999-12-31T23:59:59.999Z",
            "9999-12-31T23:59:59Z",
            "2024-02-29T07:08:09+05:30",
        ] {
            let c = Clock::parse(text).unwrap();
            assert_eq!(c.now_naive_iso(), want(&c), "{text}");
        }
        for c in [
            Clock::at(DateTime::<Utc>::MIN_UTC),
            Clock::at(DateTime::<Utc>::MAX_UTC),
            Clock::at(
                chrono::NaiveDate::from_ymd_opt(2016, 12, 31)
                    .and_then(|d| d.and_hms_milli_opt(23, 59, 59, 1_500))
                    .unwrap()
                    .and_utc(),
            ),
        ] {
            assert_eq!(c.now_naive_iso(), want(&c));
        }
    }

    /// A domain of two tables (one with a `@now` default) and a base with rows in both.
    fn patch_domain() -> Loaded {
        let tables = "table items file=x/items id=id\n  id str\n  n int = 0\n  at datetime = @now\n\
                      table tags file=x/tags id=id\n  id str\n  label str = \"\"\n";
        let d = Arc::new(
            Domain::new(
                "demo",
                &[("demo.tables", tables), ("demo.tools", "")],
                Tools::new(),
            )
            .unwrap(),
        );
        let mut base = State::empty(d.layout().clone());
        let ctx = Ctx {
            now: "2020-01-01T00:00:00",
        };
        for id in ["a", "b", "c"] {
            base.insert("items", &json!({"id": id, "n": 1}), ctx)
                .unwrap();
        }
        base.insert("tags", &json!({"id": "t"}), ctx).unwrap();
        Loaded { domain: d, base }
    }

    #[test]
    fn a_prepared_config_fails_as_the_uncached_path_does() {
        let l = patch_domain();
        let clock = Clock::default();
        for config in [
            json!({"data_patch": {"items": [{"id": "z"}, {"n": 2}], "nope": []}}),
            json!({"data_patch": [1]}),
        ] {
            let want = l.session_uncached(&config, clock).unwrap_err().to_string();
            let p = l.prepare(&config, clock);
            for _ in 0..2 {
                assert_eq!(p.session().unwrap_err().to_string(), want);
            }
        }
        let s = l
            .prepare(&json!({"sources": [{"a": 1}]}), clock)
            .session()
            .unwrap();
        assert!(s.state.same_tables(&l.base));
        assert_eq!(s.sources.as_ref(), &vec![json!({"a": 1})]);
    }

    proptest::proptest! {
        /// A session opened from a prepared config equals the uncached session of the config
        /// (rows, order, write count, hash, clock), and owns its state: whatever it writes, the
        /// base, a sibling prepared session, sessions prepared later and the warm and uncached
        /// sessions keep what they had.
        #[test]
        fn prepared_sessions_equal_uncached_ones_and_own_their_state(
            patch in proptest::collection::vec((0u8..2, "[a-e]", proptest::option::of(0i64..4)), 0..8),
            edits in proptest::collection::vec((0u8..5, "[a-f]", 0i64..4, 0usize..7), 1..8),
            later in 0u32..3,
        ) {
            let l = patch_domain();
            let clock = Clock::parse("2026-11-30T12:00:00Z").unwrap();
            let mut tables = Map::new();
            for (t, id, n) in &patch {
                let (name, row) = if *t == 0 {
                    ("items", match n { Some(n) => json!({"id": id, "n": n}), None => json!({"id": id}) })
                } else {
                    ("tags", json!({"id": id, "label": format!("{n:?}")}))
                };
                tables.entry(name).or_insert_with(|| json!([])).as_array_mut().unwrap().push(row);
            }
            let config = json!({"data_patch": tables, "sources": ["s"]});
            let p = l.prepare(&config, clock);
            let fresh = || l.session_uncached(&config, clock).unwrap();
            let want = fresh();
            let (want_full, want_hash) = (want.state.full_state(), want.state.hash());
            let mut s1 = p.session().unwrap();
            let s2 = p.session().unwrap();
            for s in [&s1, &s2] {
                proptest::prop_assert_eq!(s.state.full_state(), want_full.clone());
                proptest::prop_assert_eq!(s.state.writes(), want.state.writes());
                proptest::prop_assert_eq!(s.state.hash(), want_hash.clone());
                proptest::prop_assert_eq!(s.clock, clock);
                proptest::prop_assert_eq!(s.ctx().now, want.ctx().now);
                proptest::prop_assert_eq!(&s.sources, &want.sources);
            }
            let base_full = l.base.full_state();
            let ctx = Ctx { now: "2021-02-02T00:00:00" };
            for (op, id, n, pos) in &edits {
                let row = json!({"id": id, "n": n});
                let _ = match op {
                    0 => s1.state.insert("items", &row, ctx).map(drop),
                    1 => s1.state.replace("items", &row, ctx).map(drop),
                    2 => s1.state.delete("tags", &json!(id)),
                    3 => s1.state.row_mut("items", *pos).map(|r| {
                        if let Some(r) = r {
                            r.insert("n".into(), json!(n + 10));
                        }
                    }),
                    _ => s1.state.set_row("tags", *pos, Map::from_iter([("id".to_string(), json!(id))])),
                };
            }
            for _ in 0..later {
                drop(l.session(&config, clock).unwrap());
            }
            let s3 = p.session().unwrap();
            let warm = l.session(&config, clock).unwrap();
            for s in [&s2, &s3, &warm, &fresh(), &want] {
                proptest::prop_assert_eq!(s.state.full_state(), want_full.clone());
                proptest::prop_assert_eq!(s.state.hash(), want_hash.clone());
            }
            proptest::prop_assert_eq!(l.base.full_state(), base_full);
        }
    }

    #[test]
    fn missing_function_is_an_error() {
        let e = Domain::new("d", &[("d.tools", "tool a\n")], Tools::new()).unwrap_err();
        assert!(e.to_string().contains("tool `a` has no function"));
    }
}

/// What a server answers to one tool call: the text content the agent receives and the MCP
/// `isError` flag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolReply {
    /// The text content.
    pub text: String,
    /// MCP `isError` (argument validation failures, unknown tools).
    pub is_error: bool,
}

impl ToolReply {
    /// A normal answer (the tool ran, whatever it reports).
    pub fn ok(text: String) -> Self {
        ToolReply {
            text,
            is_error: false,
        }
    }

    /// An MCP error.
    pub fn error(text: String) -> Self {
        ToolReply {
            text,
            is_error: true,
        }
    }
}

/// One attempt's server, whatever its domain: the episode and judge code call tools through
/// this and ask it for the effects a test reads (`x.effects[server]`).
pub trait ServerSession: Send {
    /// The server name.
    fn server(&self) -> &str;
    /// Calls a tool with raw JSON arguments.
    fn call_tool(&mut self, name: &str, args: &Value) -> ToolReply;
    /// The server's own effects object, if it reports one (the v1 servers' effects come from
    /// the state judge instead: see `tb_eval::pybody::v1_effects`).
    fn effects(&self) -> Option<Value>;
}

impl ServerSession for Session {
    fn server(&self) -> &str {
        &self.domain.name
    }

    fn call_tool(&mut self, name: &str, args: &Value) -> ToolReply {
        ToolReply::ok(self.call(name, args).to_text(name))
    }

    fn effects(&self) -> Option<Value> {
        None
    }
}
