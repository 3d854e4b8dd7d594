//! `tb openenv`: an OpenEnv environment server (`/health`, `/schema`, `/metadata`, `/ready`,
//! `/ws`). The client plays the agent; the server runs the tools, the simulated user and the
//! judges, and ends each episode with reward 1.0 or 0.0.

use anyhow::{Context, Result, bail};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// `tb openenv` arguments.
#[derive(Debug, Args)]
pub struct OpenenvArgs {
    /// Run config YAML: `user_model` and `judge_model` (the agent model is the client's).
    #[arg(short = 'c', long)]
    config: PathBuf,
    /// Data root (a thinkingbox-data checkout, or a folder in its layout); else THINKINGBOX_DATA.
    #[arg(long)]
    data: Option<PathBuf>,
    /// The tasks clients may reset to (YAML list of `file.py:function`); default
    /// `<data>/testlist.yaml`, else the v1 release test list.
    #[arg(long)]
    test_list: Option<PathBuf>,
    /// Interface to bind (loopback by default; OpenEnv has no authentication, so anything
    /// else needs --allow-remote).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 8000)]
    port: u16,
    /// Allow a non-loopback --host.
    #[arg(long)]
    allow_remote: bool,
    /// The agent definition (`dataset/agent/<name>.yaml`) when reset names none.
    #[arg(long, default_value = "think")]
    agent: String,
    /// Most environments (WebSocket sessions) at once; more are refused with CAPACITY_REACHED.
    #[arg(long, default_value_t = 8, env = "OPENENV_TB_MAX_CONCURRENT_ENVS")]
    max_concurrent_envs: usize,
    /// Close sessions idle for this many minutes (0: never).
    #[arg(long, default_value_t = 15.0)]
    idle_minutes: f64,
    /// A folder a reset's `dataset` and `config` may point into (repeatable), besides the
    /// data root and the run config's folder; anything outside them is refused.
    #[arg(long, value_name = "DIR")]
    reset_root: Vec<PathBuf>,
    /// Pin the tools' clock (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    now: Option<String>,
    /// What the model is shown (tool surface, prompts).
    #[command(flatten)]
    shown: crate::common::SurfaceArgs,
    /// External tool servers (servers.yaml): an episode whose task's servers run from the
    /// file starts its own server processes, torn down when the episode ends.
    #[command(flatten)]
    servers: crate::common::ServerArgs,
}

/// Runs `tb openenv` until Ctrl-C.
pub fn run(a: &OpenenvArgs) -> Result<ExitCode> {
    if !a.host.is_loopback() && !a.allow_remote {
        bail!(
            "--host {} is reachable from other machines and OpenEnv has no authentication: pass --allow-remote to serve it anyway",
            a.host
        );
    }
    if a.max_concurrent_envs == 0 {
        bail!("--max-concurrent-envs must be at least 1");
    }
    // A config that does not load is an operator error: say so now, with file and line.
    let cfg = tb_llm::ConfigFile::load(&a.config)?;
    for (role, m) in [
        ("user_model", &cfg.user_model),
        ("judge_model", &cfg.judge_model),
    ] {
        if m.is_none() {
            eprintln!(
                "tb openenv: warning: {} has no `{role}`; /ready answers 503 and resets fail until it does",
                a.config.display()
            );
        }
    }
    let root = crate::common::data_root(&a.data)?;
    let mut options = tb_openenv::Options::new(root, Some(a.config.clone()));
    options.test_list.clone_from(&a.test_list);
    options.agent.clone_from(&a.agent);
    options.reset_roots.clone_from(&a.reset_root);
    options.surface = a.shown.surface.clone();
    options.prompts = a.shown.prompts()?;
    options.clock = crate::common::clock(&a.now)?;
    options.max_envs = a.max_concurrent_envs;
    options.idle_timeout = if a.idle_minutes > 0.0 {
        Some(
            Duration::try_from_secs_f64(a.idle_minutes * 60.0)
                .with_context(|| format!("--idle-minutes {} is not a duration", a.idle_minutes))?,
        )
    } else {
        None
    };
    // --servers: checked now (file and line), the backend built over the loaded sandbox
    let external: Arc<OnceLock<Arc<tb_external::ExternalTools>>> = Arc::default();
    match a.servers.config()? {
        Some(cfg) => {
            let opts = a.servers.options()?;
            let made = external.clone();
            options.tools = Some(tb_openenv::env::ToolsFactory(Arc::new(
                move |sandbox, clock| {
                    let e = made
                        .get_or_init(|| {
                            Arc::new(tb_external::ExternalTools::new(
                                cfg.clone(),
                                sandbox,
                                clock,
                                opts.clone(),
                            ))
                        })
                        .clone();
                    e as Arc<dyn tb_eval::tools::RemoteTools>
                },
            )));
        }
        None if a.servers.prefer == "external" => {
            bail!("--prefer external needs --servers FILE")
        }
        None => {}
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async {
        let addr = SocketAddr::new(a.host, a.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        eprintln!(
            "tb openenv: listening on http://{local} (WebSocket ws://{local}/ws); GET /ready says when data and models are usable"
        );
        let shared = tb_openenv::Shared::new(options);
        let served = tb_openenv::serve(listener, shared, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        if let Some(e) = external.get() {
            e.shutdown().await;
        }
        served.context("serving")?;
        Ok(ExitCode::SUCCESS)
    })
}
