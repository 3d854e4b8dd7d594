//! Text formatting: `%` on strings, `format()` specs, `ascii()` and `str.format`.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) fn percent_format(fmt: &str, args: &Value) -> R<Value> {
    // A tuple gives the arguments one by one; any other value is the one argument. A
    // mapping (or any value with items, as CPython sees a list) may go unused.
    let (args, unused_ok): (Vec<Value>, bool) = match args {
        Value::Tuple(t) => (t.to_vec(), false),
        other => (
            vec![other.clone()],
            matches!(other, Value::Dict(_) | Value::List(_)),
        ),
    };
    let mut out = String::new();
    let mut it = args.iter();
    let mut next = || -> R<&Value> {
        match it.next() {
            Some(v) => Ok(v),
            None => raise(ExcKind::TypeError, "not enough arguments for format string"),
        }
    };
    let mut used = 0usize;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('%') => out.push('%'),
            Some('s') => {
                out.push_str(&to_str(next()?));
                used += 1;
            }
            Some('r') => {
                out.push_str(&repr(next()?));
                used += 1;
            }
            Some(conv @ ('d' | 'i')) => {
                let v = next()?;
                used += 1;
                match v {
                    Value::Float(f) if f.is_finite() => {
                        // The integer part exactly, as CPython's int(f) gives it.
                        let t = f.trunc();
                        if t == 0.0 {
                            out.push('0');
                        } else {
                            out.push_str(&format!("{t:.0}"));
                        }
                    }
                    Value::Float(_) => {
                        return raise(
                            ExcKind::OverflowError,
                            "cannot convert float infinity or NaN to integer",
                        );
                    }
                    v => match as_int(v) {
                        Some(i) => out.push_str(&i.to_string()),
                        None => {
                            return raise(
                                ExcKind::TypeError,
                                format!(
                                    "%{conv} format: a real number is required, not {}",
                                    v.type_name()
                                ),
                            );
                        }
                    },
                }
            }
            _ => {
                return raise(
                    ExcKind::NotImplementedError,
                    "this %-format is not supported",
                );
            }
        }
    }
    if used < args.len() && !unused_ok {
        return raise(
            ExcKind::TypeError,
            "not all arguments converted during string formatting",
        );
    }
    Ok(Value::str(&out))
}

/// `ascii()` of an already repr'd text: non-ASCII as escapes.
pub fn ascii(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        let u = c as u32;
        if u < 0x80 {
            out.push(c);
        } else if u <= 0xff {
            out.push_str(&format!("\\x{u:02x}"));
        } else if u <= 0xffff {
            out.push_str(&format!("\\u{u:04x}"));
        } else {
            out.push_str(&format!("\\U{u:08x}"));
        }
    }
    out
}

/// The decimal number at `chars[*i..]` (0 where there is none, saturating), moving `i` past it.
fn digits(chars: &[char], i: &mut usize) -> usize {
    let mut n = 0usize;
    while *i < chars.len() && chars[*i].is_ascii_digit() {
        n = n
            .saturating_mul(10)
            .saturating_add(chars[*i] as usize - '0' as usize);
        *i += 1;
    }
    n
}

/// `format(v, spec)` for the format-spec subset: `[[fill]align][sign][0][width][,][.prec][type]`.
pub fn format_value(v: &Value, spec: &str) -> R<String> {
    if spec.is_empty() {
        return Ok(to_str(v));
    }
    let chars: Vec<char> = spec.chars().collect();
    let mut i = 0;
    let mut fill = ' ';
    let mut align = None;
    if chars.len() >= 2 && matches!(chars[1], '<' | '>' | '^' | '=') {
        fill = chars[0];
        align = Some(chars[1]);
        i = 2;
    } else if !chars.is_empty() && matches!(chars[0], '<' | '>' | '^' | '=') {
        align = Some(chars[0]);
        i = 1;
    }
    let mut sign = '-';
    if i < chars.len() && matches!(chars[i], '+' | '-' | ' ') {
        sign = chars[i];
        i += 1;
    }
    if i < chars.len() && chars[i] == '0' {
        if align.is_none() {
            fill = '0';
            align = Some('=');
        }
        i += 1;
    }
    let width = digits(&chars, &mut i);
    let mut grouping = false;
    if i < chars.len() && chars[i] == ',' {
        grouping = true;
        i += 1;
    }
    let mut precision = None;
    if i < chars.len() && chars[i] == '.' {
        i += 1;
        precision = Some(digits(&chars, &mut i).min(100));
    }
    let ty = chars.get(i).copied();
    if i + usize::from(ty.is_some()) != chars.len() || width > 10_000 {
        return raise(
            ExcKind::ValueError,
            format!("Invalid format specifier '{spec}'"),
        );
    }
    let (body, numeric) = match (ty, v) {
        (None | Some('s'), Value::Str(s)) => {
            let s: String = match precision {
                Some(p) => s.chars().take(p).collect(),
                None => s.to_string(),
            };
            (s, false)
        }
        (None | Some('d'), Value::Int(_) | Value::Bool(_)) if precision.is_none() => {
            let n = as_int(v).unwrap_or(0);
            (group(&n.unsigned_abs().to_string(), grouping), true)
        }
        (Some('g' | 'G' | 'e' | 'E'), _) | (None, Value::Float(_))
            if as_f64(v).is_some() && (ty.is_some() || precision.is_some()) =>
        {
            let f = as_f64(v).unwrap_or(0.0).abs();
            let upper = matches!(ty, Some('G' | 'E'));
            let text = match ty {
                Some('e' | 'E') => exp_format(f, precision.unwrap_or(6), false),
                _ => general_format(f, precision.unwrap_or(6), ty.is_none()),
            };
            let (int_part, rest) = match text.find(['.', 'e']) {
                Some(at) => (text.get(..at).unwrap_or(""), text.get(at..).unwrap_or("")),
                None => (text.as_str(), ""),
            };
            let s = format!("{}{rest}", group(int_part, grouping));
            (if upper { s.to_uppercase() } else { s }, true)
        }
        (Some('f' | 'F' | '%'), _) | (None, Value::Float(_)) if as_f64(v).is_some() => {
            let mut f = as_f64(v).unwrap_or(0.0);
            if ty == Some('%') {
                f *= 100.0;
            }
            let text = match (ty, precision) {
                (None, None) => tb_python::float_repr(f.abs()),
                (_, p) => format!("{:.*}", p.unwrap_or(6), f.abs()),
            };
            let (int_part, rest) = match text.find(['.', 'e']) {
                Some(at) => (text.get(..at).unwrap_or(""), text.get(at..).unwrap_or("")),
                None => (text.as_str(), ""),
            };
            let mut s = group(int_part, grouping);
            s.push_str(rest);
            if ty == Some('%') {
                s.push('%');
            }
            (s, true)
        }
        _ => {
            return raise(
                ExcKind::ValueError,
                format!("Unknown format code for object of type '{}'", v.type_name()),
            );
        }
    };
    let negative = numeric
        && as_f64(v).is_some_and(|f| {
            f < 0.0 || (f == 0.0 && f.is_sign_negative() && matches!(v, Value::Float(_)))
        });
    let sign_text = if !numeric {
        ""
    } else if negative {
        "-"
    } else if sign == '+' {
        "+"
    } else if sign == ' ' {
        " "
    } else {
        ""
    };
    let len = sign_text.chars().count() + body.chars().count();
    let pad = width.saturating_sub(len);
    let fills = |n: usize| std::iter::repeat_n(fill, n).collect::<String>();
    let align = align.unwrap_or(if numeric { '>' } else { '<' });
    Ok(match align {
        '<' => format!("{sign_text}{body}{}", fills(pad)),
        '^' => format!(
            "{}{sign_text}{body}{}",
            fills(pad / 2),
            fills(pad - pad / 2)
        ),
        '=' => format!("{sign_text}{}{body}", fills(pad)),
        _ => format!("{}{sign_text}{body}", fills(pad)),
    })
}

/// `format(f, '.{p}e')` of a non-negative float: `d.ddde+XX` (CPython's exponent has at
/// least two digits); `strip` drops trailing zeros of the mantissa.
pub(super) fn exp_format(f: f64, p: usize, strip: bool) -> String {
    if !f.is_finite() {
        return tb_python::float_repr(f);
    }
    let text = format!("{f:.p$e}");
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let mut mantissa = mantissa.to_string();
    if strip && mantissa.contains('.') {
        mantissa = mantissa
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string();
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exp.unsigned_abs())
}

/// The general format of a non-negative float with `p` significant digits: `format(f,
/// '.{p}g')`, or with `repr_like` the format without a type (`f'{f:.2}'`), which switches
/// to the exponent one digit earlier and keeps a digit after the point.
pub(super) fn general_format(f: f64, p: usize, repr_like: bool) -> String {
    if !f.is_finite() {
        return tb_python::float_repr(f);
    }
    let p = p.max(1);
    let sci = format!("{f:.*e}", p - 1);
    let exp: i64 = sci
        .split_once('e')
        .and_then(|(_, e)| e.parse().ok())
        .unwrap_or(0);
    let p_i = i64::try_from(p).unwrap_or(i64::MAX);
    let limit = if repr_like { p_i - 1 } else { p_i };
    if exp < -4 || exp >= limit {
        return exp_format(f, p - 1, true);
    }
    let decimals = usize::try_from(p_i - 1 - exp).unwrap_or(0);
    let mut text = format!("{f:.decimals$}");
    if text.contains('.') {
        text = text.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if repr_like && !text.contains('.') {
        text.push_str(".0");
    }
    text
}

pub(super) fn group(digits: &str, grouping: bool) -> String {
    if !grouping {
        return digits.to_string();
    }
    let mut out = String::new();
    let n = digits.len();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (n - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `str.format` with `{}`, `{0}`, `{name}`, `{!r}` and simple format specs.
pub(super) fn str_format(fmt: &str, args: &[Value], kwargs: &[(String, Value)]) -> R<Value> {
    let mut out = String::new();
    let mut auto = 0usize;
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                out.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                out.push('}');
            }
            '{' => {
                let mut field = String::new();
                let mut closed = false;
                for d in chars.by_ref() {
                    if d == '}' {
                        closed = true;
                        break;
                    }
                    field.push(d);
                }
                if !closed {
                    return raise(
                        ExcKind::ValueError,
                        "Single '{' encountered in format string",
                    );
                }
                let (head, spec) = field.split_once(':').unwrap_or((&field, ""));
                let (name, conv) = head.split_once('!').unwrap_or((head, ""));
                let value = if name.is_empty() {
                    let v = args.get(auto).cloned();
                    auto += 1;
                    v
                } else if let Ok(i) = name.parse::<usize>() {
                    args.get(i).cloned()
                } else {
                    kwargs
                        .iter()
                        .find(|(k, _)| k == name)
                        .map(|(_, v)| v.clone())
                };
                let Some(value) = value else {
                    return raise(ExcKind::KeyError, repr(&Value::str(name)));
                };
                let value = match conv {
                    "" => value,
                    "r" => Value::str(&repr(&value)),
                    "s" => Value::str(&to_str(&value)),
                    _ => {
                        return raise(
                            ExcKind::ValueError,
                            format!("Unknown conversion specifier {conv}"),
                        );
                    }
                };
                out.push_str(&format_value(&value, spec)?);
            }
            '}' => {
                return raise(
                    ExcKind::ValueError,
                    "Single '}' encountered in format string",
                );
            }
            c => out.push(c),
        }
    }
    Ok(Value::str(&out))
}
