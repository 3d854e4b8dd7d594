//! The zendesk toolset in its five variants (generic for retail; booking, auto insurance,
//! neobank and consulting each have their own ticket fields and rules).
//!
//! One implementation serves all five: the tool declarations are one text with the variant's
//! custom ticket fields spliced in, and the functions read a small `Spec` of what differs
//! (tag normalisation, how `null` is treated on update, status-violation rows, the generic
//! OData comparator quirk). Behaviour follows the reference: count-based ids, fixed
//! timestamps, merge-on-update of the fields the caller actually sent, and the OData subset of
//! [`odata`].

pub mod odata;

use serde_json::{Map, Value, json};
use std::sync::OnceLock;
use tb_python::py_str;
use tb_sandbox::coerce::ValidationError;
use tb_sandbox::{Args, Fields, Output, Session, StateError, ToolError, ToolFn, Tools, wrap};

/// Which zendesk implementation a domain uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The generic toolset (retail).
    Generic,
    /// external_booking_v1.
    Booking,
    /// sandbox_auto_insurance.
    AutoInsurance,
    /// sandbox_neobank_support_v1.
    Neobank,
    /// sandbox_consulting.
    Consulting,
}

/// How ticket tags (and organization domain names) arrive and are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tags {
    /// Lists, stored as given.
    Plain,
    /// Lists; three housekeeping tags are dropped and the rest sorted case-insensitively for
    /// storage, while the result shows the tags as sent.
    Booking,
    /// Comma-separated text, split, trimmed, lower-cased and sorted for tickets.
    Neobank,
}

/// What differs between the variants.
#[derive(Debug, Clone, Copy)]
struct Spec {
    tags: Tags,
    /// Update turns an explicit `null` for tags/domain_names into `[]` (generic only).
    update_null_lists_to_empty: bool,
    /// A ticket created with a status other than `open` writes a violation row.
    status_violations: bool,
    /// OData `ne`/`ge`/`le` match every row (generic only; see [`odata`]).
    ne_ge_le_always_true: bool,
    /// The row models carry a `table_name` class attribute, visible to filters and sorting.
    class_table_name: bool,
    /// Custom ticket fields (declaration lines).
    ticket_fields: &'static str,
}

const fn spec(v: Variant) -> Spec {
    match v {
        Variant::Generic => Spec {
            tags: Tags::Plain,
            update_null_lists_to_empty: true,
            status_violations: false,
            ne_ge_le_always_true: true,
            class_table_name: false,
            ticket_fields: "",
        },
        Variant::Booking => Spec {
            tags: Tags::Booking,
            update_null_lists_to_empty: false,
            status_violations: false,
            ne_ge_le_always_true: false,
            class_table_name: true,
            ticket_fields: include_str!("booking.fields"),
        },
        Variant::AutoInsurance => Spec {
            tags: Tags::Plain,
            update_null_lists_to_empty: false,
            status_violations: true,
            ne_ge_le_always_true: false,
            class_table_name: true,
            ticket_fields: include_str!("auto.fields"),
        },
        Variant::Neobank => Spec {
            tags: Tags::Neobank,
            update_null_lists_to_empty: false,
            status_violations: true,
            ne_ge_le_always_true: false,
            class_table_name: false,
            ticket_fields: include_str!("neobank.fields"),
        },
        Variant::Consulting => Spec {
            tags: Tags::Plain,
            update_null_lists_to_empty: false,
            status_violations: true,
            ne_ge_le_always_true: false,
            class_table_name: true,
            ticket_fields: include_str!("consulting.fields"),
        },
    }
}

const VARIANTS: [Variant; 5] = [
    Variant::Generic,
    Variant::Booking,
    Variant::AutoInsurance,
    Variant::Neobank,
    Variant::Consulting,
];

/// The declarations of a variant: the shared text with its fields and kinds spliced in.
fn tools_text(v: Variant) -> &'static str {
    static TEXTS: OnceLock<Vec<String>> = OnceLock::new();
    let texts = TEXTS.get_or_init(|| {
        VARIANTS
            .iter()
            .map(|&v| {
                let sp = spec(v);
                let list = if sp.tags == Tags::Neobank {
                    "str?"
                } else {
                    "list<str>?"
                };
                include_str!("zendesk.tools")
                    .lines()
                    .map(|l| {
                        if l == "@TICKET_FIELDS@" {
                            sp.ticket_fields.trim_end().to_string()
                        } else {
                            l.replace("@TAGS@", list).replace("@DOMAINS@", list)
                        }
                    })
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect()
    });
    let i = VARIANTS.iter().position(|&x| x == v).unwrap_or(0);
    texts.get(i).map_or("", String::as_str)
}

/// The tool declarations text and the functions of a variant: the three tools whose rules
/// differ carry the variant's `Spec`.
pub fn toolkit(variant: Variant) -> (&'static str, Tools) {
    let sp = spec(variant);
    let mut t = Tools::new();
    // The three that read what the caller sent (its raw arguments); the four that show stored
    // rows share them with the result ([`Output`]).
    t.add_fn(
        "zendesk_create_item",
        ToolFn::with_raw_args(move |s: &mut Session, a: &Args, raw: &Value| {
            create_item(sp, s, a, raw)
        }),
    )
    .add("zendesk_delete_item", delete_item)
    .add_fn("zendesk_get_item", ToolFn::output(get_item))
    .add_fn(
        "zendesk_get_items",
        ToolFn::with_raw_args(move |s: &mut Session, a: &Args, raw: &Value| {
            get_items(sp, s, a, raw)
        }),
    )
    .add("zendesk_get_tables", get_tables)
    .add("zendesk_search_articles", search_articles)
    .add_fn(
        "zendesk_update_item",
        ToolFn::with_raw_args(move |s: &mut Session, a: &Args, raw: &Value| {
            update_item(sp, s, a, raw)
        }),
    );
    (tools_text(variant), t)
}

// ------------------------------------------------------------------------------------------
// Shared helpers
// ------------------------------------------------------------------------------------------

/// Timestamp of every create, and of updates to tables other than tickets.
const CREATED_AT: &str = "2025-10-01T13:00:05Z";
/// `updated_at` of an updated ticket.
const TICKET_UPDATED_AT: &str = "2025-10-01T13:00:10Z";
/// Id of the first entry of ticket_comments (count-based after it).
const TICKET_COMMENT_BASE: i64 = 23118465221916;

/// The tables the CRUD tools accept, with their row class names.
const CRUD: [(&str, &str); 5] = [
    ("tickets", "Ticket"),
    ("users", "User"),
    ("organizations", "Organization"),
    ("comments", "Comment"),
    ("ticket_comments", "TicketComment"),
];

/// The `table` argument, checked against the supported tables.
fn crud_table(a: &Args) -> Result<&str, ToolError> {
    let t = a.str_or_empty("table");
    if CRUD.iter().any(|(n, _)| *n == t) {
        Ok(t)
    } else {
        Err(ToolError::new(format!(
            "Unsupported table: '{t}'. Only tickets, users, organizations, comments, and ticket_comments are supported."
        )))
    }
}

fn store(table: &str) -> String {
    format!("zendesk_{table}")
}

/// How Python 3.11 formats a `TableName` member in an f-string (`TableName.TICKETS`).
fn enum_member(table: &str) -> String {
    format!("TableName.{}", table.to_uppercase())
}

/// Position of the first row whose `get_id()` (the id as text) equals `id`.
fn position(s: &Session, table: &str, id: &str) -> Result<Option<usize>, ToolError> {
    Ok(s.state
        .rows(&store(table))?
        .iter()
        .position(|r| match id_field(r) {
            Some(Value::String(v)) => v == id,
            Some(v) => py_str(v) == id,
            None => false,
        }))
}

/// A row's `id` (usually its first field: looked at before hashing the name).
fn id_field(r: &Map<String, Value>) -> Option<&Value> {
    match r.iter().next() {
        Some((k, v)) if k == "id" => Some(v),
        _ => r.get("id"),
    }
}

/// The fields of `item` the caller actually sent (`model_dump(exclude_unset=True)` of the
/// union member the input validated as), in model order, with their validated values.
fn sent_fields(a: &Args, raw: &Value) -> Map<String, Value> {
    sent_refs(a, raw)
        .into_iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// [`sent_fields`] without copying: the (field, validated value) pairs, in model order.
fn sent_refs<'a>(a: &'a Args, raw: &Value) -> Vec<(&'a String, &'a Value)> {
    let Some(validated) = a.get("item").and_then(Value::as_object) else {
        return Vec::new();
    };
    match raw.get("item").and_then(Value::as_object) {
        // The sent keys in a small set with a fast hasher (a SipHash lookup per model
        // field otherwise).
        Some(raw) => {
            let sent: foldhash::HashSet<&str> = raw.keys().map(String::as_str).collect();
            validated
                .iter()
                .filter(|(k, _)| sent.contains(k.as_str()))
                .collect()
        }
        // Called without raw arguments (direct calls): take every non-null value as sent.
        None => validated.iter().filter(|(_, v)| !v.is_null()).collect(),
    }
}

/// `str(ValidationError)` of pydantic for a row model built from `data` (the models' choices
/// are `Enum` classes).
fn pydantic_text(class: &str, data: &Map<String, Value>, errors: &[ValidationError]) -> String {
    let whole = Value::Object(data.clone());
    crate::pydantic::text(
        class,
        &crate::pydantic::from_coerce(errors, &whole, crate::pydantic::Choices::Enum),
    )
}

/// Builds the row model from `data` as `Model(**data)` does; a failure reads
/// `{prefix}: <pydantic text>`.
fn build_row(
    s: &Session,
    table: &str,
    data: Map<String, Value>,
    prefix: &str,
) -> Result<Map<String, Value>, ToolError> {
    let class = CRUD
        .iter()
        .find(|(n, _)| *n == table)
        .map_or("Model", |(_, c)| *c);
    let data = Value::Object(data);
    match s.state.validate_row(&store(table), &data, s.ctx()) {
        Ok(row) => Ok(row),
        Err(StateError::Invalid { errors, .. }) => {
            let Value::Object(data) = data else {
                return Err(ToolError::new(prefix.to_string()));
            };
            Err(ToolError::new(format!(
                "{prefix}: {}",
                pydantic_text(class, &data, &errors)
            )))
        }
        Err(e) => Err(e.into()),
    }
}

/// `[x.strip() for x in text.split(",")] if text else []`.
fn split_commas(text: &str) -> Value {
    if text.is_empty() {
        return json!([]);
    }
    Value::Array(
        text.split(',')
            .map(|p| Value::String(p.trim().to_string()))
            .collect(),
    )
}

/// The booking toolset's stored form of ticket tags.
fn booking_tags(tags: Option<&Value>) -> Value {
    const IGNORED: [&str; 3] = ["vip-customer", "repeat-issue", "hotel-partner-escalation"];
    let Some(Value::Array(items)) = tags else {
        return json!([]);
    };
    let mut kept: Vec<&str> = items
        .iter()
        .filter_map(Value::as_str)
        .filter(|t| !IGNORED.contains(&t.to_lowercase().as_str()))
        .collect();
    kept.sort_by(|a, b| (a.to_lowercase(), *a).cmp(&(b.to_lowercase(), *b)));
    json!(kept)
}

/// The neobank toolset's stored form of ticket tags.
fn neobank_tags(tags: Option<&Value>) -> Value {
    let Some(Value::Array(items)) = tags else {
        return json!([]);
    };
    let mut kept: Vec<String> = items
        .iter()
        .filter_map(Value::as_str)
        .map(|t| t.trim().to_lowercase())
        .collect();
    kept.sort();
    json!(kept)
}

// ------------------------------------------------------------------------------------------
// Tools
// ------------------------------------------------------------------------------------------

fn create_item(sp: Spec, s: &mut Session, a: &Args, raw: &Value) -> Result<Output, ToolError> {
    let table = crud_table(a)?;
    let count = s.state.count(&store(table))?;
    let new_id = if table == "ticket_comments" {
        Value::from(
            TICKET_COMMENT_BASE + i64::try_from(count).unwrap_or(i64::MAX - TICKET_COMMENT_BASE),
        )
    } else {
        Value::String((count + 1).to_string())
    };
    let mut data = sent_fields(a, raw);
    data.insert("id".into(), new_id.clone());
    let is_ticket = table == "tickets";
    let mut original_tags = None;
    match sp.tags {
        Tags::Booking if is_ticket => {
            original_tags = data.get("tags").filter(|t| !t.is_null()).cloned();
            let refund = data.value("refund_amount");
            if refund.is_null() || refund.as_f64() == Some(0.0) {
                data.insert("refund_amount".into(), json!(0.0));
            }
            let tags = booking_tags(data.get("tags"));
            data.insert("tags".into(), tags);
        }
        Tags::Neobank => {
            for key in ["tags", "domain_names"] {
                match data.get(key).cloned() {
                    Some(Value::Null) => {
                        data.insert(key.into(), json!([]));
                    }
                    Some(Value::String(text)) => {
                        data.insert(key.into(), split_commas(&text));
                    }
                    _ => {}
                }
                if key == "tags" && is_ticket {
                    let tags = neobank_tags(data.get("tags"));
                    data.insert("tags".into(), tags);
                }
            }
        }
        _ => {}
    }
    if sp.tags != Tags::Neobank {
        let list_field = match table {
            "tickets" => Some("tags"),
            "organizations" => Some("domain_names"),
            _ => None,
        };
        if let Some(f) = list_field
            && data.get(f).is_some_and(Value::is_null)
        {
            data.insert(f.into(), json!([]));
        }
    }
    if !data.contains_key("created_at") {
        data.insert("created_at".into(), json!(CREATED_AT));
    }
    if table != "ticket_comments" && !data.contains_key("updated_at") {
        data.insert("updated_at".into(), json!(CREATED_AT));
    }
    if table == "ticket_comments" {
        if !data.contains_key("key") {
            data.insert("key".into(), Value::String(py_str(&new_id)));
        }
        if !data.contains_key("html_body")
            && let Some(body) = data.get("body").map(py_str)
        {
            data.insert(
                "html_body".into(),
                Value::String(format!(
                    "<div class=\"zd-comment\" dir=\"auto\"><p dir=\"auto\">{body}</p></div>"
                )),
            );
        }
    }
    let row = build_row(s, table, data, "Failed to create item")?;
    let row = s.insert_built_shared(&store(table), row)?;
    if sp.status_violations && is_ticket {
        let status = row.value("status");
        if status != json!("open") {
            let n = s.state.count("zendesk_ticket_status_violations")?;
            s.insert(
                "zendesk_ticket_status_violations",
                &json!({"id": format!("VIOLATION-{}", n + 1), "ticket_id": row.value("id"), "created_status": status, "created_at": CREATED_AT}),
            )?;
        }
    }
    Ok(item_result(row, original_tags))
}

/// `{"item": row}`: the stored row as it is, or a copy showing the tags as sent.
fn item_result(row: tb_sandbox::SharedRow, original_tags: Option<Value>) -> Output {
    match original_tags {
        None => Output::wrap("item", Output::Row(row)),
        Some(tags) => {
            let mut out = row.into_row();
            out.insert(
                "tags".into(),
                if tags.is_array() { tags } else { json!([]) },
            );
            Output::Value(wrap("item", out))
        }
    }
}

fn get_item(s: &mut Session, a: &Args) -> Result<Output, ToolError> {
    let table = crud_table(a)?;
    let id = a.str_or_empty("id");
    let pos = position(s, table, id)?.ok_or_else(|| {
        ToolError::new(format!(
            "Item with ID '{id}' not found in table '{}'",
            enum_member(table)
        ))
    })?;
    Ok(match s.state.rows(&store(table))?.shared(pos) {
        Some(row) => Output::wrap("item", Output::Row(row)),
        None => Output::Value(wrap("item", Value::Object(Map::new()))),
    })
}

fn delete_item(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let table = crud_table(a)?;
    if table == "ticket_comments" {
        return Err(ToolError::new(
            "The value is not updatable. Ticket comments cannot be deleted.",
        ));
    }
    let id = a.str_or_empty("id");
    if position(s, table, id)?.is_none() {
        return Err(ToolError::new(format!(
            "Item with ID '{id}' not found in table '{}'",
            enum_member(table)
        )));
    }
    s.state
        .delete(&store(table), &Value::String(id.to_string()))?;
    Ok(json!({ "success": true }))
}

fn update_item(sp: Spec, s: &mut Session, a: &Args, raw: &Value) -> Result<Output, ToolError> {
    let table = crud_table(a)?;
    if table == "ticket_comments" {
        return Err(ToolError::new(
            "The value is not updatable. Ticket comments cannot be modified.",
        ));
    }
    let id = a.str_or_empty("id");
    let pos = position(s, table, id)?.ok_or_else(|| {
        ToolError::new(format!("Item with ID '{id}' not found in table '{table}'"))
    })?;
    let list_field = match table {
        "tickets" => Some("tags"),
        "organizations" => Some("domain_names"),
        _ => None,
    };
    let is_ticket = table == "tickets";
    let mut original_tags = None;
    // The sent fields are distinct keys: a list in their order is the map the reference builds.
    let mut updates: Vec<(String, Value)> = Vec::new();
    for (k, v) in sent_refs(a, raw) {
        if v.is_null() {
            if sp.update_null_lists_to_empty && list_field == Some(k.as_str()) {
                updates.push((k.clone(), json!([])));
            }
            continue;
        }
        if sp.tags == Tags::Booking && is_ticket && k == "tags" {
            original_tags = Some(v.clone());
            updates.push((k.clone(), booking_tags(Some(v))));
            continue;
        }
        updates.push((k.clone(), v.clone()));
    }
    if sp.tags == Tags::Neobank {
        let slot =
            |updates: &[(String, Value)], key: &str| updates.iter().position(|(k, _)| k == key);
        for key in ["tags", "domain_names"] {
            if let Some(i) = slot(&updates, key)
                && let Some((_, v)) = updates.get_mut(i)
                && let Value::String(text) = v
            {
                *v = split_commas(text);
            }
        }
        if is_ticket
            && let Some(i) = slot(&updates, "tags")
            && let Some((_, v)) = updates.get_mut(i)
        {
            let tags = neobank_tags(Some(&*v));
            *v = tags;
        }
    }
    updates.push((
        "updated_at".into(),
        json!(if is_ticket {
            TICKET_UPDATED_AT
        } else {
            CREATED_AT
        }),
    ));
    // The stored row with the updates set over it, validated as `Model(**data)`: only the
    // updated fields when the stored row is a validated dump (the others would validate to
    // themselves); the merged row in full otherwise, and for the error text.
    let refs: Vec<(&str, &Value)> = updates.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let row = if let Some(row) = s
        .state
        .validate_row_update(&store(table), pos, &refs, s.ctx())
    {
        row
    } else {
        let mut data = s
            .state
            .rows(&store(table))?
            .get(pos)
            .cloned()
            .unwrap_or_default();
        for (k, v) in updates {
            data.insert(k, v);
        }
        build_row(s, table, data, "Failed to update item")?
    };
    let row = s.replace_built_shared(&store(table), row)?;
    Ok(item_result(row, original_tags))
}

fn get_tables(_s: &mut Session, _a: &Args) -> Result<Value, ToolError> {
    const TABLES: [(&str, &str); 18] = [
        ("activities", "Activities"),
        ("articles", "Articles"),
        ("groups", "Groups"),
        ("group_memberships", "Group Memberships"),
        ("organizations", "Organizations"),
        ("requests", "Requests"),
        ("satisfaction_ratings", "Satisfaction Ratings"),
        ("sessions", "Sessions"),
        ("tags", "Tags"),
        ("targets", "Targets"),
        ("tickets", "Tickets"),
        ("ticket_audits", "Ticket Audits"),
        ("ticket_comments", "Ticket Comments"),
        ("ticket_fields", "Ticket Fields"),
        ("ticket_metrics", "Ticket Metrics"),
        ("triggers", "Triggers"),
        ("users", "Users"),
        ("views", "Views"),
    ];
    Ok(
        json!({ "value": TABLES.iter().map(|(n, d)| json!({"Name": n, "DisplayName": d})).collect::<Vec<_>>() }),
    )
}

/// A `get_items` paging/query argument: by its `$` alias, else by its plain name
/// (the reference's input accepts both; the alias wins). `alias` is `$<name>`.
fn query_arg(s: &Session, a: &Args, raw: &Value, alias: &str) -> Result<Value, ToolError> {
    let name = alias.strip_prefix('$').unwrap_or(alias);
    let raw = raw.as_object();
    if raw.is_none_or(|r| r.contains_key(alias)) {
        return Ok(a.get(alias).cloned().unwrap_or(Value::Null));
    }
    let Some(v) = raw.and_then(|r| r.get(name)) else {
        return Ok(Value::Null);
    };
    let kind = s
        .domain
        .tool("zendesk_get_items")
        .and_then(|t| t.decl.input.field(alias).map(|f| f.kind.clone()))
        .ok_or_else(|| ToolError::new(format!("zendesk_get_items has no {alias}")))?;
    tb_sandbox::coerce::validate(&kind, v, s.ctx()).map_err(|errs| {
        let details: Vec<String> = errs
            .into_iter()
            .map(|mut e| {
                e.loc.insert(0, name.to_string());
                e.display()
            })
            .collect();
        ToolError::with_details("Input validation failed", &details)
    })
}

/// `getattr(row, name, default)` on the row model.
fn attribute(row: &Map<String, Value>, name: &str, table: &str, sp: Spec, default: Value) -> Value {
    match row.get(name) {
        Some(v) => v.clone(),
        None if sp.class_table_name && name == "table_name" => Value::String(table.to_string()),
        None => default,
    }
}

fn get_items(sp: Spec, s: &mut Session, a: &Args, raw: &Value) -> Result<Output, ToolError> {
    let table = crud_table(a)?;
    let filter = query_arg(s, a, raw, "$filter")?;
    let orderby = query_arg(s, a, raw, "$orderby")?;
    let skip = query_arg(s, a, raw, "$skip")?;
    let top = query_arg(s, a, raw, "$top")?;
    let select = query_arg(s, a, raw, "$select")?;
    let all = s.state.rows(&store(table))?;
    // Row positions, filtered and ordered; the rows shown are shared with the result.
    let mut rows: Vec<usize> = (0..all.len()).collect();
    if let Some(f) = filter.as_str().filter(|f| !f.is_empty()) {
        let fail =
            |e: odata::FilterError| ToolError::new(format!("Failed to parse OData filter: {e}"));
        let ast = odata::parse(f).map_err(fail)?;
        let mut kept = Vec::new();
        for (i, r) in all.iter().enumerate() {
            let lookup = |name: &str| attribute(r, name, table, sp, Value::Null);
            let ev = odata::Evaluator {
                lookup: &lookup,
                ne_ge_le_always_true: sp.ne_ge_le_always_true,
            };
            if ev.eval(&ast).map_err(fail)? {
                kept.push(i);
            }
        }
        rows = kept;
    }
    if let Some(o) = orderby.as_str() {
        let mut words = o.split_whitespace();
        if let Some(field) = words.next() {
            let desc = words.next().is_some_and(|w| w.to_lowercase() == "desc");
            let keys: Vec<Value> = rows
                .iter()
                .filter_map(|&i| all.get(i))
                .map(|r| attribute(r, field, table, sp, json!("")))
                .collect();
            if let Some(order) = sorted_order(&keys, desc) {
                rows = order
                    .into_iter()
                    .filter_map(|i| rows.get(i).copied())
                    .collect();
            }
        }
    }
    let skip = skip
        .as_u64()
        .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let top = top
        .as_u64()
        .filter(|n| *n > 0)
        .map_or(512, |n| usize::try_from(n.min(1000)).unwrap_or(1000));
    let fields: Option<Vec<String>> = select
        .as_str()
        .filter(|t| !t.is_empty())
        .map(|t| t.split(',').map(|f| f.trim().to_string()).collect());
    let shown = rows.into_iter().skip(skip).take(top);
    let items: Vec<Output> = match &fields {
        Some(f) => shown
            .filter_map(|i| all.get(i))
            .map(|r| {
                Output::Value(Value::Object(
                    r.iter()
                        .filter(|(k, _)| f.iter().any(|x| x == *k))
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ))
            })
            .collect(),
        None => shown
            .filter_map(|i| all.shared(i))
            .map(Output::Row)
            .collect(),
    };
    Ok(Output::wrap("items", Output::List(items)))
}

/// Python's `sorted(range(n), key=keys.__getitem__, reverse=desc)`, or None when Python's sort
/// would raise (incomparable keys), which leaves the order unchanged.
fn sorted_order(keys: &[Value], desc: bool) -> Option<Vec<usize>> {
    if keys.len() < 2 {
        return Some((0..keys.len()).collect());
    }
    let mut failed = false;
    let mut idx: Vec<usize> = (0..keys.len()).collect();
    idx.sort_by(|&i, &j| {
        let (Some(x), Some(y)) = (keys.get(i), keys.get(j)) else {
            return std::cmp::Ordering::Equal;
        };
        let o = tb_python::py_order(x, y).unwrap_or_else(|| {
            failed = true;
            std::cmp::Ordering::Equal
        });
        if desc { o.reverse() } else { o }
    });
    // Python compares every element at least once when sorting two or more; a None or a
    // mismatched type anywhere raises.
    let first_kind = keys.first().map(kind_rank);
    if keys
        .iter()
        .any(|k| k.is_null() || Some(kind_rank(k)) != first_kind)
    {
        failed = true;
    }
    (!failed).then_some(idx)
}

fn kind_rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) | Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
    }
}

/// Splits a search query into quoted phrases, plain terms and excluded terms/phrases.
fn parse_query(query: &str) -> (Vec<String>, Vec<String>, Vec<String>) {
    let (mut phrases, mut negatives) = (Vec::new(), Vec::new());
    let chars: Vec<char> = query.chars().collect();
    let mut remaining = String::new();
    let mut i = 0;
    while i < chars.len() {
        let neg = chars.get(i) == Some(&'-') && chars.get(i + 1) == Some(&'"');
        let open = if neg { i + 1 } else { i };
        if chars.get(open) == Some(&'"') {
            // `"([^"]+)"`: the next quote closes; an empty pair does not match here.
            if let Some(close) = chars
                .iter()
                .skip(open + 1)
                .position(|c| *c == '"')
                .map(|p| p + open + 1)
                && close > open + 1
            {
                {
                    let content: String = chars[open + 1..close].iter().collect();
                    let content = content.trim().to_lowercase();
                    if neg {
                        negatives.push(content);
                    } else {
                        phrases.push(content);
                    }
                    i = close + 1;
                    continue;
                }
            }
        }
        if let Some(c) = chars.get(i) {
            remaining.push(*c);
        }
        i += 1;
    }
    // `-(\w+)` terms are exclusions and leave the text.
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let rc: Vec<char> = remaining.chars().collect();
    let mut rest = String::new();
    let mut j = 0;
    while j < rc.len() {
        if rc[j] == '-' && rc.get(j + 1).is_some_and(|c| word(*c)) {
            let mut k = j + 1;
            while rc.get(k).is_some_and(|c| word(*c)) {
                k += 1;
            }
            negatives.push(
                rc[j + 1..k]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_lowercase(),
            );
            j = k;
            continue;
        }
        rest.push(rc[j]);
        j += 1;
    }
    let terms = rest
        .split_whitespace()
        .map(|t| t.trim().to_lowercase().replace('\'', ""))
        .filter(|t| !t.is_empty())
        .collect();
    (phrases, terms, negatives)
}

fn search_articles(s: &mut Session, a: &Args) -> Result<Value, ToolError> {
    let (phrases, terms, negatives) = parse_query(a.str_or_empty("query"));
    let opt_int = |k: &str| a.get(k).and_then(Value::as_i64).filter(|n| *n != 0);
    let locale = a
        .get("locale")
        .and_then(Value::as_str)
        .filter(|l| !l.is_empty());
    let brand = opt_int("brand_id");
    let multibrand = a
        .get("multibrand")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let (category, section) = (opt_int("category"), opt_int("section"));
    let labels: Option<Vec<String>> = a
        .get("label_names")
        .and_then(Value::as_str)
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(|x| x.trim().to_string()).collect());
    let mut results = Vec::new();
    for art in s.state.rows("zendesk_articles")? {
        let text =
            format!("{} {}", art.str_or_empty("title"), art.str_or_empty("body")).to_lowercase();
        if negatives.iter().any(|n| text.contains(n.as_str()))
            || !phrases.iter().all(|p| text.contains(p.as_str()))
        {
            continue;
        }
        let hits = terms.iter().filter(|t| text.contains(t.as_str())).count();
        let ok = match terms.len() {
            0 => true,
            n if n <= 2 => hits == n,
            n => hits as f64 >= (0.4 * n as f64).ceil(),
        };
        if !ok {
            continue;
        }
        let int_eq = |field: &str, want: Option<i64>| {
            want.is_none_or(|w| art.get(field).and_then(Value::as_i64) == Some(w))
        };
        if locale.is_some_and(|l| art.get("locale").and_then(Value::as_str) != Some(l)) {
            continue;
        }
        if !multibrand && !int_eq("brand_id", brand) {
            continue;
        }
        if !int_eq("category_id", category) || !int_eq("section_id", section) {
            continue;
        }
        if let Some(ls) = &labels {
            let have = art.get("label_names").and_then(Value::as_array);
            if !ls
                .iter()
                .any(|l| have.is_some_and(|h| h.iter().any(|x| x.as_str() == Some(l.as_str()))))
            {
                continue;
            }
        }
        results.push(Value::Object(art.clone()));
        if results.len() == 1000 {
            break;
        }
    }
    Ok(wrap("results", results))
}

#[cfg(test)]
mod tests;
