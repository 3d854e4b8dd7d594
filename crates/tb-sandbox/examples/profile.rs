//! A profiling driver (for callgrind or perf): every recorded trace of the benchmark, as
//! cold sessions only, or as the reference's whole timed segment.
//!
//! ```sh
//! cargo build --release -p tb-sandbox --example profile
//! valgrind --tool=callgrind --toggle-collect='profile::work*' \
//!     target/release/examples/profile session 5      # or: prepared 5, warm 5, replay 1, replay-2h 1, replay-full 1
//! # the golden tool calls, reads and writes apart:
//! valgrind --tool=callgrind --toggle-collect='profile::call_read' \
//!     target/release/examples/profile calls 1        # or: profile::call_write
//! ```
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace).

use serde_json::Value;
use std::hint::black_box;
use std::path::PathBuf;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;
use tb_sandbox::{Clock, Loaded};
use tb_test_support::json_lines;

/// The `tb` binary's allocator, so profiles show what `tb bench` runs.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

struct Task {
    loaded: usize,
    config: Value,
    calls: Vec<(String, Value)>,
}

fn load(shared: &std::path::Path) -> (Vec<Loaded>, Vec<Task>) {
    let toolslib = tb_domains::toolslib(&shared.join("thinkingbox-data"));
    let mut domains: Vec<Loaded> = Vec::new();
    let mut tasks = Vec::new();
    let mut files: Vec<PathBuf> = std::fs::read_dir(shared.join("tb-bench-v1/traces"))
        .expect("traces")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    for file in files {
        let name = file.file_name().unwrap_or_default().to_string_lossy();
        let inits = json_lines(&shared.join("tb-bench-v1/tasks").join(name.as_ref()));
        for t in json_lines(&file) {
            let server = t["domain"].as_str().unwrap_or_default().to_string();
            let loaded = if let Some(i) = domains.iter().position(|d| d.domain.name == server) {
                i
            } else {
                let d = tb_domains::by_name(&server).ok().flatten().expect("domain");
                domains.push(d.load(&toolslib).expect("initial data"));
                domains.len() - 1
            };
            let Some(init) = inits.iter().find(|i| i["id"] == t["id"]) else {
                continue;
            };
            let calls = t["calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| {
                            let p = match &c["parameters"] {
                                Value::Null => Value::Object(serde_json::Map::default()),
                                p => p.clone(),
                            };
                            (c["tool"].as_str().unwrap_or_default().to_string(), p)
                        })
                        .collect()
                })
                .unwrap_or_default();
            tasks.push(Task {
                loaded,
                config: init["init"][&server].clone(),
                calls,
            });
        }
    }
    (domains, tasks)
}

#[inline(never)]
fn work_sessions(domains: &[Loaded], tasks: &[Task], clock: Clock) {
    for t in tasks {
        black_box(domains[t.loaded].session_uncached(&t.config, clock).ok());
    }
}

/// Sessions of configs prepared beforehand ([`Loaded::prepare`], outside the collected
/// function): what `tb bench`'s `session_create_us` times.
#[inline(never)]
fn work_prepared(prepared: &[tb_sandbox::Prepared]) {
    for p in prepared {
        black_box(p.session().ok());
    }
}

/// Later sessions of the same configs (the shared patched states; `session_create_warm_us`).
#[inline(never)]
fn work_warm(domains: &[Loaded], tasks: &[Task], clock: Clock) {
    for t in tasks {
        black_box(domains[t.loaded].session(&t.config, clock).ok());
    }
}

/// How [`work_replay`] runs the reference's segment.
#[derive(Clone, Copy, PartialEq)]
enum Replay {
    /// As `tb bench`'s `replay_all_s`: the golden hash streamed from the tables, the stable
    /// diff (one hash per server, the golden one, as the reference's segment).
    Streamed,
    /// The same plus the initial state's hash (a second sha256 the reference's segment does not compute).
    TwoHashes,
    /// Both stable states built as values, hashed and diffed whole.
    Full,
}

#[inline(never)]
fn work_replay(domains: &[Loaded], tasks: &[Task], clock: Clock, how: Replay) {
    for t in tasks {
        let Ok(mut s) = domains[t.loaded].session_uncached(&t.config, clock) else {
            continue;
        };
        if how == Replay::Full {
            let initial = s.state.stable_state();
            for (tool, p) in &t.calls {
                black_box(s.call(tool, p));
            }
            let golden = s.state.stable_state();
            let h1 = hash_stable(&golden);
            black_box((h1, deep_diff(&initial, &golden)));
        } else {
            let initial = s.state.clone();
            if how == Replay::TwoHashes {
                black_box(initial.hash());
            }
            for (tool, p) in &t.calls {
                black_box(s.call(tool, p));
            }
            let h1 = s.state.hash();
            black_box((h1, initial.stable_diff(&s.state)));
        }
    }
}

/// One tool call as `tb bench`'s `tool_call_us` times it: the call and its result text.
#[inline(never)]
fn call_read(s: &mut tb_sandbox::Session, tool: &str, p: &Value) -> String {
    black_box("read"); // not the same code as call_write (the linker would fold the two)
    s.call(tool, p).to_text(tool)
}

/// The same for a call that writes (a separate symbol, for `--toggle-collect`).
#[inline(never)]
fn call_write(s: &mut tb_sandbox::Session, tool: &str, p: &Value) -> String {
    black_box("write");
    s.call(tool, p).to_text(tool)
}

/// Every golden call, the reads through [`call_read`] and the writes through [`call_write`]
/// (which is which found by a first run of each task: the calls are deterministic).
#[inline(never)]
fn work_calls(domains: &[Loaded], tasks: &[Task], clock: Clock, kinds: &[Vec<bool>]) {
    for (t, writes) in tasks.iter().zip(kinds) {
        let Ok(mut s) = domains[t.loaded].session_uncached(&t.config, clock) else {
            continue;
        };
        for ((tool, p), &w) in t.calls.iter().zip(writes) {
            if w {
                black_box(call_write(&mut s, tool, p));
            } else {
                black_box(call_read(&mut s, tool, p));
            }
        }
    }
}

/// Which of each task's calls write the state.
fn call_kinds(domains: &[Loaded], tasks: &[Task], clock: Clock) -> Vec<Vec<bool>> {
    let mut out = Vec::new();
    for t in tasks {
        let mut kinds = Vec::new();
        if let Ok(mut s) = domains[t.loaded].session_uncached(&t.config, clock) {
            for (tool, p) in &t.calls {
                let w0 = s.state.writes();
                black_box(s.call(tool, p));
                kinds.push(s.state.writes() != w0);
            }
        }
        out.push(kinds);
    }
    out
}

fn text(s: &tb_sandbox::State) -> String {
    let mut t = String::new();
    s.write_stable(&mut t);
    t
}

fn common(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

fn stats(domains: &[Loaded], tasks: &[Task], clock: Clock) {
    let bases: Vec<String> = domains.iter().map(|d| text(&d.base)).collect();
    let (mut n0, mut n1, mut p0, mut p1, mut prev) = (0usize, 0usize, 0usize, 0usize, 0usize);
    let mut g0 = 0usize;
    let mut prev_text = String::new();
    for t in tasks {
        let Ok(mut s) = domains[t.loaded].session_uncached(&t.config, clock) else {
            continue;
        };
        let a = text(&s.state);
        for (tool, p) in &t.calls {
            black_box(s.call(tool, p));
        }
        let b = text(&s.state);
        n0 += a.len();
        n1 += b.len();
        p0 += common(&a, &bases[t.loaded]);
        g0 += common(&b, &bases[t.loaded]);
        prev += common(&a, &prev_text);
        p1 += common(&b, &a);
        prev_text = a;
    }
    eprintln!(
        "initial bytes {n0} shared-with-base prefix {p0} shared-with-prev-task {prev}; golden bytes {n1} shared-with-initial prefix {p1}; must hash {} (both hashes), {} (the golden one, resumed from the base: shared-with-base prefix {g0})",
        n0 - p0 + n1 - p1,
        n1 - g0
    );
}

fn main() {
    let shared = std::env::var_os("TB_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    let mut args = std::env::args().skip(1);
    let mode = args.next().unwrap_or_else(|| "replay".into());
    let n: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let (domains, tasks) = load(&shared);
    let clock = Clock::parse("2026-11-30T12:00:00Z").expect("clock");
    let kinds = if mode == "calls" {
        let k = call_kinds(&domains, &tasks, clock);
        let w: usize = k.iter().map(|k| k.iter().filter(|w| **w).count()).sum();
        let all: usize = k.iter().map(Vec::len).sum();
        eprintln!("calls: {} reads, {w} writes", all - w);
        k
    } else {
        Vec::new()
    };
    let prepared: Vec<tb_sandbox::Prepared> = if mode == "prepared" {
        tasks
            .iter()
            .map(|t| domains[t.loaded].prepare(&t.config, clock))
            .collect()
    } else {
        Vec::new()
    };
    if mode == "warm" {
        // Fill the shared patched states first.
        for t in &tasks {
            black_box(domains[t.loaded].session(&t.config, clock).ok());
        }
    }
    #[allow(clippy::disallowed_methods)] // a profiling driver measures wall time
    let t0 = std::time::Instant::now();
    for _ in 0..n {
        match mode.as_str() {
            "session" => work_sessions(&domains, &tasks, clock),
            "prepared" => work_prepared(&prepared),
            "warm" => work_warm(&domains, &tasks, clock),
            "replay" => work_replay(&domains, &tasks, clock, Replay::Streamed),
            "replay-2h" => work_replay(&domains, &tasks, clock, Replay::TwoHashes),
            "replay-full" => work_replay(&domains, &tasks, clock, Replay::Full),
            "stats" => stats(&domains, &tasks, clock),
            "calls" => work_calls(&domains, &tasks, clock, &kinds),
            other => panic!(
                "unknown mode {other} (session, prepared, warm, replay, replay-2h, replay-full, stats, calls)"
            ),
        }
    }
    let dt = t0.elapsed().as_secs_f64();
    eprintln!(
        "{mode}: {} tasks x {n}: {:.3} s per pass, {:.1} us per task",
        tasks.len(),
        dt / n as f64,
        dt / n as f64 / tasks.len() as f64 * 1e6
    );
}
