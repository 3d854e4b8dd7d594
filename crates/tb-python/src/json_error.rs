//! The error text of CPython 3.11's `json.loads` (its C scanner) on a text it refuses, e.g.
//! `Expecting value: line 1 column 1 (char 0)`: what the reference tells a model whose tool
//! arguments are not JSON.
//!
//! Positions count characters (code points), as Python's do; the line is 1 + the newlines
//! before the position, the column the distance from the last newline before it (1-based).

/// Nesting deeper than this is not followed (CPython would raise `RecursionError` near 1000
/// levels, which is not a `json` error); the text is then taken as valid by this check.
const MAX_DEPTH: usize = 900;

struct Fail {
    msg: &'static str,
    pos: usize,
}

type Scan<T> = Result<T, Fail>;

struct Scanner<'a> {
    s: &'a [char],
}

fn is_ws(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

impl Scanner<'_> {
    fn ws(&self, mut i: usize) -> usize {
        while i < self.s.len() && is_ws(self.s[i]) {
            i += 1;
        }
        i
    }

    fn at(&self, i: usize) -> Option<char> {
        self.s.get(i).copied()
    }

    fn starts(&self, i: usize, word: &str) -> bool {
        let w: Vec<char> = word.chars().collect();
        self.s.get(i..i + w.len()) == Some(&w[..])
    }

    /// A value at `i`: its end, or `Err(None)` where no value starts (the caller's
    /// "Expecting value" at `i`), or a decoding error inside it.
    fn value(&self, i: usize, depth: usize) -> Result<usize, Option<Fail>> {
        let Some(c) = self.at(i) else {
            return Err(None);
        };
        match c {
            '"' => self.string(i + 1).map_err(Some),
            '{' if depth < MAX_DEPTH => self.object(i + 1, depth + 1),
            '[' if depth < MAX_DEPTH => self.array(i + 1, depth + 1),
            '{' | '[' => Ok(self.s.len()),
            'n' if self.starts(i, "null") => Ok(i + 4),
            't' if self.starts(i, "true") => Ok(i + 4),
            'f' if self.starts(i, "false") => Ok(i + 5),
            'N' if self.starts(i, "NaN") => Ok(i + 3),
            'I' if self.starts(i, "Infinity") => Ok(i + 8),
            '-' if self.starts(i, "-Infinity") => Ok(i + 9),
            _ => self.number(i).ok_or(None),
        }
    }

    fn number(&self, start: usize) -> Option<usize> {
        let digit = |i: usize| self.at(i).is_some_and(|c| c.is_ascii_digit());
        let mut i = start;
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('1'..='9') => {
                i += 1;
                while digit(i) {
                    i += 1;
                }
            }
            Some('0') => i += 1,
            _ => return None,
        }
        if self.at(i) == Some('.') && digit(i + 1) {
            i += 2;
            while digit(i) {
                i += 1;
            }
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let e_start = i;
            i += 1;
            if matches!(self.at(i), Some('-' | '+')) {
                i += 1;
            }
            let d0 = i;
            while digit(i) {
                i += 1;
            }
            if i == d0 {
                i = e_start;
            }
        }
        Some(i)
    }

    /// A string whose opening quote is at `i - 1`: the index after its closing quote.
    fn string(&self, i: usize) -> Scan<usize> {
        let begin = i - 1;
        let unterminated = Fail {
            msg: "Unterminated string starting at",
            pos: begin,
        };
        let mut j = i;
        loop {
            let Some(c) = self.at(j) else {
                return Err(unterminated);
            };
            match c {
                '"' => return Ok(j + 1),
                '\\' => {
                    j += 1;
                    let Some(e) = self.at(j) else {
                        return Err(unterminated);
                    };
                    if e == 'u' {
                        j = self.unicode_escape(j)?;
                    } else if matches!(e, '"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't') {
                        j += 1;
                    } else {
                        return Err(Fail {
                            msg: "Invalid \\escape",
                            pos: j - 1,
                        });
                    }
                }
                c if (c as u32) < 0x20 => {
                    return Err(Fail {
                        msg: "Invalid control character at",
                        pos: j,
                    });
                }
                _ => j += 1,
            }
        }
    }

    /// `\uXXXX` with its `u` at `u`: the index after it (and after a low surrogate's escape
    /// that completes a high surrogate).
    fn unicode_escape(&self, u: usize) -> Scan<usize> {
        let bad = |pos| Fail {
            msg: "Invalid \\uXXXX escape",
            pos,
        };
        let hex4 = |at: usize| -> Option<u32> {
            let mut v = 0;
            for k in 0..4 {
                v = v * 16 + self.at(at + k)?.to_digit(16)?;
            }
            Some(v)
        };
        let end = u + 5;
        if end >= self.s.len() {
            return Err(bad(u));
        }
        let c = hex4(u + 1).ok_or(bad(u))?;
        if (0xD800..=0xDBFF).contains(&c)
            && end + 6 < self.s.len()
            && self.at(end) == Some('\\')
            && self.at(end + 1) == Some('u')
        {
            let c2 = hex4(end + 2).ok_or(bad(end + 1))?;
            if (0xDC00..=0xDFFF).contains(&c2) {
                return Ok(end + 6);
            }
        }
        Ok(end)
    }

    fn object(&self, i: usize, depth: usize) -> Result<usize, Option<Fail>> {
        let mut i = self.ws(i);
        if self.at(i) == Some('}') {
            return Ok(i + 1);
        }
        loop {
            if self.at(i) != Some('"') {
                return Err(Some(Fail {
                    msg: "Expecting property name enclosed in double quotes",
                    pos: i,
                }));
            }
            i = self.ws(self.string(i + 1).map_err(Some)?);
            if self.at(i) != Some(':') {
                return Err(Some(Fail {
                    msg: "Expecting ':' delimiter",
                    pos: i,
                }));
            }
            match self.member(self.ws(i + 1), depth, '}')? {
                Next::Close(end) => return Ok(end),
                Next::Item(next) => i = next,
            }
        }
    }

    fn array(&self, i: usize, depth: usize) -> Result<usize, Option<Fail>> {
        let mut i = self.ws(i);
        if self.at(i) == Some(']') {
            return Ok(i + 1);
        }
        loop {
            match self.member(i, depth, ']')? {
                Next::Close(end) => return Ok(end),
                Next::Item(next) => i = next,
            }
        }
    }

    /// A value of an object or array at `i`, then `close` or a `,`.
    fn member(&self, i: usize, depth: usize, close: char) -> Result<Next, Option<Fail>> {
        let i = match self.value(i, depth) {
            Ok(e) => self.ws(e),
            Err(None) => {
                return Err(Some(Fail {
                    msg: "Expecting value",
                    pos: i,
                }));
            }
            Err(e) => return Err(e),
        };
        match self.at(i) {
            Some(',') => Ok(Next::Item(self.ws(i + 1))),
            Some(c) if c == close => Ok(Next::Close(i + 1)),
            _ => Err(Some(Fail {
                msg: "Expecting ',' delimiter",
                pos: i,
            })),
        }
    }
}

/// What follows a member of an object or array.
enum Next {
    /// The closing bracket: the index after it.
    Close(usize),
    /// A comma: the index of the next member.
    Item(usize),
}

fn located(s: &[char], f: &Fail) -> String {
    let before = &s[..f.pos.min(s.len())];
    let line = before.iter().filter(|c| **c == '\n').count() + 1;
    let col = match before.iter().rposition(|c| *c == '\n') {
        Some(nl) => f.pos - nl,
        None => f.pos + 1,
    };
    format!("{}: line {line} column {col} (char {})", f.msg, f.pos)
}

/// The message of the `JSONDecodeError` `json.loads(text)` raises, or `None` when it accepts
/// the text. (CPython accepts what JSON does, plus `NaN`, `Infinity` and `-Infinity`.)
pub fn loads_error(text: &str) -> Option<String> {
    let s: Vec<char> = text.chars().collect();
    if s.first() == Some(&'\u{feff}') {
        return Some(located(
            &s,
            &Fail {
                msg: "Unexpected UTF-8 BOM (decode using utf-8-sig)",
                pos: 0,
            },
        ));
    }
    let sc = Scanner { s: &s };
    let i = sc.ws(0);
    let end = match sc.value(i, 0) {
        Ok(e) => e,
        Err(None) => {
            return Some(located(
                &s,
                &Fail {
                    msg: "Expecting value",
                    pos: i,
                },
            ));
        }
        Err(Some(f)) => return Some(located(&s, &f)),
    };
    let end = sc.ws(end);
    (end != s.len()).then(|| {
        located(
            &s,
            &Fail {
                msg: "Extra data",
                pos: end,
            },
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn texts_of_cpython() {
        // each checked against CPython 3.11's json.loads
        let cases = [
            ("", "Expecting value: line 1 column 1 (char 0)"),
            ("  ", "Expecting value: line 1 column 3 (char 2)"),
            (
                r#"{"table": "users", "$filter": "email eq 'daniel.parker@v"#,
                "Unterminated string starting at: line 1 column 31 (char 30)",
            ),
            (
                "{'table': 'users'}",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            (
                "{\"a\" 1}",
                "Expecting ':' delimiter: line 1 column 6 (char 5)",
            ),
            (
                "{\"a\": 1 \"b\"}",
                "Expecting ',' delimiter: line 1 column 9 (char 8)",
            ),
            (
                "{\"a\": 1,}",
                "Expecting property name enclosed in double quotes: line 1 column 9 (char 8)",
            ),
            ("[1,]", "Expecting value: line 1 column 4 (char 3)"),
            ("[", "Expecting value: line 1 column 2 (char 1)"),
            (
                "{",
                "Expecting property name enclosed in double quotes: line 1 column 2 (char 1)",
            ),
            ("{} x", "Extra data: line 1 column 4 (char 3)"),
            ("01", "Extra data: line 1 column 2 (char 1)"),
            ("nul", "Expecting value: line 1 column 1 (char 0)"),
            (
                "{\n  \"a\": tru\n}",
                "Expecting value: line 2 column 8 (char 9)",
            ),
            ("\"a\\qb\"", "Invalid \\escape: line 1 column 3 (char 2)"),
            (
                "\"\\u12\"",
                "Invalid \\uXXXX escape: line 1 column 3 (char 2)",
            ),
            (
                "\"a\nb\"",
                "Invalid control character at: line 1 column 3 (char 2)",
            ),
            (
                "\"é",
                "Unterminated string starting at: line 1 column 1 (char 0)",
            ),
            (
                "[\"é\" 1]",
                "Expecting ',' delimiter: line 1 column 6 (char 5)",
            ),
            (
                "\u{feff}{}",
                "Unexpected UTF-8 BOM (decode using utf-8-sig): line 1 column 1 (char 0)",
            ),
            ("-", "Expecting value: line 1 column 1 (char 0)"),
            ("1e", "Extra data: line 1 column 2 (char 1)"),
        ];
        for (text, want) in cases {
            assert_eq!(loads_error(text).as_deref(), Some(want), "{text:?}");
        }
        for ok in [
            "{}",
            "[]",
            " {\"a\": [1, 2.5e-3, null, true, \"\\ud83d\\ude00\"]} ",
            "NaN",
            "-Infinity",
            "1E+2",
        ] {
            assert_eq!(loads_error(ok), None, "{ok:?}");
        }
    }

    proptest! {
        /// What serde_json reads, CPython reads too (JSON is a subset of what it accepts);
        /// any text gives an answer without panicking.
        #[test]
        fn json_is_accepted_and_nothing_panics(v in any::<Vec<u8>>(), n in any::<i64>()) {
            let text = String::from_utf8_lossy(&v).to_string();
            let _ = loads_error(&text);
            if serde_json::from_str::<serde_json::Value>(&text).is_ok() {
                prop_assert_eq!(loads_error(&text), None);
            }
            let doc = serde_json::json!({"n": n, "s": text, "l": [n, null, true]}).to_string();
            prop_assert_eq!(loads_error(&doc), None);
            for cut in 0..doc.chars().count() {
                let prefix: String = doc.chars().take(cut).collect();
                prop_assert!(loads_error(&prefix).is_some());
            }
        }
    }
}
