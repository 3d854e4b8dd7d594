//! Tool calls on a session: one dispatch on the session's kind, then in process (inline or on
//! the blocking pool, panics caught) or on the remote backend, always under the call timeout.

use super::slot::{INLINE, Live, OFFLOAD, Slot, UNSEEN};
use super::{Registry, lock};
use crate::error::SessionError;
use serde_json::{Value, json};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};
use tb_eval::root::TaskSession;
use tb_sandbox::CallOutcome;
use tokio::sync::{OwnedMappedMutexGuard, OwnedMutexGuard};

/// A visible tool call that took longer than this once runs on the blocking pool from then on
/// (see [`Registry::call`]).
pub const INLINE_CALL_LIMIT: Duration = Duration::from_millis(1);

/// The lock of an in-process session.
type NativeGuard = OwnedMappedMutexGuard<Live, TaskSession>;

impl Registry {
    /// Calls a visible tool. A name the session does not show gives
    /// [`CallOutcome::UnknownTool`]; a call that runs past the call timeout gives
    /// [`SessionError::Timeout`] (the session stays busy until it ends); a tool that panics
    /// gives [`SessionError::Internal`]; a remote backend's failure (a server gone, hung or
    /// answering garbage) gives [`SessionError::Backend`].
    ///
    /// Where an in-process call runs: tool calls are in-memory and take microseconds, so
    /// handing each one to the blocking pool (two thread wake-ups) costs more than the call.
    /// The first call of a tool of a task's tool set runs on the blocking pool under the call
    /// timeout; once a call of it finished within [`INLINE_CALL_LIMIT`], later calls run inline
    /// on the caller's task. A tool that once took longer, timed out or panicked runs on the
    /// blocking pool, under the timeout, from then on: a slow tool holds an async worker at most
    /// once per task's tool set, and a tool that never returns never holds one.
    pub async fn call(
        &self,
        slot: &Arc<Slot>,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        let Some(place) = slot.tools.names.get(tool) else {
            return Ok(CallOutcome::UnknownTool(tool.to_string()));
        };
        self.dispatch(slot, None, tool, args, Some(place)).await
    }

    /// Calls a tool of one server of the session (the reference's `__reserved__server_tool`,
    /// reachable only through the proxy API). Unknown server or tool gives
    /// [`SessionError::UnknownTool`]. Unlike the reference, the tool must be one the session
    /// grants (its scenario's tools, or the proxy session's `available_tools`): a tool the
    /// grant excludes is refused here as on every other route (on a remote session without
    /// asking its servers, which know their own tools). In process always on the blocking
    /// pool, under the timeout.
    pub async fn call_server_tool(
        &self,
        slot: &Arc<Slot>,
        server: &str,
        tool: &str,
        args: Value,
    ) -> Result<CallOutcome, SessionError> {
        if let Some(initial) = &slot.initial {
            let exists = initial
                .server(server)
                .is_some_and(|s| s.domain.tool(tool).is_some());
            if !exists {
                return Err(unknown_server_tool(server, tool));
            }
        }
        if !slot.tools.contains(tool) {
            return Err(server_tool_not_granted(server, tool));
        }
        self.dispatch(slot, Some(server), tool, args, None).await
    }

    /// The session's lock, waited for at most the call timeout (a session still running a
    /// call past it is busy).
    pub(super) async fn lock_live(
        &self,
        slot: &Arc<Slot>,
    ) -> Result<OwnedMutexGuard<Live>, SessionError> {
        if let Ok(guard) = slot.live.clone().try_lock_owned() {
            return Ok(guard);
        }
        tokio::time::timeout(slot.call_timeout, slot.live.clone().lock_owned())
            .await
            .map_err(|_| SessionError::Busy(slot.id.clone()))
    }

    /// The one place a call meets the session's kind: in process (inline when `place` says
    /// so, else on the blocking pool) or on the remote backend.
    async fn dispatch(
        &self,
        slot: &Arc<Slot>,
        server: Option<&str>,
        tool: &str,
        args: Value,
        place: Option<&AtomicU8>,
    ) -> Result<CallOutcome, SessionError> {
        let started = Instant::now();
        let guard = self.lock_live(slot).await?;
        let native =
            OwnedMutexGuard::try_map(guard, |live| live.as_mut().and_then(|s| s.in_process_mut()));
        let out = match native {
            Ok(session) => match place {
                Some(place) if place.load(Ordering::Relaxed) == INLINE => {
                    call_inline(slot, session, place, tool, args)
                }
                _ => call_blocking(slot, session, server, tool, args, place, started).await,
            },
            Err(guard) => call_remote(slot, guard, server, tool, args, started).await,
        };
        self.touch(slot);
        tracing::debug!(session = %slot.id, tool, micros = micros(started.elapsed()), "tool call");
        out
    }
}

/// An in-process call on the caller's task (see [`Registry::call`]).
fn call_inline(
    slot: &Slot,
    mut session: NativeGuard,
    place: &AtomicU8,
    tool: &str,
    args: Value,
) -> Result<CallOutcome, SessionError> {
    let started = Instant::now();
    // A panicking tool is an error, as on the blocking pool; the session goes on.
    let ran = std::panic::catch_unwind(AssertUnwindSafe(|| {
        run_call(slot, &mut session, None, tool, args)
    }));
    let took = started.elapsed();
    drop(session);
    match ran {
        Ok(outcome) => {
            if took > INLINE_CALL_LIMIT {
                place.store(OFFLOAD, Ordering::Relaxed);
                tracing::info!(session = %slot.id, tool, micros = micros(took),
                    "slow tool call: later calls of this tool run on the blocking pool");
            }
            Ok(outcome)
        }
        Err(panic) => {
            place.store(OFFLOAD, Ordering::Relaxed);
            let e = panic_message(panic.as_ref());
            tracing::error!(session = %slot.id, tool, error = %e, "tool call crashed");
            Err(SessionError::Internal(format!(
                "tool `{tool}` crashed: {e}"
            )))
        }
    }
}

/// An in-process call on the blocking pool, under the call timeout. With `place`, records
/// where later calls of this tool run (see [`Registry::call`]).
async fn call_blocking(
    slot: &Arc<Slot>,
    mut session: NativeGuard,
    server: Option<&str>,
    tool: &str,
    args: Value,
    place: Option<&AtomicU8>,
    started: Instant,
) -> Result<CallOutcome, SessionError> {
    let (owner, server, name) = (slot.clone(), server.map(str::to_string), tool.to_string());
    let job = tokio::task::spawn_blocking(move || {
        let t0 = Instant::now();
        let outcome = run_call(&owner, &mut session, server.as_deref(), &name, args);
        (outcome, t0.elapsed())
    });
    let remaining = slot.call_timeout.saturating_sub(started.elapsed());
    let out = match tokio::time::timeout(remaining, job).await {
        Err(_) => {
            tracing::warn!(session = %slot.id, tool, "tool call timed out");
            Err(SessionError::Timeout(slot.call_timeout))
        }
        Ok(Err(e)) => {
            tracing::error!(session = %slot.id, tool, error = %e, "tool call crashed");
            Err(SessionError::Internal(format!(
                "tool `{tool}` crashed: {e}"
            )))
        }
        Ok(Ok(done)) => Ok(done),
    };
    // The call ran (or is still running): where later calls of this tool run.
    if let Some(place) = place {
        match &out {
            Ok((_, took)) if *took <= INLINE_CALL_LIMIT => {
                let _ =
                    place.compare_exchange(UNSEEN, INLINE, Ordering::Relaxed, Ordering::Relaxed);
            }
            _ => place.store(OFFLOAD, Ordering::Relaxed),
        }
    }
    out.map(|(outcome, _)| outcome)
}

/// A call on the session's remote backend, under the call timeout: the backend's text is the
/// reply. With `server`, that server's tool past the priority order (the backend says when it
/// has no such server or tool). The call is logged when the session logs calls.
async fn call_remote(
    slot: &Slot,
    mut guard: OwnedMutexGuard<Live>,
    server: Option<&str>,
    tool: &str,
    args: Value,
    started: Instant,
) -> Result<CallOutcome, SessionError> {
    let Some(remote) = guard.as_mut() else {
        return Err(SessionError::Backend("the session is closed".into()));
    };
    let remaining = slot.call_timeout.saturating_sub(started.elapsed());
    let reply = match server {
        None => tokio::time::timeout(remaining, remote.call(tool, &args))
            .await
            .map(|r| r.map(Some)),
        Some(server) => {
            tokio::time::timeout(remaining, remote.call_server(server, tool, &args)).await
        }
    };
    let out = match reply {
        Err(_) => {
            tracing::warn!(session = %slot.id, tool, "tool call timed out");
            Err(SessionError::Timeout(slot.call_timeout))
        }
        Ok(Err(message)) => {
            tracing::warn!(session = %slot.id, tool, error = %message, "remote tool call failed");
            Err(SessionError::Backend(message))
        }
        Ok(Ok(None)) => Err(unknown_server_tool(server.unwrap_or_default(), tool)),
        Ok(Ok(Some(text))) => Ok(CallOutcome::Reply(tb_sandbox::ToolReply::ok(text))),
    };
    if let Ok(o) = &out {
        log_call(slot, tool, args, o);
    }
    out
}

/// One call on an in-process session: of any server's tool (`server`) or of the session's
/// (`None`); logged when the session logs calls.
fn run_call(
    slot: &Slot,
    session: &mut TaskSession,
    server: Option<&str>,
    tool: &str,
    args: Value,
) -> CallOutcome {
    let outcome = match server {
        Some(server) => match session.servers.iter_mut().find(|s| s.domain.name == server) {
            Some(s) => s.call(tool, &args),
            None => match session
                .own
                .iter_mut()
                .find(|s| s.server() == server && s.has_tool(tool))
            {
                Some(s) => CallOutcome::Reply(s.call_tool(tool, &args)),
                None => CallOutcome::UnknownTool(tool.to_string()),
            },
        },
        None => session.call(tool, &args),
    };
    log_call(slot, tool, args, &outcome);
    outcome
}

/// Adds a call to the session's log for the proxy's `__reserved__proxy_info`, when the session
/// asked for it (called while the call holds the session's lock, so the log keeps their order).
fn log_call(slot: &Slot, tool: &str, args: Value, outcome: &CallOutcome) {
    if slot.logs_calls() {
        let response = outcome.to_text(tool);
        lock(&slot.call_log)
            .push(json!({"tool_name": tool, "arguments": args, "response": response}));
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A caught panic's message, as tokio's `JoinError` words it.
fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let msg = panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str));
    match msg {
        Some(m) => format!("panicked with message {m:?}"),
        None => "panicked".to_string(),
    }
}

/// `__reserved__server_tool` naming a server or tool the session does not have.
fn unknown_server_tool(server: &str, tool: &str) -> SessionError {
    SessionError::UnknownTool(format!(
        "{} > {}",
        crate::input::shown(server),
        crate::input::shown(tool)
    ))
}

/// `__reserved__server_tool` naming a tool outside the session's grant.
fn server_tool_not_granted(server: &str, tool: &str) -> SessionError {
    SessionError::BadRequest(format!(
        "Tool {} > {} is not granted to this session (it is not in the session's tool list)",
        crate::input::shown(server),
        crate::input::shown(tool)
    ))
}
