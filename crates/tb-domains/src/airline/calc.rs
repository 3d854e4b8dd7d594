//! The `calculate` tool's arithmetic: what Python's `float(eval(expression))` gives for an
//! expression of digits, `.`, `+ - * /`, parentheses and spaces (so also `**` and `//`), with
//! Python's int/float rules. Anything Python would reject (syntax, division by zero, overflow,
//! a complex power) is an error.

/// A Python number: exact int (while it fits) or float.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Num {
    Int(i128),
    Float(f64),
}

impl Num {
    fn to_f64(self) -> f64 {
        match self {
            Num::Int(i) => i as f64,
            Num::Float(f) => f,
        }
    }
}

/// Why an expression has no value (Python raises; the server answers a bare error).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CalcError;

type R = Result<Num, CalcError>;

/// Nesting deeper than this is refused (Python's parser has a similar limit).
const MAX_DEPTH: usize = 200;

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
    depth: usize,
}

/// `float(eval(expression))` for the allowed characters (checked by the caller).
pub fn eval(expression: &str) -> Result<f64, CalcError> {
    let mut p = Parser {
        s: expression.as_bytes(),
        pos: 0,
        depth: 0,
    };
    let v = p.expr()?;
    p.skip_ws();
    if p.pos != p.s.len() {
        return Err(CalcError);
    }
    let f = v.to_f64();
    if f.is_infinite() && matches!(v, Num::Int(_)) {
        return Err(CalcError);
    }
    Ok(f)
}

fn int_op(a: i128, b: i128, f: fn(i128, i128) -> Option<i128>, g: fn(f64, f64) -> f64) -> Num {
    // Ints beyond i128 are approximated by floats (Python would stay exact).
    f(a, b).map_or_else(|| Num::Float(g(a as f64, b as f64)), Num::Int)
}

fn binary(op: &str, a: Num, b: Num) -> R {
    use Num::{Float, Int};
    Ok(match (op, a, b) {
        ("+", Int(x), Int(y)) => int_op(x, y, i128::checked_add, |p, q| p + q),
        ("-", Int(x), Int(y)) => int_op(x, y, i128::checked_sub, |p, q| p - q),
        ("*", Int(x), Int(y)) => int_op(x, y, i128::checked_mul, |p, q| p * q),
        ("+", x, y) => Float(x.to_f64() + y.to_f64()),
        ("-", x, y) => Float(x.to_f64() - y.to_f64()),
        ("*", x, y) => Float(x.to_f64() * y.to_f64()),
        ("/", x, y) => {
            if y.to_f64() == 0.0 {
                return Err(CalcError);
            }
            let q = x.to_f64() / y.to_f64();
            if q.is_infinite() && matches!((x, y), (Int(_), Int(_))) {
                return Err(CalcError);
            }
            Float(q)
        }
        ("//", Int(x), Int(y)) => {
            if y == 0 {
                return Err(CalcError);
            }
            match x.checked_div_euclid(y) {
                Some(_) => {
                    let q = x / y;
                    Int(if (x % y != 0) && ((x < 0) != (y < 0)) {
                        q - 1
                    } else {
                        q
                    })
                }
                None => Float(tb_python::float::divmod(x as f64, y as f64).0),
            }
        }
        ("//", x, y) => {
            if y.to_f64() == 0.0 {
                return Err(CalcError);
            }
            Float(tb_python::float::divmod(x.to_f64(), y.to_f64()).0)
        }
        ("**", x, y) => return power(x, y),
        _ => return Err(CalcError),
    })
}

fn power(a: Num, b: Num) -> R {
    use Num::{Float, Int};
    match (a, b) {
        (Int(x), Int(y)) if y >= 0 => {
            let mut acc: Option<i128> = Some(1);
            let e = u32::try_from(y).ok();
            if let Some(e) = e {
                acc = x.checked_pow(e);
            } else if x.abs() > 1 {
                acc = None;
            } else if x == -1 {
                acc = Some(if y % 2 == 0 { 1 } else { -1 });
            }
            if let Some(v) = acc {
                Ok(Int(v))
            } else {
                let f = (x as f64).powf(y as f64);
                if f.is_infinite() {
                    Err(CalcError)
                } else {
                    Ok(Float(f))
                }
            }
        }
        (x, y) => {
            let (xf, yf) = (x.to_f64(), y.to_f64());
            if xf == 0.0 && yf < 0.0 {
                return Err(CalcError);
            }
            if xf < 0.0 && yf.fract() != 0.0 {
                // Python gives a complex number, which float() rejects.
                return Err(CalcError);
            }
            let f = xf.powf(yf);
            if f.is_infinite() && xf.is_finite() && yf.is_finite() {
                return Err(CalcError);
            }
            Ok(Float(f))
        }
    }
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos] == b' ' {
            self.pos += 1;
        }
    }

    fn peek_op(&mut self) -> Option<&'static str> {
        self.skip_ws();
        let rest = &self.s[self.pos..];
        [
            ("**", "**"),
            ("//", "//"),
            ("+", "+"),
            ("-", "-"),
            ("*", "*"),
            ("/", "/"),
        ]
        .into_iter()
        .find(|(t, _)| rest.starts_with(t.as_bytes()))
        .map(|(_, o)| o)
    }

    fn enter(&mut self) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            Err(CalcError)
        } else {
            Ok(())
        }
    }

    /// `arith: term (('+'|'-') term)*`
    fn expr(&mut self) -> R {
        self.enter()?;
        let mut v = self.term()?;
        while let Some(op @ ("+" | "-")) = self.peek_op() {
            self.pos += 1;
            let r = self.term()?;
            v = binary(op, v, r)?;
        }
        self.depth -= 1;
        Ok(v)
    }

    /// `term: factor (('*'|'/'|'//') factor)*`
    fn term(&mut self) -> R {
        let mut v = self.factor()?;
        while let Some(op @ ("*" | "/" | "//")) = self.peek_op() {
            self.pos += op.len();
            let r = self.factor()?;
            v = binary(op, v, r)?;
        }
        Ok(v)
    }

    /// `factor: ('+'|'-') factor | power`
    fn factor(&mut self) -> R {
        self.enter()?;
        let v = match self.peek_op() {
            Some("+") => {
                self.pos += 1;
                self.factor()?
            }
            Some("-") => {
                self.pos += 1;
                match self.factor()? {
                    Num::Int(i) => i.checked_neg().map_or(Num::Float(-(i as f64)), Num::Int),
                    Num::Float(f) => Num::Float(-f),
                }
            }
            _ => self.power()?,
        };
        self.depth -= 1;
        Ok(v)
    }

    /// `power: atom ['**' factor]`
    fn power(&mut self) -> R {
        let base = self.atom()?;
        if self.peek_op() == Some("**") {
            self.pos += 2;
            let exp = self.factor()?;
            return binary("**", base, exp);
        }
        Ok(base)
    }

    fn atom(&mut self) -> R {
        self.skip_ws();
        match self.s.get(self.pos) {
            Some(b'(') => {
                self.pos += 1;
                let v = self.expr()?;
                self.skip_ws();
                if self.s.get(self.pos) != Some(&b')') {
                    return Err(CalcError);
                }
                self.pos += 1;
                Ok(v)
            }
            Some(c) if c.is_ascii_digit() || *c == b'.' => self.number(),
            _ => Err(CalcError),
        }
    }

    fn number(&mut self) -> R {
        let start = self.pos;
        let digits = |p: &mut Self| {
            while p.pos < p.s.len() && p.s[p.pos].is_ascii_digit() {
                p.pos += 1;
            }
        };
        digits(self);
        let int_part = &self.s[start..self.pos];
        let mut is_float = false;
        if self.s.get(self.pos) == Some(&b'.') {
            is_float = true;
            self.pos += 1;
            let frac_start = self.pos;
            digits(self);
            if int_part.is_empty() && self.pos == frac_start {
                return Err(CalcError);
            }
        }
        // A number directly followed by a digit-led token or a dot is a syntax error.
        if matches!(self.s.get(self.pos), Some(b'.')) {
            return Err(CalcError);
        }
        let text = std::str::from_utf8(&self.s[start..self.pos]).map_err(|_| CalcError)?;
        if is_float {
            let t = if text.starts_with('.') {
                format!("0{text}")
            } else {
                text.to_string()
            };
            return t.parse::<f64>().map(Num::Float).map_err(|_| CalcError);
        }
        // Python 3 rejects leading zeros in a non-zero decimal int (`007`).
        if text.len() > 1 && text.starts_with('0') && text.bytes().any(|b| b != b'0') {
            return Err(CalcError);
        }
        Ok(text.parse::<i128>().map_or_else(
            |_| Num::Float(text.parse::<f64>().unwrap_or(f64::INFINITY)),
            Num::Int,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::eval;

    #[test]
    fn python_arithmetic() {
        let ok = |s: &str, want: f64| assert_eq!(eval(s), Ok(want), "{s}");
        ok("6484 + 3895 + 5358 + 2422 + 5104", 23263.0);
        ok("(364 + 248 + 259) * 3", 2613.0);
        ok("7 / 2", 3.5);
        ok("-7 // 2", -4.0);
        ok("7.5 // 2", 3.0);
        ok("-2 ** 2", -4.0);
        ok("2 ** -1", 0.5);
        ok("2 ** 3 ** 2", 512.0);
        ok(".5 + 1.", 1.5);
        ok("  1+1", 2.0);
        ok("0.1 + 0.2", 0.30000000000000004);
        ok("00", 0.0);
    }

    #[test]
    fn python_errors() {
        for s in [
            "",
            "  ",
            "1 +",
            "1 / 0",
            "1 // 0.0",
            "007",
            "1..2",
            "(1",
            "1)",
            "(-8) ** 0.5",
            "0 ** -1",
            "1 2",
        ] {
            assert!(eval(s).is_err(), "{s}");
        }
    }
}
