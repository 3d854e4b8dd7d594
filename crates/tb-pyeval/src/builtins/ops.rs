//! The operators on builtin values: comparisons and ordering, unary minus, the binary and
//! in-place arithmetic, sequence and set operators.

#[allow(clippy::wildcard_imports)]
use super::*;

pub(super) fn cmp_symbol(op: CmpOp) -> &'static str {
    op.as_str()
}

/// Python's ordering of two values, for `sorted`, `min`, `max` and `<`.
pub fn py_cmp(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::Bool(_) | Value::Int(_), Value::Bool(_) | Value::Int(_)) => {
            Some(as_int(a)?.cmp(&as_int(b)?))
        }
        (
            Value::Bool(_) | Value::Int(_) | Value::Float(_),
            Value::Bool(_) | Value::Int(_) | Value::Float(_),
        ) => as_f64(a)?.partial_cmp(&as_f64(b)?),
        (Value::Str(x), Value::Str(y)) => Some(x.cmp(y)),
        (Value::List(_) | Value::Tuple(_), Value::List(_) | Value::Tuple(_))
            if std::mem::discriminant(a) == std::mem::discriminant(b) =>
        {
            let _deeper = crate::budget::deeper()?;
            let (x, y) = (iterate(a).ok()?, iterate(b).ok()?);
            for (p, q) in x.iter().zip(y.iter()) {
                if !py_eq(p, q) {
                    return py_cmp(p, q);
                }
            }
            Some(x.len().cmp(&y.len()))
        }
        _ => None,
    }
}

/// `<`, `<=`, `>`, `>=`, including set and dict-view inclusion (`items() >= {...}.items()`).
pub fn order(op: CmpOp, a: &Value, b: &Value) -> R<bool> {
    if let (Some(x), Some(y)) = (as_set(a)?, as_set(b)?) {
        let sub = |p: &crate::value::FastIndexMap<Key, Value>,
                   q: &crate::value::FastIndexMap<Key, Value>| {
            p.keys().all(|k| q.contains_key(k))
        };
        return Ok(match op {
            CmpOp::Lt => x.len() < y.len() && sub(&x, &y),
            CmpOp::LtE => sub(&x, &y),
            CmpOp::Gt => x.len() > y.len() && sub(&y, &x),
            CmpOp::GtE => sub(&y, &x),
            _ => false,
        });
    }
    if let Some(o) = py_cmp(a, b) {
        Ok(match op {
            CmpOp::Lt => o == Ordering::Less,
            CmpOp::LtE => o != Ordering::Greater,
            CmpOp::Gt => o == Ordering::Greater,
            CmpOp::GtE => o != Ordering::Less,
            _ => false,
        })
    } else {
        // NaN compares false, everything else that has no order is a TypeError.
        if as_f64(a).is_some() && as_f64(b).is_some() {
            return Ok(false);
        }
        raise(
            ExcKind::TypeError,
            format!(
                "'{}' not supported between instances of '{}' and '{}'",
                cmp_symbol(op),
                a.type_name(),
                b.type_name()
            ),
        )
    }
}

/// Sets and set-like dict views as key sets.
pub(super) fn as_set(v: &Value) -> R<Option<crate::value::FastIndexMap<Key, Value>>> {
    Ok(match v {
        Value::Set(s) => Some(s.borrow().map.clone()),
        Value::DictView(d, kind @ (ViewKind::Keys | ViewKind::Items)) => {
            match view_set(&d.borrow(), *kind) {
                Some(s) => Some(s),
                None => return raise(ExcKind::TypeError, "unhashable type in dict items view"),
            }
        }
        _ => None,
    })
}

/// `-v`.
pub fn negate(v: &Value) -> R<Value> {
    Ok(match v {
        Value::Bool(b) => Value::Int(-i64::from(*b)),
        Value::Int(i) => match i.checked_neg() {
            Some(n) => Value::Int(n),
            None => return raise(ExcKind::OverflowError, "integer overflow"),
        },
        Value::Float(f) => Value::Float(-f),
        other => {
            return raise(
                ExcKind::TypeError,
                format!("bad operand type for unary -: '{}'", other.type_name()),
            );
        }
    })
}

pub(super) fn op_symbol(op: Operator) -> &'static str {
    op.as_str()
}

pub(super) fn overflow<T>() -> R<T> {
    raise(
        ExcKind::OverflowError,
        "integer result too large (big integers are not supported)",
    )
}

/// `x ** y` on floats, with CPython's errors: a negative power of zero, a result too large,
/// and a fractional power of a negative number (a complex number in CPython).
pub(super) fn float_pow(x: f64, y: f64) -> R<Value> {
    if x == 0.0 && y < 0.0 {
        return raise(
            ExcKind::ZeroDivisionError,
            "0.0 cannot be raised to a negative power",
        );
    }
    if x < 0.0 && x.is_finite() && y.is_finite() && y.fract() != 0.0 {
        return raise(
            ExcKind::NotImplementedError,
            "a fractional power of a negative number is a complex number, which is not supported",
        );
    }
    let r = x.powf(y);
    if r.is_infinite() && x.is_finite() && y.is_finite() {
        return raise(
            ExcKind::OverflowError,
            "(34, 'Numerical result out of range')",
        );
    }
    Ok(Value::Float(r))
}

/// `a <op> b`.
#[allow(clippy::too_many_lines)]
pub fn binary_op(op: Operator, a: &Value, b: &Value) -> R<Value> {
    use Value as V;
    let type_error = || {
        raise(
            ExcKind::TypeError,
            format!(
                "unsupported operand type(s) for {}: '{}' and '{}'",
                op_symbol(op),
                a.type_name(),
                b.type_name()
            ),
        )
    };
    // Integers (bool counts as int).
    if let (Some(x), Some(y)) = (as_int(a), as_int(b)) {
        return Ok(V::Int(match op {
            Operator::Add => x.checked_add(y).map_or_else(overflow, Ok)?,
            Operator::Sub => x.checked_sub(y).map_or_else(overflow, Ok)?,
            Operator::Mult => x.checked_mul(y).map_or_else(overflow, Ok)?,
            Operator::Div => {
                if y == 0 {
                    return raise(ExcKind::ZeroDivisionError, "division by zero");
                }
                #[allow(clippy::cast_precision_loss)]
                return Ok(V::Float(x as f64 / y as f64));
            }
            Operator::FloorDiv => {
                if y == 0 {
                    return raise(
                        ExcKind::ZeroDivisionError,
                        "integer division or modulo by zero",
                    );
                }
                let q = x.checked_div(y).map_or_else(overflow, Ok)?;
                if (x % y != 0) && ((x < 0) != (y < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            Operator::Mod => {
                if y == 0 {
                    return raise(
                        ExcKind::ZeroDivisionError,
                        "integer division or modulo by zero",
                    );
                }
                let r = x.checked_rem(y).map_or_else(overflow, Ok)?;
                if r != 0 && ((r < 0) != (y < 0)) {
                    r + y
                } else {
                    r
                }
            }
            Operator::Pow => {
                if y < 0 {
                    #[allow(clippy::cast_precision_loss)]
                    return float_pow(x as f64, y as f64);
                }
                let e = u32::try_from(y).map_or_else(|_| overflow(), Ok)?;
                x.checked_pow(e).map_or_else(overflow, Ok)?
            }
            Operator::BitAnd => x & y,
            Operator::BitOr => x | y,
            Operator::BitXor => x ^ y,
            Operator::LShift => {
                let s = u32::try_from(y).map_or_else(|_| overflow(), Ok)?;
                x.checked_shl(s)
                    .filter(|r| r >> s == x)
                    .map_or_else(overflow, Ok)?
            }
            Operator::RShift => x >> u32::try_from(y.min(63)).unwrap_or(63),
            Operator::MatMult => return type_error(),
        }));
    }
    // Floats.
    if let (Some(x), Some(y)) = (as_f64(a), as_f64(b)) {
        return Ok(V::Float(match op {
            Operator::Add => x + y,
            Operator::Sub => x - y,
            Operator::Mult => x * y,
            Operator::Div => {
                if y == 0.0 {
                    return raise(ExcKind::ZeroDivisionError, "float division by zero");
                }
                x / y
            }
            Operator::FloorDiv => {
                if y == 0.0 {
                    return raise(ExcKind::ZeroDivisionError, "float floor division by zero");
                }
                tb_python::float::divmod(x, y).0
            }
            Operator::Mod => {
                if y == 0.0 {
                    return raise(ExcKind::ZeroDivisionError, "float modulo");
                }
                tb_python::float::divmod(x, y).1
            }
            Operator::Pow => return float_pow(x, y),
            _ => return type_error(),
        }));
    }
    match (op, a, b) {
        (Operator::Add, V::Str(x), V::Str(y)) => {
            crate::budget::fits(x.len().saturating_add(y.len()))?;
            Ok(V::str(&format!("{x}{y}")))
        }
        (Operator::Add, V::List(x), V::List(y)) => {
            let n = x.borrow().len().saturating_add(y.borrow().len());
            crate::budget::fits(n.saturating_mul(SLOT))?;
            let mut out = x.borrow().clone();
            out.extend(y.borrow().iter().cloned());
            Ok(V::list(out))
        }
        (Operator::Add, V::Tuple(x), V::Tuple(y)) => {
            crate::budget::fits(x.len().saturating_add(y.len()).saturating_mul(SLOT))?;
            let mut out = x.to_vec();
            out.extend(y.iter().cloned());
            Ok(V::tuple(out))
        }
        (Operator::Mult, V::Str(s), n) | (Operator::Mult, n, V::Str(s)) if as_int(n).is_some() => {
            let times = usize::try_from(as_int(n).unwrap_or(0).max(0)).unwrap_or(0);
            crate::budget::fits(s.len().saturating_mul(times))?;
            Ok(V::str(&s.repeat(times)))
        }
        (Operator::Mult, V::List(l), n) | (Operator::Mult, n, V::List(l))
            if as_int(n).is_some() =>
        {
            let times = usize::try_from(as_int(n).unwrap_or(0).max(0)).unwrap_or(0);
            let l = l.borrow();
            crate::budget::fits(l.len().saturating_mul(times).saturating_mul(SLOT))?;
            let mut out = Vec::with_capacity(l.len() * times);
            for _ in 0..times {
                out.extend(l.iter().cloned());
            }
            Ok(V::list(out))
        }
        (Operator::Mult, V::Tuple(t), n) | (Operator::Mult, n, V::Tuple(t))
            if as_int(n).is_some() =>
        {
            let times = usize::try_from(as_int(n).unwrap_or(0).max(0)).unwrap_or(0);
            crate::budget::fits(t.len().saturating_mul(times).saturating_mul(SLOT))?;
            let mut out = Vec::with_capacity(t.len() * times);
            for _ in 0..times {
                out.extend(t.iter().cloned());
            }
            Ok(V::tuple(out))
        }
        (Operator::Mod, V::Str(fmt), args) => percent_format(fmt, args),
        (Operator::BitOr | Operator::BitAnd | Operator::Sub | Operator::BitXor, _, _)
            if as_set(a)?.is_some() && as_set(b)?.is_some() =>
        {
            let (x, y) = (
                as_set(a)?.unwrap_or_default(),
                as_set(b)?.unwrap_or_default(),
            );
            let mut out = Set::default();
            match op {
                Operator::BitOr => {
                    for (k, v) in x.iter().chain(y.iter()) {
                        out.insert(k.clone(), v.clone());
                    }
                }
                Operator::BitAnd => {
                    for (k, v) in &x {
                        if y.contains_key(k) {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                }
                Operator::Sub => {
                    for (k, v) in &x {
                        if !y.contains_key(k) {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                }
                _ => {
                    for (k, v) in &x {
                        if !y.contains_key(k) {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                    for (k, v) in &y {
                        if !x.contains_key(k) {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            Ok(V::set(out))
        }
        (Operator::BitOr, V::Dict(x), V::Dict(y)) => {
            let mut out = x.borrow().clone();
            for (k, (kv, v)) in y.borrow().map() {
                out.insert(k.clone(), kv.clone(), v.clone());
            }
            Ok(V::dict(out))
        }
        _ => type_error(),
    }
}

/// Counts `n` slots added to a list in place against the memory budget.
pub(crate) fn grow(n: usize) -> R<()> {
    crate::budget::take(n.saturating_mul(SLOT))
}

/// `a <op>= b`: lists and dicts change in place, everything else rebinds.
pub fn inplace_op(op: Operator, a: Value, b: Value) -> R<Value> {
    match (&a, op) {
        (Value::List(l), Operator::Add) => {
            let items = iterate(&b)?;
            grow(items.len())?;
            l.borrow_mut().extend(items);
            Ok(a)
        }
        _ => binary_op(op, &a, &b),
    }
}
