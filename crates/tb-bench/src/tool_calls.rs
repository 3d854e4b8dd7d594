//! The in-process tool-call figure: every golden call timed alone (`tool_call_us`).

#[allow(clippy::wildcard_imports)]
use super::*;

/// Every golden call of the benchmark 5 times, each timed alone (validation, tool, result
/// text), split into reads and writes.
pub(super) fn figures(b: &Bench<'_>) -> Result<Measured> {
    let (l, clock) = (b.l, b.clock);
    b.progress("tool calls");
    let (mut reads, mut writes) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        for (task, calls) in l.tasks.iter().zip(&l.calls) {
            let mut servers = l.sandbox.session(task, clock)?.servers;
            for (s, (_, calls)) in servers.iter_mut().zip(calls) {
                for (tool, params) in calls {
                    let w0 = s.state.writes();
                    let t0 = Instant::now();
                    let text = s.call(tool, params).to_text(tool);
                    let dt = us(t0.elapsed());
                    std::hint::black_box(text);
                    if s.state.writes() == w0 {
                        reads.push(dt);
                    } else {
                        writes.push(dt);
                    }
                }
            }
        }
    }
    let n_calls = (reads.len() + writes.len()) / 5;
    let mut all_calls: Vec<f64> = reads.iter().chain(&writes).copied().collect();
    let tool_call_us = median(&mut all_calls);
    let tool_call_p99_us = percentile(&mut all_calls, 0.99);
    let read_us = median(&mut reads);
    let write_us = median(&mut writes);
    Ok(Measured {
        figures: vec![Figure {
            key: "tool_call_us",
            value: Some(tool_call_us),
            unit: "us",
            reference: None,
            target: None,
            note: format!(
                "median of {n_calls} golden calls x 5, in process (validation + tool + result text): reads {read_us:.2} us, writes {write_us:.2} us, p99 {tool_call_p99_us:.1} us; the reference does not time calls alone"
            ),
        }],
        details: vec![
            ("tool_call_read_us", json!(sig(read_us))),
            ("tool_call_write_us", json!(sig(write_us))),
            ("tool_call_p99_us", json!(sig(tool_call_p99_us))),
        ],
        lines: Vec::new(),
    })
}
