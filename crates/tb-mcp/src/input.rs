//! Checks on what clients name and number: session ids, task ids, durations. Every value from
//! a client is bounded before use, and an id is echoed in an error only shortened.

// Client input reaches this module: no panicking index or string slice.
#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use std::time::Duration;

/// The longest session id accepted (a UUID is 36).
pub const MAX_SESSION_ID: usize = 128;
/// The longest task id accepted.
pub const MAX_TASK_ID: usize = 512;
/// The longest duration a client may ask for (a session's call timeout, an idle limit): 30
/// days.
pub const MAX_CLIENT_SECS: f64 = 30.0 * 24.0 * 3600.0;

/// An id as shown in an error: at most 64 characters, control characters escaped.
pub fn shown(id: &str) -> String {
    let mut out: String = id
        .chars()
        .take(64)
        .flat_map(|c| {
            if c.is_control() {
                c.escape_default().collect::<Vec<_>>()
            } else {
                vec![c]
            }
        })
        .collect();
    if id.chars().count() > 64 {
        out.push('…');
    }
    out
}

/// A session id is 1 to [`MAX_SESSION_ID`] ASCII letters, digits or `-_.:@+=`.
pub fn check_session_id(id: &str) -> Result<(), String> {
    if id.is_empty() {
        return Err("session_id is empty".into());
    }
    if id.len() > MAX_SESSION_ID {
        return Err(format!(
            "session_id is {} bytes long; at most {MAX_SESSION_ID} are accepted",
            id.len()
        ));
    }
    if let Some(c) = id
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "-_.:@+=".contains(*c)))
    {
        return Err(format!(
            "session_id `{}` has the character {c:?}; use ASCII letters, digits and -_.:@+=",
            shown(id)
        ));
    }
    Ok(())
}

/// A task id is `file.py:function`, the file a plain name (no directory, no `..`), both made of
/// ASCII letters, digits, `_`, `-` and `.`: it can only name a test-case file inside the data
/// root's `dataset/test_case`.
pub fn check_task_id(id: &str) -> Result<(), String> {
    if id.len() > MAX_TASK_ID {
        return Err(format!(
            "the task id is {} bytes long; at most {MAX_TASK_ID} are accepted",
            id.len()
        ));
    }
    let want = "want `file.py:function`, the file a test-case file name of the data root";
    let Some((file, function)) = id.split_once(':') else {
        return Err(format!("`{}` is not a task id ({want})", shown(id)));
    };
    let plain = |s: &str| {
        !s.is_empty()
            && s.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
    };
    if !plain(file) || file.starts_with('.') || file.contains("..") || !plain(function) {
        return Err(format!("`{}` is not a task id ({want})", shown(id)));
    }
    Ok(())
}

/// A client's number as it was likely written: whole numbers below 10^16 as integers (`-1`),
/// others as JSON writes them (`1e+300`, not 301 digits); `NaN` and `inf` as they are.
pub fn shown_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e16 {
        return format!("{x:.0}");
    }
    serde_json::Number::from_f64(x).map_or_else(|| x.to_string(), |n| n.to_string())
}

/// A duration in seconds from a client: finite, non-negative, at most [`MAX_CLIENT_SECS`].
pub fn client_secs(field: &str, secs: f64) -> Result<Duration, String> {
    if !secs.is_finite() || secs < 0.0 {
        return Err(format!(
            "field `{field}` must be a non-negative number, got {}",
            shown_number(secs)
        ));
    }
    if secs > MAX_CLIENT_SECS {
        return Err(format!(
            "field `{field}` is too large ({} seconds; at most {MAX_CLIENT_SECS} are accepted)",
            shown_number(secs)
        ));
    }
    Duration::try_from_secs_f64(secs).map_err(|e| format!("field `{field}`: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_numbers_are_bounded() {
        assert!(check_session_id("3f2a9c1e-5b7d-4e8f-9a0b-1c2d3e4f5a6b").is_ok());
        assert!(check_session_id("f").is_ok());
        assert!(check_session_id("").is_err());
        assert!(check_session_id(&"a".repeat(129)).is_err());
        for bad in ["a/b", "a b", "é", "a\nb", "../x"] {
            assert!(check_session_id(bad).is_err(), "{bad}");
        }
        assert!(check_task_id("brightside_retail.py:test_bs005_x").is_ok());
        for bad in [
            "/etc/passwd:x",
            "../../etc/passwd:x",
            "a/b.py:x",
            "..py:x",
            ".hidden.py:x",
            "x.py",
            "x.py:",
            "x.py:a:b",
            "x.py:a b",
        ] {
            assert!(check_task_id(bad).is_err(), "{bad}");
        }
        assert_eq!(
            client_secs("t", 1e300),
            Err("field `t` is too large (1e+300 seconds; at most 2592000 are accepted)".into())
        );
        assert_eq!(
            client_secs("t", f64::NEG_INFINITY),
            Err("field `t` must be a non-negative number, got -inf".into())
        );
        assert!(client_secs("t", f64::MAX).is_err());
        assert!(client_secs("t", -1.0).is_err());
        assert!(client_secs("t", f64::NAN).is_err());
        assert_eq!(client_secs("t", 1.5), Ok(Duration::from_millis(1500)));
        assert_eq!(shown(&"x".repeat(100)).chars().count(), 65);
    }
}
