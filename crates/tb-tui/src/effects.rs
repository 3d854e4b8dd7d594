//! The effects of a session: what changed in each server's database against its initial state
//! (the sandbox's stable diff), and, for a task, the fields that still differ from the golden
//! state (the state judge's diff, the same one `tb infer` grades with). A remote session's
//! effects are its servers' own (`__reserved__geteffects`: result and golden state hashes,
//! the diff), as its state verdicts carry them.

use serde_json::Value;
use tb_core::{StateVerdict, Task};
use tb_eval::root::TaskSession;
use tb_eval::run::RunEnv;

/// The effects on one server.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEffects {
    /// Server name.
    pub server: String,
    /// Changes against the initial state (diff entries, result = now, golden = initial).
    pub changes: Vec<Value>,
    /// Fields still differing from the golden state (`None` without a task to compare with).
    pub to_fix: Option<Vec<Value>>,
    /// The result and golden state hashes a remote server reports (`None` in process: the
    /// changes are shown instead).
    pub hashes: Option<(String, String)>,
    /// Row ids by `(table, index)` of the rows the entries name, where known.
    ids: Vec<((String, usize), String)>,
}

/// The effects of every server of a session.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Effects {
    /// Per server, in world-state order.
    pub servers: Vec<ServerEffects>,
    /// Why the golden comparison is missing, if it is.
    pub note: Option<String>,
}

impl Effects {
    /// Computes the effects of `live` against `initial` and, when `golden` is set, against
    /// the task's golden state through the run's state judge.
    pub fn compute(
        env: &RunEnv,
        task: &Task,
        golden: bool,
        initial: &TaskSession,
        live: &TaskSession,
    ) -> Effects {
        let mut note = None;
        let verdicts = if golden {
            match env.judge.judge(&env.sandbox, task, env.clock, live) {
                Ok(v) => Some(v),
                Err(e) => {
                    note = Some(format!("golden state unavailable: {e}"));
                    None
                }
            }
        } else {
            None
        };
        let goldens = if golden {
            env.judge.golden(&env.sandbox, task, env.clock).ok()
        } else {
            None
        };
        let mut servers = Vec::new();
        for s in &live.servers {
            let name = s.domain.name.clone();
            let changes = match initial.server(&name) {
                Some(i) => s.state.stable_diff(&i.state),
                None => Vec::new(),
            };
            let to_fix = verdicts.as_ref().map(|v| {
                v.iter()
                    .find(|v| v.server == name)
                    .map(|v| v.diff.clone())
                    .unwrap_or_default()
            });
            // Row ids, for the humans: the rows the entries name, looked up in the live
            // state, else in the other side's (initial or golden).
            let mut ids = Vec::new();
            let wanted: Vec<(String, usize)> = changes
                .iter()
                .chain(to_fix.iter().flatten())
                .filter_map(|e| row_of(e.get("path").and_then(Value::as_str).unwrap_or("")))
                .collect();
            if !wanted.is_empty() {
                let live_state = s.state.stable_state();
                let initial_state = initial.server(&name).map(|i| i.state.stable_state());
                let mut sources: Vec<&Value> = vec![&live_state];
                sources.extend(initial_state.as_ref());
                let golden_state = goldens
                    .as_ref()
                    .and_then(|g| g.iter().find(|g| g.server == name))
                    .map(tb_eval::judge::Golden::stable_state);
                sources.extend(golden_state.as_ref());
                for (table, i) in wanted {
                    if ids.iter().any(|(k, _)| k == &(table.clone(), i)) {
                        continue;
                    }
                    let id = sources.iter().find_map(|st| {
                        st.get(&table)?
                            .get(i)?
                            .get("id")
                            .filter(|v| !v.is_null())
                            .map(|v| match v {
                                Value::String(s) => clip(s, 40),
                                other => short(other),
                            })
                    });
                    if let Some(id) = id {
                        ids.push(((table, i), id));
                    }
                }
            }
            servers.push(ServerEffects {
                server: name,
                changes,
                to_fix,
                hashes: None,
                ids,
            });
        }
        Effects { servers, note }
    }

    /// The effects of a remote session from its state verdicts (one per server, from the
    /// servers' effects); `golden`: a task, whose diff is what is left to fix. A failure to
    /// get them keeps the last known effects (`last`) with the failure as the note.
    pub fn from_verdicts(
        verdicts: Result<&[StateVerdict], &str>,
        golden: bool,
        last: &Effects,
    ) -> Effects {
        match verdicts {
            Ok(v) => Effects {
                servers: v
                    .iter()
                    .map(|v| ServerEffects {
                        server: v.server.clone(),
                        changes: Vec::new(),
                        to_fix: golden.then(|| v.diff.clone()),
                        hashes: Some((v.result_hash.clone(), v.golden_hash.clone())),
                        ids: Vec::new(),
                    })
                    .collect(),
                note: v.is_empty().then(|| {
                    "the servers report no state hashes (their effects are read by the checks)"
                        .to_string()
                }),
            },
            Err(e) => Effects {
                servers: last.servers.clone(),
                note: Some(format!("effects unavailable: {e}")),
            },
        }
    }

    /// Whether the golden comparison was made and nothing is left to fix.
    pub fn all_fixed(&self) -> Option<bool> {
        let mut any = false;
        for s in &self.servers {
            match &s.to_fix {
                Some(d) if !d.is_empty() => return Some(false),
                Some(_) => any = true,
                None => {}
            }
        }
        any.then_some(true)
    }

    /// The effects as text lines for the side pane and `/effects`.
    pub fn lines(&self) -> Vec<(LineKind, String)> {
        let mut out = Vec::new();
        for s in &self.servers {
            if self.servers.len() > 1 {
                out.push((LineKind::Head, format!("server {}", s.server)));
            }
            if let Some((result, golden)) = &s.hashes {
                out.push((LineKind::Head, "reported by the server".into()));
                out.push((
                    LineKind::Plain,
                    format!("  result hash {}", clip(result, 17)),
                ));
                if s.to_fix.is_some() {
                    out.push((
                        LineKind::Plain,
                        format!("  golden hash {}", clip(golden, 17)),
                    ));
                }
            } else {
                out.push((
                    LineKind::Head,
                    format!("changed since the start ({})", s.changes.len()),
                ));
                if s.changes.is_empty() {
                    out.push((LineKind::Dim, "  nothing yet".into()));
                } else {
                    render(&s.changes, s, Wording::Change, &mut out);
                }
            }
            if let Some(d) = &s.to_fix {
                out.push((LineKind::Plain, String::new()));
                if d.is_empty() {
                    out.push((
                        LineKind::Good,
                        "to fix: nothing, the state matches the golden state".into(),
                    ));
                } else {
                    out.push((
                        LineKind::Bad,
                        format!("to fix: {} difference(s) from the golden state", d.len()),
                    ));
                    render(d, s, Wording::Fix, &mut out);
                }
            }
            out.push((LineKind::Plain, String::new()));
        }
        if let Some(n) = &self.note {
            out.push((LineKind::Dim, n.clone()));
        }
        while out.last().is_some_and(|(_, l)| l.is_empty()) {
            out.pop();
        }
        out
    }
}

/// The lines of a golden-state diff (as `/test` shows it), with the row ids `known` has.
pub fn fix_lines(
    server: &str,
    diff: &[Value],
    known: Option<&ServerEffects>,
) -> Vec<(LineKind, String)> {
    let s = ServerEffects {
        server: server.to_string(),
        changes: Vec::new(),
        to_fix: Some(diff.to_vec()),
        hashes: None,
        ids: known.map(|k| k.ids.clone()).unwrap_or_default(),
    };
    let mut out = Vec::new();
    render(diff, &s, Wording::Fix, &mut out);
    out
}

/// How a line of effects is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// A section heading.
    Head,
    /// A table or row.
    Place,
    /// A field line.
    Plain,
    /// Good news.
    Good,
    /// Bad news.
    Bad,
    /// Less important.
    Dim,
}

#[derive(Clone, Copy, PartialEq)]
enum Wording {
    Change,
    Fix,
}

/// `(table, row index)` of a path `table[i]...`.
fn row_of(path: &str) -> Option<(String, usize)> {
    let (table, rest) = path.split_once('[')?;
    let (i, _) = rest.split_once(']')?;
    Some((table.to_string(), i.parse().ok()?))
}

/// A JSON value on one line, clipped.
pub fn short(v: &Value) -> String {
    let s = match v {
        Value::String(s) => serde_json::to_string(s).unwrap_or_default(),
        other => other.to_string(),
    };
    clip(&s, 60)
}

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Groups entries by table and row, one line per field.
fn render(diff: &[Value], s: &ServerEffects, w: Wording, out: &mut Vec<(LineKind, String)>) {
    let mut last_table: Option<String> = None;
    let mut last_row: Option<String> = None;
    for e in diff {
        let d = tb_metrics::show::DiffEntry::of(e);
        let (path, kind, table, rest) = (d.path, d.kind, d.table, d.rest);
        let (row, field) = match (rest.strip_prefix('['), row_of(path)) {
            (Some(r), Some(key)) => {
                let j = r.find(']').unwrap_or(r.len());
                let id = s
                    .ids
                    .iter()
                    .find(|(k, _)| k == &key)
                    .map(|(_, id)| format!(" id {id}"))
                    .unwrap_or_default();
                (
                    Some(format!("row [{}]{id}", &r[..j])),
                    r.get(j + 1..)
                        .unwrap_or("")
                        .trim_start_matches('.')
                        .to_string(),
                )
            }
            _ => (None, rest.trim_start_matches('.').to_string()),
        };
        if last_table.as_deref() != Some(table) {
            out.push((LineKind::Place, format!("  table {table}")));
            last_table = Some(table.to_string());
            last_row = None;
        }
        if row.is_some() && row != last_row {
            out.push((
                LineKind::Place,
                format!("    {}", row.clone().unwrap_or_default()),
            ));
            last_row.clone_from(&row);
        }
        let r = e.get("result").unwrap_or(&Value::Null);
        let g = e.get("golden").unwrap_or(&Value::Null);
        let what = match (kind, w) {
            ("value mismatch", Wording::Change) => format!("{} -> {}", short(g), short(r)),
            ("value mismatch", Wording::Fix) => {
                format!("is {}, should be {}", short(r), short(g))
            }
            ("length mismatch", Wording::Change) => {
                format!("{} -> {} rows/items", short(g), short(r))
            }
            ("length mismatch", Wording::Fix) => {
                format!("{} rows/items, should be {}", short(r), short(g))
            }
            ("type mismatch", _) => format!("type {}, other side {}", short(r), short(g)),
            (k, Wording::Change) if k.starts_with("present in result") => "added".into(),
            (k, Wording::Change) if k.starts_with("missing in result") => "removed".into(),
            (k, Wording::Fix) if k.starts_with("present in result") => {
                "extra (not in the golden state)".into()
            }
            (k, Wording::Fix) if k.starts_with("missing in result") => {
                "missing (in the golden state)".into()
            }
            // another server's own diff entries: their kind, and both sides when given
            (other, w) => match (e.get("result"), e.get("golden")) {
                (None, None) => other.to_string(),
                _ if w == Wording::Fix => {
                    format!("{other}: is {}, should be {}", short(r), short(g))
                }
                _ => format!("{other}: {} -> {}", short(g), short(r)),
            },
        };
        let indent = if row.is_some() { "      " } else { "    " };
        let line = if field.is_empty() {
            format!("{indent}{what}")
        } else {
            format!("{indent}{field}: {what}")
        };
        out.push((LineKind::Plain, line));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rows_and_paths() {
        assert_eq!(row_of("tickets[5].status"), Some(("tickets".into(), 5)));
        assert_eq!(row_of("tickets"), None);
        assert_eq!(short(&json!("x".repeat(100))).chars().count(), 60);
    }

    #[test]
    fn renders_changes_and_fixes() {
        let s = ServerEffects {
            server: "retail".into(),
            changes: vec![
                json!({"path": "tickets", "type": "length mismatch", "result": 3, "golden": 2}),
                json!({"path": "tickets[2]", "type": "present in result (missing in golden)"}),
            ],
            to_fix: Some(vec![
                json!({"path": "tickets[1].status", "type": "value mismatch", "result": "open", "golden": "solved"}),
            ]),
            hashes: None,
            ids: vec![(("tickets".into(), 1), "6".into())],
        };
        let e = Effects {
            servers: vec![s],
            note: None,
        };
        let text: Vec<String> = e.lines().into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            text,
            vec![
                "changed since the start (2)",
                "  table tickets",
                "    2 -> 3 rows/items",
                "    row [2]",
                "      added",
                "",
                "to fix: 1 difference(s) from the golden state",
                "  table tickets",
                "    row [1] id 6",
                "      status: is \"open\", should be \"solved\"",
            ]
        );
        assert_eq!(e.all_fixed(), Some(false));
    }

    #[test]
    fn remote_effects_from_verdicts_and_a_failure_keeps_the_last() {
        let v = vec![StateVerdict {
            server: "tiny_library".into(),
            passed: false,
            result_hash: "a".repeat(64),
            golden_hash: "b".repeat(64),
            diff: vec![json!({"path": "books", "type": "changed", "result": [1], "golden": [2]})],
        }];
        let e = Effects::from_verdicts(Ok(&v), true, &Effects::default());
        assert_eq!(e.all_fixed(), Some(false));
        let text: Vec<String> = e.lines().into_iter().map(|(_, l)| l).collect();
        assert_eq!(
            text,
            vec![
                "reported by the server",
                "  result hash aaaaaaaaaaaaaaaa…",
                "  golden hash bbbbbbbbbbbbbbbb…",
                "",
                "to fix: 1 difference(s) from the golden state",
                "  table books",
                "    changed: is [1], should be [2]",
            ]
        );
        // a scenario: the result hash only, nothing to fix
        let s = Effects::from_verdicts(Ok(&v), false, &Effects::default());
        assert_eq!(s.all_fixed(), None);
        assert_eq!(s.lines().len(), 2);
        // the servers cannot be asked: the last effects stay, with why
        let f = Effects::from_verdicts(Err("server `tiny_library`: gone"), true, &e);
        assert_eq!(f.servers, e.servers);
        assert_eq!(
            f.note.as_deref(),
            Some("effects unavailable: server `tiny_library`: gone")
        );
    }
}
