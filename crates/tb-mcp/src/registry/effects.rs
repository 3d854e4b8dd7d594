//! A session's effects: per server, the verdict the evaluator needs (the live state's hash
//! against the golden one, the diff) and, when asked, the states; in the admin surface's and the
//! reference Session Proxy's shapes.

use super::slot::{Origin, Slot};
use super::{Registry, lock};
use crate::error::SessionError;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use std::time::Instant;
use tb_core::task::golden_calls_of as golden_calls;
use tb_eval::root::TaskSession;
use tb_eval::tools::EpisodeSession;
use tb_sandbox::diff::deep_diff;

/// Effects of one server of a session: the verdict the evaluator needs, and the states.
#[derive(Debug, Clone)]
pub struct ServerEffects {
    /// Server name.
    pub server: String,
    /// Hash of the live session's stable state.
    pub result_hash: String,
    /// Hash of the golden stable state.
    pub golden_hash: String,
    /// `result_hash == golden_hash`.
    pub passed: bool,
    /// Deep diff of result against golden (empty when they are equal).
    pub diff: Vec<Value>,
    /// Full state right after init (unstable fields included); `Null` when not asked for.
    pub initial_state: Value,
    /// Stable state of the live session; `Null` when not asked for.
    pub result_state: Value,
    /// Stable golden state; `Null` when not asked for.
    pub golden_state: Value,
    /// The init config's `rubrics` (or `null`).
    pub rubrics: Value,
    /// The init config's `rubrics_yesno`, when it has one.
    pub rubrics_yesno: Option<Value>,
    /// The server's own `__reserved__geteffects` object (an external server of a proxy
    /// session), given as is by [`ServerEffects::to_reference_json`].
    pub reference: Option<Value>,
}

impl ServerEffects {
    /// A verdict's effects, with the rubrics of the server's init `config` (no states).
    fn of_verdict(v: tb_core::StateVerdict, config: Option<&Value>) -> Self {
        ServerEffects {
            initial_state: Value::Null,
            result_state: Value::Null,
            golden_state: Value::Null,
            rubrics: config
                .and_then(|c| c.get("rubrics"))
                .cloned()
                .unwrap_or(Value::Null),
            rubrics_yesno: config.and_then(|c| c.get("rubrics_yesno")).cloned(),
            reference: None,
            server: v.server,
            result_hash: v.result_hash,
            golden_hash: v.golden_hash,
            passed: v.passed,
            diff: v.diff,
        }
    }

    /// A server's own effects object (`__reserved__geteffects`): hashes and diff read from it
    /// (`passed` only when both hashes are strings and equal), the object kept as is.
    fn of_reference(server: String, fx: Value) -> Self {
        let text = |k: &str| fx.get(k).and_then(Value::as_str).map(str::to_string);
        let (result_hash, golden_hash) = (text("result_db_hash"), text("golden_db_hash"));
        ServerEffects {
            passed: result_hash.is_some() && result_hash == golden_hash,
            result_hash: result_hash.unwrap_or_default(),
            golden_hash: golden_hash.unwrap_or_default(),
            diff: fx
                .get("diff")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            initial_state: fx.get("initial_db_state").cloned().unwrap_or(Value::Null),
            result_state: fx.get("result_db_state").cloned().unwrap_or(Value::Null),
            golden_state: fx.get("golden_db_state").cloned().unwrap_or(Value::Null),
            rubrics: fx.get("rubrics").cloned().unwrap_or(Value::Null),
            rubrics_yesno: fx.get("rubrics_yesno").cloned(),
            server,
            reference: Some(fx),
        }
    }

    /// The reference server's `__reserved__geteffects` shape.
    pub fn to_reference_json(&self) -> Value {
        if let Some(r) = &self.reference {
            return r.clone();
        }
        let mut m = Map::new();
        m.insert("initial_db_state".into(), self.initial_state.clone());
        m.insert("result_db_state".into(), self.result_state.clone());
        m.insert("result_db_hash".into(), json!(self.result_hash));
        m.insert("golden_db_state".into(), self.golden_state.clone());
        m.insert("golden_db_hash".into(), json!(self.golden_hash));
        m.insert("diff".into(), Value::Array(self.diff.clone()));
        m.insert("rubrics".into(), self.rubrics.clone());
        if let Some(r) = &self.rubrics_yesno {
            m.insert("rubrics_yesno".into(), r.clone());
        }
        Value::Object(m)
    }
}

/// Effects of a whole session.
#[derive(Debug, Clone)]
pub struct Effects {
    /// Per server, in priority order.
    pub servers: Vec<ServerEffects>,
    /// The call log (only for proxy sessions created with `geteffects_proxy_info`).
    pub call_log: Option<Vec<Value>>,
}

impl Effects {
    /// Every server passed.
    pub fn passed(&self) -> bool {
        self.servers.iter().all(|s| s.passed)
    }

    /// The admin surface's JSON: the first server's `result_hash`, `golden_hash`, `diff` and
    /// states at the top level (v1 tasks have one server), `passed` over all servers, and every
    /// server under `servers`.
    pub fn to_admin_json(&self, session: &str, task: Option<&str>) -> Value {
        let first = self.servers.first();
        let server_json = |s: &ServerEffects| {
            json!({
                "server": s.server,
                "result_hash": s.result_hash,
                "golden_hash": s.golden_hash,
                "passed": s.passed,
                "diff": s.diff,
                "initial_state": s.initial_state,
                "result_state": s.result_state,
                "golden_state": s.golden_state,
            })
        };
        json!({
            "session": session,
            "task": task,
            "result_hash": first.map(|s| s.result_hash.clone()),
            "golden_hash": first.map(|s| s.golden_hash.clone()),
            "passed": self.passed(),
            "diff": first.map(|s| s.diff.clone()).unwrap_or_default(),
            "initial_state": first.map_or(Value::Null, |s| s.initial_state.clone()),
            "result_state": first.map_or(Value::Null, |s| s.result_state.clone()),
            "golden_state": first.map_or(Value::Null, |s| s.golden_state.clone()),
            "servers": self.servers.iter().map(server_json).collect::<Vec<_>>(),
        })
    }

    /// The reference Session Proxy's `get_effects` value: `{server: geteffects}` (+ the call log).
    pub fn to_reference_json(&self) -> Value {
        let mut m = Map::new();
        for s in &self.servers {
            m.insert(s.server.clone(), s.to_reference_json());
        }
        if let Some(log) = &self.call_log {
            m.insert(
                "__reserved__proxy_info".into(),
                json!({ "tool_calls": log }),
            );
        }
        Value::Object(m)
    }
}

impl Registry {
    /// The session's effects: per server, the live state's hash against the golden one (the
    /// in-process [`StateJudge`](tb_eval::judge::StateJudge) for task sessions, so verdicts are identical), the diff, and,
    /// when `with_states`, the initial, result and golden states. A remote session's are its
    /// backend's (no states: the backend holds them).
    pub async fn effects(
        &self,
        slot: &Arc<Slot>,
        with_states: bool,
    ) -> Result<Effects, SessionError> {
        let started = Instant::now();
        let mut guard = self.lock_live(slot).await?;
        let call_log = slot.logs_calls().then(|| lock(&slot.call_log).clone());
        let Some(session) = guard.as_mut() else {
            return Err(SessionError::Backend("the session is closed".into()));
        };
        let servers = if let Some(session) = session.in_process() {
            let live = session.clone();
            drop(guard);
            self.native_effects(slot, &live, with_states)?
        } else {
            let remaining = slot.call_timeout.saturating_sub(started.elapsed());
            let servers =
                tokio::time::timeout(remaining, remote_effects(slot, session.as_mut())).await;
            drop(guard);
            servers.map_err(|_| SessionError::Timeout(slot.call_timeout))??
        };
        self.touch(slot);
        Ok(Effects { servers, call_log })
    }

    fn native_effects(
        &self,
        slot: &Slot,
        live: &TaskSession,
        with_states: bool,
    ) -> Result<Vec<ServerEffects>, SessionError> {
        let state_of = |s: &TaskSession, server: &str| {
            s.server(server)
                .map_or(Value::Null, |x| x.state.stable_state())
        };
        let initial_of = |server: &str| match &slot.initial {
            Some(initial) if with_states => initial
                .server(server)
                .map_or(Value::Null, |x| x.state.full_state()),
            _ => Value::Null,
        };
        match &slot.origin {
            Origin::Task(task) => {
                let golden = self
                    .judge
                    .golden(&self.sandbox, task, self.clock)
                    .map_err(|e| SessionError::Internal(e.to_string()))?;
                let verdicts = self
                    .judge
                    .judge(&self.sandbox, task, self.clock, live)
                    .map_err(|e| SessionError::Internal(e.to_string()))?;
                Ok(verdicts
                    .into_iter()
                    .map(|v| {
                        let config = task.world_state.get(&v.server);
                        let mut fx = ServerEffects::of_verdict(v, config);
                        if with_states {
                            fx.initial_state = initial_of(&fx.server);
                            fx.result_state = state_of(live, &fx.server);
                            fx.golden_state = golden
                                .iter()
                                .find(|g| g.server == fx.server)
                                .map_or(Value::Null, tb_eval::judge::Golden::stable_state);
                        }
                        fx
                    })
                    .collect())
            }
            Origin::Proxy(options) => {
                let mut golden = self.proxy_session(&options.configs)?;
                let mut out = Vec::new();
                for ((server, config), g) in options.configs.iter().zip(golden.servers.iter_mut()) {
                    for (tool, params) in golden_calls(config) {
                        // As the reference's geteffects: a failing golden call is ignored.
                        let _ = g.call(&tool, &params);
                    }
                    let golden_state = g.state.stable_state();
                    let golden_hash = tb_sandbox::state::hash_stable(&golden_state);
                    let result_state = state_of(live, server);
                    let result_hash = tb_sandbox::state::hash_stable(&result_state);
                    let diff = deep_diff(&result_state, &golden_state);
                    out.push(ServerEffects {
                        server: server.clone(),
                        passed: result_hash == golden_hash,
                        result_hash,
                        golden_hash,
                        diff,
                        initial_state: initial_of(server),
                        result_state: if with_states {
                            result_state
                        } else {
                            Value::Null
                        },
                        golden_state: if with_states {
                            golden_state
                        } else {
                            Value::Null
                        },
                        rubrics: config.get("rubrics").cloned().unwrap_or(Value::Null),
                        rubrics_yesno: config.get("rubrics_yesno").cloned(),
                        reference: None,
                    });
                }
                Ok(out)
            }
        }
    }
}

/// A remote session's effects: for a task session its backend's verdicts with the task's
/// rubrics; for a proxy session each server's own effects object, as the reference's proxy.
async fn remote_effects(
    slot: &Slot,
    remote: &mut dyn EpisodeSession,
) -> Result<Vec<ServerEffects>, SessionError> {
    Ok(match &slot.origin {
        Origin::Task(task) => match remote.verdicts() {
            Some(verdicts) => verdicts.await,
            None => Err("the session gives no state verdicts".to_string()),
        }
        .map_err(SessionError::Backend)?
        .into_iter()
        .map(|v| {
            let config = task.world_state.get(&v.server);
            ServerEffects::of_verdict(v, config)
        })
        .collect(),
        Origin::Proxy(_) => remote
            .server_effects()
            .await
            .map_err(SessionError::Backend)?
            .into_iter()
            .map(|(server, fx)| ServerEffects::of_reference(server, fx))
            .collect(),
    })
}
