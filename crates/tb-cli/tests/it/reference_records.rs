//! The records `tb` writes, read by the reference's own tools.
//!
//! Every line `tb` writes as a trial record (campaign outputs of the golden, noop and model
//! agents, the errors sidecar, `tb run-test -o`, merged shards and their merged sidecar) must
//! validate under the framework's pydantic model `DecodeResult`
//! (`thinkingbox/common/chat_types.py`), and the framework's `tb agg` on our records must give
//! the numbers of the "reference metrics" of our `tb agg`: mean pass with its interval,
//! pass@k and pass^k, per-test pass/fail/error counts, and its closing text lines.
//!
//! The sample is every 25th task of ThinkingBox-Bench v1.0 (all five domains). The model
//! agent is `tb-llm`'s scripted mock server: it plays a task's golden calls for two tasks in
//! three and ends without acting on the others, and some of its replies are HTTP 500 faults
//! (no retries), so the model run has passes, failures and system errors.
//!
//! Python: `$TB_REFERENCE_PYTHON`, else `target/py-reference/bin/python` (made by
//! `scripts/ci-python-deps.sh`; `#[needs(python_reference)]`), with the framework checkout on
//! `PYTHONPATH`.

use super::common::tb_async;
use super::tb;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tb_mock_model::{Fault, MockServer};

struct Reference {
    python: PathBuf,
    framework: PathBuf,
    data: PathBuf,
}

impl Reference {
    /// The checkouts and their Python (call from a `#[needs(python_reference)]` test only).
    fn find() -> Reference {
        let data = tb_test_support::data();
        let framework = tb_test_support::framework();
        let python = tb_test_support::need(tb_test_support::Need::PythonReference);
        let r = Reference {
            python,
            framework,
            data,
        };
        let ok = r
            .python(&["-c", "import thinkingbox.cli.agg_main"])
            .is_ok_and(|o| o.status.success());
        assert!(
            ok,
            "{} cannot import the framework's `tb agg` from {}",
            r.python.display(),
            r.framework.display()
        );
        r
    }

    fn python(&self, args: &[&str]) -> std::io::Result<std::process::Output> {
        Command::new(&self.python)
            .args(args)
            .env("PYTHONPATH", &self.framework)
            .env("COLUMNS", "200")
            .output()
    }

    /// `DecodeResult` over every line of each file: file -> (valid, rejections).
    fn validate(&self, files: &[PathBuf]) -> HashMap<String, (u64, Vec<Value>)> {
        let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/py/validate_records.py");
        let mut args = vec![script.to_str().unwrap()];
        args.extend(files.iter().map(|f| f.to_str().unwrap()));
        let out = self.python(&args).unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        v.as_object()
            .unwrap()
            .iter()
            .map(|(k, r)| {
                (
                    k.clone(),
                    (
                        r["valid"].as_u64().unwrap(),
                        r["invalid"].as_array().unwrap().clone(),
                    ),
                )
            })
            .collect()
    }

    /// The reference's `tb agg` on one file: its JSON, and its table output's closing lines.
    fn agg(&self, file: &Path) -> (Value, String) {
        let f = file.to_str().unwrap();
        let out = self
            .python(&["-m", "thinkingbox.cli.main", "agg", "-f", "json", f])
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let json = serde_json::from_slice(&out.stdout).unwrap();
        let out = self
            .python(&["-m", "thinkingbox.cli.main", "agg", f])
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let tail = &text[text.find("Number of tests:").expect("closing lines")..];
        (json, tail.to_string())
    }
}

fn cat(out: &Path, parts: &[&Path]) {
    let mut s = String::new();
    for p in parts {
        s.push_str(&std::fs::read_to_string(p).unwrap());
    }
    std::fs::write(out, s).unwrap();
}

fn close(a: f64, b: f64, what: &str) {
    assert!((a - b).abs() <= 1e-9, "{what}: reference {a}, ours {b}");
}

/// Our `tb agg --format json` against the reference's `tb agg -f json` on the same file.
fn same_numbers(r: &Reference, file: &Path) -> Value {
    let (reference, ref_tail) = r.agg(file);
    let (code, text) = tb(&["agg", "-f", "json", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    let ours: Value = serde_json::from_str(&text).unwrap();
    let ours = &ours[0];
    let m = &reference["metrics"];
    let what = file.display().to_string();
    assert_eq!(m["num_tests"], ours["tasks"], "{what}");
    assert_eq!(m["total_runs"], ours["attempts"], "{what}");
    assert_eq!(
        m["runs_per_test"], ours["attempts_per_task"]["first"],
        "{what}"
    );
    close(
        m["mean_pass"].as_f64().unwrap(),
        ours["mean_pass"].as_f64().unwrap(),
        "mean pass",
    );
    close(
        m["mean_pass_ci_low"].as_f64().unwrap(),
        ours["mean_pass_ci"][0].as_f64().unwrap(),
        "interval low",
    );
    close(
        m["mean_pass_ci_high"].as_f64().unwrap(),
        ours["mean_pass_ci"][1].as_f64().unwrap(),
        "interval high",
    );
    for (theirs, mine) in [
        ("unbiased_pass_at_k", "pass_at"),
        ("pass_power_k", "pass_hat"),
    ] {
        let list = m[theirs].as_array().unwrap();
        let map = ours[mine].as_object().unwrap();
        assert_eq!(
            list.len(),
            map.len(),
            "{what}: {theirs} {list:?} vs {map:?}"
        );
        assert!(!list.is_empty(), "{what}: {theirs} reported for no k");
        for kv in list {
            let k = kv[0].as_u64().unwrap();
            close(
                kv[1].as_f64().unwrap(),
                map[&k.to_string()].as_f64().unwrap(),
                &format!("{theirs} k={k}"),
            );
        }
    }
    eprintln!(
        "{}: both: {} tasks x {} runs, mean pass {:.4} [{:.4}, {:.4}], pass@k {}, pass^k {}, errors {}",
        file.file_name().unwrap().to_string_lossy(),
        m["num_tests"],
        m["runs_per_test"],
        m["mean_pass"].as_f64().unwrap(),
        m["mean_pass_ci_low"].as_f64().unwrap(),
        m["mean_pass_ci_high"].as_f64().unwrap(),
        m["unbiased_pass_at_k"],
        m["pass_power_k"],
        ours["errors"]
    );
    // the per-test table, summed: passes, assertion failures, errors
    let per_test = reference["per_test"].as_array().unwrap();
    let sum = |f: &str| per_test.iter().map(|t| t[f].as_u64().unwrap()).sum::<u64>();
    assert_eq!(sum("passed"), ours["passed"].as_u64().unwrap(), "{what}");
    assert_eq!(sum("failed"), ours["failed"].as_u64().unwrap(), "{what}");
    assert_eq!(sum("error"), ours["errors"].as_u64().unwrap(), "{what}");
    // and the closing lines of its table output, character for character
    let (code, text) = tb(&["agg", "-f", "reference", file.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    assert!(
        text.contains(ref_tail.trim_end()),
        "{what}: reference closing lines\n{ref_tail}\nours\n{text}"
    );
    ours.clone()
}

#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[tb_test_support::needs(python_reference)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_record_loads_in_the_reference_and_its_agg_gives_our_numbers() {
    let r = Reference::find();
    let data = r.data.clone();
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n);
    let ds = tb_dataset::Dataset::open(&data).unwrap();
    let all = ds
        .load_test_list(Path::new(
            "releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml",
        ))
        .unwrap();
    let sample: Vec<&tb_core::Task> = all.iter().step_by(25).collect();
    let scenarios: std::collections::BTreeSet<&str> =
        sample.iter().map(|t| t.scenario.as_str()).collect();
    assert_eq!(scenarios.len(), 5, "{scenarios:?}");
    super::common::write_test_list(&p("list.yaml"), sample.iter().map(|t| &t.uid));
    let data_s = data.to_str().unwrap().to_string();
    let list = p("list.yaml");
    let infer = |agent: &str, repeat: &str, out: &Path, extra: &[&str]| {
        super::common::infer_args(&data, &list, agent, repeat, out, extra)
    };

    // Offline agents: golden and noop, 3 attempts each.
    for (agent, repeat) in [("golden", "3"), ("noop", "4")] {
        let (code, text) = tb_async(infer(agent, repeat, &p(&format!("{agent}.jsonl")), &[])).await;
        assert_eq!(code, 0, "{text}");
    }
    // Golden again in two shards, merged.
    for i in 0..2 {
        let (code, text) = tb_async(infer(
            "golden",
            "3",
            &p(&format!("s{i}.jsonl")),
            &["--shard", &format!("{i}/2")],
        ))
        .await;
        assert_eq!(code, 0, "{text}");
    }
    let (code, text) = tb(&[
        "merge",
        p("s0.jsonl").to_str().unwrap(),
        p("s1.jsonl").to_str().unwrap(),
        "-o",
        p("merged.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");

    // The scripted model: golden calls for two tasks in three, nothing for the rest; the
    // first agent requests fail with HTTP 500 (no retries) and one judge request too.
    let mut by_query: HashMap<String, Vec<(String, Value)>> = HashMap::new();
    for (i, t) in sample.iter().enumerate() {
        let q = t.query.clone().unwrap_or_default();
        let calls = if i % 3 == 2 {
            Vec::new()
        } else {
            t.servers().iter().flat_map(|s| t.golden_calls(s)).collect()
        };
        by_query.entry(q).or_insert(calls);
    }
    let server = MockServer::start().await.unwrap();
    super::common::script_roles(&server, by_query);
    let fault = || Fault::Status {
        status: 500,
        retry_after: None,
        body: "{\"error\": \"boom\"}".into(),
    };
    for _ in 0..5 {
        server.push_fault("agent", fault());
    }
    server.push_fault("judge", fault());
    let config = super::common::mock_models_config(
        &server,
        &[
            "timeout: 10",
            "max_retries_server_error: 0",
            "retry_backoff_base: 0.01",
            "retry_backoff_max: 0.02",
            "credential: {type: api-key, api_key: sk-test-secret-123}",
        ],
    );
    std::fs::write(p("config.yaml"), config).unwrap();
    let cfg = p("config.yaml").to_str().unwrap().to_string();
    let (code, text) = tb_async(infer(
        "think",
        "2",
        &p("model.jsonl"),
        &[
            "-c",
            &cfg,
            "--concurrency",
            "4",
            "--dump",
            "tools,userllm,raw",
        ],
    ))
    .await;
    assert_eq!(code, 3, "some attempts end in system errors: {text}");
    let (code, text) = tb(&[
        "run-test",
        p("model.jsonl").to_str().unwrap(),
        "--data",
        &data_s,
        "-o",
        p("rerun.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{text}");

    // 1. Every line is a `DecodeResult`.
    let files: Vec<PathBuf> = [
        "golden.jsonl",
        "golden_errors.jsonl",
        "noop.jsonl",
        "noop_errors.jsonl",
        "model.jsonl",
        "model_errors.jsonl",
        "rerun.jsonl",
        "merged.jsonl",
        "merged_errors.jsonl",
    ]
    .iter()
    .map(|n| p(n))
    .filter(|f| f.exists())
    .collect();
    let lines = |f: &Path| {
        std::fs::read_to_string(f)
            .unwrap()
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count() as u64
    };
    let checked = r.validate(&files);
    let mut total = 0;
    for f in &files {
        let (valid, invalid) = &checked[f.to_str().unwrap()];
        assert!(invalid.is_empty(), "{}: {invalid:#?}", f.display());
        assert_eq!(*valid, lines(f), "{}", f.display());
        total += valid;
    }
    let n = sample.len() as u64;
    let sidecar = lines(&p("model_errors.jsonl"));
    assert!(sidecar >= 5, "the faults left system errors: {sidecar}");
    assert_eq!(lines(&p("model.jsonl")) + sidecar, 2 * n);
    assert_eq!(lines(&p("merged.jsonl")), 3 * n);
    assert_eq!(total, (3 + 4 + 3) * n + 2 * n + lines(&p("rerun.jsonl")));
    eprintln!(
        "{total} records in {} files validate under DecodeResult",
        files.len()
    );

    // 2. The reference's `tb agg` gives our reference numbers.
    // a. mixed outcomes: 5 attempts per task (k = 1 and 5), of which 1, 2 or 3 (by task) are
    //    golden attempts and the rest noop attempts, so tasks pass 1 to 5 times in 5
    let index: HashMap<String, usize> = sample
        .iter()
        .enumerate()
        .map(|(i, t)| (t.uid.clone(), i))
        .collect();
    let pick = |file: &str, golden: bool| -> String {
        std::fs::read_to_string(p(file))
            .unwrap()
            .lines()
            .filter(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                let g = 1 + index[v["uid"].as_str().unwrap()] % 3;
                let rep = usize::try_from(v["repetition"].as_u64().unwrap()).unwrap();
                if golden { rep < g } else { rep < 5 - g }
            })
            .map(|l| format!("{l}\n"))
            .collect()
    };
    std::fs::write(
        p("mixed.jsonl"),
        pick("golden.jsonl", true) + &pick("noop.jsonl", false),
    )
    .unwrap();
    let ours = same_numbers(&r, &p("mixed.jsonl"));
    assert!(ours["passed"].as_u64().unwrap() > 0 && ours["failed"].as_u64().unwrap() > 0);
    assert_eq!(ours["pass_at"].as_object().unwrap().len(), 2, "{ours}");
    // b. with system errors: golden (3) + the model run with its sidecar (2) per task
    cat(
        &p("errors.jsonl"),
        &[
            &p("golden.jsonl"),
            &p("model.jsonl"),
            &p("model_errors.jsonl"),
        ],
    );
    let ours = same_numbers(&r, &p("errors.jsonl"));
    assert!(ours["errors"].as_u64().unwrap() >= 5, "{ours}");
    assert!(ours["failed"].as_u64().unwrap() > 0, "{ours}");
    assert_eq!(ours["pass_at"].as_object().unwrap().len(), 2, "{ours}");
    // c. the model run alone (verdicts only, 2 or fewer per task: unequal runs, no pass@k)
    let (reference, _) = r.agg(&p("model.jsonl"));
    let (code, text) = tb(&["agg", "-f", "json", p("model.jsonl").to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    let mine: Value = serde_json::from_str(&text).unwrap();
    close(
        reference["metrics"]["mean_pass"].as_f64().unwrap(),
        mine[0]["mean_pass"].as_f64().unwrap(),
        "model run mean pass",
    );
    assert_eq!(
        reference["metrics"]["unbiased_pass_at_k"]
            .as_array()
            .unwrap()
            .is_empty(),
        mine[0]["reference_omits_pass_k"] == json!(true),
        "{reference} {mine}"
    );
}
