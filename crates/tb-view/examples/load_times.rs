//! Page load times of `tb view` on a large synthetic run, and the server's peak memory.
//!
//! ```sh
//! cargo run -p tb-view --example load_times --release -- [TASKS] [ATTEMPTS]
//! ```
//!
//! Writes a run of TASKS x ATTEMPTS records (default 507 x 20 = 10,140, the size of a v1.0
//! campaign of 20 attempts) built from the bundled example's do-nothing and golden records
//! (each task a copy of one of them under a new uid; a deterministic mix of passes and
//! failures), serves it on 127.0.0.1, and times each page over a plain HTTP/1.1 connection:
//! the first load (the file read and every number computed), then the same pages again, the
//! tasks grid's JSON and an attempt page. Prints a table; the peak resident memory of the
//! process (server and client) is the `VmHWM` line of /proc/self/status.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

fn get(addr: SocketAddr, path: &str) -> (u16, usize) {
    let mut s = TcpStream::connect(addr).expect("connect");
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    )
    .expect("write");
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).expect("read");
    let status = std::str::from_utf8(&raw[..12.min(raw.len())])
        .ok()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (status, raw.len())
}

fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM"))
                .map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" "))
        })
        .unwrap_or_else(|| "n/a".into())
}

fn main() {
    let mut args = std::env::args().skip(1);
    let tasks: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(507);
    let attempts: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(20);
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let read = |name: &str| -> Vec<serde_json::Value> {
        std::fs::read_to_string(fixtures.join(name))
            .expect("fixture")
            .lines()
            .map(|l| serde_json::from_str(l).expect("a record"))
            .collect()
    };
    let noop = read("noop.jsonl");
    let golden = read("golden.jsonl");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("large.jsonl");
    let t0 = Instant::now();
    {
        let mut f = std::io::BufWriter::new(std::fs::File::create(&path).expect("create"));
        for t in 0..tasks {
            for a in 0..attempts {
                // Deterministic mix: some tasks always pass, some never, the rest flaky.
                let pass = match t % 4 {
                    0 => true,
                    1 => false,
                    _ => (t * 7 + a * 13) % 5 < 3,
                };
                let src = if pass { &golden } else { &noop };
                let mut r = src[(t * 3) % src.len()].clone();
                let uid = format!("synthetic_{:03}.py:test_{t:04}", t % 40);
                r["key"] = serde_json::json!(format!("{uid}::repeat::{a}"));
                r["uid"] = serde_json::json!(uid);
                r["repetition"] = serde_json::json!(a);
                r["metadata"]["repetition"] = serde_json::json!(a);
                r["metadata"]["scenario"] = serde_json::json!(format!("domain_{}", t % 5));
                writeln!(f, "{r}").expect("write");
            }
        }
    }
    let size = std::fs::metadata(&path).map_or(0, |m| m.len());
    println!(
        "run: {tasks} tasks x {attempts} attempts = {} records, {:.1} MB, written in {:.2} s",
        tasks * attempts,
        size as f64 / 1e6,
        t0.elapsed().as_secs_f64()
    );
    let (atx, arx) = std::sync::mpsc::channel();
    let files = vec![path.clone()];
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(async move {
            let l = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            atx.send(l.local_addr().expect("addr")).expect("send");
            tb_view::serve(
                l,
                tb_view::Options {
                    files,
                    ..Default::default()
                },
                std::future::pending(),
            )
            .await
            .expect("serve");
        });
    });
    let addr = arx.recv().expect("address");
    let mid = tasks / 2 * attempts + 1;
    let steps: Vec<(String, String)> = vec![
        (
            "runs page, first load (reads and computes)".into(),
            "/".into(),
        ),
        ("runs page".into(), "/".into()),
        ("tasks page (HTML)".into(), "/runs/0/tasks".into()),
        ("tasks grid JSON".into(), "/api/runs/0/tasks".into()),
        ("attempt page".into(), format!("/runs/0/attempts/{mid}")),
        ("attempt page (another)".into(), "/runs/0/attempts/2".into()),
        ("attempt JSON".into(), format!("/api/runs/0/attempts/{mid}")),
        ("runs JSON".into(), "/api/runs".into()),
    ];
    println!("{:<46} {:>10} {:>12}", "page", "ms", "bytes");
    for (label, p) in &steps {
        let t = Instant::now();
        let (status, bytes) = get(addr, p);
        let ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(status, 200, "{p}");
        println!("{label:<46} {ms:>10.1} {bytes:>12}");
    }
    // Appending one record: the next load reads only the new line and recomputes the run.
    {
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .expect("append");
        writeln!(f, "{}", golden[0]).expect("write");
    }
    std::thread::sleep(Duration::from_millis(20));
    let t = Instant::now();
    let (status, bytes) = get(addr, "/");
    assert_eq!(status, 200);
    println!(
        "{:<46} {:>10.1} {bytes:>12}",
        "runs page after one appended record",
        t.elapsed().as_secs_f64() * 1e3
    );
    println!("peak resident memory (VmHWM): {}", peak_rss());
}
