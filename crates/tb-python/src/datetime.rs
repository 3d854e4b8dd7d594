//! Python 3.11 `datetime` behaviours, in one place: `datetime.isoformat()` (also of stored
//! values), `datetime.fromisoformat()` (with the reference's `.replace("Z", "+00:00")` idiom as
//! its own function), `date.fromisoformat()`, `strptime(text, "%Y-%m-%d")`, `strftime`,
//! aware/naive comparison and timedelta arithmetic, and pydantic's JSON dump of a datetime
//! ([`DateTimeParts::dump`]). Errors are the `ValueError`/`OverflowError` texts CPython 3.11
//! gives.
//!
//! The parsers follow CPython's C implementation (`_datetimemodule.c`) step by step; they were
//! checked against Python 3.11 on some 110,000 generated strings. One limit: an offset with
//! microseconds (`+05:30:15.5`) is accepted but [`DateTimeParts`] keeps whole seconds.
//! [`parse_datetime`] is not Python's parser: it reads back the already-validated stored values.

use chrono::{Datelike, NaiveDate, Timelike};
use serde_json::{Map, Value};

use crate::repr::str_repr;

/// A parsed ISO-8601 date-time, kept as its parts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DateTimeParts {
    /// Year.
    pub year: i32,
    /// Month 1-12.
    pub month: u32,
    /// Day 1-31.
    pub day: u32,
    /// Hour.
    pub hour: u32,
    /// Minute.
    pub minute: u32,
    /// Second.
    pub second: u32,
    /// Microseconds.
    pub micro: u32,
    /// Offset from UTC in seconds, or None for a naive datetime.
    pub offset: Option<i32>,
}

impl DateTimeParts {
    /// As pydantic dumps it in JSON mode.
    pub fn dump(&self) -> String {
        // The usual case (a four-digit year, fields in range, naive or UTC) written digit by
        // digit; anything else as below.
        let in_range = (0..=9999).contains(&self.year)
            && self.month < 100
            && self.day < 100
            && self.hour < 100
            && self.minute < 100
            && self.second < 100
            && self.micro < 1_000_000;
        if !in_range || !matches!(self.offset, None | Some(0)) {
            return self.dump_formatted();
        }
        let mut out = String::with_capacity(27);
        let mut digits = |n: u32, width: u32| {
            let mut div = 10u32.pow(width - 1);
            while div > 0 {
                out.push(char::from(b'0' + u8::try_from(n / div % 10).unwrap_or(0)));
                div /= 10;
            }
        };
        digits(self.year.unsigned_abs(), 4);
        digits(self.month, 2);
        digits(self.day, 2);
        digits(self.hour, 2);
        digits(self.minute, 2);
        digits(self.second, 2);
        if self.micro != 0 {
            digits(self.micro, 6);
        }
        // Separators go in afterwards: `YYYY-MM-DDTHH:MM:SS[.ffffff]`.
        for (at, c) in [(4, '-'), (7, '-'), (10, 'T'), (13, ':'), (16, ':')] {
            out.insert(at, c);
        }
        if self.micro != 0 {
            out.insert(19, '.');
        }
        if self.offset == Some(0) {
            out.push('Z');
        }
        out
    }

    fn dump_formatted(&self) -> String {
        let mut s = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        );
        if self.micro != 0 {
            s.push_str(&format!(".{:06}", self.micro));
        }
        match self.offset {
            None => {}
            Some(0) => s.push('Z'),
            Some(off) => {
                let sign = if off < 0 { '-' } else { '+' };
                let a = off.abs();
                s.push_str(&format!("{sign}{:02}:{:02}", a / 3600, (a % 3600) / 60));
                if a % 60 != 0 {
                    s.push_str(&format!(":{:02}", a % 60));
                }
            }
        }
        s
    }
}

fn num(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Whether `year-month-day` is a day of the proleptic Gregorian calendar (any year, also 0
/// and negative ones; Python's `date` adds the range 1..=9999 on top).
pub fn is_valid_date(year: i32, month: u32, day: u32) -> bool {
    NaiveDate::from_ymd_opt(year, month, day).is_some()
}

fn parse_date_part(s: &str) -> Option<(i32, u32, u32)> {
    // Only ASCII passes, so the byte ranges below are on character boundaries.
    if s.len() != 10 || !s.is_ascii() || &s[4..5] != "-" || &s[7..8] != "-" {
        return None;
    }
    let y = i32::try_from(num(&s[..4])?).ok()?;
    let (m, d) = (num(&s[5..7])?, num(&s[8..10])?);
    if !is_valid_date(y, m, d) {
        return None;
    }
    Some((y, m, d))
}

/// Parses an ISO-8601 date-time of a stored value (also a bare date, as midnight): the
/// reference's already-validated data, read back by tools. Arguments from a model are
/// validated by tb-sandbox's `coerce::validate_datetime` instead, which is pydantic's exact rule.
pub fn parse_datetime(s: &str) -> Option<DateTimeParts> {
    let s = s.trim();
    if !s.is_ascii() {
        return None;
    }
    let (y, mo, d) = parse_date_part(s.get(..10)?)?;
    let mut p = DateTimeParts {
        year: y,
        month: mo,
        day: d,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
        offset: None,
    };
    let rest = &s[10..];
    if rest.is_empty() {
        return Some(p);
    }
    let rest = rest.strip_prefix(['T', 't', ' '])?;
    // Split off the zone.
    let (time, zone) = match rest.find(['Z', 'z', '+', '-']) {
        Some(i) => (&rest[..i], Some(&rest[i..])),
        None => (rest, None),
    };
    let (hms, frac) = time
        .split_once('.')
        .map_or((time, None), |(a, b)| (a, Some(b)));
    let parts: Vec<&str> = hms.split(':').collect();
    if parts.len() < 2 || parts.len() > 3 || parts.iter().any(|x| x.len() != 2) {
        return None;
    }
    p.hour = num(parts[0])?;
    p.minute = num(parts[1])?;
    p.second = if parts.len() == 3 { num(parts[2])? } else { 0 };
    if p.hour > 23 || p.minute > 59 || p.second > 59 {
        return None;
    }
    if let Some(f) = frac {
        if f.is_empty() || f.len() > 6 || num(f).is_none() {
            return None;
        }
        p.micro = num(&format!("{f:0<6}"))?;
    }
    if let Some(z) = zone {
        if z == "Z" || z == "z" {
            p.offset = Some(0);
        } else {
            let sign = if z.starts_with('-') { -1 } else { 1 };
            let z = &z[1..];
            let (h, m) = if let Some((h, m)) = z.split_once(':') {
                (num(h)?, num(m)?)
            } else if z.len() == 4 {
                (num(&z[..2])?, num(&z[2..])?)
            } else if z.len() == 2 {
                (num(z)?, 0)
            } else {
                return None;
            };
            if h > 23 || m > 59 {
                return None;
            }
            p.offset = Some(sign * i32::try_from(h * 3600 + m * 60).ok()?);
        }
    }
    Some(p)
}

/// `datetime.isoformat()`: like the JSON dump, but a zero offset prints as `+00:00`.
pub fn isoformat(p: &DateTimeParts) -> String {
    let s = p.dump();
    if p.offset == Some(0) {
        format!("{}+00:00", s.trim_end_matches('Z'))
    } else {
        s
    }
}

/// `isoformat()` of a stored datetime: rows keep pydantic's JSON dump, which writes UTC as `Z`
/// where `isoformat` writes `+00:00`. (Stored datetimes always parse; other text only has a
/// trailing `Z` rewritten, and any other value is returned as it is.)
pub fn isoformat_stored(v: &Value) -> Value {
    match v {
        Value::String(s) => {
            let dumped = parse_datetime(s).map_or_else(|| s.clone(), |p| p.dump());
            Value::String(match dumped.strip_suffix('Z') {
                Some(head) => format!("{head}+00:00"),
                None => dumped,
            })
        }
        other => other.clone(),
    }
}

/// `row.<name>.isoformat() if row.<name> else None`: [`isoformat_stored`] of a string field,
/// null when the field is absent, null or not a string.
pub fn isoformat_field(row: &Map<String, Value>, name: &str) -> Value {
    match row.get(name) {
        Some(v @ Value::String(_)) => isoformat_stored(v),
        _ => Value::Null,
    }
}

/// `strftime("%Y-%m-%dT%H:%M:%SZ")`: the wall fields with a literal `Z`, whatever the offset.
pub fn strftime_z(p: &DateTimeParts) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        p.year, p.month, p.day, p.hour, p.minute, p.second
    )
}

/// `datetime.fromisoformat(text.replace("Z", "+00:00"))`: the reference's idiom (from before
/// Python 3.11 read `Z` itself). Not the same as [`fromisoformat`]: every `Z` is replaced, and
/// the error quotes the replaced text.
pub fn fromisoformat_z(text: &str) -> Result<DateTimeParts, String> {
    fromisoformat(&text.replace('Z', "+00:00"))
}

/// `datetime.fromisoformat(text)` of Python 3.11: a date in one of the forms of
/// [`date_fromisoformat`], then any one character, then `HH[:MM[:SS[.f...]]]` (or without
/// colons) and an optional `Z` or `±HH[:MM[:SS]]`. The error is Python's ValueError text.
pub fn fromisoformat(text: &str) -> Result<DateTimeParts, String> {
    let invalid = || format!("Invalid isoformat string: {}", str_repr(text));
    let b = text.as_bytes();
    if b.len() < 7 {
        return Err(invalid());
    }
    let sep = separator_at(b);
    let (year, month, day) =
        parse_date(b.get(..sep.min(b.len())).ok_or_else(invalid)?).ok_or_else(invalid)?;
    let mut p = DateTimeParts {
        year,
        month,
        day,
        hour: 0,
        minute: 0,
        second: 0,
        micro: 0,
        offset: None,
    };
    if b.len() > sep {
        // Skip the separator, a whole UTF-8 character.
        let width = text
            .get(sep..)
            .and_then(|r| r.chars().next())
            .map_or(1, char::len_utf8);
        let t = b.get(sep + width..).ok_or_else(invalid)?;
        let tz = t
            .iter()
            .position(|c| matches!(c, b'Z' | b'+' | b'-'))
            .unwrap_or(t.len());
        let (h, m, sec, us, trailing) =
            parse_hms(&t[..tz], t.get(tz).copied()).ok_or_else(invalid)?;
        (p.hour, p.minute, p.second, p.micro) = (h, m, sec, us);
        if tz == t.len() {
            if trailing {
                return Err(invalid());
            }
        } else if t[tz] == b'Z' {
            if tz + 1 != t.len() {
                return Err(invalid());
            }
            p.offset = Some(0);
        } else {
            let sign: i64 = if t[tz] == b'-' { -1 } else { 1 };
            let (oh, om, os, ous, rest) = parse_hms(&t[tz + 1..], None).ok_or_else(invalid)?;
            if rest {
                return Err(invalid());
            }
            let off = sign * (i64::from(oh) * 3600 + i64::from(om) * 60 + i64::from(os));
            let off_us = off * 1_000_000 + sign * i64::from(ous);
            if off_us.abs() >= 86_400_000_000 {
                return Err(format!(
                    "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not {}.",
                    timedelta_repr(off_us)
                ));
            }
            // Whole seconds: the microseconds of an offset are not kept.
            p.offset = Some(i32::try_from(off).map_err(|_| invalid())?);
        }
    }
    if !(1..=9999).contains(&p.year) {
        return Err(format!("year {} is out of range", p.year));
    }
    if !(1..=12).contains(&p.month) {
        return Err("month must be in 1..12".into());
    }
    if NaiveDate::from_ymd_opt(p.year, p.month, p.day).is_none() {
        return Err("day is out of range for month".into());
    }
    for (v, name, max) in [
        (p.hour, "hour", 23),
        (p.minute, "minute", 59),
        (p.second, "second", 59),
    ] {
        if v > max {
            return Err(format!("{name} must be in 0..{max}"));
        }
    }
    Ok(p)
}

/// `repr(timedelta(microseconds=us))`.
fn timedelta_repr(us: i64) -> String {
    let (days, rest) = (us.div_euclid(86_400_000_000), us.rem_euclid(86_400_000_000));
    let (secs, micros) = (rest / 1_000_000, rest % 1_000_000);
    let mut parts = Vec::new();
    if days != 0 {
        parts.push(format!("days={days}"));
    }
    if secs != 0 {
        parts.push(format!("seconds={secs}"));
    }
    if micros != 0 {
        parts.push(format!("microseconds={micros}"));
    }
    if parts.is_empty() {
        "datetime.timedelta(0)".into()
    } else {
        format!("datetime.timedelta({})", parts.join(", "))
    }
}

/// Where CPython 3.11 expects the date/time separator (`_find_isoformat_datetime_separator`).
fn separator_at(b: &[u8]) -> usize {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    if b.len() == 7 {
        return 7;
    }
    if at(4) == b'-' {
        if at(5) != b'W' {
            return 10;
        }
        if b.len() > 8 && at(8) == b'-' {
            if b.len() == 9 {
                return usize::MAX;
            }
            if b.len() > 10 && at(10).is_ascii_digit() {
                return 8;
            }
            return 10;
        }
        return 8;
    }
    if at(4) == b'W' {
        let mut idx = 7;
        while idx < b.len() && b[idx].is_ascii_digit() {
            idx += 1;
        }
        if idx < 9 {
            return idx;
        }
        return if idx % 2 == 0 { 7 } else { 8 };
    }
    8
}

/// `n` ASCII digits at the start of `b`.
fn take_digits(b: &[u8], n: usize) -> Option<u32> {
    let d = b.get(..n)?;
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(d).ok()?.parse().ok()
}

/// CPython's `parse_isoformat_date`: a calendar or ISO-week date at the start of `b` (trailing
/// characters are not checked). Calendar dates are not range-checked here.
fn parse_date(b: &[u8]) -> Option<(i32, u32, u32)> {
    let year = take_digits(b, 4)?;
    let mut i = 4;
    let dashed = b.get(i) == Some(&b'-');
    if dashed {
        i += 1;
    }
    let date = if b.get(i) == Some(&b'W') {
        i += 1;
        let week = take_digits(&b[i..], 2)?;
        i += 2;
        let day = if i < b.len() {
            if dashed {
                if b[i] != b'-' {
                    return None;
                }
                i += 1;
            }
            take_digits(b.get(i..)?, 1)?
        } else {
            1
        };
        if !(1..=7).contains(&day) {
            return None;
        }
        if year == 0 {
            // ISO year 0 has 52 weeks, and CPython's `ord_to_ymd` on their ordinals (before
            // 0001-01-01) yields year 1 and a month below 1: "month must be in 1..12".
            return (1..=52).contains(&week).then_some((1, 0, 1));
        }
        let wd = chrono::Weekday::try_from(u8::try_from(day - 1).ok()?).ok()?;
        NaiveDate::from_isoywd_opt(i32::try_from(year).ok()?, week, wd)?
    } else {
        let month = take_digits(&b[i..], 2)?;
        i += 2;
        if dashed {
            if b.get(i) != Some(&b'-') {
                return None;
            }
            i += 1;
        }
        let day = take_digits(b.get(i..)?, 2)?;
        return Some((i32::try_from(year).ok()?, month, day));
    };
    Some((date.year(), date.month(), date.day()))
}

/// CPython's `parse_hh_mm_ss_ff` on `b` (the time up to the zone), `end` being the character
/// after it. Returns hour, minute, second, microsecond and whether something is left over.
fn parse_hms(b: &[u8], end: Option<u8>) -> Option<(u32, u32, u32, u32, bool)> {
    let mut vals = [0u32; 3];
    let mut p = 0usize;
    let mut colons = true;
    for (i, v) in vals.iter_mut().enumerate() {
        *v = take_digits(b.get(p..)?, 2)?;
        p += 2;
        let c = b.get(p).copied().or(end).unwrap_or(0);
        p += 1;
        if i == 0 {
            colons = c == b':';
        }
        if p >= b.len() {
            return Some((vals[0], vals[1], vals[2], 0, c != 0));
        } else if colons && c == b':' {
            // the next pair follows its colon
        } else if c == b'.' || c == b',' {
            break;
        } else if !colons {
            p -= 1;
        } else {
            return None;
        }
    }
    let rest = &b[p..];
    let n = rest.len().min(6);
    if n == 0 {
        return None;
    }
    let mut us = take_digits(rest, n)?;
    us *= 10u32.pow(u32::try_from(6 - n).ok()?);
    let mut q = n;
    while q < rest.len() && rest[q].is_ascii_digit() {
        q += 1;
    }
    Some((
        vals[0],
        vals[1],
        vals[2],
        us,
        q < rest.len() || end.is_some(),
    ))
}

/// Microseconds since the epoch of the wall time, shifted to UTC for an aware value.
pub fn micros(p: &DateTimeParts) -> Option<i64> {
    let d = NaiveDate::from_ymd_opt(p.year, p.month, p.day)?;
    let t = d.and_hms_micro_opt(p.hour, p.minute, p.second, p.micro)?;
    let local = t.and_utc().timestamp_micros();
    Some(local - i64::from(p.offset.unwrap_or(0)) * 1_000_000)
}

/// `(a - b).days` (floor of the difference in days). Both must be aware, or both naive.
pub fn days_between(a: &DateTimeParts, b: &DateTimeParts) -> Option<i64> {
    Some((micros(a)? - micros(b)?).div_euclid(86_400_000_000))
}

/// `dt + timedelta(hours=hours)` for an aware UTC `dt`, with Python's overflow messages.
pub fn add_hours(p: &DateTimeParts, hours: i64) -> Result<DateTimeParts, String> {
    timedelta_days(i128::from(hours.div_euclid(24)))?;
    let out_of_range = || "date value out of range".to_string();
    let base = NaiveDate::from_ymd_opt(p.year, p.month, p.day)
        .and_then(|d| d.and_hms_micro_opt(p.hour, p.minute, p.second, p.micro))
        .ok_or_else(out_of_range)?;
    let t = base
        .checked_add_signed(chrono::Duration::hours(hours))
        .ok_or_else(out_of_range)?;
    if !(1..=9999).contains(&t.year()) {
        return Err(out_of_range());
    }
    Ok(DateTimeParts {
        year: t.year(),
        month: t.month(),
        day: t.day(),
        hour: t.hour(),
        minute: t.minute(),
        second: t.second(),
        micro: t.nanosecond() / 1000,
        offset: p.offset,
    })
}

/// `timedelta(days=days)`'s range check (the days after normalisation), with Python's message.
fn timedelta_days(days: i128) -> Result<(), String> {
    if days.abs() > 999_999_999 {
        return Err(format!("days={days}; must have magnitude <= 999999999"));
    }
    Ok(())
}

/// `d - timedelta(days=days)` with Python's messages (`OverflowError` outside years 1-9999).
pub fn sub_days(d: NaiveDate, days: i128) -> Result<NaiveDate, String> {
    timedelta_days(days)?;
    i64::try_from(days)
        .ok()
        .and_then(chrono::Duration::try_days)
        .and_then(|t| d.checked_sub_signed(t))
        .filter(|d| (1..=9999).contains(&d.year()))
        .ok_or_else(|| "date value out of range".to_string())
}

/// `strftime("%Y-%m-%d")` (glibc does not pad years below 1000).
pub fn strftime_ymd(d: NaiveDate) -> String {
    format!("{}-{:02}-{:02}", d.year(), d.month(), d.day())
}

/// `datetime.strptime(text, "%Y-%m-%d")` with Python's messages: `%Y` is four digits, `%m` and
/// `%d` one or two, matched left to right; trailing text and impossible dates fail. (Python's
/// `%Y` also takes non-ASCII decimal digits, such as full-width ones; these fail here.)
pub fn strptime_ymd(text: &str) -> Result<NaiveDate, String> {
    let no_match = || {
        format!(
            "time data {} does not match format '%Y-%m-%d'",
            str_repr(text)
        )
    };
    let b = text.as_bytes();
    let digit = |i: usize| b.get(i).is_some_and(u8::is_ascii_digit);
    let num = |from: usize, to: usize| text.get(from..to).and_then(|t| t.parse::<u32>().ok());
    if !(0..4).all(digit) || b.get(4) != Some(&b'-') {
        return Err(no_match());
    }
    // Four ASCII digits: at most 9999, so the `i32` always holds it.
    let year = num(0, 4)
        .and_then(|y| i32::try_from(y).ok())
        .ok_or_else(no_match)?;
    // %m: 1[0-2] | 0[1-9] | [1-9]
    let mut i = 5;
    let month = match (b.get(i), b.get(i + 1)) {
        (Some(b'1'), Some(b'0'..=b'2')) => 2,
        (Some(b'0'), Some(b'1'..=b'9')) => 2,
        (Some(b'1'..=b'9'), _) => 1,
        _ => return Err(no_match()),
    };
    let m = num(i, i + month).ok_or_else(no_match)?;
    i += month;
    if b.get(i) != Some(&b'-') {
        return Err(no_match());
    }
    i += 1;
    // %d: 3[01] | [12]\d | 0[1-9] | [1-9] | ' '[1-9]
    let (skip, len) = match (b.get(i), b.get(i + 1)) {
        (Some(b'3'), Some(b'0' | b'1')) => (0, 2),
        (Some(b'1' | b'2'), Some(b'0'..=b'9')) => (0, 2),
        (Some(b'0'), Some(b'1'..=b'9')) => (0, 2),
        (Some(b'1'..=b'9'), _) => (0, 1),
        (Some(b' '), Some(b'1'..=b'9')) => (1, 1),
        _ => return Err(no_match()),
    };
    let d = num(i + skip, i + skip + len).ok_or_else(no_match)?;
    i += skip + len;
    if i < text.len() {
        return Err(format!(
            "unconverted data remains: {}",
            text.get(i..).unwrap_or("")
        ));
    }
    if year == 0 {
        return Err("year 0 is out of range".into());
    }
    NaiveDate::from_ymd_opt(year, m, d).ok_or_else(|| "day is out of range for month".into())
}

/// `date.fromisoformat(text)` of Python 3.11: `YYYY-MM-DD`, `YYYYMMDD` and the ISO week forms
/// `YYYY-Www[-D]`, `YYYYWww[D]`, for strings of 7, 8 or 10 bytes (characters after a complete
/// date are not checked, as in CPython). Returns `YYYY-MM-DD`.
pub fn date_fromisoformat(text: &str) -> Option<String> {
    if !matches!(text.len(), 7 | 8 | 10) {
        return None;
    }
    let (y, m, d) = parse_date(text.as_bytes())?;
    let date = NaiveDate::from_ymd_opt(y, m, d).filter(|d| (1..=9999).contains(&d.year()))?;
    Some(format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        date.month(),
        date.day()
    ))
}

#[cfg(test)]
mod tests {
    proptest::proptest! {
        /// The digit-by-digit dump is the formatted one.
        #[test]
        fn the_quick_dump_is_the_formatted_dump(
            year in -5i32..12_000, month in 1u32..13, day in 1u32..32, hour in 0u32..24,
            minute in 0u32..60, second in 0u32..60, micro in proptest::prop_oneof![proptest::strategy::Just(0u32), 0u32..1_000_000],
            offset in proptest::option::of(proptest::prop_oneof![proptest::strategy::Just(0i32), -86_399i32..86_400]),
        ) {
            let p = super::DateTimeParts { year, month, day, hour, minute, second, micro, offset };
            proptest::prop_assert_eq!(p.dump(), p.dump_formatted());
        }
    }

    use super::*;
    use serde_json::json;

    fn at(text: &str) -> DateTimeParts {
        parse_datetime(text).unwrap()
    }

    /// Python's `isoformat()` of stored values (from retail, consulting and neobank's copies).
    #[test]
    fn isoformat_of_stored_values() {
        assert_eq!(
            isoformat_stored(&json!("2025-10-01T13:00:05Z")),
            json!("2025-10-01T13:00:05+00:00")
        );
        assert_eq!(
            isoformat_stored(&json!("2025-10-01T13:00:05.120000+02:00")),
            json!("2025-10-01T13:00:05.120000+02:00")
        );
        assert_eq!(
            isoformat_stored(&json!("2025-10-01T13:00:05")),
            json!("2025-10-01T13:00:05")
        );
        assert_eq!(isoformat_stored(&json!("soon")), json!("soon"));
        assert_eq!(isoformat_stored(&json!("T-0Z")), json!("T-0+00:00"));
        assert_eq!(isoformat_stored(&Value::Null), Value::Null);
        let row = json!({"a": "2025-01-02T03:04:05Z", "b": "2025-01-02T03:04:05", "c": "2025-01-02T03:04:05.250000+02:00", "d": null});
        let row = row.as_object().unwrap();
        assert_eq!(
            isoformat_field(row, "a"),
            json!("2025-01-02T03:04:05+00:00")
        );
        assert_eq!(isoformat_field(row, "b"), json!("2025-01-02T03:04:05"));
        assert_eq!(
            isoformat_field(row, "c"),
            json!("2025-01-02T03:04:05.250000+02:00")
        );
        assert_eq!(isoformat_field(row, "d"), Value::Null);
        assert_eq!(isoformat_field(row, "e"), Value::Null);
    }

    /// The calendar date of `fromisoformat(text.replace("Z", "+00:00"))` (booking's copy).
    #[test]
    fn z_replaced_dates_follow_python() {
        let ymd = |t: &str| fromisoformat_z(t).map(|p| (p.year, p.month, p.day));
        assert_eq!(ymd("2025-10-02T15:00:00Z"), Ok((2025, 10, 2)));
        assert_eq!(ymd("2025-10-02"), Ok((2025, 10, 2)));
        assert_eq!(ymd("20251002"), Ok((2025, 10, 2)));
        assert_eq!(ymd("2025-10-02 15:00"), Ok((2025, 10, 2)));
        assert_eq!(ymd("2025-10-02T15:00:00.123+02:00"), Ok((2025, 10, 2)));
        assert_eq!(
            ymd("tomorrow"),
            Err("Invalid isoformat string: 'tomorrow'".into())
        );
        assert_eq!(ymd("2025-13-01"), Err("month must be in 1..12".into()));
        assert_eq!(
            ymd("2025-02-30"),
            Err("day is out of range for month".into())
        );
        assert_eq!(
            ymd("2025-10-02T25:00:00Z"),
            Err("hour must be in 0..23".into())
        );
        // The error quotes the text after the replacement, as Python's does.
        assert_eq!(
            ymd("Zulu"),
            Err("Invalid isoformat string: '+00:00ulu'".into())
        );
        // Non-ASCII text is an error, not a panic.
        assert_eq!(
            ymd("2025-1\u{e9}-02"),
            Err("Invalid isoformat string: '2025-1\u{e9}-02'".into())
        );
    }

    /// What Python 3.11 accepts (auto insurance's copy).
    #[test]
    fn fromisoformat_accepts_like_python() {
        for ok in [
            "2025-12-01",
            "20251201",
            "2025-12-01T10:05:00+00:00",
            "2025-12-01 10:05",
            "2025-12-01T10",
            "2025-12-01T10:05:00.5",
            "2025-12-01T100500",
            // Python 3.11 takes any one character as the separator, and ISO week dates.
            "2025-12-01\u{e9}10:00",
            "2025-W49-1",
        ] {
            assert!(fromisoformat_z(ok).is_ok(), "{ok}");
        }
        for bad in [
            "2025-13-01",
            "2025-02-30",
            "2025-12-01T25:00",
            "2025/12/01",
            "2025-12-01\u{e9}",
            "",
            "2025-12-01T",
        ] {
            assert!(fromisoformat_z(bad).is_err(), "{bad}");
        }
    }

    /// `strptime(text, "%Y-%m-%d")` (auto insurance claims' copy).
    #[test]
    fn strptime_like_python() {
        assert_eq!(
            strptime_ymd("2025-1-5"),
            Ok(NaiveDate::from_ymd_opt(2025, 1, 5).unwrap())
        );
        assert_eq!(
            strptime_ymd("Jan 5").unwrap_err(),
            "time data 'Jan 5' does not match format '%Y-%m-%d'"
        );
        assert_eq!(
            strptime_ymd("2025-02-30").unwrap_err(),
            "day is out of range for month"
        );
        assert_eq!(
            strptime_ymd("2025-10-011").unwrap_err(),
            "unconverted data remains: 1"
        );
        assert_eq!(
            strptime_ymd("0000-01-01").unwrap_err(),
            "year 0 is out of range"
        );
        assert_eq!(
            strptime_ymd("2025- 1-05").unwrap_err(),
            "time data '2025- 1-05' does not match format '%Y-%m-%d'"
        );
        assert_eq!(
            strptime_ymd("2025-01- 5"),
            Ok(NaiveDate::from_ymd_opt(2025, 1, 5).unwrap())
        );
    }

    #[test]
    fn date_arithmetic_and_strftime() {
        let d = NaiveDate::from_ymd_opt(2025, 3, 1).unwrap();
        assert_eq!(strftime_ymd(sub_days(d, 30).unwrap()), "2025-01-30");
        assert_eq!(strftime_ymd(sub_days(d, 739_000).unwrap()), "1-11-07");
        assert_eq!(sub_days(d, 740_000).unwrap_err(), "date value out of range");
        assert_eq!(
            sub_days(d, -1_000_000_000).unwrap_err(),
            "days=-1000000000; must have magnitude <= 999999999"
        );
    }

    #[test]
    fn isoformat_and_strftime() {
        let p = parse_datetime("2025-10-01T12:00:00Z").unwrap();
        assert_eq!(isoformat(&p), "2025-10-01T12:00:00+00:00");
        let p = parse_datetime("2025-10-01T12:00:00.5+02:00").unwrap();
        assert_eq!(isoformat(&p), "2025-10-01T12:00:00.500000+02:00");
        assert_eq!(strftime_z(&p), "2025-10-01T12:00:00Z");
        assert_eq!(
            isoformat(&parse_datetime("2025-10-01T12:00:00").unwrap()),
            "2025-10-01T12:00:00"
        );
    }

    #[test]
    fn day_differences_floor() {
        let a = at("2025-12-17T10:00:00Z");
        let b = parse_datetime("2023-01-15T00:00:00Z").unwrap();
        assert_eq!(days_between(&a, &b), Some(1067));
        let future = parse_datetime("2025-12-18T00:00:00Z").unwrap();
        assert_eq!(days_between(&a, &future), Some(-1));
    }

    #[test]
    fn hours_and_overflow() {
        assert_eq!(
            add_hours(&at("2025-12-18T10:00:00Z"), 4).unwrap().dump(),
            "2025-12-18T14:00:00Z"
        );
        assert_eq!(
            add_hours(&at("2025-12-18T10:00:00Z"), -30).unwrap().dump(),
            "2025-12-17T04:00:00Z"
        );
        assert_eq!(
            add_hours(&at("2025-12-18T10:00:00Z"), 24 * 5_000_000).unwrap_err(),
            "date value out of range"
        );
        assert_eq!(
            add_hours(&at("2025-12-18T10:00:00Z"), -24_000_000_024).unwrap_err(),
            "days=-1000000001; must have magnitude <= 999999999"
        );
    }

    #[test]
    fn datetimes_like_python() {
        let f = |t: &str| fromisoformat(t).ok().map(|p| p.dump());
        assert_eq!(
            f("2025-12-18T14:00:00+00:00").as_deref(),
            Some("2025-12-18T14:00:00Z")
        );
        assert_eq!(
            f("2025-12-18T14:00:00Z").as_deref(),
            Some("2025-12-18T14:00:00Z")
        );
        assert_eq!(f("2025-12-18").as_deref(), Some("2025-12-18T00:00:00"));
        assert_eq!(f("2025-12-18 14").as_deref(), Some("2025-12-18T14:00:00"));
        assert_eq!(f("20251218T1400").as_deref(), Some("2025-12-18T14:00:00"));
        assert_eq!(
            f("2025-12-18x14:00:00.1234567-05:30").as_deref(),
            Some("2025-12-18T14:00:00.123456-05:30")
        );
        assert_eq!(
            f("2025-12-18T14:00:00,5").as_deref(),
            Some("2025-12-18T14:00:00.500000")
        );
        assert_eq!(
            f("2025-W51-4T10:00").as_deref(),
            Some("2025-12-18T10:00:00")
        );
        assert_eq!(f("2025-12-18T24:00"), None);
        assert_eq!(f("2025-12-18T14:00:00+24:00"), None);
        assert_eq!(f("2025-12-18T14:00:00Zx"), None);
        assert_eq!(f("2025-12-18T14:00 "), None);
        assert_eq!(f("2025-12-18T"), None);
        assert_eq!(f("tomorrow"), None);
        assert_eq!(f(" 2025-12-18"), None);
        assert_eq!(
            f("2025-12-18T14:+01:00").as_deref(),
            Some("2025-12-18T14:00:00+01:00")
        );
        assert_eq!(
            f("2025-12-18T140000123").as_deref(),
            Some("2025-12-18T14:00:00.123000")
        );
        assert_eq!(
            f("2025-12-18T14:00:00:123").as_deref(),
            Some("2025-12-18T14:00:00.123000")
        );
        assert_eq!(f("2025-12-18T14:00:00."), None);
        assert_eq!(
            f("2025-12-18T14:00:00.+01:00").as_deref(),
            Some("2025-12-18T14:00:00+01:00")
        );
        assert_eq!(f("2025W514T10").as_deref(), Some("2025-12-18T10:00:00"));
        assert_eq!(
            f("2025-12-18T14:00:00+0530").as_deref(),
            Some("2025-12-18T14:00:00+05:30")
        );
        let e = |t: &str| fromisoformat(t).unwrap_err();
        assert_eq!(e("2025-12-18T24:00"), "hour must be in 0..23");
        assert_eq!(e("2025-02-30T10:00"), "day is out of range for month");
        assert_eq!(e("2025-13-01"), "month must be in 1..12");
        assert_eq!(e("0000-01-01"), "year 0 is out of range");
        assert_eq!(e("tomorrow"), "Invalid isoformat string: 'tomorrow'");
        assert_eq!(
            e("2025-12-18T14:00:00+24:00"),
            "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not datetime.timedelta(days=1)."
        );
        assert_eq!(
            e("2025-12-18T14:00:00+24:00:00.5"),
            "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not datetime.timedelta(days=1, microseconds=500000)."
        );
        assert_eq!(e("0000-W01"), "month must be in 1..12");
        assert_eq!(e("0000-W53"), "Invalid isoformat string: '0000-W53'");
        assert_eq!(
            e("2025-12-18T14:00:00-25:00"),
            "offset must be a timedelta strictly between -timedelta(hours=24) and timedelta(hours=24), not datetime.timedelta(days=-2, seconds=82800)."
        );
    }

    #[test]
    fn dates_like_python() {
        assert_eq!(
            date_fromisoformat("2025-12-28").as_deref(),
            Some("2025-12-28")
        );
        assert_eq!(
            date_fromisoformat("20251228").as_deref(),
            Some("2025-12-28")
        );
        assert_eq!(
            date_fromisoformat("2025-W01").as_deref(),
            Some("2024-12-30")
        );
        assert_eq!(
            date_fromisoformat("2025-W01-3").as_deref(),
            Some("2025-01-01")
        );
        assert_eq!(
            date_fromisoformat("2025W013").as_deref(),
            Some("2025-01-01")
        );
        assert_eq!(date_fromisoformat("2025-02-30"), None);
        assert_eq!(date_fromisoformat("2025/12/28"), None);
        assert_eq!(date_fromisoformat("next week"), None);
        assert_eq!(date_fromisoformat("0000-01-01"), None);
        // CPython 3.11 ignores what follows a complete compact date.
        assert_eq!(
            date_fromisoformat("20251215T0").as_deref(),
            Some("2025-12-15")
        );
        assert_eq!(date_fromisoformat("2025-12-1"), None);
    }
}
