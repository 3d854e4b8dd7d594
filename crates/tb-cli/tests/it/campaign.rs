//! Campaigns end to end with the `tb` binary: a model endpoint failing at random (HTTP 429
//! and 500, dropped connections, hangs, malformed JSON) then a `--resume` that fills the
//! gaps; a SIGKILL mid-run then a resume that finds every key exactly once; shards merged
//! equal to an unsharded run; torn lines, refused resumes and `tb verify`'s verdicts.
//!
//! The model is the scripted mock server of `tb-llm` behind a chaos proxy (below) that
//! decides per connection whether to forward the request or to fail it. Everything listens
//! on 127.0.0.1 only.

use super::common::{example, infer_args, jsonl as lines, tb_async};
use super::tb;
use serde_json::{Value, json};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;
use tb_mock_model::MockServer;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

fn keys(recs: &[Value]) -> Vec<String> {
    recs.iter()
        .map(|r| r["key"].as_str().unwrap().to_string())
        .collect()
}

/// The benchmark data (panics when missing: call from `#[tb_test_support::data_test]`s only).
fn shared_data() -> PathBuf {
    tb_test_support::data()
}

// ---------------------------------------------------------------------------------------
// The chaos proxy: per connection, forward (with `Connection: close`, so every request is a
// new connection and a new decision) or fail in one of five ways.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fault {
    TooMany,
    Server,
    Drop,
    Hang,
    Malformed,
}

const FAULTS: [Fault; 5] = [
    Fault::Hang,
    Fault::Malformed,
    Fault::TooMany,
    Fault::Server,
    Fault::Drop,
];

struct Chaos {
    upstream: std::net::SocketAddr,
    /// Faults per 1000 requests (0 = none).
    rate: AtomicU64,
    /// Added latency of forwarded requests, in ms.
    latency_ms: AtomicU64,
    counter: AtomicU64,
    forced: AtomicBool,
    served: std::sync::Mutex<BTreeMap<&'static str, usize>>,
}

fn splitmix(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Chaos {
    fn decide(&self) -> Option<Fault> {
        let n = self.counter.fetch_add(1, Ordering::SeqCst);
        let rate = self.rate.load(Ordering::SeqCst);
        if rate == 0 {
            return None;
        }
        // The first requests get each fault once, so every kind is exercised.
        if self.forced.load(Ordering::SeqCst)
            && let Some(f) = usize::try_from(n).ok().and_then(|n| FAULTS.get(n))
        {
            return Some(*f);
        }
        let r = splitmix(n ^ 0x5eed);
        (r % 1000 < rate).then(|| FAULTS[((r >> 20) % FAULTS.len() as u64) as usize])
    }

    fn count(&self, what: &'static str) {
        *self.served.lock().unwrap().entry(what).or_default() += 1;
    }
}

async fn read_request(s: &mut TcpStream) -> Option<(String, Vec<u8>)> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        if buf.len() > 1 << 24 {
            return None;
        }
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let len: usize = head
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case("content-length")
                .then(|| v.trim().parse().ok())?
        })
        .unwrap_or(0);
    let mut body = buf[head_end..].to_vec();
    while body.len() < len {
        let n = s.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some((head, body))
}

async fn respond(s: &mut TcpStream, status: &str, body: &str) {
    let text = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = s.write_all(text.as_bytes()).await;
    let _ = s.shutdown().await;
}

async fn serve_one(chaos: Arc<Chaos>, mut s: TcpStream) {
    let Some((head, body)) = read_request(&mut s).await else {
        return;
    };
    match chaos.decide() {
        Some(Fault::TooMany) => {
            chaos.count("429");
            respond(&mut s, "429 Too Many Requests", r#"{"error":"slow down"}"#).await;
        }
        Some(Fault::Server) => {
            chaos.count("500");
            respond(&mut s, "500 Internal Server Error", r#"{"error":"boom"}"#).await;
        }
        Some(Fault::Malformed) => {
            chaos.count("malformed");
            respond(&mut s, "200 OK", r#"{"choices": [{"message": "#).await;
        }
        Some(Fault::Drop) => {
            chaos.count("drop");
            drop(s);
        }
        Some(Fault::Hang) => {
            chaos.count("hang");
            // Say nothing until the client gives up (its timeout) or 20 s pass.
            let mut sink = [0u8; 256];
            let _ = tokio::time::timeout(Duration::from_secs(20), async {
                while let Ok(n) = s.read(&mut sink).await {
                    if n == 0 {
                        break;
                    }
                }
            })
            .await;
        }
        None => {
            chaos.count("forwarded");
            let ms = chaos.latency_ms.load(Ordering::SeqCst);
            if ms > 0 {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            let Ok(mut up) = TcpStream::connect(chaos.upstream).await else {
                return;
            };
            let mut head_out = String::new();
            for l in head.trim_end().split("\r\n") {
                if !l.to_ascii_lowercase().starts_with("connection:") {
                    head_out.push_str(l);
                    head_out.push_str("\r\n");
                }
            }
            head_out.push_str("connection: close\r\n\r\n");
            if up.write_all(head_out.as_bytes()).await.is_err()
                || up.write_all(&body).await.is_err()
            {
                return;
            }
            let _ = tokio::io::copy(&mut up, &mut s).await;
            let _ = s.shutdown().await;
        }
    }
}

async fn start_chaos(upstream: std::net::SocketAddr) -> (Arc<Chaos>, std::net::SocketAddr) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let chaos = Arc::new(Chaos {
        upstream,
        rate: AtomicU64::new(0),
        latency_ms: AtomicU64::new(0),
        counter: AtomicU64::new(0),
        forced: AtomicBool::new(false),
        served: std::sync::Mutex::default(),
    });
    let c = chaos.clone();
    tokio::spawn(async move {
        while let Ok((s, _)) = listener.accept().await {
            tokio::spawn(serve_one(c.clone(), s));
        }
    });
    (chaos, addr)
}

// ---------------------------------------------------------------------------------------
// A model campaign over 10 tasks of the shared data.

struct ModelCampaign {
    data: PathBuf,
    dir: tempfile::TempDir,
    _server: MockServer,
    chaos: Arc<Chaos>,
}

impl ModelCampaign {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn infer_args(&self, out: &str, extra: &[&str]) -> Vec<String> {
        let mut v: Vec<String> = [
            "infer",
            "--data",
            self.data.to_str().unwrap(),
            "--test-list",
            self.path("list.yaml").to_str().unwrap(),
            "--agent",
            "think",
            "-c",
            self.path("config.yaml").to_str().unwrap(),
            "--repeat",
            "5",
            "--message-timeout",
            "30",
            "--attempt-timeout",
            "60",
            "--output",
            self.path(out).to_str().unwrap(),
        ]
        .iter()
        .map(std::string::ToString::to_string)
        .collect();
        v.extend(extra.iter().map(std::string::ToString::to_string));
        v
    }

    /// `tb verify` on `run.jsonl`: asserts its exit code; its output.
    async fn verify(&self, code: i32) -> String {
        let (got, text) = tb_async(self.verify_args("run.jsonl")).await;
        assert_eq!(got, code, "{text}");
        text
    }

    /// `tb infer --resume` at concurrency 8 on `run.jsonl`: asserts it succeeds; its output.
    async fn resume(&self) -> String {
        let (code, text) =
            tb_async(self.infer_args("run.jsonl", &["--resume", "--concurrency", "8"])).await;
        assert_eq!(code, 0, "{text}");
        text
    }

    fn verify_args(&self, out: &str) -> Vec<String> {
        [
            "verify",
            self.path(out).to_str().unwrap(),
            "--test-list",
            self.path("list.yaml").to_str().unwrap(),
            "--repeat",
            "5",
        ]
        .iter()
        .map(std::string::ToString::to_string)
        .collect()
    }
}

/// Ten retail tasks without rubrics and with distinct queries; the mock agent plays each
/// task's golden calls (found by the query) and closes with `<DONE>`.
async fn model_campaign() -> ModelCampaign {
    let data = shared_data();
    let ds = tb_dataset::Dataset::open(&data).unwrap();
    let all = ds
        .load_test_list(Path::new(
            "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml",
        ))
        .unwrap();
    let mut by_query: HashMap<String, Vec<(String, Value)>> = HashMap::new();
    let mut ids = Vec::new();
    for t in all.iter().filter(|t| {
        t.scenario == "sandbox_external_retail"
            && !t.checks.contains(&tb_core::Check::ValidateRubricsYesno)
    }) {
        let Some(q) = t.query.clone().filter(|q| !q.is_empty()) else {
            continue;
        };
        if by_query.contains_key(&q) {
            continue;
        }
        let calls = t.servers().iter().flat_map(|s| t.golden_calls(s)).collect();
        by_query.insert(q, calls);
        ids.push(t.uid.clone());
        if ids.len() == 10 {
            break;
        }
    }
    assert_eq!(ids.len(), 10);
    let server = MockServer::start().await.unwrap();
    super::common::script_roles(&server, by_query);
    let (chaos, proxy) = start_chaos(server.addr()).await;
    let dir = tempfile::tempdir().unwrap();
    super::common::write_test_list(&dir.path().join("list.yaml"), &ids);
    let model = |role: &str| {
        vec![
            "type: aoai".to_string(),
            format!("deployment: mock-{role}"),
            format!("endpoint_url: http://{proxy}/{role}/v1/chat/completions"),
            "timeout: 1".into(),
            "max_retries_too_many_requests: 1".into(),
            "max_retries_connect: 1".into(),
            "max_retries_timeout: 0".into(),
            "max_retries_server_error: 1".into(),
            "max_retries_malformed: 0".into(),
            "retryable_server_errors: [500, 502, 503, 504, \"read-error\"]".into(),
            "retry_backoff_base: 0.01".into(),
            "retry_backoff_max: 0.02".into(),
            "credential: {type: api-key, api_key: sk-test-secret-123}".into(),
        ]
    };
    let config = super::common::three_role_config(model);
    std::fs::write(dir.path().join("config.yaml"), config).unwrap();
    ModelCampaign {
        data,
        dir,
        _server: server,
        chaos,
    }
}

#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_endpoint_faults_land_in_the_sidecar_and_a_resume_fills_them() {
    let c = model_campaign().await;
    c.chaos.rate.store(250, Ordering::SeqCst);
    c.chaos.forced.store(true, Ordering::SeqCst);
    let (code, text) = tb_async(c.infer_args(
        "run.jsonl",
        &[
            "--concurrency",
            "8",
            "--agent-concurrency",
            "6",
            "--user-concurrency",
            "2",
            "--judge-concurrency",
            "2",
        ],
    ))
    .await;
    assert_eq!(
        code, 3,
        "exit 3: the run completed with system errors left\n{text}"
    );
    assert!(text.contains("rerun them with --resume"), "{text}");
    let out = lines(&c.path("run.jsonl"));
    let errs = lines(&c.path("run_errors.jsonl"));
    assert!(!errs.is_empty(), "system errors land in the sidecar");
    // Every planned key is in exactly one of the two files, once.
    let (ko, ke) = (keys(&out), keys(&errs));
    let all: BTreeSet<&String> = ko.iter().chain(&ke).collect();
    assert_eq!(all.len(), 50);
    assert_eq!(ko.len() + ke.len(), 50);
    // The output holds verdicts only; the sidecar says what failed, with the case intact.
    for r in &out {
        assert_eq!(r["is_system_error"], false);
        assert_eq!(r["test_result"]["is_system_error"], false);
        assert!(r["verdict"].is_object());
    }
    let mut types = BTreeSet::new();
    for r in &errs {
        assert_eq!(r["is_system_error"], true, "{r}");
        assert!(r["verdict"].is_null());
        let e = &r["metadata"]["error"];
        let t = e["type"].as_str().unwrap().to_string();
        assert!(
            [
                "RateLimited",
                "HttpError",
                "TransportError",
                "ConnectError",
                "Timeout",
                "MalformedReply"
            ]
            .contains(&t.as_str()),
            "{e}"
        );
        assert!(e["class"].is_string() && e["role"].is_string(), "{e}");
        assert!(r["metadata"]["test_case_name"].is_string() && r["uid"].is_string());
        assert_eq!(
            r["provenance"]["bundle_hash"],
            out[0]["provenance"]["bundle_hash"]
        );
        types.insert(t);
    }
    assert!(
        types.contains("Timeout") && types.contains("MalformedReply"),
        "{types:?}"
    );
    let served = c.chaos.served.lock().unwrap().clone();
    for kind in ["429", "500", "drop", "hang", "malformed", "forwarded"] {
        assert!(served.get(kind).copied().unwrap_or(0) > 0, "{served:?}");
    }
    // No secret in any file.
    for f in ["run.jsonl", "run_errors.jsonl", "run_run_metadata.json"] {
        let text = std::fs::read_to_string(c.path(f)).unwrap();
        assert!(!text.contains("sk-test-secret-123"), "{f} leaks the key");
    }
    // Not verified yet: the errors are unresolved.
    let text = c.verify(1).await;
    assert!(text.contains("system errors not yet rerun"), "{text}");

    // The endpoint recovers; the resume reruns exactly the failed keys.
    c.chaos.rate.store(0, Ordering::SeqCst);
    let text = c.resume().await;
    assert!(
        text.contains(&format!(
            "({} already done, {} run now)",
            ko.len(),
            ke.len()
        )),
        "{text}"
    );
    let out2 = lines(&c.path("run.jsonl"));
    assert_eq!(
        &out2[..out.len()],
        &out[..],
        "earlier records are kept as they were"
    );
    let k2: BTreeSet<String> = keys(&out2).into_iter().collect();
    assert_eq!((out2.len(), k2.len()), (50, 50));
    assert_eq!(
        lines(&c.path("run_errors.jsonl")).len(),
        errs.len(),
        "the sidecar keeps its audit trail"
    );
    let text = c.verify(0).await;
    assert!(
        text.contains(&format!("{} system error(s) resolved", errs.len())),
        "{text}"
    );
    let m: Value =
        serde_json::from_str(&std::fs::read_to_string(c.path("run_run_metadata.json")).unwrap())
            .unwrap();
    assert_eq!(m["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(m["complete"], true);
    assert_eq!(
        m["provenance"]["models"],
        json!({"agent": "mock-agent", "user": "mock-user", "judge": "mock-judge"})
    );
    assert_eq!(m["test_list"].as_array().unwrap().len(), 10);
}

#[tb_test_support::data_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sigkill_mid_run_then_resume_leaves_every_key_exactly_once() {
    let c = model_campaign().await;
    c.chaos.latency_ms.store(100, Ordering::SeqCst);
    let args = c.infer_args("run.jsonl", &["--concurrency", "4"]);
    let mut child = Command::new(env!("CARGO_BIN_EXE_tb"))
        .args(&args)
        .env("TB_LOG", "error")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let out = c.path("run.jsonl");
    // Wait (bounded) until some records have landed, then kill -9.
    let mut landed = 0;
    for _ in 0..1200 {
        landed = std::fs::read_to_string(&out).map_or(0, |t| t.lines().count());
        if landed >= 8 {
            break;
        }
        if child.try_wait().unwrap().is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    let before = std::fs::read_to_string(&out).unwrap();
    let complete = before.lines().count();
    assert!(
        landed >= 8 && complete < 50,
        "killed mid-run: {complete} records"
    );
    // A kill during a write leaves a torn line: simulate one on top of whatever was left.
    let mut f = std::fs::OpenOptions::new().append(true).open(&out).unwrap();
    std::io::Write::write_all(&mut f, br#"{"uid":"torn.py:t","key":"torn"#).unwrap();
    drop(f);
    let text = c.verify(1).await;
    assert!(text.contains("torn last line"), "{text}");

    c.chaos.latency_ms.store(0, Ordering::SeqCst);
    let text = c.resume().await;
    assert!(text.contains("cut a torn last line"), "{text}");
    let after = std::fs::read_to_string(&out).unwrap();
    assert!(
        after.starts_with(
            before
                .lines()
                .map(|l| format!("{l}\n"))
                .collect::<String>()
                .as_str()
        )
    );
    let recs = lines(&out);
    let ks: BTreeSet<String> = keys(&recs).into_iter().collect();
    assert_eq!(recs.len(), 50, "no duplicate");
    assert_eq!(ks.len(), 50, "no lost key");
    c.verify(0).await;
}

// ---------------------------------------------------------------------------------------
// Offline campaigns on the bundled example (no model, no shared data).

fn offline(out: &Path, extra: &[&str]) -> (i32, String) {
    let ex = example();
    let args = infer_args(&ex, &ex.join("testlist.yaml"), "golden", "3", out, extra);
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    tb(&a)
}

fn verify(out: &Path) -> (i32, String) {
    let ex = example();
    tb(&[
        "verify",
        out.to_str().unwrap(),
        "--test-list",
        ex.join("testlist.yaml").to_str().unwrap(),
        "--repeat",
        "3",
    ])
}

/// `text` with the temporary directory and the example shown as `[TMP]` and `[EXAMPLE]`, for
/// snapshots that do not depend on the machine.
fn redacted(text: &str, tmp: &Path) -> String {
    tb_test_support::redact(text, &[(tmp, "[TMP]"), (&example(), "[EXAMPLE]")])
}

/// [`redacted`], then each `(text, name)` of `names` replaced by its name (run-dependent
/// values: a key written last under concurrency, a hash that changes with the tools' texts).
fn redacted_with(text: &str, tmp: &Path, names: &[(String, String)]) -> String {
    names
        .iter()
        .fold(redacted(text, tmp), |t, (v, n)| t.replace(v.as_str(), n))
}

/// The bundle and config hashes of the records of `path`, named `[BUNDLE:label]` and
/// `[CONFIG:label]` (they change with the example's files and the tools' texts, not with
/// the behaviour under test).
fn hash_names(path: &Path, label: &str) -> Vec<(String, String)> {
    let first = &lines(path)[0]["provenance"];
    ["bundle", "config"]
        .iter()
        .map(|h| {
            let v = first[format!("{h}_hash")].as_str().unwrap().to_string();
            (v, format!("[{}:{label}]", h.to_uppercase()))
        })
        .collect()
}

/// key -> (passed, result hashes), the outcome that must not depend on how the run was cut.
fn outcomes(path: &Path) -> BTreeMap<String, (Value, Value)> {
    lines(path)
        .into_iter()
        .map(|r| {
            let hashes: Vec<Value> = r["verdict"]["state"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| s["result_hash"].clone())
                .collect();
            (
                r["key"].as_str().unwrap().to_string(),
                (r["test_result"]["result"].clone(), Value::Array(hashes)),
            )
        })
        .collect()
}

#[test]
fn shards_merged_equal_an_unsharded_run_key_for_key() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let (code, text) = offline(&p("all.jsonl"), &[]);
    assert_eq!(code, 0, "{text}");
    let mut shard_files = Vec::new();
    let mut sizes = Vec::new();
    for i in 0..3 {
        let f = p(&format!("s{i}.jsonl"));
        let (code, text) = offline(&f, &["--shard", &format!("{i}/3"), "--concurrency", "2"]);
        assert_eq!(code, 0, "{text}");
        sizes.push(lines(&f).len());
        // one shard alone is not a complete result
        let (code, text) = verify(&f);
        assert_eq!(code, 1, "{text}");
        insta::assert_snapshot!(format!("verify_shard_{i}_of_3"), redacted(&text, d.path()));
        shard_files.push(f.to_str().unwrap().to_string());
    }
    assert_eq!(sizes.iter().sum::<usize>(), 24, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n > 0), "{sizes:?}");
    let merged = p("merged.jsonl");
    let mut args = vec!["merge"];
    args.extend(shard_files.iter().map(String::as_str));
    args.extend(["-o", merged.to_str().unwrap()]);
    let (code, text) = tb(&args);
    assert_eq!(code, 0, "{text}");
    assert_eq!(outcomes(&p("merged.jsonl")), outcomes(&p("all.jsonl")));
    let (code, text) = verify(&p("merged.jsonl"));
    assert_eq!(code, 0, "{text}");
    // the same shard twice: rejected, nothing written
    let (code, text) = tb(&[
        "merge",
        &shard_files[0],
        &shard_files[0],
        "-o",
        p("dup.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    let canonical = std::fs::canonicalize(d.path()).unwrap();
    let text = text.replace(canonical.to_str().unwrap(), d.path().to_str().unwrap());
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: cannot merge: [TMP]/s0.jsonl is given twice (as [TMP]/s0.jsonl and [TMP]/s0.jsonl)");
    // a copy of a shard: every key twice
    std::fs::copy(p("s0.jsonl"), p("s0copy.jsonl")).unwrap();
    if p("s0_errors.jsonl").exists() {
        std::fs::copy(p("s0_errors.jsonl"), p("s0copy_errors.jsonl")).unwrap();
    }
    let (code, text) = tb(&[
        "merge",
        &shard_files[0],
        p("s0copy.jsonl").to_str().unwrap(),
        "-o",
        p("dup.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    // Records land in completion order: name each key of s0 by its line.
    let by_line: Vec<(String, String)> = keys(&lines(&p("s0.jsonl")))
        .into_iter()
        .enumerate()
        .map(|(i, k)| (format!(" {k}: "), format!(" [key of line {}]: ", i + 1)))
        .collect();
    // one problem per line of the copy: the same key in both files
    let problems: Vec<String> = (1..=13)
        .map(|i| {
            format!("  duplicate key [key of line {i}]: [TMP]/s0.jsonl line {i} and [TMP]/s0copy.jsonl line {i}")
        })
        .collect();
    assert_eq!(
        redacted_with(&text, d.path(), &by_line).trim_end(),
        format!(
            "error: cannot merge: 13 problem(s):\n{}",
            problems.join("\n")
        )
    );
    assert!(!p("dup.jsonl").exists());
    // a shard run on another clock (another config hash) conflicts
    let (code, text) = offline(
        &p("other.jsonl"),
        &["--shard", "1/3", "--now", "2025-01-01T00:00:00Z"],
    );
    assert_eq!(code, 0, "{text}");
    let (code, text) = tb(&[
        "merge",
        &shard_files[0],
        p("other.jsonl").to_str().unwrap(),
        &shard_files[2],
        "-o",
        p("mixed.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 2, "{text}");
    let mut names = hash_names(&p("s0.jsonl"), "s0");
    names.extend(hash_names(&p("other.jsonl"), "other"));
    insta::assert_snapshot!(redacted_with(&text, d.path(), &names), @"
    error: cannot merge: 1 problem(s):
      the inputs were run on different data or configs: bundle [BUNDLE:s0] config [CONFIG:other]; bundle [BUNDLE:s0] config [CONFIG:s0]
    ");
}

#[test]
fn offline_resume_cuts_a_torn_line_and_refuses_to_mix_runs() {
    let d = tempfile::tempdir().unwrap();
    let out = d.path().join("g.jsonl");
    let (code, text) = offline(&out, &["--concurrency", "3"]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = verify(&out);
    assert_eq!(code, 0, "{text}");
    let m: Value = serde_json::from_str(
        &std::fs::read_to_string(d.path().join("g_run_metadata.json")).unwrap(),
    )
    .unwrap();
    let recs = lines(&out);
    for r in &recs {
        assert_eq!(
            r["provenance"]["bundle_hash"],
            m["provenance"]["bundle_hash"]
        );
        assert_eq!(
            r["provenance"]["config_hash"],
            m["provenance"]["config_hash"]
        );
        assert!(
            r["provenance"]["bundle_hash"]
                .as_str()
                .unwrap()
                .starts_with("sha256:")
        );
        assert!(r["provenance"]["tb_commit"].is_string());
        assert_eq!(r["provenance"]["test_list"]["tasks"], 8);
        assert_eq!(r["provenance"]["tools"]["backend"], "in-process");
    }
    assert!(
        m["bundle"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f.as_str().unwrap().ends_with("initial_data/orders.json"))
    );
    // Rerunning into the same output without --resume is refused: nothing is lost.
    let (code, text) = offline(&out, &[]);
    assert_eq!(code, 2);
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: [TMP]/g.jsonl (with its errors sidecar) already holds 24 record(s): pass --resume to continue that run, or --overwrite to start over");
    // A kill mid-write: the last line is cut short.
    let text = std::fs::read_to_string(&out).unwrap();
    let cut = &text[..text.len() - 40];
    let torn_len = cut.len() - cut.rfind('\n').map_or(0, |i| i + 1);
    let last_key = keys(&lines(&out)).pop().unwrap();
    std::fs::write(&out, cut).unwrap();
    let (code, report) = verify(&out);
    assert_eq!(code, 1);
    // Records land in completion order and their length varies: name the last key and the
    // torn length.
    let names = [
        (
            format!("{last_key}\n"),
            "[the torn line's key]\n".to_string(),
        ),
        (
            format!("({torn_len} bytes"),
            "([torn length] bytes".to_string(),
        ),
    ];
    insta::assert_snapshot!(
        "verify_torn_last_line",
        redacted_with(&report, d.path(), &names)
    );
    // Resuming with another clock would mix results: refused.
    let (code, t) = offline(&out, &["--resume", "--now", "2025-01-01T00:00:00Z"]);
    assert_eq!(code, 2);
    let names = hash_names(&out, "g");
    insta::with_settings!({filters => vec![(r"this run: sha256:[0-9a-f]{64}", "this run: [CONFIG:now 2025-01-01]")]}, {
        insta::assert_snapshot!(redacted_with(&t, d.path(), &names), @"error: [TMP]/g.jsonl: 23 record(s) were produced with another config hash ([CONFIG:g]; this run: [CONFIG:now 2025-01-01]); resuming would mix results: use another output");
    });
    let (code, t) = offline(&out, &["--resume"]);
    assert_eq!(code, 0, "{t}");
    insta::assert_snapshot!("resume_after_the_torn_line", redacted(&t, d.path()));
    let recs = lines(&out);
    let ks: BTreeSet<String> = keys(&recs).into_iter().collect();
    assert_eq!((recs.len(), ks.len()), (24, 24));
    let (code, text) = verify(&out);
    assert_eq!(code, 0, "{text}");
    // A duplicated line and an extra key are reported.
    let text = std::fs::read_to_string(&out).unwrap();
    let first = text.lines().next().unwrap().to_string();
    std::fs::write(&out, format!("{text}{first}\n")).unwrap();
    let (code, report) = verify(&out);
    assert_eq!(code, 1);
    let first_key = keys(&lines(&out)).swap_remove(0);
    let names = [(
        format!("{first_key} "),
        "[the first line's key] ".to_string(),
    )];
    insta::assert_snapshot!(
        "verify_duplicated_line",
        redacted_with(&report, d.path(), &names)
    );
    // --overwrite starts over.
    let (code, t) = offline(&out, &["--overwrite"]);
    assert_eq!(code, 0, "{t}");
    assert_eq!(lines(&out).len(), 24);
}

/// `--start-order` changes when attempts start, nothing else: every order writes every key
/// once with the plan order's outcomes, and `tb verify` accepts the output.
#[test]
fn every_start_order_writes_the_same_records() {
    let d = tempfile::tempdir().unwrap();
    let p = |n: &str| d.path().join(n);
    let (code, text) = offline(&p("plan.jsonl"), &["--concurrency", "2"]);
    assert_eq!(code, 0, "{text}");
    let want = outcomes(&p("plan.jsonl"));
    assert_eq!(want.len(), 24);
    for order in ["longest-first", "packed"] {
        let f = p(&format!("{order}.jsonl"));
        let (code, text) = offline(&f, &["--concurrency", "2", "--start-order", order]);
        assert_eq!(code, 0, "{order}: {text}");
        let recs = lines(&f);
        let ks: BTreeSet<String> = keys(&recs).into_iter().collect();
        assert_eq!(ks.len(), recs.len(), "{order}: a key written twice");
        assert_eq!(outcomes(&f), want, "{order}");
        let (code, text) = verify(&f);
        assert_eq!(code, 0, "{order}: {text}");
    }
    let (code, text) = offline(&p("bad.jsonl"), &["--start-order", "lpt"]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("start order `lpt`"), "{text}");
}
