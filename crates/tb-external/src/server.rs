//! One started tool server: an MCP client (rmcp) on a child process's stdio, on a
//! streamable-http endpoint or on a legacy SSE endpoint ([`crate::sse`]); its tool list; calls
//! with timeouts; shutdown that reaps the process.

use crate::config::{ServerKind, ServerSpec, substitute};
use crate::error::ExternalError;
use crate::sse::{CloseReason, SseOptions, SseTransport};
use rmcp::ServiceExt;
use rmcp::model::{CallToolRequestParams, CallToolResult};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Map, Value};
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio::io::AsyncReadExt;

/// A legacy SSE stream with nothing on it (not even the servers' 15 s pings) for this long is
/// taken as gone (the reference's `sse_read_timeout`).
const SSE_READ_TIMEOUT: Duration = Duration::from_mins(5);

/// Names of the reserved tools: never listed to the agent, never reachable from it.
pub const RESERVED_PREFIX: &str = "__reserved__";

/// How servers are started and called.
#[derive(Debug, Clone)]
pub struct StartOptions {
    /// What `{python}` becomes.
    pub python: String,
    /// Budget of spawn + MCP initialize + tools/list.
    pub start_timeout: Duration,
    /// Budget of `__reserved__init`.
    pub init_timeout: Duration,
    /// Budget of every other call (tools, effects, teardown).
    pub call_timeout: Duration,
}

impl Default for StartOptions {
    fn default() -> Self {
        StartOptions {
            python: "python3".into(),
            start_timeout: Duration::from_mins(1),
            init_timeout: Duration::from_mins(1),
            call_timeout: Duration::from_mins(2),
        }
    }
}

/// The last lines a server wrote on stderr (kept for error messages).
#[derive(Debug, Default, Clone)]
struct StderrTail(Arc<Mutex<VecDeque<String>>>);

const TAIL_LINES: usize = 20;

impl StderrTail {
    fn push(&self, line: String) {
        let mut q = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if q.len() == TAIL_LINES {
            q.pop_front();
        }
        // a line may be huge; keep its start
        let mut line = line;
        if line.len() > 400 {
            let mut cut = 400;
            while !line.is_char_boundary(cut) {
                cut -= 1;
            }
            line.truncate(cut);
            line.push('…');
        }
        q.push_back(line);
    }

    fn text(&self) -> String {
        let q = self
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        q.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// The most of one stderr line kept (bytes); the rest of the line is counted and dropped.
const STDERR_LINE_MAX: usize = 4096;

/// Reads a server's stderr to its end, line by line, handing each line (lossy UTF-8, cut at
/// [`STDERR_LINE_MAX`] bytes with the count of the rest) to `line`. It keeps reading whatever
/// comes (invalid UTF-8, no newline at all), so the server never blocks on a full pipe, and it
/// holds at most one cut line.
async fn drain_stderr<R: tokio::io::AsyncRead + Unpin>(mut r: R, mut line: impl FnMut(String)) {
    let mut buf = vec![0u8; 8192];
    let mut cur: Vec<u8> = Vec::new();
    let mut dropped = 0u64;
    let mut emit = |cur: &mut Vec<u8>, dropped: &mut u64| {
        if *dropped == 0 && cur.last() == Some(&b'\r') {
            cur.pop();
        }
        let mut l = String::from_utf8_lossy(cur).into_owned();
        if *dropped > 0 {
            l.push_str(&format!("… ({} more bytes)", *dropped));
        }
        cur.clear();
        *dropped = 0;
        line(l);
    };
    loop {
        let n = match r.read(&mut buf).await {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => break,
        };
        let mut rest = &buf[..n];
        loop {
            let (part, end) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], Some(i)),
                None => (rest, None),
            };
            let room = STDERR_LINE_MAX.saturating_sub(cur.len()).min(part.len());
            cur.extend_from_slice(&part[..room]);
            dropped += (part.len() - room) as u64;
            match end {
                Some(i) => {
                    emit(&mut cur, &mut dropped);
                    rest = &rest[i + 1..];
                }
                None => break,
            }
        }
    }
    if !cur.is_empty() || dropped > 0 {
        emit(&mut cur, &mut dropped);
    }
}

/// Variables a server process gets from tb's environment: the minimal set (`PATH`, `HOME`,
/// `LANG`, `LANGUAGE`, `LC_*`, `TMPDIR`, and `PYTHONPATH`, where a Python server finds its
/// package) and the names its `pass_env` lists. Nothing else, so
/// model keys and tokens reach a server only when its entry names them.
pub fn server_env(
    pass_env: &[String],
    get: impl Fn(&str) -> Option<std::ffi::OsString>,
    all: impl Iterator<Item = (std::ffi::OsString, std::ffi::OsString)>,
) -> Vec<(std::ffi::OsString, std::ffi::OsString)> {
    const MINIMAL: [&str; 6] = ["PATH", "HOME", "LANG", "LANGUAGE", "TMPDIR", "PYTHONPATH"];
    let mut out: Vec<(std::ffi::OsString, std::ffi::OsString)> = all
        .filter(|(k, _)| k.to_str().is_some_and(|k| k.starts_with("LC_")))
        .collect();
    for k in MINIMAL
        .iter()
        .copied()
        .chain(pass_env.iter().map(String::as_str))
    {
        if let Some(v) = get(k)
            && !out.iter().any(|(n, _)| n == k)
        {
            out.push((k.into(), v));
        }
    }
    out
}

/// A started server, ready for a session.
pub struct ServerConn {
    /// The server's name.
    pub name: String,
    client: RunningService<RoleClient, ()>,
    child: Option<tokio::process::Child>,
    pid: Option<u32>,
    group: ProcessGroup,
    stderr: StderrTail,
    /// Why the transport closed (legacy SSE servers), for error messages.
    closed: Option<CloseReason>,
    /// Set when a stdio server's stdout ends (rmcp's `is_closed` stays false then).
    stdout_end: Option<CloseReason>,
    /// Tools as the server listed them: name -> (description, input schema as given).
    tools: Vec<(String, Value)>,
    /// How long the start took.
    pub started_in: Duration,
    /// A call failed (gone, hung, unreadable): no further calls are sent.
    broken: std::sync::atomic::AtomicBool,
}

impl std::fmt::Debug for ServerConn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConn")
            .field("name", &self.name)
            .field("pid", &self.pid)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

fn which_failed(name: &str, what: &str, message: impl std::fmt::Display) -> ExternalError {
    ExternalError::Server {
        server: name.to_string(),
        what: what.to_string(),
        message: message.to_string(),
    }
}

impl ServerConn {
    /// Starts the server of `spec`: spawns the process (or connects), runs the MCP handshake
    /// and lists the tools, within `opts.start_timeout`. A failure leaves no process behind.
    pub async fn start(spec: &ServerSpec, opts: &StartOptions) -> Result<Self, ExternalError> {
        let t0 = Instant::now();
        match &spec.kind {
            ServerKind::Process {
                command,
                env,
                cwd,
                pass_env,
            } => {
                let argv = command
                    .iter()
                    .map(|c| substitute(c, &opts.python))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| which_failed(&spec.name, "command", e))?;
                let mut cmd = tokio::process::Command::new(&argv[0]);
                cmd.args(&argv[1..])
                    // a minimal environment: never tb's model keys unless the file names them
                    .env_clear()
                    .envs(server_env(
                        pass_env,
                        |k| std::env::var_os(k),
                        std::env::vars_os(),
                    ))
                    .envs(env.iter().map(|(k, v)| (k, v)))
                    // quiet fastmcp's banner and info logs, as the reference does
                    .env(
                        "FASTMCP_LOG_LEVEL",
                        std::env::var("FASTMCP_LOG_LEVEL").unwrap_or_else(|_| "WARNING".into()),
                    )
                    .stdin(std::process::Stdio::piped())
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .kill_on_drop(true);
                // its own process group, so a wrapper's children go with it
                #[cfg(unix)]
                cmd.process_group(0);
                if let Some(d) = cwd {
                    cmd.current_dir(d);
                }
                let mut child = cmd.spawn().map_err(|e| {
                    which_failed(
                        &spec.name,
                        "start",
                        format!("cannot run `{}`: {e}", argv[0]),
                    )
                })?;
                let pid = child.id();
                let stdin = child.stdin.take();
                let stdout_end = CloseReason::default();
                let stdout = child.stdout.take().map(|inner| WatchedStdout {
                    inner,
                    end: stdout_end.clone(),
                    line: 0,
                });
                let stderr_tail = StderrTail::default();
                if let Some(err) = child.stderr.take() {
                    let tail = stderr_tail.clone();
                    let name = spec.name.clone();
                    tokio::spawn(drain_stderr(err, move |l| {
                        tracing::debug!(target: "tb_external::stderr", "{name}: {l}");
                        tail.push(l);
                    }));
                }
                let (Some(stdin), Some(stdout)) = (stdin, stdout) else {
                    kill_and_reap(&mut child, pid).await;
                    return Err(which_failed(&spec.name, "start", "no stdio pipes"));
                };
                let handshake = async {
                    let client =
                        ().serve((stdout, stdin))
                            .await
                            .map_err(|e| format!("MCP initialize: {e}"))?;
                    let tools = client
                        .list_all_tools()
                        .await
                        .map_err(|e| format!("tools/list: {e}"))?;
                    Ok::<_, String>((client, tools))
                };
                let result = tokio::time::timeout(opts.start_timeout, handshake).await;
                let failure = match result {
                    Ok(Ok((client, tools))) => {
                        tracing::info!(
                            "server `{}` (pid {pid:?}) ready in {:.3}s",
                            spec.name,
                            t0.elapsed().as_secs_f64()
                        );
                        return Ok(ServerConn {
                            name: spec.name.clone(),
                            client,
                            child: Some(child),
                            pid,
                            group: ProcessGroup(pid),
                            stderr: stderr_tail,
                            closed: None,
                            stdout_end: Some(stdout_end),
                            tools: tool_entries(&tools),
                            started_in: t0.elapsed(),
                            broken: std::sync::atomic::AtomicBool::default(),
                        });
                    }
                    Ok(Err(e)) => e,
                    Err(_) => format!(
                        "not ready (MCP initialize + tools/list) within {:.1}s",
                        opts.start_timeout.as_secs_f64()
                    ),
                };
                // a process that failed the handshake has usually just exited: take its status
                let exited = tokio::time::timeout(Duration::from_millis(200), child.wait())
                    .await
                    .ok()
                    .and_then(Result::ok);
                kill_and_reap(&mut child, pid).await;
                // give the stderr reader a moment to take the last lines
                tokio::time::sleep(Duration::from_millis(20)).await;
                let mut message = failure;
                if let Some(status) = exited {
                    message.push_str(&format!(" (the process exited: {status})"));
                }
                let tail = stderr_tail.text();
                if !tail.is_empty() {
                    message.push_str(&format!("; its stderr ends with:\n{tail}"));
                }
                Err(which_failed(&spec.name, "start", message))
            }
            ServerKind::StreamableHttp {
                endpoint,
                headers,
                timeout,
            } => {
                let http = http_client(&spec.name, headers)?
                    .timeout(Duration::from_secs_f64(timeout.unwrap_or(60.0)))
                    .build()
                    .map_err(|e| which_failed(&spec.name, "start", e))?;
                let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                    http,
                    rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig::with_uri(
                        endpoint.clone(),
                    ),
                );
                remote_handshake(spec, endpoint, transport, opts.start_timeout, None, t0).await
            }
            ServerKind::Sse {
                url,
                headers,
                timeout,
            } => {
                let timeout = Duration::from_secs_f64(timeout.unwrap_or(60.0));
                // no whole-request timeout: the event stream lives as long as the session; a
                // stream silent for SSE_READ_TIMEOUT (servers ping every 15 s) ends it
                let http = http_client(&spec.name, headers)?
                    .connect_timeout(timeout)
                    .read_timeout(SSE_READ_TIMEOUT)
                    .build()
                    .map_err(|e| which_failed(&spec.name, "start", e))?;
                let sse_opts = SseOptions {
                    endpoint_timeout: timeout.min(opts.start_timeout),
                    post_timeout: timeout,
                    ..SseOptions::default()
                };
                let transport = SseTransport::connect(http, url, &sse_opts)
                    .await
                    .map_err(|e| which_failed(&spec.name, "start", format!("{url}: {e}")))?;
                let reason = transport.close_reason();
                let budget = opts.start_timeout.saturating_sub(t0.elapsed());
                remote_handshake(spec, url, transport, budget, Some(reason), t0).await
            }
        }
    }

    /// The process id (stdio servers).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Whether the process still runs (remote servers: whether the connection is open).
    pub fn is_alive(&mut self) -> bool {
        // an ended SSE stream (or stdout) does not cancel rmcp's service token: ask the
        // transport
        if self.client.is_closed() || self.transport_ended() {
            return false;
        }
        match &mut self.child {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => true,
        }
    }

    /// Every tool the server listed (reserved ones included), with its raw MCP entry.
    pub fn tools(&self) -> &[(String, Value)] {
        &self.tools
    }

    /// The raw MCP entry of a tool.
    pub fn tool(&self, name: &str) -> Option<&Value> {
        self.tools.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// Calls a tool within `budget`. A failure of the server (gone, hung, unreadable reply) is
    /// an `Err`; an error the tool reports is a result.
    pub async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        budget: Duration,
    ) -> Result<CallToolResult, ExternalError> {
        use std::sync::atomic::Ordering;
        if self.broken.load(Ordering::Acquire) {
            return Err(self.failure(
                &format!("tools/call {tool}"),
                "the server failed an earlier call".into(),
            ));
        }
        if let Some(why) = self.stdout_end.as_ref().and_then(CloseReason::get) {
            self.broken.store(true, Ordering::Release);
            return Err(self.failure(&format!("tools/call {tool}"), why));
        }
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(args);
        // A call dropped before it ended (the caller's own timeout, shorter than `budget`)
        // leaves the server busy with it, or hung: no further calls are sent either.
        let pending = MarkBrokenOnDrop(Some(&self.broken));
        let r = tokio::time::timeout(budget, self.client.call_tool(params)).await;
        pending.disarm();
        let r = match r {
            Ok(Ok(r)) => return Ok(r),
            // the transport's own reason (a message over the size limit, stdout closed)
            // says more than rmcp's "Transport closed"
            Ok(Err(e)) => self.failure(
                &format!("tools/call {tool}"),
                self.stdout_end
                    .as_ref()
                    .and_then(CloseReason::get)
                    .unwrap_or_else(|| e.to_string()),
            ),
            Err(_) => self.failure(
                &format!("tools/call {tool}"),
                format!("no reply within {:.1}s", budget.as_secs_f64()),
            ),
        };
        self.broken.store(true, Ordering::Release);
        Err(r)
    }

    /// Whether a call failed (or was given up on), or the connection ended: no call is sent
    /// to a broken server.
    pub fn is_broken(&self) -> bool {
        self.broken.load(std::sync::atomic::Ordering::Acquire) || self.transport_ended()
    }

    /// The SSE stream or the process's stdout ended.
    fn transport_ended(&self) -> bool {
        [&self.closed, &self.stdout_end]
            .into_iter()
            .any(|c| c.as_ref().is_some_and(|c| c.get().is_some()))
    }

    fn failure(&self, what: &str, mut message: String) -> ExternalError {
        let tail = self.stderr.text();
        if !tail.is_empty() && self.child.is_some() {
            message.push_str(&format!("; its stderr ends with:\n{tail}"));
        }
        if let Some(r) = self.closed.as_ref().and_then(CloseReason::get) {
            message.push_str(&format!(" ({r})"));
        }
        which_failed(&self.name, what, message)
    }

    /// Ends the connection, then the process: stdin closed, up to `grace` to exit, then
    /// killed (its process group) and reaped.
    ///
    /// The process group is killed in both cases: whatever the server started in it (a
    /// worker, a wrapper's child) does not outlive the server.
    ///
    /// On Linux, the processes descending from the server when the shutdown begins are killed
    /// too, wherever they are (a child that made its own session or group included).
    pub async fn shutdown(mut self, grace: Duration) {
        let family = descendants(self.pid);
        let _ = tokio::time::timeout(grace, self.client.cancel()).await;
        if let Some(mut child) = self.child.take() {
            match tokio::time::timeout(grace, child.wait()).await {
                Ok(_) => kill_group(self.group.0.take()),
                Err(_) => kill_and_reap(&mut child, self.group.0.take()).await,
            }
        }
        kill_all(&family);
    }
}

/// Marks a server broken when dropped armed (a call abandoned before its end).
struct MarkBrokenOnDrop<'a>(Option<&'a std::sync::atomic::AtomicBool>);

impl MarkBrokenOnDrop<'_> {
    fn disarm(mut self) {
        self.0 = None;
    }
}

impl Drop for MarkBrokenOnDrop<'_> {
    fn drop(&mut self) {
        if let Some(b) = self.0 {
            b.store(true, std::sync::atomic::Ordering::Release);
        }
    }
}

/// A stdio server's stdout, noting in `end` when it ends (EOF or a read error): rmcp's
/// service does not report a closed stdio transport (`is_closed` stays false), so a dead
/// server would otherwise look alive until a call to it fails.
///
/// It also counts the bytes of the message being read: one over rmcp's limit for a line
/// ([`MAX_MESSAGE_BYTES`]) would be dropped by rmcp without a word, and the call it answers
/// would wait out its whole budget. Such a reply ends the transport at once, with the limit
/// as the reason.
struct WatchedStdout {
    inner: tokio::process::ChildStdout,
    end: CloseReason,
    /// Bytes of the current line so far.
    line: usize,
}

/// The largest message a stdio server can send: rmcp's line limit.
pub const MAX_MESSAGE_BYTES: usize = rmcp::transport::async_rw::DEFAULT_MAX_LINE_LENGTH;

impl tokio::io::AsyncRead for WatchedStdout {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let room = buf.remaining() > 0;
        let r = std::pin::Pin::new(&mut this.inner).poll_read(cx, buf);
        match &r {
            std::task::Poll::Ready(Ok(())) if room && buf.filled().len() == before => {
                this.end
                    .set("the server closed its stdout (the process ended?)".into());
            }
            std::task::Poll::Ready(Ok(())) => {
                let new = &buf.filled()[before..];
                let first = new.iter().position(|b| *b == b'\n');
                let ended = first.map_or(0, |f| this.line.saturating_add(f));
                this.line = match new.iter().rposition(|b| *b == b'\n') {
                    Some(i) => new.len() - i - 1,
                    None => this.line.saturating_add(new.len()),
                };
                if this.line.max(ended) >= MAX_MESSAGE_BYTES {
                    let why = format!(
                        "the server sent a message of more than {MAX_MESSAGE_BYTES} bytes ({} MiB), the transport's size limit",
                        MAX_MESSAGE_BYTES >> 20
                    );
                    this.end.set(why.clone());
                    return std::task::Poll::Ready(Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        why,
                    )));
                }
            }
            std::task::Poll::Ready(Err(e)) => this.end.set(format!("reading its stdout: {e}")),
            _ => {}
        }
        r
    }
}

/// Kills the process (and its group) and waits for it.
async fn kill_and_reap(child: &mut tokio::process::Child, pid: Option<u32>) {
    kill_group(pid);
    let _ = child.kill().await;
}

/// Kills the process group we created for a server (`process_group(0)`: its id is the
/// server's pid). It may be gone already.
fn kill_group(pid: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// A process: its pid and its start time (clock ticks since boot), so a pid used again by
/// another process is not taken for it.
type Proc = (i32, u64);

/// `(ppid, start time)` of a process, from `/proc/<pid>/stat`.
#[cfg(target_os = "linux")]
fn proc_stat(pid: i32) -> Option<(i32, u64)> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // after the command's `)`: state ppid pgrp session ... starttime (the 20th field on)
    let rest: Vec<&str> = s.rsplit_once(") ")?.1.split(' ').collect();
    Some((rest.get(1)?.parse().ok()?, rest.get(19)?.parse().ok()?))
}

/// Every process descending from `pid` now (not `pid` itself).
fn descendants(pid: Option<u32>) -> Vec<Proc> {
    #[cfg(target_os = "linux")]
    {
        let Some(root) = pid.and_then(|p| i32::try_from(p).ok()) else {
            return Vec::new();
        };
        let Ok(dir) = std::fs::read_dir("/proc") else {
            return Vec::new();
        };
        let all: Vec<(i32, i32, u64)> = dir
            .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
            .filter_map(|p| proc_stat(p).map(|(pp, t)| (p, pp, t)))
            .collect();
        let mut out: Vec<Proc> = Vec::new();
        let mut parents = vec![root];
        while let Some(parent) = parents.pop() {
            for &(p, pp, t) in &all {
                if pp == parent && p != root && !out.iter().any(|(q, _)| *q == p) {
                    out.push((p, t));
                    parents.push(p);
                }
            }
        }
        out
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        Vec::new()
    }
}

/// Kills the processes of `procs` that still run (the same process: same start time).
fn kill_all(procs: &[Proc]) {
    #[cfg(target_os = "linux")]
    for &(pid, start) in procs {
        if proc_stat(pid).is_some_and(|(_, t)| t == start)
            && let Some(p) = rustix::process::Pid::from_raw(pid)
        {
            let _ = rustix::process::kill_process(p, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = procs;
}

/// A server's process group, killed when dropped: a server dropped without
/// [`ServerConn::shutdown`] (a session abandoned mid-call) has its process killed on drop
/// (`kill_on_drop`), and its group goes with it.
#[derive(Debug, Default)]
struct ProcessGroup(Option<u32>);

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        kill_group(self.0.take());
    }
}

/// A client builder carrying the servers file's headers on every request, following no
/// redirect. Errors name the header, never its value (it may be a secret).
fn http_client(
    server: &str,
    headers: &[(String, String)],
) -> Result<reqwest::ClientBuilder, ExternalError> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut map = reqwest::header::HeaderMap::new();
    for (k, v) in headers {
        let name = reqwest::header::HeaderName::from_bytes(k.as_bytes())
            .map_err(|e| which_failed(server, "headers", format!("header name `{k}`: {e}")))?;
        let mut value = reqwest::header::HeaderValue::from_str(v)
            .map_err(|e| which_failed(server, "headers", format!("header `{k}`: {e}")))?;
        value.set_sensitive(true);
        map.insert(name, value);
    }
    // no redirect is followed: the file's headers (tokens) go to its endpoint only
    Ok(reqwest::Client::builder()
        .default_headers(map)
        .redirect(reqwest::redirect::Policy::none()))
}

/// MCP initialize and tools/list over a remote transport within `budget`.
async fn remote_handshake<T, E, A>(
    spec: &ServerSpec,
    endpoint: &str,
    transport: T,
    budget: Duration,
    closed: Option<CloseReason>,
    t0: Instant,
) -> Result<ServerConn, ExternalError>
where
    T: rmcp::transport::IntoTransport<RoleClient, E, A>,
    E: std::error::Error + Send + Sync + 'static,
{
    let handshake = async {
        let client = ().serve(transport).await.map_err(|e| format!("MCP initialize: {e}"))?;
        let tools = client
            .list_all_tools()
            .await
            .map_err(|e| format!("tools/list: {e}"))?;
        Ok::<_, String>((client, tools))
    };
    let because = |closed: &Option<CloseReason>| {
        closed
            .as_ref()
            .and_then(CloseReason::get)
            .map(|r| format!(" ({r})"))
            .unwrap_or_default()
    };
    match tokio::time::timeout(budget, handshake).await {
        Ok(Ok((client, tools))) => Ok(ServerConn {
            name: spec.name.clone(),
            client,
            child: None,
            pid: None,
            group: ProcessGroup::default(),
            stderr: StderrTail::default(),
            closed,
            stdout_end: None,
            tools: tool_entries(&tools),
            started_in: t0.elapsed(),
            broken: std::sync::atomic::AtomicBool::default(),
        }),
        Ok(Err(e)) => Err(which_failed(
            &spec.name,
            "start",
            format!("{endpoint}: {e}{}", because(&closed)),
        )),
        Err(_) => Err(which_failed(
            &spec.name,
            "start",
            format!(
                "{endpoint}: not ready within {:.1}s{}",
                t0.elapsed().as_secs_f64(),
                because(&closed)
            ),
        )),
    }
}

fn tool_entries(tools: &[rmcp::model::Tool]) -> Vec<(String, Value)> {
    tools
        .iter()
        .filter_map(|t| Some((t.name.to_string(), serde_json::to_value(t).ok()?)))
        .collect()
}

/// The text the agent sees of a tool result: the first content item's text, as the
/// reference's proxy gives it (`content[0].text`). No text content is the server's failure.
pub fn result_text(server: &str, tool: &str, r: &CallToolResult) -> Result<String, ExternalError> {
    match r.content.first() {
        Some(c) => match c.as_text() {
            Some(t) => Ok(t.text.clone()),
            None => Err(which_failed(
                server,
                &format!("tools/call {tool}"),
                "the first content item of the result is not text",
            )),
        },
        None => Err(which_failed(
            server,
            &format!("tools/call {tool}"),
            "the result has no content",
        )),
    }
}

/// The schema the agent sees, as the reference's client shapes it: local `$ref`s inlined,
/// `$defs` dropped, `title` removed at the top and from each property.
pub fn agent_schema(schema: &Value) -> Result<Value, String> {
    fn walk(
        root: &Value,
        node: &Value,
        visiting: &mut Vec<String>,
        depth: usize,
    ) -> Result<Value, String> {
        if depth > 64 {
            return Err("schema nested too deeply".into());
        }
        match node {
            Value::Object(m) => {
                if let Some(Value::String(r)) = m.get("$ref") {
                    if visiting.contains(r) {
                        return Err(format!("circular reference {r}"));
                    }
                    let target = r
                        .strip_prefix('#')
                        .and_then(|p| root.pointer(p))
                        .ok_or_else(|| format!("missing definition for reference {r}"))?;
                    visiting.push(r.clone());
                    let out = walk(root, target, visiting, depth + 1);
                    visiting.pop();
                    return out;
                }
                let mut out = Map::new();
                for (k, v) in m {
                    if k != "$ref" {
                        out.insert(k.clone(), walk(root, v, visiting, depth + 1)?);
                    }
                }
                Ok(Value::Object(out))
            }
            Value::Array(a) => a
                .iter()
                .map(|v| walk(root, v, visiting, depth + 1))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            v => Ok(v.clone()),
        }
    }
    let mut out = walk(schema, schema, &mut Vec::new(), 0)?;
    if let Value::Object(m) = &mut out {
        m.remove("$defs");
        m.remove("title");
        if let Some(Value::Object(props)) = m.get_mut("properties") {
            for v in props.values_mut() {
                if let Value::Object(p) = v {
                    p.remove("title");
                }
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// A reader handing out `chunks` one read at a time. An empty chunk is skipped: a read of
    /// nothing is the end of the stream, which a pipe gives only at its end.
    struct Chunks(std::collections::VecDeque<Vec<u8>>);

    impl tokio::io::AsyncRead for Chunks {
        fn poll_read(
            mut self: std::pin::Pin<&mut Self>,
            _: &mut std::task::Context<'_>,
            buf: &mut tokio::io::ReadBuf<'_>,
        ) -> std::task::Poll<std::io::Result<()>> {
            while self.0.front().is_some_and(Vec::is_empty) {
                self.0.pop_front();
            }
            if let Some(mut c) = self.0.pop_front() {
                let n = c.len().min(buf.remaining());
                buf.put_slice(&c[..n]);
                if n < c.len() {
                    self.0.push_front(c.split_off(n));
                }
            }
            std::task::Poll::Ready(Ok(()))
        }
    }

    fn drained(chunks: Vec<Vec<u8>>) -> Vec<String> {
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let mut out = Vec::new();
        rt.block_on(drain_stderr(Chunks(chunks.into()), |l| out.push(l)));
        out
    }

    /// What the reader must give: the input split at newlines, each line lossy and cut.
    fn expected(all: &[u8]) -> Vec<String> {
        let mut parts: Vec<&[u8]> = all.split(|b| *b == b'\n').collect();
        if parts.last().is_some_and(|p| p.is_empty()) {
            parts.pop();
        }
        parts
            .into_iter()
            .map(|p| {
                let p = match p.strip_suffix(b"\r") {
                    Some(q) if p.len() <= STDERR_LINE_MAX => q,
                    _ => p,
                };
                let keep = p.len().min(STDERR_LINE_MAX);
                let mut l = String::from_utf8_lossy(&p[..keep]).into_owned();
                if p.len() > keep {
                    l.push_str(&format!("… ({} more bytes)", p.len() - keep));
                }
                l
            })
            .collect()
    }

    #[test]
    fn stderr_lines_are_cut_lossy_and_drained_to_the_end() {
        let mut flood = vec![b'e'; 10 << 20];
        flood.extend_from_slice(b"\n\xff\xfe bad \xc3\x28 end\r\nlast without newline");
        let chunks: Vec<Vec<u8>> = flood.chunks(8192).map(<[u8]>::to_vec).collect();
        let lines = drained(chunks);
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            format!("{}… ({} more bytes)", "e".repeat(4096), (10 << 20) - 4096)
        );
        assert_eq!(lines[1], "\u{fffd}\u{fffd} bad \u{fffd}( end");
        assert_eq!(lines[2], "last without newline");
    }

    proptest! {
        #[test]
        fn stderr_reading_matches_splitting_the_whole_stream(
            chunks in proptest::collection::vec(
                proptest::collection::vec(
                    prop_oneof![Just(b'\n'), Just(0xffu8), Just(b'\r'), any::<u8>(), Just(b'a')],
                    0..6000,
                ),
                0..8,
            )
        ) {
            let all: Vec<u8> = chunks.concat();
            prop_assert_eq!(drained(chunks), expected(&all));
        }
    }

    #[test]
    fn servers_get_the_minimal_environment_and_named_variables_only() {
        let tb_env: Vec<(std::ffi::OsString, std::ffi::OsString)> = [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C.UTF-8"),
            ("OPENAI_API_KEY", "sk-1"),
            ("ANTHROPIC_API_KEY", "sk-2"),
            ("MY_TOKEN", "t"),
        ]
        .iter()
        .map(|(k, v)| ((*k).into(), (*v).into()))
        .collect();
        let get = |k: &str| {
            tb_env
                .iter()
                .find(|(n, _)| n.to_str() == Some(k))
                .map(|(_, v)| v.clone())
        };
        let names = |pass: &[String]| {
            let mut v: Vec<String> = server_env(pass, get, tb_env.clone().into_iter())
                .into_iter()
                .map(|(k, _)| k.into_string().unwrap())
                .collect();
            v.sort();
            v
        };
        assert_eq!(names(&[]), ["HOME", "LC_ALL", "PATH"]);
        assert_eq!(
            names(&["MY_TOKEN".into(), "PATH".into(), "UNSET".into()]),
            ["HOME", "LC_ALL", "MY_TOKEN", "PATH"]
        );
    }

    #[test]
    fn schema_shaping() {
        let s = json!({"title": "T", "type": "object", "$defs": {"P": {"type": "string", "title": "P"}},
            "properties": {"a": {"$ref": "#/$defs/P"}, "b": {"type": "integer", "title": "B"}}});
        assert_eq!(
            agent_schema(&s).unwrap(),
            json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}})
        );
        let circular = json!({"$defs": {"A": {"$ref": "#/$defs/A"}}, "properties": {"x": {"$ref": "#/$defs/A"}}});
        assert!(agent_schema(&circular).unwrap_err().contains("circular"));
        assert!(agent_schema(&json!({"properties": {"x": {"$ref": "#/nope"}}})).is_err());
    }
}
