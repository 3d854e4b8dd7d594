//! Returning memory after sessions close.
//!
//! mimalloc (the binary's allocator) keeps freed pages in the heap of the thread that owns
//! them and hands them back to the OS only when that thread allocates or collects again. A
//! server whose sessions just closed goes idle, so nothing does: RSS stayed at the peak.
//! Here, when the session count falls ([`SessionWatch`]), a new purge generation is opened,
//! and each runtime worker collects its own heap (`mi_collect(true)`) the next time it parks
//! (it parks exactly when it has nothing else to do), once per generation.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};

unsafe extern "C" {
    // In the mimalloc library the `mimalloc` crate links (the crate's `extended` bindings
    // declare the same function).
    fn mi_collect(force: bool);
}

static GENERATION: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static SEEN: Cell<u64> = const { Cell::new(0) };
}

/// Asks every worker to collect its heap when it next parks.
pub fn request_collect() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// Frees what this thread's heap holds (and abandoned heaps), returning it to the OS.
pub fn collect_now() {
    // SAFETY: mi_collect takes no pointers; it may be called from any thread at any time.
    unsafe { mi_collect(true) }
}

/// For `tokio::runtime::Builder::on_thread_park`: collect once per requested generation.
pub fn on_park() {
    let g = GENERATION.load(Ordering::Relaxed);
    SEEN.with(|s| {
        if s.get() != g {
            s.set(g);
            collect_now();
        }
    });
}

/// Watches a session count: when it has fallen by `step` (or to zero) from its last high
/// point, requests a collection.
#[derive(Debug)]
pub struct SessionWatch {
    high: usize,
    step: usize,
}

impl SessionWatch {
    /// A watch that requests a collection after `step` sessions closed.
    pub fn new(step: usize) -> Self {
        SessionWatch {
            high: 0,
            step: step.max(1),
        }
    }

    /// Takes the current count; `true` when it requested a collection.
    pub fn observe(&mut self, open: usize) -> bool {
        if open > self.high {
            self.high = open;
            return false;
        }
        if self.high > 0 && (open == 0 || self.high - open >= self.step) {
            self.high = open;
            request_collect();
            collect_now();
            return true;
        }
        false
    }
}
