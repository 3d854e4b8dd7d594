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
use std::process::{Command, Stdio};

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

/// mockrich.py on a free port, killed and reaped on drop.
struct Mock {
    _child: tb_test_support::Reaped,
    port: u16,
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
                    return Mock {
                        _child: tb_test_support::Reaped(child),
                        port,
                    };
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

/// Our run of a case: its dump folder and our records (output and errors sidecar together).
struct Ours {
    _tmp: tempfile::TempDir,
    dump: PathBuf,
    records: PathBuf,
    /// Why `tb infer` wrote no records, if it did not.
    failed: Option<String>,
}

/// Runs `tb infer` on a case's config and list against mockrich.py; `responses`: with the
/// agent, user and judge on the Responses API instead of Chat Completions.
fn run_ours(
    shared: &Path,
    replies: &Path,
    case: &Path,
    shown: &[String],
    data: &Path,
    responses: bool,
) -> Ours {
    let tmp = tempfile::tempdir().unwrap();
    let dump = tmp.path().join("ours");
    std::fs::create_dir_all(&dump).unwrap();
    let mock = Mock::start(replies, &shared.join("tb-bench-v1/tasks"), &dump);
    let cfg = tmp.path().join("config.yaml");
    let mut text = config(case, mock.port);
    if responses {
        text = text
            .replace("type: aoai\n", "type: aoai_responses\n")
            .replace("/v1/chat/completions", "/v1/responses");
    }
    std::fs::write(&cfg, text).unwrap();
    let out = tmp.path().join("ours.jsonl");
    let o = super::common::think_once(data, &cfg, &case.join("list.yaml"), &out, shown)
        .output()
        .unwrap();
    drop(mock);
    // A run with system errors exits non-zero by design (they are to be rerun); it still
    // wrote its records.
    let failed = (!o.status.success() && !out.is_file()).then(|| {
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .last()
            .unwrap_or("")
            .to_string()
    });
    // ours: the system errors' records are in the errors sidecar, the others in the output
    let records = tmp.path().join("all.jsonl");
    let mut text = std::fs::read_to_string(&out).unwrap_or_default();
    text.push_str(
        &std::fs::read_to_string(tmp.path().join("ours_errors.jsonl")).unwrap_or_default(),
    );
    std::fs::write(&records, text).unwrap();
    Ours {
        _tmp: tmp,
        dump,
        records,
        failed,
    }
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
    let refdir = tmp.path().join("r");
    extract(case, &refdir);
    let ours = run_ours(shared, replies, case, shown, data, false);
    let mut d: Vec<String> = ours
        .failed
        .iter()
        .map(|e| format!("  tb infer failed: {e}"))
        .collect();
    d.extend(compare_bodies(
        &bodies(&refdir.join("ref")),
        &bodies(&ours.dump),
    ));
    d.extend(compare_records(&case.join("ref.jsonl"), &ours.records));
    d
}

/// The surface and prompt options of the runs: files built from what the reference recorded
/// (the user's ending prompt from a `user_can_end_conversation` case).
fn shown(shared: &Path, replies: &Path, dir: &Path) -> Vec<String> {
    let surface = super::reference_requests::recorded_surface(shared, dir);
    let prompts_file = super::reference_requests::recorded_prompts(shared, dir);
    let mut prompts: Value =
        serde_json::from_slice(&std::fs::read(&prompts_file).unwrap()).unwrap();
    prompts["user_system_with_end"] = user_system_with_end(replies, dir).into();
    std::fs::write(&prompts_file, serde_json::to_vec_pretty(&prompts).unwrap()).unwrap();
    vec![
        "--surface".to_string(),
        surface.display().to_string(),
        "--prompts".into(),
        prompts_file.display().to_string(),
    ]
}

/// Runs `compare` on each case folder: how many differ, and a report naming each that does
/// (`<label><folder name>: differs`) with its differences.
fn differences(
    cases: &[PathBuf],
    label: &str,
    mut compare: impl FnMut(&Path) -> Vec<String>,
) -> (usize, Vec<String>) {
    let mut report = Vec::new();
    for case in cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let d = compare(case);
        if !d.is_empty() {
            report.push(format!("{label}{name}: differs\n{}", d.join("\n")));
        }
    }
    (report.len(), report)
}

/// What every run of the cases needs: the shared folder, its reply cases, a temporary
/// directory, the surface and prompt options ([`shown`], written in it) and the data root.
fn cases() -> (PathBuf, PathBuf, tempfile::TempDir, Vec<String>, PathBuf) {
    let shared = tb_test_support::shared();
    let replies = replies(&shared);
    let tmp = tempfile::tempdir().unwrap();
    let shown = shown(&shared, &replies, tmp.path());
    let data = super::reference_requests::data_root(&shared);
    (shared, replies, tmp, shown, data)
}

/// Every case of `tb-bench-v1/replies`: our bodies and records equal the reference's.
#[tb_test_support::shared_test]
#[test]
fn every_reply_shape_sends_and_records_what_the_reference_did() {
    let (shared, replies, _tmp, shown, data) = cases();
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
    let (differ, report) = differences(&cases, "", |case| {
        run_case(&shared, &replies, case, &shown, &data)
    });
    let summary = format!("{} cases, {differ} differ", cases.len());
    eprintln!("{}\n{summary}", report.join("\n"));
    if only.is_none() {
        assert_eq!(cases.len(), 64, "the reply cases hold 64 case folders");
    }
    assert_eq!(differ, 0, "{summary}\n{}", report.join("\n"));
}

/// The shape a Chat Completions case folder serves (`chat-<shape>[-canend|-isreasoning]`).
fn shape_of(case: &str) -> &str {
    let s = case.strip_prefix("chat-").unwrap_or(case);
    s.split('-').next().unwrap_or(s)
}

/// The Responses API on the same shapes: the reference's rules hold for it too. For every
/// Chat Completions case whose shape mockrich.py also serves on the Responses API (and the
/// plain and asking ones), our records over the Responses API equal the reference's over Chat
/// Completions (same conversation, tool-call errors, system errors, usage, test results); a
/// Responses reply without `usage` is the reference's system error.
#[tb_test_support::shared_test]
#[test]
fn responses_api_follows_the_same_rules_on_the_same_shapes() {
    let (shared, replies, tmp, shown, data) = cases();
    let listed = Command::new("python3")
        .arg(replies.join("scripts/mockrich.py"))
        .arg("--list-shapes")
        .output()
        .expect("python3 runs");
    let shapes: Value = serde_json::from_slice(&listed.stdout).expect("the shapes as JSON");
    // Shapes whose reply means something else on the Responses API, in the reference too: a
    // refusal there is a message (an empty text), on Chat Completions no message; a reasoning
    // item is always read, `reasoning_content` only for reasoning models (so those shapes are
    // compared on their `is_reasoning` cases).
    let api_specific = |name: &str| {
        shape_of(name) == "refusal"
            || (shape_of(name).starts_with("reasoningonly") && !name.ends_with("-isreasoning"))
    };
    let on_responses = |shape: &str| {
        matches!(shape, "plain" | "ask")
            || shapes[shape]["apis"]
                .as_array()
                .is_some_and(|a| a.iter().any(|x| x == "responses"))
    };
    let only = std::env::var("TB_REPLY_CASES").ok();
    let mut cases: Vec<PathBuf> = std::fs::read_dir(&replies)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .to_string();
            name.starts_with("chat-")
                && on_responses(shape_of(&name))
                && !api_specific(&name)
                && only
                    .as_deref()
                    .is_none_or(|o| o.split(',').any(|n| n == format!("responses:{name}")))
        })
        .collect();
    cases.sort();
    let (mut differ, mut report) = differences(&cases, "responses:", |case| {
        let ours = run_ours(&shared, &replies, case, &shown, &data, true);
        let mut d: Vec<String> = ours.failed.iter().map(|e| format!("  {e}")).collect();
        d.extend(compare_records(&case.join("ref.jsonl"), &ours.records));
        d
    });
    // a reply without usage: the reference's system error, on the first agent reply
    let plain = replies.join("chat-plain");
    let dir = tmp.path().join("nousage");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.yaml"),
        std::fs::read_to_string(plain.join("config.yaml"))
            .unwrap()
            .replace("deployment: agent\n", "deployment: agent.nousage\n"),
    )
    .unwrap();
    std::fs::copy(plain.join("list.yaml"), dir.join("list.yaml")).unwrap();
    let ours = run_ours(&shared, &replies, &dir, &shown, &data, true);
    let recs = tb_test_support::json_lines(&ours.records);
    let uid = "sandbox_neobank_support_v1_group1_rubrics_yesno.py:test_aa_001";
    let checks = [
        recs.len() == 1,
        recs.first().is_some_and(|r| {
            r["is_system_error"] == true
                && r["test_result"].is_null()
                && r["usage"] == serde_json::json!([])
                && r["metadata"]["error"]["type"] == "RuntimeError"
                && r["metadata"]["error"]["message"]
                    == format!("Error during decoding turn 0 for test case {uid}: 'usage'")
                && r["messages"].as_array().map(Vec::len) == Some(3)
        }),
    ];
    if checks.contains(&false) {
        differ += 1;
        report.push(format!("responses:nousage: differs\n  {recs:?}"));
    }
    let summary = format!("{} responses cases, {differ} differ", cases.len() + 1);
    eprintln!("{}\n{summary}", report.join("\n"));
    if only.is_none() {
        assert!(cases.len() >= 19, "{summary}");
    }
    assert_eq!(differ, 0, "{summary}\n{}", report.join("\n"));
}

/// `reply_rules: lenient`: the replies the reference stops on are read, the trials graded,
/// and the records say the rules were lenient.
#[tb_test_support::shared_test]
#[test]
fn lenient_reply_rules_read_what_the_reference_stops_on() {
    let (shared, replies, tmp, shown, data) = cases();
    for name in [
        "chat-contentlist",
        "chat-noid",
        "chat-nullargs",
        "chat-arrayargs",
        "anthropic-strinput",
        "anthropic-nullcache",
    ] {
        let case = replies.join(name);
        let dir = tmp.path().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("config.yaml"),
            std::fs::read_to_string(case.join("config.yaml"))
                .unwrap()
                .replace(
                    "    timeout: 5\n",
                    "    timeout: 5\n    reply_rules: lenient\n",
                ),
        )
        .unwrap();
        std::fs::copy(case.join("list.yaml"), dir.join("list.yaml")).unwrap();
        let ours = run_ours(&shared, &replies, &dir, &shown, &data, false);
        let recs = tb_test_support::json_lines(&ours.records);
        assert_eq!(recs.len(), 1, "{name}");
        let r = &recs[0];
        assert_eq!(r["is_system_error"], false, "{name}: {}", r["metadata"]);
        assert_eq!(r["test_result"]["result"], true, "{name}");
        assert_eq!(
            r["provenance"]["agent_model"]["reply_rules"], "lenient",
            "{name}"
        );
        // the reference's records of these cases are system errors
        let reference = tb_test_support::json_lines(&case.join("ref.jsonl"));
        assert_eq!(reference[0]["is_system_error"], true, "{name}");
    }
}
