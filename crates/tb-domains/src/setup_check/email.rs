//! `email_system`: one mailbox per user (messages, contacts, profile), every operation
//! recorded as an effect.

use super::title;
use crate::own_servers::OwnServer;
use crate::pydantic::{self, ErrorLine};
use chrono::{DateTime, Utc};
use serde_json::{Map, Value, json};
use std::sync::LazyLock;
use tb_sandbox::{
    Args, Clock, Fields, ServerSession, ToolError, ToolReply, ToolResult, Tools, pyjson,
};

/// The server name.
pub const EMAIL: &str = "email_system";

/// The function the MCP SDK names a tool's argument model after: the tool's own name, but for
/// `list_emails`.
fn model_name(tool: &str) -> &str {
    if tool == "list_emails" {
        "list_messages"
    } else {
        tool
    }
}

/// `email_system`'s tools: name, description, parameters (name, required), function.
const EMAIL_TOOLS: &[super::Decl<Email, bool>] = &[
    (
        "list_emails",
        "The emails of a folder (default Inbox).",
        &[("folder", false)],
        list_emails,
    ),
    (
        "send_email",
        "Sends an email; `to` and `cc` may list several addresses separated by `,` or `;`.",
        &[
            ("to", true),
            ("cc", true),
            ("subject", true),
            ("body", true),
            ("attachments", false),
        ],
        send_email,
    ),
    (
        "delete_email",
        "Deletes an email from a folder (default Inbox).",
        &[("email_id", true), ("folder", false)],
        delete_email,
    ),
    (
        "add_contact",
        "Adds a contact to the address book; gives its id.",
        &[
            ("name", true),
            ("email", true),
            ("phone", false),
            ("manager", false),
            ("position", false),
        ],
        add_contact,
    ),
    (
        "list_contacts",
        "Every contact of the address book.",
        &[],
        list_contacts,
    ),
    (
        "get_contact",
        "One contact by id.",
        &[("contact_id", true)],
        get_contact,
    ),
    (
        "get_user_profile",
        "The user's own profile.",
        &[],
        get_user_profile,
    ),
    (
        "get_user_manager",
        "The contact of the user's manager.",
        &[],
        get_user_manager,
    ),
    (
        "get_manager_of_manager",
        "The contact of the user's manager's manager.",
        &[],
        get_manager_of_manager,
    ),
];

/// Domain names `email-validator` refuses (special use).
const SPECIAL_USE: &[&str] = &["arpa", "invalid", "local", "localhost", "onion", "test"];

/// An address as pydantic's `EmailStr` accepts it (normalised: the domain in lower case),
/// or `None`.
fn email_ok(s: &str) -> Option<String> {
    let (local, domain) = s.rsplit_once('@')?;
    let local_ok = !local.is_empty()
        && local.len() <= 64
        && !local.starts_with('.')
        && !local.ends_with('.')
        && !local.contains("..")
        && local
            .chars()
            .all(|c| c.is_alphanumeric() || "!#$%&'*+-/=?^_`{|}~.".contains(c));
    let domain_l = domain.to_lowercase();
    let labels: Vec<&str> = domain_l.split('.').collect();
    let domain_ok = labels.len() >= 2
        && labels.iter().all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && !l.starts_with('-')
                && !l.ends_with('-')
                && l.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
        && labels
            .last()
            .is_some_and(|t| !t.chars().all(|c| c.is_ascii_digit()))
        && !SPECIAL_USE
            .iter()
            .any(|s| domain_l == *s || domain_l.ends_with(&format!(".{s}")));
    (local_ok && domain_ok).then(|| format!("{local}@{domain_l}"))
}

/// `parse_email_list`: a list as is, a string split on `,` and `;`; every item an address.
fn email_list(v: &Value) -> Option<Vec<Value>> {
    let parts: Vec<String> = match v {
        Value::Array(a) => a
            .iter()
            .map(|x| x.as_str().map(str::to_string))
            .collect::<Option<_>>()?,
        Value::String(s) => s
            .split([',', ';'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(str::to_string)
            .collect(),
        _ => return None,
    };
    parts
        .iter()
        .map(|p| email_ok(p).map(Value::String))
        .collect()
}

/// One user's mailbox.
#[derive(Debug, Clone)]
struct Bucket {
    messages: Vec<Map<String, Value>>,
    contacts: Vec<Map<String, Value>>,
    profile: Map<String, Value>,
}

fn opt_str(m: &Value, k: &str) -> Result<Value, ()> {
    match m.get(k) {
        None | Some(Value::Null) => Ok(Value::Null),
        Some(Value::String(s)) => Ok(json!(s)),
        Some(_) => Err(()),
    }
}

fn req_str(m: &Value, k: &str) -> Result<Value, ()> {
    match m.get(k) {
        Some(Value::String(s)) => Ok(json!(s)),
        _ => Err(()),
    }
}

fn dt_dump(v: &Value) -> Result<Value, ()> {
    tb_sandbox::coerce::validate_datetime(v)
        .map(|p| json!(p.dump()))
        .map_err(|_| ())
}

impl Bucket {
    fn from_config(v: &Value) -> Result<Bucket, ()> {
        let mut messages = Vec::new();
        for m in v
            .get("messages")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let mut o = Map::new();
            o.insert(
                "to".into(),
                Value::Array(email_list(m.get("to").ok_or(())?).ok_or(())?),
            );
            o.insert(
                "cc".into(),
                Value::Array(match m.get("cc") {
                    Some(c) => email_list(c).ok_or(())?,
                    None => Vec::new(),
                }),
            );
            o.insert("subject".into(), req_str(m, "subject")?);
            o.insert("body".into(), req_str(m, "body")?);
            o.insert(
                "attachments".into(),
                m.get("attachments").cloned().unwrap_or_else(|| json!({})),
            );
            o.insert("id".into(), req_str(m, "id")?);
            o.insert(
                "sender".into(),
                json!(email_ok(m.get("sender").and_then(Value::as_str).ok_or(())?).ok_or(())?),
            );
            o.insert("sent_at".into(), dt_dump(m.get("sent_at").ok_or(())?)?);
            o.insert(
                "folder".into(),
                m.get("folder").cloned().unwrap_or_else(|| json!("Inbox")),
            );
            o.insert(
                "read".into(),
                m.get("read").cloned().unwrap_or(json!(false)),
            );
            messages.push(o);
        }
        let mut contacts = Vec::new();
        for c in v
            .get("contacts")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let mut o = Map::new();
            o.insert("id".into(), req_str(c, "id")?);
            o.insert("name".into(), req_str(c, "name")?);
            o.insert(
                "email".into(),
                json!(email_ok(c.get("email").and_then(Value::as_str).ok_or(())?).ok_or(())?),
            );
            for k in ["phone", "manager", "position"] {
                o.insert(k.into(), opt_str(c, k)?);
            }
            contacts.push(o);
        }
        let p = v.get("profile").cloned().unwrap_or_else(|| json!({}));
        let mut profile = Map::new();
        for k in ["manager", "phone"] {
            profile.insert(k.into(), opt_str(&p, k)?);
        }
        profile.insert(
            "email".into(),
            match p.get("email").and_then(Value::as_str) {
                Some(e) => json!(email_ok(e).ok_or(())?),
                None => Value::Null,
            },
        );
        profile.insert("position".into(), opt_str(&p, "position")?);
        Ok(Bucket {
            messages,
            contacts,
            profile,
        })
    }
}

/// One attempt's `email_system` server (the first configured user is the current one).
#[derive(Debug, Clone)]
pub struct Email {
    users: Vec<(String, Bucket)>,
    effects: Vec<Value>,
    ids: crate::airline::ids::PyRandom,
    now: DateTime<Utc>,
}

impl Email {
    /// `__reserved__init`: the `users` mapping; ids seeded by `seed` (the task id).
    pub fn init(config: &Value, seed: &str, clock: Clock) -> Result<Email, String> {
        let users = config
            .get("users")
            .and_then(Value::as_object)
            .filter(|u| !u.is_empty())
            .ok_or("email_system init: the config must contain a non-empty `users` mapping")?;
        let mut out = Vec::new();
        for (name, v) in users {
            let b = Bucket::from_config(v)
                .map_err(|()| format!("email_system init: user {name}: invalid mailbox data"))?;
            out.push((name.clone(), b));
        }
        Ok(Email {
            users: out,
            effects: Vec::new(),
            ids: crate::airline::ids::PyRandom::from_sha256_of(seed),
            now: clock.now,
        })
    }

    fn user(&mut self) -> (String, &mut Bucket) {
        let (name, b) = &mut self.users[0];
        (name.clone(), b)
    }

    fn record(&mut self, op: &str, user: &str, extra: Vec<(&str, Value)>) {
        let mut m = Map::new();
        m.insert("op".into(), json!(op));
        m.insert("user".into(), json!(user));
        for (k, v) in extra {
            m.insert(k.into(), v);
        }
        m.insert(
            "ts".into(),
            json!(
                self.now
                    .format("%Y-%m-%dT%H:%M:%S%.6f+00:00")
                    .to_string()
                    .replace(".000000+", "+")
            ),
        );
        self.effects.push(Value::Object(m));
    }

    fn uuid(&mut self) -> String {
        crate::airline::ids::uuid_text(self.ids.uuid4())
    }

    fn ok(fields: Vec<(&str, Value)>) -> Value {
        let mut m = Map::new();
        m.insert("status".into(), json!("ok"));
        for (k, v) in fields {
            m.insert(k.into(), v);
        }
        Value::Object(m)
    }

    fn contact(&mut self, id: &str) -> Result<Value, String> {
        let (user, b) = self.user();
        let c = b.contacts.iter().find(|c| c["id"] == id).cloned();
        match c {
            Some(c) => {
                self.record("get_contact", &user, vec![("contact_id", json!(id))]);
                Ok(Value::Object(c))
            }
            None => Err(format!("Contact with id {id} not found")),
        }
    }

    fn manager(&mut self) -> Value {
        let (user, b) = self.user();
        let m = b
            .profile
            .get("manager")
            .and_then(Value::as_str)
            .map(str::to_string);
        self.record("get_user_profile", &user, vec![]);
        match m.filter(|m| !m.is_empty()) {
            Some(m) => self.contact(&m).unwrap_or(Value::Null),
            None => Value::Null,
        }
    }
}

// --- the email tools, one function each ---

/// The `email_system` tool functions, registered as the v1 domains register theirs.
fn email_functions() -> &'static Tools<Email> {
    static T: LazyLock<Tools<Email>> = LazyLock::new(|| super::register(EMAIL_TOOLS));
    &T
}

fn list_emails(e: &mut Email, a: &Args) -> ToolResult {
    let s = |k: &str| a.opt_str(k).map(str::to_string);
    let folder = s("folder").unwrap_or_else(|| "Inbox".into());
    let (user, b) = e.user();
    let msgs: Vec<Value> = b
        .messages
        .iter()
        .filter(|m| m["folder"].as_str().unwrap_or("").to_lowercase() == folder.to_lowercase())
        .map(|m| Value::Object(m.clone()))
        .collect();
    let n = msgs.len();
    e.record(
        "list_messages",
        &user,
        vec![("folder", json!(folder)), ("count", json!(n))],
    );
    Ok(Email::ok(vec![("emails", Value::Array(msgs))]))
}

fn send_email(e: &mut Email, a: &Args) -> ToolResult {
    let s = |k: &str| a.opt_str(k).map(str::to_string);
    let to = a
        .get("to")
        .and_then(email_list)
        .ok_or_else(ToolError::raised)?;
    let cc = a
        .get("cc")
        .and_then(email_list)
        .ok_or_else(ToolError::raised)?;
    let subject = s("subject").unwrap_or_default();
    if subject.chars().count() > 1024 {
        return Err(ToolError::raised());
    }
    let body = s("body").unwrap_or_default();
    let attachments = match a.get("attachments") {
        None => json!({}),
        Some(Value::Object(m)) if m.values().all(Value::is_string) => Value::Object(m.clone()),
        Some(_) => return Err(ToolError::raised()),
    };
    let id = e.uuid();
    let now = e.now.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    let (user, b) = e.user();
    let mut m = Map::new();
    m.insert("to".into(), json!(to));
    m.insert("cc".into(), json!(cc));
    m.insert("subject".into(), json!(subject));
    m.insert("body".into(), json!(body));
    m.insert("attachments".into(), attachments.clone());
    m.insert("id".into(), json!(id));
    m.insert("sender".into(), json!(user));
    m.insert("sent_at".into(), json!(now));
    m.insert("folder".into(), json!("Inbox"));
    m.insert("read".into(), json!(false));
    b.messages.push(m);
    e.record(
        "send_message",
        &user,
        vec![
            ("msg_id", json!(id)),
            ("_from", json!(user)),
            ("to", json!(to)),
            ("cc", json!(cc)),
            ("subject", json!(subject)),
            ("body", json!(body)),
        ],
    );
    Ok(Email::ok(vec![(
        "email",
        json!({"to": to, "cc": cc, "subject": subject, "body": body, "attachments": attachments}),
    )]))
}

fn delete_email(e: &mut Email, a: &Args) -> ToolResult {
    let s = |k: &str| a.opt_str(k).map(str::to_string);
    let id = s("email_id").unwrap_or_default();
    let folder = s("folder").unwrap_or_else(|| "Inbox".into());
    let (user, b) = e.user();
    let before = b.messages.len();
    b.messages.retain(|m| {
        !(m["id"] == id.as_str()
            && (folder.is_empty()
                || m["folder"].as_str().unwrap_or("").to_lowercase() == folder.to_lowercase()))
    });
    if b.messages.len() < before {
        let f = if folder.is_empty() {
            "*".to_string()
        } else {
            folder.clone()
        };
        e.record(
            "delete_message",
            &user,
            vec![("msg_id", json!(id)), ("folder", json!(f))],
        );
        Ok(Email::ok(vec![
            ("email_id", json!(id)),
            ("folder", json!(folder)),
        ]))
    } else {
        Err(ToolError::new("message not found"))
    }
}

fn add_contact(e: &mut Email, a: &Args) -> ToolResult {
    let s = |k: &str| a.opt_str(k).map(str::to_string);
    let cid = e.uuid();
    let name = s("name").unwrap_or_default();
    let email = email_ok(&s("email").unwrap_or_default()).ok_or_else(ToolError::raised)?;
    let opt = |k: &str| a.value(k);
    let (phone, manager, position) = (opt("phone"), opt("manager"), opt("position"));
    let (user, b) = e.user();
    let mut c = Map::new();
    c.insert("id".into(), json!(cid));
    c.insert("name".into(), json!(name));
    c.insert("email".into(), json!(email));
    c.insert("phone".into(), phone.clone());
    c.insert("manager".into(), manager.clone());
    c.insert("position".into(), position.clone());
    b.contacts.push(c);
    e.record(
        "add_contact",
        &user,
        vec![
            ("contact_id", json!(cid)),
            ("name", json!(name)),
            ("email", json!(email)),
            ("phone", phone),
            ("manager", manager),
            ("position", position),
        ],
    );
    Ok(Email::ok(vec![("contact_id", json!(cid))]))
}

fn list_contacts(e: &mut Email, _a: &Args) -> ToolResult {
    let (user, b) = e.user();
    let cs: Vec<Value> = b
        .contacts
        .iter()
        .map(|c| Value::Object(c.clone()))
        .collect();
    let n = cs.len();
    e.record("list_contacts", &user, vec![("count", json!(n))]);
    Ok(Email::ok(vec![("contacts", Value::Array(cs))]))
}

fn get_contact(e: &mut Email, a: &Args) -> ToolResult {
    let s = |k: &str| a.opt_str(k).map(str::to_string);
    let c = e
        .contact(&s("contact_id").unwrap_or_default())
        .map_err(ToolError::new)?;
    Ok(Email::ok(vec![("contact", c)]))
}

fn get_user_profile(e: &mut Email, _a: &Args) -> ToolResult {
    let (user, b) = e.user();
    let p = Value::Object(b.profile.clone());
    e.record("get_user_profile", &user, vec![]);
    Ok(Email::ok(vec![("profile", p)]))
}

fn get_user_manager(e: &mut Email, _a: &Args) -> ToolResult {
    let m = e.manager();
    Ok(Email::ok(vec![("manager", m)]))
}

fn get_manager_of_manager(e: &mut Email, _a: &Args) -> ToolResult {
    let m = e.manager();
    let mm = match m.get("manager").and_then(Value::as_str) {
        Some(id) if !id.is_empty() => e.contact(id).unwrap_or(Value::Null),
        _ => Value::Null,
    };
    Ok(Email::ok(vec![("manager_of_manager", mm)]))
}

/// The MCP SDK's pre-parsing of an argument whose type is not `str` (here `attachments`, a
/// `dict`): a string that is JSON for a list, an object or null stands for that value.
fn pre_parse_json(v: &Value) -> Value {
    if let Value::String(s) = v
        && let Ok(parsed @ (Value::Array(_) | Value::Object(_) | Value::Null)) =
            serde_json::from_str::<Value>(s)
    {
        return parsed;
    }
    v.clone()
}

impl ServerSession for Email {
    fn server(&self) -> &str {
        EMAIL
    }

    fn call_tool(&mut self, name: &str, args: &Value) -> ToolReply {
        let Some((params, run)) = super::declared(EMAIL_TOOLS, email_functions(), name) else {
            return ToolReply::error(format!("Unknown tool: {name}"));
        };
        let empty = Map::new();
        let m = args.as_object().unwrap_or(&empty);
        let mut errors = Vec::new();
        let mut a = Map::new();
        for (p, required) in params {
            match m.get(*p) {
                None if *required => errors.push(ErrorLine::new(
                    *p,
                    "Field required",
                    "missing",
                    args.clone(),
                )),
                None => {}
                Some(v) if *p == "attachments" => match pre_parse_json(v) {
                    v @ Value::Object(_) => {
                        a.insert((*p).into(), v);
                    }
                    v => errors.push(ErrorLine::new(
                        *p,
                        "Input should be a valid dictionary",
                        "dict_type",
                        v,
                    )),
                },
                // an optional `str` defaults to None, but a None given is not a string
                Some(Value::String(s)) => {
                    a.insert((*p).into(), json!(s));
                }
                Some(v) => errors.push(ErrorLine::new(
                    *p,
                    "Input should be a valid string",
                    "string_type",
                    v.clone(),
                )),
            }
        }
        if !errors.is_empty() {
            let text = pydantic::text(&format!("{}Arguments", model_name(name)), &errors);
            return ToolReply::error(format!("Error executing tool {name}: {text}"));
        }
        ToolReply::ok(match run.call(self, &a) {
            Ok(v) => pyjson::dumps(&v, pyjson::Layout::Default),
            Err(e) => e.bang_text(),
        })
    }

    fn effects(&self) -> Option<Value> {
        Some(json!({"effects": self.effects}))
    }
}

impl OwnServer for Email {
    fn tool_list(&self) -> Vec<Value> {
        EMAIL_TOOLS
            .iter()
            .map(|(name, desc, params, _)| {
                let props: Map<String, Value> = params
                    .iter()
                    .map(|(p, _)| {
                        let t = if *p == "attachments" { "object" } else { "string" };
                        ((*p).to_string(), json!({"type": t, "title": title(p)}))
                    })
                    .collect();
                let required: Vec<&str> = params.iter().filter(|(_, r)| *r).map(|(p, _)| *p).collect();
                json!({"name": name, "description": desc,
                       "inputSchema": {"type": "object", "properties": props, "required": required}})
            })
            .collect()
    }

    fn has_tool(&self, name: &str) -> bool {
        EMAIL_TOOLS.iter().any(|(n, ..)| *n == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn email_addresses_as_email_str() {
        assert_eq!(
            email_ok("A.b@Example.COM").as_deref(),
            Some("A.b@example.com")
        );
        assert_eq!(email_ok("not-an-email"), None);
        assert_eq!(email_ok("x@host"), None);
        assert_eq!(email_ok("x@mail.test"), None);
        assert_eq!(email_ok(".x@example.com"), None);
        assert_eq!(
            email_list(&json!("a@example.com; b@example.com,")),
            Some(vec![json!("a@example.com"), json!("b@example.com")])
        );
        assert_eq!(email_list(&json!("a@example.com, nope")), None);
    }

    #[test]
    fn email_records_every_operation_and_draws_seeded_ids() {
        let cfg = json!({"users": {"me@example.com": {"contacts": [
            {"id": "c1", "name": "Bo", "email": "bo@example.com"}]}}});
        let clock = Clock::parse("2026-11-30T12:00:00Z").unwrap();
        let mut e = Email::init(&cfg, "t.py:test_x", clock).unwrap();
        let mut again = Email::init(&cfg, "t.py:test_x", clock).unwrap();
        let send = json!({"to": "x@example.com", "cc": "", "subject": "s", "body": "b"});
        let a = e.call_tool("send_email", &send);
        assert_eq!(a, again.call_tool("send_email", &send));
        assert!(
            a.text
                .starts_with(r#"{"status": "ok", "email": {"to": ["x@example.com"], "cc": []"#)
        );
        assert_eq!(
            e.call_tool("get_contact", &json!({"contact_id": "c9"}))
                .text,
            "Error!\nContact with id c9 not found"
        );
        assert_eq!(
            e.call_tool(
                "send_email",
                &json!({"to": "bad", "cc": "", "subject": "s", "body": "b"})
            )
            .text,
            "Error!"
        );
        let missing = e.call_tool("get_contact", &json!({}));
        assert!(missing.is_error);
        assert!(missing.text.starts_with("Error executing tool get_contact: 1 validation error for get_contactArguments\ncontact_id\n  Field required"), "{}", missing.text);
        let fx = e.effects().unwrap();
        let ops: Vec<&str> = fx["effects"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["op"].as_str().unwrap())
            .collect();
        assert_eq!(ops, ["send_message"]);
        assert_eq!(fx["effects"][0]["ts"], json!("2026-11-30T12:00:00+00:00"));
        let _ = e.call_tool("list_contacts", &json!({}));
        assert_eq!(e.effects().unwrap()["effects"][1]["count"], json!(1));
    }
}
