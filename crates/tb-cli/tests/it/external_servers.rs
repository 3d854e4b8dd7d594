//! Bring-your-own tool servers (`--servers servers.yaml`) through `tb infer`.
//!
//! - A small lending-library server of our own on the official MCP Python SDK
//!   (`crates/tb-external/tests/fixtures/tiny_library`), with reserved init, effects and
//!   teardown: golden agent and a scripted model (tb-llm's mock server); verdicts, records and
//!   the errors sidecar; a server killed, hung or printing garbage mid-attempt is a system
//!   error and the campaign goes on; 200 attempts at concurrency 16 leave no process behind.
//! - The reference's own v1 servers (`thinkingbox-data/servers/tb_business_ops_servers_202606`)
//!   forced external on a sample of tasks per domain give the native verdicts and tool texts.
//!
//! Python: `$TB_PYTHON` (with `mcp`) for the library server, `$TB_SERVERS_PYTHON` (with the v1
//! servers' dependencies) for the v1 servers, else the venvs `scripts/ci-python-deps.sh` makes
//! under target/ (`#[needs(python_mcp)]`, `#[needs(python_servers)]`).

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The fixture's task of lending a book.
const LEND: &str = "tiny_library.py:test_tl001_lend";

/// The Python with the MCP SDK (call from `#[needs(python_mcp)]` tests only).
pub(super) fn sdk_python() -> PathBuf {
    tb_test_support::need(tb_test_support::Need::PythonMcp)
}

fn tb(args: &[&str], envs: &[(&str, &str)]) -> (i32, String) {
    tb_test_support::tb(super::TB, args, envs)
}

pub(super) fn fixture() -> PathBuf {
    tb_test_support::tiny_library::root()
}

/// `tb infer` on the fixture's data with `servers`, writing `out`: the tasks are the
/// fixture's test list `tasks` (a `.yaml` name) or the one task of that uid; `python` runs the
/// servers; `options` are further options separated by spaces (no path in them may hold one).
fn infer_on_fixture(
    tasks: &str,
    servers: &Path,
    python: Option<&Path>,
    out: &Path,
    options: &str,
    envs: &[(&str, &str)],
) -> (i32, String) {
    let data = fixture();
    let list = data.join(tasks);
    let mut args = vec!["infer", "--data", data.to_str().unwrap()];
    if list.extension().is_some_and(|x| x == "yaml") {
        args.extend(["--test-list", list.to_str().unwrap()]);
    } else {
        args.extend(["-n", tasks]);
    }
    args.extend(["--servers", servers.to_str().unwrap()]);
    args.extend(["-o", out.to_str().unwrap()]);
    if let Some(py) = python {
        args.extend(["--python", py.to_str().unwrap()]);
    }
    args.extend(options.split_whitespace());
    tb(&args, envs)
}

/// `text` with the temporary directory, the fixture and the checkout shown as `[TMP]`,
/// `[FIXTURE]` and `[WS]`, and `marker` (it holds this process's id) as `[MARKER]`.
fn redacted(text: &str, tmp: &Path, marker: &str) -> String {
    let t = tb_test_support::redact(
        text,
        &[
            (tmp, "[TMP]"),
            (&fixture(), "[FIXTURE]"),
            (Path::new(env!("CARGO_BIN_EXE_tb")), "[TB]"),
            (&tb_test_support::workspace_root(), "[WS]"),
        ],
    );
    if marker.is_empty() {
        t
    } else {
        t.replace(marker, "[MARKER]")
    }
}

fn lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A servers.yaml for the library server whose command carries `marker` (so this test's
/// processes can be counted apart from other tests').
pub(super) fn servers_file(dir: &Path, marker: &str) -> PathBuf {
    tb_test_support::tiny_library::servers_file(dir, marker, "")
}

/// Live processes whose command line holds `marker`.
pub(super) fn processes_with(marker: &str) -> usize {
    tb_test_support::tiny_library::pids_with(marker).len()
}

fn by_uid(recs: &[Value]) -> BTreeMap<String, Value> {
    recs.iter()
        .map(|r| (r["uid"].as_str().unwrap().to_string(), r.clone()))
        .collect()
}

fn tool_texts(rec: &Value) -> Vec<(String, String)> {
    rec["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["T"] == "ToolResponse")
        .map(|m| {
            (
                m["name"].as_str().unwrap().to_string(),
                m["content"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn golden_agent_on_our_own_server_passes_with_records_as_native() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let teardown_log = dir.path().join("teardowns.log");
    let out = dir.path().join("out.jsonl");
    let servers = fixture().join("servers.yaml");
    let (code, text) = infer_on_fixture(
        "testlist.yaml",
        &servers,
        Some(&py),
        &out,
        "--agent golden --dump tools --server-pool 2 -b 2",
        &[("TINY_TEARDOWN_LOG", teardown_log.to_str().unwrap())],
    );
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!("tiny_library_infer_output", redacted(&text, dir.path(), ""));
    let recs = by_uid(&lines(&out));
    assert_eq!(recs.len(), 4);
    assert!(lines(&dir.path().join("out_errors.jsonl")).is_empty());
    for (uid, r) in &recs {
        assert_eq!(r["is_system_error"], false, "{uid}");
        assert_eq!(r["verdict"]["passed"], true, "{uid}");
        let st = &r["verdict"]["state"][0];
        assert_eq!(st["server"], "tiny_library");
        assert_eq!(st["result_hash"], st["golden_hash"]);
        assert_eq!(st["result_hash"].as_str().unwrap().len(), 64);
        assert_eq!(r["test_result"]["result"], true);
        assert_eq!(r["provenance"]["tools"]["backend"], "external");
        // the agent saw exactly the scenario's tools: no reserved tool, nothing ungranted
        let names: Vec<&str> = r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "get_book",
                "lend_book",
                "return_book",
                "list_loans",
                "crash_server",
                "hang_forever",
                "emit_garbage"
            ],
            "{uid}"
        );
        // the schema as the reference's client shapes it: no titles
        let lend = &r["tools"].as_array().unwrap()[1];
        assert!(lend["input_schema"].get("title").is_none(), "{lend}");
        assert!(
            lend["input_schema"]["properties"]["book_id"]
                .get("title")
                .is_none(),
            "{lend}"
        );
    }
    // the tool texts are the server's own, tool errors in its {"error", "tool"} shape
    let lend = tool_texts(&recs["tiny_library.py:test_tl001_lend"]);
    assert_eq!(
        lend[1],
        (
            "lend_book".into(),
            r#"{"id": "L2", "book_id": "B1", "member_id": "M1", "returned": false}"#.into()
        )
    );
    let err = tool_texts(&recs["tiny_library.py:test_tl003_tool_error"]);
    assert_eq!(
        err[0].1,
        r#"{"error": "Tool execution failed: book B3 is already lent", "tool": "lend_book"}"#
    );
    // teardown ran once per attempt, each in its own process
    let pids: Vec<String> = std::fs::read_to_string(&teardown_log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(pids.len(), 4, "{pids:?}");
    let distinct: std::collections::BTreeSet<_> = pids.iter().collect();
    assert_eq!(
        distinct.len(),
        4,
        "one server process per session: {pids:?}"
    );
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_server_killed_hung_or_printing_garbage_is_a_system_error_and_the_campaign_goes_on() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-broken-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let out = dir.path().join("out.jsonl");
    let (code, text) = infer_on_fixture(
        "testlist_broken.yaml",
        &servers,
        Some(&py),
        &out,
        "--agent golden --server-call-timeout 3 -b 3",
        &[],
    );
    assert_ne!(code, 2, "{text}");
    let recs = by_uid(&lines(&out));
    let errs = by_uid(&lines(&dir.path().join("out_errors.jsonl")));
    // the good attempts have their verdicts
    assert_eq!(
        recs["tiny_library.py:test_tl001_lend"]["verdict"]["passed"], true,
        "{text}"
    );
    assert_eq!(
        recs["tiny_library.py:test_tl002_return_patched_loan"]["verdict"]["passed"], true,
        "{text}"
    );
    // a tool the scenario does not grant is unreachable: the agent is told it does not exist
    // and the state stays unchanged, a model failure (not a system error)
    let forbidden = &recs["tiny_library.py:test_tl005_forbidden_tool"];
    assert_eq!(forbidden["is_system_error"], false);
    assert_eq!(forbidden["verdict"]["passed"], false);
    assert_eq!(
        tool_texts(forbidden)[0].1,
        "Error: function 'secret_admin_reset' does not exist"
    );
    // the broken ones are system errors in the sidecar, never graded
    let mut messages = Vec::new();
    for uid in [
        "tiny_library_broken.py:test_tb001_server_killed",
        "tiny_library_broken.py:test_tb002_server_hangs",
        "tiny_library_broken.py:test_tb003_server_prints_garbage",
    ] {
        let r = &errs[uid];
        assert_eq!(r["is_system_error"], true, "{uid}");
        assert!(r["verdict"].is_null(), "{uid}");
        assert_eq!(r["metadata"]["error"]["class"], "tool_runtime", "{uid}");
        let msg = r["metadata"]["error"]["message"].as_str().unwrap();
        // The server's stderr tail (the SDK's log lines, read concurrently) is cut off.
        let head = msg
            .split_once("; its stderr ends with:")
            .map_or(msg, |(h, _)| h);
        messages.push(format!("{uid}: {}", redacted(head, dir.path(), &marker)));
        assert!(!recs.contains_key(uid), "{uid} must not be graded");
    }
    // each names the server and what went wrong (the crash, the 3 s call timeout)
    insta::assert_snapshot!("broken_servers_error_messages", messages.join("\n"));
    // the killed server's earlier call went through before it died
    insta::assert_snapshot!(
        tool_texts(&errs["tiny_library_broken.py:test_tb001_server_killed"])[0].1,
        @r#"{"id": "B1", "title": "The Long Afternoon", "available": true}"#
    );
    assert_eq!(processes_with(&marker), 0, "every server process is gone");
}

#[test]
fn an_unstartable_server_is_a_session_error_per_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.yaml");
    std::fs::write(&servers, "servers:\n  tiny_library:\n    type: mcp-process\n    command: [\"{python}\", \"-c\", \"import sys; sys.stderr.write('boom at import\\\\n'); sys.exit(3)\"]\n").unwrap();
    let out = dir.path().join("out.jsonl");
    let (_, text) = infer_on_fixture("testlist.yaml", &servers, None, &out, "--agent golden", &[]);
    let errs = lines(&dir.path().join("out_errors.jsonl"));
    assert_eq!(errs.len(), 4, "{text}");
    let mut messages = std::collections::BTreeSet::new();
    for r in &errs {
        assert_eq!(r["metadata"]["error"]["type"], "SessionError");
        let msg = r["metadata"]["error"]["message"].as_str().unwrap();
        messages.insert(redacted(msg, dir.path(), ""));
    }
    // one message for every attempt: the server's exit and its stderr
    let messages: Vec<String> = messages.into_iter().collect();
    insta::assert_snapshot!(messages.join("\n"), @"
    server `tiny_library`: start: MCP initialize: connection closed: initialize response (the process exited: exit status: 3); its stderr ends with:
    boom at import
    ");
}

#[tb_test_support::needs(python_mcp)]
#[test]
fn a_streamable_http_server_runs_through_mcp_remote() {
    let py = sdk_python();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = Command::new(&py)
        .arg(fixture().join("server/tiny_library.py"))
        .args(["--http", &port.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let _guard = tb_test_support::Reaped(server);
    // ready when it accepts connections
    let t0 = std::time::Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            t0.elapsed().as_secs() < 120,
            "the http server did not come up"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let dir = tempfile::tempdir().unwrap();
    let servers = dir.path().join("servers.yaml");
    std::fs::write(
        &servers,
        format!("servers:\n  tiny_library:\n    type: mcp-remote\n    transport: streamable-http\n    endpoint: http://127.0.0.1:{port}/mcp\n    headers: {{X-Test: \"yes\"}}\n"),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    // one task: a remote server keeps one state for all its sessions
    let (code, text) = infer_on_fixture(LEND, &servers, None, &out, "--agent golden", &[]);
    assert_eq!(code, 0, "{text}");
    let recs = lines(&out);
    assert_eq!(recs[0]["verdict"]["passed"], true, "{text}");
    insta::assert_snapshot!(tool_texts(&recs[0])[1].1, @r#"{"id": "L2", "book_id": "B1", "member_id": "M1", "returned": false}"#);
}

#[tb_test_support::needs(python_mcp)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scripted_model_drives_our_server_through_the_episode_loop() {
    use tb_mock_model::{MockRequest, MockServer, Reply};
    let py = sdk_python();
    let server = MockServer::start().await.unwrap();
    let offered = std::sync::Arc::new(std::sync::Mutex::new(Vec::<Vec<String>>::new()));
    let seen = offered.clone();
    server.set_script("agent", move |r: &MockRequest| {
        seen.lock().unwrap().push(r.tools.clone());
        match r.tool_calls_so_far() {
            0 => Reply::Calls(vec![(
                "get_book".into(),
                serde_json::json!({"book_id": "B1"}),
            )]),
            // a reserved tool is not reachable even when the model names it
            1 => Reply::Calls(vec![(
                "__reserved__geteffects".into(),
                serde_json::json!({}),
            )]),
            2 => Reply::Calls(vec![(
                "lend_book".into(),
                serde_json::json!({"book_id": "B1", "member_id": "M1"}),
            )]),
            _ => Reply::Text("Lent. <DONE>".into()),
        }
    });
    server.set_script("user", |_r: &MockRequest| Reply::Text("Thanks.".into()));
    let dir = tempfile::tempdir().unwrap();
    let model = |role: &str, pad: &str| {
        format!(
            "{pad}type: aoai\n{pad}deployment: mock-{role}\n{pad}endpoint_url: {}\n{pad}credential: {{type: api-key, api_key: sk-x}}\n",
            server.url(role, tb_mock_model::Api::Chat)
        )
    };
    let cfg = dir.path().join("config.yaml");
    std::fs::write(
        &cfg,
        format!(
            "orchestrator:\n  agent_model:\n{}user_model:\n{}",
            model("agent", "    "),
            model("user", "  ")
        ),
    )
    .unwrap();
    let out = dir.path().join("out.jsonl");
    let (code, text) = {
        let out = out.clone();
        tokio::task::spawn_blocking(move || {
            let options = format!("--agent think -c {}", cfg.display());
            let servers = fixture().join("servers.yaml");
            infer_on_fixture(LEND, &servers, Some(&py), &out, &options, &[])
        })
        .await
        .unwrap()
    };
    assert_eq!(code, 0, "{text}");
    let recs = lines(&out);
    assert_eq!(recs.len(), 1, "{text}");
    let r = &recs[0];
    assert_eq!(r["verdict"]["passed"], true, "{r}");
    let texts = tool_texts(r);
    assert_eq!(
        texts[1].1,
        "Error: function '__reserved__geteffects' does not exist"
    );
    insta::assert_snapshot!(texts[2].1, @r#"{"id": "L2", "book_id": "B1", "member_id": "M1", "returned": false}"#);
    for tools in offered.lock().unwrap().iter() {
        assert!(
            tools
                .iter()
                .all(|t| !t.starts_with("__reserved__") && t != "secret_admin_reset"),
            "{tools:?}"
        );
        assert!(tools.contains(&"lend_book".to_string()));
    }
}

#[tb_test_support::needs(python_mcp)]
#[test]
#[ignore = "slow: 200 Python server processes started at concurrency 16"]
fn two_hundred_attempts_at_concurrency_16_leave_no_process_behind() {
    let py = sdk_python();
    let dir = tempfile::tempdir().unwrap();
    let marker = format!("tb-leak-{}", std::process::id());
    let servers = servers_file(dir.path(), &marker);
    let before = processes_with(&marker);
    let out = dir.path().join("out.jsonl");
    let t0 = std::time::Instant::now();
    let (code, text) = infer_on_fixture(
        "testlist.yaml",
        &servers,
        Some(&py),
        &out,
        "--agent golden --repeat 50 -b 16 --server-pool 4",
        &[],
    );
    eprintln!(
        "200 attempts with external servers: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "{text}");
    insta::assert_snapshot!(
        "two_hundred_attempts_output",
        redacted(&text, dir.path(), &marker)
    );
    assert_eq!(lines(&out).len(), 200);
    assert_eq!(before, 0);
    assert_eq!(
        processes_with(&marker),
        0,
        "server processes left after the run"
    );
}

// ---- the reference's v1 servers, forced external ----

/// The scenario text without its `world_state.<server>.sources` block (as
/// tb-bench-v1/requests/scripts/strip_sources.py does it).
fn strip_sources(text: &str) -> (String, usize) {
    let mut out = Vec::new();
    let (mut skipping, mut n) = (false, 0);
    for l in text.split('\n') {
        if l == "    sources:" {
            skipping = true;
            n += 1;
            continue;
        }
        if skipping {
            if l.starts_with("     ") || l.starts_with("    -") || l.trim().is_empty() {
                continue;
            }
            skipping = false;
        }
        out.push(l);
    }
    (out.join("\n"), n)
}

#[cfg(unix)]
#[tb_test_support::reference_test]
#[tb_test_support::needs(python_servers)]
#[test]
#[ignore = "slow: the reference's v1 servers started as Python processes for a sample of every domain"]
fn the_reference_v1_servers_forced_external_give_the_native_verdicts_and_tool_texts() {
    // the data repository's checkout with its servers' sources
    let data = tb_test_support::reference_data();
    let py = tb_test_support::need(tb_test_support::Need::PythonServers);
    // The v1 servers' __reserved__init indexes the scenario's policy `sources` into Typesense,
    // which this machine does not run: the test uses a copy of the data root whose scenarios
    // lack world_state.<server>.sources. Only the policy-search tools read them, and no golden
    // call uses those tools, so the verdicts do not depend on them.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("data");
    std::fs::create_dir_all(root.join("dataset/scenario")).unwrap();
    for d in ["servers", "releases"] {
        std::os::unix::fs::symlink(data.join(d), root.join(d)).unwrap();
    }
    for d in ["agent", "test_case"] {
        std::os::unix::fs::symlink(data.join("dataset").join(d), root.join("dataset").join(d))
            .unwrap();
    }
    let domains = [
        "sandbox_external_retail",
        "external_booking_v1",
        "sandbox_auto_insurance",
        "sandbox_neobank_support_v1",
        "sandbox_consulting",
    ];
    for e in std::fs::read_dir(data.join("dataset/scenario"))
        .unwrap()
        .flatten()
    {
        let name = e.file_name().to_string_lossy().to_string();
        let text = std::fs::read_to_string(e.path()).unwrap();
        let text = if domains.iter().any(|d| name == format!("{d}.yaml")) {
            let (t, n) = strip_sources(&text);
            assert_eq!(n, 1, "{name}: one sources block");
            t
        } else {
            text
        };
        std::fs::write(root.join("dataset/scenario").join(&name), text).unwrap();
    }
    // a sample per domain: the first three tasks of each in the benchmark list
    let list = std::fs::read_to_string(
        data.join("releases/thinkingbox_bench_v1/testlist_thinkingbox_bench_v1.yaml"),
    )
    .unwrap();
    let mut sample = Vec::new();
    for d in domains {
        sample.extend(
            list.lines()
                .filter_map(|l| l.strip_prefix("- "))
                .filter(|id| id.starts_with(d))
                .take(3)
                .map(str::to_string),
        );
    }
    assert_eq!(sample.len(), 15);
    let list_file = dir.path().join("sample.yaml");
    super::common::write_test_list(&list_file, &sample);
    let run = |out: &Path, extra: &[&str]| {
        let args = super::common::infer_args(&root, &list_file, "golden", "1", out, extra);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let pythonpath = data.join("servers/tb_business_ops_servers_202606");
        tb(
            &args,
            &[
                ("PYTHONPATH", pythonpath.to_str().unwrap()),
                ("PYTHONDONTWRITEBYTECODE", "1"),
            ],
        )
    };
    let native_out = dir.path().join("native.jsonl");
    let (code, text) = run(&native_out, &[]);
    assert_eq!(code, 0, "{text}");
    let external_out = dir.path().join("external.jsonl");
    let servers = data.join("servers/servers.yaml");
    let t0 = std::time::Instant::now();
    let (code, text) = run(
        &external_out,
        &[
            "--servers",
            servers.to_str().unwrap(),
            "--prefer",
            "external",
            "--python",
            py.to_str().unwrap(),
            "-b",
            "3",
            "--server-pool",
            "1",
            // Each of the reference's servers imports fastmcp and its stack: 10-30 s on a quiet
            // 2-core machine, over the 60 s default when the other test binaries run beside it.
            "--server-start-timeout",
            "300",
        ],
    );
    eprintln!(
        "15 v1 tasks on the reference's servers: {:.1}s",
        t0.elapsed().as_secs_f64()
    );
    assert_eq!(code, 0, "{text}");
    let native = by_uid(&lines(&native_out));
    let external = by_uid(&lines(&external_out));
    assert_eq!(native.len(), 15);
    assert_eq!(external.len(), 15, "{text}");
    for (uid, n) in &native {
        let x = &external[uid];
        assert_eq!(x["provenance"]["tools"]["backend"], "external");
        assert_eq!(n["verdict"]["passed"], x["verdict"]["passed"], "{uid}");
        for (ns, xs) in n["verdict"]["state"]
            .as_array()
            .unwrap()
            .iter()
            .zip(x["verdict"]["state"].as_array().unwrap())
        {
            assert_eq!(ns["server"], xs["server"], "{uid}");
            assert_eq!(ns["result_hash"], xs["result_hash"], "{uid}");
            assert_eq!(ns["golden_hash"], xs["golden_hash"], "{uid}");
        }
        assert_eq!(tool_texts(n), tool_texts(x), "{uid}: tool results");
    }
}
