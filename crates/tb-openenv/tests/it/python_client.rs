//! The PyPI OpenEnv client (`openenv` >= 0.4.1, its `GenericEnvClient` over `/ws`) plays
//! episodes against our server: a retail task with its golden calls replayed and a closing
//! message gets reward 1.0; the same task with one state-changing call skipped gets 0.0.
//! The script (tests/py/openenv_episode.py) also scans every raw frame it received, including
//! an error frame, for hidden fields.
//!
//! Python is `tb_test_support::Need::PythonOpenenv` (`$TB_OPENENV_PYTHON`, then
//! `target/py-openenv`, made by scripts/ci-python-deps.sh, then `python3`). The user and judge
//! models are the in-process mock model server.

use crate::common;

use common::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tb_dataset::Dataset;
use tb_eval::root::LoadedRoot;

/// Starts a server on `data` restricted to `test_list`, writes the spec for these tasks, runs
/// the Python client, and checks its verdicts.
/// Runs the client script `tests/py/<script>` (`what`, for messages) with `py`, its episode
/// spec written to `dir/spec.json` and `envs`, for at most `limit` (a guard against a hung
/// interpreter, not a timing check): asserts that it succeeds and that its last JSON line says
/// `ok`; that line and its whole output.
async fn run_client(
    what: &str,
    py: &Path,
    script: &str,
    spec: &Value,
    dir: &Path,
    envs: &[(&str, &Path)],
    limit: Duration,
) -> (Value, String) {
    let spec_path = dir.join("spec.json");
    std::fs::write(&spec_path, spec.to_string()).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/py")
        .join(script);
    let child = tokio::process::Command::new(py)
        .arg(&script)
        .arg(&spec_path)
        .envs(envs.iter().copied())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(limit, child)
        .await
        .unwrap_or_else(|_| panic!("{what} did not finish"))
        .expect("running python");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{what} failed:\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    let last: Value = stdout
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l).ok())
        .unwrap_or_else(|| panic!("no result line:\n{stdout}\n{stderr}"));
    assert_eq!(last["ok"], true, "{last}");
    (last, stdout.to_string())
}

async fn play(py: &Path, data: &Path, test_list: &Path, uids: &[&str]) {
    let dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    let config = write_config(dir.path(), &mock);
    let mut options = tb_openenv::Options::new(data, Some(config.clone()));
    options.test_list = Some(test_list.to_path_buf());
    let server = tb_openenv::spawn("127.0.0.1:0".parse().unwrap(), options)
        .await
        .unwrap();
    server.shared.wait_loaded().await;
    assert!(
        server.shared.readiness().0,
        "{}",
        server.shared.readiness().1
    );

    let ds = Dataset::open(data).unwrap();
    let sandbox = LoadedRoot::load(ds.root()).unwrap();
    let tasks: Vec<tb_core::Task> = uids.iter().map(|u| ds.load_task(u).unwrap()).collect();
    let mut episodes = Vec::new();
    for t in &tasks {
        let calls = golden_calls(t);
        assert!(!calls.is_empty(), "{}: no golden calls", t.uid);
        episodes.push(episode_spec(&t.uid, &calls, 1.0));
        let skip = essential_call(&sandbox, t);
        let mut fewer = calls.clone();
        fewer.remove(skip);
        episodes.push(episode_spec(&t.uid, &fewer, 0.0));
    }
    let spec = json!({
        "base_url": server.url(),
        "episodes": episodes,
        "forbidden_keys": FORBIDDEN_KEYS,
        "forbidden_strings": forbidden_strings(
            &tasks.iter().collect::<Vec<_>>(),
            &[data, config.as_path(), dir.path()],
            &mock,
        ),
    });
    let (last, _) = run_client(
        "the OpenEnv client",
        py,
        "openenv_episode.py",
        &spec,
        dir.path(),
        &[],
        Duration::from_mins(15),
    )
    .await;
    let want: Vec<f64> = uids.iter().flat_map(|_| [1.0, 0.0]).collect();
    assert_eq!(last["rewards"], json!(want), "{last}");
    eprintln!("openenv client: {last}");
    server.shutdown().await.unwrap();
}

#[tb_test_support::needs(python_openenv)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_openenv_client_plays_the_bundled_retail_example() {
    let py = tb_test_support::need(tb_test_support::Need::PythonOpenenv);
    let data = example();
    play(
        &py,
        &data,
        &data.join("testlist.yaml"),
        &["brightside_retail.py:test_bs001_cancel_unshipped_order"],
    )
    .await;
}

#[tb_test_support::data_test]
#[tb_test_support::needs(python_openenv)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pypi_openenv_client_plays_a_benchmark_retail_task() {
    let data = benchmark_data();
    let py = tb_test_support::need(tb_test_support::Need::PythonOpenenv);
    play(
        &py,
        &data,
        &data.join(tb_openenv::env::CANONICAL_TEST_LIST),
        &["sandbox_external_retail_group1.py:test_case_ST002_001"],
    )
    .await;
}

/// The OpenEnv ThinkingBox adapter's own client (`ThinkingBoxEnv`, a local checkout of
/// meta-pytorch/OpenEnv `envs/thinkingbox_env` found by `#[adapter_test]`) plays the bundled
/// example through its whole API (tests/py/adapter_client.py): reset, list_tools, a single call
/// and a batch, state, the closing message (reward 1.0, and 0.0 with an essential call
/// skipped), `finish` with its default and other reasons, and terminal turns.
#[tb_test_support::adapter_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_adapters_client_plays_the_bundled_example() {
    let (adapter, py) = tb_test_support::adapter();
    let data = example();
    let dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    let config = write_config(dir.path(), &mock);
    let server = tb_openenv::spawn(
        "127.0.0.1:0".parse().unwrap(),
        tb_openenv::Options::new(&data, Some(config)),
    )
    .await
    .unwrap();
    server.shared.wait_loaded().await;
    let ds = Dataset::open(&data).unwrap();
    let sandbox = LoadedRoot::load(ds.root()).unwrap();
    let uid = "brightside_retail.py:test_bs001_cancel_unshipped_order";
    let task = ds.load_task(uid).unwrap();
    let calls = golden_calls(&task);
    let mut fewer = calls.clone();
    fewer.remove(essential_call(&sandbox, &task));
    let spec = json!({
        "base_url": server.url(),
        "end_turn_tool": "InjectionAttackInToolResponse",
        "episodes": [episode_spec(uid, &calls, 1.0), episode_spec(uid, &fewer, 0.0)],
    });
    let (last, stdout) = run_client(
        "the adapter's client",
        &py,
        "adapter_client.py",
        &spec,
        dir.path(),
        &[("PYTHONPATH", adapter.as_path())],
        Duration::from_mins(10),
    )
    .await;
    assert_eq!(last["rewards"], json!([1.0, 0.0]), "{last}");
    eprintln!("{stdout}");
    server.shutdown().await.unwrap();
}
