//! `tb infer` against realistic provider reply shapes sends the bodies and writes the records
//! the reference did (`tb-bench-v1/replies/<api>-<shape>/`: the reference's bodies as its mock
//! `scripts/mockrich.py` received them, and its trial records).
//!
//! Each case folder is served by `mockrich.py` (Python) on a free port; `tb infer` runs the
//! case's config (its endpoints pointed at that port) with the surface and prompt files built
//! from what the reference recorded, as the 402-bodies test does. Compared:
//! - every request body, byte for byte, in the order the mock received them (one attempt at a
//!   time, tasks in list order, as the reference ran them);
//! - every record, field for field, but for the fields that differ between any two runs of
//!   the same program (see [`RUN_SPECIFIC`]) and our own additions (see [`OURS_ONLY`]). Our
//!   records of system errors are read from the errors sidecar (`<stem>_errors.jsonl`), where
//!   `tb infer` puts them for a rerun; the reference writes them with the others.
//!
//! The summary line is `N cases, M differ`; each differing case prints its first differences.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// Record fields (paths) that hold run-specific or program-specific values: wall-clock
/// durations of the trial's phases, the absolute path of the data checkout the task file was
/// read from, and a system error's Python traceback (frames of the reference's own source
/// files at its install paths; the error's type and message are compared).
const RUN_SPECIFIC: [&str; 8] = [
    "metadata.time_tool",
    "metadata.time_agent",
    "metadata.time_user",
    "metadata.time_test",
    "metadata.time_agent_user_loop",
    "metadata.execution_time",
    "metadata.test_case_file",
    "metadata.error.tb",
];

/// Record fields only our records carry (the reference writes none of them): the attempt's
/// key and repetition, the verdict's parts, usage per role, the provenance (what the model
/// was shown, which program wrote the record), and a system error's class and role.
const OURS_ONLY: [&str; 7] = [
    "key",
    "repetition",
    "verdict",
    "usage_by_role",
    "provenance",
    "metadata.error.class",
    "metadata.error.role",
];

fn replies(shared: &Path) -> PathBuf {
    let p = shared.join("tb-bench-v1/replies");
    assert!(
        p.join("scripts/mockrich.py").is_file(),
        "the reply cases (tb-bench-v1/replies) are not in {}",
        shared.display()
    );
    p
}

/// The user prompt that lets the user end the conversation, as the reference sent it in the
/// first user request of a `user_can_end_conversation` case.
fn user_system_with_end(replies: &Path, tmp: &Path) -> String {
    let dir = tmp.join("canend");
    extract(&replies.join("chat-u_stopend-canend"), &dir);
    let body: Value = serde_json::from_slice(
        &std::fs::read(dir.join("ref/0002-user.u_stopend.json")).expect("the canend user body"),
    )
    .unwrap();
    body["messages"][0]["content"]
        .as_str()
        .expect("a system text")
        .to_string()
}

fn extract(case: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    let st = Command::new("tar")
        .arg("-xJf")
        .arg(case.join("ref-dumps.tar.xz"))
        .arg("-C")
        .arg(to)
        .status()
        .expect("tar runs");
    assert!(st.success(), "extracting {}", case.display());
}

/// mockrich.py on a free port, killed on drop.
struct Mock {
    child: Child,
    port: u16,
}

impl Drop for Mock {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Mock {
    fn start(replies: &Path, tasks: &Path, dump: &Path) -> Mock {
        for _ in 0..20 {
            let port = std::net::TcpListener::bind("127.0.0.1:0")
                .unwrap()
                .local_addr()
                .unwrap()
                .port();
            let mut child = Command::new("python3")
                .arg(replies.join("scripts/mockrich.py"))
                .arg(port.to_string())
                .arg(tasks)
                .arg("--dump")
                .arg(dump)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("python3 runs");
            // bounded wait for it to listen; a port taken meanwhile makes it exit: try another
            for _ in 0..100 {
                if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                    return Mock { child, port };
                }
                if child.try_wait().unwrap().is_some() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
        panic!("mockrich.py did not start listening");
    }
}

/// The bodies of a dump folder in arrival order: (file name without extension, bytes).
fn bodies(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().to_string();
                    let stem = name.strip_suffix(".json")?;
                    if [".meta", ".reply"].iter().any(|x| {
                        stem.rsplit_once('.')
                            .is_some_and(|(_, e)| format!(".{e}") == *x)
                    }) {
                        return None;
                    }
                    Some((stem.to_string(), std::fs::read(e.path()).unwrap()))
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// Where two bodies first differ, with some bytes around.
fn around(a: &[u8], b: &[u8]) -> String {
    let i = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let cut = |x: &[u8]| {
        String::from_utf8_lossy(&x[i.saturating_sub(100)..(i + 160).min(x.len())]).to_string()
    };
    format!(
        "at byte {i}\n      reference: ...{}...\n      ours:      ...{}...",
        cut(a),
        cut(b)
    )
}

fn compare_bodies(reference: &[(String, Vec<u8>)], ours: &[(String, Vec<u8>)]) -> Vec<String> {
    let mut out = Vec::new();
    for i in 0..reference.len().max(ours.len()) {
        match (reference.get(i), ours.get(i)) {
            (Some((rn, rb)), Some((on, ob))) => {
                if rn != on {
                    out.push(format!("  request {}: reference {rn}, ours {on}", i + 1));
                } else if rb != ob {
                    out.push(format!("  body {rn} {}", around(rb, ob)));
                }
            }
            (Some((rn, _)), None) => out.push(format!("  request {rn}: not sent by us")),
            (None, Some((on, _))) => out.push(format!("  request {on}: the reference sent none")),
            (None, None) => {}
        }
        if out.len() >= 3 {
            out.push("  (further body differences left out)".into());
            break;
        }
    }
    out
}

fn remove(v: &mut Value, path: &str) {
    let mut parts: Vec<&str> = path.split('.').collect();
    let last = parts.pop().unwrap();
    let mut cur = v;
    for p in parts {
        match cur.get_mut(p) {
            Some(x) => cur = x,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
    }
}

/// The differing leaves of two JSON values, as `path: reference | ours`.
fn diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let null = Value::Null;
                let (va, vb) = (x.get(k), y.get(k));
                if va.is_none() || vb.is_none() {
                    out.push(format!(
                        "{path}.{k}: {} | {}",
                        va.map_or("(absent)".into(), short),
                        vb.map_or("(absent)".into(), short)
                    ));
                } else {
                    diff(
                        &format!("{path}.{k}"),
                        va.unwrap_or(&null),
                        vb.unwrap_or(&null),
                        out,
                    );
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if a == b => {}
        _ => out.push(format!("{path}: {} | {}", short(a), short(b))),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.chars().count() > 200 {
        format!("{}...", s.chars().take(200).collect::<String>())
    } else {
        s
    }
}

/// A failing test's `tb` without its traceback frames: the reference's names its own source
/// files at their install paths (and the task file's lines as the framework executes it), so
/// the exception text after the frames (type, message, lines after it) is what is compared.
fn exception_part(tb: &str) -> String {
    let Some(rest) = tb.strip_prefix("Traceback (most recent call last):\n") else {
        return tb.to_string();
    };
    let mut lines = rest.split_inclusive('\n').peekable();
    while lines.peek().is_some_and(|l| l.starts_with(' ')) {
        lines.next();
    }
    lines.collect()
}

fn compare_records(reference: &Path, ours: &Path) -> Vec<String> {
    let load = |p: &Path| -> BTreeMap<String, Value> {
        tb_test_support::json_lines(p)
            .into_iter()
            .map(|mut r| {
                for f in RUN_SPECIFIC.iter().chain(&OURS_ONLY) {
                    remove(&mut r, f);
                }
                if let Some(tb) = r.pointer("/test_result/tb").and_then(Value::as_str) {
                    r["test_result"]["tb"] = exception_part(tb).into();
                }
                (r["uid"].as_str().unwrap_or_default().to_string(), r)
            })
            .collect()
    };
    let (r, o) = (load(reference), load(ours));
    let mut out = Vec::new();
    for uid in r
        .keys()
        .chain(o.keys())
        .collect::<std::collections::BTreeSet<_>>()
    {
        match (r.get(uid), o.get(uid)) {
            (Some(a), Some(b)) => {
                let mut d = Vec::new();
                diff("", a, b, &mut d);
                for line in d.iter().take(6) {
                    out.push(format!("  record {uid} {line}"));
                }
                if d.len() > 6 {
                    out.push(format!("  record {uid}: {} more differences", d.len() - 6));
                }
            }
            (Some(_), None) => out.push(format!("  record {uid}: none of ours")),
            (None, Some(_)) => out.push(format!("  record {uid}: the reference wrote none")),
            (None, None) => {}
        }
    }
    out
}

/// The case's config with its endpoints at `port`, a test key, and without the reference's
/// MCP proxy (our servers run in-process).
fn config(case: &Path, port: u16) -> String {
    std::fs::read_to_string(case.join("config.yaml"))
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with("mcp_proxy:"))
        .map(|l| {
            l.replace("127.0.0.1:42271", &format!("127.0.0.1:{port}"))
                .replace("<redacted>", "sk-test")
                .replace("timeout: 5", "timeout: 30")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs one case; returns its differences (none: equal).
fn run_case(
    shared: &Path,
    replies: &Path,
    case: &Path,
    shown: &[String],
    data: &Path,
) -> Vec<String> {
    let tmp = tempfile::tempdir().unwrap();
    let (refdir, dump) = (tmp.path().join("r"), tmp.path().join("ours"));
    extract(case, &refdir);
    std::fs::create_dir_all(&dump).unwrap();
    let mock = Mock::start(replies, &shared.join("tb-bench-v1/tasks"), &dump);
    let cfg = tmp.path().join("config.yaml");
    std::fs::write(&cfg, config(case, mock.port)).unwrap();
    let out = tmp.path().join("ours.jsonl");
    let o = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(["infer", "--data"])
        .arg(data)
        .arg("-c")
        .arg(&cfg)
        .args(["--agent", "think", "--test-list"])
        .arg(case.join("list.yaml"))
        .args([
            "--repeat",
            "1",
            "--concurrency",
            "1",
            "--overwrite",
            "--output",
        ])
        .arg(&out)
        .args(shown)
        .env_remove("THINKINGBOX_FRAMEWORK")
        .env("TB_LOG", "error")
        .output()
        .unwrap();
    drop(mock);
    let mut d = Vec::new();
    // A run with system errors exits non-zero by design (they are to be rerun); it still
    // wrote its records.
    if !o.status.success() && !out.is_file() {
        d.push(format!(
            "  tb infer failed: {}",
            String::from_utf8_lossy(&o.stderr)
                .lines()
                .last()
                .unwrap_or("")
        ));
    }
    d.extend(compare_bodies(&bodies(&refdir.join("ref")), &bodies(&dump)));
    // ours: the system errors' records are in the errors sidecar, the others in the output
    let all = tmp.path().join("all.jsonl");
    let mut text = std::fs::read_to_string(&out).unwrap_or_default();
    text.push_str(
        &std::fs::read_to_string(tmp.path().join("ours_errors.jsonl")).unwrap_or_default(),
    );
    std::fs::write(&all, text).unwrap();
    d.extend(compare_records(&case.join("ref.jsonl"), &all));
    d
}

/// Every case of `tb-bench-v1/replies`: our bodies and records equal the reference's.
#[tb_test_support::shared_test]
#[test]
fn every_reply_shape_sends_and_records_what_the_reference_did() {
    let shared = tb_test_support::shared();
    let replies = replies(&shared);
    let tmp = tempfile::tempdir().unwrap();
    let surface = super::reference_requests::recorded_surface(&shared, tmp.path());
    let prompts_file = super::reference_requests::recorded_prompts(&shared, tmp.path());
    // the prompts as the reference sent them, the user's ending prompt included
    let mut prompts: Value =
        serde_json::from_slice(&std::fs::read(&prompts_file).unwrap()).unwrap();
    prompts["user_system_with_end"] = user_system_with_end(&replies, tmp.path()).into();
    std::fs::write(&prompts_file, serde_json::to_vec_pretty(&prompts).unwrap()).unwrap();
    let shown = vec![
        "--surface".to_string(),
        surface.display().to_string(),
        "--prompts".into(),
        prompts_file.display().to_string(),
    ];
    let data = super::reference_requests::data_root(&shared);
    let only = std::env::var("TB_REPLY_CASES").ok();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&replies)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("case.json").is_file())
        .filter(|p| {
            only.as_deref().is_none_or(|o| {
                o.split(',')
                    .any(|n| p.file_name().is_some_and(|f| f.to_string_lossy() == n))
            })
        })
        .collect();
    cases.sort();
    let mut report = Vec::new();
    let mut differ = 0;
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let d = run_case(&shared, &replies, case, &shown, &data);
        if !d.is_empty() {
            differ += 1;
            report.push(format!("{name}: differs\n{}", d.join("\n")));
        }
    }
    let summary = format!("{} cases, {differ} differ", cases.len());
    eprintln!("{}\n{summary}", report.join("\n"));
    if only.is_none() {
        assert_eq!(cases.len(), 64, "the reply cases hold 64 case folders");
    }
    assert_eq!(differ, 0, "{summary}\n{}", report.join("\n"));
}
