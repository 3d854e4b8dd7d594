//! `tb view`: the run files served as browsable pages (crates/tb-view), until Ctrl-C.

use anyhow::{Context, Result, bail};
use clap::Args;
use std::io::Write as _;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;

/// `tb view` arguments.
#[derive(Debug, Args)]
pub struct ViewArgs {
    /// Trial-record files (JSONL), one run each; a file still being written is followed.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Port to listen on (0: any free port; the address is printed).
    #[arg(long, default_value_t = 8765)]
    pub port: u16,
    /// Address to listen on. Anything but a loopback address makes the runs readable from
    /// other machines.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub host: IpAddr,
    /// Open the runs page in the default browser.
    #[arg(long)]
    pub open: bool,
    /// Price table (YAML or JSON), for cost per success and per dependable task.
    #[arg(long)]
    pub prices: Option<PathBuf>,
}

/// Runs `tb view` until Ctrl-C.
pub fn run(a: &ViewArgs) -> Result<ExitCode> {
    for f in &a.files {
        if !f.is_file() {
            bail!("{}: no such file", f.display());
        }
    }
    let prices = a
        .prices
        .as_deref()
        .map(crate::metrics_cmds::load_prices)
        .transpose()?;
    let opts = tb_view::Options {
        files: a.files.clone(),
        prices,
        any_host: !a.host.is_loopback(),
    };
    let rt = crate::mcp_cmd::runtime()?;
    rt.block_on(async {
        let addr = SocketAddr::new(a.host, a.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let local = listener.local_addr().context("the bound address")?;
        let url = match local.ip() {
            IpAddr::V6(ip) => format!("http://[{ip}]:{}/", local.port()),
            IpAddr::V4(ip) => format!("http://{ip}:{}/", local.port()),
        };
        println!("tb view: {url}  (Ctrl-C stops)");
        let _ = std::io::stdout().flush();
        if a.open {
            open_browser(&url);
        }
        tb_view::serve(listener, opts, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")
    })?;
    Ok(ExitCode::SUCCESS)
}

fn open_browser(url: &str) {
    let cmd = if cfg!(target_os = "macos") {
        "open"
    } else if cfg!(windows) {
        "explorer"
    } else {
        "xdg-open"
    };
    if let Err(e) = std::process::Command::new(cmd)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
    {
        eprintln!("tb view: could not start {cmd} to open {url}: {e}");
    }
}
