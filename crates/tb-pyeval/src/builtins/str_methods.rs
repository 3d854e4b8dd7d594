//! The methods of `str`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// `s.name(*args, **kwargs)` on a `str`.
pub(super) fn call(recv: &Value, name: &str, args: Vec<Value>, kwargs: Kwargs) -> R<Value> {
    match (recv, name) {
        (Value::Str(s), "startswith" | "endswith") => {
            arity(name, &args, 1, 1)?;
            let prefixes: Vec<Value> = match &args[0] {
                Value::Tuple(t) => t.to_vec(),
                other => vec![other.clone()],
            };
            let mut hit = false;
            for p in prefixes {
                let p = match &p {
                    Value::Str(p) => p.clone(),
                    other => {
                        return raise(
                            ExcKind::TypeError,
                            format!(
                                "{name} first arg must be str or a tuple of str, not {}",
                                other.type_name()
                            ),
                        );
                    }
                };
                hit |= if name == "startswith" {
                    s.starts_with(&*p)
                } else {
                    s.ends_with(&*p)
                };
            }
            Ok(Value::Bool(hit))
        }
        (Value::Str(s), "lower") => Ok(Value::str(&s.to_lowercase())),
        (Value::Str(s), "upper") => Ok(Value::str(&s.to_uppercase())),
        (Value::Str(s), "title") => {
            let mut out = String::new();
            let mut prev_alpha = false;
            for c in s.chars() {
                if c.is_alphabetic() {
                    if prev_alpha {
                        out.extend(c.to_lowercase());
                    } else {
                        out.extend(c.to_uppercase());
                    }
                    prev_alpha = true;
                } else {
                    out.push(c);
                    prev_alpha = false;
                }
            }
            Ok(Value::str(&out))
        }
        (Value::Str(s), "capitalize") => {
            let mut chars = s.chars();
            let out = match chars.next() {
                Some(c) => c.to_uppercase().collect::<String>() + &chars.as_str().to_lowercase(),
                None => String::new(),
            };
            Ok(Value::str(&out))
        }
        (Value::Str(s), "strip" | "lstrip" | "rstrip") => {
            arity(name, &args, 0, 1)?;
            let set: Option<Vec<char>> = match args.first() {
                None | Some(Value::None) => None,
                Some(Value::Str(c)) => Some(c.chars().collect()),
                Some(other) => {
                    return raise(
                        ExcKind::TypeError,
                        format!("{name} arg must be None or str, not {}", other.type_name()),
                    );
                }
            };
            let pred = |c: char| match &set {
                Some(cs) => cs.contains(&c),
                None => is_py_space(c),
            };
            let out = match name {
                "strip" => s.trim_matches(pred),
                "lstrip" => s.trim_start_matches(pred),
                _ => s.trim_end_matches(pred),
            };
            Ok(Value::str(out))
        }
        (Value::Str(s), "split") => {
            let sep = args
                .first()
                .or_else(|| kwarg(&kwargs, "sep"))
                .cloned()
                .unwrap_or(Value::None);
            let maxsplit = args
                .get(1)
                .or_else(|| kwarg(&kwargs, "maxsplit"))
                .and_then(as_int)
                .unwrap_or(-1);
            let parts: Vec<Value> = match &sep {
                Value::None => {
                    let words = s.split(is_py_space).filter(|w| !w.is_empty());
                    if maxsplit < 0 {
                        words.map(Value::str).collect()
                    } else {
                        // Rare: split on whitespace with a limit.
                        let mut out = Vec::new();
                        let mut rest = s.trim_start_matches(is_py_space);
                        let mut n = 0;
                        while !rest.is_empty() {
                            if n == maxsplit {
                                out.push(Value::str(rest));
                                break;
                            }
                            let end = rest.find(is_py_space).unwrap_or(rest.len());
                            out.push(Value::str(rest.get(..end).unwrap_or_default()));
                            rest = rest
                                .get(end..)
                                .unwrap_or_default()
                                .trim_start_matches(is_py_space);
                            n += 1;
                        }
                        out
                    }
                }
                Value::Str(sep) => {
                    if sep.is_empty() {
                        return raise(ExcKind::ValueError, "empty separator");
                    }
                    if maxsplit < 0 {
                        s.split(&**sep).map(Value::str).collect()
                    } else {
                        s.splitn(usize::try_from(maxsplit).unwrap_or(0) + 1, &**sep)
                            .map(Value::str)
                            .collect()
                    }
                }
                other => {
                    return raise(
                        ExcKind::TypeError,
                        format!("must be str or None, not {}", other.type_name()),
                    );
                }
            };
            Ok(Value::list(parts))
        }
        (Value::Str(s), "splitlines") => {
            arity("splitlines", &args, 0, 1)?;
            let keep = args
                .first()
                .or_else(|| kwarg(&kwargs, "keepends"))
                .is_some_and(Value::truthy);
            Ok(Value::list(
                splitlines(s, keep).into_iter().map(Value::str).collect(),
            ))
        }
        (Value::Str(s), "join") => {
            arity("join", &args, 1, 1)?;
            let mut out = String::new();
            let room = crate::budget::remaining();
            for (i, it) in iterate(&args[0])?.iter().enumerate() {
                if out.len() > room {
                    crate::budget::fits(out.len())?;
                }
                if i > 0 {
                    out.push_str(s);
                }
                match it {
                    Value::Str(x) => out.push_str(x),
                    other => {
                        return raise(
                            ExcKind::TypeError,
                            format!(
                                "sequence item {i}: expected str instance, {} found",
                                other.type_name()
                            ),
                        );
                    }
                }
            }
            Ok(Value::str(&out))
        }
        (Value::Str(s), "replace") => {
            arity("replace", &args, 2, 3)?;
            let (a, b) = (
                want_str("replace", &args[0])?,
                want_str("replace", &args[1])?,
            );
            let limit = match args.get(2).and_then(as_int) {
                Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => None,
            };
            // The size of the result, before it is built.
            let hits = if a.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(a).count()
            };
            let hits = limit.map_or(hits, |n| hits.min(n));
            crate::budget::fits(s.len().saturating_add(hits.saturating_mul(b.len())))?;
            match limit {
                Some(n) => Ok(Value::str(&s.replacen(a, b, n))),
                None => Ok(Value::str(&s.replace(a, b))),
            }
        }
        (Value::Str(s), "find" | "index" | "count") => {
            arity(name, &args, 1, 1)?;
            let needle = want_str(name, &args[0])?;
            if name == "count" {
                let n = if needle.is_empty() {
                    s.chars().count() + 1
                } else {
                    s.matches(needle).count()
                };
                return Ok(Value::Int(i64::try_from(n).unwrap_or(0)));
            }
            match s.find(needle) {
                Some(byte) => Ok(Value::Int(
                    i64::try_from(s.get(..byte).unwrap_or_default().chars().count()).unwrap_or(0),
                )),
                None if name == "find" => Ok(Value::Int(-1)),
                None => raise(ExcKind::ValueError, "substring not found"),
            }
        }
        (Value::Str(s), "isdigit") => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()),
        )),
        (Value::Str(s), "isalpha") => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(char::is_alphabetic),
        )),
        (Value::Str(s), "format") => str_format(s, &args, &kwargs),
        _ => no_attribute(recv, name),
    }
}

/// Python's `str.isspace` for one character: Unicode white space and the separators
/// `\x1c`..`\x1f`.
pub(super) fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `str.splitlines`: the line boundaries CPython uses (`\n`, `\r`, `\r\n`, `\v`, `\f`,
/// `\x1c`, `\x1d`, `\x1e`, `\x85`, `\u2028`, `\u2029`).
pub(super) fn splitlines(s: &str, keepends: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end_of_break = match c {
            '\r' => match chars.peek() {
                Some(&(j, '\n')) => {
                    chars.next();
                    j + 1
                }
                _ => i + 1,
            },
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        let end = if keepends { end_of_break } else { i };
        out.push(s.get(start..end).unwrap_or_default());
        start = end_of_break;
    }
    if start < s.len() {
        out.push(s.get(start..).unwrap_or_default());
    }
    out
}
