//! The prompts of the simulated user and of the rubric judge: our own words by default, or
//! the reference's, read at run time from the user's checkout of the framework
//! (`--framework PATH` / `THINKINGBOX_FRAMEWORK`): module-level string constants of
//! `thinkingbox/common/user_simulated_answer.py` and `thinkingbox/common/judge.py`, and the
//! sanitising table of the former; or from a prompt file (`--prompts FILE`, JSON, what
//! `tb tools --export prompts` writes). Templates are filled with Python `str.format`
//! semantics, and their placeholders must be exactly the ones our code fills.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use tb_dataset::{PyValue, py_assignments};

/// The simulated user's file, relative to a framework checkout.
pub const USER_SIM_FILE: &str = "thinkingbox/common/user_simulated_answer.py";
/// The judge's file, relative to a framework checkout.
pub const JUDGE_FILE: &str = "thinkingbox/common/judge.py";

/// Placeholders of the user template.
pub const USER_TEMPLATE_FIELDS: [&str; 3] =
    ["transcript", "user_context", "last_assistant_message"];
/// Placeholders of the judge's user template.
pub const JUDGE_TEMPLATE_FIELDS: [&str; 2] = ["message", "question"];

/// Where a run's prompts came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    /// Our own prompts.
    Own,
    /// A framework checkout.
    Framework {
        /// The checkout.
        path: PathBuf,
        /// Its git HEAD commit, or `unknown`.
        commit: String,
    },
    /// A prompt file.
    File {
        /// The file.
        path: PathBuf,
        /// The sha256 of its bytes.
        sha256: String,
    },
}

/// The keys of a prompt file, each a string but `sanitize` (a list of `[from, to]` pairs)
/// and the optional `judge_system_motivation`.
pub const PROMPT_FILE_KEYS: [&str; 7] = [
    "user_system",
    "user_system_with_end",
    "user_template",
    "sanitize",
    "judge_system",
    "judge_template",
    "judge_system_motivation",
];

/// Every prompt text a run sends besides the dataset's own (agent instructions, queries).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prompts {
    /// Where they came from.
    pub source: PromptSource,
    /// The simulated user's system prompt.
    pub user_system: String,
    /// The simulated user's system prompt when it may end the conversation.
    pub user_system_with_end: String,
    /// The simulated user's message template (`{transcript}`, `{user_context}`,
    /// `{last_assistant_message}`).
    pub user_template: String,
    /// Replacements applied, in order, to inserted text (transcript entries, user context,
    /// last assistant message).
    pub sanitize: Vec<(String, String)>,
    /// The judge's yes/no system prompt.
    pub judge_system: String,
    /// The judge's user template (`{message}`, `{question}`).
    pub judge_template: String,
    /// The judge's yes/no-with-motivation system prompt, when the source has one (not used by
    /// the v1 rubric checks; recorded for provenance).
    pub judge_system_motivation: Option<String>,
}

/// A prompt file that cannot be read or does not hold what we need.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{file}:{line}: {message}")]
pub struct PromptError {
    /// The file.
    pub file: String,
    /// 1-based line (0: the whole file).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// Our simulated user's message template.
const OWN_USER_TEMPLATE: &str = "\nCONVERSATION_HISTORY:\n{transcript}\n=== END CONVERSATION HISTORY ===\n\nUSER_CONTEXT:\n{user_context}\n\nLAST_ASSISTANT_MESSAGE:\n{last_assistant_message}\n\nTASK: Write the customer's next message from the conversation and the context above.\n";

/// Our judge's user template.
const OWN_JUDGE_TEMPLATE: &str = "<message>\n{message}\n</message>\n{question}";

impl Default for Prompts {
    fn default() -> Self {
        Prompts::own()
    }
}

impl Prompts {
    /// Our own prompts.
    pub fn own() -> Self {
        Prompts {
            source: PromptSource::Own,
            user_system: crate::user_sim::USER_RULES.to_string(),
            user_system_with_end: crate::user_sim::USER_RULES_WITH_END.to_string(),
            user_template: OWN_USER_TEMPLATE.to_string(),
            sanitize: crate::user_sim::SANITIZE
                .iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect(),
            judge_system: crate::rubric::JUDGE_SYSTEM.to_string(),
            judge_template: OWN_JUDGE_TEMPLATE.to_string(),
            judge_system_motivation: None,
        }
    }

    /// The reference's prompts, read from a framework checkout.
    pub fn from_framework(root: &Path) -> Result<Self, PromptError> {
        let user = ConstFile::read(&root.join(USER_SIM_FILE))?;
        let judge = ConstFile::read(&root.join(JUDGE_FILE))?;
        let p = Prompts {
            source: PromptSource::Framework {
                path: root.to_path_buf(),
                commit: git_head(root),
            },
            user_system: user.plain("SYSTEM_PROMPT")?,
            user_system_with_end: user.plain("SYSTEM_PROMPT_WITH_END")?,
            user_template: user.template("USER_PROMPT", &USER_TEMPLATE_FIELDS)?,
            sanitize: user.dict_in("_sanitize_content", "replacements")?,
            judge_system: judge.plain("SYSTEM_TEXT_YESNO")?,
            judge_template: judge.template("USER_TEXT_YESNO", &JUDGE_TEMPLATE_FIELDS)?,
            judge_system_motivation: Some(judge.string("SYSTEM_TEXT_YESNO_MOTIVATION")?.0),
        };
        Ok(p)
    }

    /// The prompts of a prompt file: a JSON object with [`PROMPT_FILE_KEYS`] (unknown keys
    /// are errors), templates holding exactly the placeholders our code fills.
    pub fn from_file(path: &Path) -> Result<Self, PromptError> {
        let file = path.display().to_string();
        let err = |message: String| PromptError {
            file: file.clone(),
            line: 0,
            message,
        };
        let bytes =
            std::fs::read(path).map_err(|e| err(format!("cannot read the prompt file: {e}")))?;
        let doc: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| PromptError {
            file: file.clone(),
            line: e.line(),
            message: e.to_string(),
        })?;
        let obj = doc
            .as_object()
            .ok_or_else(|| err("a prompt file is a JSON object".into()))?;
        if let Some(k) = obj.keys().find(|k| !PROMPT_FILE_KEYS.contains(&k.as_str())) {
            return Err(err(format!(
                "unknown key `{k}` (known: {})",
                PROMPT_FILE_KEYS.join(", ")
            )));
        }
        let text = |k: &str| -> Result<String, PromptError> {
            obj.get(k)
                .and_then(serde_json::Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| err(format!("`{k}` is missing or not a string")))
        };
        let template = |k: &str, fields: &[&str]| -> Result<String, PromptError> {
            let t = text(k)?;
            let got = placeholders(&t).map_err(|m| err(format!("`{k}`: {m}")))?;
            if !got.iter().map(String::as_str).eq(sorted(fields)) {
                return Err(err(format!(
                    "`{k}` has placeholders {{{}}}, expected exactly {{{}}}",
                    got.into_iter().collect::<Vec<_>>().join(", "),
                    fields.join(", ")
                )));
            }
            Ok(t)
        };
        let sanitize = match obj.get("sanitize") {
            Some(serde_json::Value::Array(pairs)) => pairs
                .iter()
                .map(|p| match p.as_array().map(Vec::as_slice) {
                    Some([serde_json::Value::String(a), serde_json::Value::String(b)]) => {
                        Ok((a.clone(), b.clone()))
                    }
                    _ => Err(err("`sanitize` holds a pair that is not [from, to]".into())),
                })
                .collect::<Result<Vec<_>, _>>()?,
            _ => return Err(err("`sanitize` is missing or not a list of pairs".into())),
        };
        let judge_system_motivation = match obj.get("judge_system_motivation") {
            None | Some(serde_json::Value::Null) => None,
            Some(_) => Some(text("judge_system_motivation")?),
        };
        Ok(Prompts {
            source: PromptSource::File {
                path: path.to_path_buf(),
                sha256: tb_core::sha256_hex(&bytes),
            },
            user_system: text("user_system")?,
            user_system_with_end: text("user_system_with_end")?,
            user_template: template("user_template", &USER_TEMPLATE_FIELDS)?,
            sanitize,
            judge_system: text("judge_system")?,
            judge_template: template("judge_template", &JUDGE_TEMPLATE_FIELDS)?,
            judge_system_motivation,
        })
    }

    /// The prompts as a prompt file holds them (what `tb tools --export prompts` writes).
    pub fn to_file_json(&self) -> serde_json::Value {
        serde_json::json!({
            "user_system": self.user_system,
            "user_system_with_end": self.user_system_with_end,
            "user_template": self.user_template,
            "sanitize": self.sanitize,
            "judge_system": self.judge_system,
            "judge_template": self.judge_template,
            "judge_system_motivation": self.judge_system_motivation,
        })
    }

    /// `--framework` if given, else `THINKINGBOX_FRAMEWORK`, else our own prompts.
    pub fn resolve(framework: Option<&Path>) -> Result<Self, PromptError> {
        match framework
            .map(Path::to_path_buf)
            .or_else(|| std::env::var_os("THINKINGBOX_FRAMEWORK").map(PathBuf::from))
        {
            Some(p) => Prompts::from_framework(&p),
            None => Ok(Prompts::own()),
        }
    }

    /// `own`, `framework` or `file`.
    pub fn source_name(&self) -> &'static str {
        match self.source {
            PromptSource::Own => "own",
            PromptSource::Framework { .. } => "framework",
            PromptSource::File { .. } => "file",
        }
    }

    /// Applies the sanitising table to inserted text.
    pub fn sanitize(&self, s: &str) -> String {
        let mut out = s.to_string();
        for (a, b) in &self.sanitize {
            out = out.replace(a.as_str(), b);
        }
        out
    }

    /// The simulated user's message.
    pub fn user_message(&self, transcript: &str, user_context: &str, last: &str) -> String {
        // placeholders were checked when the prompts were made
        py_format(
            &self.user_template,
            &[
                ("transcript", transcript),
                ("user_context", user_context),
                ("last_assistant_message", last),
            ],
        )
        .unwrap_or_default()
    }

    /// The judge's user message.
    pub fn judge_message(&self, message: &str, question: &str) -> String {
        py_format(
            &self.judge_template,
            &[("message", message), ("question", question)],
        )
        .unwrap_or_default()
    }

    /// For the run manifest and records: source, checkout and commit, and the sha256 of each
    /// prompt.
    pub fn provenance(&self) -> serde_json::Value {
        let mut m = serde_json::Map::new();
        m.insert("origin".into(), self.source_name().into());
        match &self.source {
            PromptSource::Own => {}
            PromptSource::Framework { path, commit } => {
                m.insert("framework".into(), path.display().to_string().into());
                m.insert("framework_commit".into(), commit.clone().into());
            }
            PromptSource::File { path, sha256 } => {
                m.insert("file".into(), path.display().to_string().into());
                m.insert("file_sha256".into(), sha256.clone().into());
            }
        }
        let sanitize = serde_json::to_string(&self.sanitize).unwrap_or_default();
        let mut h = serde_json::Map::new();
        for (k, v) in [
            ("user_system", self.user_system.as_str()),
            ("user_system_with_end", self.user_system_with_end.as_str()),
            ("user_template", self.user_template.as_str()),
            ("user_sanitize", sanitize.as_str()),
            ("judge_system", self.judge_system.as_str()),
            ("judge_template", self.judge_template.as_str()),
        ] {
            h.insert(k.into(), tb_core::sha256_hex(v.as_bytes()).into());
        }
        m.insert("sha256".into(), h.into());
        serde_json::Value::Object(m)
    }
}

fn sorted<'a>(fields: &[&'a str]) -> Vec<&'a str> {
    let mut v = fields.to_vec();
    v.sort_unstable();
    v
}

/// The git HEAD commit of a checkout (`.git` folder or `.git` file of a worktree), or
/// `unknown`.
pub fn git_head(root: &Path) -> String {
    fn read_head(gitdir: &Path) -> Option<String> {
        let head = std::fs::read_to_string(gitdir.join("HEAD")).ok()?;
        let head = head.trim();
        let Some(r) = head.strip_prefix("ref: ") else {
            return is_hex40(head).then(|| head.to_string());
        };
        // a worktree's refs live in the common dir
        let common = std::fs::read_to_string(gitdir.join("commondir"))
            .ok()
            .map_or_else(|| gitdir.to_path_buf(), |c| gitdir.join(c.trim()));
        for dir in [gitdir, common.as_path()] {
            if let Ok(s) = std::fs::read_to_string(dir.join(r)) {
                let s = s.trim();
                if is_hex40(s) {
                    return Some(s.to_string());
                }
            }
            if let Ok(packed) = std::fs::read_to_string(dir.join("packed-refs")) {
                for l in packed.lines() {
                    if let Some((h, name)) = l.split_once(' ')
                        && name == r
                        && is_hex40(h)
                    {
                        return Some(h.to_string());
                    }
                }
            }
        }
        None
    }
    fn is_hex40(s: &str) -> bool {
        s.len() == 40 && s.bytes().all(|b| b.is_ascii_hexdigit())
    }
    let dot = root.join(".git");
    let gitdir = if dot.is_file() {
        std::fs::read_to_string(&dot)
            .ok()
            .and_then(|s| s.trim().strip_prefix("gitdir: ").map(|g| root.join(g)))
    } else if dot.is_dir() {
        Some(dot)
    } else {
        None
    };
    gitdir
        .and_then(|g| read_head(&g))
        .unwrap_or_else(|| "unknown".into())
}

/// The assignments of one Python file.
struct ConstFile {
    file: String,
    items: Vec<tb_dataset::PyAssign>,
}

impl ConstFile {
    fn read(path: &Path) -> Result<Self, PromptError> {
        let file = path.display().to_string();
        let src = std::fs::read_to_string(path).map_err(|e| PromptError {
            file: file.clone(),
            line: 0,
            message: format!("cannot read the framework's prompt file: {e}"),
        })?;
        let items = py_assignments(&src).map_err(|e| PromptError {
            file: file.clone(),
            line: e.line,
            message: e.message,
        })?;
        Ok(ConstFile { file, items })
    }

    fn err(&self, line: usize, message: String) -> PromptError {
        PromptError {
            file: self.file.clone(),
            line,
            message,
        }
    }

    /// A module-level string constant, with its line; assigned exactly once.
    fn string(&self, name: &str) -> Result<(String, usize), PromptError> {
        let found: Vec<_> = self
            .items
            .iter()
            .filter(|a| a.name == name && a.function.is_none())
            .collect();
        match found.as_slice() {
            [] => Err(self.err(0, format!("no module-level constant `{name}`"))),
            [a] => match &a.value {
                PyValue::Str(s) => Ok((s.clone(), a.line)),
                _ => Err(self.err(
                    a.line,
                    format!("`{name}` is not a string constant (only literals are read)"),
                )),
            },
            [_, b, ..] => Err(self.err(b.line, format!("`{name}` is assigned more than once"))),
        }
    }

    /// A string used as is (no placeholders are filled, so none may be expected).
    fn plain(&self, name: &str) -> Result<String, PromptError> {
        self.string(name).map(|(s, _)| s)
    }

    /// A template whose placeholders must be exactly `fields`.
    fn template(&self, name: &str, fields: &[&str]) -> Result<String, PromptError> {
        let (s, line) = self.string(name)?;
        let got = placeholders(&s).map_err(|m| self.err(line, format!("`{name}`: {m}")))?;
        let want: BTreeSet<String> = fields
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        if got != want {
            return Err(self.err(
                line,
                format!(
                    "`{name}` has placeholders {{{}}}, expected exactly {{{}}}",
                    got.into_iter().collect::<Vec<_>>().join(", "),
                    fields.join(", ")
                ),
            ));
        }
        Ok(s)
    }

    /// A dict of strings assigned to `var` inside the module-level function `function`.
    fn dict_in(&self, function: &str, var: &str) -> Result<Vec<(String, String)>, PromptError> {
        let found: Vec<_> = self
            .items
            .iter()
            .filter(|a| a.name == var && a.function.as_deref() == Some(function))
            .collect();
        match found.as_slice() {
            [] => Err(self.err(0, format!("no `{var} = {{...}}` in function `{function}`"))),
            [a] => match &a.value {
                PyValue::StrDict(d) if !d.is_empty() => Ok(d.clone()),
                _ => Err(self.err(
                    a.line,
                    format!("`{var}` in `{function}` is not a dict literal of strings"),
                )),
            },
            [_, b, ..] => Err(self.err(
                b.line,
                format!("`{var}` is assigned more than once in `{function}`"),
            )),
        }
    }
}

/// The replacement fields of a Python format string (`{name}`); `{{` and `}}` are literal
/// braces. Positional fields, attribute or index access, conversions and format specs are
/// errors (our code fills named fields only).
pub fn placeholders(template: &str) -> Result<BTreeSet<String>, String> {
    let mut out = BTreeSet::new();
    walk_format(template, &mut |name| {
        out.insert(name.to_string());
        Ok(())
    })?;
    Ok(out)
}

/// Python `template.format(**values)` for named fields: an unknown field is an error, as
/// Python's `KeyError`.
pub fn py_format(template: &str, values: &[(&str, &str)]) -> Result<String, String> {
    let mut out = String::with_capacity(template.len() + 256);
    let mut last = 0;
    let mut pieces: Vec<(usize, usize, String)> = Vec::new();
    walk_format_spans(template, &mut |start, end, name| {
        let v = values
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| *v)
            .ok_or_else(|| format!("no value for placeholder `{name}`"))?;
        pieces.push((start, end, v.to_string()));
        Ok(())
    })?;
    for (start, end, v) in pieces {
        out.push_str(&unescape_braces(&template[last..start]));
        out.push_str(&v);
        last = end;
    }
    out.push_str(&unescape_braces(&template[last..]));
    Ok(out)
}

fn unescape_braces(s: &str) -> String {
    s.replace("{{", "{").replace("}}", "}")
}

fn walk_format(t: &str, f: &mut dyn FnMut(&str) -> Result<(), String>) -> Result<(), String> {
    walk_format_spans(t, &mut |_, _, name| f(name))
}

/// Calls `f(start, end, name)` for each replacement field `template[start..end]`.
fn walk_format_spans(
    t: &str,
    f: &mut dyn FnMut(usize, usize, &str) -> Result<(), String>,
) -> Result<(), String> {
    let b = t.as_bytes();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'{' if b.get(i + 1) == Some(&b'{') => i += 2,
            b'}' if b.get(i + 1) == Some(&b'}') => i += 2,
            b'}' => return Err(format!("single '}}' encountered at byte {i}")),
            b'{' => {
                let Some(j) = t[i + 1..].find('}') else {
                    return Err(format!("'{{' at byte {i} is never closed"));
                };
                let name = &t[i + 1..i + 1 + j];
                if name.is_empty() || name.bytes().all(|c| c.is_ascii_digit()) {
                    return Err(format!(
                        "positional field `{{{name}}}` at byte {i} (only named fields are filled)"
                    ));
                }
                if !name.chars().all(|c| c.is_alphanumeric() || c == '_')
                    || name.starts_with(|c: char| c.is_ascii_digit())
                {
                    return Err(format!(
                        "field `{{{name}}}` at byte {i}: conversions, format specs, attributes and indexes are not supported"
                    ));
                }
                f(i, i + 2 + j, name)?;
                i += 2 + j;
            }
            _ => i += 1,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_format_semantics() {
        assert_eq!(
            py_format("a {x} {{lit}} {y}}}", &[("x", "1"), ("y", "{2}")]).unwrap(),
            "a 1 {lit} {2}}"
        );
        assert!(py_format("{z}", &[("x", "1")]).is_err());
        assert!(placeholders("{}").is_err());
        assert!(placeholders("{0}").is_err());
        assert!(placeholders("{a!r}").is_err());
        assert!(placeholders("{a:>3}").is_err());
        assert!(placeholders("oops }").is_err());
        assert!(placeholders("oops {").is_err());
        assert_eq!(
            placeholders("{a}{b}{a}{{c}}").unwrap(),
            ["a", "b"]
                .iter()
                .map(std::string::ToString::to_string)
                .collect()
        );
    }

    #[test]
    fn own_prompts_have_the_fields_our_code_fills() {
        let p = Prompts::own();
        let want: BTreeSet<String> = USER_TEMPLATE_FIELDS
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        assert_eq!(placeholders(&p.user_template).unwrap(), want);
        let want: BTreeSet<String> = JUDGE_TEMPLATE_FIELDS
            .iter()
            .map(std::string::ToString::to_string)
            .collect();
        assert_eq!(placeholders(&p.judge_template).unwrap(), want);
        assert_eq!(p.sanitize("x <DONE>"), "x (DONE - escaped)");
    }

    fn write(dir: &Path, user: &str, judge: &str) {
        std::fs::create_dir_all(dir.join("thinkingbox/common")).unwrap();
        std::fs::write(dir.join(USER_SIM_FILE), user).unwrap();
        std::fs::write(dir.join(JUDGE_FILE), judge).unwrap();
    }

    const USER_OK: &str = "X = 1\nSYSTEM_PROMPT = r\"\"\"\nsys\"\"\"\nSYSTEM_PROMPT_WITH_END = (\n  'a'\n  \"b\"\n)\nUSER_PROMPT = \"\"\"{transcript}|{user_context}|{last_assistant_message}\"\"\"\n\ndef _sanitize_content(content):\n    replacements = {\n        'A:': 'A (e):',\n        \"<D>\": \"(D)\",\n    }\n    return content\n";
    const JUDGE_OK: &str = "SYSTEM_TEXT_YESNO = \"\"\"\\\nyes or no\"\"\"\nSYSTEM_TEXT_YESNO_MOTIVATION = \"{ json }\"\nUSER_TEXT_YESNO = \"<m>{message}</m>{question}\"\n";

    #[test]
    fn reads_a_framework_checkout_and_names_file_and_line_on_errors() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), USER_OK, JUDGE_OK);
        let p = Prompts::from_framework(dir.path()).unwrap();
        assert_eq!(p.user_system, "\nsys");
        assert_eq!(p.user_system_with_end, "ab");
        assert_eq!(p.judge_system, "yes or no");
        assert_eq!(p.sanitize("A: <D>"), "A (e): (D)");
        assert_eq!(p.user_message("t", "c", "l"), "t|c|l");
        assert_eq!(p.judge_message("x", "q?"), "<m>x</m>q?");
        assert_eq!(p.source_name(), "framework");
        assert!(matches!(&p.source, PromptSource::Framework { commit, .. } if commit == "unknown"));

        // a placeholder our code does not fill
        write(
            dir.path(),
            &USER_OK.replace("{last_assistant_message}", "{last}"),
            JUDGE_OK,
        );
        let e = Prompts::from_framework(dir.path()).unwrap_err();
        assert!(e.file.ends_with(USER_SIM_FILE) && e.line == 8, "{e}");
        assert!(e.message.contains("expected exactly"), "{e}");
        // not a literal
        write(
            dir.path(),
            USER_OK,
            &JUDGE_OK.replace("\"<m>{message}</m>{question}\"", "make()"),
        );
        let e = Prompts::from_framework(dir.path()).unwrap_err();
        assert!(e.file.ends_with(JUDGE_FILE) && e.line == 4, "{e}");
        // missing
        write(
            dir.path(),
            &USER_OK.replace("SYSTEM_PROMPT =", "OTHER ="),
            JUDGE_OK,
        );
        let e = Prompts::from_framework(dir.path()).unwrap_err();
        assert!(e.message.contains("`SYSTEM_PROMPT`"), "{e}");
        // an unterminated string: the tokenizer's line
        write(dir.path(), "A = 1\nB = 'oops\n", JUDGE_OK);
        let e = Prompts::from_framework(dir.path()).unwrap_err();
        assert_eq!(e.line, 2, "{e}");
    }
}
