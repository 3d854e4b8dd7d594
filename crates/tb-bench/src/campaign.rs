//! The campaign figures: offline attempts straight through `attempt_offline`
//! (`offline_campaign_direct_s`), the episode loop against the mock model server
//! (`offline_campaign_s`, feature `mock`) and the campaign against a slow model.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) fn campaign(
    l: &Loaded,
    ds: &tb_dataset::Dataset,
    root: &std::path::Path,
    a: &BenchOptions,
) -> Result<Value> {
    // As `tb infer` runs it: default clock, the `think` agent's instructions, scenario bot
    // instructions, a golden-state cache shared by all attempts; each record is serialized
    // to JSON (counted, not written to disk).
    let clock = Clock::default();
    let mut bot = HashMap::new();
    for t in &l.tasks {
        if !bot.contains_key(&t.scenario) {
            let s = ds.scenario(&t.scenario)?;
            bot.insert(
                t.scenario.clone(),
                s.bot_instructions.clone().unwrap_or_default(),
            );
        }
    }
    let agent_cfg = ds.agent("think").ok();
    let mut provenance = Map::new();
    provenance.insert("tb_version".into(), json!(env!("CARGO_PKG_VERSION")));
    provenance.insert("data_root".into(), json!(root.display().to_string()));
    provenance.insert("agent".into(), json!("golden"));
    let judge = StateJudge::new();
    let env = AttemptEnv {
        sandbox: &l.sandbox,
        judge: &judge,
        clock,
        agent_instructions: agent_cfg.as_ref().map(|c| c.system_instructions.as_str()),
        bot_instructions: &bot,
        provenance: &provenance,
    };
    let repeat = a.campaign_repeat as usize;
    let total = l.tasks.len() * repeat;
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .max(1);
    let next = AtomicUsize::new(0);
    let passed = AtomicUsize::new(0);
    let bytes = AtomicUsize::new(0);
    let t0 = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= total {
                        break;
                    }
                    // Repetition-major, as `tb infer` orders attempts.
                    let (rep, t) = (i / l.tasks.len(), i % l.tasks.len());
                    // rep < campaign_repeat, a u32.
                    let rep = u32::try_from(rep).unwrap_or(u32::MAX);
                    let rec = attempt_offline(&env, OfflineAgent::Golden, &l.tasks[t], rep);
                    if rec.verdict.as_ref().is_some_and(|v| v.passed) {
                        passed.fetch_add(1, Ordering::Relaxed);
                    }
                    let line = serde_json::to_vec(&rec).unwrap_or_default();
                    bytes.fetch_add(line.len() + 1, Ordering::Relaxed);
                }
            });
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    Ok(json!({
        "attempts": total,
        "passed": passed.load(Ordering::Relaxed),
        "threads": threads,
        "record_bytes": bytes.load(Ordering::Relaxed),
        "seconds": secs,
    }))
}

/// A model client for a role of the mock server (Chat Completions, no retries to wait on).
#[cfg(feature = "mock")]
pub(super) fn mock_client(
    server: &tb_mock_model::MockServer,
    role: &str,
    timeout_s: f64,
) -> Result<tb_llm::LlmClient> {
    let mut c = tb_llm::LlmConfig::chat(&server.url(role, tb_mock_model::Api::Chat), "mock");
    c.timeout = timeout_s;
    Ok(tb_llm::LlmClient::new(&c)?)
}

/// The run environments of a golden campaign against the mock model server, one per task: the
/// task's own agent role (`t<i>`) plays its golden calls ([`tb_mock_model::ToolPlayer`]), the
/// server's `user` role is the simulated user and its `judge` role answers "Yes.". Shared by
/// the offline campaign and `latency_campaign`, which differ only in their timeouts. Build it
/// on the runtime that runs the attempts, so the clients share its connection pool.
#[cfg(feature = "mock")]
pub(super) fn golden_mock_envs(
    server: &tb_mock_model::MockServer,
    inp: &GoldenInputs<'_>,
    client_timeout_s: f64,
    message_timeout: Duration,
) -> Result<Vec<std::sync::Arc<tb_eval::run::RunEnv>>> {
    use std::sync::Arc;
    use tb_eval::run::{Dump, Models, RunEnv};
    use tb_mock_model::{ContextUser, Reply, ToolPlayer};
    server.set_script("user", ContextUser);
    server.set_script("judge", |_: &tb_mock_model::MockRequest| {
        Reply::Text("Yes.".into())
    });
    let mut scenarios = HashMap::new();
    for t in inp.tasks {
        if !scenarios.contains_key(&t.scenario) {
            scenarios.insert(t.scenario.clone(), inp.ds.scenario(&t.scenario)?);
        }
    }
    let judge = Arc::new(StateJudge::new());
    let agent = inp.ds.agent("think").ok();
    let user = mock_client(server, "user", client_timeout_s)?;
    let judge_client = mock_client(server, "judge", client_timeout_s)?;
    let mut envs = Vec::with_capacity(inp.golden.len());
    for (i, calls) in inp.golden.iter().enumerate() {
        let role = format!("t{i}");
        server.set_script(
            &role,
            ToolPlayer {
                calls: calls.clone(),
                closing: "Everything you asked for is done. <DONE>".into(),
            },
        );
        envs.push(Arc::new(RunEnv {
            sandbox: inp.sandbox.clone(),
            judge: judge.clone(),
            clock: Clock::default(),
            agent_name: "golden-mock".into(),
            agent: agent.clone(),
            scenarios: scenarios.clone(),
            models: Models {
                agent: Some(mock_client(server, &role, client_timeout_s)?),
                user: Some(user.clone()),
                judge: Some(judge_client.clone()),
                ..Default::default()
            },
            user_can_end: false,
            message_timeout: Some(message_timeout),
            attempt_timeout: None,
            dump: Dump::default(),
            provenance: Map::new(),
        }));
    }
    Ok(envs)
}

/// What [`golden_mock_envs`] reads.
#[cfg(feature = "mock")]
pub(super) struct GoldenInputs<'a> {
    pub(super) tasks: &'a [Task],
    /// Per task, its golden calls in order (every server's).
    pub(super) golden: &'a [Vec<(String, Value)>],
    pub(super) sandbox: &'a std::sync::Arc<LoadedRoot>,
    pub(super) ds: &'a tb_dataset::Dataset,
}

/// The offline campaign through the episode loop: `repeat` x every task, each attempt
/// [`tb_eval::attempt::attempt`] with [`AgentChoice::Model`], whose agent endpoint is the
/// in-process mock model server playing the task's golden calls ([`ToolPlayer`], one role per
/// task), the simulated user ([`ContextUser`]) and the rubric judge ("Yes.") mocked too;
/// `concurrency` attempts in flight on a tokio runtime. One mock server serves every
/// repetition: it keeps request counts, not requests, and reads tool names, not schemas
/// ([`MockOptions::lean`]); it and the clients are set up once, outside the timed part.
///
/// [`ToolPlayer`]: tb_mock_model::ToolPlayer
/// [`ContextUser`]: tb_mock_model::ContextUser
/// [`MockOptions::lean`]: tb_mock_model::MockOptions::lean
/// [`AgentChoice::Model`]: tb_eval::run::AgentChoice::Model
#[cfg(feature = "mock")]
pub(super) fn campaign_llm(
    l: &Loaded,
    ds: &tb_dataset::Dataset,
    a: &BenchOptions,
) -> Result<Value> {
    use std::sync::Arc;
    use tb_eval::attempt::attempt;
    use tb_eval::run::AgentChoice;
    use tb_mock_model::{MockOptions, MockServer};
    let threads = a
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZero::get))
        .max(1);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .enable_all()
        .build()?;
    let tasks: Arc<Vec<Task>> = Arc::new(l.tasks.clone());
    let golden: Vec<Vec<(String, Value)>> = l
        .calls
        .iter()
        .map(|servers| {
            servers
                .iter()
                .flat_map(|(_, c)| c.iter().cloned())
                .collect()
        })
        .collect();
    let repeat = a.campaign_repeat;
    let concurrency = a.concurrency.max(1);
    let (mut timed, mut setup) = (0.0f64, 0.0f64);
    let (mut attempts, mut requests) = (0usize, 0usize);
    let mut tally = Tally::default();
    rt.block_on(async {
        let t_setup = Instant::now();
        let server = MockServer::start_with(MockOptions::campaign()).await?;
        let envs = golden_mock_envs(
            &server,
            &GoldenInputs {
                tasks: &l.tasks,
                golden: &golden,
                sandbox: &l.sandbox,
                ds,
            },
            30.0,
            Duration::from_mins(1),
        )?;
        let envs = Arc::new(envs);
        setup += t_setup.elapsed().as_secs_f64();
        for rep in 0..repeat {
            let t0 = Instant::now();
            let next = Arc::new(AtomicUsize::new(0));
            let mut workers = tokio::task::JoinSet::new();
            for _ in 0..concurrency {
                let (next, envs, tasks) = (next.clone(), envs.clone(), tasks.clone());
                workers.spawn(async move {
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= tasks.len() {
                            break;
                        }
                        let rec = attempt(&envs[i], AgentChoice::Model, &tasks[i], rep).await;
                        let bytes = serde_json::to_vec(&rec).map_or(0, |v| v.len() + 1);
                        out.push((rec, bytes));
                    }
                    out
                });
            }
            while let Some(done) = workers.join_next().await {
                for (rec, _) in done? {
                    attempts += 1;
                    // One agent request per usage entry (the mock reports usage).
                    requests += rec.usage.len();
                    tally.add(&rec);
                }
            }
            timed += t0.elapsed().as_secs_f64();
        }
        Ok::<(), BenchError>(())
    })?;
    Ok(json!({
        "attempts": attempts,
        "passed": tally.passed,
        "system_errors": tally.errors,
        "first_error": tally.first_error,
        "concurrency": concurrency,
        "threads": threads,
        "agent_requests": requests,
        "setup_s": setup,
        "seconds": timed,
    }))
}

/// Without the `mock` feature the shipped `tb` has no mock model server: the figure is
/// skipped (build with `--features mock` to measure it).
#[cfg(not(feature = "mock"))]
pub(super) fn campaign_llm(_: &Loaded, _: &tb_dataset::Dataset, _: &BenchOptions) -> Result<Value> {
    Ok(Value::Null)
}

/// `latency_campaign` (crate::latency_campaign), unless `--latency-repeat 0`.
#[cfg(feature = "mock")]
pub(super) fn latency_figure(
    a: &BenchOptions,
    l: &Loaded,
    ds: &tb_dataset::Dataset,
) -> Result<Option<Value>> {
    Ok(if a.latency_repeat > 0 {
        if !a.json {
            eprintln!("bench: campaign against a slow mock model");
        }
        Some(latency_campaign::run(
            latency_campaign::Inputs {
                tasks: &l.tasks,
                golden: l
                    .calls
                    .iter()
                    .map(|s| s.iter().flat_map(|(_, c)| c.iter().cloned()).collect())
                    .collect(),
                sandbox: l.sandbox.clone(),
                ds,
            },
            &latency_campaign::Options {
                repeat: a.latency_repeat,
                delay: Duration::from_millis(a.latency_delay_ms),
                concurrency: a.latency_concurrency,
                order: a.latency_start_order,
                threads: a.threads.unwrap_or_else(|| {
                    std::thread::available_parallelism().map_or(1, std::num::NonZero::get)
                }),
            },
        )?)
    } else {
        None
    })
}

/// Without the `mock` feature there is no mock model to wait on.
#[cfg(not(feature = "mock"))]
#[allow(clippy::unnecessary_wraps)]
pub(super) fn latency_figure(
    _: &BenchOptions,
    _: &Loaded,
    _: &tb_dataset::Dataset,
) -> Result<Option<Value>> {
    Ok(None)
}

/// The offline campaign straight through `attempt_offline` (`offline_campaign_direct_s`),
/// unless `--campaign-repeat 0`.
pub(super) fn direct_figures(b: &Bench<'_>) -> Result<Measured> {
    let a = b.a;
    let camp = if a.campaign_repeat > 0 {
        b.progress("offline campaign");
        Some(campaign(b.l, b.ds, b.root, a)?)
    } else {
        None
    };
    let lines = camp
        .iter()
        .map(|c| {
            format!(
                "direct campaign: {}/{} attempts passed, {} bytes of records",
                c["passed"], c["attempts"], c["record_bytes"]
            )
        })
        .collect();
    Ok(Measured {
        figures: vec![Figure {
            key: "offline_campaign_direct_s",
            value: camp.as_ref().and_then(|c| c["seconds"].as_f64()),
            unit: "s",
            reference: None,
            target: None,
            note: format!(
                "{} x {} attempts of the golden agent straight through attempt_offline (no model loop) on {} threads",
                b.n_tasks(),
                a.campaign_repeat,
                camp.as_ref()
                    .map_or(0, |c| c["threads"].as_u64().unwrap_or(0))
            ),
        }],
        details: vec![("campaign_direct", camp.unwrap_or(Value::Null))],
        lines,
    })
}

/// The offline campaign through the episode loop and the mock model server
/// (`offline_campaign_s`), unless `--campaign-repeat 0`.
pub(super) fn llm_figures(b: &Bench<'_>) -> Result<Measured> {
    let (a, n_tasks) = (b.a, b.n_tasks());
    let camp_llm = if a.campaign_repeat > 0 {
        b.progress("offline campaign through the episode loop (mock model server)");
        Some(campaign_llm(b.l, b.ds, a)?).filter(|v| !v.is_null())
    } else {
        None
    };
    let lines = camp_llm
        .iter()
        .map(|c| {
            format!(
                "campaign through the episode loop: {}/{} attempts passed, {} system errors",
                c["passed"], c["attempts"], c["system_errors"]
            )
        })
        .collect();
    Ok(Measured {
        figures: vec![Figure {
            key: "offline_campaign_s",
            value: camp_llm.as_ref().and_then(|c| c["seconds"].as_f64()),
            unit: "s",
            reference: None,
            target: Some(target::OFFLINE_CAMPAIGN_S),
            note: camp_llm.as_ref().map_or(if cfg!(feature = "mock") { "skipped (--campaign-repeat 0)" } else { "skipped: this tb was built without the `mock` feature (cargo build --release -p tb-cli --features mock)" }.into(), |c| format!(
                "{} attempts ({n_tasks} x {}) through the episode loop (tb_eval::attempt::attempt, model agent) with the in-process mock model server playing the golden calls, mocked user and judge, {} in flight on {} threads: {} passed, {} system errors, {} agent model requests (mock setup {:.2} s, not counted)",
                c["attempts"], a.campaign_repeat, c["concurrency"], c["threads"], c["passed"],
                c["system_errors"], c["agent_requests"], c["setup_s"].as_f64().unwrap_or(0.0)
            )),
        }],
        details: vec![("campaign", camp_llm.unwrap_or(Value::Null))],
        lines,
    })
}

/// The campaign against a slow model (`latency_campaign_s`).
pub(super) fn latency_figures(b: &Bench<'_>) -> Result<Measured> {
    let (a, n_tasks) = (b.a, b.n_tasks());
    let latency = latency_figure(a, b.l, b.ds)?;
    Ok(Measured {
        figures: vec![Figure {
            key: "latency_campaign_s",
            value: latency.as_ref().and_then(|c| c["seconds"].as_f64()),
            unit: "s",
            reference: None,
            target: latency.as_ref().and_then(|c| c["ideal_s"].as_f64()).map(|i| i * 1.03),
            note: latency.as_ref().map_or("skipped (--latency-repeat 0, or built without the `mock` feature)".into(), |c| format!(
                "{} attempts ({n_tasks} x {}) against a mock model answering after {} s, {} in flight: ideal (model turns x delay / in flight) {:.2} s for {} turns, {:+.2}% over it; harness CPU {:.2} ms per attempt (mock {:.1} s in all); peak RSS {:.0} MiB, peak {} sockets; {} passed, {} system errors; target: ideal + 3%",
                c["attempts"], a.latency_repeat, c["delay_s"], c["concurrency"],
                c["ideal_s"].as_f64().unwrap_or(0.0), c["model_turns"],
                c["over_ideal"].as_f64().unwrap_or(0.0) * 100.0,
                c["harness_cpu_ms_per_attempt"].as_f64().unwrap_or(0.0),
                c["mock_cpu_s"].as_f64().unwrap_or(0.0),
                c["peak_rss_mib"].as_f64().unwrap_or(0.0), c["peak_sockets"],
                c["passed"], c["system_errors"]
            )),
        }],
        details: vec![("latency_campaign", latency.unwrap_or(Value::Null))],
        lines: Vec::new(),
    })
}

/// Attempts' outcomes counted: passed, system errors, and the first system error.
#[cfg(feature = "mock")]
#[derive(Default)]
pub(super) struct Tally {
    pub passed: usize,
    pub errors: usize,
    /// `{uid, error}` of the first system error, null while there is none.
    pub first_error: Value,
}

#[cfg(feature = "mock")]
impl Tally {
    /// Counts one attempt's record.
    pub(super) fn add(&mut self, rec: &tb_core::TrialRecord) {
        if rec.is_system_error {
            self.errors += 1;
            if self.first_error.is_null() {
                self.first_error =
                    json!({"uid": rec.uid, "error": rec.metadata.get("error").cloned()});
            }
        }
        if rec.verdict.as_ref().is_some_and(|v| v.passed) {
            self.passed += 1;
        }
    }

    /// Adds another tally; its first error counts when this one has none.
    pub(super) fn merge(&mut self, other: Tally) {
        self.passed += other.passed;
        self.errors += other.errors;
        if self.first_error.is_null() {
            self.first_error = other.first_error;
        }
    }
}
