//! The `airline_tau_bench` server (thinkingbox_tools' tau-bench airline): users, reservations
//! and flights loaded from the tau-bench files as the server converts them, its tools with the
//! exact result texts (`json.dumps` of an object whose first key is `"status"`; domain errors
//! `"Error!\n<message>"`, any other failure a bare `"Error!"`), argument validation failures as
//! MCP errors, and the effects object the tests read.
//!
//! Time: timestamps the server writes are its constant [`FIXED_NOW`]; the refund rule reads the
//! session clock, which defaults to [`DEFAULT_NOW`], the clock of the recorded reference run.
//! New ids (`RES`, `CERT`, `TSF` + 8 hex) come from [`ids::PyRandom`] seeded by the task id.

pub mod calc;
pub mod data;
pub mod ids;
mod tools;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value};
use std::path::Path;
use std::sync::{Arc, OnceLock};
use tb_sandbox::schema::{self, Kind, ToolDecl};
use tb_sandbox::{Clock, ServerSession, ToolFn, ToolReply, Tools, coerce, pyjson};

pub use data::Db;

/// The server name (scenario key and `init` key).
pub const SERVER: &str = "airline_tau_bench";

/// What the server writes for "now" (`created_at`, `cancelled_at`, `last_modified`, ...).
pub const FIXED_NOW: &str = "2024-05-15T15:00:00-05:00";

/// The refund rule's clock in the recorded reference run (`tb-bench-v1/airline`).
pub const DEFAULT_NOW: &str = "2026-11-30T12:00:00Z";

/// The session clock an airline session uses unless told otherwise.
pub fn default_clock() -> Clock {
    Clock::parse(DEFAULT_NOW).unwrap_or_default()
}

/// The server's success object: `"status": "ok"` first, then the fields (a field named
/// `status` overwrites the value and keeps the first position).
pub fn ok(fields: Vec<(&str, Value)>) -> Value {
    let mut m = Map::new();
    m.insert("status".into(), Value::String("ok".into()));
    for (k, v) in fields {
        m.insert(k.to_string(), v);
    }
    Value::Object(m)
}

/// The tools with their declarations (`tools/airline_tau_bench.tools`) and functions.
#[derive(Debug)]
pub struct Airline {
    tools: Vec<(ToolDecl, ToolFn<AirlineSession>)>,
}

/// The tool functions, registered as the v1 domains register theirs.
fn functions() -> Tools<AirlineSession> {
    let mut t = Tools::new();
    t.add("search_direct_flight", tools::search_direct_flight)
        .add("search_onestop_flight", tools::search_onestop_flight)
        .add("get_user_details", tools::get_user_details)
        .add("get_reservation_details", tools::get_reservation_details)
        .add("book_reservation", tools::book_reservation)
        .add("cancel_reservation", tools::cancel_reservation)
        .add(
            "update_reservation_passengers",
            tools::update_reservation_passengers,
        )
        .add(
            "update_reservation_flights",
            tools::update_reservation_flights,
        )
        .add(
            "update_reservation_baggages",
            tools::update_reservation_baggages,
        )
        .add("list_all_airports", tools::list_all_airports)
        .add("calculate", tools::calculate)
        .add("send_certificate", tools::send_certificate)
        .add("transfer_to_human_agents", tools::transfer_to_human_agents)
        .add("think", tools::think)
        .add("check_price_quote", tools::check_price_quote)
        .add("check_refund_amount", tools::check_refund_amount);
    t
}

/// Errors loading the airline.
#[derive(Debug, thiserror::Error)]
pub enum AirlineError {
    /// The tool declarations are broken (a bug).
    #[error(transparent)]
    Schema(#[from] schema::SchemaError),
    /// Declarations and functions do not pair up (a bug).
    #[error("airline tools: {0}")]
    Tools(String),
    /// A data file could not be read or parsed.
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The init config or the data is not what the server accepts.
    #[error("airline_tau_bench init: {0}")]
    Config(String),
}

impl Airline {
    fn build() -> Result<Airline, AirlineError> {
        let doc = schema::parse(&[(
            "airline_tau_bench.tools",
            include_str!("../../tools/airline_tau_bench.tools"),
        )])?;
        let mut fns = functions().into_entries();
        let mut tools = Vec::new();
        for decl in doc.tools {
            let i = fns
                .iter()
                .position(|(n, _)| *n == decl.name)
                .ok_or_else(|| AirlineError::Tools(format!("`{}` has no function", decl.name)))?;
            let (_, f) = fns.remove(i);
            tools.push((decl, f));
        }
        if let Some((n, _)) = fns.first() {
            return Err(AirlineError::Tools(format!("`{n}` has no declaration")));
        }
        Ok(Airline { tools })
    }

    /// The airline's tools (built once).
    pub fn get() -> Result<&'static Airline, AirlineError> {
        static A: OnceLock<Result<Airline, String>> = OnceLock::new();
        A.get_or_init(|| Airline::build().map_err(|e| e.to_string()))
            .as_ref()
            .map_err(|e| AirlineError::Tools(e.clone()))
    }

    /// The tool declarations, in the reference's order.
    pub fn decls(&self) -> impl Iterator<Item = &ToolDecl> {
        self.tools.iter().map(|(d, _)| d)
    }

    /// The MCP tool list (name, description, input schema).
    pub fn tool_list(&self) -> Vec<Value> {
        self.decls()
            .map(|d| {
                serde_json::json!({
                    "name": d.name,
                    "description": d.input.description,
                    "inputSchema": tb_sandbox::runtime::input_schema(&d.input),
                })
            })
            .collect()
    }
}

/// `os.path.expandvars(os.path.expanduser(path))`, with `THINKINGBOX_DATA` set to `data_root`.
fn expand(path: &str, data_root: &Path) -> String {
    let mut p = path.to_string();
    if let Some(rest) = p.strip_prefix('~')
        && let Some(home) = std::env::var_os("HOME")
    {
        p = format!("{}{rest}", home.to_string_lossy());
    }
    let root = data_root.to_string_lossy();
    p.replace("${THINKINGBOX_DATA}", &root)
        .replace("$THINKINGBOX_DATA", &root)
}

/// The loaded state every session of one init config starts from.
#[derive(Debug, Clone)]
pub struct Base {
    db: Arc<Db>,
}

impl Base {
    /// Loads what `__reserved__init` loads: each of `flights`, `reservations`, `users` is an
    /// object or the path of a JSON file (`$THINKINGBOX_DATA` is `data_root`).
    pub fn load(config: &Value, data_root: &Path) -> Result<Base, AirlineError> {
        let mut data = Map::new();
        for key in ["flights", "reservations", "users"] {
            let v = config
                .get(key)
                .ok_or_else(|| AirlineError::Config(format!("`{key}` is missing")))?;
            let v = match v {
                Value::String(path) => {
                    let path = expand(path, data_root);
                    let text = std::fs::read_to_string(&path).map_err(|e| AirlineError::File {
                        path: path.clone(),
                        message: e.to_string(),
                    })?;
                    serde_json::from_str(&text).map_err(|e| AirlineError::File {
                        path: path.clone(),
                        message: e.to_string(),
                    })?
                }
                other => other.clone(),
            };
            data.insert(key.into(), v);
        }
        let db = Db::from_data(&Value::Object(data)).map_err(AirlineError::Config)?;
        Ok(Base { db: Arc::new(db) })
    }

    /// A fresh session: its own copy of the state, ids seeded by `seed` (the task id), and
    /// `clock` for the refund rule.
    pub fn session(&self, seed: &str, clock: Clock) -> AirlineSession {
        AirlineSession {
            db: (*self.db).clone(),
            ids: ids::PyRandom::from_sha256_of(seed),
            now: clock.now,
            generated: Vec::new(),
        }
    }
}

/// One attempt's airline server.
#[derive(Debug, Clone)]
pub struct AirlineSession {
    /// The state.
    pub db: Db,
    ids: ids::PyRandom,
    now: DateTime<Utc>,
    /// The uuid4 values drawn so far (canonical text), in order.
    pub generated: Vec<String>,
}

impl AirlineSession {
    /// `<prefix>` + the first 8 hex digits of the next uuid4, upper case.
    fn new_id(&mut self, prefix: &str) -> String {
        let u = self.ids.uuid4();
        let text = ids::uuid_text(u);
        let id = format!("{prefix}{}", text[..8].to_uppercase());
        self.generated.push(text);
        id
    }

    fn fixed_now(&self) -> String {
        FIXED_NOW.to_string()
    }

    /// The effects object (`{"reservations": {...}, "users": {...}}`).
    pub fn effects(&self) -> Value {
        self.db.effects()
    }

    /// Calls a tool as the MCP server does: argument validation (an MCP error), then the tool.
    pub fn call(&mut self, name: &str, args: &Value) -> ToolReply {
        let airline = match Airline::get() {
            Ok(a) => a,
            Err(e) => return ToolReply::error(format!("Error executing tool {name}: {e}")),
        };
        let Some((decl, run)) = airline.tools.iter().find(|(d, _)| d.name == name) else {
            return ToolReply::error(format!("Unknown tool: {name}"));
        };
        let args = pre_parse_json(&decl.input, args);
        let validated = match coerce::validate_model(&decl.input, &args, coerce::Ctx { now: "" }) {
            Ok(a) => a,
            Err(errors) => {
                return ToolReply::error(validation_text(name, &decl.input, &args, &errors));
            }
        };
        let text = match run.call(self, &validated) {
            Ok(v) => pyjson::dumps(&v, pyjson::Layout::Default),
            Err(e) => e.bang_text(),
        };
        ToolReply::ok(text)
    }
}

/// The MCP SDK's pre-parsing: a string given for an argument whose type is not `str` is parsed
/// as JSON, and replaces the string when it gives a list, an object or null (a string or
/// number, which a bool is in Python, keeps the string).
fn pre_parse_json(model: &schema::Model, args: &Value) -> Value {
    let Value::Object(m) = args else {
        return args.clone();
    };
    let mut out = m.clone();
    for f in &model.fields {
        let plain_str = match &f.kind {
            Kind::Str => true,
            Kind::Constrained(k, _) => matches!(**k, Kind::Str),
            _ => false,
        };
        if let Some(Value::String(s)) = m.get(&f.name)
            && !plain_str
            && let Ok(v @ (Value::Array(_) | Value::Object(_) | Value::Null)) =
                serde_json::from_str::<Value>(s)
        {
            out.insert(f.name.clone(), v);
        }
    }
    Value::Object(out)
}

/// The MCP SDK's text for invalid arguments: `Error executing tool <name>: ` and pydantic's
/// text for the arguments model (`<name>Arguments`; its choices are `Literal`s), validated
/// from the pre-parsed arguments.
fn validation_text(
    name: &str,
    model: &schema::Model,
    args: &Value,
    errors: &[coerce::ValidationError],
) -> String {
    let lines = crate::pydantic::from_coerce(errors, args, crate::pydantic::Choices::Literal);
    format!(
        "Error executing tool {name}: {}",
        crate::pydantic::text(&model.name, &lines)
    )
}

impl ServerSession for AirlineSession {
    fn server(&self) -> &str {
        SERVER
    }

    fn call_tool(&mut self, name: &str, args: &Value) -> ToolReply {
        self.call(name, args)
    }

    fn effects(&self) -> Option<Value> {
        Some(AirlineSession::effects(self))
    }
}

#[cfg(test)]
mod tests;
