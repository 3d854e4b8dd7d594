//! Argument mutations of one golden call: each argument (nested objects and list elements
//! included) replaced by another plausible value. Pure functions of the call's arguments, the
//! tool's input model and the session state at the call (for ids).
//!
//! Rules, in order, for a scalar:
//! - a string of a declared enum: the next member (cyclically);
//! - a bool: its negation;
//! - a string (or an integer under a key ending in `id`) equal to a row id of some table:
//!   the id of the neighbouring row of that table (the next row, else the previous);
//! - an integer: plus one; a float: plus one;
//! - a string starting with an ISO date: one day later, the rest kept;
//! - any other string: the same text with ` (altered)` appended.
//!
//! A list of scalars loses its last element; `null` is left alone.

use serde_json::{Map, Value};
use tb_sandbox::State;
use tb_sandbox::schema::{Kind, Model};

/// How many argument mutants one call gets at most (the first ones in argument order).
pub const MAX_PER_CALL: usize = 32;
/// How deep nested arguments are followed.
const MAX_DEPTH: usize = 4;
/// How many elements of a list of objects are mutated.
const MAX_ELEMENTS: usize = 3;

/// One argument mutation of a call.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgMutation {
    /// Where, e.g. `order_id`, `item.subject`, `items[0].sku`.
    pub path: String,
    /// The golden value.
    pub from: Value,
    /// The value put instead.
    pub to: Value,
    /// The call's whole arguments with the replacement.
    pub args: Value,
}

#[derive(Debug, Clone)]
enum Seg {
    Key(String),
    Index(usize),
}

fn path_text(path: &[Seg]) -> String {
    let mut s = String::new();
    for seg in path {
        match seg {
            Seg::Key(k) => {
                if !s.is_empty() {
                    s.push('.');
                }
                s.push_str(k);
            }
            Seg::Index(i) => {
                s.push_str(&format!("[{i}]"));
            }
        }
    }
    s
}

fn set_path(v: &mut Value, path: &[Seg], new: Value) {
    let Some((first, rest)) = path.split_first() else {
        *v = new;
        return;
    };
    let child = match (first, v) {
        (Seg::Key(k), Value::Object(m)) => m.get_mut(k),
        (Seg::Index(i), Value::Array(a)) => a.get_mut(*i),
        _ => None,
    };
    if let Some(c) = child {
        set_path(c, rest, new);
    }
}

/// Every argument mutation of a call with `args`, for a tool with input model `input`, at
/// session state `state`.
pub fn argument_mutations(state: &State, input: Option<&Model>, args: &Value) -> Vec<ArgMutation> {
    let Value::Object(top) = args else {
        return Vec::new();
    };
    // `table: X` (zendesk-style generic tools): nested objects are rows of that table.
    let table_hint = top
        .get("table")
        .and_then(Value::as_str)
        .and_then(|t| find_table(state, t));
    let mut w = Walker {
        state,
        table_hint,
        out: Vec::new(),
        path: Vec::new(),
        root: args,
    };
    w.object(top, input, 0);
    w.out
}

/// The table named `name`, or `<prefix>_<name>`.
fn find_table(state: &State, name: &str) -> Option<usize> {
    let tables = state.layout().tables();
    tables.iter().position(|t| t.name == name).or_else(|| {
        let suffix = format!("_{name}");
        tables.iter().position(|t| t.name.ends_with(&suffix))
    })
}

struct Walker<'a> {
    state: &'a State,
    table_hint: Option<usize>,
    out: Vec<ArgMutation>,
    path: Vec<Seg>,
    root: &'a Value,
}

impl Walker<'_> {
    fn push(&mut self, from: &Value, to: Value) {
        if self.out.len() >= MAX_PER_CALL || *from == to {
            return;
        }
        let mut args = self.root.clone();
        set_path(&mut args, &self.path, to.clone());
        self.out.push(ArgMutation {
            path: path_text(&self.path),
            from: from.clone(),
            to,
            args,
        });
    }

    fn object(&mut self, m: &Map<String, Value>, model: Option<&Model>, depth: usize) {
        for (k, v) in m {
            let kind = model.and_then(|m| m.field(k)).map(|f| &f.kind);
            self.path.push(Seg::Key(k.clone()));
            self.value(k, v, kind, depth);
            self.path.pop();
        }
    }

    fn value(&mut self, key: &str, v: &Value, kind: Option<&Kind>, depth: usize) {
        if self.out.len() >= MAX_PER_CALL {
            return;
        }
        let base = kind.map(Kind::base);
        match v {
            Value::Object(m) => {
                if depth >= MAX_DEPTH {
                    return;
                }
                let model = match base {
                    Some(Kind::Model(m)) => Some(m.clone()),
                    // A free-form object of a generic table tool: a row of the named table.
                    _ => self
                        .table_hint
                        .map(|t| self.state.layout().tables()[t].model.clone()),
                };
                self.object(m, model.as_deref(), depth + 1);
            }
            Value::Array(a) => {
                let elem = match base {
                    Some(Kind::List(k)) => Some(k.as_ref()),
                    _ => None,
                };
                if a.iter().all(|x| !x.is_object() && !x.is_array()) {
                    if let Some((_, rest)) = a.split_last() {
                        self.push(v, Value::Array(rest.to_vec()));
                    }
                    return;
                }
                if depth >= MAX_DEPTH {
                    return;
                }
                for (i, x) in a.iter().enumerate().take(MAX_ELEMENTS) {
                    self.path.push(Seg::Index(i));
                    self.value(key, x, elem, depth + 1);
                    self.path.pop();
                }
            }
            scalar => {
                if let Some(to) = alternative(self.state, key, scalar, base, self.table_hint) {
                    self.push(scalar, to);
                }
            }
        }
    }
}

/// Another plausible value for a scalar argument (see the module rules); None for `null`.
pub fn alternative(
    state: &State,
    key: &str,
    v: &Value,
    kind: Option<&Kind>,
    table_hint: Option<usize>,
) -> Option<Value> {
    match v {
        Value::Null | Value::Array(_) | Value::Object(_) => None,
        Value::Bool(b) => Some(Value::Bool(!b)),
        Value::String(s) => {
            if let Some(Kind::Enum(vals)) = kind
                && let Some(p) = vals.iter().position(|x| x == s)
                && vals.len() > 1
            {
                return Some(Value::String(vals[(p + 1) % vals.len()].clone()));
            }
            if let Some(id) = other_id(state, key, v, table_hint) {
                return Some(id);
            }
            if let Some(d) = next_day(s) {
                return Some(Value::String(d));
            }
            Some(Value::String(format!("{s} (altered)")))
        }
        Value::Number(n) => {
            let k = key.to_ascii_lowercase();
            if (k.ends_with("id") || k.ends_with("ids"))
                && let Some(id) = other_id(state, key, v, table_hint)
            {
                return Some(id);
            }
            if let Some(i) = n.as_i64() {
                Some(Value::from(i.checked_add(1).unwrap_or(i - 1)))
            } else if let Some(u) = n.as_u64() {
                Some(Value::from(u - 1))
            } else {
                n.as_f64().map(|x| Value::from(x + 1.0))
            }
        }
    }
}

/// The singular stem of an argument key: `order_id` -> `order`, `line_item_ids` -> `line_item`.
fn key_stem(key: &str) -> String {
    let k = key.to_ascii_lowercase();
    let k = k
        .strip_suffix("_ids")
        .or_else(|| k.strip_suffix("_id"))
        .or_else(|| k.strip_suffix("id"))
        .unwrap_or(&k);
    k.trim_end_matches('_').to_string()
}

/// When `v` is the id of a row of some table (with at least two rows): the id of the
/// neighbouring row. Among several tables holding that id, the one the key names (or the
/// `table` argument names) wins, else the first in layout order.
fn other_id(state: &State, key: &str, v: &Value, table_hint: Option<usize>) -> Option<Value> {
    let stem = key_stem(key);
    let mut best: Option<(u8, usize, usize)> = None;
    for (ti, def) in state.layout().tables().iter().enumerate() {
        if def.id.is_none() {
            continue;
        }
        let Ok(rows) = state.rows(&def.name) else {
            continue;
        };
        if rows.len() < 2 {
            continue;
        }
        let Some(pos) = rows.iter().position(|r| def.id_matches(r, v)) else {
            continue;
        };
        let score = if table_hint == Some(ti) && key == "id" {
            3
        } else if !stem.is_empty() && def.name.contains(&stem) {
            2
        } else {
            1
        };
        if best.is_none_or(|(s, _, _)| score > s) {
            best = Some((score, ti, pos));
        }
    }
    let (_, ti, pos) = best?;
    let def = &state.layout().tables()[ti];
    let rows = state.rows(&def.name).ok()?;
    let same = |r: &tb_sandbox::Row| def.id_matches(r, v);
    rows.slice(pos + 1..)
        .iter()
        .chain(rows.slice(..pos).iter().rev())
        .find(|r| !same(r))
        .and_then(|r| def.row_id(r))
        .map(|id| match (v, id) {
            // Keep the argument's type: an id given as text stays text.
            (Value::String(_), Value::Number(n)) => Value::String(n.to_string()),
            (_, id) => id,
        })
}

/// `YYYY-MM-DD...` one day later, the rest of the text kept.
fn next_day(s: &str) -> Option<String> {
    let head = s.get(..10)?;
    let rest = &s[10..];
    if !(rest.is_empty() || rest.starts_with('T') || rest.starts_with(' ')) {
        return None;
    }
    let d = chrono::NaiveDate::parse_from_str(head, "%Y-%m-%d").ok()?;
    let next = d.succ_opt()?;
    Some(format!("{}{rest}", next.format("%Y-%m-%d")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use tb_sandbox::schema;
    use tb_sandbox::state::Layout;

    const TABLES: &str = "\
toolset shop tables=shop
table shop_orders file=shop/orders id=id
  id str
  status enum[\"open\",\"shipped\",\"cancelled\"] = \"open\"
  note str? = null
table shop_items file=shop/items id=id
  id int
  qty int = 1
";

    fn state() -> State {
        let doc = schema::parse(&[("t.tables", TABLES)]).unwrap();
        let mut s = State::empty(Layout::new(doc));
        let ctx = tb_sandbox::coerce::Ctx {
            now: "2025-10-01T13:00:00",
        };
        for id in ["O-1", "O-2", "O-3"] {
            s.insert("shop_orders", &json!({"id": id}), ctx).unwrap();
        }
        for id in [7, 8] {
            s.insert("shop_items", &json!({"id": id}), ctx).unwrap();
        }
        s
    }

    #[test]
    fn ids_enums_numbers_dates_texts() {
        let s = state();
        let status = s.layout().tables()[0]
            .model
            .field("status")
            .unwrap()
            .kind
            .clone();
        let alt = |k: &str, v: Value, kind: Option<&Kind>| alternative(&s, k, &v, kind, None);
        assert_eq!(alt("order_id", json!("O-1"), None), Some(json!("O-2")));
        assert_eq!(alt("order_id", json!("O-3"), None), Some(json!("O-2")));
        assert_eq!(alt("item_id", json!(8), None), Some(json!(7)));
        assert_eq!(alt("qty", json!(8), None), Some(json!(9)));
        assert_eq!(alt("amount", json!(1.5), None), Some(json!(2.5)));
        assert_eq!(alt("flag", json!(true), None), Some(json!(false)));
        assert_eq!(
            alt("status", json!("cancelled"), Some(status.base())),
            Some(json!("open"))
        );
        assert_eq!(
            alt("when", json!("2025-02-28T10:00:00Z"), None),
            Some(json!("2025-03-01T10:00:00Z"))
        );
        assert_eq!(
            alt("reason", json!("late"), None),
            Some(json!("late (altered)"))
        );
        assert_eq!(alt("x", Value::Null, None), None);
    }

    #[test]
    fn nested_objects_lists_and_table_rows() {
        let s = state();
        let args = json!({"table": "orders", "id": "O-2", "item": {"status": "open", "note": "hi"}, "tags": ["a", "b"]});
        let m = argument_mutations(&s, None, &args);
        let paths: Vec<&str> = m.iter().map(|x| x.path.as_str()).collect();
        assert_eq!(paths, ["table", "id", "item.status", "item.note", "tags"]);
        // The row's enum field, found through the `table` argument.
        assert_eq!(m[2].to, json!("shipped"));
        assert_eq!(m[2].args["item"]["status"], json!("shipped"));
        assert_eq!(m[2].args["id"], json!("O-2"));
        assert_eq!(m[1].to, json!("O-3"));
        assert_eq!(m[4].to, json!(["a"]));
    }

    proptest! {
        /// Every mutation changes exactly the value at its path and nothing else.
        #[test]
        fn a_mutation_changes_its_path_only(
            n in -1000i64..1000,
            text in "[a-z]{0,8}",
            flag in any::<bool>(),
        ) {
            let s = state();
            let args = json!({"a": n, "b": text, "c": {"d": flag, "e": [n, n]}});
            let muts = argument_mutations(&s, None, &args);
            prop_assert_eq!(muts.len(), 4);
            for m in &muts {
                prop_assert_ne!(&m.from, &m.to);
                prop_assert_ne!(&m.args, &args);
                // Put the golden value back: the golden arguments again.
                let mut back = m.args.clone();
                let path: Vec<Seg> = m.path.split('.').map(|k| Seg::Key(k.to_string())).collect();
                set_path(&mut back, &path, m.from.clone());
                prop_assert_eq!(&back, &args);
            }
        }
    }
}
