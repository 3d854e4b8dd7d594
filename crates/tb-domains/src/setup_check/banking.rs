//! `online_banking`: accounts, payees, transfers, scheduled bills.

use super::title;
use crate::own_servers::OwnServer;
use crate::pydantic::{self, ErrorLine};
use chrono::{DateTime, Datelike, Utc};
use serde_json::{Map, Value, json};
use std::sync::LazyLock;
use tb_sandbox::{Args, Clock, Fields, ServerSession, ToolError, ToolReply, ToolResult, Tools};

/// Parameter kinds of the banking tools.
#[derive(Clone, Copy)]
enum P {
    Str,
    Float,
    OptDateTime,
}

/// Validates arguments as pydantic (lax, Python input) does for these kinds.
fn validate(params: &[(&str, P)], args: &Value) -> Result<Map<String, Value>, Vec<ErrorLine>> {
    let empty = Map::new();
    let m = args.as_object().unwrap_or(&empty);
    let mut out = Map::new();
    let mut errors = Vec::new();
    for (name, kind) in params {
        let v = m.get(*name);
        match (kind, v) {
            (P::OptDateTime, None | Some(Value::Null)) => {
                out.insert((*name).into(), Value::Null);
            }
            (_, None) => errors.push(ErrorLine::new(
                *name,
                "Missing required argument",
                "missing_argument",
                args.clone(),
            )),
            (P::Str, Some(v)) => match v {
                Value::String(_) => {
                    out.insert((*name).into(), v.clone());
                }
                _ => errors.push(ErrorLine::new(
                    *name,
                    "Input should be a valid string",
                    "string_type",
                    v.clone(),
                )),
            },
            (P::Float, Some(v)) => match v {
                Value::Number(n) => {
                    out.insert((*name).into(), json!(n.as_f64().unwrap_or(0.0)));
                }
                Value::Bool(b) => {
                    out.insert((*name).into(), json!(if *b { 1.0 } else { 0.0 }));
                }
                Value::String(s) => match s.trim().parse::<f64>() {
                    Ok(f) if f.is_finite() => {
                        out.insert((*name).into(), json!(f));
                    }
                    _ => errors.push(ErrorLine::new(
                        *name,
                        "Input should be a valid number, unable to parse string as a number",
                        "float_parsing",
                        v.clone(),
                    )),
                },
                _ => errors.push(ErrorLine::new(
                    *name,
                    "Input should be a valid number",
                    "float_type",
                    v.clone(),
                )),
            },
            (P::OptDateTime, Some(v)) => match tb_sandbox::coerce::validate_datetime(v) {
                Ok(p) => {
                    // as UTC: aware values converted, naive ones read in the host zone (UTC)
                    let naive = chrono::NaiveDate::from_ymd_opt(p.year, p.month, p.day)
                        .and_then(|d| d.and_hms_opt(p.hour, p.minute, p.second));
                    let Some(naive) = naive else {
                        errors.push(ErrorLine::new(
                            *name,
                            "Input should be a valid datetime",
                            "datetime_type",
                            v.clone(),
                        ));
                        continue;
                    };
                    let utc = naive - chrono::Duration::seconds(i64::from(p.offset.unwrap_or(0)));
                    let d = utc.date();
                    out.insert(
                        (*name).into(),
                        json!(format!("{:04}-{:02}-{:02}", d.year(), d.month(), d.day())),
                    );
                }
                Err(msg) => {
                    let kind = if msg.starts_with("Input should be a valid datetime or date,") {
                        "datetime_from_date_parsing"
                    } else if msg.contains(", ") {
                        "datetime_parsing"
                    } else {
                        "datetime_type"
                    };
                    errors.push(ErrorLine::new(*name, msg, kind, v.clone()));
                }
            },
        }
    }
    // fastmcp validates the call as `validate_call` does: a key that is no parameter is an
    // error of its own, after the parameters'.
    for (k, v) in m {
        if !params.iter().any(|(name, _)| name == k) {
            errors.push(ErrorLine::new(
                k.as_str(),
                "Unexpected keyword argument",
                "unexpected_keyword_argument",
                v.clone(),
            ));
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// One attempt's `online_banking` server.
#[derive(Debug, Clone)]
pub struct Banking {
    accounts: Vec<(String, Map<String, Value>)>,
    payees: Vec<(String, Map<String, Value>)>,
    transactions: Vec<Value>,
    scheduled_bills: Vec<Value>,
    now: DateTime<Utc>,
}

/// The server name.
pub const BANKING: &str = "online_banking";

/// `online_banking`'s tools: name, description, parameters (name, kind), function.
const BANKING_TOOLS: &[super::Decl<Banking, P>] = &[
    (
        "get_accounts",
        "Every account of the user with its balance.",
        &[],
        get_accounts,
    ),
    (
        "get_balance",
        "The balance of one account.",
        &[("account_number", P::Str)],
        get_balance,
    ),
    (
        "transfer",
        "Moves money between two accounts of the user.",
        &[
            ("from_account", P::Str),
            ("to_account", P::Str),
            ("amount", P::Float),
        ],
        transfer,
    ),
    (
        "deposit",
        "Adds money to an account; gives the new balance.",
        &[("account_number", P::Str), ("amount", P::Float)],
        deposit,
    ),
    (
        "get_payees",
        "The payees the user has set up.",
        &[],
        get_payees,
    ),
    (
        "pay_bill",
        "Schedules a payment to a payee, on a date (ISO 8601) or today.",
        &[
            ("user_account", P::Str),
            ("payee_account", P::Str),
            ("amount", P::Float),
            ("date", P::OptDateTime),
        ],
        pay_bill,
    ),
];

fn param_schema(name: &str, kind: P) -> Value {
    match kind {
        P::Str => json!({"type": "string", "title": title(name)}),
        P::Float => json!({"type": "number", "title": title(name)}),
        P::OptDateTime => json!({
            "anyOf": [{"type": "string", "format": "date-time"}, {"type": "null"}],
            "default": null,
            "title": title(name),
        }),
    }
}

fn banking_tool_list() -> Vec<Value> {
    BANKING_TOOLS
        .iter()
        .map(|(name, desc, params, _)| {
            let props: Map<String, Value> = params
                .iter()
                .map(|(p, k)| ((*p).to_string(), param_schema(p, *k)))
                .collect();
            let required: Vec<&str> = params
                .iter()
                .filter(|(_, k)| !matches!(k, P::OptDateTime))
                .map(|(p, _)| *p)
                .collect();
            json!({
                "name": name,
                "description": desc,
                "inputSchema": {"type": "object", "properties": props, "required": required},
            })
        })
        .collect()
}

fn float_of(v: Option<&Value>) -> f64 {
    v.and_then(Value::as_f64).unwrap_or(0.0)
}

impl Banking {
    /// `__reserved__init`: accounts and payees from the config.
    pub fn init(config: &Value, clock: Clock) -> Result<Banking, String> {
        let list = |key: &str| -> Result<Vec<Value>, String> {
            config
                .get(key)
                .and_then(Value::as_array)
                .cloned()
                .ok_or_else(|| format!("online_banking init: `{key}` must be a list"))
        };
        let mut accounts = Vec::new();
        for a in list("accounts")? {
            let t = a.get("account_type").and_then(Value::as_str).unwrap_or("");
            if !["checking", "savings", "investment"].contains(&t) {
                return Err(format!(
                    "online_banking init: account_type {t:?} is not allowed"
                ));
            }
            let n = a
                .get("account_number")
                .and_then(Value::as_str)
                .ok_or("online_banking init: account_number must be a string")?;
            let mut m = Map::new();
            m.insert("account_type".into(), json!(t));
            m.insert("account_number".into(), json!(n));
            m.insert("balance".into(), json!(float_of(a.get("balance"))));
            accounts.retain(|(k, _): &(String, _)| k != n);
            accounts.push((n.to_string(), m));
        }
        let mut payees = Vec::new();
        for p in list("payees")? {
            let name = p
                .get("name")
                .and_then(Value::as_str)
                .ok_or("online_banking init: payee name must be a string")?;
            let n = p
                .get("account_number")
                .and_then(Value::as_str)
                .ok_or("online_banking init: payee account_number must be a string")?;
            let mut m = Map::new();
            m.insert("name".into(), json!(name));
            m.insert("account_number".into(), json!(n));
            payees.retain(|(k, _): &(String, _)| k != n);
            payees.push((n.to_string(), m));
        }
        Ok(Banking {
            accounts,
            payees,
            transactions: Vec::new(),
            scheduled_bills: Vec::new(),
            now: clock.now,
        })
    }

    fn account(&mut self, n: &str) -> Option<&mut Map<String, Value>> {
        self.accounts
            .iter_mut()
            .find(|(k, _)| k == n)
            .map(|(_, m)| m)
    }

    fn ok(fields: Vec<(&str, Value)>) -> Value {
        let mut m = Map::new();
        m.insert("status".into(), json!("ok"));
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        Value::Object(m)
    }
}

// --- the banking tools, one function each ---

/// The `online_banking` tool functions, registered as the v1 domains register theirs.
fn banking_functions() -> &'static Tools<Banking> {
    static T: LazyLock<Tools<Banking>> = LazyLock::new(|| super::register(BANKING_TOOLS));
    &T
}

/// A keyed list's entries as a JSON array, in order.
fn listed(entries: &[(String, Map<String, Value>)]) -> Value {
    Value::Array(
        entries
            .iter()
            .map(|(_, m)| Value::Object(m.clone()))
            .collect(),
    )
}

fn get_accounts(bank: &mut Banking, _a: &Args) -> ToolResult {
    Ok(Banking::ok(vec![("accounts", listed(&bank.accounts))]))
}

fn get_balance(bank: &mut Banking, a: &Args) -> ToolResult {
    let s = |k: &str| a.str_or_empty(k).to_string();
    let n = s("account_number");
    let bal = bank
        .account(&n)
        .map(|m| m.f64_or_zero("balance"))
        .ok_or_else(|| ToolError::new(format!("Account not found: {n}")))?;
    Ok(Banking::ok(vec![
        ("account_number", json!(n)),
        ("balance", json!(bal)),
    ]))
}

fn transfer(bank: &mut Banking, a: &Args) -> ToolResult {
    let s = |k: &str| a.str_or_empty(k).to_string();
    let f = |k: &str| a.f64_or_zero(k);
    let (from, to, amount) = (s("from_account"), s("to_account"), f("amount"));
    if bank.account(&from).is_none() || bank.account(&to).is_none() {
        return Err(ToolError::new("Invalid account number(s)"));
    }
    let bal = bank
        .account(&from)
        .map_or(0.0, |m| m.f64_or_zero("balance"));
    if bal < amount {
        return Err(ToolError::new("Insufficient funds"));
    }
    if let Some(m) = bank.account(&from) {
        m.insert("balance".into(), json!(bal - amount));
    }
    if let Some(m) = bank.account(&to) {
        let b = m.f64_or_zero("balance");
        m.insert("balance".into(), json!(b + amount));
    }
    bank.transactions.push(json!({
        "transaction_type": "transfer",
        "from_account": from,
        "to_account": to,
        "amount": amount,
        "timestamp": bank.now.format("%Y-%m-%dT%H:%M:%S+0000").to_string(),
    }));
    Ok(Banking::ok(vec![
        ("from_account", json!(from)),
        ("to_account", json!(to)),
        ("amount", json!(amount)),
    ]))
}

fn deposit(bank: &mut Banking, a: &Args) -> ToolResult {
    let s = |k: &str| a.str_or_empty(k).to_string();
    let f = |k: &str| a.f64_or_zero(k);
    let (n, amount) = (s("account_number"), f("amount"));
    let m = bank
        .account(&n)
        .ok_or_else(|| ToolError::new(format!("Account not found: {n}")))?;
    let b = m.f64_or_zero("balance") + amount;
    m.insert("balance".into(), json!(b));
    Ok(Banking::ok(vec![
        ("account_number", json!(n)),
        ("balance", json!(b)),
    ]))
}

fn get_payees(bank: &mut Banking, _a: &Args) -> ToolResult {
    Ok(Banking::ok(vec![("payees", listed(&bank.payees))]))
}

fn pay_bill(bank: &mut Banking, a: &Args) -> ToolResult {
    let s = |k: &str| a.str_or_empty(k).to_string();
    let f = |k: &str| a.f64_or_zero(k);
    let (user, payee, amount) = (s("user_account"), s("payee_account"), f("amount"));
    let date = match a.opt_str("date") {
        Some(d) => d.to_string(),
        None => bank.now.format("%Y-%m-%d").to_string(),
    };
    if bank.account(&user).is_none() {
        return Err(ToolError::new(format!("Account not found: {user}")));
    }
    let Some((_, p)) = bank.payees.iter().find(|(k, _)| *k == payee) else {
        let keys: Vec<String> = bank
            .payees
            .iter()
            .map(|(k, _)| tb_python::repr::value_repr(&json!(k)))
            .collect();
        return Err(ToolError::new(format!(
            "Payee not found: {payee} in dict_keys([{}])",
            keys.join(", ")
        )));
    };
    let bill = json!({
        "user_account": user,
        "payee_account": p["account_number"],
        "amount": amount,
        "date": date,
    });
    bank.scheduled_bills.push(bill.clone());
    if let Some(m) = bank.account(&user) {
        let b = m.f64_or_zero("balance");
        m.insert("balance".into(), json!(b - amount));
    }
    Ok(Banking::ok(vec![("scheduled_bill", bill)]))
}

impl ServerSession for Banking {
    fn server(&self) -> &str {
        BANKING
    }

    fn call_tool(&mut self, name: &str, args: &Value) -> ToolReply {
        let Some((params, run)) = super::declared(BANKING_TOOLS, banking_functions(), name) else {
            return ToolReply::error(format!("Unknown tool: {name}"));
        };
        let a = match validate(params, args) {
            Ok(a) => a,
            Err(errors) => {
                return ToolReply::error(pydantic::text(&format!("call[{name}]"), &errors));
            }
        };
        ToolReply::ok(match run.call(self, &a) {
            Ok(v) => serde_json::to_string(&v).unwrap_or_default(),
            Err(e) => e.bang_text(),
        })
    }

    fn effects(&self) -> Option<Value> {
        let obj = |v: &[(String, Map<String, Value>)]| {
            Value::Object(
                v.iter()
                    .map(|(k, m)| (k.clone(), Value::Object(m.clone())))
                    .collect(),
            )
        };
        Some(json!({
            "transactions": self.transactions,
            "scheduled_bills": self.scheduled_bills,
            "accounts": obj(&self.accounts),
            "payees": obj(&self.payees),
        }))
    }
}

impl OwnServer for Banking {
    fn tool_list(&self) -> Vec<Value> {
        banking_tool_list()
    }

    fn has_tool(&self, name: &str) -> bool {
        BANKING_TOOLS.iter().any(|(n, ..)| *n == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bank() -> Banking {
        let cfg = json!({
            "accounts": [
                {"account_type": "checking", "account_number": "1", "balance": 100},
                {"account_type": "savings", "account_number": "2", "balance": 5.5},
            ],
            "payees": [{"name": "Power", "account_number": "P1"}],
        });
        Banking::init(&cfg, Clock::parse("2026-11-30T12:00:00Z").unwrap()).unwrap()
    }

    #[test]
    fn banking_texts_balances_and_errors() {
        let mut b = bank();
        let r = b.call_tool(
            "transfer",
            &json!({"from_account": "1", "to_account": "2", "amount": 40}),
        );
        assert_eq!(
            r.text,
            r#"{"status":"ok","from_account":"1","to_account":"2","amount":40.0}"#
        );
        assert_eq!(
            b.call_tool(
                "transfer",
                &json!({"from_account": "1", "to_account": "2", "amount": 61})
            )
            .text,
            "Error!\nInsufficient funds"
        );
        let e = b.call_tool("get_balance", &json!({"account_number": 7}));
        assert!(e.is_error);
        assert_eq!(
            e.text,
            "1 validation error for call[get_balance]\naccount_number\n  Input should be a valid string [type=string_type, input_value=7, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.14/v/string_type"
        );
        let p = b.call_tool(
            "pay_bill",
            &json!({"user_account": "1", "payee_account": "P9", "amount": 1}),
        );
        assert_eq!(p.text, "Error!\nPayee not found: P9 in dict_keys(['P1'])");
        let p = b.call_tool(
            "pay_bill",
            &json!({"user_account": "1", "payee_account": "P1", "amount": 1, "date": "2024-06-01T23:30:00-02:00"}),
        );
        assert!(p.text.contains(r#""date":"2024-06-02""#), "{}", p.text);
        let fx = b.effects().unwrap();
        assert_eq!(fx["accounts"]["1"]["balance"], json!(59.0));
        assert_eq!(fx["accounts"]["2"]["balance"], json!(45.5));
        assert_eq!(
            fx["transactions"][0]["timestamp"],
            json!("2026-11-30T12:00:00+0000")
        );
        assert_eq!(fx["scheduled_bills"].as_array().unwrap().len(), 1);
    }
}
