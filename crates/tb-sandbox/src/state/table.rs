//! Row storage shared copy-on-write per row: a table is a list of shared rows, each with its
//! canonical stable text written once; the table remembers its stable-state row order.
//!
//! Cloning a table copies one pointer per row; writing one row copies that row alone. A row
//! (or table) reached for writing through [`Table::cell_mut`] (or `State`'s table access)
//! forgets what it remembered, so a cache is never stale.

use crate::schema::TableDef;
use serde_json::Value;
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use tb_python::py_str;

use super::Row;

/// One stored row and its canonical stable text (unstable fields dropped, keys sorted,
/// scalar lists sorted), written on first use.
#[derive(Debug)]
pub(crate) struct Cell {
    pub(crate) row: Row,
    text: OnceLock<Box<str>>,
    /// Whether the row is its table model's own validated dump, untouched since (stored by
    /// load, a data patch, insert or replace; not by [`super::State::set_row`] or a write in
    /// place): an update may then validate only the fields it changes.
    validated: bool,
}

impl Clone for Cell {
    /// A copy to write to: the text is written again when needed.
    fn clone(&self) -> Self {
        Cell {
            row: self.row.clone(),
            text: OnceLock::new(),
            validated: self.validated,
        }
    }
}

impl Cell {
    /// A row stored as given (not known to be a validated dump).
    pub(crate) fn new(row: Row) -> Self {
        Cell {
            row,
            text: OnceLock::new(),
            validated: false,
        }
    }

    /// A row that its table model's validation gave.
    pub(crate) fn validated(row: Row) -> Self {
        Cell {
            row,
            text: OnceLock::new(),
            validated: true,
        }
    }

    /// Whether the row is its table model's validated dump (see [`Cell::validated`]).
    pub(crate) fn is_validated(&self) -> bool {
        self.validated
    }

    /// The row's text in the stable state's canonical JSON, for a row of `def`.
    pub(crate) fn text(&self, def: &TableDef) -> &str {
        self.text.get_or_init(|| {
            // Written into a buffer kept per thread, then copied once at its length (no
            // regrowth, no shrinking copy).
            thread_local!(static BUF: std::cell::RefCell<String> = const {
                std::cell::RefCell::new(String::new())
            });
            let write = |s: &mut String| def.write_stable_row(s, &self.row);
            BUF.with(|b| {
                // (Not re-entered: writing a text writes no other text; a fresh buffer if so.)
                let Ok(mut s) = b.try_borrow_mut() else {
                    let mut s = String::new();
                    write(&mut s);
                    return s.into_boxed_str();
                };
                s.clear();
                write(&mut s);
                let text = Box::<str>::from(s.as_str());
                if s.capacity() > 1 << 20 {
                    *s = String::new();
                }
                text
            })
        })
    }
}

/// A stored row shared with the tables that hold it (not copied): what a tool's result may
/// show as it is ([`crate::Output`]). Reads as a [`Row`]; a later write to the state copies
/// the row it changes, so this one keeps what it showed.
#[derive(Clone)]
pub struct SharedRow(Arc<Cell>);

impl SharedRow {
    pub(crate) fn new(cell: Arc<Cell>) -> Self {
        SharedRow(cell)
    }

    /// The row, owned (copied if the state still holds it).
    pub fn into_row(self) -> Row {
        Arc::try_unwrap(self.0).map_or_else(|c| c.row.clone(), |c| c.row)
    }
}

impl std::ops::Deref for SharedRow {
    type Target = Row;
    fn deref(&self) -> &Row {
        &self.0.row
    }
}

impl std::fmt::Debug for SharedRow {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.row.fmt(f)
    }
}

/// One table: shared rows in store order, and their stable-state order once asked for.
#[derive(Debug, Default)]
pub(crate) struct Table {
    cells: Vec<Arc<Cell>>,
    order: OnceLock<Box<[usize]>>,
}

impl Clone for Table {
    /// A copy to write to: the rows are shared, the order is found again when needed.
    fn clone(&self) -> Self {
        Table {
            cells: self.cells.clone(),
            order: OnceLock::new(),
        }
    }
}

impl Table {
    /// A table of rows its model's validation gave.
    pub(crate) fn from_validated_rows(rows: Vec<Row>) -> Self {
        Table {
            cells: rows
                .into_iter()
                .map(|r| Arc::new(Cell::validated(r)))
                .collect(),
            order: OnceLock::new(),
        }
    }

    /// A table of these (shared) rows, its stable order not yet found.
    pub(crate) fn from_cells(cells: Vec<Arc<Cell>>) -> Self {
        Table {
            cells,
            order: OnceLock::new(),
        }
    }

    pub(crate) fn cells(&self) -> &[Arc<Cell>] {
        &self.cells
    }

    /// The rows for writing (the stable order is forgotten).
    pub(crate) fn cells_mut(&mut self) -> &mut Vec<Arc<Cell>> {
        self.order.take();
        &mut self.cells
    }

    /// The row at `pos` for writing: copied first if another table or state shares it.
    pub(crate) fn cell_mut(&mut self, pos: usize) -> Option<&mut Row> {
        let cell = self.cells_mut().get_mut(pos)?;
        let cell = Arc::make_mut(cell);
        cell.text.take();
        cell.validated = false;
        Some(&mut cell.row)
    }

    /// Row positions in stable-state order: stably sorted by `str(row["id"])` (`""` without an
    /// id).
    pub(crate) fn order(&self) -> &[usize] {
        self.order.get_or_init(|| {
            let mut keyed: Vec<(Cow<'_, str>, usize)> = self
                .cells
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let key = match super::id_field(&c.row) {
                        None => Cow::Borrowed(""),
                        Some(Value::String(s)) => Cow::Borrowed(s.as_str()),
                        Some(v) => Cow::Owned(py_str(v)),
                    };
                    (key, i)
                })
                .collect();
            keyed.sort_by(|a, b| a.0.cmp(&b.0));
            keyed.into_iter().map(|(_, i)| i).collect()
        })
    }

    /// The rows in stable-state order.
    pub(crate) fn stable_cells(&self) -> impl ExactSizeIterator<Item = &Arc<Cell>> + Clone {
        self.order().iter().map(|&i| &self.cells[i])
    }
}

/// The rows of one table, in store order: what [`super::State::rows`] lends. Indexing,
/// iteration and the usual slice methods give `&Row`.
#[derive(Debug, Clone, Copy)]
pub struct Rows<'a> {
    cells: &'a [Arc<Cell>],
}

impl<'a> Rows<'a> {
    pub(crate) fn new(cells: &'a [Arc<Cell>]) -> Self {
        Rows { cells }
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.cells.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.cells.is_empty()
    }

    /// The rows in store order.
    pub fn iter(&self) -> RowsIter<'a> {
        RowsIter(self.cells.iter())
    }

    /// The row at `i`.
    pub fn get(&self, i: usize) -> Option<&'a Row> {
        self.cells.get(i).map(|c| &c.row)
    }

    /// The row at `i`, shared (not copied).
    pub fn shared(&self, i: usize) -> Option<SharedRow> {
        self.cells.get(i).map(|c| SharedRow(Arc::clone(c)))
    }

    /// The first row.
    pub fn first(&self) -> Option<&'a Row> {
        self.get(0)
    }

    /// The last row.
    pub fn last(&self) -> Option<&'a Row> {
        self.cells.last().map(|c| &c.row)
    }

    /// Copies of all rows.
    pub fn to_vec(&self) -> Vec<Row> {
        self.iter().cloned().collect()
    }

    /// The rows in `range` (as slicing would give them).
    ///
    /// # Panics
    /// When the range is out of bounds, as slicing.
    #[must_use]
    pub fn slice(&self, range: impl std::ops::RangeBounds<usize>) -> Rows<'a> {
        let bounds = (range.start_bound().cloned(), range.end_bound().cloned());
        Rows {
            cells: &self.cells[bounds],
        }
    }

    /// Whether both are the very same rows of the very same table (shared, not equal by
    /// content).
    pub fn ptr_eq(&self, other: &Rows<'_>) -> bool {
        self.cells.len() == other.cells.len()
            && std::ptr::eq(self.cells.as_ptr(), other.cells.as_ptr())
    }
}

impl PartialEq for Rows<'_> {
    /// Row by row equality (rows shared by both are equal without a look).
    fn eq(&self, other: &Self) -> bool {
        self.cells.len() == other.cells.len()
            && self
                .cells
                .iter()
                .zip(other.cells)
                .all(|(a, b)| Arc::ptr_eq(a, b) || a.row == b.row)
    }
}

impl std::ops::Index<usize> for Rows<'_> {
    type Output = Row;
    fn index(&self, i: usize) -> &Row {
        &self.cells[i].row
    }
}

impl<'a> IntoIterator for Rows<'a> {
    type Item = &'a Row;
    type IntoIter = RowsIter<'a>;
    fn into_iter(self) -> RowsIter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &Rows<'a> {
    type Item = &'a Row;
    type IntoIter = RowsIter<'a>;
    fn into_iter(self) -> RowsIter<'a> {
        self.iter()
    }
}

/// Iterator over [`Rows`].
#[derive(Debug, Clone)]
pub struct RowsIter<'a>(std::slice::Iter<'a, Arc<Cell>>);

impl<'a> Iterator for RowsIter<'a> {
    type Item = &'a Row;
    #[inline]
    fn next(&mut self) -> Option<&'a Row> {
        self.0.next().map(|c| &c.row)
    }
    #[inline]
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
    #[inline]
    fn nth(&mut self, n: usize) -> Option<&'a Row> {
        self.0.nth(n).map(|c| &c.row)
    }
}

impl<'a> DoubleEndedIterator for RowsIter<'a> {
    #[inline]
    fn next_back(&mut self) -> Option<&'a Row> {
        self.0.next_back().map(|c| &c.row)
    }
}

impl ExactSizeIterator for RowsIter<'_> {}
impl std::iter::FusedIterator for RowsIter<'_> {}
