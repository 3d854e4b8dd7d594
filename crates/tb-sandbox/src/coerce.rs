//! Validation with pydantic's lax coercion, producing JSON-mode values (what
//! `model_dump(mode="json")` gives) and pydantic's error messages.
//!
//! Every value here comes from a model or client, so nothing indexes or slices unchecked.

#![cfg_attr(not(test), deny(clippy::indexing_slicing, clippy::string_slice))]

use crate::schema::{Constraints, Default, Kind, Model};
use serde_json::{Map, Number, Value};
use tb_python::datetime::DateTimeParts;
use tb_python::decimal::ParseError;
use tb_python::float_repr;

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
    if model.fields.len() <= FAST_FIELDS
        && obj.len() <= FAST_KEYS
        && let Some(template) = model.template.get(&model.fields)
        && let Some(done) = validate_model_fast(model, template, obj, ctx)
    {
        return done;
    }
    validate_model_keyed(model, obj, ctx)
}

/// Models of at most this many fields take [`validate_model_fast`].
const FAST_FIELDS: usize = 64;
/// Inputs of at most this many keys take [`validate_model_fast`] (its key search is linear).
const FAST_KEYS: usize = 64;

/// [`validate_model`] without hashing a field name: the input's keys are matched to fields
/// by comparing names (searching from the field after the last match, as inputs usually list
/// their keys in model order), and the row starts as a copy of the model's template and has
/// its values set in place. `None` when the template does not fit the fields (fields edited
/// after it was built): the caller then takes the keyed path.
fn validate_model_fast(
    model: &Model,
    template: &Map<String, Value>,
    obj: &Map<String, Value>,
    ctx: Ctx<'_>,
) -> Option<Result<Map<String, Value>, Vec<ValidationError>>> {
    let fields = &model.fields;
    let n = fields.len();
    if template.len() != n || n > FAST_FIELDS {
        return None;
    }
    let mut given: [Option<&Value>; FAST_FIELDS] = [None; FAST_FIELDS];
    let mut extra: Vec<&str> = Vec::new();
    let mut cursor = 0;
    for (k, v) in obj {
        let found = (cursor..n)
            .chain(0..cursor)
            .find(|&i| fields.get(i).is_some_and(|f| f.name == *k));
        match found {
            Some(i) => {
                if let Some(slot) = given.get_mut(i) {
                    *slot = Some(v);
                }
                cursor = i + 1;
            }
            None if model.forbid_extra => extra.push(k),
            None => {}
        }
    }
    let mut out = template.clone();
    let mut errors = Vec::new();
    for ((field, (key, slot)), g) in fields.iter().zip(out.iter_mut()).zip(given) {
        if *key != field.name {
            return None;
        }
        match g {
            Some(v) => match validate(&field.kind, v, ctx) {
                Ok(v) => *slot = v,
                Err(errs) => errors.extend(errs.into_iter().map(|e| e.at(&field.name))),
            },
            None => match &field.default {
                Default::Required => {
                    errors.push(ValidationError::new("Field required").at(&field.name));
                }
                Default::Value(v) => *slot = v.clone(),
                Default::Now => *slot = Value::String(ctx.now.to_string()),
            },
        }
    }
    for key in extra {
        errors.push(ValidationError::new("Extra inputs are not permitted").at(key));
    }
    Some(if errors.is_empty() {
        Ok(out)
    } else {
        Err(errors)
    })
}

/// [`validate_model`] of `base` with `updates` set over it (a key of `base` has its value
/// replaced, a new key is added; a later update of a key wins), for a `base` that is the
/// model's own valid dump (every field, in order) of a model that gives such a dump back
/// unchanged ([`Model::revalidates_to_itself`]): only the updated fields are validated, the
/// others are kept as they are (validating them would give them back). `None` when that does
/// not hold or when anything fails: the caller then validates the merged row in full, which
/// gives the errors.
pub fn validate_update(
    model: &Model,
    base: &Map<String, Value>,
    updates: &[(&str, &Value)],
    ctx: Ctx<'_>,
) -> Option<Map<String, Value>> {
    let fields = &model.fields;
    if fields.len() > FAST_FIELDS
        || base.len() != fields.len()
        || !model.revalidates_to_itself()
        || !base.keys().zip(fields).all(|(k, f)| *k == f.name)
    {
        return None;
    }
    // The last value given for each field (a later update of a key replaces an earlier one).
    let mut given: [Option<&Value>; FAST_FIELDS] = [None; FAST_FIELDS];
    for (k, v) in updates {
        match fields.iter().position(|f| f.name == *k) {
            Some(i) => *given.get_mut(i)? = Some(*v),
            None if model.forbid_extra => return None,
            None => {}
        }
    }
    let mut out = base.clone();
    for (((_, slot), field), g) in out.iter_mut().zip(fields).zip(given) {
        if let Some(v) = g {
            *slot = validate(&field.kind, v, ctx).ok()?;
        }
    }
    Some(out)
}

/// [`validate_model`] by hashed key lookups (large models and inputs).
fn validate_model_keyed(
    model: &Model,
    obj: &Map<String, Value>,
    ctx: Ctx<'_>,
) -> Result<Map<String, Value>, Vec<ValidationError>> {
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
                    errors.push(ValidationError::new("Field required").at(&field.name));
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
            if let Value::Object(o) = v
                && alts.len() > 1
                && alts.len() <= FAST_ALTS
                && alts.iter().all(|a| matches!(a, Kind::Model(_)))
            {
                return validate_model_union(alts, o, v, ctx);
            }
            validate_union_in_order(alts, v, ctx)
        }
    }
}

/// A union the general way: every member in order (pydantic's smart mode: among model
/// matches the one with the most fields actually set wins; a scalar match is taken as is).
fn validate_union_in_order(
    alts: &[Kind],
    v: &Value,
    ctx: Ctx<'_>,
) -> Result<Value, Vec<ValidationError>> {
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

/// Unions of at most this many models take [`validate_model_union`].
const FAST_ALTS: usize = 16;

/// A union of models given an object, as the general loop in [`validate`] decides it
/// (pydantic's smart mode: of the members that validate, the one with the most input keys
/// among its fields wins, the first in order among equals; all fail: every member's errors
/// in order), but without validating members that cannot win: a member's score depends only
/// on the input's keys, so the members are tried by score, highest first (in order among
/// equals), and the first that validates is the winner.
fn validate_model_union(
    alts: &[Kind],
    o: &Map<String, Value>,
    v: &Value,
    ctx: Ctx<'_>,
) -> Result<Value, Vec<ValidationError>> {
    let mut order: [(usize, usize); FAST_ALTS] = [(0, 0); FAST_ALTS];
    for (i, (slot, alt)) in order.iter_mut().zip(alts).enumerate() {
        let score = match alt {
            Kind::Model(m) => o.keys().filter(|k| m.field(k).is_some()).count(),
            _ => 0,
        };
        *slot = (score, i);
    }
    let order = order.get_mut(..alts.len()).unwrap_or_default();
    // Stable: equal scores keep the members' order.
    order.sort_by_key(|a| std::cmp::Reverse(a.0));
    let mut failed: Vec<(usize, Vec<ValidationError>)> = Vec::new();
    for &(_, i) in order.iter() {
        let Some(alt) = alts.get(i) else { continue };
        match validate(alt, v, ctx) {
            Ok(x) => return Ok(x),
            Err(errs) => failed.push((i, errs)),
        }
    }
    failed.sort_by_key(|(i, _)| *i);
    let mut errors = Vec::new();
    for (i, errs) in failed {
        let tag = alts.get(i).map(union_tag).unwrap_or_default();
        errors.extend(errs.into_iter().map(|e| e.at(&tag)));
    }
    Err(errors)
}

/// The name pydantic puts in a union error's location for a member.
fn union_tag(kind: &Kind) -> String {
    match kind {
        Kind::Model(m) => m.name.clone(),
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
        scalar => scalar.scalar_name().unwrap_or_default().into(),
    }
}

/// `'a', 'b' or 'c'`, as pydantic lists enum choices.
pub fn enum_choices(values: &[String]) -> String {
    let quoted: Vec<String> = values.iter().map(|v| format!("'{v}'")).collect();
    match quoted.split_last() {
        None => String::new(),
        Some((last, [])) => last.clone(),
        Some((last, init)) => format!("{} or {last}", init.join(", ")),
    }
}

fn fmt_bound(b: f64) -> String {
    if b.fract() == 0.0 && b.abs() < 1e15 {
        #[allow(
            clippy::cast_possible_truncation,
            reason = "integral, |b| < 1e15: exact"
        )]
        let i = b as i64;
        format!("{i}")
    } else {
        float_repr(b)
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

/// pydantic-core's `strip_underscores`: single underscores between ASCII digits only.
fn strip_int_underscores(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    for (i, &c) in b.iter().enumerate() {
        if c == b'_' {
            let before = i
                .checked_sub(1)
                .and_then(|j| b.get(j))
                .is_some_and(u8::is_ascii_digit);
            let after = b.get(i + 1).is_some_and(u8::is_ascii_digit);
            if !(before && after) {
                return None;
            }
        } else {
            out.push(c as char);
        }
    }
    Some(out)
}

/// 2^63 as a float: whole floats in `[-2^63, 2^63)` convert to i64 exactly.
const I64_BOUND: f64 = 9_223_372_036_854_775_808.0;

const INT_PARSE: &str = "Input should be a valid integer, unable to parse string as an integer";

/// pydantic's `str -> int` in lax mode: trimmed, optional sign, ASCII digits, single
/// underscores between digits, a fraction of zeros only.
fn str_as_int(s: &str) -> Result<i64, String> {
    let t = s.trim();
    if t.len() > 4300 {
        return Err(
            "Unable to parse input string as an integer, exceeded maximum size".to_string(),
        );
    }
    let parse = |t: &str| -> Option<i64> {
        if let Ok(i) = t.parse::<i64>() {
            return Some(i);
        }
        strip_int_underscores(t)?.parse::<i64>().ok()
    };
    if let Some(i) = parse(t) {
        return Ok(i);
    }
    // `1.000` -> `1`: a fraction of zeros only.
    if let Some((int, frac)) = t.split_once('.')
        && !frac.is_empty()
        && frac.bytes().all(|c| c == b'0')
        && let Some(i) = parse(int)
    {
        return Ok(i);
    }
    Err(INT_PARSE.into())
}

fn coerce_int(v: &Value) -> Result<i64, String> {
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else if let Some(f) = n.as_f64() {
                if !f.is_finite() {
                    Err("Input should be a finite number".into())
                } else if f.fract() != 0.0 {
                    Err(
                        "Input should be a valid integer, got a number with a fractional part"
                            .into(),
                    )
                } else if (-I64_BOUND..I64_BOUND).contains(&f) {
                    // Python's `int(f)` of an integral float inside i64: exact.
                    #[allow(clippy::cast_possible_truncation, reason = "integral, in i64 range")]
                    let i = f as i64;
                    Ok(i)
                } else {
                    Err("Unable to parse input string as an integer, exceeded maximum size".into())
                }
            } else {
                Err("Input should be a valid integer".into())
            }
        }
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::String(s) => str_as_int(s),
        _ => Err("Input should be a valid integer".into()),
    }
}

fn coerce_float(v: &Value) -> Result<Value, String> {
    let f = match v {
        Value::Number(n) => n.as_f64().ok_or("Input should be a valid number")?,
        Value::Bool(b) => f64::from(u8::from(*b)),
        Value::String(s) => {
            let t = s.trim();
            let parsed = t.parse::<f64>().ok().or_else(|| {
                // Underscores as pydantic-core strips them: single, between digits.
                strip_int_underscores_in_float(t)?.parse::<f64>().ok()
            });
            parsed.ok_or_else(|| {
                "Input should be a valid number, unable to parse string as a number".to_string()
            })?
        }
        _ => return Err("Input should be a valid number".into()),
    };
    Number::from_f64(f)
        .map(Value::Number)
        .ok_or_else(|| "Input should be a finite number".into())
}

/// Like [`strip_int_underscores`], for the digits of a float literal.
fn strip_int_underscores_in_float(s: &str) -> Option<String> {
    if !s.contains('_') {
        return None;
    }
    strip_int_underscores(s)
}

fn coerce_bool(v: &Value) -> Result<bool, String> {
    match v {
        Value::Bool(b) => Ok(*b),
        Value::Number(n) => match n.as_i64() {
            Some(0) => Ok(false),
            Some(1) => Ok(true),
            Some(_) => Err("Input should be a valid boolean, unable to interpret input".into()),
            None => match n.as_f64() {
                Some(0.0) => Ok(false),
                Some(1.0) => Ok(true),
                // A whole float in i64 range is read as that integer.
                Some(x) if x.fract() == 0.0 && x.abs() < I64_BOUND => {
                    Err("Input should be a valid boolean, unable to interpret input".into())
                }
                _ => Err("Input should be a valid boolean".into()),
            },
        },
        // pydantic lowercases but does not strip.
        Value::String(s) => match s.to_lowercase().as_str() {
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
        Value::Number(n) if n.is_f64() => float_repr(n.as_f64().unwrap_or(0.0)),
        Value::Number(n) => n.to_string(),
        Value::String(s) => s.clone(),
        _ => {
            return Err(
                "Decimal input should be an integer, float, string or Decimal object".into(),
            );
        }
    };
    match tb_python::decimal::parse(&text) {
        Ok(d) => Ok(d.to_sci_string()),
        Err(ParseError::NonFinite) => Err("Input should be a finite number".into()),
        Err(ParseError::Invalid) => Err("Input should be a valid decimal".into()),
    }
}

fn speedate_config() -> speedate::DateTimeConfig {
    speedate::DateTimeConfig {
        timestamp_unit: speedate::TimestampUnit::Infer,
        time_config: speedate::TimeConfig {
            microseconds_precision_overflow_behavior:
                speedate::MicrosecondsPrecisionOverflowBehavior::Truncate,
            unix_timestamp_offset: Some(0),
        },
    }
}

fn speedate_doc(e: &speedate::ParseError) -> &'static str {
    use strum::EnumMessage;
    e.get_documentation().unwrap_or_default()
}

fn parts_of(dt: &speedate::DateTime) -> DateTimeParts {
    DateTimeParts {
        year: i32::from(dt.date.year),
        month: u32::from(dt.date.month),
        day: u32::from(dt.date.day),
        hour: u32::from(dt.time.hour),
        minute: u32::from(dt.time.minute),
        second: u32::from(dt.time.second),
        micro: dt.time.microsecond,
        offset: dt.time.tz_offset,
    }
}

/// How an input failed to become a date or datetime: a parsing error (pydantic's
/// `LineErrors` of the parsing kind, which the lax fallbacks rewrap) or a type error.
enum TemporalError {
    Parsing(&'static str),
    Type,
}

/// pydantic-core's `validate_datetime` on a JSON-loaded Python value (lax): strings by
/// speedate, numbers as Unix timestamps (seconds or milliseconds, inferred).
fn input_as_datetime(v: &Value) -> Result<speedate::DateTime, TemporalError> {
    let cfg = speedate_config();
    let r = match v {
        Value::String(s) => speedate::DateTime::parse_bytes_with_config(s.as_bytes(), &cfg),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                speedate::DateTime::from_timestamp_with_config(i, 0, &cfg)
            } else {
                let f = n.as_f64().unwrap_or(f64::NAN);
                if f.is_nan() {
                    return Err(TemporalError::Parsing("NaN values not permitted"));
                }
                speedate::DateTime::from_float_with_config(f, &cfg)
            }
        }
        _ => return Err(TemporalError::Type),
    };
    r.map_err(|e| TemporalError::Parsing(speedate_doc(&e)))
}

/// pydantic-core's `validate_date` (lax): strings only.
fn input_as_date(v: &Value) -> Result<speedate::Date, TemporalError> {
    match v {
        Value::String(s) => speedate::Date::parse_bytes_with_config(
            s.as_bytes(),
            &speedate::DateConfig {
                timestamp_unit: speedate::TimestampUnit::Infer,
            },
        )
        .map_err(|e| TemporalError::Parsing(speedate_doc(&e))),
        _ => Err(TemporalError::Type),
    }
}

/// A datetime field in lax mode, as pydantic validates it: a datetime, else a date at
/// midnight, with pydantic's messages.
pub fn validate_datetime(v: &Value) -> Result<DateTimeParts, String> {
    let dt = match input_as_datetime(v) {
        Ok(dt) => dt,
        Err(first) => match input_as_date(v) {
            Ok(d) => speedate::DateTime {
                date: d,
                time: speedate::Time {
                    hour: 0,
                    minute: 0,
                    second: 0,
                    microsecond: 0,
                    tz_offset: None,
                },
            },
            Err(TemporalError::Parsing(doc)) => {
                return Err(format!("Input should be a valid datetime or date, {doc}"));
            }
            Err(TemporalError::Type) => {
                return Err(match first {
                    TemporalError::Parsing(doc) => {
                        format!("Input should be a valid datetime, {doc}")
                    }
                    TemporalError::Type => "Input should be a valid datetime".into(),
                });
            }
        },
    };
    if dt.date.year == 0 {
        return Err("Input should be a valid datetime, year 0 is out of range".into());
    }
    Ok(parts_of(&dt))
}

/// A date field in lax mode, as pydantic validates it: a date, else a datetime with a zero
/// time, with pydantic's messages.
pub fn validate_date(v: &Value) -> Result<(i32, u32, u32), String> {
    let d = match input_as_date(v) {
        Ok(d) => d,
        Err(first) => match input_as_datetime(v) {
            Ok(dt) => {
                let t = dt.time;
                if t.hour != 0 || t.minute != 0 || t.second != 0 || t.microsecond != 0 {
                    return Err(
                        "Datetimes provided to dates should have zero time - e.g. be exact dates"
                            .into(),
                    );
                }
                dt.date
            }
            Err(TemporalError::Parsing(doc)) => {
                return Err(format!("Input should be a valid date or datetime, {doc}"));
            }
            Err(TemporalError::Type) => {
                return Err(match first {
                    TemporalError::Parsing(doc) => {
                        format!("Input should be a valid date in the format YYYY-MM-DD, {doc}")
                    }
                    TemporalError::Type => "Input should be a valid date".into(),
                });
            }
        },
    };
    if d.year == 0 {
        return Err(
            "Input should be a valid date in the format YYYY-MM-DD, year 0 is out of range".into(),
        );
    }
    Ok((i32::from(d.year), u32::from(d.month), u32::from(d.day)))
}

fn coerce_datetime(v: &Value) -> Result<String, String> {
    validate_datetime(v).map(|p| p.dump())
}

fn coerce_date(v: &Value) -> Result<String, String> {
    validate_date(v).map(|(y, m, d)| format!("{y:04}-{m:02}-{d:02}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::{Field, Kind};
    use serde_json::json;
    use std::sync::Arc;
    use tb_python::datetime::parse_datetime;

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
    fn multibyte_characters_anywhere_never_panic() {
        let base = "2025-10-01T13:00:05.123456+05:30";
        for (i, _) in base.char_indices() {
            for c in ["\u{e9}", "\u{65e5}", "\u{1d7d8}", "\u{2212}"] {
                let s = format!("{}{c}{}", &base[..i], &base[i + 1..]);
                let inserted = format!("{}{c}{}", &base[..i], &base[i..]);
                for text in [s, inserted] {
                    // As speedate and pydantic do, U+2212 MINUS SIGN is a zone sign.
                    if text == "2025-10-01T13:00:05.123456\u{2212}05:30" {
                        assert!(validate(&Kind::DateTime, &json!(text), CTX).is_ok());
                        continue;
                    }
                    for k in [
                        Kind::DateTime,
                        Kind::Date,
                        Kind::Decimal,
                        Kind::Int,
                        Kind::Float,
                    ] {
                        let r = validate(&k, &json!(text), CTX);
                        assert!(r.is_err(), "{k:?} {text:?} -> {r:?}");
                    }
                    assert_eq!(parse_datetime(&text), None, "{text:?}");
                }
            }
        }
    }

    fn kinds() -> Vec<Kind> {
        let bounded = Constraints {
            min_len: Some(1),
            max_len: Some(3),
            ge: Some(-1.5),
            lt: Some(1e20),
            ..Constraints::default()
        };
        vec![
            Kind::DateTime,
            Kind::Date,
            Kind::Decimal,
            Kind::Int,
            Kind::Float,
            Kind::Bool,
            Kind::Str,
            Kind::Enum(Arc::new(vec!["a".into(), "\u{e9}".into()])),
            Kind::Constrained(Box::new(Kind::Str), bounded.clone()),
            Kind::Constrained(Box::new(Kind::Int), bounded.clone()),
            Kind::Constrained(Box::new(Kind::Float), bounded),
        ]
    }

    proptest::proptest! {
        /// Any text a model sends, in any kind, is validated or refused, never a panic.
        #[test]
        fn any_text_never_panics(s in proptest::prelude::any::<String>()) {
            for k in kinds() {
                let _ = validate(&k, &json!(s), CTX);
            }
        }

        /// Text shaped like numbers, dates and decimals (where the parsers index and slice),
        /// with multibyte characters mixed in, never panics either.
        #[test]
        fn number_and_date_like_text_never_panics(
            s in "[-+0-9_.:eEtTzZ \u{e9}\u{2212}\u{1d7d8}\u{660}]{0,40}"
        ) {
            for k in kinds() {
                let _ = validate(&k, &json!(s), CTX);
            }
        }

        /// Any JSON number, in any kind, never panics.
        #[test]
        fn any_number_never_panics(f in proptest::num::f64::ANY, i in proptest::prelude::any::<i64>()) {
            for k in kinds() {
                let _ = validate(&k, &json!(f), CTX);
                let _ = validate(&k, &json!(i), CTX);
            }
        }
    }

    #[test]
    fn decimal_exponents_are_checked_not_wrapped() {
        let d = |v: &str| validate(&Kind::Decimal, &json!(v), CTX).map_err(|e| e[0].msg.clone());
        let invalid = Err("Input should be a valid decimal".to_string());
        assert_eq!(d("1e-9223372036854775808"), invalid);
        assert_eq!(d("1e9223372036854775807"), invalid);
        assert_eq!(d("1e-99999999999999999999999999999999"), invalid);
        assert_eq!(
            d("1E+999999999999999999"),
            Ok(json!("1E+999999999999999999"))
        );
        assert_eq!(
            d("1e-1999999999999999997"),
            Ok(json!("1E-1999999999999999997"))
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
            template: crate::schema::RowTemplate::default(),
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

    /// The row model of the update and fast-path property tests: `id` (str), `n` (int, 0),
    /// `at` (datetime, now), `tags` (list of str, []), `x` (optional float), with `id`'s and
    /// `x`'s defaults given.
    fn five_field_model(forbid: bool, id: Default, x: Default) -> Model {
        let f = |name: &str, kind: Kind, default: Default| Field {
            name: name.into(),
            kind,
            default,
            description: String::new(),
        };
        Model {
            name: "Row".into(),
            forbid_extra: forbid,
            description: String::new(),
            template: crate::schema::RowTemplate::default(),
            fields: vec![
                f("id", Kind::Str, id),
                f("n", Kind::Int, Default::Value(json!(0))),
                f("at", Kind::DateTime, Default::Now),
                f(
                    "tags",
                    Kind::List(Box::new(Kind::Str)),
                    Default::Value(json!([])),
                ),
                f("x", Kind::Optional(Box::new(Kind::Float)), x),
            ],
        }
    }

    proptest::proptest! {
        /// The template path (names compared, values set in place) gives what the keyed path
        /// gives: the same row, in the same order, or the same errors in the same order, for
        /// inputs with keys in any order, missing, invalid or extra.
        /// An update validated field by field over a validated row gives what validating the
        /// merged row in full gives, whenever it gives anything; it gives nothing only where
        /// the full validation fails, a field would not validate to itself or the row is not
        /// the model's dump.
        #[test]
        fn an_update_over_a_valid_row_equals_the_full_validation(
            base in proptest::collection::vec((0usize..5, 0usize..6), 0..6),
            updates in proptest::collection::vec((0usize..7, 0usize..6), 0..6),
            forbid in proptest::bool::ANY,
        ) {
            let m = five_field_model(forbid, Default::Value(json!("0")), Default::Value(Value::Null));
            let names = ["id", "n", "at", "tags", "x", "extra", "zz"];
            let values = [
                json!("7"),
                json!(3),
                json!("2025-10-01T13:00:05+00:00"),
                json!(["a"]),
                json!(2.5),
                json!("2.0"),
            ];
            let mut input = Map::new();
            for (k, v) in base {
                input.insert(names[k].to_string(), values[v].clone());
            }
            let Ok(row) = validate_model(&m, &Value::Object(input), CTX) else {
                return Ok(());
            };
            let ups: Vec<(&str, &Value)> =
                updates.iter().map(|&(k, v)| (names[k], &values[v])).collect();
            let mut merged = row.clone();
            for (k, v) in &ups {
                merged.insert((*k).to_string(), (*v).clone());
            }
            let full = validate_model(&m, &Value::Object(merged), CTX);
            match validate_update(&m, &row, &ups, CTX) {
                Some(got) => proptest::prop_assert_eq!(Ok(got), full),
                None => proptest::prop_assert!(full.is_err()),
            }
        }

        #[test]
        fn the_fast_path_equals_the_keyed_path(
            keys in proptest::collection::vec((0usize..7, 0usize..4), 0..10),
            forbid in proptest::bool::ANY,
        ) {
            let m = five_field_model(forbid, Default::Required, Default::Required);
            let names = ["id", "n", "at", "tags", "x", "extra", "zz"];
            let values = [json!("7"), json!(3), json!("2025-10-01T13:00:05+00:00"), json!(["a"])];
            let mut obj = Map::new();
            for (k, v) in keys {
                obj.insert(names[k].to_string(), values[v].clone());
            }
            let fast = validate_model(&m, &Value::Object(obj.clone()), CTX);
            let keyed = validate_model_keyed(&m, &obj, CTX);
            proptest::prop_assert_eq!(&fast, &keyed);
            if let Ok(row) = fast {
                let got: Vec<&String> = row.keys().collect();
                proptest::prop_assert_eq!(got, ["id", "n", "at", "tags", "x"]);
            }
        }
    }

    proptest::proptest! {
        /// A union of models given an object: trying the members by score (the fast path)
        /// picks what trying every member in order picks, or gives the same errors in the same
        /// order.
        #[test]
        fn the_union_by_score_equals_the_union_in_order(
            keys in proptest::collection::vec((0usize..6, 0usize..4), 0..8),
            forbid in proptest::collection::vec(proptest::bool::ANY, 3),
            required in proptest::collection::vec(proptest::bool::ANY, 3),
        ) {
            let f = |name: &str, kind: Kind, req: bool| Field {
                name: name.into(),
                kind,
                default: if req { Default::Required } else { Default::Value(Value::Null) },
                description: String::new(),
            };
            let model = |name: &str, fields: Vec<Field>, forbid: bool| {
                Kind::Model(Arc::new(Model {
                    name: name.into(),
                    forbid_extra: forbid,
                    description: String::new(),
                    template: crate::schema::RowTemplate::default(),
                    fields,
                }))
            };
            let alts = vec![
                model("A", vec![f("id", Kind::Str, required[0]), f("n", Kind::Int, false)], forbid[0]),
                model("B", vec![f("id", Kind::Str, false), f("t", Kind::Str, required[1]), f("n", Kind::Float, false)], forbid[1]),
                model("C", vec![f("n", Kind::Int, required[2]), f("t", Kind::Str, false), f("x", Kind::Bool, false)], forbid[2]),
            ];
            let names = ["id", "n", "t", "x", "extra", "zz"];
            let values = [json!("7"), json!(3), json!(2.5), json!([1])];
            let mut obj = Map::new();
            for (k, v) in keys {
                obj.insert(names[k].to_string(), values[v].clone());
            }
            let v = Value::Object(obj);
            let fast = validate(&Kind::Union(alts.clone()), &v, CTX);
            let slow = validate_union_in_order(&alts, &v, CTX);
            proptest::prop_assert_eq!(fast, slow);
        }
    }
}
