//! `tb view`: serves run records as browsable pages.
//!
//! A local web app on axum: the runs page (tb-metrics' numbers and charts per run and per
//! domain), a tasks x attempts grid, each attempt in full at a stable URL
//! (`/runs/{run}/attempts/{line}`, the record's line in its file), and two runs compared task by
//! task. The pages' CSS and script are embedded in the binary; every text from a record is
//! escaped (the script renders it with `textContent`), and every reply carries a
//! Content-Security-Policy that allows only the server's own script and style. The files are
//! re-read as they grow (`store`), so the pages follow a run that is still being written.

#![warn(missing_docs)]

pub mod api;
pub mod model;
pub mod pages;
pub mod store;

use axum::Router;
use axum::extract::{FromRequestParts, Path as UrlPath, Query, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use model::{Snapshot, Views};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use tb_metrics::cost::PriceTable;

/// Errors of this crate.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    /// A file could not be read.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// The address could not be bound.
    #[error("cannot listen on {addr}: {message}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        message: String,
    },
}

/// What `tb view` serves.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The run files, in the order given (a run's number in URLs is its index here).
    pub files: Vec<PathBuf>,
    /// Prices for cost per success and per dependable task.
    pub prices: Option<PriceTable>,
    /// Answer requests for any `Host` (the server listens beyond the loopback interface).
    /// Otherwise only `localhost`, `127.0.0.1` and `[::1]` are answered, so that a web page
    /// that rebinds its name to 127.0.0.1 cannot read the runs.
    pub any_host: bool,
}

/// The Content-Security-Policy of every reply: the server's own script and style only.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

pub(crate) const CSS: &str = include_str!("../assets/view.css");
const JS: &str = include_str!("../assets/view.js");

type Shared = Arc<Views>;

/// The app's routes.
pub fn router(opts: Options) -> Router {
    let any_host = opts.any_host;
    let state: Shared = Arc::new(Views::new(opts));
    Router::new()
        .route("/", get(runs_page))
        .route("/runs/{run}/tasks", get(tasks_page))
        .route("/runs/{run}/attempts/{line}", get(attempt_page))
        .route("/compare/{a}/{b}", get(compare_page))
        .route("/compare/{a}/{b}/task", get(pair_page))
        .route("/api/state", get(api_state))
        .route("/api/runs", get(api_runs))
        .route("/api/runs/{run}/tasks", get(api_tasks))
        .route("/api/runs/{run}/attempts/{line}", get(api_attempt))
        .route("/api/compare/{a}/{b}", get(api_compare))
        .route("/assets/view.css", get(|| async { asset(CSS, "text/css") }))
        .route(
            "/assets/view.js",
            get(|| async { asset(JS, "text/javascript") }),
        )
        .fallback(|| async { not_found("no such page") })
        .layer(axum::middleware::map_response(secure))
        .layer(axum::middleware::from_fn_with_state(any_host, host_check))
        .with_state(state)
}

/// Serves `opts` on `listener` until `shutdown` resolves (tb-net: connection cap, header
/// timeout).
pub async fn serve(
    listener: tokio::net::TcpListener,
    opts: Options,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    tb_net::serve(
        listener,
        router(opts),
        tb_net::ServeLimits::default(),
        shutdown,
    )
    .await
}

/// Which attempts [`report_attempts`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AttemptSet {
    /// Attempts that did not pass (failures, rubric failures, system errors).
    Failed,
    /// Every attempt.
    All,
}

/// The attempt pages of `runs` as one HTML section with its own style (no script), for a
/// self-contained report: per run, a list of the attempts linking to their sections, each
/// attempt as on its `tb view` page. Returns the section and the number of attempts in it.
pub fn report_attempts(
    runs: Vec<tb_metrics::Run>,
    prices: Option<&PriceTable>,
    set: AttemptSet,
) -> (String, usize) {
    pages::report_attempts(runs, prices, set)
}

/// Whether a `Host` header names the loopback interface.
pub fn loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, _)| h)
    };
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1"
}

async fn host_check(
    State(any_host): State<bool>,
    req: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let ok = any_host
        || req
            .headers()
            .get(header::HOST)
            .and_then(|h| h.to_str().ok())
            .is_some_and(loopback_host);
    if ok {
        next.run(req).await
    } else {
        (
            StatusCode::MISDIRECTED_REQUEST,
            "tb view answers only requests for localhost, 127.0.0.1 or [::1] (start it with --host to serve other names)",
        )
            .into_response()
    }
}

async fn secure(mut r: Response) -> Response {
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn asset(body: &'static str, ty: &'static str) -> Response {
    ([(header::CONTENT_TYPE, ty)], body).into_response()
}

fn not_found(what: &str) -> Response {
    (
        StatusCode::NOT_FOUND,
        Html(pages::error_page("Not found", what)),
    )
        .into_response()
}

fn json(v: &serde_json::Value) -> Response {
    ([(header::CONTENT_TYPE, "application/json")], v.to_string()).into_response()
}

async fn snapshot(s: &Shared) -> Arc<Snapshot> {
    let s = s.clone();
    tokio::task::spawn_blocking(move || s.snapshot())
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))
}

async fn runs_page(State(s): State<Shared>) -> Response {
    Html(pages::runs_page(&*snapshot(&s).await)).into_response()
}

/// Where a page's path points, checked against the snapshot (else the not-found page).
trait Locate: Sized {
    /// The path's parameters.
    type Path: serde::de::DeserializeOwned + Send;

    /// What `path` points at in `snap`, or what the not-found page says.
    fn locate(snap: &Snapshot, path: Self::Path) -> Result<Self, String>;
}

/// A located `L` and the snapshot it was found in.
struct Found<L> {
    snap: Arc<Snapshot>,
    at: L,
}

impl<L: Locate> FromRequestParts<Shared> for Found<L> {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, s: &Shared) -> Result<Self, Response> {
        let UrlPath(path) = UrlPath::<L::Path>::from_request_parts(parts, s)
            .await
            .map_err(IntoResponse::into_response)?;
        let snap = snapshot(s).await;
        let at = L::locate(&snap, path).map_err(|what| not_found(&what))?;
        Ok(Found { snap, at })
    }
}

/// A run that exists (`{run}`).
struct Run(usize);

impl Locate for Run {
    type Path = usize;

    fn locate(snap: &Snapshot, run: usize) -> Result<Self, String> {
        (run < snap.runs.len())
            .then_some(Run(run))
            .ok_or_else(|| format!("there is no run {run}"))
    }
}

/// A record that exists (`{run}/{line}`): its run and its index in the run.
struct Record {
    run: usize,
    i: usize,
}

impl Locate for Record {
    type Path = (usize, usize);

    fn locate(snap: &Snapshot, (run, line): (usize, usize)) -> Result<Self, String> {
        snap.attempt(run, line)
            .map(|i| Record { run, i })
            .ok_or_else(|| format!("run {run} has no record at line {line}"))
    }
}

/// Two runs that exist (`{a}/{b}`).
struct RunPair(usize, usize);

impl Locate for RunPair {
    type Path = (usize, usize);

    fn locate(snap: &Snapshot, (a, b): (usize, usize)) -> Result<Self, String> {
        if a >= snap.runs.len() || b >= snap.runs.len() {
            return Err("compare needs two runs that exist".into());
        }
        Ok(RunPair(a, b))
    }
}

async fn tasks_page(f: Found<Run>) -> Html<String> {
    Html(pages::tasks_page(&f.snap, f.at.0))
}

async fn attempt_page(f: Found<Record>) -> Html<String> {
    Html(pages::attempt_page(&f.snap, f.at.run, f.at.i))
}

async fn compare_page(f: Found<RunPair>) -> Html<String> {
    let RunPair(a, b) = f.at;
    Html(pages::compare_page(&f.snap, a, b))
}

async fn pair_page(f: Found<RunPair>, Query(q): Query<HashMap<String, String>>) -> Response {
    let Some(uid) = q.get("uid") else {
        return not_found("which task? (?uid=...)");
    };
    let RunPair(a, b) = f.at;
    Html(pages::pair_page(&f.snap, a, b, uid)).into_response()
}

async fn api_state(State(s): State<Shared>) -> Response {
    json(&api::state(&*snapshot(&s).await))
}

async fn api_runs(State(s): State<Shared>) -> Response {
    json(&api::runs(&*snapshot(&s).await))
}

async fn api_tasks(f: Found<Run>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        f.snap.runs[f.at.0].tasks_json.clone(),
    )
        .into_response()
}

async fn api_attempt(f: Found<Record>) -> Response {
    json(&api::attempt(&f.snap.runs[f.at.run], f.at.i))
}

async fn api_compare(f: Found<RunPair>) -> Response {
    let RunPair(a, b) = f.at;
    json(&api::compare(&f.snap, a, b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts() {
        for h in [
            "localhost",
            "LOCALHOST:80",
            "127.0.0.1",
            "127.0.0.1:8765",
            "[::1]",
            "[::1]:9",
        ] {
            assert!(loopback_host(h), "{h}");
        }
        for h in [
            "evil.example",
            "127.0.0.1.evil.example",
            "localhost.evil:80",
            "[::2]:80",
            "",
            "10.0.0.1",
        ] {
            assert!(!loopback_host(h), "{h}");
        }
    }

    #[test]
    fn query_values_are_percent_encoded() {
        assert_eq!(
            pages::url_enc("a.py:t b&c=d/é"),
            "a.py%3At%20b%26c%3Dd%2F%C3%A9"
        );
    }
}
