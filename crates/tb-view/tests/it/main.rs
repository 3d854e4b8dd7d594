//! tb-view's tests: the server on a real bound port, read with a plain HTTP/1.1 client; the
//! pages in headless Chromium (`browser`).
//!
//! The fixtures are real runs of the bundled example (`examples/brightside`, 8 tasks x 3
//! attempts) with the golden and the do-nothing agent, written by `tb infer` (see
//! `tests/fixtures/README.md`); hostile and half-written records are built here.

mod browser;
mod hostile;
mod live;
mod report;
mod server;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A fixture file.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A `tb view` server on 127.0.0.1 (any free port), in a thread of its own, stopped on drop.
pub struct Server {
    /// Its address.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    pub fn start(files: &[PathBuf]) -> Server {
        Server::with(tb_view::Options {
            files: files.to_vec(),
            ..Default::default()
        })
    }

    pub fn with(opts: tb_view::Options) -> Server {
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let (atx, arx) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .expect("a runtime");
            rt.block_on(async move {
                let l = tokio::net::TcpListener::bind("127.0.0.1:0")
                    .await
                    .expect("bind");
                atx.send(l.local_addr().expect("addr")).expect("send addr");
                tb_view::serve(l, opts, async {
                    let _ = rx.await;
                })
                .await
                .expect("serve");
            });
        });
        let addr = arx.recv().expect("the server's address");
        Server {
            addr,
            stop: Some(tx),
            thread: Some(thread),
        }
    }

    /// `http://127.0.0.1:port` + `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// GET `path` with `Host: 127.0.0.1`.
    pub fn get(&self, path: &str) -> Reply {
        self.get_host(path, "127.0.0.1")
    }

    /// GET `path` with the given `Host`.
    pub fn get_host(&self, path: &str, host: &str) -> Reply {
        let mut s = TcpStream::connect(self.addr).expect("connect");
        s.set_read_timeout(Some(Duration::from_mins(2)))
            .expect("timeout");
        write!(
            s,
            "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        )
        .expect("write");
        let mut raw = Vec::new();
        s.read_to_end(&mut raw).expect("read");
        let text = String::from_utf8(raw).expect("UTF-8 reply");
        let (head, body) = text.split_once("\r\n\r\n").expect("a header");
        let mut lines = head.lines();
        let status: u16 = lines
            .next()
            .and_then(|l| l.split(' ').nth(1))
            .and_then(|c| c.parse().ok())
            .expect("a status line");
        let headers = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .collect();
        Reply {
            status,
            headers,
            body: body.to_string(),
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A reply.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// Asserts a 200 and gives the reply on (its value is often not needed).
    #[allow(clippy::return_self_not_must_use)]
    pub fn ok(self) -> Reply {
        assert_eq!(self.status, 200, "{}", self.body);
        self
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).expect("a JSON reply")
    }
}
