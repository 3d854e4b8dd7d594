//! One redaction mechanism for every string that leaves the process.
//!
//! Every secret the process holds is registered here when it is read: each [`Secret`] (API
//! keys and header values from a config, including the environment variables a config names)
//! registers itself when made, and the userinfo of a configured URL is registered too.
//! [`redact`] replaces each registered secret (and its JSON-escaped form) with `<redacted>`,
//! and the userinfo of any `scheme://user:pass@host` URL with `<redacted>@`. The boundaries
//! call it: the record, errors-sidecar and manifest writers (tb-eval), the console and the log
//! writer ([`RedactingStderr`], tb-cli), and the OpenEnv frames. An endpoint that echoes the
//! key in an error body is thereby never quoted with the key, wherever that text goes.
//!
//! [`Secret`]: crate::config::Secret

use std::borrow::Cow;
use std::sync::RwLock;

/// What a secret is replaced with.
pub const REDACTED: &str = "<redacted>";

/// Shorter strings are not registered (they would match ordinary text).
pub const MIN_SECRET_LEN: usize = 6;

static SECRETS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Registers a secret: from now on [`redact`] replaces it (and its JSON-escaped form). Strings
/// shorter than [`MIN_SECRET_LEN`] are ignored.
pub fn register(secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut forms = vec![secret.to_string()];
    let escaped = serde_json::to_string(secret).unwrap_or_default();
    let escaped = escaped
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .unwrap_or("");
    if escaped != secret && escaped.len() >= MIN_SECRET_LEN {
        forms.push(escaped.to_string());
    }
    let mut g = match SECRETS.write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    for f in forms {
        if !g.contains(&f) {
            g.push(f);
        }
    }
    // Longest first, so a secret containing another is replaced whole.
    g.sort_by_key(|s| std::cmp::Reverse(s.len()));
}

/// Registers the userinfo of a URL (`scheme://user:pass@host/...`), and its password alone.
pub fn register_url(url: &str) {
    if let Some((start, end)) = userinfo_span(url, 0) {
        let info = &url[start..end];
        register(info);
        if let Some((_, pass)) = info.split_once(':') {
            register(pass);
        }
    }
}

/// The byte span of the userinfo (without the `@`) of the first URL at or after `from`.
fn userinfo_span(s: &str, from: usize) -> Option<(usize, usize)> {
    let mut at = from;
    while let Some(i) = s[at..].find("://") {
        let start = at + i + 3;
        let rest = &s[start..];
        let auth_len = rest
            .find(|c: char| {
                matches!(c, '/' | '?' | '#' | '"' | '\'' | '<' | '>' | '`' | '\\')
                    || c.is_whitespace()
            })
            .unwrap_or(rest.len());
        if let Some(a) = rest[..auth_len].rfind('@')
            && a > 0
        {
            return Some((start, start + a));
        }
        at = start;
    }
    None
}

/// `s` with every registered secret and every URL userinfo replaced by `<redacted>`.
pub fn redact(s: &str) -> Cow<'_, str> {
    let mut out: Cow<'_, str> = Cow::Borrowed(s);
    {
        let g = match SECRETS.read() {
            Ok(g) => g,
            Err(p) => p.into_inner(),
        };
        for secret in g.iter() {
            if out.contains(secret.as_str()) {
                out = Cow::Owned(out.replace(secret.as_str(), REDACTED));
            }
        }
    }
    if out.contains("://") && out.contains('@') {
        let mut text = out.into_owned();
        let mut from = 0;
        while let Some((a, b)) = userinfo_span(&text, from) {
            if &text[a..b] == REDACTED {
                from = b;
                continue;
            }
            text.replace_range(a..b, REDACTED);
            from = a + REDACTED.len();
        }
        out = Cow::Owned(text);
    }
    out
}

/// Redacts every string (and object key) inside a JSON value, in place.
pub fn redact_json(v: &mut serde_json::Value) {
    use serde_json::Value;
    match v {
        Value::String(s) => {
            if let Cow::Owned(r) = redact(s) {
                *s = r;
            }
        }
        Value::Array(a) => a.iter_mut().for_each(redact_json),
        Value::Object(m) => {
            let keys: Vec<String> = m.keys().cloned().collect();
            for k in keys {
                if let Cow::Owned(rk) = redact(&k) {
                    if let Some(mut x) = m.remove(&k) {
                        redact_json(&mut x);
                        m.insert(rk, x);
                    }
                } else if let Some(x) = m.get_mut(&k) {
                    redact_json(x);
                }
            }
        }
        _ => {}
    }
}

/// A log writer for `tracing_subscriber` (`.with_writer(RedactingStderr)`): each event is
/// collected and written to stderr redacted, in one write.
#[derive(Debug, Clone, Copy, Default)]
pub struct RedactingStderr;

/// One event's bytes, written redacted to stderr when dropped.
#[derive(Debug, Default)]
pub struct RedactingLine(Vec<u8>);

impl std::io::Write for RedactingLine {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for RedactingLine {
    fn drop(&mut self) {
        use std::io::Write;
        let text = String::from_utf8_lossy(&self.0);
        let _ = std::io::stderr().write_all(redact(&text).as_bytes());
    }
}

impl RedactingStderr {
    /// A writer for one event.
    pub fn line(&self) -> RedactingLine {
        RedactingLine::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_secrets_and_url_userinfo_are_replaced_everywhere() {
        register("sk-redact-test-0f3a9c");
        register("abc");
        let s = "HTTP 401: {\"error\": \"invalid key sk-redact-test-0f3a9c\"} abc";
        assert_eq!(
            redact(s),
            "HTTP 401: {\"error\": \"invalid key <redacted>\"} abc"
        );
        assert!(matches!(redact("nothing here"), Cow::Borrowed(_)));
        assert_eq!(
            redact("bad URL `https://user:p4ss@host:8/v1?x=1` and http://h/a@b"),
            "bad URL `https://<redacted>@host:8/v1?x=1` and http://h/a@b"
        );
        register_url("http://bob:hunter22@example.test/x");
        assert_eq!(redact("pw hunter22"), "pw <redacted>");
        let mut v =
            serde_json::json!({"m": ["x sk-redact-test-0f3a9c y"], "sk-redact-test-0f3a9c": 1});
        redact_json(&mut v);
        assert_eq!(
            v,
            serde_json::json!({"m": ["x <redacted> y"], "<redacted>": 1})
        );
        // The JSON-escaped form of a secret with a quote.
        register("q\"uote-secret");
        assert_eq!(
            redact(r#"{"k": "q\"uote-secret"}"#),
            r#"{"k": "<redacted>"}"#
        );
    }
}
