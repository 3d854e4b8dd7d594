//! The viewer in a real browser: headless Chromium driven through chromedriver over the W3C
//! WebDriver protocol (plain HTTP/1.1 and JSON, no client crate). On the golden and do-nothing
//! runs of the bundled example and a run of hostile records: the runs page, a click to the
//! do-nothing run's tasks, the grid filtered to failures, a click to a failed attempt (its
//! diff row and signature), `n` to the next failure, a compare link, and the hostile attempt
//! rendered as text (no alert, no injected element). Screenshots of each page are saved under
//! `target/tb-view-screenshots/` for review.
//!
//! Needs `chromium` and `chromedriver` (Debian: `apt-get install chromium chromium-driver`;
//! or `TB_CHROMIUM` and `TB_CHROMEDRIVER`): `#[needs(chromium)]`, ignored with the reason when
//! they were not found at build time outside CI; in CI it runs and fails without them.

use crate::{Server, fixture};
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(30);

/// chromedriver on a free port, killed on drop.
struct Driver {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Driver {
    fn drop(&mut self) {
        // Asked to stop, chromedriver also ends the browsers it started; killed, it would not.
        if let Ok(mut s) = TcpStream::connect(self.addr) {
            let _ = write!(
                s,
                "GET /shutdown HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
            );
            let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
            let _ = s.read(&mut [0u8; 256]);
        }
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(5) {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http(addr: SocketAddr, method: &str, path: &str, body: Option<&Value>) -> Value {
    let mut s = TcpStream::connect(addr).expect("connect to chromedriver");
    s.set_read_timeout(Some(Duration::from_mins(1)))
        .expect("timeout");
    let body = body.map(Value::to_string).unwrap_or_default();
    write!(
        s,
        "{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .expect("write");
    // chromedriver may keep the connection open: read the header, then Content-Length bytes.
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 16 * 1024];
    let head_end = loop {
        if let Some(i) = raw.windows(4).position(|w| w == b"\r\n\r\n") {
            break i + 4;
        }
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "chromedriver closed the connection: {raw:?}");
        raw.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&raw[..head_end]).to_ascii_lowercase();
    let len: usize = head
        .lines()
        .find_map(|l| l.strip_prefix("content-length:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("chromedriver replies with a Content-Length");
    while raw.len() < head_end + len {
        let n = s.read(&mut buf).expect("read");
        assert!(n > 0, "chromedriver closed the connection early");
        raw.extend_from_slice(&buf[..n]);
    }
    let body = &raw[head_end..head_end + len];
    serde_json::from_slice(body)
        .unwrap_or_else(|e| panic!("chromedriver: {e}: {}", String::from_utf8_lossy(body)))
}

struct Session {
    driver: Driver,
    id: String,
    _profile: tempfile::TempDir,
}

impl Session {
    fn start(chromium: &Path, chromedriver: &Path) -> Session {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver starts");
        let driver = Driver {
            child,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
        };
        let t0 = Instant::now();
        while TcpStream::connect(driver.addr).is_err() {
            assert!(t0.elapsed() < WAIT, "chromedriver did not listen");
            std::thread::sleep(Duration::from_millis(50));
        }
        let profile = tempfile::tempdir().expect("a profile folder");
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {
                "binary": chromium,
                "args": [
                    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                    "--no-first-run", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync",
                    "--disable-dev-shm-usage", "--window-size=1400,1000",
                    format!("--user-data-dir={}", profile.path().display()),
                ]
            }
        }}});
        let r = http(driver.addr, "POST", "/session", Some(&caps));
        let id = r["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no session: {r}"))
            .to_string();
        Session {
            driver,
            id,
            _profile: profile,
        }
    }

    fn cmd(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let r = http(
            self.driver.addr,
            method,
            &format!("/session/{}{path}", self.id),
            body.as_ref(),
        );
        r["value"].clone()
    }

    fn ok(&self, method: &str, path: &str, body: Option<Value>) -> Value {
        let v = self.cmd(method, path, body);
        assert!(v.get("error").is_none(), "{method} {path}: {v}");
        v
    }

    fn go(&self, url: &str) {
        self.ok("POST", "/url", Some(json!({"url": url})));
    }

    fn url(&self) -> String {
        self.ok("GET", "/url", None)
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    fn js(&self, script: &str) -> Value {
        self.ok(
            "POST",
            "/execute/sync",
            Some(json!({"script": script, "args": []})),
        )
    }

    fn element(&self, css: &str) -> String {
        let t0 = Instant::now();
        loop {
            let v = self.cmd(
                "POST",
                "/element",
                Some(json!({"using": "css selector", "value": css})),
            );
            if let Some(Value::String(id)) = v.as_object().and_then(|o| o.values().next())
                && v.get("error").is_none()
            {
                return id.clone();
            }
            assert!(t0.elapsed() < WAIT, "no element {css}: {v}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn click(&self, css: &str) {
        let e = self.element(css);
        self.ok("POST", &format!("/element/{e}/click"), Some(json!({})));
    }

    fn text(&self, css: &str) -> String {
        let e = self.element(css);
        self.ok("GET", &format!("/element/{e}/text"), None)
            .as_str()
            .unwrap_or("")
            .to_string()
    }

    fn key(&self, k: &str) {
        self.ok(
            "POST",
            "/actions",
            Some(json!({"actions": [{"type": "key", "id": "kb", "actions": [
                {"type": "keyDown", "value": k}, {"type": "keyUp", "value": k}]}]})),
        );
    }

    fn wait_for(&self, what: &str, script: &str) {
        let t0 = Instant::now();
        while self.js(script) != Value::Bool(true) {
            assert!(t0.elapsed() < WAIT, "timed out waiting for {what}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    fn screenshot(&self, name: &str) {
        let b64 = self.ok("GET", "/screenshot", None);
        let png = base64_decode(b64.as_str().unwrap_or(""));
        assert!(png.starts_with(b"\x89PNG"), "a PNG");
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/tb-view-screenshots");
        std::fs::create_dir_all(&dir).expect("screenshot folder");
        std::fs::write(dir.join(format!("{name}.png")), png).expect("screenshot written");
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        let _ = http(
            self.driver.addr,
            "DELETE",
            &format!("/session/{}", self.id),
            None,
        );
    }
}

fn base64_decode(s: &str) -> Vec<u8> {
    let val = |c: u8| match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    };
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0);
    for v in s.bytes().filter_map(val) {
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push(u8::try_from((acc >> bits) & 0xff).unwrap_or(0));
        }
    }
    out
}

#[tb_test_support::needs(chromium)]
#[test]
fn click_through_the_viewer_in_headless_chromium() {
    tb_test_support::need(tb_test_support::Need::Chromium);
    let found = |env, names| tb_test_support::program(Some(env), names).expect("found by need()");
    let chromium = found(
        "TB_CHROMIUM",
        &["chromium", "chromium-browser", "google-chrome"],
    );
    let chromedriver = found("TB_CHROMEDRIVER", &["chromedriver"]);
    let dir = tempfile::tempdir().expect("tempdir");
    let evil = dir.path().join("hostile.jsonl");
    let rec = crate::hostile::evil_record("hostile.py:t", 0);
    std::fs::write(&evil, format!("{rec}\n")).expect("write");
    let srv = Server::start(&[fixture("golden.jsonl"), fixture("noop.jsonl"), evil]);
    let b = Session::start(&chromium, &chromedriver);

    // Runs page, then the do-nothing run's tasks.
    b.go(&srv.url("/"));
    assert!(b.text("#runs").contains("noop"));
    b.screenshot("runs");
    b.click("#runs a[href='/runs/1/tasks']");
    b.wait_for("the grid", "return document.body.dataset.loaded === 'yes'");
    assert!(b.url().ends_with("/runs/1/tasks"));
    let all = b.js("return document.querySelectorAll('#grid tbody tr').length");
    assert_eq!(all, json!(8));
    b.screenshot("tasks");
    // Filter: tasks with a failed attempt.
    b.click("select[name=status] option[value=fail]");
    b.wait_for(
        "the filter",
        "return location.search.includes('status=fail')",
    );
    let shown = b.js("return [...document.querySelectorAll('#grid tbody tr')].map(r => r.querySelectorAll('.s-fail').length)");
    let shown = shown.as_array().expect("rows");
    assert!(!shown.is_empty() && shown.len() < 8, "{shown:?}");
    assert!(shown.iter().all(|n| n.as_u64() > Some(0)), "{shown:?}");
    assert!(
        b.text("#count")
            .starts_with(&format!("{} of 8 tasks", shown.len()))
    );
    // A failed attempt: its signature and diff row.
    b.click("#grid .cell.s-fail");
    b.wait_for(
        "the attempt page",
        "return document.body.dataset.page === 'attempt'",
    );
    assert_eq!(b.text(".sig"), "no_state_change");
    assert_eq!(
        b.js("return document.querySelectorAll('table.diff tr.d-missing').length > 0"),
        json!(true)
    );
    b.screenshot("attempt");
    // `n`: the next failure.
    let here = b.url();
    let next = b.js("return document.getElementById('next-failure').href");
    b.key("n");
    b.wait_for(
        "the next failure",
        &format!("return location.href === {next}"),
    );
    assert_ne!(b.url(), here);
    assert_eq!(
        b.js("return document.querySelector('section.attempt').dataset.status"),
        json!("fail")
    );
    // Compare: a flipped task, both attempts side by side.
    b.go(&srv.url("/compare/1/0"));
    b.screenshot("compare");
    b.click("#flipped a.pair");
    b.wait_for(
        "the pair page",
        "return document.body.dataset.page === 'pair'",
    );
    assert_eq!(
        b.js("return [...document.querySelectorAll('section.attempt')].map(s => s.dataset.status)"),
        json!(["fail", "pass"])
    );
    b.screenshot("compare-task");
    // Hostile text renders as text.
    b.go(&srv.url("/runs/2/attempts/1"));
    b.wait_for(
        "the hostile attempt",
        "return document.readyState === 'complete'",
    );
    let alert = b.cmd("GET", "/alert/text", None);
    assert_eq!(alert["error"], "no such alert", "an alert opened: {alert}");
    assert_eq!(
        b.js("return [document.scripts.length, document.querySelectorAll('svg[onload], a[href^=\"javascript:\"], style').length]"),
        json!([1, 0])
    );
    assert!(
        b.js("return document.body.innerText.includes('<script>alert(1)</script>')") == json!(true),
        "the hostile text is shown as text"
    );
    b.screenshot("hostile");
}
