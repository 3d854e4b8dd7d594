//! The slash commands: the table `/help` shows, the parser of a command line, and what each
//! command does to the app (notes, jobs); the tool signatures and argument skeletons they show.

use super::{App, NoteKind, Play};
use crate::effects::LineKind;
use crate::jobs::Job;
use serde_json::{Map, Value, json};
use std::path::PathBuf;

/// The slash commands, for `/help` and completion.
pub const COMMANDS: &[(&str, &str)] = &[
    ("/help", "this help"),
    ("/quit", "leave (also Ctrl-C)"),
    (
        "/effects",
        "the effects in full: changes, and what still differs from the golden state",
    ),
    (
        "/test [FILE.py:TEST]",
        "run the task's checks (or another task's) on the current state",
    ),
    (
        "/conversation",
        "the raw provider messages of the agent model",
    ),
    ("/tool", "list the tools"),
    (
        "/tool NAME",
        "a tool's parameters (Tab after the name writes an argument skeleton)",
    ),
    ("/tool NAME {json}", "call a tool yourself (as the agent)"),
    ("/user", "let the simulated user write the next user turn"),
    (
        "/user context [TEXT]",
        "show, or set, what the simulated user knows",
    ),
    (
        "/save FILE",
        "write the session as a trial record (tb show, tb run-test, tb agg read it)",
    ),
];

/// The command words (`/tool`, `/user`, ...) that start with `typed`, each once, in table
/// order: the completions of a command being typed.
pub(crate) fn command_words(typed: &str) -> Vec<&'static str> {
    COMMANDS
        .iter()
        .map(|(c, _)| c.split(' ').next().unwrap_or(c))
        .filter(|c| c.starts_with(typed))
        .fold(Vec::new(), |mut v, c| {
            if !v.contains(&c) {
                v.push(c);
            }
            v
        })
}

/// A slash command line (without its `/`), parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Command<'a> {
    Help,
    Quit,
    Effects,
    /// `/test [FILE.py:TEST]`: the task, or empty for the session's own.
    Test(&'a str),
    /// `/save FILE`: the file, or empty when none was given.
    Save(&'a str),
    Conversation,
    /// `/tool [NAME [{json}]]`: what follows `/tool`.
    Tool(&'a str),
    /// `/user context [TEXT]`: the text, or empty to show the context.
    UserContext(&'a str),
    /// `/user`: what follows it (nothing, unless the line is wrong).
    User(&'a str),
    /// Any other name.
    Unknown(&'a str),
}

impl<'a> Command<'a> {
    /// `line` (what follows the `/`) as a command: its name, then the rest, trimmed.
    pub(super) fn parse(line: &'a str) -> Command<'a> {
        let (name, rest) = match line.split_once(char::is_whitespace) {
            Some((n, r)) => (n, r.trim()),
            None => (line, ""),
        };
        match name {
            "help" => Command::Help,
            "quit" | "exit" => Command::Quit,
            "effects" => Command::Effects,
            "test" => Command::Test(rest),
            "save" => Command::Save(rest),
            "conversation" => Command::Conversation,
            "tool" => Command::Tool(rest),
            "user" => match rest.strip_prefix("context") {
                Some(ctx) => Command::UserContext(ctx.trim()),
                None => Command::User(rest),
            },
            other => Command::Unknown(other),
        }
    }
}

impl App {
    pub(super) fn command(&mut self, cmd: &str) -> Vec<Job> {
        match Command::parse(cmd) {
            Command::Help => self.help(),
            Command::Quit => self.quit = true,
            Command::Effects => {
                let lines = self.effects.lines();
                self.note(NoteKind::Info, "Effects:".into());
                for (k, l) in lines {
                    self.note(
                        match k {
                            LineKind::Good => NoteKind::Pass,
                            LineKind::Bad => NoteKind::Fail,
                            _ => NoteKind::Detail,
                        },
                        l,
                    );
                }
            }
            Command::Test(task) => return self.test(task, None),
            Command::Save(rest) => {
                if rest.is_empty() {
                    self.note(NoteKind::Error, "/save FILE: give the file to write".into());
                    return Vec::new();
                }
                return self.test("", Some(PathBuf::from(rest)));
            }
            Command::Conversation => self.conversation(),
            Command::Tool(rest) => return self.tool(rest),
            Command::UserContext(ctx) => {
                if ctx.is_empty() {
                    let c = if self.user_context.is_empty() {
                        "(none)".to_string()
                    } else {
                        self.user_context.clone()
                    };
                    self.note(NoteKind::Info, "The simulated user's context:".into());
                    for l in c.lines() {
                        self.note(NoteKind::Detail, format!("  {l}"));
                    }
                } else {
                    self.user_context = ctx.to_string();
                    self.note(
                        NoteKind::Info,
                        "The simulated user's context is set.".into(),
                    );
                }
            }
            Command::User(rest) => {
                if !rest.is_empty() {
                    self.note(
                        NoteKind::Error,
                        "/user takes no text (or: /user context TEXT)".into(),
                    );
                    return Vec::new();
                }
                if self.busy.is_some() {
                    self.note(
                        NoteKind::Error,
                        "busy: wait until the current turn ends".into(),
                    );
                    return Vec::new();
                }
                if self.play == Play::Watch {
                    self.note(
                        NoteKind::Info,
                        "In watch mode the simulated user plays by itself.".into(),
                    );
                    return Vec::new();
                }
                if self.finished.is_some() {
                    self.note(NoteKind::Info, "The episode has ended.".into());
                    return Vec::new();
                }
                return self.simulated_user(true);
            }
            Command::Unknown(other) => self.note(
                NoteKind::Error,
                format!("unknown command /{other}: /help lists them"),
            ),
        }
        Vec::new()
    }

    fn help(&mut self) {
        self.note(NoteKind::Info, "Commands:".into());
        for (c, d) in COMMANDS {
            self.note(NoteKind::Detail, format!("  {c:<22} {d}"));
        }
        self.note(NoteKind::Info, "Keys:".into());
        for (k, d) in [
            (
                "Enter",
                "sends a line that starts with /; otherwise a new line",
            ),
            ("Esc+Enter, Alt+Enter", "sends the text"),
            ("Tab", "completes commands, tool names and arguments"),
            ("Up, Down", "history (on the first/last line of the box)"),
            ("PgUp, PgDn", "scroll the conversation; F7/F8 the effects"),
            ("Ctrl-O", "fold or unfold tool results"),
            (
                "Ctrl-P, Ctrl-N",
                "watch: pause or resume; one step while paused",
            ),
            ("Ctrl-C", "quit"),
        ] {
            self.note(NoteKind::Detail, format!("  {k:<22} {d}"));
        }
    }

    fn tool(&mut self, rest: &str) -> Vec<Job> {
        if rest.is_empty() {
            self.note(NoteKind::Info, format!("{} tools:", self.tools.specs.len()));
            let lines: Vec<String> = self
                .tools
                .specs
                .iter()
                .map(|t| format!("  {}", signature(&t.name, &t.parameters)))
                .collect();
            for l in lines {
                self.note(NoteKind::Detail, l);
            }
            return Vec::new();
        }
        let (name, args) = match rest.split_once(char::is_whitespace) {
            Some((n, a)) => (n, a.trim()),
            None => (rest, ""),
        };
        let Some(spec) = self.tools.specs.iter().find(|t| t.name == name).cloned() else {
            let near: Vec<&str> = self
                .tools
                .specs
                .iter()
                .map(|t| t.name.as_str())
                .filter(|n| n.contains(name) || name.contains(n))
                .take(5)
                .collect();
            self.note(
                NoteKind::Error,
                format!(
                    "no tool `{name}`{}",
                    if near.is_empty() {
                        "; /tool lists them".to_string()
                    } else {
                        format!("; did you mean {}?", near.join(", "))
                    }
                ),
            );
            return Vec::new();
        };
        if args.is_empty() {
            self.note(NoteKind::Info, signature(&spec.name, &spec.parameters));
            for l in spec.description.trim().lines() {
                self.note(NoteKind::Detail, format!("  {l}"));
            }
            for (p, v, req) in params(&spec.parameters) {
                let desc = v
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .split_whitespace()
                    .collect::<Vec<_>>()
                    .join(" ");
                self.note(
                    NoteKind::Detail,
                    format!(
                        "  - {p}: {}{}{}",
                        type_of(&v),
                        if req { " (required)" } else { "" },
                        if desc.is_empty() {
                            String::new()
                        } else {
                            format!(" - {desc}")
                        }
                    ),
                );
            }
            return Vec::new();
        }
        if self.play != Play::Agent {
            self.note(
                NoteKind::Error,
                "Calling tools is the agent's part: play it with --play agent.".into(),
            );
            return Vec::new();
        }
        if self.finished.is_some() {
            self.note(
                NoteKind::Error,
                "The episode has ended: /test, /save FILE or /quit.".into(),
            );
            return Vec::new();
        }
        let arguments: Value = match serde_json::from_str(args) {
            Ok(v @ Value::Object(_)) => v,
            Ok(_) => {
                self.note(
                    NoteKind::Error,
                    "/tool NAME {json}: the arguments must be a JSON object".into(),
                );
                return Vec::new();
            }
            Err(e) => {
                self.note(
                    NoteKind::Error,
                    format!("/tool {name}: the arguments are not valid JSON: {e}"),
                );
                return Vec::new();
            }
        };
        self.call_tool(name, arguments)
    }
}

/// `(name, schema, required)` of a tool's parameters, in schema order.
fn params(schema: &Value) -> Vec<(String, Value, bool)> {
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .map(|(k, v)| (k.clone(), v.clone(), required.contains(&k.as_str())))
                .collect()
        })
        .unwrap_or_default()
}

/// A parameter's type, from its schema (`anyOf` members joined by `|`).
fn type_of(v: &Value) -> String {
    if let Some(t) = v.get("type") {
        return match t {
            Value::String(s) => s.clone(),
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("|"),
            _ => "any".into(),
        };
    }
    if let Some(a) = v.get("anyOf").and_then(Value::as_array) {
        return a.iter().map(type_of).collect::<Vec<_>>().join("|");
    }
    if v.get("$ref").is_some() || v.get("properties").is_some() {
        return "object".into();
    }
    "any".into()
}

/// `name(a: string*, b: integer)`: `*` marks required parameters.
pub fn signature(name: &str, schema: &Value) -> String {
    let ps: Vec<String> = params(schema)
        .iter()
        .map(|(p, v, req)| format!("{p}: {}{}", type_of(v), if *req { "*" } else { "" }))
        .collect();
    format!("{name}({})", ps.join(", "))
}

/// An argument skeleton: the required parameters with empty values of their types.
pub fn skeleton(schema: &Value) -> String {
    let mut m = Map::new();
    for (p, v, req) in params(schema) {
        if !req {
            continue;
        }
        let t = type_of(&v);
        let first = t.split('|').next().unwrap_or("");
        m.insert(
            p,
            match first {
                "string" => json!(""),
                "integer" | "number" => json!(0),
                "boolean" => json!(false),
                "array" => json!([]),
                "object" => json!({}),
                _ => Value::Null,
            },
        );
    }
    Value::Object(m).to_string()
}

#[cfg(test)]
mod tests {
    use super::Command;

    #[test]
    fn command_lines_parse_to_their_command_and_rest() {
        assert_eq!(Command::parse("help"), Command::Help);
        assert_eq!(Command::parse("exit"), Command::Quit);
        assert_eq!(Command::parse("test  a.py:t "), Command::Test("a.py:t"));
        assert_eq!(Command::parse("save"), Command::Save(""));
        assert_eq!(
            Command::parse("tool get {\"id\": 1}"),
            Command::Tool("get {\"id\": 1}")
        );
        assert_eq!(
            Command::parse("user context knows  the id "),
            Command::UserContext("knows  the id")
        );
        assert_eq!(Command::parse("user context"), Command::UserContext(""));
        assert_eq!(Command::parse("user now"), Command::User("now"));
        assert_eq!(Command::parse("nope x"), Command::Unknown("nope"));
    }
}
