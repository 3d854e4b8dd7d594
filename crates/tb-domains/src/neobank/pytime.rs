//! The few Python `datetime` behaviours the neobank tools rely on: `isoformat()`,
//! `fromisoformat()`, `date.fromisoformat()`, aware/naive comparison and timedelta arithmetic.

use chrono::{Datelike, NaiveDate, Timelike};
use tb_sandbox::coerce::{DateTimeParts, parse_datetime};

/// 2025-12-17T10:00:00Z, `FIXED_CURRENT_TIME` of the Okta access, license, asset and approval tools.
pub const DEC_17: DateTimeParts = DateTimeParts {
    year: 2025,
    month: 12,
    day: 17,
    hour: 10,
    minute: 0,
    second: 0,
    micro: 0,
    offset: Some(0),
};

/// 2025-12-18T10:00:00Z, `FIXED_CURRENT_TIME` of the security, procurement and email tools.
pub const DEC_18: DateTimeParts = DateTimeParts {
    year: 2025,
    month: 12,
    day: 18,
    hour: 10,
    minute: 0,
    second: 0,
    micro: 0,
    offset: Some(0),
};

/// `datetime.isoformat()`: like the JSON dump, but a zero offset prints as `+00:00`.
pub fn isoformat(p: &DateTimeParts) -> String {
    let s = p.dump();
    if p.offset == Some(0) {
        format!("{}+00:00", s.trim_end_matches('Z'))
    } else {
        s
    }
}

/// `strftime("%Y-%m-%dT%H:%M:%SZ")`: the wall fields with a literal `Z`, whatever the offset.
pub fn strftime_z(p: &DateTimeParts) -> String {
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        p.year, p.month, p.day, p.hour, p.minute, p.second
    )
}

/// `datetime.fromisoformat(text)` (None where Python raises ValueError).
pub fn fromisoformat(text: &str) -> Option<DateTimeParts> {
    // Python does not strip whitespace and needs at least a full date.
    if text.trim() != text || text.len() < 10 {
        return None;
    }
    parse_datetime(text)
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
    let days = hours.div_euclid(24);
    if days.abs() > 999_999_999 {
        return Err(format!("days={days}; must have magnitude <= 999999999"));
    }
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

fn digits(s: &str) -> Option<u32> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `date.fromisoformat(text)` of Python 3.11: `YYYY-MM-DD`, `YYYYMMDD` and the ISO week forms
/// `YYYY-Www[-D]`, `YYYYWww[D]`. Returns `YYYY-MM-DD`.
pub fn date_fromisoformat(text: &str) -> Option<String> {
    if !text.is_ascii() {
        return None;
    }
    let year = digits(text.get(..4)?)? as i32;
    if year == 0 {
        return None;
    }
    let rest = &text[4..];
    let date = if let Some(w) = rest.strip_prefix("-W").or_else(|| rest.strip_prefix('W')) {
        let dashed = rest.starts_with('-');
        let week = digits(w.get(..2)?)?;
        let tail = &w[2..];
        let day = match (tail.len(), dashed) {
            (0, _) => 1,
            (2, true) if tail.starts_with('-') => digits(&tail[1..])?,
            (1, false) => digits(tail)?,
            _ => return None,
        };
        if !(1..=7).contains(&day) {
            return None;
        }
        let wd = chrono::Weekday::try_from(u8::try_from(day - 1).ok()?).ok()?;
        NaiveDate::from_isoywd_opt(year, week, wd)?
    } else {
        let (m, d) = match rest.len() {
            6 if rest.starts_with('-') && rest.as_bytes().get(3) == Some(&b'-') => {
                (digits(&rest[1..3])?, digits(&rest[4..6])?)
            }
            4 => (digits(&rest[..2])?, digits(&rest[2..])?),
            _ => return None,
        };
        NaiveDate::from_ymd_opt(year, m, d)?
    };
    if !(1..=9999).contains(&date.year()) {
        return None;
    }
    Some(format!(
        "{:04}-{:02}-{:02}",
        date.year(),
        date.month(),
        date.day()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let a = DEC_17;
        let b = parse_datetime("2023-01-15T00:00:00Z").unwrap();
        assert_eq!(days_between(&a, &b), Some(1067));
        let future = parse_datetime("2025-12-18T00:00:00Z").unwrap();
        assert_eq!(days_between(&a, &future), Some(-1));
    }

    #[test]
    fn hours_and_overflow() {
        assert_eq!(
            add_hours(&DEC_18, 4).unwrap().dump(),
            "2025-12-18T14:00:00Z"
        );
        assert_eq!(
            add_hours(&DEC_18, -30).unwrap().dump(),
            "2025-12-17T04:00:00Z"
        );
        assert_eq!(
            add_hours(&DEC_18, 24 * 5_000_000).unwrap_err(),
            "date value out of range"
        );
        assert_eq!(
            add_hours(&DEC_18, -24_000_000_024).unwrap_err(),
            "days=-1000000001; must have magnitude <= 999999999"
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
    }
}
