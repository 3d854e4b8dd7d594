//! Where the memory of closed sessions goes: live heap bytes (counted by a wrapping
//! allocator) and VmRSS after loading every task, with N sessions open and their golden calls
//! replayed and graded, and after they all close. Live bytes that stay after closing are data
//! kept (caches); RSS above live bytes is the allocator's.
//!
//! ```sh
//! cargo build --release -p tb-mcp --example sessions_memory
//! THINKINGBOX_DATA=/work/shared/thinkingbox-data target/release/examples/sessions_memory 2000
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tb_mcp::{Limits, Registry};
use tb_sandbox::Clock;

struct Counting;
static LIVE: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards to the system allocator and only counts sizes.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size(), Ordering::Relaxed);
        // SAFETY: same layout, forwarded.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: allocated by `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE.fetch_add(n, Ordering::Relaxed);
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        // SAFETY: forwarded as given.
        unsafe { System.realloc(p, l, n) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn mib(b: usize) -> f64 {
    (b as f64 / 1048576.0 * 10.0).round() / 10.0
}

fn rss_mib() -> f64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |k| (k / 1024.0 * 10.0).round() / 10.0)
}

fn stage(what: &str) {
    eprintln!(
        "{what:<28} live heap {:>8} MiB   VmRSS {:>8} MiB",
        mib(LIVE.load(Ordering::Relaxed)),
        rss_mib()
    );
}

fn main() {
    let n: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let root = std::path::PathBuf::from(
        std::env::var("THINKINGBOX_DATA").unwrap_or_else(|_| "../shared/thinkingbox-data".into()),
    );
    let list = root.join("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml");
    let clock = Clock::parse("2026-11-30T12:00:00Z").expect("clock");
    let limits = Limits {
        max_sessions: n.max(1),
        idle_timeout: None,
        ..Limits::default()
    };
    let registry = Arc::new(Registry::open(&root, clock, limits).expect("registry"));
    let ds = tb_dataset::Dataset::open(&root).expect("dataset");
    let ids: Vec<String> = ds
        .read_test_list(&list)
        .expect("test list")
        .into_iter()
        .map(|(id, _)| id)
        .collect();
    stage("loaded");
    for id in &ids {
        let s = registry.create_for_task(id).expect("session");
        registry.remove(s.id()).expect("remove");
    }
    stage("every task opened once");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let mut calls = 0usize;
    for round in 0..2 {
        rt.block_on(async {
            let mut slots = Vec::with_capacity(n);
            for i in 0..n {
                slots.push(
                    registry
                        .create_for_task(&ids[i % ids.len()])
                        .expect("session"),
                );
            }
            for slot in &slots {
                let tb_mcp::registry::Origin::Task(task) = slot.origin() else {
                    continue;
                };
                let task = task.clone();
                for server in task.servers() {
                    for (tool, args) in task.golden_calls(&server) {
                        let _ = registry.call(slot, &tool, args).await;
                        calls += 1;
                    }
                }
                let _ = registry.effects(slot, true).await;
            }
        });
        stage(&format!("round {round}: {n} open, graded"));
        registry.remove_all();
        stage(&format!("round {round}: all closed"));
    }
    drop(registry);
    stage("registry dropped");
    eprintln!("{calls} golden calls");
}
