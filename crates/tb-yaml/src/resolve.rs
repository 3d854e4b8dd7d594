//! PyYAML's implicit resolver (YAML 1.1 regexes, checked in PyYAML's order) and the safe
//! constructors for scalars.

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use serde_json::{Number, Value};

/// What a plain (unquoted, untagged) scalar resolves to under PyYAML's resolver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScalarKind {
    /// `tag:yaml.org,2002:null`
    Null,
    /// `tag:yaml.org,2002:bool`
    Bool,
    /// `tag:yaml.org,2002:int`
    Int,
    /// `tag:yaml.org,2002:float`
    Float,
    /// `tag:yaml.org,2002:timestamp`
    Timestamp,
    /// `tag:yaml.org,2002:merge` (`<<`)
    Merge,
    /// `tag:yaml.org,2002:value` (`=`)
    ValueKey,
    /// `tag:yaml.org,2002:str`
    Str,
}

impl ScalarKind {
    /// The full tag.
    pub fn tag(self) -> &'static str {
        match self {
            ScalarKind::Null => "tag:yaml.org,2002:null",
            ScalarKind::Bool => "tag:yaml.org,2002:bool",
            ScalarKind::Int => "tag:yaml.org,2002:int",
            ScalarKind::Float => "tag:yaml.org,2002:float",
            ScalarKind::Timestamp => "tag:yaml.org,2002:timestamp",
            ScalarKind::Merge => "tag:yaml.org,2002:merge",
            ScalarKind::ValueKey => "tag:yaml.org,2002:value",
            ScalarKind::Str => "tag:yaml.org,2002:str",
        }
    }
}

/// Resolve a plain scalar as PyYAML's `Resolver` does: the candidate resolvers are chosen by
/// the first character and tried in registration order (bool, float, int, merge, null,
/// timestamp, value).
pub fn resolve_plain(v: &str) -> ScalarKind {
    if v.is_empty() {
        return ScalarKind::Null;
    }
    if is_bool(v) {
        return ScalarKind::Bool;
    }
    if is_float(v) {
        return ScalarKind::Float;
    }
    if is_int(v) {
        return ScalarKind::Int;
    }
    if v == "<<" {
        return ScalarKind::Merge;
    }
    if matches!(v, "~" | "null" | "Null" | "NULL") {
        return ScalarKind::Null;
    }
    if parse_timestamp(v, true).is_some() {
        return ScalarKind::Timestamp;
    }
    if v == "=" {
        return ScalarKind::ValueKey;
    }
    ScalarKind::Str
}

fn is_bool(v: &str) -> bool {
    matches!(
        v,
        "yes"
            | "Yes"
            | "YES"
            | "no"
            | "No"
            | "NO"
            | "true"
            | "True"
            | "TRUE"
            | "false"
            | "False"
            | "FALSE"
            | "on"
            | "On"
            | "ON"
            | "off"
            | "Off"
            | "OFF"
    )
}

/// A tiny cursor over bytes for the hand-written regexes.
struct Cur<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cur<'a> {
    fn new(s: &'a str) -> Self {
        Cur {
            b: s.as_bytes(),
            i: 0,
        }
    }
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }
    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.i += 1;
            true
        } else {
            false
        }
    }
    fn eat_if(&mut self, f: impl Fn(u8) -> bool) -> bool {
        match self.peek() {
            Some(c) if f(c) => {
                self.i += 1;
                true
            }
            _ => false,
        }
    }
    /// Zero or more.
    fn star(&mut self, f: impl Fn(u8) -> bool) -> usize {
        let s = self.i;
        while self.eat_if(&f) {}
        self.i - s
    }
    fn sign(&mut self) {
        let _ = self.eat(b'-') || self.eat(b'+');
    }
    fn done(&self) -> bool {
        self.i == self.b.len()
    }
    fn rest(&self) -> &'a [u8] {
        self.b.get(self.i..).unwrap_or_default()
    }
}

fn digit(c: u8) -> bool {
    c.is_ascii_digit()
}
fn digit_(c: u8) -> bool {
    c.is_ascii_digit() || c == b'_'
}

/// `(?::[0-5]?[0-9])+` ; returns false if none matched.
fn sexagesimal_groups(c: &mut Cur) -> bool {
    let mut n = 0;
    loop {
        let save = c.i;
        if !c.eat(b':') {
            break;
        }
        match c.rest() {
            [a, b, ..] if (b'0'..=b'5').contains(a) && digit(*b) => c.i += 2,
            [a, ..] if digit(*a) => c.i += 1,
            _ => {
                c.i = save;
                break;
            }
        }
        n += 1;
    }
    n > 0
}

/// `[eE][-+][0-9]+`, optional.
fn opt_exponent(c: &mut Cur) {
    let save = c.i;
    if c.eat_if(|x| x == b'e' || x == b'E')
        && c.eat_if(|x| x == b'-' || x == b'+')
        && c.star(digit) > 0
    {
        return;
    }
    c.i = save;
}

fn is_float(v: &str) -> bool {
    // F1: [-+]?[0-9][0-9_]*\.[0-9_]*([eE][-+][0-9]+)?
    {
        let mut c = Cur::new(v);
        c.sign();
        if c.eat_if(digit) {
            c.star(digit_);
            if c.eat(b'.') {
                c.star(digit_);
                opt_exponent(&mut c);
                if c.done() {
                    return true;
                }
            }
        }
    }
    // F2: \.[0-9][0-9_]*([eE][-+][0-9]+)?
    {
        let mut c = Cur::new(v);
        if c.eat(b'.') && c.eat_if(digit) {
            c.star(digit_);
            opt_exponent(&mut c);
            if c.done() {
                return true;
            }
        }
    }
    // F3: [-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\.[0-9_]*
    {
        let mut c = Cur::new(v);
        c.sign();
        if c.eat_if(digit) {
            c.star(digit_);
            if sexagesimal_groups(&mut c) && c.eat(b'.') {
                c.star(digit_);
                if c.done() {
                    return true;
                }
            }
        }
    }
    // F4: [-+]?\.(inf|Inf|INF) ; F5: \.(nan|NaN|NAN)
    let unsigned = v.strip_prefix(['-', '+']).unwrap_or(v);
    if matches!(unsigned, ".inf" | ".Inf" | ".INF") {
        return true;
    }
    matches!(v, ".nan" | ".NaN" | ".NAN")
}

fn is_int(v: &str) -> bool {
    let mut c = Cur::new(v);
    c.sign();
    let body = c.rest();
    // 0b[0-1_]+
    if let Some(r) = body.strip_prefix(b"0b")
        && !r.is_empty()
        && r.iter().all(|&x| x == b'0' || x == b'1' || x == b'_')
    {
        return true;
    }
    // 0[0-7_]+
    if let Some(r) = body.strip_prefix(b"0")
        && !r.is_empty()
        && r.iter().all(|&x| (b'0'..=b'7').contains(&x) || x == b'_')
    {
        return true;
    }
    // 0 | [1-9][0-9_]*
    if body == b"0" {
        return true;
    }
    if let [first, rest @ ..] = body
        && (b'1'..=b'9').contains(first)
        && rest.iter().all(|&x| digit_(x))
    {
        return true;
    }
    // 0x[0-9a-fA-F_]+
    if let Some(r) = body.strip_prefix(b"0x")
        && !r.is_empty()
        && r.iter().all(|&x| x.is_ascii_hexdigit() || x == b'_')
    {
        return true;
    }
    // [1-9][0-9_]*(:[0-5]?[0-9])+
    if c.eat_if(|x| (b'1'..=b'9').contains(&x)) {
        c.star(digit_);
        if sexagesimal_groups(&mut c) && c.done() {
            return true;
        }
    }
    false
}

/// Parsed timestamp parts.
#[derive(Debug, PartialEq, Eq)]
struct Ts {
    year: u32,
    month: u32,
    day: u32,
    time: Option<Time>,
}

/// hour, minute, second, fraction digits, zone
type Time = (u32, u32, u32, Option<String>, Option<Tz>);

#[derive(Debug, PartialEq, Eq)]
enum Tz {
    Utc,
    Offset(bool, u32, u32),
}

/// With `strict` the resolver's regex is used (a date-only value needs 2-digit month and
/// day); otherwise the constructor's (1 or 2 digits everywhere).
fn parse_timestamp(v: &str, strict: bool) -> Option<Ts> {
    let b = v.as_bytes();
    let mut c = Cur::new(v);
    let num = |c: &mut Cur, min: usize, max: usize| -> Option<u32> {
        let s = c.i;
        while c.i - s < max && c.eat_if(digit) {}
        if c.i - s < min {
            return None;
        }
        std::str::from_utf8(b.get(s..c.i)?).ok()?.parse().ok()
    };
    let year = num(&mut c, 4, 4)?;
    if !c.eat(b'-') {
        return None;
    }
    let m_start = c.i;
    let month = num(&mut c, 1, 2)?;
    let m_len = c.i - m_start;
    if !c.eat(b'-') {
        return None;
    }
    let d_start = c.i;
    let day = num(&mut c, 1, 2)?;
    let d_len = c.i - d_start;
    if c.done() {
        if strict && (m_len != 2 || d_len != 2) {
            return None;
        }
        return Some(Ts {
            year,
            month,
            day,
            time: None,
        });
    }
    // (?:[Tt]|[ \t]+)
    if !(c.eat(b'T') || c.eat(b't')) && c.star(|x| x == b' ' || x == b'\t') == 0 {
        return None;
    }
    let hour = num(&mut c, 1, 2)?;
    if !c.eat(b':') {
        return None;
    }
    let minute = num(&mut c, 2, 2)?;
    if !c.eat(b':') {
        return None;
    }
    let second = num(&mut c, 2, 2)?;
    let mut fraction = None;
    if c.eat(b'.') {
        let s = c.i;
        c.star(digit);
        fraction = Some(String::from_utf8_lossy(b.get(s..c.i).unwrap_or_default()).into_owned());
    }
    let mut tz = None;
    if !c.done() {
        c.star(|x| x == b' ' || x == b'\t');
        if c.eat(b'Z') {
            tz = Some(Tz::Utc);
        } else {
            let neg = if c.eat(b'-') {
                true
            } else if c.eat(b'+') {
                false
            } else {
                return None;
            };
            let h = num(&mut c, 1, 2)?;
            let mut m = 0;
            if c.eat(b':') {
                m = num(&mut c, 2, 2)?;
            }
            tz = Some(Tz::Offset(neg, h, m));
        }
    }
    if !c.done() {
        return None;
    }
    Some(Ts {
        year,
        month,
        day,
        time: Some((hour, minute, second, fraction, tz)),
    })
}

/// `date.isoformat()` / `datetime.isoformat()` of what PyYAML constructs.
fn timestamp_iso(v: &str) -> Result<String, String> {
    let ts = parse_timestamp(v, false).ok_or_else(|| format!("invalid timestamp {v:?}"))?;
    // Python's `date(year, month, day)`: years 1..=9999 of the Gregorian calendar.
    let in_range = (1..=9999).contains(&ts.year)
        && i32::try_from(ts.year)
            .is_ok_and(|year| tb_python::datetime::is_valid_date(year, ts.month, ts.day));
    if !in_range {
        return Err(format!("invalid date in timestamp {v:?}"));
    }
    let date = format!("{:04}-{:02}-{:02}", ts.year, ts.month, ts.day);
    let Some((h, mi, s, frac, tz)) = ts.time else {
        return Ok(date);
    };
    if h > 23 || mi > 59 || s > 59 {
        return Err(format!("invalid time in timestamp {v:?}"));
    }
    let mut out = format!("{date}T{h:02}:{mi:02}:{s:02}");
    if let Some(f) = frac {
        let mut f: String = f.chars().take(6).collect();
        while f.len() < 6 {
            f.push('0');
        }
        if f != "000000" {
            out.push('.');
            out.push_str(&f);
        }
    }
    match tz {
        None => {}
        Some(Tz::Utc) => out.push_str("+00:00"),
        Some(Tz::Offset(neg, th, tm)) => {
            let total = th * 60 + tm;
            if total >= 24 * 60 {
                return Err(format!("timezone offset out of range in {v:?}"));
            }
            let sign = if neg && total != 0 { '-' } else { '+' };
            out.push_str(&format!("{sign}{:02}:{:02}", total / 60, total % 60));
        }
    }
    Ok(out)
}

fn int_value(sign: i128, mag: i128, v: &str) -> Result<Value, String> {
    let n = sign * mag;
    if let Ok(i) = i64::try_from(n) {
        Ok(Value::Number(i.into()))
    } else if let Ok(u) = u64::try_from(n) {
        Ok(Value::Number(u.into()))
    } else {
        Err(format!("integer {v:?} does not fit in 64 bits"))
    }
}

fn parse_radix(digits: &str, radix: u32, v: &str) -> Result<i128, String> {
    if digits.is_empty() {
        return Err(format!("invalid integer {v:?}"));
    }
    i128::from_str_radix(digits, radix)
        .map_err(|_| format!("integer {v:?} does not fit in 64 bits"))
}

/// `SafeConstructor.construct_yaml_int`.
fn construct_int(v: &str) -> Result<Value, String> {
    let s: String = v.chars().filter(|&c| c != '_').collect();
    let (sign, body) = if let Some(r) = s.strip_prefix('-') {
        (-1i128, r)
    } else if let Some(r) = s.strip_prefix('+') {
        (1, r)
    } else if s.is_empty() {
        return Err(format!("invalid integer {v:?}"));
    } else {
        (1, s.as_str())
    };
    if body == "0" {
        return Ok(Value::Number(0.into()));
    }
    let mag = if let Some(r) = body.strip_prefix("0b") {
        parse_radix(r, 2, v)?
    } else if let Some(r) = body.strip_prefix("0x") {
        parse_radix(r, 16, v)?
    } else if body.starts_with('0') {
        parse_radix(body, 8, v)?
    } else if body.contains(':') {
        let mut total: i128 = 0;
        for part in body.split(':') {
            let d = parse_radix(part, 10, v)?;
            total = total
                .checked_mul(60)
                .and_then(|t| t.checked_add(d))
                .ok_or_else(|| format!("integer {v:?} does not fit in 64 bits"))?;
        }
        total
    } else {
        // Python's int() also accepts surrounding whitespace and unicode digits; the resolver
        // never produces those, and an explicit `!!int` with them is vanishingly rare.
        parse_radix(body.trim(), 10, v)?
    };
    int_value(sign, mag, v)
}

/// `SafeConstructor.construct_yaml_float`.
fn construct_float(v: &str) -> Result<Value, String> {
    let s: String = v
        .chars()
        .filter(|&c| c != '_')
        .collect::<String>()
        .to_lowercase();
    let (sign, body) = if let Some(r) = s.strip_prefix('-') {
        (-1.0f64, r)
    } else if let Some(r) = s.strip_prefix('+') {
        (1.0, r)
    } else if s.is_empty() {
        return Err(format!("invalid float {v:?}"));
    } else {
        (1.0, s.as_str())
    };
    let f = if body == ".inf" || body == ".nan" {
        f64::NAN
    } else if body.contains(':') {
        let mut total = 0.0f64;
        for part in body.split(':') {
            let d: f64 = parse_py_float(part).ok_or_else(|| format!("invalid float {v:?}"))?;
            total = total * 60.0 + d;
        }
        sign * total
    } else {
        sign * parse_py_float(body).ok_or_else(|| format!("invalid float {v:?}"))?
    };
    match Number::from_f64(f) {
        Some(n) if f.is_finite() => Ok(Value::Number(n)),
        _ => Err(format!("float {v:?} is not finite and has no JSON form")),
    }
}

/// Python `float()` on the strings the float resolver admits (plus `!!float` values).
fn parse_py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    if t.is_empty() {
        return None;
    }
    let lower = t.to_ascii_lowercase();
    let unsigned = lower.trim_start_matches(['+', '-']);
    if matches!(unsigned, "inf" | "infinity" | "nan") {
        return None; // non-finite: no JSON form
    }
    // Rust accepts "1." and ".5" like Python; it rejects "1_0" (already stripped).
    t.parse::<f64>().ok()
}

/// Build the JSON value of a scalar whose (core) tag is `short` (`str`, `int`, ...).
pub(crate) fn construct_scalar(short: &str, v: &str) -> Result<Value, String> {
    match short {
        "str" => Ok(Value::String(v.to_string())),
        "null" => Ok(Value::Null),
        "bool" => match v.to_lowercase().as_str() {
            "yes" | "true" | "on" => Ok(Value::Bool(true)),
            "no" | "false" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("invalid boolean {v:?}")),
        },
        "int" => construct_int(v),
        "float" => construct_float(v),
        "timestamp" => timestamp_iso(v).map(Value::String),
        "merge" | "value" => Err(format!(
            "could not determine a constructor for the tag 'tag:yaml.org,2002:{short}'"
        )),
        "binary" => Err("!!binary values (bytes) have no JSON form".to_string()),
        other => Err(format!(
            "could not determine a constructor for the tag 'tag:yaml.org,2002:{other}' on a scalar"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(resolve_plain("2025-10-01"), ScalarKind::Timestamp);
        assert_eq!(resolve_plain("2025-1-01"), ScalarKind::Str);
        assert_eq!(resolve_plain("2025-10-01T13:00:00Z"), ScalarKind::Timestamp);
        assert_eq!(
            resolve_plain("2025-10-01 13:00:00.5 +02:00"),
            ScalarKind::Timestamp
        );
        assert_eq!(timestamp_iso("2025-10-01").as_deref(), Ok("2025-10-01"));
        assert_eq!(
            timestamp_iso("2025-10-01T13:00:00Z").as_deref(),
            Ok("2025-10-01T13:00:00+00:00")
        );
        assert_eq!(
            timestamp_iso("2025-10-01 1:02:03.5 -5").as_deref(),
            Ok("2025-10-01T01:02:03.500000-05:00")
        );
        assert!(timestamp_iso("2025-02-30").is_err());
    }
}
