//! Servers started ahead of demand: per server, up to `pool` idle servers (started, MCP
//! initialised, tools listed; not yet given a task), and at most `max_concurrency` sessions
//! alive at once. A server serves one session and is then torn down: the reference's servers
//! keep their state in process globals.

use crate::config::ServerSpec;
use crate::error::ExternalError;
use crate::server::{ServerConn, StartOptions};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// Grace a server gets to exit after its stdin closes, before it is killed.
pub const EXIT_GRACE: Duration = Duration::from_secs(2);

/// The pool of one server.
#[derive(Debug)]
pub struct ServerPool {
    spec: ServerSpec,
    opts: Arc<StartOptions>,
    idle: Mutex<Vec<ServerConn>>,
    target_idle: usize,
    starting: AtomicUsize,
    /// Sessions waiting for a start in flight (each claims one).
    waiting: AtomicUsize,
    /// Told when a start in flight ends (its server idle, or failed).
    ready: Notify,
    live: Arc<Semaphore>,
    closed: AtomicBool,
    /// Servers started (for figures).
    pub started: AtomicUsize,
}

/// A server taken from a pool, with its place under the concurrency limit.
#[derive(Debug)]
pub struct Leased {
    /// The server.
    pub conn: ServerConn,
    /// Released when the session ends.
    pub permit: OwnedSemaphorePermit,
}

impl ServerPool {
    /// A pool keeping `target_idle` servers ready, `max_concurrency` sessions at most.
    pub fn new(
        spec: ServerSpec,
        opts: Arc<StartOptions>,
        target_idle: usize,
        max_concurrency: usize,
    ) -> Arc<Self> {
        Arc::new(ServerPool {
            spec,
            opts,
            idle: Mutex::new(Vec::new()),
            target_idle,
            starting: AtomicUsize::new(0),
            waiting: AtomicUsize::new(0),
            ready: Notify::new(),
            live: Arc::new(Semaphore::new(
                max_concurrency.clamp(1, Semaphore::MAX_PERMITS),
            )),
            closed: AtomicBool::new(false),
            started: AtomicUsize::new(0),
        })
    }

    /// The server's spec.
    pub fn spec(&self) -> &ServerSpec {
        &self.spec
    }

    fn take_idle(&self) -> Option<ServerConn> {
        let mut idle = self
            .idle
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        idle.pop()
    }

    /// A server for one session: an idle one when the pool has one that still runs, else one
    /// being started ahead that no other session waits for (it began before a fresh start
    /// would), else a fresh start. Waits while `max_concurrency` sessions are alive.
    pub async fn acquire(self: &Arc<Self>) -> Result<Leased, ExternalError> {
        let permit =
            self.live
                .clone()
                .acquire_owned()
                .await
                .map_err(|_| ExternalError::Server {
                    server: self.spec.name.clone(),
                    what: "start".into(),
                    message: "the pool is closed".into(),
                })?;
        self.refill();
        loop {
            let notified = self.ready.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            while let Some(mut conn) = self.take_idle() {
                if conn.is_alive() {
                    self.refill();
                    return Ok(Leased { conn, permit });
                }
                tracing::warn!(
                    "server `{}`: an idle server exited; starting another",
                    self.spec.name
                );
                tokio::spawn(conn.shutdown(EXIT_GRACE));
            }
            let starting = self.starting.load(Ordering::Acquire);
            let waiting = self.waiting.load(Ordering::Acquire);
            if self.closed.load(Ordering::Acquire) || waiting >= starting {
                break;
            }
            if self
                .waiting
                .compare_exchange(waiting, waiting + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            // bounded: a start ends within its own timeout
            let _ = tokio::time::timeout(self.opts.start_timeout + EXIT_GRACE, notified).await;
            self.waiting.fetch_sub(1, Ordering::AcqRel);
        }
        self.started.fetch_add(1, Ordering::Relaxed);
        let conn = ServerConn::start(&self.spec, &self.opts).await?;
        Ok(Leased { conn, permit })
    }

    /// Starts servers in the background until `target_idle` are idle or starting.
    pub fn refill(self: &Arc<Self>) {
        if self.closed.load(Ordering::Acquire) {
            return;
        }
        loop {
            let idle = self.idle.lock().map_or(0, |v| v.len());
            let starting = self.starting.load(Ordering::Acquire);
            if idle + starting >= self.target_idle {
                return;
            }
            if self
                .starting
                .compare_exchange(starting, starting + 1, Ordering::AcqRel, Ordering::Acquire)
                .is_err()
            {
                continue;
            }
            let pool = self.clone();
            tokio::spawn(async move {
                pool.started.fetch_add(1, Ordering::Relaxed);
                let r = ServerConn::start(&pool.spec, &pool.opts).await;
                let stray = match r {
                    Ok(conn) if !pool.closed.load(Ordering::Acquire) => {
                        // idle before the start counts as over: a waiting session finds it
                        pool.idle
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(conn);
                        None
                    }
                    Ok(conn) => Some(conn),
                    // the attempt that needs it starts its own and reports the failure
                    Err(e) => {
                        tracing::warn!("pre-starting a server: {e}");
                        None
                    }
                };
                // a start that ended after the close is torn down before it counts as over:
                // `close` waits for `starting` to reach zero, and the process may exit right
                // after it returns
                if let Some(conn) = stray {
                    conn.shutdown(EXIT_GRACE).await;
                }
                pool.starting.fetch_sub(1, Ordering::AcqRel);
                pool.ready.notify_waiters();
                // closed meanwhile: take it back out
                if pool.closed.load(Ordering::Acquire) {
                    pool.drain().await;
                }
            });
        }
    }

    async fn drain(&self) {
        let conns: Vec<ServerConn> = std::mem::take(
            &mut *self
                .idle
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        for c in conns {
            c.shutdown(EXIT_GRACE).await;
        }
    }

    /// Stops pre-starting, shuts the idle servers down and waits for starts in flight to end
    /// (bounded by the start timeout).
    pub async fn close(&self) {
        self.closed.store(true, Ordering::Release);
        self.drain().await;
        let deadline = tokio::time::Instant::now() + self.opts.start_timeout + EXIT_GRACE * 2;
        while self.starting.load(Ordering::Acquire) > 0 && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        self.drain().await;
    }
}
