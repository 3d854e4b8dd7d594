//! A reset's `dataset` and `config`: honoured inside the server's reset roots (the data
//! root, the run config's folder, `--reset-root` folders), refused with a validation error
//! naming the field for anything else: `..`, absolute paths elsewhere, symlinks leading out,
//! folders that are no data root, files that are no run config, non-strings.

use crate::common::*;
use serde_json::{Value, json};
use std::path::Path;
use tb_mock_model::{Api, MockRequest, Reply};

/// What the second run config's simulated user answers.
const OTHER_USER_REPLY: &str = "Other config here: yes, cancel it.";

async fn reset(ws: &mut Ws, data: Value) -> Value {
    ask(ws, json!({"type": "reset", "data": data})).await
}

/// The field a validation error names (`loc` of its one error) and its message.
fn refused_field(f: &Value) -> (String, String) {
    assert_eq!(f["type"], "error", "{f}");
    assert_eq!(f["data"]["code"], "VALIDATION_ERROR", "{f}");
    let e = &f["data"]["errors"][0];
    let loc = e["loc"].as_array().expect("loc");
    (
        loc.last().and_then(Value::as_str).unwrap_or("").to_string(),
        e["msg"].as_str().unwrap_or("").to_string(),
    )
}

fn provenance(f: &Value) -> Value {
    assert_eq!(f["data"]["observation"]["kind"], "reset", "{f}");
    f["data"]["observation"]["metadata"]["execution_provenance"].clone()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

fn sha256_file(p: &Path) -> String {
    tb_core::sha256_hex(&std::fs::read(p).unwrap())
}

/// Folders: the run config's, the data root, another data root under a `--reset-root`
/// (one task, an extra support file), and one outside every root.
struct Roots {
    _dirs: Vec<tempfile::TempDir>,
    data: std::path::PathBuf,
    extra: std::path::PathBuf,
    other_data: std::path::PathBuf,
    outside: std::path::PathBuf,
}

fn roots() -> Roots {
    let dirs: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let data = dirs[0].path().join("data");
    copy_dir(&example(), &data);
    let extra = dirs[1].path().to_path_buf();
    let other_data = extra.join("other");
    copy_dir(&example(), &other_data);
    std::fs::write(other_data.join("testlist.yaml"), format!("- {BS001}\n")).unwrap();
    std::fs::create_dir_all(other_data.join("support")).unwrap();
    std::fs::write(other_data.join("support/note.txt"), "another bundle\n").unwrap();
    let outside = dirs[2].path().join("outside");
    copy_dir(&example(), &outside);
    Roots {
        _dirs: dirs,
        data,
        extra,
        other_data,
        outside,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_dataset_is_honoured_inside_the_reset_roots_only() {
    let config_dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    let config = write_config(config_dir.path(), &mock);
    let r = roots();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&r.outside, r.data.join("escape")).unwrap();
    let mut options = tb_openenv::Options::new(&r.data, Some(config));
    options.reset_roots = vec![r.extra.clone()];
    let server = start_server(options).await;
    let mut ws = connect(&server.url()).await;

    // The server's own data: by default, by its root, by its dataset/ folder (relative).
    let own = provenance(&reset(&mut ws, json!({"test_uid": BS001})).await);
    let own_count = own["task_count"].as_u64().unwrap();
    assert!(own_count > 1, "{own}");
    for d in [
        json!(r.data),
        json!("dataset"),
        json!(r.data.join("dataset")),
        json!(null),
    ] {
        let p = provenance(&reset(&mut ws, json!({"test_uid": BS001, "dataset": d})).await);
        assert_eq!(p, own, "dataset {d}");
    }

    // Another data root inside a --reset-root: its own test list and bundle.
    for d in [r.other_data.clone(), r.other_data.join("dataset")] {
        let f = reset(&mut ws, json!({"test_uid": BS001, "dataset": d})).await;
        let p = provenance(&f);
        assert_eq!(p["task_count"], 1, "{p}");
        assert_ne!(p["data_bundle_sha256"], own["data_bundle_sha256"]);
        assert_eq!(p["manifest_path"], "testlist.yaml");
        let o = ask(
            &mut ws,
            json!({"type": "step", "data": {"type": "list_tools"}}),
        )
        .await;
        assert_eq!(o["data"]["observation"]["kind"], "tools", "{o}");
    }
    // a task of the server's list that the other root's list lacks
    let ds = tb_dataset::Dataset::open(&r.data).unwrap();
    let tasks = ds.load_test_list(&r.data.join("testlist.yaml")).unwrap();
    let other_uid = &tasks.iter().find(|t| t.uid != BS001).unwrap().uid;
    let f = reset(
        &mut ws,
        json!({"test_uid": other_uid, "dataset": r.other_data}),
    )
    .await;
    assert_eq!(refused_field(&f).0, "test_uid");

    // Refused, naming the field; the socket stays usable.
    let mut hostile = vec![
        json!(".."),
        json!("../.."),
        json!("dataset/../../.."),
        json!("../../../../../../etc"),
        json!("/etc"),
        json!("/"),
        json!(r.outside),
        json!(r.outside.join("dataset")),
        json!(r.extra),
        json!(r.data.join("dataset/agent")),
        json!(r.data.join("no-such-folder")),
        json!(""),
        json!("dataset\u{0}x"),
        json!("x".repeat(5000)),
    ];
    if cfg!(unix) {
        hostile.push(json!("escape"));
        hostile.push(json!(r.data.join("escape/dataset")));
    }
    for d in hostile {
        let f = reset(&mut ws, json!({"test_uid": BS001, "dataset": d})).await;
        let (field, msg) = refused_field(&f);
        assert_eq!(field, "dataset", "{d}: {f}");
        assert!(msg.contains("inside the server's reset roots"), "{msg}");
        let text = f.to_string();
        assert!(!text.contains(r.outside.to_str().unwrap()), "{text}");
    }
    for d in [json!(42), json!(["dataset"]), json!({"path": "dataset"})] {
        let f = reset(&mut ws, json!({"test_uid": BS001, "dataset": d})).await;
        assert_eq!(refused_field(&f).0, "dataset", "{d}");
    }
    let f = reset(&mut ws, json!({"test_uid": BS001})).await;
    assert_eq!(provenance(&f), own);
    server.shutdown().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_config_is_honoured_inside_the_reset_roots_only() {
    let config_dir = tempfile::tempdir().unwrap();
    let mock = mock().await;
    mock.set_script("user2", |_r: &MockRequest| {
        Reply::Text(OTHER_USER_REPLY.into())
    });
    let config = write_config(config_dir.path(), &mock);
    let r = roots();
    // a second run config whose simulated user is the mock's role `user2`, in a reset root
    let text = std::fs::read_to_string(&config)
        .unwrap()
        .replace(&mock.url("user", Api::Chat), &mock.url("user2", Api::Chat));
    let other = r.extra.join("other-run.yaml");
    std::fs::write(&other, &text).unwrap();
    let outside_config = r.outside.join("run.yaml");
    std::fs::write(&outside_config, &text).unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(&outside_config, r.data.join("linked-run.yaml")).unwrap();
    let mut options = tb_openenv::Options::new(&r.data, Some(config.clone()));
    options.reset_roots = vec![r.extra.clone()];
    let server = start_server(options).await;
    let mut ws = connect(&server.url()).await;

    async fn user_reply(ws: &mut Ws) -> String {
        let o = ask(
            ws,
            json!({"type": "step", "data": {"type": "submit_message", "content": "Which order?"}}),
        )
        .await;
        assert_eq!(o["data"]["observation"]["kind"], "user", "{o}");
        o["data"]["observation"]["user_message"]
            .as_str()
            .unwrap()
            .to_string()
    }

    // The server's own config: by default and by its path.
    for c in [json!(null), json!(config)] {
        let p = provenance(&reset(&mut ws, json!({"test_uid": BS001, "config": c})).await);
        assert_eq!(p["config_sha256"], sha256_file(&config), "config {c}");
        assert_eq!(user_reply(&mut ws).await, USER_REPLY);
    }
    // Another run config in a reset root: its models play, its hash is the provenance's.
    let p = provenance(&reset(&mut ws, json!({"test_uid": BS001, "config": other})).await);
    assert_eq!(p["config_sha256"], sha256_file(&other));
    assert_eq!(user_reply(&mut ws).await, OTHER_USER_REPLY);
    // together with a dataset
    let f = reset(
        &mut ws,
        json!({"test_uid": BS001, "config": other, "dataset": r.other_data}),
    )
    .await;
    let p = provenance(&f);
    assert_eq!(p["config_sha256"], sha256_file(&other));
    assert_eq!(p["task_count"], 1);
    assert_eq!(user_reply(&mut ws).await, OTHER_USER_REPLY);

    // Refused, naming the field.
    let mut hostile = vec![
        json!("/etc/passwd"),
        json!("../../../../../../etc/passwd"),
        json!(outside_config),
        json!(r.data.join("testlist.yaml")),
        json!(r.data.join("dataset")),
        json!(r.extra.join("missing.yaml")),
        json!(""),
    ];
    if cfg!(unix) {
        hostile.push(json!("linked-run.yaml"));
    }
    for c in hostile {
        let f = reset(&mut ws, json!({"test_uid": BS001, "config": c})).await;
        let (field, msg) = refused_field(&f);
        assert_eq!(field, "config", "{c}: {f}");
        assert!(msg.contains("inside the server's reset roots"), "{msg}");
        assert!(!f.to_string().contains(r.outside.to_str().unwrap()), "{f}");
    }
    let f = reset(&mut ws, json!({"test_uid": BS001, "config": 1})).await;
    assert_eq!(refused_field(&f).0, "config");
    server.shutdown().await.unwrap();
}
