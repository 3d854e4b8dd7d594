//! The backend state of one session: tables of rows, as the reference's in-memory store keeps
//! them, with its lookup, create, update and delete rules, and the stable state and hash that
//! grade an attempt.
//!
//! A row is the JSON-mode dump of a validated model (field order = model order). Tables and
//! rows are shared copy-on-write: cloning a [`State`] copies one pointer per table, the first
//! write to a table copies its list of row pointers, and a write to a row copies that row
//! only. Each row remembers its canonical stable text and each table its stable row order, so
//! hashing and diffing a state that shares rows with one seen before touches only the rows
//! that changed.

use crate::coerce::{self, Ctx, ValidationError};
use crate::pyjson;
use crate::schema::{IdSpec, SchemaDoc, TableDef};
use serde_json::{Map, Value};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tb_python::{py_eq, py_str};

mod hash;
mod table;

use table::{Cell, Table};
pub use table::{Rows, RowsIter, SharedRow};

/// One row: field name to JSON-mode value, in model field order.
pub type Row = Map<String, Value>;

/// Errors of the state engine. Their text is what the reference's tools report.
#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// A table name that the domain does not have.
    #[error("Unknown table: {0}")]
    UnknownTable(String),
    /// `db.create` of an id that exists.
    #[error("Object with ID {0} already exists")]
    Duplicate(String),
    /// `db.update`/`db.delete` of an id that does not exist.
    #[error("Object with ID {0} does not exist")]
    Missing(String),
    /// A row that fails its model.
    #[error("{}", coerce::display_errors(.errors))]
    Invalid {
        /// Table.
        table: String,
        /// Pydantic-style errors.
        errors: Vec<ValidationError>,
    },
    /// `update`/`delete` on a table whose model has no id.
    #[error("Object must have a get_id() method for updates")]
    NoId,
    /// A data patch that did not apply cleanly (rows before the error stay applied).
    #[error("Data patch validation failed: {0}")]
    Patch(String),
    /// An initial-data file that cannot be read or parsed.
    #[error("{path}: {message}")]
    InitialData {
        /// File.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A domain's table layout with a name index. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Layout {
    doc: Arc<SchemaDoc>,
    index: Arc<foldhash::HashMap<String, usize>>,
    /// Table positions in the order the stable state's canonical text has them (names by
    /// code point; of two tables with one name, the later one, as a map insert keeps it).
    sorted: Arc<Vec<usize>>,
    /// `"name":[` of each table in `sorted` order.
    openings: Arc<Vec<String>>,
    /// sha256 states of recently hashed stable states (see [`State::hash`]).
    hashes: Arc<std::sync::Mutex<hash::HashCache>>,
}

impl std::fmt::Debug for pyjson::HashWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("HashWriter")
    }
}

impl Layout {
    /// Wraps a parsed schema document.
    pub fn new(doc: SchemaDoc) -> Self {
        let index = doc
            .tables
            .iter()
            .enumerate()
            .map(|(i, t)| (t.name.clone(), i))
            .collect();
        let mut sorted: Vec<usize> = (0..doc.tables.len()).collect();
        // Stable: of equal names the later table ends last; keep that one.
        sorted.sort_by(|&a, &b| {
            doc.tables[a]
                .name
                .as_bytes()
                .cmp(doc.tables[b].name.as_bytes())
        });
        let mut keep: Vec<usize> = Vec::with_capacity(sorted.len());
        for i in sorted {
            match keep.last_mut() {
                Some(last) if doc.tables[*last].name == doc.tables[i].name => *last = i,
                _ => keep.push(i),
            }
        }
        let openings = keep
            .iter()
            .map(|&i| {
                let mut s = String::new();
                pyjson::write_json_str(&mut s, &doc.tables[i].name);
                s.push_str(":[");
                s
            })
            .collect();
        Layout {
            doc: Arc::new(doc),
            index: Arc::new(index),
            sorted: Arc::new(keep),
            openings: Arc::new(openings),
            hashes: Arc::default(),
        }
    }

    /// The schema document.
    pub fn doc(&self) -> &SchemaDoc {
        &self.doc
    }

    /// Table definitions in store order.
    pub fn tables(&self) -> &[TableDef] {
        &self.doc.tables
    }

    /// A table's position.
    pub fn position(&self, table: &str) -> Option<usize> {
        self.index.get(table).copied()
    }

    /// A table's definition.
    pub fn table(&self, table: &str) -> Option<&TableDef> {
        self.position(table).map(|i| &self.doc.tables[i])
    }
}

/// How [`State::store_built_shared`] stores a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Store {
    /// `db.create`: refuses an existing id, appends.
    Insert,
    /// `db.update`: replaces the row with the same id.
    Replace,
}

/// The state of one session.
#[derive(Debug, Clone)]
pub struct State {
    layout: Layout,
    tables: Vec<Arc<Table>>,
    writes: u64,
}

impl TableDef {
    /// Writes a row's canonical stable text (unstable fields skipped, keys sorted, scalar
    /// lists sorted), the keys' order and text from this table's plan
    /// ([`pyjson::write_object_planned`]).
    pub(crate) fn write_stable_row<S: pyjson::Sink>(&self, out: &mut S, row: &Row) {
        let unstable = &self.unstable;
        pyjson::write_object_planned(
            out,
            &self.stable_keys,
            row.iter()
                .filter(|(k, _)| !unstable.iter().any(|u| u == *k)),
        );
    }

    /// `get_id()` of a row, if the model has one.
    pub fn row_id(&self, row: &Row) -> Option<Value> {
        match self.id.as_ref()? {
            IdSpec::Field(f) => Some(row.get(f).cloned().unwrap_or(Value::Null)),
            IdSpec::Template(t) => {
                let mut out = String::new();
                let mut rest = t.as_str();
                while let Some(open) = rest.find('{') {
                    out.push_str(&rest[..open]);
                    let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
                    let field = &rest[open + 1..close];
                    out.push_str(&py_str(row.get(field).unwrap_or(&Value::Null)));
                    rest = rest.get(close + 1..).unwrap_or("");
                }
                out.push_str(rest);
                Some(Value::String(out))
            }
        }
    }
    /// Whether `get_id()` of `row` equals `id` under Python equality, without building the id.
    /// False when the model has no id.
    pub fn id_matches(&self, row: &Row, id: &Value) -> bool {
        match &self.id {
            None => false,
            Some(IdSpec::Field(f)) => py_eq(first_or_get(row, f).unwrap_or(&Value::Null), id),
            Some(IdSpec::Template(t)) => {
                // The id is a str; only a str equals it.
                let Value::String(want) = id else {
                    return false;
                };
                let mut want = want.as_str();
                let mut rest = t.as_str();
                while let Some(open) = rest.find('{') {
                    let Some(tail) = want.strip_prefix(&rest[..open]) else {
                        return false;
                    };
                    want = tail;
                    let close = rest[open..].find('}').map_or(rest.len(), |c| open + c);
                    let field = &rest[open + 1..close];
                    let part = match row.get(field) {
                        Some(Value::String(v)) => std::borrow::Cow::Borrowed(v.as_str()),
                        other => std::borrow::Cow::Owned(py_str(other.unwrap_or(&Value::Null))),
                    };
                    let Some(tail) = want.strip_prefix(part.as_ref()) else {
                        return false;
                    };
                    want = tail;
                    rest = rest.get(close + 1..).unwrap_or("");
                }
                want == rest
            }
        }
    }
}

impl State {
    /// An empty state with every table of the layout.
    pub fn empty(layout: Layout) -> Self {
        let tables = layout
            .tables()
            .iter()
            .map(|_| Arc::new(Table::default()))
            .collect();
        State {
            layout,
            tables,
            writes: 0,
        }
    }

    /// Loads each table's initial rows from `<toolslib>/<toolset>/initial_data/<stem>.json`, validating each row.
    /// A missing file, or a file whose top level is not a list, gives no rows (as the reference).
    pub fn load_initial(layout: Layout, toolslib: &Path, ctx: Ctx<'_>) -> Result<Self, StateError> {
        let mut state = State::empty(layout.clone());
        for (i, t) in layout.tables().iter().enumerate() {
            // `file` is `<toolset path>/<stem>`; rows live in `<toolset path>/initial_data/<stem>.json`.
            let (dir, stem) = t.file.rsplit_once('/').unwrap_or(("", &t.file));
            let path = toolslib
                .join(dir)
                .join("initial_data")
                .join(format!("{stem}.json"));
            let text = match std::fs::read_to_string(&path) {
                Ok(s) => s,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => {
                    return Err(StateError::InitialData {
                        path,
                        message: e.to_string(),
                    });
                }
            };
            let v: Value = serde_json::from_str(&text).map_err(|e| StateError::InitialData {
                path: path.clone(),
                message: format!("invalid JSON: {e}"),
            })?;
            let Value::Array(items) = v else { continue };
            let mut rows = Vec::with_capacity(items.len());
            for (n, item) in items.iter().enumerate() {
                let row = coerce::validate_model(&t.model, item, ctx).map_err(|errors| {
                    StateError::InitialData {
                        path: path.clone(),
                        message: format!("row {n}: {}", coerce::display_errors(&errors)),
                    }
                })?;
                rows.push(row);
            }
            state.tables[i] = Arc::new(Table::from_validated_rows(rows));
        }
        Ok(state)
    }

    /// How many times a table was opened for writing (insert, replace, delete, patch, or
    /// [`State::set_row`]). A tool call that leaves it unchanged did not write.
    pub fn writes(&self) -> u64 {
        self.writes
    }

    /// Whether both states hold the very same tables (shared, not equal by content).
    pub fn same_tables(&self, other: &State) -> bool {
        Arc::ptr_eq(&self.layout.doc, &other.layout.doc)
            && self.tables.len() == other.tables.len()
            && self
                .tables
                .iter()
                .zip(&other.tables)
                .all(|(a, b)| Arc::ptr_eq(a, b))
    }

    /// The layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    fn pos(&self, table: &str) -> Result<usize, StateError> {
        self.layout
            .position(table)
            .ok_or_else(|| StateError::UnknownTable(table.to_string()))
    }

    /// The table at position `i` for writing: its row list copied first if another state
    /// shares it (the rows themselves stay shared).
    fn table_mut(&mut self, i: usize) -> &mut Table {
        self.writes += 1;
        Arc::make_mut(&mut self.tables[i])
    }

    /// A table's definition.
    pub fn def(&self, table: &str) -> Result<&TableDef, StateError> {
        Ok(&self.layout.tables()[self.pos(table)?])
    }

    /// All rows of a table, in store order.
    pub fn rows(&self, table: &str) -> Result<Rows<'_>, StateError> {
        Ok(Rows::new(self.tables[self.pos(table)?].cells()))
    }

    /// Puts `row` at position `pos` of a table without revalidation (the reference mutating a
    /// live object without `db.update`); a position past the end changes nothing. Counts as a
    /// write either way. Prefer [`State::insert`] and [`State::replace`].
    pub fn set_row(&mut self, table: &str, pos: usize, row: Row) -> Result<(), StateError> {
        let i = self.pos(table)?;
        let in_range = pos < self.tables[i].cells().len();
        let t = self.table_mut(i);
        if in_range {
            t.cells_mut()[pos] = Arc::new(Cell::new(row));
        }
        Ok(())
    }

    /// The row at `pos` of a table for writing in place, without revalidation (copied first
    /// if another state shares it). Counts as a write. Prefer [`State::insert`] and
    /// [`State::replace`].
    pub fn row_mut(&mut self, table: &str, pos: usize) -> Result<Option<&mut Row>, StateError> {
        let i = self.pos(table)?;
        Ok(self.table_mut(i).cell_mut(pos))
    }

    /// Number of rows.
    pub fn count(&self, table: &str) -> Result<usize, StateError> {
        Ok(self.rows(table)?.len())
    }

    /// `get_by_id`: the first row whose `get_id()` equals `id` (Python equality).
    pub fn get(&self, table: &str, id: &Value) -> Result<Option<&Row>, StateError> {
        let i = self.pos(table)?;
        let def = &self.layout.tables()[i];
        Ok(self.tables[i]
            .cells()
            .iter()
            .map(|c| &c.row)
            .find(|r| def.id_matches(r, id)))
    }

    /// The first row whose `field` equals `value` (Python equality).
    pub fn find_by(
        &self,
        table: &str,
        field: &str,
        value: &Value,
    ) -> Result<Option<&Row>, StateError> {
        Ok(self
            .rows(table)?
            .iter()
            .find(|r| r.get(field).is_some_and(|v| py_eq(v, value))))
    }

    /// Validates `input` against the table's model, with the given clock for `@now` defaults.
    pub fn validate_row(
        &self,
        table: &str,
        input: &Value,
        ctx: Ctx<'_>,
    ) -> Result<Row, StateError> {
        let def = self.def(table)?;
        coerce::validate_model(&def.model, input, ctx).map_err(|errors| StateError::Invalid {
            table: table.to_string(),
            errors,
        })
    }

    /// [`State::validate_row`] of the row at `pos` of `table` with `updates` set over it (a
    /// field's value replaced, a new key added; a later update of a key wins), validating
    /// only the updated fields: for a stored row that is its model's validated dump, untouched
    /// since (stored by load, a data patch, insert or replace), of a model that gives such a
    /// dump back unchanged ([`coerce::validate_update`]). `None` when that does not hold or
    /// anything fails: validate the merged row then (which gives the errors).
    pub fn validate_row_update(
        &self,
        table: &str,
        pos: usize,
        updates: &[(&str, &Value)],
        ctx: Ctx<'_>,
    ) -> Option<Row> {
        let i = self.layout.position(table)?;
        let cell = self.tables.get(i)?.cells().get(pos)?;
        if !cell.is_validated() {
            return None;
        }
        coerce::validate_update(&self.layout.tables().get(i)?.model, &cell.row, updates, ctx)
    }

    /// `db.create`: validates, refuses an existing id, appends. Returns the stored row.
    pub fn insert(&mut self, table: &str, input: &Value, ctx: Ctx<'_>) -> Result<Row, StateError> {
        let row = self.validate_row(table, input, ctx)?;
        self.insert_row(table, row)
    }

    /// `db.create(model)` ([`Store::Insert`]) or `db.update(model)` ([`Store::Replace`]) of a
    /// row built by [`State::validate_row`] for this table, the stored row shared with the
    /// result (not copied).
    pub fn store_built_shared(
        &mut self,
        how: Store,
        table: &str,
        row: Row,
        ctx: Ctx<'_>,
    ) -> Result<SharedRow, StateError> {
        let row = self.revalidated(table, row, ctx)?;
        match how {
            Store::Insert => self.insert_cell(table, row),
            Store::Replace => self.replace_cell(table, row),
        }
        .map(SharedRow::new)
    }

    /// A row built by [`State::validate_row`] as the reference stores it: it validates the
    /// model's JSON dump again; that is skipped when the model's validation gives a valid
    /// dump back unchanged ([`crate::schema::Model::revalidates_to_itself`]).
    fn revalidated(&self, table: &str, row: Row, ctx: Ctx<'_>) -> Result<Row, StateError> {
        if self.def(table)?.model.revalidates_to_itself() {
            Ok(row)
        } else {
            self.validate_row(table, &Value::Object(row), ctx)
        }
    }

    /// [`State::insert`] of a validated row.
    fn insert_row(&mut self, table: &str, row: Row) -> Result<Row, StateError> {
        self.insert_cell(table, row).map(|c| c.row.clone())
    }

    /// [`State::insert_row`], giving the stored cell.
    fn insert_cell(&mut self, table: &str, row: Row) -> Result<Arc<Cell>, StateError> {
        let i = self.pos(table)?;
        let def = &self.layout.tables()[i];
        if let Some(id) = def.row_id(&row)
            && self.tables[i]
                .cells()
                .iter()
                .any(|c| def.id_matches(&c.row, &id))
        {
            return Err(StateError::Duplicate(py_str(&id)));
        }
        let cell = Arc::new(Cell::validated(row));
        self.table_mut(i).cells_mut().push(Arc::clone(&cell));
        Ok(cell)
    }

    /// `db.update`: validates, replaces every row with the same id in place (the whole row).
    pub fn replace(&mut self, table: &str, input: &Value, ctx: Ctx<'_>) -> Result<Row, StateError> {
        let row = self.validate_row(table, input, ctx)?;
        self.replace_row(table, row)
    }

    /// [`State::replace`] of a validated row.
    fn replace_row(&mut self, table: &str, row: Row) -> Result<Row, StateError> {
        self.replace_cell(table, row).map(|c| c.row.clone())
    }

    /// [`State::replace_row`], giving the stored cell.
    fn replace_cell(&mut self, table: &str, row: Row) -> Result<Arc<Cell>, StateError> {
        let i = self.pos(table)?;
        let layout = self.layout.clone();
        let def = &layout.tables()[i];
        let id = def.row_id(&row).ok_or(StateError::NoId)?;
        let cell = Arc::new(Cell::validated(row));
        let mut found = false;
        for c in self.table_mut(i).cells_mut() {
            if def.id_matches(&c.row, &id) {
                *c = Arc::clone(&cell);
                found = true;
            }
        }
        if found {
            Ok(cell)
        } else {
            Err(StateError::Missing(py_str(&id)))
        }
    }

    /// `db.delete_by_id`: removes every row with that id.
    pub fn delete(&mut self, table: &str, id: &Value) -> Result<(), StateError> {
        let i = self.pos(table)?;
        let layout = self.layout.clone();
        let def = &layout.tables()[i];
        if def.id.is_none() {
            return Err(StateError::NoId);
        }
        let before = self.tables[i].cells().len();
        let rows = self.table_mut(i).cells_mut();
        rows.retain(|c| !def.id_matches(&c.row, id));
        if rows.len() == before {
            Err(StateError::Missing(py_str(id)))
        } else {
            Ok(())
        }
    }

    /// Applies a data patch (`{table: [rows]}`) as the reference does: tables in the patch's
    /// order, each row validated and upserted by id (whole-row replace in place, else append).
    /// An unknown table or an invalid row is collected; the rest of that table is skipped,
    /// other tables still apply, and one error lists everything at the end.
    pub fn apply_patch(&mut self, patch: &Value, ctx: Ctx<'_>) -> Result<(), StateError> {
        let Value::Object(tables) = patch else {
            return if patch.is_null() {
                Ok(())
            } else {
                Err(StateError::Patch("data_patch must be a mapping".into()))
            };
        };
        let mut errors = Vec::new();
        let layout = self.layout.clone();
        for (table, rows) in tables {
            let Some(i) = self.layout.position(table) else {
                errors.push(format!("Unknown table '{table}'"));
                continue;
            };
            let Value::Array(rows) = rows else {
                errors.push(format!("{table}: expected a list of rows"));
                continue;
            };
            let def = &layout.tables()[i];
            for (n, raw) in rows.iter().enumerate() {
                let row = match coerce::validate_model(&def.model, raw, ctx) {
                    Ok(r) => r,
                    Err(e) => {
                        errors.push(format!("{table}[{n}]: {}", coerce::display_errors(&e)));
                        break;
                    }
                };
                let id = def.row_id(&row);
                let target = self.table_mut(i).cells_mut();
                let existing = id
                    .as_ref()
                    .and_then(|id| target.iter().position(|c| def.id_matches(&c.row, id)));
                let cell = Arc::new(Cell::validated(row));
                match existing {
                    Some(p) => target[p] = cell,
                    None => target.push(cell),
                }
            }
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(StateError::Patch(errors.join("; ")))
        }
    }

    /// What this state (a patched copy of `base`) wrote over `base`, kept to build fresh states
    /// from ([`State::with_patched`]): per table that is not `base`'s (by pointer), its rows,
    /// shared. Each row's stable text is written now, so states built from it find it written
    /// and none of them writes it for another.
    pub(crate) fn patched_over(&self, base: &State) -> PatchedTables {
        let mut tables = Vec::new();
        for (i, (t, b)) in self.tables.iter().zip(&base.tables).enumerate() {
            if Arc::ptr_eq(t, b) {
                continue;
            }
            let def = &self.layout.tables()[i];
            for c in t.cells() {
                c.text(def);
            }
            tables.push((i, t.cells().to_vec().into_boxed_slice()));
        }
        PatchedTables {
            tables,
            writes: self.writes,
        }
    }

    /// A copy of this state (one pointer per table) with the tables of `p` put in place, each
    /// a new table of its own holding `p`'s rows (shared; a write copies the table for this
    /// state, a write to a row copies that row). `p` must come from
    /// [`State::patched_over`] with this state as the base.
    pub(crate) fn with_patched(&self, p: &PatchedTables) -> State {
        let mut tables = self.tables.clone();
        for (i, cells) in &p.tables {
            if let Some(t) = tables.get_mut(*i) {
                *t = Arc::new(Table::from_cells(cells.to_vec()));
            }
        }
        State {
            layout: self.layout.clone(),
            tables,
            writes: p.writes,
        }
    }

    /// The full state, unstable fields included: `{table: [rows]}` in store order.
    pub fn full_state(&self) -> Value {
        let mut out = Map::new();
        for (def, t) in self.layout.tables().iter().zip(&self.tables) {
            out.insert(
                def.name.clone(),
                Value::Array(
                    t.cells()
                        .iter()
                        .map(|c| Value::Object(c.row.clone()))
                        .collect(),
                ),
            );
        }
        Value::Object(out)
    }

    /// The stable state the reference hashes: unstable fields dropped, scalar lists sorted,
    /// rows sorted by `str(row["id"])` (stable, so tables without an `id` keep store order).
    pub fn stable_state(&self) -> Value {
        let mut out = Map::with_capacity(self.tables.len());
        for (def, t) in self.layout.tables().iter().zip(&self.tables) {
            out.insert(
                def.name.clone(),
                Value::Array(
                    t.stable_cells()
                        .map(|c| Value::Object(stable_row(def, &c.row)))
                        .collect(),
                ),
            );
        }
        Value::Object(out)
    }

    /// sha256 of the canonical JSON of the stable state: equal to
    /// `hash_stable(&self.stable_state())`, computed straight from the tables (nothing is
    /// copied). Each row's text is written once and kept with the row; the sha256 resumes from
    /// the last point where this state's text and a recently hashed state's text of the same
    /// layout still agree (the same rows of the same tables), so only the text after the first
    /// row that differs is hashed.
    pub fn hash(&self) -> String {
        let order = &self.layout.sorted;
        let defs: Vec<&TableDef> = order.iter().map(|&i| &self.layout.tables()[i]).collect();
        let tables: Vec<&Arc<Table>> = order.iter().map(|&i| &self.tables[i]).collect();
        hash::hash(&self.layout.hashes, &defs, &self.layout.openings, &tables)
    }

    /// Writes the canonical JSON of the stable state (the text [`State::hash`] hashes) straight
    /// from the tables: tables by name, rows by `str(id)` (stable), unstable fields skipped,
    /// keys sorted, scalar lists sorted as they are written.
    pub fn write_stable<S: pyjson::Sink>(&self, out: &mut S) {
        out.push_byte(b'{');
        for (n, &i) in self.layout.sorted.iter().enumerate() {
            if n > 0 {
                out.push_byte(b',');
            }
            out.push_str(&self.layout.openings[n]);
            let def = &self.layout.tables()[i];
            for (r, c) in self.tables[i].stable_cells().enumerate() {
                if r > 0 {
                    out.push_byte(b',');
                }
                out.push_str(c.text(def));
            }
            out.push_byte(b']');
        }
        out.push_byte(b'}');
    }

    /// The deep diff of the two stable states, `deep_diff(&self.stable_state(),
    /// &golden.stable_state())`, entry for entry: tables both states share (the same table, by
    /// pointer) are equal and skipped; in the others, rows both share or that are equal as
    /// stored have no entries, and only the remaining rows are compared, field by field in
    /// key order as their stable forms (nothing built), in the order the full diff visits them.
    pub fn stable_diff(&self, golden: &State) -> Vec<Value> {
        if !Arc::ptr_eq(&self.layout.doc, &golden.layout.doc)
            || self.tables.len() != golden.tables.len()
        {
            return crate::diff::deep_diff(&self.stable_state(), &golden.stable_state());
        }
        let mut out = Vec::new();
        let mut path = String::new();
        for &i in self.layout.sorted.iter() {
            let (ta, tb) = (&self.tables[i], &golden.tables[i]);
            if Arc::ptr_eq(ta, tb) {
                continue;
            }
            let def = &self.layout.tables()[i];
            // Rows equal as stored (strictly: 1 and 1.0 differ) have no entries; only the
            // others are compared deeply, as the stable state has them (read in place).
            let (oa, ob) = (ta.order(), tb.order());
            let (ca, cb) = (ta.cells(), tb.cells());
            path.clear();
            path.push_str(&def.name);
            crate::diff::diff_lists_lazy(
                (oa.len(), ob.len()),
                &mut path,
                &mut out,
                |r| {
                    let (x, y) = (&ca[oa[r]], &cb[ob[r]]);
                    Arc::ptr_eq(x, y) || rows_equal(&x.row, &y.row)
                },
                |r, path, out| {
                    crate::diff::diff_stable_rows(
                        &ca[oa[r]].row,
                        &cb[ob[r]].row,
                        &def.unstable,
                        &def.stable_keys,
                        path,
                        out,
                    );
                },
            );
        }
        out
    }
}

/// The tables a data patch wrote, with their rows after the patch (see
/// [`State::patched_over`]).
#[derive(Debug, Clone)]
pub(crate) struct PatchedTables {
    /// (table position, its rows in store order).
    tables: Vec<(usize, Box<[Arc<Cell>]>)>,
    /// The patched state's write count.
    writes: u64,
}

/// sha256 hex of `json.dumps(stable, sort_keys=True, separators=(",", ":"))`.
pub fn hash_stable(stable: &Value) -> String {
    let mut w = pyjson::HashWriter::new();
    pyjson::write_canonical(&mut w, stable);
    w.hex()
}

/// One row as the stable state holds it: unstable fields dropped, scalar lists sorted.
fn stable_row(def: &TableDef, r: &Row) -> Row {
    let mut m = Map::with_capacity(r.len());
    for (k, v) in r {
        if def.unstable.iter().any(|u| u == k) {
            continue;
        }
        let mut v = v.clone();
        sort_scalar_lists(&mut v);
        m.insert(k.clone(), v);
    }
    m
}

/// `a == b` for two rows (JSON equality, key order ignored), without hashing a key when
/// both hold the same keys in the same order (rows of one model always do).
fn rows_equal(a: &Row, b: &Row) -> bool {
    if a.len() != b.len() {
        return false;
    }
    for ((ka, va), (kb, vb)) in a.iter().zip(b) {
        if ka != kb {
            return a == b;
        }
        if !values_equal(va, vb) {
            return false;
        }
    }
    true
}

/// `a == b` for JSON values, objects compared as [`rows_equal`] does.
fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => rows_equal(x, y),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        _ => a == b,
    }
}

/// A row's `id` field.
fn id_field(r: &Row) -> Option<&Value> {
    first_or_get(r, "id")
}

/// `row.get(field)`, looking first at the row's first field (where most models keep their id)
/// before hashing the key.
fn first_or_get<'a>(r: &'a Row, field: &str) -> Option<&'a Value> {
    match r.iter().next() {
        Some((k, v)) if k == field => Some(v),
        _ => r.get(field),
    }
}

/// Sorts, at any depth, every non-empty list whose items are all str/int/float/bool.
pub fn sort_scalar_lists(v: &mut Value) {
    match v {
        Value::Object(m) => m.values_mut().for_each(sort_scalar_lists),
        Value::Array(items) => {
            let scalar = !items.is_empty()
                && items
                    .iter()
                    .all(|x| matches!(x, Value::String(_) | Value::Number(_) | Value::Bool(_)));
            if scalar {
                items.sort_by(tb_python::cmp::cmp_scalar);
            } else {
                items.iter_mut().for_each(sort_scalar_lists);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema;
    use serde_json::json;

    const CTX: Ctx<'static> = Ctx {
        now: "2025-10-01T13:00:05Z",
    };

    fn layout() -> Layout {
        let doc = schema::parse(&[(
            "t",
            "table a file=x/a id=id unstable=note\n  id str\n  n float = 0.0\n  note str? = null\n  tags list<str> = []\n\
             table b file=x/b id={k}_{p}\n  k str\n  p int\n",
        )])
        .unwrap();
        Layout::new(doc)
    }

    #[test]
    fn crud_follows_the_reference() {
        let mut s = State::empty(layout());
        s.insert(
            "a",
            &json!({"id": "9", "n": 2, "note": "x", "tags": ["b", "a"]}),
            CTX,
        )
        .unwrap();
        s.insert("a", &json!({"id": "10"}), CTX).unwrap();
        assert_eq!(
            s.insert("a", &json!({"id": "9"}), CTX)
                .unwrap_err()
                .to_string(),
            "Object with ID 9 already exists"
        );
        assert_eq!(s.get("a", &json!("9")).unwrap().unwrap()["n"], json!(2.0));
        s.replace("a", &json!({"id": "9", "n": 3}), CTX).unwrap();
        assert_eq!(
            s.rows("a").unwrap()[0]["note"],
            Value::Null,
            "whole row replaced"
        );
        assert_eq!(
            s.delete("a", &json!("11")).unwrap_err().to_string(),
            "Object with ID 11 does not exist"
        );
        s.insert("b", &json!({"k": "L", "p": 3}), CTX).unwrap();
        assert!(s.get("b", &json!("L_3")).unwrap().is_some());
        let stable = s.stable_state();
        // "10" sorts before "9"; unstable `note` dropped; scalar lists sorted.
        assert_eq!(stable["a"][0]["id"], json!("10"));
        assert!(stable["a"][1].get("note").is_none());
        assert_eq!(stable["a"][1]["tags"], json!([]));
    }

    #[test]
    fn patch_upserts_and_collects_errors() {
        let mut s = State::empty(layout());
        s.insert("a", &json!({"id": "1", "tags": ["z"]}), CTX)
            .unwrap();
        let err = s
            .apply_patch(&json!({"a": [{"id": "1", "n": 5}, {"id": "2"}], "nope": [], "b": [{"k": 1, "p": 1}, {"k": "x", "p": 2}]}), CTX)
            .unwrap_err();
        assert!(err.to_string().starts_with("Data patch validation failed: Unknown table 'nope'; b[0]: k: Input should be a valid string"), "{err}");
        assert_eq!(s.rows("a").unwrap().len(), 2);
        assert_eq!(s.rows("a").unwrap()[0]["tags"], json!([]));
        assert_eq!(s.rows("b").unwrap().len(), 0);
    }

    proptest::proptest! {
        #[test]
        fn hash_ignores_key_order_and_creation_order(ids in proptest::collection::btree_set("[a-z0-9]{1,4}", 1..8)) {
            let ids: Vec<String> = ids.into_iter().collect();
            let mut s1 = State::empty(layout());
            let mut s2 = State::empty(layout());
            for id in &ids {
                s1.insert("a", &json!({"id": id, "tags": ["q", "p"]}), CTX).unwrap();
            }
            for id in ids.iter().rev() {
                // Keys given in another order, list in another order.
                s2.insert("a", &json!({"tags": ["p", "q"], "id": id}), CTX).unwrap();
            }
            proptest::prop_assert_eq!(s1.hash(), s2.hash());
        }

        /// The streamed hash (with its per-table text and midstate caches) and the diff that
        /// skips shared tables and equal rows equal the full computation, after any edits.
        #[test]
        fn hash_and_stable_diff_equal_the_full_computation(
            base in proptest::collection::btree_map("[a-e]", (0i64..4, proptest::collection::vec("[p-s]", 0..3), "[xy]"), 0..6),
            edits in proptest::collection::vec((0u8..3, "[a-f]", 0i64..4, proptest::collection::vec("[p-s]", 0..3), "[xy]"), 0..8),
        ) {
            let mut s0 = State::empty(layout());
            for (id, (n, tags, note)) in &base {
                s0.insert("a", &json!({"id": id, "n": n, "tags": tags, "note": note}), CTX).unwrap();
            }
            s0.insert("b", &json!({"k": "K", "p": 1}), CTX).unwrap();
            proptest::prop_assert_eq!(s0.hash(), hash_stable(&s0.stable_state()));
            let mut s = s0.clone();
            for (op, id, n, tags, note) in &edits {
                let row = json!({"id": id, "n": n, "tags": tags, "note": note});
                let _ = match op {
                    0 => s.insert("a", &row, CTX).map(drop),
                    1 => s.replace("a", &row, CTX).map(drop),
                    _ => s.delete("a", &json!(id)),
                };
                proptest::prop_assert_eq!(s.hash(), hash_stable(&s.stable_state()));
            }
            proptest::prop_assert_eq!(
                s0.stable_diff(&s),
                crate::diff::deep_diff(&s0.stable_state(), &s.stable_state())
            );
            proptest::prop_assert_eq!(
                s.stable_diff(&s0),
                crate::diff::deep_diff(&s.stable_state(), &s0.stable_state())
            );
            proptest::prop_assert_eq!(s0.hash(), hash_stable(&s0.stable_state()));
        }

        /// Tables longer than a hash mark's span: a hash resumes from a mark within a table
        /// (the rows after it hashed again) and equals the full computation, for states that
        /// share rows with several hashed states in any order.
        #[test]
        fn hash_resumed_from_marks_equals_the_full_computation(
            base in proptest::collection::btree_map("[a-z]{1,2}", ("[p-s]{0,200}", 0i64..3), 0..40),
            edits in proptest::collection::vec((0u8..3, "[a-z]{1,2}", "[p-s]{0,200}", 0usize..3), 1..12),
        ) {
            let mut s0 = State::empty(layout());
            for (id, (tag, n)) in &base {
                s0.insert("a", &json!({"id": id, "n": n, "tags": [tag, "p"]}), CTX).unwrap();
            }
            proptest::prop_assert_eq!(s0.hash(), hash_stable(&s0.stable_state()));
            let mut states = vec![s0.clone(), s0.clone(), s0];
            for (op, id, tag, which) in &edits {
                let s = &mut states[*which];
                let row = json!({"id": id, "n": 1, "tags": [tag]});
                let _ = match op {
                    0 => s.insert("a", &row, CTX).map(drop),
                    1 => s.replace("a", &row, CTX).map(drop),
                    _ => s.delete("a", &json!(id)),
                };
                proptest::prop_assert_eq!(s.hash(), hash_stable(&s.stable_state()));
                for other in &states {
                    proptest::prop_assert_eq!(other.hash(), hash_stable(&other.stable_state()));
                }
            }
        }

        /// Copy on write per row: whatever one session writes (through the checked operations
        /// or the unchecked row access), the base and a sibling session keep their rows, their
        /// stable text and their hash; the writer's cached texts and orders follow its writes.
        #[test]
        fn a_write_through_a_shared_row_changes_no_other_state(
            base in proptest::collection::btree_map("[a-e]", (0i64..4, proptest::collection::vec("[p-s]", 0..3)), 1..6),
            edits in proptest::collection::vec((0u8..5, "[a-f]", 0i64..4, 0usize..7), 1..10),
        ) {
            let mut s0 = State::empty(layout());
            for (id, (n, tags)) in &base {
                s0.insert("a", &json!({"id": id, "n": n, "tags": tags}), CTX).unwrap();
            }
            // Texts and orders cached on the shared rows before anyone writes.
            let text = |s: &State| {
                let mut t = String::new();
                s.write_stable(&mut t);
                t
            };
            let base_full = s0.full_state();
            let base_text = text(&s0);
            let base_hash = s0.hash();
            let mut s1 = s0.clone();
            let s2 = s0.clone();
            for (op, id, n, pos) in &edits {
                let row = json!({"id": id, "n": n, "tags": ["q"]});
                let _ = match op {
                    0 => s1.insert("a", &row, CTX).map(drop),
                    1 => s1.replace("a", &row, CTX).map(drop),
                    2 => s1.delete("a", &json!(id)),
                    3 => {
                        let Value::Object(r) = row else { unreachable!() };
                        s1.set_row("a", *pos, r)
                    }
                    _ => s1.row_mut("a", *pos).map(|r| {
                        if let Some(r) = r {
                            r.insert("n".into(), json!(f64::from(u8::try_from(*n).unwrap_or(0)) + 0.5));
                        }
                    }),
                };
                // The writer's text (cached texts and orders reset by its writes) equals the
                // full computation. (Not hashed here: the hash cache would then share its
                // tables, and later writes would copy instead of writing in place.)
                let mut want = String::new();
                pyjson::write_canonical(&mut want, &s1.stable_state());
                proptest::prop_assert_eq!(text(&s1), want);
            }
            proptest::prop_assert_eq!(s1.hash(), hash_stable(&s1.stable_state()));
            for other in [&s0, &s2] {
                proptest::prop_assert_eq!(other.full_state(), base_full.clone());
                proptest::prop_assert_eq!(text(other), base_text.clone());
                proptest::prop_assert_eq!(other.hash(), base_hash.clone());
            }
            proptest::prop_assert_eq!(
                s1.stable_diff(&s2),
                crate::diff::deep_diff(&s1.stable_state(), &s2.stable_state())
            );
        }
    }

    #[test]
    fn a_row_written_in_place_forgets_its_text() {
        // The only holder of its table and row: the write happens in place.
        let mut s = State::empty(layout());
        s.insert("a", &json!({"id": "1", "n": 1}), CTX).unwrap();
        s.insert("a", &json!({"id": "0", "n": 2}), CTX).unwrap();
        let mut t = String::new();
        s.write_stable(&mut t);
        assert!(
            t.starts_with(r#"{"a":[{"id":"0","n":2.0,"tags":[]},{"id":"1""#),
            "{t}"
        );
        if let Some(r) = s.row_mut("a", 1).unwrap() {
            r.insert("id".into(), json!("2"));
        }
        let mut t = String::new();
        s.write_stable(&mut t);
        assert!(
            t.starts_with(r#"{"a":[{"id":"1","n":1.0,"tags":[]},{"id":"2""#),
            "{t}"
        );
        assert_eq!(s.hash(), hash_stable(&s.stable_state()));
        assert_eq!(s.writes(), 3);
    }
}
