//! A campaign in which three tasks' Python test bodies overflow a budget each (values nested
//! 100,000 deep, a loop of 10^16 rounds, a string doubled without end): every other key is
//! recorded, each bad key is its test's system error naming the budget, and `--resume`
//! finishes (running the bad keys again, to the same errors).

use std::path::{Path, PathBuf};
use std::process::Command;

use super::common::{copy_dir, jsonl as lines};
use serde_json::Value;

const GOOD: [&str; 2] = [
    "test_000_book_one_way_economy_flight",
    "test_001_change_return_flight_later",
];

/// The airline's data root, with three hostile tests (copies of the first task with other
/// bodies) added to its test file; the test list.
fn hostile_airline(dir: &Path) -> (PathBuf, PathBuf) {
    let data = tb_test_support::data();
    let root = dir.join("data");
    for sub in ["dataset", "servers", "support"] {
        copy_dir(&data.join(sub), &root.join(sub));
    }
    let file = root.join("dataset/test_case/airline_tau_bench.py");
    let mut text = std::fs::read_to_string(&file).unwrap();
    let start = text.find(&format!("def {}(", GOOD[0])).unwrap();
    let after = &text[start..];
    let open = after.find("\"\"\"").unwrap();
    let close = open + 3 + after[open + 3..].find("\"\"\"").unwrap() + 3;
    let head = after[..close].to_string();
    for (name, body) in [
        (
            "deep",
            "    a = []\n    b = []\n    for i in range(100000):\n        a = [a]\n        b = [b]\n    assert a == b\n",
        ),
        (
            "slow",
            "    n = 0\n    for i in range(100000000):\n        for j in range(100000000):\n            n += 1\n",
        ),
        ("huge", "    s = 'x'\n    while True:\n        s = s + s\n"),
    ] {
        text.push_str("\n\n");
        text.push_str(&head.replace(GOOD[0], &format!("test_900_hostile_{name}")));
        text.push('\n');
        text.push_str(body);
    }
    std::fs::write(&file, text).unwrap();
    let list = dir.join("list.yaml");
    let mut tasks: Vec<String> = GOOD.iter().map(|t| (*t).to_string()).collect();
    tasks.extend(["deep", "slow", "huge"].map(|n| format!("test_900_hostile_{n}")));
    super::common::write_test_list(
        &list,
        tasks.iter().map(|t| format!("airline_tau_bench.py:{t}")),
    );
    (root, list)
}

fn infer(root: &Path, list: &Path, out: &Path, resume: bool) -> (i32, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tb"));
    cmd.args([
        "infer",
        "--agent",
        "golden",
        "--attempt-timeout",
        "2",
        "--data",
    ])
    .arg(root)
    .arg("--test-list")
    .arg(list)
    .arg("--output")
    .arg(out)
    .env_remove("THINKINGBOX_DATA");
    if resume {
        cmd.arg("--resume");
    }
    let o = cmd.output().expect("tb runs");
    (
        o.status.code().unwrap_or(-1),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

/// `(test name, test_result.tb)` of each line.
fn outcomes(recs: &[Value]) -> Vec<(String, String, bool)> {
    let mut v: Vec<(String, String, bool)> = recs
        .iter()
        .map(|r| {
            let uid = r["uid"].as_str().unwrap_or_default();
            (
                uid.rsplit(':').next().unwrap_or_default().to_string(),
                r["test_result"]["tb"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                r["test_result"]["is_system_error"]
                    .as_bool()
                    .unwrap_or(false),
            )
        })
        .collect();
    v.sort();
    v
}

#[tb_test_support::data_test]
#[test]
fn test_bodies_over_their_budgets_are_system_errors_and_the_campaign_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let (root, list) = hostile_airline(dir.path());
    let out = dir.path().join("out.jsonl");
    let errors = dir.path().join("out_errors.jsonl");
    let (code, text) = infer(&root, &list, &out, false);
    // Exit 3: some attempts are system errors (to rerun with --resume); no abort.
    assert_eq!(code, 3, "{text}");
    let recorded = outcomes(&lines(&out));
    assert_eq!(
        recorded.iter().map(|r| r.0.as_str()).collect::<Vec<_>>(),
        GOOD.to_vec(),
        "{text}"
    );
    assert!(recorded.iter().all(|r| !r.2), "{recorded:?}");
    let want = [
        (
            "test_900_hostile_deep",
            "RecursionError: maximum recursion depth exceeded while walking a nested value (tb's limit of 1000 levels)",
        ),
        (
            "test_900_hostile_huge",
            "MemoryError: the test body built more than 512 MiB of values (tb's memory budget for a test body)",
        ),
        (
            "test_900_hostile_slow",
            "TimeoutError: the test body ran past its time budget of 2.000s",
        ),
    ];
    let bad = outcomes(&lines(&errors));
    assert_eq!(bad.len(), 3, "{bad:?}");
    for ((name, tb, system), (want_name, want_tb)) in bad.iter().zip(want) {
        assert_eq!(
            (name.as_str(), tb.as_str(), *system),
            (want_name, want_tb, true)
        );
    }
    // The resume runs the bad keys again, to the same errors, and finishes.
    let (code, text) = infer(&root, &list, &out, true);
    assert_eq!(code, 3, "{text}");
    assert_eq!(outcomes(&lines(&out)), recorded);
    let again = outcomes(&lines(&errors));
    assert_eq!(again.len(), 6, "{again:?}");
    for w in want {
        assert_eq!(again.iter().filter(|r| r.0 == w.0 && r.1 == w.1).count(), 2);
    }
}
