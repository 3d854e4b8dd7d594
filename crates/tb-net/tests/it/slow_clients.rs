//! Slow and stalled clients on loopback: a dripped header is closed, a stalled body gets an
//! answer, stalled connections past the cap do not stop `/health`, and past the overflow
//! connections are closed at once. Every loop here is bounded and ends by itself.

use axum::Router;
use axum::body::Body;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use std::net::SocketAddr;
use std::time::Duration;
use tb_net::{BodyError, ServeLimits, read_body};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

async fn echo(body: Body) -> axum::response::Response {
    match read_body(body, 1 << 20, Duration::from_millis(300)).await {
        Ok(b) => (StatusCode::OK, b).into_response(),
        Err(e @ BodyError::Timeout(_)) => {
            (StatusCode::REQUEST_TIMEOUT, e.to_string()).into_response()
        }
        Err(e @ BodyError::TooLarge { .. }) => {
            (StatusCode::PAYLOAD_TOO_LARGE, e.to_string()).into_response()
        }
        Err(e) => (StatusCode::BAD_REQUEST, e.to_string()).into_response(),
    }
}

/// A server with `places` regular and `places` overflow connections, a minute to send a
/// request's head, `busy_header_timeout` when the regular places are taken.
async fn start_capped(
    places: usize,
    busy_header_timeout: Duration,
) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    start(ServeLimits {
        max_connections: places,
        overflow_connections: places,
        header_timeout: Duration::from_mins(1),
        busy_header_timeout,
        ..ServeLimits::default()
    })
    .await
}

/// `n` connections to `addr` that sent the first line of a request and stall.
async fn stall(addr: SocketAddr, n: usize) -> Vec<TcpStream> {
    let mut stalled = Vec::new();
    for _ in 0..n {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(b"GET /health HTTP/1.1\r\n").await.unwrap();
        stalled.push(s);
    }
    stalled
}

async fn start(limits: ServeLimits) -> (SocketAddr, tokio::sync::oneshot::Sender<()>) {
    let app = Router::new()
        .route("/health", get(|| async { "OK" }))
        .route("/echo", post(echo));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    tokio::spawn(tb_net::serve(listener, app, limits, async move {
        let _ = rx.await;
    }));
    (addr, tx)
}

/// Reads until the peer closes or `limit` passes; `(bytes, closed)`.
async fn read_all(s: &mut TcpStream, limit: Duration) -> (Vec<u8>, bool) {
    let mut out = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        match tokio::time::timeout_at(deadline, s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return (out, true),
            Ok(Ok(n)) => out.extend_from_slice(&buf[..n]),
            Err(_) => return (out, false),
        }
    }
}

async fn health(addr: SocketAddr) -> Option<String> {
    let mut s = TcpStream::connect(addr).await.ok()?;
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .await
        .ok()?;
    let (bytes, _) = read_all(&mut s, Duration::from_secs(10)).await;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

#[tokio::test]
async fn a_dripped_header_is_closed() {
    let (addr, _stop) = start(ServeLimits {
        header_timeout: Duration::from_millis(300),
        ..ServeLimits::default()
    })
    .await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // One header byte every 50 ms, for at most 20 s: the server must cut it off first.
    let mut closed = false;
    for _ in 0..400 {
        if s.write_all(b"X").await.is_err() {
            closed = true;
            break;
        }
        let mut buf = [0u8; 256];
        match tokio::time::timeout(Duration::from_millis(50), s.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => {
                closed = true;
                break;
            }
            // hyper may answer 408 before closing.
            Ok(Ok(_)) => {}
            Err(_) => {}
        }
    }
    assert!(closed, "the dripped header was never cut off");
}

#[tokio::test]
async fn an_idle_connection_is_closed() {
    let (addr, _stop) = start(ServeLimits {
        header_timeout: Duration::from_millis(300),
        ..ServeLimits::default()
    })
    .await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    let (_, closed) = read_all(&mut s, Duration::from_secs(20)).await;
    assert!(closed, "a connection that never sends a header stays open");
}

#[tokio::test]
async fn a_stalled_body_gets_an_answer() {
    let (addr, _stop) = start(ServeLimits::default()).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(b"POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n0123456789")
        .await
        .unwrap();
    let (bytes, _) = read_all(&mut s, Duration::from_secs(20)).await;
    let text = String::from_utf8_lossy(&bytes);
    // The whole answer; only its date varies.
    insta::with_settings!({filters => vec![(r"date: \w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} GMT", "date: [DATE]")]}, {
        insta::assert_snapshot!(text.replace("\r\n", "\\r\\n\n"), @r"
        HTTP/1.1 408 Request Timeout\r\n
        content-type: text/plain; charset=utf-8\r\n
        content-length: 44\r\n
        date: [DATE]\r\n
        \r\n
        request body not received within 0.3 seconds
        ");
    });
}

#[tokio::test]
async fn health_answers_while_stalled_connections_hold_every_place() {
    let (addr, _stop) = start_capped(4, Duration::from_millis(200)).await;
    // Four stalled connections take every regular place (and keep it: 60 s header timeout).
    let mut stalled = stall(addr, 4).await;
    // Let the server accept them all.
    let mut answered = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if let Some(r) = health(addr).await
            && r.starts_with("HTTP/1.1 200")
        {
            answered = Some(r);
            break;
        }
    }
    let r = answered.expect("/health must answer past the connection cap");
    assert!(r.ends_with("OK"), "{r}");
    // Stalled connections in the overflow are closed after the short header timeout.
    let mut extra = stall(addr, 1).await.pop().unwrap();
    let (_, closed) = read_all(&mut extra, Duration::from_secs(20)).await;
    assert!(closed, "a stalled overflow connection stays open");
    // The regular places are still held by the first four.
    for s in &mut stalled {
        let mut buf = [0u8; 16];
        assert!(
            tokio::time::timeout(Duration::from_millis(10), s.read(&mut buf))
                .await
                .is_err(),
            "a regular connection was dropped"
        );
    }
}

#[tokio::test]
async fn past_the_overflow_connections_are_closed_at_once() {
    let (addr, _stop) = start_capped(2, Duration::from_mins(1)).await;
    let stalled = stall(addr, 4).await;
    // A complete request on a fifth connection: closed without an answer, not queued.
    let mut refused = None;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut s = TcpStream::connect(addr).await.unwrap();
        let _ = s
            .write_all(b"GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            .await;
        let (bytes, closed) = read_all(&mut s, Duration::from_secs(20)).await;
        if closed && bytes.is_empty() {
            refused = Some(());
            break;
        }
    }
    assert!(
        refused.is_some(),
        "a connection past the overflow was served or held"
    );
    // Once the stalled ones go, /health answers again.
    drop(stalled);
    let mut ok = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        if health(addr)
            .await
            .is_some_and(|r| r.starts_with("HTTP/1.1 200"))
        {
            ok = true;
            break;
        }
    }
    assert!(
        ok,
        "/health does not answer after the stalled connections closed"
    );
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused() {
    let (addr, _stop) = start(ServeLimits::default()).await;
    let mut s = TcpStream::connect(addr).await.unwrap();
    s.write_all(
        format!(
            "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            2 << 20
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let (bytes, _) = read_all(&mut s, Duration::from_secs(20)).await;
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
}
