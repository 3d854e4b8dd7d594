//! Python's `decimal` module for what tb needs: `Decimal(text)` (CPython's parser, with
//! libmpdec's exponent limits), `str(Decimal)`, and [`Dec`], a small decimal with the default
//! context (28 significant digits, ROUND_HALF_EVEN) for the operations the booking tools use:
//! addition, subtraction, division by an integer, comparison and
//! `quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)`.
//!
//! [`Dec`]'s coefficient is a `u128` (up to 38 digits). `quantize` works on the digit string,
//! so it is exact for inputs of any length, as Python's is.

use std::cmp::Ordering;

/// Python's `str.isspace()`: Unicode White_Space plus the ASCII separators U+001C-U+001F.
pub fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c)
}

/// Code points of the Unicode decimal digit zeros (general category Nd, Unicode 14.0 as in
/// CPython 3.11): each starts a run of ten digits `0`-`9`.
const UNICODE_DIGIT_ZEROS: &[u32] = &[
    0x30, 0x660, 0x6F0, 0x7C0, 0x966, 0x9E6, 0xA66, 0xAE6, 0xB66, 0xBE6, 0xC66, 0xCE6, 0xD66,
    0xDE6, 0xE50, 0xED0, 0xF20, 0x1040, 0x1090, 0x17E0, 0x1810, 0x1946, 0x19D0, 0x1A80, 0x1A90,
    0x1B50, 0x1BB0, 0x1C40, 0x1C50, 0xA620, 0xA8D0, 0xA900, 0xA9D0, 0xA9F0, 0xAA50, 0xABF0, 0xFF10,
    0x104A0, 0x10D30, 0x11066, 0x110F0, 0x11136, 0x111D0, 0x112F0, 0x11450, 0x114D0, 0x11650,
    0x116C0, 0x11730, 0x118E0, 0x11950, 0x11C50, 0x11D50, 0x11DA0, 0x16A60, 0x16AC0, 0x16B50,
    0x1D7CE, 0x1D7D8, 0x1D7E2, 0x1D7EC, 0x1D7F6, 0x1E140, 0x1E2F0, 0x1E950, 0x1FBF0,
];

/// The value of a Unicode decimal digit (`unicodedata.decimal`), if `c` is one.
pub fn unicode_decimal(c: char) -> Option<u32> {
    let c = c as u32;
    let i = UNICODE_DIGIT_ZEROS.partition_point(|z| *z <= c);
    let zero = UNICODE_DIGIT_ZEROS.get(i.checked_sub(1)?)?;
    (c - zero < 10).then_some(c - zero)
}

/// Why a text is not a finite Python `Decimal`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// `decimal.InvalidOperation` from the constructor.
    Invalid,
    /// A valid `Infinity` or `NaN`.
    NonFinite,
}

/// A finite decimal: sign, coefficient digits (no leading zeros; `"0"` for zero), exponent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PyDecimal {
    /// Negative (also for `-0`).
    pub negative: bool,
    /// ASCII digits of the coefficient.
    pub digits: String,
    /// The exponent of the last digit.
    pub exponent: i128,
}

// libmpdec's limits on 64-bit builds (what CPython's `decimal` checks a literal against).
const MPD_MAX_EMAX: i128 = 999_999_999_999_999_999;
const MPD_MIN_ETINY: i128 = -999_999_999_999_999_999 - (999_999_999_999_999_999 - 1);

/// Python's `Decimal(text)`: surrounding whitespace stripped, underscores dropped, any
/// Unicode decimal digit read as its ASCII digit, then the IBM syntax with libmpdec's
/// exponent limits. Never panics, whatever the text; all arithmetic is checked.
pub fn parse(text: &str) -> Result<PyDecimal, ParseError> {
    use ParseError::Invalid;
    let t = text.trim_matches(is_py_space);
    let mut ascii = String::with_capacity(t.len());
    for c in t.chars() {
        if c == '_' {
            continue;
        }
        if c.is_ascii() && !is_py_space(c) {
            ascii.push(c);
        } else if let Some(d) = unicode_decimal(c) {
            ascii.push(char::from_digit(d, 10).ok_or(Invalid)?);
        } else {
            return Err(Invalid);
        }
    }
    let lower = ascii.to_ascii_lowercase();
    let (negative, body) = match lower.as_bytes().first() {
        Some(b'-') => (true, &lower[1..]),
        Some(b'+') => (false, &lower[1..]),
        _ => (false, lower.as_str()),
    };
    if body == "inf" || body == "infinity" {
        return Err(ParseError::NonFinite);
    }
    for nan in ["snan", "nan"] {
        if let Some(payload) = body.strip_prefix(nan) {
            return if payload.bytes().all(|b| b.is_ascii_digit()) {
                Err(ParseError::NonFinite)
            } else {
                Err(Invalid)
            };
        }
    }
    let (mant, exp) = match body.split_once('e') {
        Some((m, e)) => {
            let (eneg, edigits) = match e.as_bytes().first() {
                Some(b'-') => (true, &e[1..]),
                Some(b'+') => (false, &e[1..]),
                _ => (false, e),
            };
            if edigits.is_empty() || !edigits.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Invalid);
            }
            let edigits = edigits.trim_start_matches('0');
            // Beyond 30 digits the exponent is out of any limit below.
            if edigits.len() > 30 {
                return Err(Invalid);
            }
            let v: i128 = if edigits.is_empty() {
                0
            } else {
                edigits.parse().map_err(|_| Invalid)?
            };
            (m, if eneg { -v } else { v })
        }
        None => (body, 0),
    };
    let (int_part, frac_part) = mant.split_once('.').unwrap_or((mant, ""));
    if int_part.is_empty() && frac_part.is_empty() {
        return Err(Invalid);
    }
    if !int_part
        .bytes()
        .chain(frac_part.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return Err(Invalid);
    }
    let all = format!("{int_part}{frac_part}");
    let digits = all.trim_start_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    let exponent = exp
        .checked_sub(i128::try_from(frac_part.len()).map_err(|_| Invalid)?)
        .ok_or(Invalid)?;
    let n = i128::try_from(digits.len()).map_err(|_| Invalid)?;
    let adjusted = exponent.checked_add(n - 1).ok_or(Invalid)?;
    if adjusted > MPD_MAX_EMAX || exponent < MPD_MIN_ETINY {
        return Err(Invalid);
    }
    Ok(PyDecimal {
        negative,
        digits: digits.to_string(),
        exponent,
    })
}

impl PyDecimal {
    /// `str(Decimal)`: `to-sci-string` of the IBM spec.
    pub fn to_sci_string(&self) -> String {
        let digits = self.digits.as_str();
        let exponent = self.exponent;
        let n = digits.len() as i128;
        let adjusted = exponent + n - 1;
        let mut out = String::new();
        if self.negative {
            out.push('-');
        }
        if exponent <= 0 && adjusted >= -6 {
            if exponent == 0 {
                out.push_str(digits);
            } else {
                // Here -exponent <= n + 6, so these fit in usize.
                let point = n + exponent; // digits before the point
                if let Some((int, frac)) = usize::try_from(point)
                    .ok()
                    .filter(|p| *p > 0)
                    .and_then(|p| digits.split_at_checked(p))
                {
                    out.push_str(int);
                    out.push('.');
                    out.push_str(frac);
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
            out.push_str(&adjusted.unsigned_abs().to_string());
        }
        out
    }
}

/// Python `str(Decimal(text))` for finite decimals; None for anything else.
pub fn decimal_to_string(text: &str) -> Option<String> {
    parse(text).ok().map(|d| d.to_sci_string())
}

/// Python's default context precision.
const PREC: u32 = 28;
/// [`PREC`] as a length of digit text.
const PREC_LEN: usize = PREC as usize;

/// Errors of decimal operations, with the text Python's `str(exception)` gives.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DecimalError {
    /// `decimal.InvalidOperation` (e.g. a quantize whose result needs more than 28 digits).
    #[error("[<class 'decimal.InvalidOperation'>]")]
    InvalidOperation,
    /// `decimal.ConversionSyntax` (text that is not a number).
    #[error("[<class 'decimal.ConversionSyntax'>]")]
    ConversionSyntax,
    /// A value beyond what this implementation holds (more than 38 digits).
    #[error("[<class 'decimal.Overflow'>]")]
    Overflow,
}

/// A finite decimal: `(-1)^neg * coef * 10^exp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dec {
    /// Sign (true for negative, also for -0).
    pub neg: bool,
    /// Coefficient.
    pub coef: u128,
    /// Exponent.
    pub exp: i64,
}

/// Sign, digit string (no leading zeros except a lone "0") and exponent of a decimal text, as
/// Python's `Decimal(text)` reads it ([`parse`]). libmpdec's exponent limits keep every
/// exponent within about +-2e18, so later sums and differences of exponents stay inside i64.
fn parts(text: &str) -> Result<(bool, String, i64), DecimalError> {
    let d = parse(text).map_err(|e| match e {
        ParseError::Invalid => DecimalError::ConversionSyntax,
        // `Infinity`/`NaN` are decimals, but none of the operations here accepts them.
        ParseError::NonFinite => DecimalError::InvalidOperation,
    })?;
    let exp = i64::try_from(d.exponent).map_err(|_| DecimalError::ConversionSyntax)?;
    Ok((d.negative, d.digits, exp))
}

/// Adds one to a decimal digit string.
fn increment(digits: &str) -> String {
    let mut bytes: Vec<u8> = digits.bytes().collect();
    let mut i = bytes.len();
    loop {
        if i == 0 {
            bytes.insert(0, b'1');
            break;
        }
        i -= 1;
        if bytes[i] == b'9' {
            bytes[i] = b'0';
        } else {
            bytes[i] += 1;
            break;
        }
    }
    String::from_utf8(bytes).unwrap_or_default()
}

impl Dec {
    /// Zero with exponent 0.
    pub const ZERO: Dec = Dec {
        neg: false,
        coef: 0,
        exp: 0,
    };

    /// Parses Python decimal text (`"450"`, `"457.5"`, `"1E+3"`, `"-0.50"`).
    pub fn parse(text: &str) -> Result<Dec, DecimalError> {
        let (neg, digits, exp) = parts(text)?;
        Self::from_parts(neg, &digits, exp)
    }

    fn from_parts(neg: bool, digits: &str, exp: i64) -> Result<Dec, DecimalError> {
        let coef = digits.parse::<u128>().map_err(|_| DecimalError::Overflow)?;
        Ok(Dec { neg, coef, exp })
    }

    /// An integer.
    pub fn from_int(n: i64) -> Dec {
        Dec {
            neg: n < 0,
            coef: u128::from(n.unsigned_abs()),
            exp: 0,
        }
    }

    /// Whether the value is zero (either sign).
    pub fn is_zero(&self) -> bool {
        self.coef == 0
    }

    /// Python `str(Decimal)`.
    pub fn to_py_string(&self) -> String {
        let text = format!(
            "{}{}E{}",
            if self.neg { "-" } else { "" },
            self.coef,
            self.exp
        );
        decimal_to_string(&text).unwrap_or(text)
    }

    fn digits_len(c: u128) -> u32 {
        c.checked_ilog10().map_or(1, |l| l + 1)
    }

    /// Rounds to the context precision (28 digits, half-even), as every arithmetic result is.
    fn round_to_context(self) -> Dec {
        let n = Self::digits_len(self.coef);
        if n <= PREC {
            return self;
        }
        let drop = n - PREC;
        let p = 10u128.pow(drop);
        let (q, r) = (self.coef / p, self.coef % p);
        let half = p / 2;
        let up = r > half || (r == half && q % 2 == 1);
        let mut d = Dec {
            neg: self.neg,
            coef: q + u128::from(up),
            exp: self.exp + i64::from(drop),
        };
        if Self::digits_len(d.coef) > PREC {
            d.coef /= 10;
            d.exp += 1;
        }
        d
    }

    /// Both coefficients at the smaller exponent.
    fn aligned(a: &Dec, b: &Dec) -> Result<(u128, u128, i64), DecimalError> {
        let e = a.exp.min(b.exp);
        let scale = |d: &Dec| -> Result<u128, DecimalError> {
            let k = u32::try_from(d.exp - e).map_err(|_| DecimalError::Overflow)?;
            10u128
                .checked_pow(k)
                .and_then(|p| d.coef.checked_mul(p))
                .ok_or(DecimalError::Overflow)
        };
        Ok((scale(a)?, scale(b)?, e))
    }

    /// `self + other`.
    pub fn add(&self, other: &Dec) -> Result<Dec, DecimalError> {
        let (x, y, exp) = Self::aligned(self, other)?;
        let d = if self.neg == other.neg {
            Dec {
                neg: self.neg,
                coef: x.checked_add(y).ok_or(DecimalError::Overflow)?,
                exp,
            }
        } else {
            match x.cmp(&y) {
                Ordering::Greater => Dec {
                    neg: self.neg,
                    coef: x - y,
                    exp,
                },
                Ordering::Less => Dec {
                    neg: other.neg,
                    coef: y - x,
                    exp,
                },
                // An exact zero sum of opposite signs is +0 under ROUND_HALF_EVEN.
                Ordering::Equal => Dec {
                    neg: false,
                    coef: 0,
                    exp,
                },
            }
        };
        Ok(d.round_to_context())
    }

    /// `self - other`.
    pub fn sub(&self, other: &Dec) -> Result<Dec, DecimalError> {
        self.add(&Dec {
            neg: !other.neg,
            ..*other
        })
    }

    /// `self / n` for a positive integer `n`, rounded to 28 digits (half-even); an exact
    /// quotient keeps the ideal exponent where it can, as Python does.
    pub fn div_int(&self, n: u64) -> Result<Dec, DecimalError> {
        if n == 0 {
            return Err(DecimalError::InvalidOperation);
        }
        let n = u128::from(n);
        if self.coef == 0 {
            return Ok(Dec {
                neg: self.neg,
                coef: 0,
                exp: self.exp,
            });
        }
        // Long division: scale the dividend until the quotient has more than PREC digits or is exact.
        let mut coef = self.coef;
        let mut exp = self.exp;
        loop {
            let q = coef / n;
            let r = coef % n;
            if r == 0 && q != 0 {
                // Exact: strip trailing zeros back towards the ideal exponent.
                let mut d = Dec {
                    neg: self.neg,
                    coef: q,
                    exp,
                };
                while d.exp < self.exp && d.coef.is_multiple_of(10) {
                    d.coef /= 10;
                    d.exp += 1;
                }
                return Ok(d.round_to_context());
            }
            if Self::digits_len(q) > PREC {
                // Round q (with a sticky remainder) to PREC digits, half-even.
                let drop = Self::digits_len(q) - PREC;
                let p = 10u128.pow(drop);
                let (hi, lo) = (q / p, q % p);
                let half = p / 2;
                let up = lo > half || (lo == half && (r != 0 || hi % 2 == 1));
                let mut d = Dec {
                    neg: self.neg,
                    coef: hi + u128::from(up),
                    exp: exp + i64::from(drop),
                };
                if Self::digits_len(d.coef) > PREC {
                    d.coef /= 10;
                    d.exp += 1;
                }
                return Ok(d);
            }
            coef = coef.checked_mul(10).ok_or(DecimalError::Overflow)?;
            exp -= 1;
        }
    }

    /// Numeric comparison (ignoring exponents; -0 == 0).
    pub fn cmp_value(&self, other: &Dec) -> Ordering {
        if self.is_zero() && other.is_zero() {
            return Ordering::Equal;
        }
        let sa = if self.is_zero() {
            0
        } else if self.neg {
            -1
        } else {
            1
        };
        let sb = if other.is_zero() {
            0
        } else if other.neg {
            -1
        } else {
            1
        };
        if sa != sb {
            return sa.cmp(&sb);
        }
        let mag = if let Ok((x, y, _)) = Self::aligned(self, other) {
            x.cmp(&y)
        } else {
            // Too far apart to align: the one with the larger adjusted exponent is larger.
            let adj = |d: &Dec| d.exp + i64::from(Self::digits_len(d.coef));
            adj(self).cmp(&adj(other))
        };
        if sa < 0 { mag.reverse() } else { mag }
    }

    /// `quantize(Decimal("1E<exp>"), rounding=ROUND_HALF_UP)`.
    pub fn quantize_half_up(&self, exp: i64) -> Result<Dec, DecimalError> {
        let (neg, digits, e) = (self.neg, self.coef.to_string(), self.exp);
        quantize_digits(neg, &digits, e, exp).and_then(|(n, d, x)| Self::from_parts(n, &d, x))
    }
}

/// Quantize on a digit string: result digits and exponent, or InvalidOperation when the result
/// would need more than 28 digits.
fn quantize_digits(
    neg: bool,
    digits: &str,
    exp: i64,
    target: i64,
) -> Result<(bool, String, i64), DecimalError> {
    if digits == "0" {
        return Ok((neg, "0".to_string(), target));
    }
    let out = if target <= exp {
        let zeros = usize::try_from(exp - target).map_err(|_| DecimalError::InvalidOperation)?;
        if zeros > PREC_LEN + 1 {
            return Err(DecimalError::InvalidOperation);
        }
        format!("{digits}{}", "0".repeat(zeros))
    } else {
        let drop = usize::try_from(target - exp).map_err(|_| DecimalError::InvalidOperation)?;
        if drop > digits.len() {
            // Every digit is dropped and the first dropped one is a leading zero: rounds to 0.
            "0".to_string()
        } else {
            let (keep, gone) = digits.split_at(digits.len() - drop);
            let keep = if keep.is_empty() { "0" } else { keep };
            if gone.as_bytes().first().is_some_and(|b| *b >= b'5') {
                increment(keep)
            } else {
                keep.to_string()
            }
        }
    };
    let trimmed = out.trim_start_matches('0');
    let trimmed = if trimmed.is_empty() { "0" } else { trimmed };
    if trimmed.len() > PREC_LEN {
        return Err(DecimalError::InvalidOperation);
    }
    Ok((neg, trimmed.to_string(), target))
}

/// `str(Decimal(text).quantize(Decimal("1E<target>"), rounding=ROUND_HALF_UP))` for decimal text
/// of any length.
pub fn quantize_text(text: &str, target: i64) -> Result<String, DecimalError> {
    let (neg, digits, exp) = parts(text)?;
    let (neg, digits, exp) = quantize_digits(neg, &digits, exp, target)?;
    let t = format!("{}{}E{}", if neg { "-" } else { "" }, digits, exp);
    Ok(decimal_to_string(&t).unwrap_or(t))
}

/// Sign of decimal text of any length: -1, 0 or 1.
pub fn signum_text(text: &str) -> Result<i32, DecimalError> {
    let (neg, digits, _) = parts(text)?;
    Ok(if digits == "0" {
        0
    } else if neg {
        -1
    } else {
        1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Dec {
        Dec::parse(s).unwrap()
    }

    #[test]
    fn exponents_near_the_i64_limits_are_errors_not_wraps() {
        for t in [
            "1e-9223372036854775808",
            "1e9223372036854775807",
            "1.5e-9223372036854775807",
            "5e-4000000000000000001",
        ] {
            assert_eq!(Dec::parse(t), Err(DecimalError::ConversionSyntax), "{t}");
        }
        // The extremes that parse (libmpdec's Etiny and Emax): aligning them is refused, never
        // an overflow panic (debug builds panic on overflow, so this fails if it wraps).
        let a = d("1e-1999999999999999997");
        let b = d("1e999999999999999999");
        assert_eq!(a.add(&b).err(), Some(DecimalError::Overflow));
    }

    #[test]
    fn text_follows_python() {
        let s = |t: &str| decimal_to_string(t);
        assert_eq!(s("1e-9223372036854775808"), None);
        assert_eq!(s("1e9223372036854775807"), None);
        assert_eq!(
            s("1E+999999999999999999").as_deref(),
            Some("1E+999999999999999999")
        );
        assert_eq!(
            s("1e-1999999999999999997").as_deref(),
            Some("1E-1999999999999999997")
        );
        assert_eq!(s("1e-1999999999999999998"), None);
        assert_eq!(s("0.0000001").as_deref(), Some("1E-7"));
        assert_eq!(s(" 1_000.50 ").as_deref(), Some("1000.50"));
        assert_eq!(s("\u{661}\u{662}").as_deref(), Some("12"));
        assert_eq!(s("-0.50").as_deref(), Some("-0.50"));
        assert_eq!(s(".5").as_deref(), Some("0.5"));
        assert_eq!(parse("Infinity"), Err(ParseError::NonFinite));
        assert_eq!(parse("-sNaN12"), Err(ParseError::NonFinite));
        assert_eq!(parse("NaNx"), Err(ParseError::Invalid));
        assert_eq!(parse("1e"), Err(ParseError::Invalid));
        assert!(is_py_space('\u{1c}') && is_py_space('\u{a0}') && !is_py_space('x'));
        assert_eq!(unicode_decimal('\u{ff19}'), Some(9));
        assert_eq!(unicode_decimal('a'), None);
    }

    #[test]
    fn non_finite_text_is_refused_by_the_operations() {
        assert_eq!(Dec::parse("Infinity"), Err(DecimalError::InvalidOperation));
        assert_eq!(
            quantize_text("abc", -2),
            Err(DecimalError::ConversionSyntax)
        );
    }

    #[test]
    fn arithmetic_matches_python() {
        assert_eq!(
            d("457.5").add(&d("105.00")).unwrap().to_py_string(),
            "562.50"
        );
        assert_eq!(
            d("450.00").sub(&d("450.00")).unwrap().to_py_string(),
            "0.00"
        );
        assert_eq!(
            d("450").sub(&d("562.50")).unwrap().to_py_string(),
            "-112.50"
        );
        assert_eq!(d("0").add(&d("250.00")).unwrap().to_py_string(), "250.00");
        assert_eq!(d("1E+3").to_py_string(), "1E+3");
        assert_eq!(
            d("1E+3").quantize_half_up(-2).unwrap().to_py_string(),
            "1000.00"
        );
        assert_eq!(
            d("10").div_int(3).unwrap().to_py_string(),
            "3.333333333333333333333333333"
        );
        assert_eq!(d("10.00").div_int(2).unwrap().to_py_string(), "5.00");
        assert_eq!(d("1").div_int(4).unwrap().to_py_string(), "0.25");
        assert_eq!(
            d("2").div_int(3).unwrap().to_py_string(),
            "0.6666666666666666666666666667"
        );
        assert_eq!(
            d("0.125").quantize_half_up(-2).unwrap().to_py_string(),
            "0.13"
        );
        assert_eq!(
            d("-0.125").quantize_half_up(-2).unwrap().to_py_string(),
            "-0.13"
        );
        assert_eq!(
            d("-0.001").quantize_half_up(-2).unwrap().to_py_string(),
            "-0.00"
        );
        assert_eq!(d("0").quantize_half_up(-2).unwrap().to_py_string(), "0.00");
        assert_eq!(
            d("99.995").quantize_half_up(-2).unwrap().to_py_string(),
            "100.00"
        );
        assert_eq!(d("100").cmp_value(&d("100.00")), Ordering::Equal);
        assert_eq!(d("-1").cmp_value(&d("0")), Ordering::Less);
    }

    #[test]
    fn quantize_limits_and_long_inputs() {
        assert_eq!(
            quantize_text("1E+26", -2),
            Err(DecimalError::InvalidOperation)
        );
        assert_eq!(
            quantize_text("1E+25", -2).unwrap(),
            "10000000000000000000000000.00"
        );
        assert_eq!(
            quantize_text("0.0000000000000000000000000000000000000000001", -2).unwrap(),
            "0.00"
        );
        assert_eq!(
            quantize_text("12.345678901234567890123456789012345678901234", -2).unwrap(),
            "12.35"
        );
        assert_eq!(signum_text("-0.00").unwrap(), 0);
        assert_eq!(
            signum_text("0.0000000000000000000000000000000000000000001").unwrap(),
            1
        );
        assert_eq!(
            quantize_text("abc", -2),
            Err(DecimalError::ConversionSyntax)
        );
    }
}
