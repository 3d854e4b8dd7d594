//! Validation with pydantic's lax coercion, producing JSON-mode values (what
//! `model_dump(mode="json")` gives) and pydantic's error messages.

use crate::schema::{Constraints, Default, Kind, Model};
use serde_json::{Map, Number, Value};

/// One validation error: where (`loc`) and pydantic's message.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidationError {
    /// Path of the value: field names and list indices.
    pub loc: Vec<String>,
    /// The message pydantic would give.
    pub msg: String,
}

impl ValidationError {
    fn new(msg: impl Into<String>) -> Self {
        ValidationError {
            loc: Vec::new(),
            msg: msg.into(),
        }
    }

    fn at(mut self, key: &str) -> Self {
        self.loc.insert(0, key.to_string());
        self
    }

    /// `loc: msg`, with the loc dotted as the reference's tools print it.
    pub fn display(&self) -> String {
        let loc = if self.loc.is_empty() {
            "unknown".to_string()
        } else {
            self.loc.join(".")
        };
        format!("{loc}: {}", self.msg)
    }
}

/// The errors of one validation, joined as the reference's tools print them.
pub fn display_errors(errors: &[ValidationError]) -> String {
    errors
        .iter()
        .map(ValidationError::display)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Context a validation needs: the value of `@now` defaults (an ISO-8601 dump).
#[derive(Debug, Clone, Copy)]
pub struct Ctx<'a> {
    /// The session clock, already formatted as pydantic dumps a UTC datetime.
    pub now: &'a str,
}

/// Validates a JSON object against a model: fills defaults, coerces, drops unknown keys (or
/// rejects them when the model forbids extras). The result has the model's field order.
pub fn validate_model(
    model: &Model,
    input: &Value,
    ctx: Ctx<'_>,
) -> Result<Map<String, Value>, Vec<ValidationError>> {
    let Value::Object(obj) = input else {
        return Err(vec![ValidationError::new(format!(
            "Input should be a valid dictionary or instance of {}",
            model.name
        ))]);
    };
    let mut out = Map::with_capacity(model.fields.len());
    let mut errors = Vec::new();
    // Inputs usually list their keys in model order: try the next key before hashing.
    let mut next = obj.iter().peekable();
    for field in &model.fields {
        let given = match next.peek() {
            Some((k, v)) if **k == field.name => {
                let v = *v;
                next.next();
                Some(v)
            }
            _ => obj.get(&field.name),
        };
        match given {
            Some(v) => match validate(&field.kind, v, ctx) {
                Ok(v) => {
                    out.insert(field.name.clone(), v);
                }
                Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(&field.name))),
            },
            None => match &field.default {
                Default::Required => {
                    errors.push(ValidationError::new("Field required").at(&field.name))
                }
                Default::Value(v) => {
                    out.insert(field.name.clone(), v.clone());
                }
                Default::Now => {
                    out.insert(field.name.clone(), Value::String(ctx.now.to_string()));
                }
            },
        }
    }
    if model.forbid_extra {
        for key in obj.keys() {
            if model.field(key).is_none() {
                errors.push(ValidationError::new("Extra inputs are not permitted").at(key));
            }
        }
    }
    if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    }
}

/// Validates one value against a kind.
pub fn validate(kind: &Kind, v: &Value, ctx: Ctx<'_>) -> Result<Value, Vec<ValidationError>> {
    let one = |m: String| vec![ValidationError::new(m)];
    match kind {
        Kind::Any => Ok(v.clone()),
        Kind::Optional(inner) => {
            if v.is_null() {
                Ok(Value::Null)
            } else {
                validate(inner, v, ctx)
            }
        }
        Kind::Constrained(inner, c) => {
            let out = validate(inner, v, ctx)?;
            check_constraints(&out, c).map_err(one)?;
            Ok(out)
        }
        Kind::Str => match v {
            Value::String(_) => Ok(v.clone()),
            _ => Err(one("Input should be a valid string".into())),
        },
        Kind::Int => coerce_int(v).map(Value::from).map_err(one),
        Kind::Float => coerce_float(v).map_err(one),
        Kind::Bool => coerce_bool(v).map(Value::Bool).map_err(one),
        Kind::Decimal => coerce_decimal(v).map(Value::String).map_err(one),
        Kind::DateTime => coerce_datetime(v).map(Value::String).map_err(one),
        Kind::Date => coerce_date(v).map(Value::String).map_err(one),
        Kind::Enum(values) => match v {
            Value::String(s) if values.iter().any(|x| x == s) => Ok(v.clone()),
            _ => Err(one(format!("Input should be {}", enum_choices(values)))),
        },
        Kind::List(inner) => {
            let Value::Array(items) = v else {
                return Err(one("Input should be a valid list".into()));
            };
            let mut out = Vec::with_capacity(items.len());
            let mut errors = Vec::new();
            for (i, item) in items.iter().enumerate() {
                match validate(inner, item, ctx) {
                    Ok(x) => out.push(x),
                    Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(&i.to_string()))),
                }
            }
            if errors.is_empty() {
                Ok(Value::Array(out))
            } else {
                Err(errors)
            }
        }
        Kind::Dict(inner) => {
            let Value::Object(obj) = v else {
                return Err(one("Input should be a valid dictionary".into()));
            };
            let mut out = Map::with_capacity(obj.len());
            let mut errors = Vec::new();
            for (k, item) in obj {
                match validate(inner, item, ctx) {
                    Ok(x) => {
                        out.insert(k.clone(), x);
                    }
                    Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(k))),
                }
            }
            if errors.is_empty() {
                Ok(Value::Object(out))
            } else {
                Err(errors)
            }
        }
        Kind::Model(m) => validate_model(m, v, ctx).map(Value::Object),
        Kind::Union(alts) => {
            let mut errors = Vec::new();
            let mut best: Option<(usize, Value)> = None;
            for alt in alts {
                match validate(alt, v, ctx) {
                    Ok(x) => {
                        // Pydantic's smart mode: among model matches the one with the most
                        // fields actually set wins; a scalar match is taken as is.
                        let score = match (alt.base(), v) {
                            (Kind::Model(m), Value::Object(o)) => {
                                o.keys().filter(|k| m.field(k).is_some()).count()
                            }
                            _ => return Ok(x),
                        };
                        if best.as_ref().is_none_or(|(s, _)| score > *s) {
                            best = Some((score, x));
                        }
                    }
                    Err(errs) => {
                        let tag = union_tag(alt);
                        errors.extend(errs.into_iter().map(|e| e.at(&tag)));
                    }
                }
            }
            match best {
                Some((_, x)) => Ok(x),
                None => Err(errors),
            }
        }
    }
}

/// The name pydantic puts in a union error's location for a member.
fn union_tag(kind: &Kind) -> String {
    match kind {
        Kind::Model(m) => m.name.clone(),
        Kind::Str => "str".into(),
        Kind::Int => "int".into(),
        Kind::Float => "float".into(),
        Kind::Bool => "bool".into(),
        Kind::Decimal => "decimal".into(),
        Kind::DateTime => "datetime".into(),
        Kind::Date => "date".into(),
        Kind::Any => "any".into(),
        Kind::Enum(_) => "enum".into(),
        Kind::List(k) => format!("list[{}]", union_tag(k)),
        Kind::Dict(k) => format!("dict[str,{}]", union_tag(k)),
        Kind::Optional(k) => format!("nullable[{}]", union_tag(k)),
        Kind::Union(_) => "union".into(),
        Kind::Constrained(k, c) => match k.as_ref() {
            Kind::Str if c.min_len.is_some() || c.max_len.is_some() => "constrained-str".into(),
            Kind::Int => "constrained-int".into(),
            Kind::Float => "constrained-float".into(),
            other => union_tag(other),
        },
    }
}

/// `'a', 'b' or 'c'`, as pydantic lists enum choices.
pub fn enum_choices(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
    match quoted.len() {
        0 => String::new(),
        1 => quoted[0].clone(),
        n => format!("{} or {}", quoted[..n - 1].join(", "), quoted[n - 1]),
    }
}

fn fmt_bound(b: f64) -> String {
    if b.fract() == 0.0 && b.abs() < 1e15 {
        format!("{}", b as i64)
    } else {
        crate::pyjson::float_repr(b)
    }
}

fn check_constraints(v: &Value, c: &Constraints) -> Result<(), String> {
    if let Value::String(s) = v {
        let n = s.chars().count();
        if let Some(min) = c.min_len
            && n < min
        {
            return Err(format!(
                "String should have at least {min} character{}",
                if min == 1 { "" } else { "s" }
            ));
        }
        if let Some(max) = c.max_len
            && n > max
        {
            return Err(format!(
                "String should have at most {max} character{}",
                if max == 1 { "" } else { "s" }
            ));
        }
    }
    if let Value::Array(a) = v {
        if let Some(min) = c.min_len
            && a.len() < min
        {
            return Err(format!(
                "List should have at least {min} item{} after validation, not {}",
                if min == 1 { "" } else { "s" },
                a.len()
            ));
        }
        if let Some(max) = c.max_len
            && a.len() > max
        {
            return Err(format!(
                "List should have at most {max} item{} after validation, not {}",
                if max == 1 { "" } else { "s" },
                a.len()
            ));
        }
    }
    let num = match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s)
            if c.ge.is_some() || c.gt.is_some() || c.le.is_some() || c.lt.is_some() =>
        {
            s.parse().ok()
        }
        _ => None,
    };
    if let Some(x) = num {
        if let Some(b) = c.ge.filter(|b| x < *b) {
            return Err(format!(
                "Input should be greater than or equal to {}",
                fmt_bound(b)
            ));
        }
        if let Some(b) = c.gt.filter(|b| x <= *b) {
            return Err(format!("Input should be greater than {}", fmt_bound(b)));
        }
        if let Some(b) = c.le.filter(|b| x > *b) {
            return Err(format!(
                "Input should be less than or equal to {}",
                fmt_bound(b)
            ));
        }
        if let Some(b) = c.lt.filter(|b| x >= *b) {
            return Err(format!("Input should be less than {}", fmt_bound(b)));
        }
    }
    Ok(())
}

fn coerce_int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if let Some(f) = n.as_f64() {
                if f.fract() != 0.0 {
                    Err(
                        "Input should be a valid integer, got a number with a fractional part"
                            .into(),
                    )
                } else if f.is_finite() && f.abs() < 9.2e18 {
                    Ok(f as i64)
                } else {
                    Err("Input should be a finite number".into())
                }
            } else {
                Err("Input should be a valid integer".into())
            }
        }
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.replace('_', "").parse::<i64>()
                && !t.starts_with('_')
                && !t.ends_with('_')
            {
                return Ok(i);
            }
            match t.parse::<f64>() {
                Ok(f) if f.fract() == 0.0 && f.is_finite() && t.contains('.') => Ok(f as i64),
                Ok(f) if f.is_finite() && t.contains('.') => Err(
                    "Input should be a valid integer, got a number with a fractional part".into(),
                ),
                _ => Err(
                    "Input should be a valid integer, unable to parse string as an integer".into(),
                ),
            }
        }
        _ => Err("Input should be a valid integer".into()),
    }
}

fn coerce_float(v: &Value) -> Result<Value, String> {
    let f = match v {
        Value::Number(n) => n.as_f64().ok_or("Input should be a valid number")?,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => {
            let t = s.trim().to_ascii_lowercase();
            match t.as_str() {
                "inf" | "+inf" | "infinity" | "+infinity" => f64::INFINITY,
                "-inf" | "-infinity" => f64::NEG_INFINITY,
                "nan" => f64::NAN,
                _ => t.replace('_', "").parse::<f64>().map_err(|_| {
                    "Input should be a valid number, unable to parse string as a number".to_string()
                })?,
            }
        }
        _ => return Err("Input should be a valid number".into()),
    };
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| "Input should be a finite number".into())
}

fn coerce_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or(f64::NAN);
            if x == 0.0 {
                Ok(false)
            } else if x == 1.0 {
                Ok(true)
            } else {
                Err("Input should be a valid boolean, unable to interpret input".into())
            }
        }
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "0" | "off" | "f" | "false" | "n" | "no" => Ok(false),
            "1" | "on" | "t" | "true" | "y" | "yes" => Ok(true),
            _ => Err("Input should be a valid boolean, unable to interpret input".into()),
        },
        _ => Err("Input should be a valid boolean".into()),
    }
}

/// A decimal as Python's `str(Decimal(x))` prints it: the input's digits and exponent kept.
fn coerce_decimal(v: &Value) -> Result<String, String> {
    let text = match v {
        Value::Number(n) if n.is_f64() => crate::pyjson::float_repr(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.trim().to_string(),
        _ => {
            return Err(
                "Decimal input should be an integer, float, string or Decimal object".into(),
            );
        }
    };
    decimal_to_string(&text).ok_or_else(|| "Input should be a valid decimal".into())
}

/// Python `str(Decimal(text))` for finite decimals: `to-sci-string` of the IBM spec.
pub fn decimal_to_string(text: &str) -> Option<String> {
    let (neg, body) = match text.as_bytes().first()? {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let (mant, exp) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], body[i + 1..].parse::<i64>().ok()?),
        None => (body, 0),
    };
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return None;
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    let digits: String = format!("{int_part}{frac_part}");
    let digits = digits.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let exponent = exp - frac_part.len() as i64;
    let n = digits.len() as i64;
    let adjusted = exponent + n - 1;
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if exponent <= 0 && adjusted >= -6 {
        if exponent == 0 {
            out.push_str(digits);
        } else {
            let point = n + exponent; // digits before the point
            if point > 0 {
                out.push_str(&digits[..point as usize]);
                out.push('.');
                out.push_str(&digits[point as usize..]);
            } else {
                out.push_str("0.");
                for _ in 0..(-point) {
                    out.push('0');
                }
                out.push_str(digits);
            }
        }
    } else {
        out.push_str(&digits[..1]);
        if n > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('E');
        out.push(if adjusted < 0 { '-' } else { '+' });
        out.push_str(&adjusted.abs().to_string());
    }
    Some(out)
}

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

fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        _ => 0,
    }
}

fn parse_date_part(s: &str) -> Option<(i32, u32, u32)> {
    if s.len() != 10 || &s[4..5] != "-" || &s[7..8] != "-" {
        return None;
    }
    let (y, m, d) = (num(&s[..4])? as i32, num(&s[5..7])?, num(&s[8..10])?);
    if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
        return None;
    }
    Some((y, m, d))
}

/// Parses an ISO-8601 date-time as pydantic accepts it (also a bare date, as midnight).
pub fn parse_datetime(s: &str) -> Option<DateTimeParts> {
    let s = s.trim();
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
            p.offset = Some(sign * (h as i32 * 3600 + m as i32 * 60));
        }
    }
    Some(p)
}

fn coerce_datetime(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => parse_datetime(s).map(|p| p.dump()).ok_or_else(|| {
            "Input should be a valid datetime or date, invalid character in year".to_string()
        }),
        _ => Err("Input should be a valid datetime".into()),
    }
}

fn coerce_date(v: &Value) -> Result<String, String> {
    match v {
        Value::String(s) => {
            if let Some((y, m, d)) = parse_date_part(s.trim()) {
                return Ok(format!("{y:04}-{m:02}-{d:02}"));
            }
            match parse_datetime(s) {
                Some(p) if p.hour == 0 && p.minute == 0 && p.second == 0 && p.micro == 0 => {
                    Ok(format!("{:04}-{:02}-{:02}", p.year, p.month, p.day))
                }
                Some(_) => Err(
                    "Datetimes provided to dates should have zero time - e.g. be exact dates"
                        .into(),
                ),
                None => Err(
                    "Input should be a valid date or datetime, invalid character in year".into(),
                ),
            }
        }
        _ => Err("Input should be a valid date".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Field, Kind};
    use serde_json::json;
    use std::sync::Arc;

    const CTX: Ctx<'static> = Ctx {
        now: "2025-10-01T13:00:05Z",
    };

    #[test]
    fn lax_numbers() {
        assert_eq!(
            validate(&Kind::Float, &json!(435), CTX).unwrap(),
            json!(435.0)
        );
        assert!(validate(&Kind::Float, &json!(435), CTX).unwrap().is_f64());
        assert_eq!(validate(&Kind::Int, &json!(3.0), CTX).unwrap(), json!(3));
        assert_eq!(validate(&Kind::Int, &json!("17"), CTX).unwrap(), json!(17));
        assert_eq!(validate(&Kind::Int, &json!(true), CTX).unwrap(), json!(1));
        assert_eq!(
            validate(&Kind::Int, &json!(3.5), CTX).unwrap_err()[0].msg,
            "Input should be a valid integer, got a number with a fractional part"
        );
        assert_eq!(
            validate(&Kind::Str, &json!(5), CTX).unwrap_err()[0].msg,
            "Input should be a valid string"
        );
    }

    #[test]
    fn decimals_keep_their_exponent() {
        let d = |v: Value| validate(&Kind::Decimal, &v, CTX).unwrap();
        assert_eq!(d(json!(457.5)), json!("457.5"));
        assert_eq!(d(json!("200000.00")), json!("200000.00"));
        assert_eq!(d(json!(450)), json!("450"));
        assert_eq!(d(json!("0.0000001")), json!("1E-7"));
        assert_eq!(d(json!("1e3")), json!("1E+3"));
        assert_eq!(d(json!("-0.50")), json!("-0.50"));
        assert_eq!(d(json!(".5")), json!("0.5"));
    }

    #[test]
    fn datetimes_dump_like_pydantic() {
        let d = |s: &str| validate(&Kind::DateTime, &json!(s), CTX).unwrap();
        assert_eq!(
            d("2025-10-01T13:00:05+00:00"),
            json!("2025-10-01T13:00:05Z")
        );
        assert_eq!(
            d("2025-10-01T13:00:05.120Z"),
            json!("2025-10-01T13:00:05.120000Z")
        );
        assert_eq!(d("2025-10-01 13:00"), json!("2025-10-01T13:00:00"));
        assert_eq!(d("2025-10-01"), json!("2025-10-01T00:00:00"));
        assert_eq!(
            d("2025-10-01T13:00:05+02:00"),
            json!("2025-10-01T13:00:05+02:00")
        );
        assert!(validate(&Kind::DateTime, &json!("2025-02-30T00:00:00Z"), CTX).is_err());
    }

    #[test]
    fn models_fill_defaults_and_forbid_extras() {
        let m = Model {
            name: "Row".into(),
            forbid_extra: true,
            description: String::new(),
            fields: vec![
                Field {
                    name: "id".into(),
                    kind: Kind::Str,
                    default: Default::Required,
                    description: String::new(),
                },
                Field {
                    name: "tags".into(),
                    kind: Kind::List(Box::new(Kind::Str)),
                    default: Default::Value(json!([])),
                    description: String::new(),
                },
                Field {
                    name: "at".into(),
                    kind: Kind::DateTime,
                    default: Default::Now,
                    description: String::new(),
                },
                Field {
                    name: "status".into(),
                    kind: Kind::Enum(Arc::new(vec![
                        "open".into(),
                        "closed".into(),
                        "hold".into(),
                    ])),
                    default: Default::Value(json!("open")),
                    description: String::new(),
                },
            ],
        };
        let ok = validate_model(&m, &json!({"id": "1"}), CTX).unwrap();
        assert_eq!(
            Value::Object(ok),
            json!({"id": "1", "tags": [], "at": "2025-10-01T13:00:05Z", "status": "open"})
        );
        let errs = validate_model(&m, &json!({"status": "x", "zzz": 1}), CTX).unwrap_err();
        assert_eq!(
            display_errors(&errs),
            "id: Field required; status: Input should be 'open', 'closed' or 'hold'; zzz: Extra inputs are not permitted"
        );
    }
}
