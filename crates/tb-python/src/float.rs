//! Python's `repr(float)`, the float text `json.dumps` writes, and float `divmod`.

use std::fmt::Write as _;

/// Python's `repr(float)` (also `str(float)`): the shortest text that round-trips, in fixed
/// notation for decimal exponents -4..16 and scientific otherwise, always with a `.0` or an
/// exponent so it reads back as a float; `nan`, `inf`, `-inf` for the non-finite values.
pub fn float_repr(f: f64) -> String {
    if f.is_nan() {
        "nan".into()
    } else if f.is_infinite() {
        if f > 0.0 { "inf".into() } else { "-inf".into() }
    } else {
        finite_repr(f)
    }
}

/// The float text of `json.dumps` (`allow_nan=True`, the default): [`float_repr`] for finite
/// values, `NaN`, `Infinity` and `-Infinity` otherwise.
pub fn json_float(f: f64) -> String {
    if f.is_nan() {
        "NaN".into()
    } else if f.is_infinite() {
        if f > 0.0 {
            "Infinity".into()
        } else {
            "-Infinity".into()
        }
    } else {
        finite_repr(f)
    }
}

fn finite_repr(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0.0".into()
        } else {
            "0.0".into()
        };
    }
    // A whole number under 1e16 (prices, counts): its integer digits and `.0`, as the
    // general path below writes it, without the scientific text in between.
    if f.fract() == 0.0 && f.abs() < 1e16 {
        // Whole and under 1e16 in magnitude: exact in i64.
        #[allow(clippy::cast_possible_truncation, reason = "whole, |f| < 1e16")]
        let i = f as i64;
        let mut out = String::with_capacity(20);
        let _ = write!(out, "{i}.0");
        return out;
    }
    finite_repr_general(f)
}

fn finite_repr_general(f: f64) -> String {
    // Rust's `{:e}` gives the shortest round-trip digits, e.g. "1.2345e-5" or "1e16".
    let sci = format!("{f:e}");
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let negative = mantissa.starts_with('-');
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    // Python's repr uses scientific notation when the decimal exponent is < -4 or >= 16.
    if !(-4..16).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        let _ = write!(out, "e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        // Here 0 <= exp < 16.
        let int_len = usize::try_from(exp).unwrap_or(0) + 1;
        if digits.len() <= int_len {
            out.push_str(&digits);
            for _ in digits.len()..int_len {
                out.push('0');
            }
            out.push_str(".0");
        } else {
            out.push_str(&digits[..int_len]);
            out.push('.');
            out.push_str(&digits[int_len..]);
        }
    }
    out
}

/// Python's `divmod` of two floats, `y` not zero: the floored quotient and the remainder,
/// which takes the divisor's sign (a zero remainder too: `-0.0 % 1` is `0.0`). The quotient
/// is computed from the remainder, not as `floor(x / y)`, so `1 // 0.1` is `9.0` as in
/// CPython (the rounded `1 / 0.1` is exactly 10).
pub fn divmod(x: f64, y: f64) -> (f64, f64) {
    let mut rem = x % y;
    let mut div = (x - rem) / y;
    if rem == 0.0 {
        rem = 0f64.copysign(y);
    } else if (y < 0.0) != (rem < 0.0) {
        rem += y;
        div -= 1.0;
    }
    let quotient = if div == 0.0 {
        0f64.copysign(x / y)
    } else {
        let floor = div.floor();
        if div - floor > 0.5 {
            floor + 1.0
        } else {
            floor
        }
    };
    (quotient, rem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divmod_as_cpython() {
        // divmod(1, 0.1), divmod(-0.0, 1), divmod(0.0, -5), divmod(-7.5, 2), divmod(-0.0, 5)
        assert_eq!(divmod(1.0, 0.1), (9.0, 0.099_999_999_999_999_95));
        let (q, r) = divmod(-0.0, 1.0);
        assert!(q == 0.0 && q.is_sign_negative() && r == 0.0 && r.is_sign_positive());
        let (_, r) = divmod(0.0, -5.0);
        assert!(r == 0.0 && r.is_sign_negative());
        assert_eq!(divmod(-7.5, 2.0), (-4.0, 0.5));
        assert_eq!(divmod(-1.0, 0.1).0, -10.0);
    }

    proptest::proptest! {
        /// The whole-number shortcut writes what the general path writes.
        #[test]
        fn whole_numbers_shortcut_equals_the_general_path(i in -20_000_000_000_000_000i64..20_000_000_000_000_000, shift in 0u32..40) {
            #[allow(clippy::cast_precision_loss, reason = "any float will do")]
            let f = (i >> shift) as f64;
            if f != 0.0 {
                proptest::prop_assert_eq!(finite_repr(f), finite_repr_general(f));
            }
        }
    }

    #[test]
    fn float_repr_matches_python() {
        let cases = [
            (1e16, "1e+16"),
            (1e15, "1000000000000000.0"),
            (1e-5, "1e-05"),
            (1.5e-5, "1.5e-05"),
            (0.0001, "0.0001"),
            (0.1, "0.1"),
            (1.5, "1.5"),
            (1000.0, "1000.0"),
            (-0.0, "-0.0"),
            (-2.5, "-2.5"),
            (435.0, "435.0"),
            (1.5e300, "1.5e+300"),
            (123456789.125, "123456789.125"),
            (123456789012345.6, "123456789012345.6"),
            (2.5e-7, "2.5e-07"),
            (9999999999999998.0, "9999999999999998.0"),
            (1.7976931348623157e308, "1.7976931348623157e+308"),
            (5e-324, "5e-324"),
            (0.30000000000000004, "0.30000000000000004"),
            (-12.75, "-12.75"),
        ];
        for (f, want) in cases {
            assert_eq!(float_repr(f), want, "repr({f:?})");
            assert_eq!(json_float(f), want, "json.dumps({f:?})");
        }
    }

    #[test]
    fn non_finite_values() {
        assert_eq!(float_repr(f64::NAN), "nan");
        assert_eq!(float_repr(f64::INFINITY), "inf");
        assert_eq!(float_repr(f64::NEG_INFINITY), "-inf");
        assert_eq!(json_float(f64::NAN), "NaN");
        assert_eq!(json_float(f64::INFINITY), "Infinity");
        assert_eq!(json_float(f64::NEG_INFINITY), "-Infinity");
    }

    proptest::proptest! {
        #[test]
        fn float_repr_round_trips(f in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL) {
            let s = float_repr(f);
            let back: f64 = s.parse().unwrap();
            proptest::prop_assert_eq!(back.to_bits(), f.to_bits());
            proptest::prop_assert!(s.contains('.') || s.contains('e'));
        }
    }
}
