//! Micro-benchmarks of the state engine on real benchmark data: a fresh session (cold: copy and
//! patch; warm: the shared patched state), one read and one write tool call, stable state and
//! hash, deep diff, and the reference's whole timed segment for one task.
//!
//! Needs the shared data (`$TB_SHARED`, default `../shared` beside the workspace); without it
//! every bench is skipped with a message. `cargo bench -p tb-sandbox`. Nothing here asserts a
//! time; whole-process figures are `tb bench`.

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::Value;
use std::hint::black_box;
use std::path::PathBuf;
use tb_sandbox::diff::deep_diff;
use tb_sandbox::state::hash_stable;
use tb_sandbox::{Clock, Loaded, Session};
use tb_test_support::json_lines;

const SERVER: &str = "sandbox_external_retail";

struct Fixture {
    loaded: Loaded,
    clock: Clock,
    /// Per task: its `init.<server>` config and the recorded golden calls.
    tasks: Vec<(Value, Vec<(String, Value)>)>,
}

fn shared() -> Option<PathBuf> {
    let p = std::env::var_os("TB_SHARED").map_or_else(
        || PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared"),
        PathBuf::from,
    );
    (p.join("tb-bench-v1/traces").is_dir() && p.join("thinkingbox-data/servers").is_dir())
        .then_some(p)
}

fn fixture() -> Option<Fixture> {
    let Some(shared) = shared() else {
        eprintln!("SKIPPED: benchmark data not found; set TB_SHARED to the shared folder");
        return None;
    };
    let domain = tb_domains::by_name(SERVER).ok()??;
    let loaded = domain
        .load(&tb_domains::toolslib(&shared.join("thinkingbox-data")))
        .ok()?;
    let file = format!("{SERVER}_group1.jsonl");
    let inits = json_lines(&shared.join("tb-bench-v1/tasks").join(&file));
    let traces = json_lines(&shared.join("tb-bench-v1/traces").join(&file));
    let tasks = traces
        .iter()
        .filter_map(|t| {
            let init = inits.iter().find(|i| i["id"] == t["id"])?;
            let calls = t["calls"]
                .as_array()?
                .iter()
                .map(|c| {
                    let p = match &c["parameters"] {
                        Value::Null => Value::Object(serde_json::Map::default()),
                        p => p.clone(),
                    };
                    (c["tool"].as_str().unwrap_or("").to_string(), p)
                })
                .collect();
            Some((init["init"][SERVER].clone(), calls))
        })
        .collect::<Vec<_>>();
    if tasks.is_empty() {
        eprintln!("SKIPPED: no {SERVER} tasks found");
        return None;
    }
    Some(Fixture {
        loaded,
        clock: Clock::parse("2026-11-30T12:00:00Z").ok()?,
        tasks,
    })
}

/// A session just before a call, and the call.
type Before = Option<(Session, String, Value)>;

/// The first call that reads and the first that writes, each with the session just before it.
fn read_and_write(f: &Fixture) -> (Before, Before) {
    let (mut read, mut write) = (None, None);
    for (config, calls) in &f.tasks {
        let Ok(mut s) = f.loaded.session_uncached(config, f.clock) else {
            continue;
        };
        for (tool, params) in calls {
            let before = s.clone();
            let w0 = s.state.writes();
            let ok = s.call(tool, params).is_ok();
            if !ok {
                continue;
            }
            let slot = if s.state.writes() == w0 {
                &mut read
            } else {
                &mut write
            };
            if slot.is_none() {
                *slot = Some((before, tool.clone(), params.clone()));
            }
        }
        if read.is_some() && write.is_some() {
            break;
        }
    }
    (read, write)
}

fn engine(c: &mut Criterion) {
    let Some(f) = fixture() else { return };
    let (config, calls) = &f.tasks[0];

    c.bench_function("session/cold (copy + patch)", |b| {
        b.iter(|| black_box(f.loaded.session_uncached(black_box(config), f.clock)));
    });
    c.bench_function("session/warm (shared patched state)", |b| {
        b.iter(|| black_box(f.loaded.session(black_box(config), f.clock)));
    });

    let (read, write) = read_and_write(&f);
    if let Some((s, tool, params)) = read {
        let mut s = s;
        c.bench_function(&format!("call/read {tool}"), |b| {
            b.iter(|| black_box(s.call(&tool, black_box(&params)).to_text(&tool)));
        });
    }
    if let Some((s, tool, params)) = write {
        c.bench_function(&format!("call/write {tool}"), |b| {
            b.iter_batched(
                || s.clone(),
                |mut s| black_box(s.call(&tool, &params).to_text(&tool)),
                BatchSize::SmallInput,
            );
        });
    }

    let Ok(mut s) = f.loaded.session_uncached(config, f.clock) else {
        return;
    };
    let initial = s.state.stable_state();
    for (tool, params) in calls {
        let _ = s.call(tool, params);
    }
    let golden = s.state.stable_state();
    c.bench_function("state/stable_state", |b| {
        b.iter(|| black_box(s.state.stable_state()));
    });
    c.bench_function("state/hash_stable", |b| {
        b.iter(|| black_box(hash_stable(black_box(&golden))));
    });
    c.bench_function("state/deep_diff initial vs golden", |b| {
        b.iter(|| black_box(deep_diff(black_box(&initial), black_box(&golden))));
    });
    c.bench_function(
        "task/timed segment (session, calls, 2 states, 2 hashes, diff)",
        |b| {
            b.iter(|| {
                let mut s = f.loaded.session_uncached(config, f.clock).ok()?;
                let initial = s.state.stable_state();
                let h0 = hash_stable(&initial);
                for (tool, params) in calls {
                    black_box(s.call(tool, params));
                }
                let golden = s.state.stable_state();
                let h1 = hash_stable(&golden);
                Some(black_box((h0, h1, deep_diff(&initial, &golden))))
            });
        },
    );
}

criterion_group!(benches, engine);
criterion_main!(benches);
