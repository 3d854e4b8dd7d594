//! An OpenEnv environment server for ThinkingBox tasks (`tb openenv`).
//!
//! Any OpenEnv client (for example the PyPI `openenv` package's `GenericEnvClient`) connects
//! to `/ws`, resets to a task by its id, and plays the agent: it lists the tools, calls them,
//! and submits messages. The server runs the tools (in-process sandbox sessions), the
//! simulated user and the judges, with the same episode loop as `tb infer`; the final
//! observation carries reward 1.0 or 0.0, and marks infrastructure failures as
//! `reward_type: "system_error"` rather than as a plain 0.
//!
//! - [`protocol`]: frames, actions, error codes, the public schemas;
//! - [`mod@env`]: options, the shared data and config, readiness;
//! - [`episode`]: one environment (reset, step, state, finalization);
//! - [`server`]: the routes, the `/ws` session loop, the session limit, the idle reaper.
//!
//! The contract is `../shared/reference/openenv.md` (OpenEnv 0.4.1 wire format, the
//! ThinkingBox adapter's actions and observations). Differences: tools run in-process (no
//! Session Proxy), reset never reads client-named paths (`dataset`, `config` are ignored and
//! `test_uid` must be in the server's test list), and `/ready` adds `reasons`.
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! let options = tb_openenv::Options::new("examples/brightside", Some("run.yaml".into()));
//! let server = tb_openenv::spawn("127.0.0.1:0".parse().unwrap(), options).await?;
//! server.shared.wait_loaded().await;
//! println!("OpenEnv server at {}", server.url());
//! # Ok(()) }
//! ```

#![warn(missing_docs)]

pub mod env;
pub mod episode;
pub mod protocol;
pub mod server;

pub use env::{Options, Shared};
pub use episode::Environment;
pub use server::{RunningServer, serve, spawn};
