//! `tb campaign plan|run|status|merge` without a scheduler: the generated Slurm script and
//! Kubernetes manifests, the manifests validated against the Kubernetes Job schema, shards of
//! another campaign refused by `tb merge`, a shard run twice never doubled, and the status
//! read from the outputs alone. (The Slurm cluster run is `tests/it/slurm.rs`.)
//!
//! Kubernetes: `kubectl apply --dry-run=client` cannot validate without an API server (it
//! downloads the OpenAPI document from the server), so the manifests are checked with
//! `kubernetes-validate --strict` (PyPI), which validates against JSON schemas generated from
//! the official Kubernetes OpenAPI definitions it ships (unknown fields, types, required
//! fields), for the oldest and newest versions it has. Its interpreter: `$TB_K8S_PYTHON`,
//! else `target/py-k8s/bin/python` (made by `scripts/ci-python-deps.sh`;
//! `#[needs(python_k8s)]`).

use super::common::example;
use super::tb;
use serde_json::Value;
use std::path::Path;
use std::process::Command;

/// `text` with the temporary directory, the example and the checkout shown as `[TMP]`,
/// `[EXAMPLE]` and `[WS]`, for snapshots that do not depend on the machine.
///
/// `[TB]` is the `tb` binary (its path depends on the target dir).
/// A campaign's id is random (a new one per plan): each campaign folder `tmp/<name>`'s id is
/// shown as `[ID:<name>]`; the merged records' hashes (they change with the example's files
/// and the tools' texts) as `[BUNDLE]` and `[CONFIG]`.
fn redacted(text: &str, tmp: &Path) -> String {
    let mut t = tb_test_support::redact(
        text,
        &[
            (tmp, "[TMP]"),
            (&example(), "[EXAMPLE]"),
            (Path::new(env!("CARGO_BIN_EXE_tb")), "[TB]"),
            (&tb_test_support::workspace_root(), "[WS]"),
        ],
    );
    for e in std::fs::read_dir(tmp).unwrap().flatten() {
        let Ok(c) = std::fs::read_to_string(e.path().join("campaign.json")) else {
            continue;
        };
        let c: Value = serde_json::from_str(&c).unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        t = t.replace(c["id"].as_str().unwrap(), &format!("[ID:{name}]"));
        if let Some(first) = lines(&e.path().join("merged.jsonl")).first() {
            let r: Value = serde_json::from_str(first).unwrap();
            for h in ["bundle", "config"] {
                let v = r["provenance"][format!("{h}_hash")].as_str().unwrap();
                t = t.replace(v, &format!("[{}]", h.to_uppercase()));
            }
        }
    }
    t
}

fn plan(dir: &Path, scheduler: &str, shards: &str, extra: &[&str]) -> (i32, String) {
    let ex = example();
    let list = ex.join("testlist.yaml");
    let infer = golden_options(&ex, &list, &["--repeat", "3"]);
    plan_with(dir, scheduler, shards, extra, &infer)
}

/// `tb infer` options running the golden agent on `list` of the data root `ex`, then `more`.
fn golden_options<'a>(ex: &'a Path, list: &'a Path, more: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec![
        "--data",
        ex.to_str().unwrap(),
        "--test-list",
        list.to_str().unwrap(),
        "--agent",
        "golden",
    ];
    v.extend(more);
    v
}

/// `tb campaign plan` into `dir` with `scheduler`, `shards` and the `extra` options, its
/// `tb infer` options (after `--`) `infer`.
fn plan_with(
    dir: &Path,
    scheduler: &str,
    shards: &str,
    extra: &[&str],
    infer: &[&str],
) -> (i32, String) {
    let mut args = vec![
        "campaign",
        "plan",
        "--scheduler",
        scheduler,
        "--shards",
        shards,
        "--output",
        dir.to_str().unwrap(),
    ];
    args.extend(extra);
    args.push("--");
    args.extend(infer);
    tb(&args)
}

/// Asserts that a plan (its exit code and output) succeeded; snapshots its output as
/// `output` and each planned file of `dir` as its snapshot (`(file, snapshot)`), with `tmp`
/// redacted.
fn assert_plan(
    planned: (i32, String),
    (dir, tmp): (&Path, &Path),
    output: &str,
    files: &[(&str, &str)],
) {
    let (code, text) = planned;
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!(output, redacted(&text, tmp));
    for (file, snapshot) in files {
        let text = std::fs::read_to_string(dir.join(file)).unwrap();
        insta::assert_snapshot!(*snapshot, redacted(&text, tmp));
    }
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn status(dir: &Path) -> (i32, Value) {
    let (code, text) = tb(&["campaign", "status", dir.to_str().unwrap(), "--json"]);
    (
        code,
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
    )
}

/// `tb campaign plan --scheduler k8s` in `dir`: its exit code and output.
fn plan_k8s(dir: &Path) -> (i32, String) {
    plan(
        dir,
        "k8s",
        "4",
        &[
            "--secret",
            "model-keys",
            "--image",
            "registry.example/tb:1.0",
        ],
    )
}

#[test]
fn kubernetes_manifests_are_an_indexed_job_and_a_merge_job() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("k");
    // The whole manifests: an indexed Job of 4 completions whose index is the shard, the
    // secret as environment, the image, the data read-only at /data, the campaign at /campaign;
    // the merge job runs `tb campaign merge /campaign`.
    assert_plan(
        plan_k8s(&dir),
        (&dir, d.path()),
        "k8s_plan_output",
        &[
            ("k8s-job.yaml", "k8s_job_yaml"),
            ("k8s-merge-job.yaml", "k8s_merge_job_yaml"),
        ],
    );
}

#[tb_test_support::needs(python_k8s)]
#[test]
fn kubernetes_manifests_validate_against_the_job_schema() {
    let python = tb_test_support::need(tb_test_support::Need::PythonK8s);
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("k");
    let (code, text) = plan_k8s(&dir);
    assert_eq!(code, 0, "{text}");
    let job = std::fs::read_to_string(dir.join("k8s-job.yaml")).unwrap();
    let validate = |file: &Path, version: &str| {
        Command::new(&python)
            .args(["-m", "kubernetes_validate", "--strict", "-k", version])
            .arg(file)
            .output()
            .unwrap()
    };
    for version in ["1.25.0", "1.37.0"] {
        for f in ["k8s-job.yaml", "k8s-merge-job.yaml"] {
            let out = validate(&dir.join(f), version);
            let text = String::from_utf8_lossy(&out.stdout).to_string()
                + &String::from_utf8_lossy(&out.stderr);
            assert!(out.status.success(), "{f} against {version}: {text}");
            assert!(text.contains("passed"), "{text}");
        }
    }
    // the validator does reject what the schema forbids
    let bad = d.path().join("bad.yaml");
    std::fs::write(
        &bad,
        job.replace("  completions: 4", "  completions: \"four\"\n  bogus: 1"),
    )
    .unwrap();
    assert!(!validate(&bad, "1.37.0").status.success());
}

#[test]
fn slurm_script_shards_status_and_foreign_shards() {
    let d = tempfile::tempdir().unwrap();
    let a = d.path().join("a");
    let b = d.path().join("b");
    // The whole script: an array 0-2, requeued, on partition cpu for an hour, each task
    // running `tb campaign run --shard "$SLURM_ARRAY_TASK_ID"`; merge.sh runs the merge.
    let options = ["--partition", "cpu", "--time", "01:00:00"];
    assert_plan(
        plan(&a, "slurm", "3", &options),
        (&a, d.path()),
        "slurm_plan_output",
        &[
            ("slurm.sbatch", "slurm_sbatch"),
            ("merge.sh", "slurm_merge_sh"),
        ],
    );
    // planning over a campaign is refused; options the campaign sets are refused
    let (code, text) = plan(&a, "slurm", "3", &[]);
    assert_ne!(code, 0);
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: [TMP]/a already holds a campaign: pass --force to replace it");
    let infer = ["--agent", "golden", "--shard", "0/2"];
    let (code, text) = plan_with(&d.path().join("c"), "slurm", "2", &[], &infer);
    assert_ne!(code, 0);
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: --shard is set by the campaign: leave it out of the `tb infer` options");

    // nothing run yet
    let (code, st) = status(&a);
    assert_eq!(code, 1);
    let keys: Vec<u64> = (0..3)
        .map(|i| st["shards"][i]["keys"].as_u64().unwrap())
        .collect();
    assert_eq!(keys.iter().sum::<u64>(), 24);
    assert!(
        st["shards"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] == "not started")
    );
    // shards 0 and 1 run; shard 1 loses its last two records (a kill, say)
    for i in ["0", "1"] {
        let (code, text) = tb(&["campaign", "run", a.to_str().unwrap(), "--shard", i]);
        assert_eq!(code, 0, "{text}");
    }
    let s1 = a.join("shards/shard-1.jsonl");
    let l1 = lines(&s1);
    std::fs::write(&s1, l1[..l1.len() - 2].join("\n") + "\n").unwrap();
    let (code, st) = status(&a);
    assert_eq!(code, 1);
    assert_eq!(st["shards"][0]["state"], "done");
    assert_eq!(st["shards"][0]["done"], keys[0]);
    assert_eq!(st["shards"][1]["state"], "stopped");
    assert_eq!(st["shards"][1]["missing"], 2);
    assert_eq!(st["shards"][2]["state"], "not started");
    // merging before every shard exists is refused
    let (code, text) = tb(&["campaign", "merge", a.to_str().unwrap()]);
    assert_ne!(code, 0);
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: shard output(s) not written yet: [TMP]/a/shards/shard-2.jsonl (see `tb campaign status`)");
    // rerun shard 1 (resumes the 2 keys), shard 0 twice (idempotent), shard 2
    for i in ["1", "0", "2"] {
        let (code, text) = tb(&["campaign", "run", a.to_str().unwrap(), "--shard", i]);
        assert_eq!(code, 0, "{text}");
    }
    assert_eq!(lines(&s1).len(), l1.len());
    assert_eq!(lines(&a.join("shards/shard-0.jsonl")).len() as u64, keys[0]);
    let (code, st) = status(&a);
    assert_eq!(code, 0, "{st}");
    assert_eq!(st["complete"], true);
    let (code, text) = tb(&["campaign", "merge", a.to_str().unwrap()]);
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("slurm_campaign_merge_output", redacted(&text, d.path()));
    let (code, _) = tb(&["campaign", "run", a.to_str().unwrap(), "--shard", "3"]);
    assert_ne!(code, 0);

    // another campaign over the same tasks: its shard is refused by `tb merge`
    let (code, text) = plan(&b, "slurm", "3", &[]);
    assert_eq!(code, 0, "{text}");
    let (code, text) = tb(&["campaign", "run", b.to_str().unwrap(), "--shard", "1"]);
    assert_eq!(code, 0, "{text}");
    let out = d.path().join("mixed.jsonl");
    let (code, text) = tb(&[
        "merge",
        a.join("shards/shard-0.jsonl").to_str().unwrap(),
        b.join("shards/shard-1.jsonl").to_str().unwrap(),
        a.join("shards/shard-2.jsonl").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    // The campaigns are listed in the order of their ids, which are random: the expected order
    // is put back as a then b for the snapshot (listed otherwise, the snapshot differs).
    let id = |c: &Path| -> String {
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(c.join("campaign.json")).unwrap())
                .unwrap();
        m["id"].as_str().unwrap().to_string()
    };
    let seg_a = "[ID:a] (e.g. [TMP]/a/shards/shard-0.jsonl)";
    let seg_b = "[ID:b] (e.g. [TMP]/b/shards/shard-1.jsonl)";
    let by_id = if id(&a) < id(&b) {
        format!("{seg_a}, {seg_b}")
    } else {
        format!("{seg_b}, {seg_a}")
    };
    let shown = redacted(&text, d.path()).replace(&by_id, &format!("{seg_a}, {seg_b}"));
    insta::assert_snapshot!(shown, @"error: the inputs belong to different campaigns: [ID:a] (e.g. [TMP]/a/shards/shard-0.jsonl), [ID:b] (e.g. [TMP]/b/shards/shard-1.jsonl); nothing written");
    assert!(!out.exists());
    // and a campaign refuses to run a shard into an output of another campaign
    std::fs::copy(
        b.join("shards/shard-1.jsonl"),
        a.join("shards/shard-1.jsonl"),
    )
    .unwrap();
    let (code, text) = tb(&["campaign", "run", a.to_str().unwrap(), "--shard", "1"]);
    assert_ne!(code, 0);
    insta::assert_snapshot!(redacted(&text, d.path()), @"error: [TMP]/a/shards/shard-1.jsonl holds records of another campaign ([ID:b]), not of [ID:a]");
}

/// Hostile values in every field that reaches `slurm.sbatch`, `merge.sh` or a manifest
/// (newlines, quotes, `$()`, YAML document markers): each is refused by name before anything
/// is written.
#[test]
fn hostile_plan_values_are_refused_before_anything_is_written() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("c");
    let bad = [
        "x\n#SBATCH --wrap=id",
        "x'$(id)'",
        "x\"; id; \"",
        "`id`",
        "x\n---\nkind: Pod",
    ];
    let cases: Vec<(&str, &str, &str)> = [
        ("slurm", "--name"),
        ("slurm", "--partition"),
        ("slurm", "--time"),
        ("k8s", "--name"),
        ("k8s", "--image"),
        ("k8s", "--secret"),
        ("k8s", "--data-claim"),
        ("k8s", "--campaign-claim"),
    ]
    .into_iter()
    .flat_map(|(s, f)| bad.iter().map(move |b| (s, f, *b)))
    .collect();
    for (scheduler, flag, value) in cases {
        let (code, text) = plan(&dir, scheduler, "2", &[flag, value]);
        assert_eq!(code, 2, "{scheduler} {flag} {value:?}: {text}");
        assert!(text.contains(flag), "{flag}: {text}");
        assert!(!dir.exists(), "{flag} {value:?}: the folder was written");
    }
    // The campaign folder's path, and its name as the default campaign name.
    for (scheduler, folder) in [
        ("slurm", "a\nb"),
        ("slurm", "a b"),
        ("slurm", "a%j"),
        ("k8s", "a\nb"),
    ] {
        let dir = d.path().join(folder);
        let (code, text) = plan(&dir, scheduler, "2", &[]);
        assert_eq!(code, 2, "{folder:?}: {text}");
        assert!(text.contains("--output"), "{text}");
        assert!(!dir.exists());
    }
    let dir = d.path().join("it's");
    let (code, text) = plan(&dir, "k8s", "2", &[]);
    assert_eq!(code, 2, "{text}");
    assert!(text.contains("pass --name"), "{text}");
    assert!(!dir.join("k8s-job.yaml").exists());
    let (code, text) = plan(&dir, "k8s", "2", &["--name", "its"]);
    assert_eq!(code, 0, "{text}");
}

/// A config holding a literal key is refused with the place and `${VAR}`; the key is neither
/// copied into the campaign folder nor shown. The same config with a reference is planned.
#[test]
fn a_config_with_a_literal_key_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("c");
    let cfg = d.path().join("cfg.yaml");
    let key = "sk-live-0123456789abcdef";
    std::fs::write(
        &cfg,
        format!("agent_model:\n  type: openai\n  deployment: m\n  endpoint_url: http://x/v1\n  credential:\n    type: api-key\n    api_key: {key}\n"),
    )
    .unwrap();
    let ex = example();
    let plan_with_config = || {
        let list = ex.join("testlist.yaml");
        let infer = golden_options(&ex, &list, &["--config", cfg.to_str().unwrap()]);
        plan_with(&dir, "slurm", "2", &[], &infer)
    };
    let (code, text) = plan_with_config();
    assert_eq!(code, 2, "{text}");
    assert!(!text.contains(key), "{text}");
    assert!(
        text.contains("cfg.yaml:7: `agent_model.credential.api_key` holds a literal key"),
        "{text}"
    );
    assert!(text.contains("${OPENAI_API_KEY}"), "{text}");
    assert!(!dir.exists());
    std::fs::write(
        &cfg,
        "agent_model:\n  type: openai\n  deployment: m\n  endpoint_url: http://x/v1\n  credential:\n    type: api-key\n    api_key: ${MY_KEY}\n",
    )
    .unwrap();
    let (code, text) = plan_with_config();
    assert_eq!(code, 0, "{text}");
    let copied = std::fs::read_to_string(dir.join("config.yaml")).unwrap();
    assert!(copied.contains("api_key: ${MY_KEY}"));
}
