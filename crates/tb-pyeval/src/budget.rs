//! The budgets of one test-body run: wall-clock time, the bytes of values the body builds,
//! the depth of Python calls and of the walks over nested values (equality, ordering,
//! hashing, `repr`, `json.dumps`), and the nesting of the source itself.
//!
//! A run happens on a thread of its own with a stack of [`STACK_SIZE`] (see
//! [`on_big_stack`]), so the state kept here is per run. The walks over values have no
//! `Result` to return: past [`MAX_VALUE_DEPTH`] they stop and leave a trip here, which the
//! evaluator turns into a `RecursionError` as soon as the operation returns. The time and
//! memory budgets raise exceptions that no `except` catches: the run stops with a system
//! error naming the budget.

use std::cell::Cell;
use std::time::{Duration, Instant};

use crate::interp::{ExcKind, Flow, PyExc, R};

/// The stack of the thread a body is parsed, checked and run on: enough for
/// [`DEFAULT_RECURSION_LIMIT`] Python frames and source nested to [`MAX_SOURCE_DEPTH`] in an
/// unoptimised build. Reserved, not committed: only what a body uses is backed by memory.
pub const STACK_SIZE: usize = 512 << 20;

/// Python call frames a body may nest (CPython's default recursion limit).
pub const DEFAULT_RECURSION_LIMIT: usize = 1000;

/// Containers nested in containers that equality, ordering, hashing, `repr` and
/// `json.dumps` follow before a `RecursionError` (CPython stops near its recursion limit).
pub const MAX_VALUE_DEPTH: usize = 1000;

/// Nested expressions and blocks the evaluator follows in all (every Python frame adds the
/// nesting of its own expressions).
pub const MAX_EVAL_DEPTH: usize = 20_000;

/// Nesting of one expression in the source, as estimated before parsing (CPython stops
/// compiling near 3000: `RecursionError: maximum recursion depth exceeded during
/// compilation`).
pub const MAX_SOURCE_DEPTH: usize = 1000;

/// Default wall-clock budget of one run of a test function.
pub const DEFAULT_TIME: Duration = Duration::from_secs(30);

/// Default budget of the bytes of values (strings, containers, printed text) one run builds
/// in all.
pub const DEFAULT_MEMORY: usize = 512 << 20;

/// The budgets of a run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time of one run (`None`: no limit).
    pub time: Option<Duration>,
    /// Bytes of values the run may build in all (strings by their length, containers by
    /// their slots, printed text).
    pub memory: usize,
    /// Python call frames (CPython's `sys.getrecursionlimit()`).
    pub recursion_limit: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            time: Some(DEFAULT_TIME),
            memory: DEFAULT_MEMORY,
            recursion_limit: DEFAULT_RECURSION_LIMIT,
        }
    }
}

/// What stopped a walk over values, to be raised by the evaluator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trip {
    ValueDepth,
    Memory,
}

struct State {
    built: Cell<usize>,
    memory: Cell<usize>,
    value_depth: Cell<usize>,
    trip: Cell<Option<Trip>>,
    paused: Cell<u32>,
}

thread_local! {
    static STATE: State = const {
        State {
            built: Cell::new(0),
            memory: Cell::new(DEFAULT_MEMORY),
            value_depth: Cell::new(0),
            trip: Cell::new(None),
            paused: Cell::new(0),
        }
    };
}

/// Starts the accounting of a run on this thread.
pub(crate) fn install(limits: &Limits) {
    STATE.with(|s| {
        s.built.set(0);
        s.memory.set(limits.memory);
        s.value_depth.set(0);
        s.trip.set(None);
        s.paused.set(0);
    });
}

fn memory_error(limit: usize) -> Flow {
    Flow::Exc(PyExc {
        kind: ExcKind::MemoryError,
        message: format!(
            "the test body built more than {} of values (tb's memory budget for a test body)",
            human_bytes(limit)
        ),
        line: 0,
    })
}

pub(crate) fn human_bytes(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else {
        format!("{n} bytes")
    }
}

/// Counts `bytes` of a value just built; past the budget, the run stops at the next check.
pub(crate) fn charge(bytes: usize) {
    STATE.with(|s| {
        if s.paused.get() > 0 {
            return;
        }
        let built = s.built.get().saturating_add(bytes);
        s.built.set(built);
        if built > s.memory.get() {
            s.trip.set(Some(Trip::Memory));
        }
    });
}

/// `Err(MemoryError)` when building `bytes` more would pass the budget (checked before
/// building a value whose size is known, so it is never built).
pub(crate) fn fits(bytes: usize) -> R<()> {
    STATE.with(|s| {
        if s.paused.get() == 0 && s.built.get().saturating_add(bytes) > s.memory.get() {
            s.trip.set(Some(Trip::Memory));
            return Err(memory_error(s.memory.get()));
        }
        Ok(())
    })
}

/// [`fits`] then [`charge`]: for values that grow in place (a list's `append`).
pub(crate) fn take(bytes: usize) -> R<()> {
    fits(bytes)?;
    charge(bytes);
    Ok(())
}

/// Whether text being written (a `repr`, a `json.dumps`) has passed the budget: then the
/// run stops at the next check, and the writer may stop early.
pub(crate) fn over(len: usize) -> bool {
    STATE.with(|s| {
        if s.paused.get() == 0 && s.built.get().saturating_add(len) > s.memory.get() {
            s.trip.set(Some(Trip::Memory));
            true
        } else {
            false
        }
    })
}

/// The bytes a run may still build.
pub(crate) fn remaining() -> usize {
    STATE.with(|s| {
        if s.paused.get() > 0 {
            usize::MAX
        } else {
            s.memory.get().saturating_sub(s.built.get())
        }
    })
}

/// Values built while this lives are not counted (the runner's own conversion of the
/// attempt's context, which is already in memory).
pub(crate) struct Paused(());

pub(crate) fn pause() -> Paused {
    STATE.with(|s| s.paused.set(s.paused.get() + 1));
    Paused(())
}

impl Drop for Paused {
    fn drop(&mut self) {
        STATE.with(|s| s.paused.set(s.paused.get().saturating_sub(1)));
    }
}

/// One level deeper in a walk over nested values; `None` (and a trip) past
/// [`MAX_VALUE_DEPTH`].
pub(crate) struct Deeper(());

pub(crate) fn deeper() -> Option<Deeper> {
    STATE.with(|s| {
        let d = s.value_depth.get();
        if d >= MAX_VALUE_DEPTH {
            if s.trip.get().is_none() {
                s.trip.set(Some(Trip::ValueDepth));
            }
            return None;
        }
        s.value_depth.set(d + 1);
        Some(Deeper(()))
    })
}

impl Drop for Deeper {
    fn drop(&mut self) {
        STATE.with(|s| s.value_depth.set(s.value_depth.get().saturating_sub(1)));
    }
}

/// Whether a walk over values stopped at the depth bound (and that trip is cleared).
pub(crate) fn take_depth_trip() -> bool {
    STATE.with(|s| {
        if s.trip.get() == Some(Trip::ValueDepth) {
            s.trip.set(None);
            true
        } else {
            false
        }
    })
}

/// The exception a trip left, if any: a `RecursionError` (raised once, as CPython does) or
/// the memory budget's error (raised again at every check: it cannot be caught).
pub(crate) fn pending() -> Option<Flow> {
    STATE.with(|s| match s.trip.get() {
        None => None,
        Some(Trip::ValueDepth) => {
            s.trip.set(None);
            Some(Flow::Exc(PyExc {
                kind: ExcKind::RecursionError,
                message: format!(
                    "maximum recursion depth exceeded while walking a nested value \
                     (tb's limit of {MAX_VALUE_DEPTH} levels)"
                ),
                line: 0,
            }))
        }
        Some(Trip::Memory) => Some(memory_error(s.memory.get())),
    })
}

/// The wall-clock budget of a run, checked every [`Clock::EVERY`] steps.
#[derive(Debug)]
pub(crate) struct Clock {
    deadline: Option<Instant>,
    budget: Option<Duration>,
    steps: u32,
    expired: bool,
}

impl Clock {
    const EVERY: u32 = 1024;

    pub(crate) fn new(budget: Option<Duration>) -> Clock {
        Clock {
            deadline: budget.and_then(|b| Instant::now().checked_add(b)),
            budget,
            steps: 0,
            expired: false,
        }
    }

    /// Counts a step; `Err(TimeoutError)` once the budget has run out (and at every step
    /// after: it cannot be caught).
    pub(crate) fn tick(&mut self) -> R<()> {
        self.steps = self.steps.wrapping_add(1);
        if self.expired || (self.steps.is_multiple_of(Self::EVERY) && self.out_of_time()) {
            self.expired = true;
            return Err(Flow::Exc(PyExc {
                kind: ExcKind::TimeoutError,
                message: format!(
                    "the test body ran past its time budget of {:.3}s",
                    self.budget.unwrap_or_default().as_secs_f64()
                ),
                line: 0,
            }));
        }
        Ok(())
    }

    fn out_of_time(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
    }
}

thread_local! {
    static BIG_STACK: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` on a thread with a stack of [`STACK_SIZE`] and waits for it (in place when this
/// already is such a thread). `None` when the thread cannot be started.
pub fn on_big_stack<T: Send>(f: impl FnOnce() -> T + Send) -> Option<T> {
    if BIG_STACK.with(Cell::get) {
        return Some(f());
    }
    std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name("tb-pyeval".into())
            .stack_size(STACK_SIZE)
            .spawn_scoped(scope, || {
                BIG_STACK.with(|b| b.set(true));
                f()
            })
            .ok()?;
        handle.join().ok()
    })
}

/// Bounds the nesting of source before it is parsed, so that neither the parser nor any walk
/// over the tree recurses without bound: parentheses, brackets and braces at most 200 deep
/// and blocks at most 99 deep (CPython's own limits, with its messages), and each
/// expression at most [`MAX_SOURCE_DEPTH`] levels deep as estimated from its operators.
/// `Err((line, message))` names the first line past a bound.
pub(crate) fn check_source_nesting(source: &str) -> Result<(), (u32, String)> {
    let Err(message) = nesting(source) else {
        return Ok(());
    };
    // The tokens carry no offsets here: the shortest prefix that already passes the bound
    // ends on the line to name.
    let (mut lo, mut hi) = (0usize, source.len());
    while lo < hi {
        let mut mid = lo + (hi - lo) / 2;
        while !source.is_char_boundary(mid) {
            mid += 1;
        }
        if mid >= hi {
            break;
        }
        if nesting(source.get(..mid).unwrap_or_default()).is_err() {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    let line = source.get(..hi).map_or(0, |p| p.matches('\n').count()) + 1;
    Err((u32::try_from(line).unwrap_or(u32::MAX), message))
}

fn nesting(source: &str) -> Result<(), String> {
    use ruff_python_ast::token::TokenKind as T;
    let mut lexer = ruff_python_parser::lexer::lex(source, ruff_python_parser::Mode::Module);
    // Per open bracket: the operators since the last separator at that level, and the
    // lambdas (whose own `:` does not end what they nest).
    let mut chain: Vec<(usize, usize)> = vec![(0, 0)];
    let mut indent = 0usize;
    let mut prev = T::Newline;
    loop {
        let kind = lexer.next_token();
        if kind.is_eof() {
            break;
        }
        match kind {
            T::Indent => {
                indent += 1;
                if indent >= 100 {
                    return Err("too many levels of indentation".into());
                }
            }
            T::Dedent => indent = indent.saturating_sub(1),
            T::Lpar | T::Lsqb | T::Lbrace => {
                // A call or subscript also nests what it applies to.
                let postfix = matches!(
                    prev,
                    T::Name | T::Rpar | T::Rsqb | T::Rbrace | T::String | T::FStringEnd
                );
                if postfix && let Some(c) = chain.last_mut() {
                    c.0 += 1;
                }
                chain.push((0, 0));
                if chain.len() > 201 {
                    return Err("too many nested parentheses".into());
                }
            }
            T::Rpar | T::Rsqb | T::Rbrace if chain.len() > 1 => {
                chain.pop();
            }
            T::Newline => chain = vec![(0, 0)],
            T::Comma | T::Colon | T::Semi | T::Equal => {
                if let Some(c) = chain.last_mut() {
                    c.0 = 0;
                }
            }
            T::Lambda => {
                if let Some(c) = chain.last_mut() {
                    c.1 += 1;
                }
            }
            k if k.is_operator() || k.is_keyword() => {
                if let Some(c) = chain.last_mut() {
                    c.0 += 1;
                }
            }
            _ => {}
        }
        let depth: usize = chain.iter().map(|(c, l)| c + l).sum::<usize>() + chain.len() + indent;
        if depth > MAX_SOURCE_DEPTH {
            return Err(format!(
                "expression nested too deeply (more than {MAX_SOURCE_DEPTH} levels, \
                     tb's limit; CPython stops compiling near 3000)"
            ));
        }
        prev = kind;
    }
    Ok(())
}
