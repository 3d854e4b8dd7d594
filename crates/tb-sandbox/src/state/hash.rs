//! The stable state's sha256, resumed from what earlier hashes of the same layout left behind.
//!
//! The canonical text of a stable state is `{` + its tables' texts (`"name":[row,row]`) in a
//! fixed order, joined by `,`, + `}`; each row's text is fixed by the row alone (and written once,
//! see [`super::table::Cell`]). So two states whose texts begin with the same rows of the same
//! tables share the sha256 state after them, and a hash resumes where its state first differs
//! from a state hashed before: a session's first hash resumes after the base rows before the
//! first row its data patch wrote, and its hash after some calls after the last row both
//! states share. Only the text after that point is fed to sha256.
//!
//! Per hashed state the cache keeps a [`Chain`]: per table, the table itself (shared, so
//! pointer equality means the very same rows) and the sha256 states after the table's opening,
//! after a row every [`MARK_BYTES`] of text or so (marks, in stable order) and after its
//! closing bracket. A hash resumes from the last mark at or before the first row that
//! differs, so it hashes again at most about `MARK_BYTES` of shared text, and keeps no sha256
//! state per row. Chains share the segments of the tables they share.

use super::table::Table;
use crate::schema::TableDef;
use sha2::{Digest, Sha256};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The sha256 states around one table of a hashed state.
#[derive(Debug)]
struct Seg {
    /// The table (held, so its rows keep their addresses while compared by pointer).
    table: Arc<Table>,
    /// After the table's opening (`{` or `,`, its name, `:[`).
    head: Sha256,
    /// `(n, state)`: the state after the first `n` rows in stable order (the `,` before each
    /// row but the first included), about every [`MARK_BYTES`] of text; `n` increasing.
    marks: Vec<(usize, Sha256)>,
    /// After the closing `]`.
    end: Sha256,
}

/// One hashed state: a segment per table in canonical order, and the digest.
#[derive(Debug)]
struct Chain {
    segs: Vec<Arc<Seg>>,
    hex: String,
    /// When it was last made or resumed from (for eviction).
    used: u64,
}

/// What [`State::hash`](super::State::hash) remembers between calls, per layout.
#[derive(Debug, Default)]
pub(crate) struct HashCache {
    chains: Vec<Chain>,
    tick: u64,
}

impl HashCache {
    /// Chains kept; past it the least recently used one goes.
    const MAX_CHAINS: usize = 32;
}

fn lock(c: &Mutex<HashCache>) -> MutexGuard<'_, HashCache> {
    c.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Text hashed between two marks of a table (at least; a mark follows a whole row).
const MARK_BYTES: usize = 1024;

/// Leading rows of `a` and `b` in stable order that are the very same rows.
fn common_rows(a: &Table, b: &Table) -> usize {
    a.stable_cells()
        .zip(b.stable_cells())
        .take_while(|(x, y)| Arc::ptr_eq(x, y))
        .count()
}

/// Where a state's text first differs from a chain's: after `tables` whole tables and `rows`
/// rows of the next; `None` when the whole text is the same.
fn divergence(chain: &Chain, tables: &[&Arc<Table>]) -> Option<(usize, usize)> {
    for (k, (seg, t)) in chain.segs.iter().zip(tables).enumerate() {
        if Arc::ptr_eq(&seg.table, t) {
            continue;
        }
        let j = common_rows(&seg.table, t);
        if j == seg.table.cells().len() && j == t.cells().len() {
            continue;
        }
        return Some((k, j));
    }
    None
}

/// Where hashing of a table starts.
enum Start {
    /// Before its opening, in this state.
    Before(Sha256),
    /// After its opening, at the last of `marks` (the marks of a chain's table that shares the
    /// rows they cover).
    Within {
        head: Sha256,
        marks: Vec<(usize, Sha256)>,
    },
}

fn hash_table(def: &TableDef, opening: &str, first: bool, t: &Arc<Table>, start: Start) -> Seg {
    let (head, mut marks) = match start {
        Start::Before(mut h) => {
            h.update(if first { b"{" } else { b"," });
            h.update(opening.as_bytes());
            (h, Vec::new())
        }
        Start::Within { head, marks } => (head, marks),
    };
    let (from, mut h) = match marks.last() {
        Some((n, h)) => (*n, h.clone()),
        None => (0, head.clone()),
    };
    let mut since = 0;
    for (r, cell) in t.stable_cells().enumerate().skip(from) {
        if r > 0 {
            h.update(b",");
        }
        let text = cell.text(def);
        h.update(text.as_bytes());
        since += text.len() + 1;
        if since >= MARK_BYTES {
            marks.push((r + 1, h.clone()));
            since = 0;
        }
    }
    h.update(b"]");
    Seg {
        table: t.clone(),
        head,
        marks,
        end: h,
    }
}

fn hex(h: Sha256) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = h.finalize();
    let mut out = String::with_capacity(64);
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 15)]));
    }
    out
}

/// sha256 hex of the canonical text of the stable state whose tables, in canonical order, are
/// `tables` (definitions `defs`, openings `"name":[` in `openings`).
pub(crate) fn hash(
    cache: &Mutex<HashCache>,
    defs: &[&TableDef],
    openings: &[String],
    tables: &[&Arc<Table>],
) -> String {
    if tables.is_empty() {
        return hex(Sha256::new_with_prefix(b"{}"));
    }
    // Row orders are found outside the lock (nothing to do for tables seen before).
    for t in tables {
        t.order();
    }
    let (mut segs, start, k) = {
        let mut c = lock(cache);
        c.tick += 1;
        let tick = c.tick;
        let mut best: Option<(usize, (usize, usize))> = None;
        let mut full = None;
        for (i, chain) in c.chains.iter().enumerate() {
            if chain.segs.len() != tables.len() {
                continue;
            }
            let Some(at) = divergence(chain, tables) else {
                full = Some(i);
                break;
            };
            let better = best
                .is_none_or(|(b, bat)| at > bat || (at == bat && chain.used > c.chains[b].used));
            if better {
                best = Some((i, at));
            }
        }
        if let Some(i) = full {
            c.chains[i].used = tick;
            return c.chains[i].hex.clone();
        }
        match best {
            Some((i, (k, j))) if k > 0 || j > 0 => {
                c.chains[i].used = tick;
                let chain = &c.chains[i];
                let seg = &chain.segs[k];
                let segs: Vec<Arc<Seg>> = chain.segs[..k].to_vec();
                // The marks within the `j` rows both share.
                let m = seg.marks.partition_point(|(n, _)| *n <= j);
                let start = Start::Within {
                    head: seg.head.clone(),
                    marks: seg.marks[..m].to_vec(),
                };
                (segs, start, k)
            }
            _ => (Vec::new(), Start::Before(Sha256::new()), 0),
        }
    };
    segs.reserve(tables.len() - k);
    let mut start = Some(start);
    for n in k..tables.len() {
        let s = match start.take() {
            Some(s) => s,
            None => Start::Before(segs[n - 1].end.clone()),
        };
        segs.push(Arc::new(hash_table(
            defs[n],
            &openings[n],
            n == 0,
            tables[n],
            s,
        )));
    }
    let mut h = segs[segs.len() - 1].end.clone();
    h.update(b"}");
    let hex = hex(h);
    let mut c = lock(cache);
    c.tick += 1;
    let used = c.tick;
    let mut evicted = None;
    if c.chains.len() >= HashCache::MAX_CHAINS
        && let Some(old) = (0..c.chains.len()).min_by_key(|&i| c.chains[i].used)
    {
        evicted = Some(c.chains.swap_remove(old));
    }
    c.chains.push(Chain {
        segs,
        hex: hex.clone(),
        used,
    });
    drop(c);
    // Dropped outside the lock: it may hold the last pointer to a state's tables and rows.
    drop(evicted);
    hex
}
