//! `tb infer` sends, byte for byte, the request bodies the reference sent
//! (`tb-bench-v1/requests/all-requests.tar.xz`: the first task of each of the 7 task files,
//! three APIs, the `agent` and `agent-ask` deployments, every request of every role and
//! turn), when it runs against the same scripted mock (`requests/scripts/mockdump.py`,
//! whose behaviour the server below implements) with one attempt at a time. Bodies are
//! compared as a multiset per run and role, so the order between tasks does not matter.
//!
//! Two ways to show the model the reference's texts are checked:
//! - a surface file and a prompt file built here from what the reference recorded (its
//!   servers' tool listings in `tb-bench-v1/tools`, its first user and judge requests): this
//!   needs the benchmark's data only and runs everywhere the data is;
//! - `--surface reference --framework <checkout>`, read from the reference's own checkouts
//!   (a `#[reference_test]`).
//!
//! In `own` mode the first agent request of each task equals the reference's once every
//! description text is masked (tool descriptions and schema `description`s).

use axum::Router;
use axum::extract::State;
use axum::routing::post;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

const RUNS: [(&str, &str, &str, &str); 6] = [
    ("chat", "aoai", "chat/completions", "agent"),
    ("chat-ask", "aoai", "chat/completions", "agent-ask"),
    ("responses", "aoai_responses", "responses", "agent"),
    ("responses-ask", "aoai_responses", "responses", "agent-ask"),
    ("anthropic", "anthropic", "messages", "agent"),
    ("anthropic-ask", "anthropic", "messages", "agent-ask"),
];

const ASK: &str = "Could you confirm your email?";

/// The shared folder with the recorded requests (panics when missing: call from
/// `#[tb_test_support::shared_test]`s only).
fn shared() -> PathBuf {
    let p = tb_test_support::shared();
    assert!(
        p.join("tb-bench-v1/requests/all-requests.tar.xz").is_file(),
        "the recorded requests (tb-bench-v1/requests) are not in {}",
        p.display()
    );
    p
}

pub(super) fn data_root(shared: &Path) -> PathBuf {
    std::env::var_os("THINKINGBOX_DATA")
        .map_or_else(|| shared.join("thinkingbox-data"), PathBuf::from)
}

/// How a run is shown the reference's texts, and what its provenance must then say.
struct Shown {
    /// `--data`.
    data: PathBuf,
    /// The options naming the surface and the prompts.
    args: Vec<String>,
    /// The surface provenance names.
    surface: &'static str,
    /// The prompts' origin provenance names.
    prompts: &'static str,
}

impl Shown {
    /// From files built out of what the reference recorded (`surface`: `file` or `own`).
    fn recorded(shared: &Path, dir: &Path, surface: &'static str) -> Shown {
        let surface_file = recorded_surface(shared, dir);
        let prompt_file = recorded_prompts(shared, dir);
        let surface_arg = if surface == "own" {
            "own".to_string()
        } else {
            surface_file.display().to_string()
        };
        Shown {
            data: data_root(shared),
            args: vec![
                "--surface".into(),
                surface_arg,
                "--prompts".into(),
                prompt_file.display().to_string(),
            ],
            surface,
            prompts: "file",
        }
    }

    /// From the reference's checkouts (`surface`: `reference` or `own`; call from
    /// `#[reference_test]`s only).
    fn reference(surface: &'static str) -> Shown {
        Shown {
            data: tb_test_support::reference_data(),
            args: vec![
                "--surface".into(),
                surface.into(),
                "--framework".into(),
                tb_test_support::framework().display().to_string(),
            ],
            surface,
            prompts: "framework",
        }
    }
}

/// The items of a request body: its Chat Completions `messages` or its Responses `input`.
fn conversation(body: &Value) -> &Vec<Value> {
    body.get("messages")
        .or_else(|| body.get("input"))
        .and_then(Value::as_array)
        .unwrap()
}

/// A surface file (`{"servers": {server: [tool]}}`) holding the tool listings the reference's
/// servers sent over MCP, as `tb-bench-v1/tools/<server>.json` recorded them, each input schema
/// as the framework's client hands it to the agent (`client_transform`, whose equality with the
/// reference's is checked by the bodies of the reference-checkout test).
pub(super) fn recorded_surface(shared: &Path, dir: &Path) -> PathBuf {
    let mut servers = Map::new();
    let tools = shared.join("tb-bench-v1/tools");
    for f in super::common::files_ending(&tools, "json") {
        let doc: Value = serde_json::from_slice(&std::fs::read(&f).unwrap()).unwrap();
        let list: Vec<Value> = doc["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                json!({
                    "name": t["name"],
                    "description": t["description"],
                    "inputSchema": tb_eval::surface::client_transform(t["input_schema"].clone())
                        .unwrap(),
                })
            })
            .collect();
        servers.insert(doc["domain"].as_str().unwrap().to_string(), list.into());
    }
    let path = dir.join("recorded-surface.json");
    std::fs::write(
        &path,
        serde_json::to_vec(&json!({ "servers": servers })).unwrap(),
    )
    .unwrap();
    path
}

/// A prompt file holding the simulated user's and the judge's texts as the reference sent
/// them in its first user request (`requests/user.json`, task `test_bmd_001` of the
/// `agent-ask` run) and first judge request (`requests/judge.json`): the inserted parts are
/// put back as placeholders. The captured runs never let the user end the conversation,
/// never escape inserted text and never ask with the motivation prompt, so those entries
/// are the plain user prompt, no escapes and none.
pub(super) fn recorded_prompts(shared: &Path, dir: &Path) -> PathBuf {
    let reqs = shared.join("tb-bench-v1/requests");
    let read = |name: &str| -> Value {
        serde_json::from_slice(&std::fs::read(reqs.join(name)).unwrap()).unwrap()
    };
    let text =
        |body: &Value, i: usize| body["messages"][i]["content"].as_str().unwrap().to_string();
    let escape = |t: &str| t.replace('{', "{{").replace('}', "}}");
    let put_back = |mut t: String, parts: &[(&str, &str)]| {
        for (inserted, field) in parts {
            assert_eq!(t.matches(inserted).count(), 1, "`{inserted}` once in {t}");
            t = t.replace(inserted, &format!("{{{field}}}"));
        }
        t
    };

    let task: Value = serde_json::from_str(
        std::fs::read_to_string(shared.join("tb-bench-v1/tasks/external_booking_v1_group1.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    let query = task["query"].as_str().unwrap();
    let context = task["user_context"].as_str().unwrap();
    let user = read("user.json");
    let transcript = format!("User: {query}\n\nAssistant: {ASK}");
    // in this order: the transcript holds the last message too
    let user_template = put_back(
        escape(&text(&user, 1)),
        &[
            (&escape(&transcript), "transcript"),
            (&escape(context), "user_context"),
            (ASK, "last_assistant_message"),
        ],
    );

    let judge = read("judge.json");
    let message = "Everything is taken care of. &lt;DONE&gt;";
    let judge_user = text(&judge, 1);
    let question = judge_user
        .split_once("</message>\n")
        .map(|(_, q)| q)
        .unwrap();
    let judge_template = put_back(
        escape(&judge_user),
        &[(message, "message"), (&escape(question), "question")],
    );

    let user_system = text(&user, 0);
    let prompts = json!({
        "user_system": user_system,
        "user_system_with_end": user_system,
        "user_template": user_template,
        "sanitize": [],
        "judge_system": text(&judge, 0),
        "judge_template": judge_template,
        "judge_system_motivation": null,
    });
    let path = dir.join("recorded-prompts.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&prompts).unwrap()).unwrap();
    path
}

// ---------------------------------------------------------------------------------------
// The scripted mock (mockdump.py's behaviour).

#[derive(Clone, Copy, PartialEq, Eq)]
enum Api {
    Chat,
    Responses,
    Anthropic,
}

struct Mock {
    by_query: HashMap<String, Vec<(String, Value)>>,
    /// (model, raw body) in arrival order.
    dump: Mutex<Vec<(String, Vec<u8>)>>,
}

fn text_of(m: &Value) -> String {
    match m.get("content") {
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.as_object())
            .map(|p| p.get("text").and_then(Value::as_str).unwrap_or(""))
            .collect(),
        Some(Value::String(s)) => s.clone(),
        _ => String::new(),
    }
}

fn is_tool_result_user(m: &Value) -> bool {
    m.get("content").and_then(Value::as_array).is_some_and(|c| {
        c.iter()
            .any(|p| p.get("type").and_then(Value::as_str) == Some("tool_result"))
    })
}

/// Whether `m` has the text `value` at `key`.
fn has(m: &Value, key: &str, value: &str) -> bool {
    m.get(key).and_then(Value::as_str) == Some(value)
}

fn n_tool_results(items: &[Value], api: Api) -> usize {
    match api {
        Api::Responses => items
            .iter()
            .filter(|m| has(m, "type", "function_call_output"))
            .count(),
        Api::Anthropic => items
            .iter()
            .filter(|m| has(m, "role", "user"))
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|p| has(p, "type", "tool_result"))
            .count(),
        Api::Chat => items.iter().filter(|m| has(m, "role", "tool")).count(),
    }
}

fn first_user_text(items: &[Value], api: Api) -> String {
    for m in items {
        if m.get("role").and_then(Value::as_str) == Some("user") {
            if api == Api::Anthropic && is_tool_result_user(m) {
                continue;
            }
            return text_of(m).trim().to_string();
        }
    }
    String::new()
}

/// -> (text, or a tool call (name, arguments, index))
fn script(
    mock: &Mock,
    model: &str,
    items: &[Value],
    api: Api,
) -> (String, Option<(String, Value, usize)>) {
    if model.starts_with("agent") {
        let Some(calls) = mock.by_query.get(&first_user_text(items, api)) else {
            return ("I cannot help with that. <DONE>".into(), None);
        };
        if model == "agent-ask"
            && !items.iter().any(|m| {
                m.get("role").and_then(Value::as_str) == Some("assistant")
                    && text_of(m).contains(ASK)
            })
        {
            return (ASK.into(), None);
        }
        let done = n_tool_results(items, api);
        if let Some((name, args)) = calls.get(done) {
            return (String::new(), Some((name.clone(), args.clone(), done)));
        }
        return ("Everything is taken care of. <DONE>".into(), None);
    }
    if model == "judge" {
        return ("Yes".into(), None);
    }
    ("I have nothing more to add.".into(), None)
}

fn py_dumps(v: &Value) -> String {
    tb_sandbox::pyjson::dumps(v, tb_sandbox::pyjson::Layout::Default)
}

async fn handle(
    State(mock): State<Arc<Mock>>,
    uri: axum::http::Uri,
    body: axum::body::Bytes,
) -> axum::Json<Value> {
    let req: Value = serde_json::from_slice(&body).unwrap_or(json!({}));
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    mock.dump
        .lock()
        .unwrap()
        .push((model.clone(), body.to_vec()));
    let path = uri.path().trim_end_matches('/');
    let api = if path.ends_with("/responses") {
        Api::Responses
    } else if path.ends_with("/messages") {
        Api::Anthropic
    } else {
        Api::Chat
    };
    let key = if api == Api::Responses {
        "input"
    } else {
        "messages"
    };
    let items = req
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let (text, call) = script(&mock, &model, &items, api);
    axum::Json(match api {
        Api::Responses => {
            let out = match &call {
                Some((name, args, i)) => {
                    json!([{"type": "function_call", "id": format!("fc_{i}"), "call_id": format!("call_{i}"),
                    "name": name, "arguments": py_dumps(args), "status": "completed"}])
                }
                None => {
                    json!([{"type": "message", "id": "msg_mock", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": text, "annotations": []}]}])
                }
            };
            json!({"id": "resp_mock", "object": "response", "status": "completed", "model": model, "output": out,
                "usage": {"input_tokens": 100, "output_tokens": 10, "total_tokens": 110}})
        }
        Api::Anthropic => {
            let content = match &call {
                Some((name, args, i)) => {
                    json!([{"type": "tool_use", "id": format!("toolu_{i}"), "name": name, "input": args}])
                }
                None => json!([{"type": "text", "text": text}]),
            };
            json!({"id": "msg_mock", "type": "message", "role": "assistant", "model": model, "content": content,
                "stop_reason": if call.is_some() { "tool_use" } else { "end_turn" }, "stop_sequence": null,
                "usage": {"input_tokens": 100, "output_tokens": 10}})
        }
        Api::Chat => {
            let mut msg = Map::new();
            msg.insert("role".into(), json!("assistant"));
            msg.insert("content".into(), Value::Null);
            match &call {
                Some((name, args, i)) => {
                    msg.insert(
                        "tool_calls".into(),
                        json!([{"id": format!("call_{i}"), "type": "function", "function": {"name": name, "arguments": py_dumps(args)}}]),
                    );
                }
                None => {
                    msg.insert("content".into(), json!(text));
                }
            }
            let fin = if call.is_some() { "tool_calls" } else { "stop" };
            json!({"id": "mock", "object": "chat.completion", "model": model,
                "choices": [{"index": 0, "message": msg, "finish_reason": fin}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}})
        }
    })
}

fn load_tasks(dir: &Path) -> HashMap<String, Vec<(String, Value)>> {
    let mut by_query = HashMap::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        for line in std::fs::read_to_string(&p).unwrap().lines() {
            if line.trim().is_empty() {
                continue;
            }
            let t: Value = serde_json::from_str(line).unwrap();
            let init = t["init"].as_object().unwrap();
            let first = init.values().next().unwrap();
            let calls = first["golden_test_case"]["tool_interactions"]
                .as_array()
                .cloned()
                .unwrap_or_default()
                .into_iter()
                .map(|c| {
                    let params = match c.get("parameters") {
                        Some(Value::Null) | None => json!({}),
                        Some(p) => p.clone(),
                    };
                    (c["tool"].as_str().unwrap().to_string(), params)
                })
                .collect();
            by_query.insert(t["query"].as_str().unwrap().trim().to_string(), calls);
        }
    }
    by_query
}

async fn start_mock(tasks: &Path) -> (Arc<Mock>, std::net::SocketAddr) {
    let mock = Arc::new(Mock {
        by_query: load_tasks(tasks),
        dump: Mutex::new(Vec::new()),
    });
    let app = Router::new()
        .route("/{*path}", post(handle))
        .with_state(mock.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (mock, addr)
}

// ---------------------------------------------------------------------------------------

fn config(addr: std::net::SocketAddr, ty: &str, path: &str, agent: &str) -> String {
    let role = |dep: &str, pad: &str| {
        [
            format!("type: {ty}"),
            format!("deployment: {dep}"),
            format!("endpoint_url: http://{addr}/v1/{path}"),
            "credential: {type: api-key, api_key: sk-test}".into(),
            "timeout: 30".into(),
        ]
        .iter()
        .map(|l| format!("{pad}{l}\n"))
        .collect::<String>()
    };
    format!(
        "orchestrator:\n  type: thinkingbox\n  agent_model:\n{}user_model:\n{}judge_model:\n{}",
        role(agent, "    "),
        role("user", "  "),
        role("judge", "  ")
    )
}

struct Setup {
    dir: tempfile::TempDir,
    mock: Arc<Mock>,
    addr: std::net::SocketAddr,
}

impl Setup {
    async fn new(shared: &Path) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let tasks = shared.join("tb-bench-v1/tasks");
        let mut list = String::new();
        for f in super::common::files_ending(&tasks, "jsonl") {
            let first = std::fs::read_to_string(&f).unwrap();
            let t: Value = serde_json::from_str(first.lines().next().unwrap()).unwrap();
            list.push_str(&format!("- {}\n", t["id"].as_str().unwrap()));
        }
        std::fs::write(dir.path().join("list7.yaml"), list).unwrap();
        let (mock, addr) = start_mock(&tasks).await;
        Setup { dir, mock, addr }
    }

    /// Runs `tb infer` for one run; returns the bodies received per model name.
    async fn run(
        &self,
        name: &str,
        ty: &str,
        path: &str,
        agent: &str,
        shown: &Shown,
    ) -> BTreeMap<String, Vec<Vec<u8>>> {
        let cfg = self.dir.path().join(format!("config-{name}.yaml"));
        std::fs::write(&cfg, config(self.addr, ty, path, agent)).unwrap();
        self.mock.dump.lock().unwrap().clear();
        let out = self.dir.path().join(format!("{name}.jsonl"));
        let list = self.dir.path().join("list7.yaml");
        let mut tb = super::common::think_once(&shown.data, &cfg, &list, &out, &shown.args);
        let o = tokio::task::spawn_blocking(move || tb.output().unwrap())
            .await
            .unwrap();
        assert!(
            o.status.success(),
            "tb infer ({name}) failed:\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        let recs = std::fs::read_to_string(&out).unwrap();
        assert_eq!(recs.lines().count(), 7, "{name}: 7 records");
        // provenance: every record and the manifest say what the model was shown
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(self.dir.path().join(format!("{name}_run_metadata.json")))
                .unwrap(),
        )
        .unwrap();
        for p in recs
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap()["provenance"].clone())
            .chain(std::iter::once(manifest["provenance"].clone()))
        {
            assert_eq!(p["surface"]["surface"], shown.surface, "{name}: {p}");
            assert_eq!(
                p["surface"]["tools_sha256"]
                    .as_object()
                    .map(serde_json::Map::len),
                Some(5),
                "{name}"
            );
            assert_eq!(p["prompts"]["origin"], shown.prompts, "{name}");
            assert_eq!(
                p["prompts"]["sha256"].as_object().map(serde_json::Map::len),
                Some(6),
                "{name}"
            );
            let origin_key = if shown.prompts == "file" {
                "file_sha256"
            } else {
                "framework_commit"
            };
            assert!(p["prompts"][origin_key].is_string(), "{name}: {p}");
        }
        let mut by_role: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
        for (m, b) in self.mock.dump.lock().unwrap().drain(..) {
            by_role.entry(m).or_default().push(b);
        }
        by_role
    }
}

/// The reference's bodies of one run, per model name.
fn reference_bodies(root: &Path, run: &str) -> BTreeMap<String, Vec<Vec<u8>>> {
    let mut out: BTreeMap<String, Vec<Vec<u8>>> = BTreeMap::new();
    let dir = root.join(format!("dump-{run}"));
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        if e.path().extension().is_none_or(|x| x != "json") || name.ends_with(".meta.json") {
            continue;
        }
        let model = name
            .split_once('-')
            .map(|(_, m)| m.trim_end_matches(".json").to_string())
            .unwrap();
        out.entry(model)
            .or_default()
            .push(std::fs::read(e.path()).unwrap());
    }
    out
}

/// How many of `ours` are matched by `reference` as multisets; and a first differing pair.
fn matched(reference: &[Vec<u8>], ours: &[Vec<u8>]) -> (usize, Option<(String, String)>) {
    let mut left: HashMap<&[u8], usize> = HashMap::new();
    for b in reference {
        *left.entry(b.as_slice()).or_default() += 1;
    }
    let mut n = 0;
    let mut unmatched = Vec::new();
    for b in ours {
        match left.get_mut(b.as_slice()) {
            Some(c) if *c > 0 => {
                *c -= 1;
                n += 1;
            }
            _ => unmatched.push(b),
        }
    }
    let example = unmatched.first().map(|ours| {
        // the reference body closest in length, around the first difference
        let r = reference
            .iter()
            .filter(|r| left.get(r.as_slice()).is_some_and(|c| *c > 0))
            .min_by_key(|r| r.len().abs_diff(ours.len()))
            .cloned()
            .unwrap_or_default();
        let i = r
            .iter()
            .zip(ours.iter())
            .take_while(|(a, b)| a == b)
            .count();
        let cut = |b: &[u8]| {
            String::from_utf8_lossy(&b[i.saturating_sub(120)..(i + 120).min(b.len())]).to_string()
        };
        (cut(&r), cut(ours))
    });
    (n, example)
}

fn extract(shared: &Path) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let st = Command::new("tar")
        .arg("-xJf")
        .arg(shared.join("tb-bench-v1/requests/all-requests.tar.xz"))
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("tar runs");
    assert!(st.success(), "extracting all-requests.tar.xz");
    dir
}

/// Runs the six capture runs as `shown` says and compares every body with the reference's.
async fn sends_the_reference_bodies_byte_for_byte(shared: &Path, setup: &Setup, shown: &Shown) {
    let bodies = extract(shared);
    let (mut total, mut same) = (0, 0);
    let mut report = Vec::new();
    for (name, ty, path, agent) in RUNS {
        let reference = reference_bodies(bodies.path(), name);
        let ours = setup.run(name, ty, path, agent, shown).await;
        for (role, refs) in &reference {
            let got = ours.get(role).cloned().unwrap_or_default();
            let (n, example) = matched(refs, &got);
            total += refs.len();
            same += n;
            report.push(format!(
                "{name} {role}: {n}/{} (sent {})",
                refs.len(),
                got.len()
            ));
            if let Some((r, o)) = example {
                report.push(format!("  reference: ...{r}...\n  ours:      ...{o}..."));
            }
        }
        for role in ours.keys().filter(|r| !reference.contains_key(*r)) {
            report.push(format!("{name} {role}: sent, but the reference sent none"));
            total += 1;
        }
    }
    eprintln!("{}", report.join("\n"));
    assert_eq!(total, 402, "the capture holds 402 bodies");
    assert_eq!(
        same,
        total,
        "bodies byte-identical: {same}/{total}\n{}",
        report.join("\n")
    );
}

/// With the tool listings and prompts the reference recorded, given as files: the benchmark's
/// data is all this needs.
#[tb_test_support::shared_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recorded_surface_and_prompts_send_the_reference_bodies_byte_for_byte() {
    let shared = shared();
    let setup = Setup::new(&shared).await;
    let shown = Shown::recorded(&shared, setup.dir.path(), "file");
    sends_the_reference_bodies_byte_for_byte(&shared, &setup, &shown).await;
}

/// With the surface read from the servers' sources and the prompts from the framework.
#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reference_checkouts_send_the_reference_bodies_byte_for_byte() {
    let shared = shared();
    let setup = Setup::new(&shared).await;
    sends_the_reference_bodies_byte_for_byte(&shared, &setup, &Shown::reference("reference")).await;
}

/// Every description text replaced by a marker: the tool's and, in its schema, each
/// `description` keyword (property names are not keywords).
fn mask(tool: &mut Value) {
    fn schema(v: &mut Value) {
        let Value::Object(m) = v else { return };
        for (k, x) in m.iter_mut() {
            match k.as_str() {
                "description" => *x = json!("<description>"),
                "properties" | "$defs" | "definitions" => {
                    if let Value::Object(props) = x {
                        props.values_mut().for_each(schema);
                    }
                }
                "items" | "additionalProperties" | "not" => schema(x),
                "anyOf" | "oneOf" | "allOf" | "prefixItems" => {
                    if let Value::Array(a) = x {
                        a.iter_mut().for_each(schema);
                    }
                }
                _ => {}
            }
        }
    }
    let f = if tool.get("function").is_some() {
        &mut tool["function"]
    } else {
        tool
    };
    if f.get("description").is_some() {
        f["description"] = json!("<description>");
    }
    for k in ["parameters", "input_schema"] {
        if let Some(s) = f.get_mut(k) {
            schema(s);
        }
    }
}

#[tb_test_support::shared_test]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn own_mode_first_agent_requests_equal_the_references_but_for_descriptions() {
    let shared = shared();
    let setup = Setup::new(&shared).await;
    let reqs = shared.join("tb-bench-v1/requests");
    let shown = Shown::recorded(&shared, setup.dir.path(), "own");
    for (name, ty, path, agent, sub) in [
        ("chat", "aoai", "chat/completions", "agent", ""),
        (
            "responses",
            "aoai_responses",
            "responses",
            "agent",
            "responses/",
        ),
        ("anthropic", "anthropic", "messages", "agent", "anthropic/"),
    ] {
        let ours = setup.run(name, ty, path, agent, &shown).await;
        // the first agent request of each task: the ones with one user message and nothing after
        let firsts: Vec<Value> = ours["agent"]
            .iter()
            .map(|b| serde_json::from_slice::<Value>(b).unwrap())
            .filter(|v| {
                let items = conversation(v);
                items
                    .last()
                    .and_then(|m| m.get("role"))
                    .and_then(Value::as_str)
                    == Some("user")
                    && items
                        .iter()
                        .filter(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                        .count()
                        == 1
            })
            .collect();
        assert_eq!(firsts.len(), 7, "{name}: one first request per task");
        let mut seen = 0;
        let dir = if sub.is_empty() {
            reqs.clone()
        } else {
            reqs.join(sub.trim_end_matches('/'))
        };
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let fname = e.file_name().to_string_lossy().to_string();
            if !fname.ends_with(".agent.json") {
                continue;
            }
            let mut reference: Value =
                serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
            let query_of = |v: &Value| -> String {
                let items = conversation(v);
                items
                    .iter()
                    .rev()
                    .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
                    .map(text_of)
                    .unwrap_or_default()
            };
            let q = query_of(&reference);
            let mut mine = firsts
                .iter()
                .find(|v| query_of(v) == q)
                .unwrap_or_else(|| panic!("{name} {fname}: no request of ours for that task"))
                .clone();
            for v in [&mut reference, &mut mine] {
                for t in v["tools"].as_array_mut().unwrap() {
                    mask(t);
                }
            }
            let (r, m) = (
                serde_json::to_string(&reference).unwrap(),
                serde_json::to_string(&mine).unwrap(),
            );
            if r != m {
                let i = r.bytes().zip(m.bytes()).take_while(|(a, b)| a == b).count();
                panic!(
                    "{name} {fname}: differs beyond descriptions at byte {i}:\n  reference: ...{}...\n  ours:      ...{}...",
                    &r[i.saturating_sub(200)..(i + 200).min(r.len())],
                    &m[i.saturating_sub(200)..(i + 200).min(m.len())]
                );
            }
            seen += 1;
        }
        assert_eq!(seen, 7, "{name}: 7 reference first requests");
    }
}

/// `tb tools` prints the system messages and the tools of the reference's first agent
/// request, for each API.
fn tb_tools_prints_what_the_agent_gets(shared: &Path, data: &Path, surface: &str, kind: &str) {
    let reqs = shared.join("tb-bench-v1/requests");
    for (api, sub) in [
        ("chat", ""),
        ("responses", "responses/"),
        ("anthropic", "anthropic/"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_tb"))
            .args([
                "tools",
                "--data",
                data.to_str().unwrap(),
                "--task",
                "sandbox_consulting_group1.py:test_csa_001",
                "--api",
                api,
                "--surface",
                surface,
            ])
            .env("TB_LOG", "error")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let view: Value = serde_json::from_slice(&o.stdout).unwrap();
        let reference: Value = serde_json::from_slice(
            &std::fs::read(reqs.join(format!("{sub}sandbox_consulting_group1.agent.json")))
                .unwrap(),
        )
        .unwrap();
        assert_eq!(
            serde_json::to_string(&view["tools"]).unwrap(),
            serde_json::to_string(&reference["tools"]).unwrap(),
            "{api}: tools"
        );
        let system = match api {
            "anthropic" => reference["system"].clone(),
            "chat" => json!(reference["messages"].as_array().unwrap()[..2]),
            _ => json!(reference["input"].as_array().unwrap()[..2]),
        };
        assert_eq!(view["system"], system, "{api}: system");
        assert_eq!(view["surface"]["surface"], kind);
    }
}

#[tb_test_support::shared_test]
#[test]
fn tb_tools_prints_what_the_agent_gets_from_a_surface_file() {
    let shared = shared();
    let dir = tempfile::tempdir().unwrap();
    let file = recorded_surface(&shared, dir.path());
    tb_tools_prints_what_the_agent_gets(
        &shared,
        &data_root(&shared),
        file.to_str().unwrap(),
        "file",
    );
}

#[tb_test_support::shared_test]
#[tb_test_support::reference_test]
#[test]
fn tb_tools_prints_what_the_agent_gets_from_the_servers_sources() {
    let shared = shared();
    let data = tb_test_support::reference_data();
    tb_tools_prints_what_the_agent_gets(&shared, &data, "reference", "reference");
}
