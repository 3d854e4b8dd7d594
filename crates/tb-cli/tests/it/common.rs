//! Helpers the modules share: the bundled example, copying a data root, reading records,
//! `tb infer` argument lists and a mock model scripted for the three roles of a campaign.

use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use tb_mock_model::{MockRequest, MockServer, Reply, Turn};

/// The bundled example data root (`examples/brightside`).
pub(crate) fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
}

/// Copies the folder `from` to `to`, recursively.
pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dest = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dest);
        } else {
            std::fs::copy(e.path(), dest).unwrap();
        }
    }
}

/// The files of the folder `dir` with the extension `ext`, sorted by path.
pub(crate) fn files_ending(dir: &Path, ext: &str) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == ext))
        .collect();
    files.sort();
    files
}

/// Writes the test list `path` of the task ids `ids`.
pub(crate) fn write_test_list<I: IntoIterator<Item = S>, S: std::fmt::Display>(
    path: &Path,
    ids: I,
) {
    let text: String = ids.into_iter().map(|i| format!("- {i}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// The JSON values of a JSON Lines file, every line of which must parse; none when the file
/// is not there.
pub(crate) fn jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The arguments of `tb infer --data <data> --test-list <list> --agent <agent> --repeat
/// <repeat> --output <out>` followed by `extra`.
pub(crate) fn infer_args(
    data: &Path,
    list: &Path,
    agent: &str,
    repeat: &str,
    out: &Path,
    extra: &[&str],
) -> Vec<String> {
    let mut v: Vec<String> = [
        "infer",
        "--data",
        data.to_str().unwrap(),
        "--test-list",
        list.to_str().unwrap(),
        "--agent",
        agent,
        "--repeat",
        repeat,
        "--output",
        out.to_str().unwrap(),
    ]
    .iter()
    .map(std::string::ToString::to_string)
    .collect();
    v.extend(extra.iter().map(std::string::ToString::to_string));
    v
}

/// `tb infer` of the tasks of `list` in `data` with the `think` agent and the models of
/// `cfg`, one attempt each at concurrency 1, overwriting `out`, then `more` arguments;
/// without `THINKINGBOX_FRAMEWORK` and with `TB_LOG=error`.
pub(crate) fn think_once(
    data: &Path,
    cfg: &Path,
    list: &Path,
    out: &Path,
    more: &[String],
) -> std::process::Command {
    let mut c = std::process::Command::new(super::TB);
    c.args(["infer", "--data"])
        .arg(data)
        .arg("-c")
        .arg(cfg)
        .args(["--agent", "think", "--test-list"])
        .arg(list)
        .args([
            "--repeat",
            "1",
            "--concurrency",
            "1",
            "--overwrite",
            "--output",
        ])
        .arg(out)
        .args(more)
        .env_remove("THINKINGBOX_FRAMEWORK")
        .env("TB_LOG", "error");
    c
}

/// What a finished process gave: its exit code (none when a signal ended it), its stdout and
/// its stderr.
pub(crate) fn code_and_streams(out: &std::process::Output) -> (Option<i32>, String, String) {
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `tb` with owned arguments, off the async runtime's threads.
pub(crate) async fn tb_async(args: Vec<String>) -> (i32, String) {
    tokio::task::spawn_blocking(move || {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        super::tb(&a)
    })
    .await
    .unwrap()
}

/// Scripts `server` for a campaign's three roles: the agent makes, one per turn, the calls
/// `by_query` holds for the first user message it is sent (the task's query) and then says
/// it is done; the user says thanks; the judge says yes.
pub(crate) fn script_roles(server: &MockServer, by_query: HashMap<String, Vec<(String, Value)>>) {
    server.set_script("agent", move |req: &MockRequest| {
        let query = req.turns.iter().find_map(|t| match t {
            Turn::User(u) => Some(u.clone()),
            _ => None,
        });
        let calls = query.and_then(|q| by_query.get(&q));
        match calls.and_then(|c| c.get(req.tool_calls_so_far())) {
            Some(c) => Reply::Calls(vec![c.clone()]),
            None => Reply::Text("All done. <DONE>".into()),
        }
    });
    server.set_script("user", |_r: &MockRequest| Reply::Text("Thanks.".into()));
    server.set_script("judge", |_r: &MockRequest| Reply::Text("Yes".into()));
}

/// An orchestrator config whose agent, user and judge models each have the YAML lines
/// `model(role)`.
pub(crate) fn three_role_config(model: impl Fn(&str) -> Vec<String>) -> String {
    let block = |role: &str, pad: &str| {
        model(role)
            .iter()
            .map(|l| format!("{pad}{l}\n"))
            .collect::<String>()
    };
    format!(
        "orchestrator:\n  agent_model:\n{}user_model:\n{}judge_model:\n{}",
        block("agent", "    "),
        block("user", "  "),
        block("judge", "  ")
    )
}

/// [`three_role_config`] whose models are the mock `server`'s, on Chat Completions as
/// `mock-<role>`, each with the further YAML lines `rest`.
pub(crate) fn mock_models_config(server: &MockServer, rest: &[&str]) -> String {
    three_role_config(|role| {
        let mut lines = vec![
            "type: aoai".to_string(),
            format!("deployment: mock-{role}"),
            format!(
                "endpoint_url: {}",
                server.url(role, tb_mock_model::Api::Chat)
            ),
        ];
        lines.extend(rest.iter().map(std::string::ToString::to_string));
        lines
    })
}
