//! `tb mcp-start` (MCP over Streamable HTTP, the admin surface and the Session Proxy API) and
//! `tb mcp-stdio` (one session over stdio).

use anyhow::{Context, Result};
use clap::Args;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use tb_mcp::{HttpOptions, Limits, Registry};

/// Options shared by both commands.
#[derive(Debug, Args)]
pub struct DataArgs {
    /// Data root (a thinkingbox-data checkout, or a folder in its layout); else THINKINGBOX_DATA.
    #[arg(long)]
    data: Option<PathBuf>,
    /// Pin the tools' clock (RFC 3339); default 2025-10-01T13:00:00Z.
    #[arg(long)]
    now: Option<String>,
    /// Longest one tool call may run, in seconds; a slower call is answered with a timeout error.
    #[arg(long, default_value_t = 60.0)]
    call_timeout_secs: f64,
    /// The tool surface sessions list (`--framework` is not used here: no prompts).
    #[command(flatten)]
    shown: crate::common::SurfaceArgs,
    /// External tool servers (servers.yaml): a task session whose servers run from the file
    /// starts its own server processes, torn down when the session ends.
    #[command(flatten)]
    servers: crate::common::ServerArgs,
}

/// `tb mcp-start`.
#[derive(Debug, Args)]
pub struct McpStartArgs {
    /// Interface to bind (loopback by default; anything else needs --token or --insecure).
    #[arg(long, default_value = "127.0.0.1")]
    host: IpAddr,
    /// Port (0 picks a free one).
    #[arg(long, default_value_t = 7111)]
    port: u16,
    #[command(flatten)]
    data: DataArgs,
    /// Bearer token required on the admin and Session Proxy routes (and the shared /mcp).
    /// Without it a random token is generated at start and printed on stderr (and written to
    /// --token-file).
    #[arg(long, env = "TB_MCP_TOKEN", hide_env_values = true)]
    token: Option<String>,
    /// Write the token (given or generated) to this file, readable by its owner only.
    #[arg(long)]
    token_file: Option<PathBuf>,
    /// Serve the admin and Session Proxy routes without a token (any local process can then
    /// list sessions and read golden states).
    #[arg(long, conflicts_with_all = ["token", "token_file"])]
    no_auth: bool,
    /// Allow a non-loopback --host with --no-auth.
    #[arg(long)]
    insecure: bool,
    /// Most HTTP connections open at once (default: from the file-descriptor limit, at most
    /// 4096); a few more are taken with a 1 s header timeout, beyond that they are closed.
    #[arg(long)]
    max_connections: Option<usize>,
    /// Longest a request's header (or body) may take to arrive, in seconds.
    #[arg(long, default_value_t = 10.0)]
    header_timeout_secs: f64,
    /// Most sessions open at once; more are refused with HTTP 503.
    #[arg(long, default_value_t = 10_000)]
    max_sessions: usize,
    /// Remove sessions idle for this many minutes (0: never).
    #[arg(long, default_value_t = 15.0)]
    idle_minutes: f64,
    /// Largest accepted request body, in bytes.
    #[arg(long, default_value_t = 8 << 20)]
    max_body_bytes: usize,
}

/// `tb mcp-stdio`.
#[derive(Debug, Args)]
pub struct McpStdioArgs {
    /// The task, `file.py:function`.
    #[arg(long)]
    task: String,
    #[command(flatten)]
    data: DataArgs,
    /// When the client disconnects, write the session's effects (verdict, diff, states) here.
    #[arg(long)]
    effects_out: Option<PathBuf>,
}

/// The registry, and the external backend its task sessions open first (--servers).
type External = Option<Arc<tb_external::ExternalTools>>;

fn registry(data: &DataArgs, limits: Limits) -> Result<(Arc<Registry>, External)> {
    let root = crate::common::data_root(&data.data)?;
    let surface = data.shown.surface(&root)?;
    let (ds, sandbox) = crate::common::open_with(&root, &surface)?;
    let clock = crate::common::clock(&data.now)?;
    // the sandbox is cheap to clone (its loaded domains are shared)
    let external = data.servers.backend(Arc::new(sandbox.clone()), clock)?;
    let mut registry = Registry::new(ds, sandbox, clock, limits);
    if let Some(e) = &external {
        registry = registry.with_remote(e.clone());
    }
    Ok((Arc::new(registry), external))
}

fn secs(x: f64, what: &str) -> Result<Duration> {
    Duration::try_from_secs_f64(x).with_context(|| format!("{what}: {x} is not a duration"))
}

/// The server runtime.
pub(crate) fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")
}

/// Runs `tb mcp-start` until Ctrl-C.
pub fn start(args: &McpStartArgs) -> Result<ExitCode> {
    if !args.host.is_loopback() && args.no_auth && !args.insecure {
        anyhow::bail!(
            "--host {} is reachable from other machines: drop --no-auth (a token is then required on the admin routes), or pass --insecure",
            args.host
        );
    }
    let token = match (&args.token, args.no_auth) {
        (_, true) => None,
        (Some(t), false) if t.is_empty() => anyhow::bail!("--token (or TB_MCP_TOKEN) is empty"),
        (Some(t), false) => Some(t.clone()),
        (None, false) => Some(tb_mcp::http::generate_token()),
    };
    if let (Some(path), Some(t)) = (&args.token_file, &token) {
        write_private(path, t).with_context(|| format!("writing {}", path.display()))?;
    }
    let limits = Limits {
        max_sessions: args.max_sessions,
        idle_timeout: (args.idle_minutes > 0.0)
            .then(|| secs(args.idle_minutes * 60.0, "--idle-minutes"))
            .transpose()?,
        max_body_bytes: args.max_body_bytes,
        call_timeout: secs(args.data.call_timeout_secs, "--call-timeout-secs")?,
    };
    let (registry, external) = registry(&args.data, limits)?;
    let header_timeout = secs(args.header_timeout_secs, "--header-timeout-secs")?;
    let mut serve = tb_net::ServeLimits {
        header_timeout,
        body_timeout: header_timeout.max(std::time::Duration::from_secs(30)),
        ..tb_net::ServeLimits::default()
    };
    if let Some(n) = args.max_connections {
        serve.max_connections = n.max(1);
    }
    let options = HttpOptions {
        token: token.clone(),
        any_host: !args.host.is_loopback(),
        serve,
    };
    let rt = runtime()?;
    rt.block_on(async {
        let addr = SocketAddr::new(args.host, args.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        let local = listener.local_addr()?;
        match (&token, args.token.is_some(), &args.token_file) {
            (None, _, _) => eprintln!(
                "tb mcp-start: --no-auth: the admin and Session Proxy routes are open to every local process"
            ),
            (Some(_), true, _) => {}
            (Some(_), false, Some(path)) => eprintln!(
                "tb mcp-start: admin token generated and written to {} (send `Authorization: Bearer <token>`)",
                path.display()
            ),
            (Some(t), false, None) => eprintln!(
                "tb mcp-start: admin token (send `Authorization: Bearer <token>`; set TB_MCP_TOKEN or --token to choose it): {t}"
            ),
        }
        eprintln!(
            "tb mcp-start: listening on http://{local}\n  admin: POST /admin/sessions {{\"task\": \"file.py:function\"}} -> {{session, mcp_url}}; GET /admin/sessions/ID/effects; DELETE /admin/sessions/ID\n  agent: MCP Streamable HTTP at the mcp_url (/mcp/ID)\n  reference Session Proxy API: /session_create, /list_tools, /call_tool, /get_effects, /session_destroy, /health"
        );
        if let Some(e) = &external {
            // --server-pool: servers up before the first session asks for one
            e.warm_all();
        }
        let served = tb_mcp::http::serve(listener, registry, options, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await;
        // the sessions are closed by now; the pools' idle servers go too
        if let Some(e) = &external {
            e.shutdown().await;
        }
        served.context("serving")?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Runs `tb mcp-stdio`: one session on stdin/stdout; prints the verdict on stderr at the end.
pub fn stdio(args: &McpStdioArgs) -> Result<ExitCode> {
    let limits = Limits {
        max_sessions: 1,
        idle_timeout: None,
        call_timeout: secs(args.data.call_timeout_secs, "--call-timeout-secs")?,
        ..Limits::default()
    };
    let (registry, external) = registry(&args.data, limits)?;
    let rt = runtime()?;
    let effects = rt.block_on(async {
        let effects = tb_mcp::stdio::serve_stdio(registry.clone(), &args.task).await;
        registry.shutdown(tb_mcp::http::SHUTDOWN_GRACE).await;
        if let Some(e) = &external {
            e.shutdown().await;
        }
        effects
    })?;
    let passed = effects.passed();
    eprintln!(
        "tb mcp-stdio: {} {}",
        args.task,
        if passed {
            "passes the database check"
        } else {
            "fails the database check"
        }
    );
    if let Some(path) = &args.effects_out {
        let json = effects.to_admin_json("stdio", Some(&args.task));
        std::fs::write(path, serde_json::to_string_pretty(&json)?)
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
}

/// Writes `text` to `path`, readable and writable by its owner only (on Unix).
fn write_private(path: &std::path::Path, text: &str) -> std::io::Result<()> {
    use std::io::Write;
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(path)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        f.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    f.write_all(text.as_bytes())?;
    f.write_all(b"\n")
}
