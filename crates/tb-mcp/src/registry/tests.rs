//! The registry's own tests: timeouts, crashing tools, a remote backend.

use super::*;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;
use tb_core::task::golden_calls_of as golden_calls;
use tb_eval::root::TaskSession;
use tb_eval::tools::EpisodeSession;
use tb_sandbox::CallOutcome;
use tb_sandbox::runtime::{Args, ToolError};
use tb_sandbox::state::State;
use tb_sandbox::{Domain, Loaded, Session};

static GATE: Mutex<()> = Mutex::new(());

fn wait(_: &mut Session, _: &Args) -> Result<Value, ToolError> {
    let _open = lock(&GATE);
    Ok(json!({"waited": true}))
}

fn boom(_: &mut Session, _: &Args) -> Result<Value, ToolError> {
    panic!("a tool bug")
}

fn slow_slot(reg: &Registry) -> Arc<Slot> {
    let tables = "table items file=x/items id=id forbid\n  id str\n";
    let tools = "tool wait\n  | Blocks until the test opens the gate.\ntool boom\n  | Panics.\n";
    let domain = Arc::new(
        Domain::new("slow", &[("slow.tables", tables), ("slow.tools", tools)], {
            let mut t = tb_sandbox::Tools::new();
            t.add("wait", wait).add("boom", boom);
            t
        })
        .unwrap(),
    );
    let loaded = Loaded {
        base: State::empty(domain.layout().clone()),
        domain,
    };
    let session = TaskSession {
        servers: vec![loaded.session(&json!({}), Clock::default()).unwrap()],
        own: Vec::new(),
    };
    let tools = Arc::new(ToolSet::new(session.tool_list()));
    reg.install(
        "slow".into(),
        Origin::Proxy(ProxyOptions::default()),
        tools,
        Box::new(session),
        None,
    )
    .unwrap()
}

fn example() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/brightside")
}

// Holding the gate across awaits is the point: the tool must not finish while we look.
#[allow(clippy::await_holding_lock)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_past_the_timeout_is_refused_and_the_session_stays_busy_until_it_ends() {
    let limits = Limits {
        call_timeout: Duration::from_millis(100),
        ..Limits::default()
    };
    let reg = Registry::open(&example(), Clock::default(), limits).unwrap();
    let slot = slow_slot(&reg);
    let gate = lock(&GATE);
    // The gate is closed, so the tool cannot finish: the timeout must answer.
    let e = reg.call(&slot, "wait", json!({})).await.unwrap_err();
    assert!(matches!(e, SessionError::Timeout(_)), "{e}");
    assert_eq!(e.to_string(), "Tool call timed out after 0.1 seconds");
    // The first call still runs: the next one is refused, not queued forever.
    let e = reg.call(&slot, "wait", json!({})).await.unwrap_err();
    assert!(matches!(e, SessionError::Busy(_)), "{e}");
    assert!(e.to_string().contains("busy"));
    // A busy session is not reaped, even when idle long enough.
    assert!(reg.reap(Duration::ZERO).is_empty());
    drop(gate);
    // Once the stuck call ends, the session serves again (bounded wait).
    let mut answered = None;
    for _ in 0..500 {
        match reg.call(&slot, "wait", json!({})).await {
            Ok(o) => {
                answered = Some(o);
                break;
            }
            Err(SessionError::Busy(_) | SessionError::Timeout(_)) => {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            Err(e) => panic!("{e}"),
        }
    }
    assert_eq!(
        answered,
        Some(CallOutcome::Ok(json!({"waited": true}).into()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crashing_tool_is_an_error_not_a_crash() {
    let reg = Registry::open(&example(), Clock::default(), Limits::default()).unwrap();
    let slot = slow_slot(&reg);
    // The session catches the panic: the agent reads a tool error, never the panic text.
    let out = reg.call(&slot, "boom", json!({})).await.unwrap();
    assert_eq!(
        out,
        CallOutcome::ToolFailed(tb_sandbox::runtime::TOOL_PANIC_ERROR.into())
    );
    assert!(!out.to_text("boom").contains("a tool bug"));
    // The session and the registry go on.
    assert_eq!(
        reg.call(&slot, "nope", json!({})).await.unwrap(),
        CallOutcome::UnknownTool("nope".into())
    );
    assert_eq!(reg.len(), 1);
}

/// A remote backend whose sessions answer `remote:<tool>`, fail on `cancel_order`, list
/// one tool no scenario grants, and count their closes.
struct FakeRemote {
    tools: Vec<Value>,
    closed: Arc<std::sync::atomic::AtomicUsize>,
}

struct FakeSession {
    tools: Vec<Value>,
    closed: Arc<std::sync::atomic::AtomicUsize>,
}

impl tb_eval::tools::ToolBackend for FakeSession {
    fn tool_list(&self) -> Vec<Value> {
        self.tools.clone()
    }
    fn call<'a>(
        &'a mut self,
        tool: &'a str,
        _args: &'a Value,
    ) -> tb_eval::tools::BoxFut<'a, Result<String, String>> {
        Box::pin(async move {
            if tool == "cancel_order" {
                Err("server `fake`: gone".to_string())
            } else {
                Ok(format!("remote:{tool}"))
            }
        })
    }
}

impl EpisodeSession for FakeSession {
    fn verdicts(
        &mut self,
    ) -> Option<tb_eval::tools::BoxFut<'_, Result<Vec<tb_core::StateVerdict>, String>>> {
        Some(Box::pin(async {
            Ok(vec![tb_core::StateVerdict {
                server: "fake".into(),
                passed: true,
                result_hash: "h".into(),
                golden_hash: "h".into(),
                diff: Vec::new(),
            }])
        }))
    }
    fn close(self: Box<Self>) -> tb_eval::tools::BoxFut<'static, ()> {
        let closed = self.closed.clone();
        Box::pin(async move {
            closed.fetch_add(1, Ordering::SeqCst);
        })
    }
}

impl RemoteTools for FakeRemote {
    fn open<'a>(
        &'a self,
        _task_uid: &'a str,
    ) -> tb_eval::tools::BoxFut<'a, Result<Box<dyn EpisodeSession>, String>> {
        Box::pin(async move {
            Ok(Box::new(FakeSession {
                tools: self.tools.clone(),
                closed: self.closed.clone(),
            }) as Box<dyn EpisodeSession>)
        })
    }
}

const BS001: &str = "brightside_retail.py:test_bs001_cancel_unshipped_order";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_session_is_granted_called_graded_and_closed_through_the_registry() {
    let native = Registry::open(&example(), Clock::default(), Limits::default()).unwrap();
    let task = native.dataset.load_task(BS001).unwrap();
    let mut tools = native
        .sandbox
        .session(&task, Clock::default())
        .unwrap()
        .tool_list();
    tools
        .push(json!({"name": "not_granted", "description": "", "inputSchema": {"type": "object"}}));
    let closed = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let reg = Arc::new(
        Registry::open(&example(), Clock::default(), Limits::default())
            .unwrap()
            .with_remote(Arc::new(FakeRemote {
                tools,
                closed: closed.clone(),
            })),
    );
    let slot = reg.create_for_task(BS001).await.unwrap();
    assert!(slot.is_remote());
    // the scenario's grant applies to the backend's list
    assert!(!slot.tools().contains("not_granted"));
    assert!(slot.tools().contains("get_order"));
    assert_eq!(
        reg.call(&slot, "not_granted", json!({})).await.unwrap(),
        CallOutcome::UnknownTool("not_granted".into())
    );
    assert_eq!(
        reg.call(&slot, "get_order", json!({})).await.unwrap(),
        CallOutcome::Reply(tb_sandbox::ToolReply::ok("remote:get_order".into()))
    );
    let e = reg
        .call(&slot, "cancel_order", json!({}))
        .await
        .unwrap_err();
    assert!(matches!(e, SessionError::Backend(_)), "{e}");
    assert_eq!(e.status(), 502);
    let fx = reg.effects(&slot, true).await.unwrap();
    assert!(fx.passed());
    assert_eq!(fx.servers[0].server, "fake");
    // removal closes it; so does shutdown for the ones still open
    let other = reg.create_for_task(BS001).await.unwrap();
    reg.remove(slot.id()).unwrap();
    assert!(reg.get(other.id()).is_ok());
    reg.shutdown(Duration::from_secs(10)).await;
    assert_eq!(closed.load(Ordering::SeqCst), 2);
    assert!(reg.is_empty());
}

#[test]
fn golden_calls_skip_entries_without_a_tool() {
    let config = json!({"golden_test_case": {"tool_interactions": [
        {"tool": "a", "parameters": {"x": 1}}, {"parameters": {}}, {"tool": "b"}
    ]}});
    assert_eq!(
        golden_calls(&config),
        vec![
            ("a".to_string(), json!({"x": 1})),
            ("b".to_string(), json!({}))
        ]
    );
    assert!(golden_calls(&json!({"golden_test_case": null})).is_empty());
}
