//! Builtin functions, operators and the methods of builtin types that test bodies call.

use std::cmp::Ordering;
use std::rc::Rc;

use ruff_python_ast::{CmpOp, Operator};

use crate::interp::{ExcKind, Interp, R, raise};
use crate::repr::{DumpsOptions, json_dumps, repr, to_str};
use crate::value::{
    Builtin, Dict, Key, Module, SLOT, Set, TypeKind, Value, ViewKind, as_f64, as_int, py_eq,
    view_set,
};

/// The builtin a bare name refers to, if any.
pub fn builtin_name(name: &str) -> Option<Value> {
    Some(match name {
        "len" => Value::Builtin(Builtin::Len),
        "isinstance" => Value::Builtin(Builtin::Isinstance),
        "all" => Value::Builtin(Builtin::All),
        "any" => Value::Builtin(Builtin::Any),
        "sorted" => Value::Builtin(Builtin::Sorted),
        "sum" => Value::Builtin(Builtin::Sum),
        "min" => Value::Builtin(Builtin::Min),
        "max" => Value::Builtin(Builtin::Max),
        "abs" => Value::Builtin(Builtin::Abs),
        "round" => Value::Builtin(Builtin::Round),
        "enumerate" => Value::Builtin(Builtin::Enumerate),
        "range" => Value::Builtin(Builtin::Range),
        "zip" => Value::Builtin(Builtin::Zip),
        "print" => Value::Builtin(Builtin::Print),
        "repr" => Value::Builtin(Builtin::Repr),
        "reversed" => Value::Builtin(Builtin::Reversed),
        "hasattr" => Value::Builtin(Builtin::Hasattr),
        "getattr" => Value::Builtin(Builtin::Getattr),
        "str" => Value::Type(TypeKind::Str),
        "int" => Value::Type(TypeKind::Int),
        "float" => Value::Type(TypeKind::Float),
        "bool" => Value::Type(TypeKind::Bool),
        "list" => Value::Type(TypeKind::List),
        "tuple" => Value::Type(TypeKind::Tuple),
        "dict" => Value::Type(TypeKind::Dict),
        "set" => Value::Type(TypeKind::Set),
        "object" => Value::Type(TypeKind::Object),
        "None" => Value::None,
        _ => return None,
    })
}

/// The hash key of a value, or Python's `TypeError: unhashable type`.
pub fn hash_key(v: &Value) -> R<Key> {
    match v.key() {
        Some(k) => Ok(k),
        None if crate::budget::take_depth_trip() => raise(
            ExcKind::RecursionError,
            format!(
                "maximum recursion depth exceeded while hashing a nested value \
                 (tb's limit of {} levels)",
                crate::budget::MAX_VALUE_DEPTH
            ),
        ),
        None => raise(
            ExcKind::TypeError,
            format!("unhashable type: '{}'", v.type_name()),
        ),
    }
}

/// The items of an iterable, in iteration order.
pub fn iterate(v: &Value) -> R<Vec<Value>> {
    Ok(match v {
        Value::List(l) => l.borrow().clone(),
        Value::Tuple(t) => t.to_vec(),
        Value::Str(s) => s
            .chars()
            .map(|c| Value::str(c.encode_utf8(&mut [0; 4])))
            .collect(),
        Value::Dict(d) => d.borrow().map().values().map(|(k, _)| k.clone()).collect(),
        Value::Set(s) => s.borrow().map.values().cloned().collect(),
        Value::DictView(d, kind) => {
            let d = d.borrow();
            match kind {
                ViewKind::Keys => d.map().values().map(|(k, _)| k.clone()).collect(),
                ViewKind::Values => d.map().values().map(|(_, v)| v.clone()).collect(),
                ViewKind::Items => d
                    .map()
                    .values()
                    .map(|(k, v)| Value::tuple(vec![k.clone(), v.clone()]))
                    .collect(),
            }
        }
        other => {
            return raise(
                ExcKind::TypeError,
                format!("'{}' object is not iterable", other.type_name()),
            );
        }
    })
}

fn index_of(len: usize, index: &Value, what: &str) -> R<usize> {
    let Some(i) = as_int(index) else {
        return raise(
            ExcKind::TypeError,
            format!(
                "{what} indices must be integers or slices, not {}",
                index.type_name()
            ),
        );
    };
    let len_i = i64::try_from(len).unwrap_or(i64::MAX);
    let j = if i < 0 { i.saturating_add(len_i) } else { i };
    if j < 0 || j >= len_i {
        return raise(ExcKind::IndexError, format!("{what} index out of range"));
    }
    Ok(usize::try_from(j).unwrap_or(0))
}

/// `obj[index]`.
pub fn get_item(obj: &Value, index: &Value) -> R<Value> {
    match obj {
        Value::List(l) => {
            let l = l.borrow();
            let i = index_of(l.len(), index, "list")?;
            Ok(l[i].clone())
        }
        Value::Tuple(t) => {
            let i = index_of(t.len(), index, "tuple")?;
            Ok(t[i].clone())
        }
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            let i = index_of(chars.len(), index, "string")?;
            Ok(Value::str(chars[i].encode_utf8(&mut [0; 4])))
        }
        Value::Dict(d) => {
            let k = hash_key(index)?;
            let found = d.borrow().get(&k);
            match found {
                Some(v) => Ok(v),
                None => raise(ExcKind::KeyError, repr(index)),
            }
        }
        other => raise(
            ExcKind::TypeError,
            format!("'{}' object is not subscriptable", other.type_name()),
        ),
    }
}

/// `obj[index] = value`.
pub fn set_item(obj: &Value, index: Value, value: Value) -> R<()> {
    match obj {
        Value::List(l) => {
            let mut l = l.borrow_mut();
            let i = index_of(l.len(), &index, "list assignment")?;
            l[i] = value;
            Ok(())
        }
        Value::Dict(d) => {
            let k = hash_key(&index)?;
            d.borrow_mut().insert(k, index, value);
            Ok(())
        }
        other => raise(
            ExcKind::TypeError,
            format!(
                "'{}' object does not support item assignment",
                other.type_name()
            ),
        ),
    }
}

/// `obj[lower:upper:step]` on lists, tuples and strings.
pub fn slice(
    obj: &Value,
    lower: Option<Value>,
    upper: Option<Value>,
    step: Option<Value>,
) -> R<Value> {
    let bound = |v: Option<Value>| -> R<Option<i64>> {
        match v {
            None | Some(Value::None) => Ok(None),
            Some(v) => match as_int(&v) {
                Some(i) => Ok(Some(i)),
                None => raise(
                    ExcKind::TypeError,
                    "slice indices must be integers or None or have an __index__ method",
                ),
            },
        }
    };
    let (lo, hi, st) = (bound(lower)?, bound(upper)?, bound(step)?.unwrap_or(1));
    if st == 0 {
        return raise(ExcKind::ValueError, "slice step cannot be zero");
    }
    let pick = |len: usize| -> Vec<usize> {
        let n = i64::try_from(len).unwrap_or(i64::MAX);
        let clamp = |v: i64, lo_lim: i64, hi_lim: i64| v.clamp(lo_lim, hi_lim);
        let norm = |v: i64| if v < 0 { v.saturating_add(n) } else { v };
        let mut out = Vec::new();
        if st > 0 {
            let start = clamp(lo.map_or(0, norm), 0, n);
            let stop = clamp(hi.map_or(n, norm), 0, n);
            let mut i = start;
            while i < stop {
                out.push(usize::try_from(i).unwrap_or(0));
                i = i.saturating_add(st);
            }
        } else {
            let start = clamp(lo.map_or(n - 1, norm), -1, n - 1);
            let stop = clamp(hi.map_or(-1, norm), -1, n - 1);
            let mut i = start;
            while i > stop {
                out.push(usize::try_from(i).unwrap_or(0));
                i = i.saturating_add(st);
            }
        }
        out
    };
    Ok(match obj {
        Value::List(l) => {
            let l = l.borrow();
            Value::list(pick(l.len()).into_iter().map(|i| l[i].clone()).collect())
        }
        Value::Tuple(t) => Value::tuple(pick(t.len()).into_iter().map(|i| t[i].clone()).collect()),
        Value::Str(s) => {
            let chars: Vec<char> = s.chars().collect();
            Value::str(
                &pick(chars.len())
                    .into_iter()
                    .map(|i| chars[i])
                    .collect::<String>(),
            )
        }
        other => {
            return raise(
                ExcKind::TypeError,
                format!("'{}' object is not subscriptable", other.type_name()),
            );
        }
    })
}

/// `a is b`: identity for containers and objects, value identity for the singletons and
/// small immutable values (what CPython's caching makes observable in practice).
pub fn is_same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::None, Value::None) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y && (-5..=256).contains(x),
        (Value::Str(x), Value::Str(y)) => Rc::ptr_eq(x, y) || (x.is_empty() && y.is_empty()),
        (Value::List(x), Value::List(y)) => Rc::ptr_eq(x, y),
        (Value::Dict(x), Value::Dict(y)) => Rc::ptr_eq(x, y),
        (Value::Set(x), Value::Set(y)) => Rc::ptr_eq(x, y),
        (Value::Tuple(x), Value::Tuple(y)) => Rc::ptr_eq(x, y),
        (Value::Object(x), Value::Object(y)) => Rc::ptr_eq(x, y),
        (Value::Func(x), Value::Func(y)) => Rc::ptr_eq(x, y),
        (Value::Type(x), Value::Type(y)) => x == y,
        _ => false,
    }
}

/// `needle in haystack`.
pub fn contains(haystack: &Value, needle: &Value) -> R<bool> {
    Ok(match haystack {
        Value::List(l) => l
            .borrow()
            .iter()
            .any(|x| is_same(x, needle) || py_eq(x, needle)),
        Value::Tuple(t) => t.iter().any(|x| is_same(x, needle) || py_eq(x, needle)),
        Value::Str(s) => match needle {
            Value::Str(n) => s.contains(&**n),
            other => {
                return raise(
                    ExcKind::TypeError,
                    format!(
                        "'in <string>' requires string as left operand, not {}",
                        other.type_name()
                    ),
                );
            }
        },
        Value::Dict(d) => d.borrow().contains_key(&hash_key(needle)?),
        Value::Set(s) => s.borrow().map.contains_key(&hash_key(needle)?),
        Value::DictView(d, ViewKind::Keys) => d.borrow().contains_key(&hash_key(needle)?),
        Value::DictView(d, ViewKind::Values) => {
            d.borrow().map().values().any(|(_, v)| py_eq(v, needle))
        }
        Value::DictView(d, ViewKind::Items) => match needle {
            Value::Tuple(t) if t.len() == 2 => {
                let k = hash_key(&t[0])?;
                d.borrow().get(&k).is_some_and(|v| py_eq(&v, &t[1]))
            }
            _ => false,
        },
        other => {
            return raise(
                ExcKind::TypeError,
                format!("argument of type '{}' is not iterable", other.type_name()),
            );
        }
    })
}

fn cmp_symbol(op: CmpOp) -> &'static str {
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
fn as_set(v: &Value) -> R<Option<crate::value::FastIndexMap<Key, Value>>> {
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

fn op_symbol(op: Operator) -> &'static str {
    op.as_str()
}

fn overflow<T>() -> R<T> {
    raise(
        ExcKind::OverflowError,
        "integer result too large (big integers are not supported)",
    )
}

/// `x ** y` on floats, with CPython's errors: a negative power of zero, a result too large,
/// and a fractional power of a negative number (a complex number in CPython).
fn float_pow(x: f64, y: f64) -> R<Value> {
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
                (x / y).floor()
            }
            Operator::Mod => {
                if y == 0.0 {
                    return raise(ExcKind::ZeroDivisionError, "float modulo");
                }
                let r = x % y;
                if r != 0.0 && ((r < 0.0) != (y < 0.0)) {
                    r + y
                } else {
                    r
                }
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

fn percent_format(fmt: &str, args: &Value) -> R<Value> {
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
    let mut width = 0usize;
    while i < chars.len() && chars[i].is_ascii_digit() {
        width = width
            .saturating_mul(10)
            .saturating_add(chars[i] as usize - '0' as usize);
        i += 1;
    }
    let mut grouping = false;
    if i < chars.len() && chars[i] == ',' {
        grouping = true;
        i += 1;
    }
    let mut precision = None;
    if i < chars.len() && chars[i] == '.' {
        i += 1;
        let mut p = 0usize;
        while i < chars.len() && chars[i].is_ascii_digit() {
            p = p
                .saturating_mul(10)
                .saturating_add(chars[i] as usize - '0' as usize);
            i += 1;
        }
        precision = Some(p.min(100));
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
fn exp_format(f: f64, p: usize, strip: bool) -> String {
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
fn general_format(f: f64, p: usize, repr_like: bool) -> String {
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

fn group(digits: &str, grouping: bool) -> String {
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

/// `obj.name`.
pub fn get_attr(obj: &Value, name: &str) -> R<Value> {
    if let Value::Object(o) = obj {
        if let Some(v) = o.attrs.borrow().get(name) {
            return Ok(v.clone());
        }
        if o.class.as_ref() == "Judge" || methods_of(obj).contains(&name) {
            return Ok(Value::Method(Box::new(obj.clone()), Rc::from(name)));
        }
        return raise(
            ExcKind::AttributeError,
            format!("'{}' object has no attribute '{name}'", o.class),
        );
    }
    if let Value::Module(Module::Json) = obj {
        return match name {
            "dumps" => Ok(Value::Builtin(Builtin::JsonDumps)),
            "loads" => Ok(Value::Builtin(Builtin::JsonLoads)),
            _ => raise(
                ExcKind::AttributeError,
                format!("module 'json' has no attribute '{name}'"),
            ),
        };
    }
    if methods_of(obj).contains(&name) {
        return Ok(Value::Method(Box::new(obj.clone()), Rc::from(name)));
    }
    raise(
        ExcKind::AttributeError,
        format!("'{}' object has no attribute '{name}'", obj.type_name()),
    )
}

fn methods_of(v: &Value) -> &'static [&'static str] {
    match v {
        Value::Str(_) => &[
            "startswith",
            "endswith",
            "lower",
            "upper",
            "strip",
            "lstrip",
            "rstrip",
            "split",
            "join",
            "replace",
            "find",
            "count",
            "format",
            "isdigit",
            "isalpha",
            "title",
            "capitalize",
            "splitlines",
            "index",
        ],
        Value::List(_) => &[
            "append", "extend", "index", "count", "pop", "insert", "copy", "sort", "remove",
        ],
        Value::Tuple(_) => &["index", "count"],
        Value::Dict(_) => &[
            "get",
            "items",
            "keys",
            "values",
            "setdefault",
            "update",
            "pop",
            "copy",
        ],
        Value::Set(_) => &[
            "add",
            "update",
            "issubset",
            "issuperset",
            "union",
            "intersection",
            "difference",
            "discard",
            "copy",
        ],
        Value::DictView(..) => &["isdisjoint"],
        Value::Object(o) if o.class.as_ref() == "TestContext" => &["transcript", "query"],
        _ => &[],
    }
}

fn arity(name: &str, args: &[Value], min: usize, max: usize) -> R<()> {
    if args.len() < min || args.len() > max {
        return raise(
            ExcKind::TypeError,
            if min == max {
                format!(
                    "{name}() takes exactly {min} argument{} ({} given)",
                    if min == 1 { "" } else { "s" },
                    args.len()
                )
            } else {
                format!(
                    "{name}() takes from {min} to {max} arguments ({} given)",
                    args.len()
                )
            },
        );
    }
    Ok(())
}

fn no_kwargs(name: &str, kwargs: &[(String, Value)]) -> R<()> {
    if let Some((k, _)) = kwargs.first() {
        return raise(
            ExcKind::TypeError,
            format!("{name}() got an unexpected keyword argument '{k}'"),
        );
    }
    Ok(())
}

fn want_str<'v>(name: &str, v: &'v Value) -> R<&'v str> {
    match v {
        Value::Str(s) => Ok(s),
        other => raise(
            ExcKind::TypeError,
            format!("{name}() argument must be str, not {}", other.type_name()),
        ),
    }
}

/// Sorts values with Python's ordering (stable), optionally by a key function.
fn sort_values(
    interp: &mut Interp<'_>,
    items: Vec<Value>,
    key: Option<&Value>,
    reverse: bool,
) -> R<Vec<Value>> {
    let mut keyed: Vec<(Value, Value)> = Vec::with_capacity(items.len());
    for it in items {
        let k = match key {
            Some(f) if !matches!(f, Value::None) => interp.call(f, vec![it.clone()], Vec::new())?,
            _ => it.clone(),
        };
        keyed.push((k, it));
    }
    let mut err = None;
    keyed.sort_by(|a, b| {
        py_cmp(&a.0, &b.0).unwrap_or_else(|| {
            if err.is_none() {
                err = Some(format!(
                    "'<' not supported between instances of '{}' and '{}'",
                    b.0.type_name(),
                    a.0.type_name()
                ));
            }
            Ordering::Equal
        })
    });
    if let Some(e) = err {
        return raise(ExcKind::TypeError, e);
    }
    if reverse {
        // Python's reverse sort keeps equal items in their original order.
        keyed.reverse();
        let mut i = 0;
        while i < keyed.len() {
            let mut j = i + 1;
            while j < keyed.len() && py_cmp(&keyed[i].0, &keyed[j].0) == Some(Ordering::Equal) {
                j += 1;
            }
            keyed[i..j].reverse();
            i = j;
        }
    }
    Ok(keyed.into_iter().map(|(_, v)| v).collect())
}

fn kwarg<'k>(kwargs: &'k [(String, Value)], name: &str) -> Option<&'k Value> {
    kwargs.iter().find(|(k, _)| k == name).map(|(_, v)| v)
}

/// `range(...)`'s start, stop and step.
pub fn range_bounds(args: &[Value]) -> R<(i64, i64, i64)> {
    arity("range", args, 1, 3)?;
    let mut ints = Vec::with_capacity(3);
    for a in args {
        match as_int(a) {
            Some(i) => ints.push(i),
            None => {
                return raise(
                    ExcKind::TypeError,
                    format!(
                        "'{}' object cannot be interpreted as an integer",
                        a.type_name()
                    ),
                );
            }
        }
    }
    let (start, stop, step) = match ints.as_slice() {
        [stop] => (0, *stop, 1),
        [start, stop] => (*start, *stop, 1),
        [start, stop, step] => (*start, *stop, *step),
        _ => (0, 0, 1),
    };
    if step == 0 {
        return raise(ExcKind::ValueError, "range() arg 3 must not be zero");
    }
    Ok((start, stop, step))
}

/// What a `for` loop or a comprehension walks: the items of a value, or the numbers of a
/// `range(...)` one by one (as CPython's lazy range, not built as a list).
pub enum ForIter {
    Items(std::vec::IntoIter<Value>),
    Range {
        next: i64,
        stop: i64,
        step: i64,
        done: bool,
    },
}

impl Iterator for ForIter {
    type Item = Value;
    fn next(&mut self) -> Option<Value> {
        match self {
            ForIter::Items(it) => it.next(),
            ForIter::Range {
                next,
                stop,
                step,
                done,
            } => {
                let more = (*step > 0 && *next < *stop) || (*step < 0 && *next > *stop);
                if *done || !more {
                    return None;
                }
                let v = *next;
                match next.checked_add(*step) {
                    Some(n) => *next = n,
                    None => *done = true,
                }
                Some(Value::Int(v))
            }
        }
    }
}

/// Calls a builtin function.
#[allow(clippy::too_many_lines)]
pub fn call_builtin(
    interp: &mut Interp<'_>,
    b: Builtin,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
) -> R<Value> {
    match b {
        Builtin::Len => {
            no_kwargs("len", &kwargs)?;
            arity("len", &args, 1, 1)?;
            let n = match &args[0] {
                Value::Str(s) => s.chars().count(),
                Value::List(l) => l.borrow().len(),
                Value::Tuple(t) => t.len(),
                Value::Dict(d) => d.borrow().len(),
                Value::Set(s) => s.borrow().map.len(),
                Value::DictView(d, _) => d.borrow().len(),
                other => {
                    return raise(
                        ExcKind::TypeError,
                        format!("object of type '{}' has no len()", other.type_name()),
                    );
                }
            };
            Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX)))
        }
        Builtin::Isinstance => {
            arity("isinstance", &args, 2, 2)?;
            let kinds: Vec<Value> = match &args[1] {
                Value::Tuple(t) => t.to_vec(),
                other => vec![other.clone()],
            };
            let mut hit = false;
            for k in kinds {
                let Value::Type(t) = k else {
                    return raise(
                        ExcKind::TypeError,
                        "isinstance() arg 2 must be a type, a tuple of types, or a union",
                    );
                };
                hit |= match (t, &args[0]) {
                    (TypeKind::Str, Value::Str(_))
                    | (TypeKind::Int, Value::Int(_) | Value::Bool(_))
                    | (TypeKind::Float, Value::Float(_))
                    | (TypeKind::Bool, Value::Bool(_))
                    | (TypeKind::List, Value::List(_))
                    | (TypeKind::Tuple, Value::Tuple(_))
                    | (TypeKind::Dict, Value::Dict(_))
                    | (TypeKind::Set, Value::Set(_))
                    | (TypeKind::NoneType, Value::None)
                    | (TypeKind::Object, _) => true,
                    (TypeKind::Text, Value::Object(o)) => o.class.as_ref() == "Text",
                    _ => false,
                };
            }
            Ok(Value::Bool(hit))
        }
        Builtin::All | Builtin::Any => {
            arity(if b == Builtin::All { "all" } else { "any" }, &args, 1, 1)?;
            let items = iterate(&args[0])?;
            Ok(Value::Bool(if b == Builtin::All {
                items.iter().all(Value::truthy)
            } else {
                items.iter().any(Value::truthy)
            }))
        }
        Builtin::Sorted => {
            arity("sorted", &args, 1, 1)?;
            let items = iterate(&args[0])?;
            let reverse = kwarg(&kwargs, "reverse").is_some_and(Value::truthy);
            Ok(Value::list(sort_values(
                interp,
                items,
                kwarg(&kwargs, "key"),
                reverse,
            )?))
        }
        Builtin::Sum => {
            arity("sum", &args, 1, 2)?;
            let mut acc = args
                .get(1)
                .cloned()
                .or_else(|| kwarg(&kwargs, "start").cloned())
                .unwrap_or(Value::Int(0));
            if matches!(acc, Value::Str(_)) {
                return raise(
                    ExcKind::TypeError,
                    "sum() can't sum strings [use ''.join(seq) instead]",
                );
            }
            for it in iterate(&args[0])? {
                acc = binary_op(Operator::Add, &acc, &it)?;
            }
            Ok(acc)
        }
        Builtin::Min | Builtin::Max => {
            let name = if b == Builtin::Min { "min" } else { "max" };
            let items = if args.len() == 1 {
                iterate(&args[0])?
            } else {
                args
            };
            if items.is_empty() {
                if let Some(d) = kwarg(&kwargs, "default") {
                    return Ok(d.clone());
                }
                return raise(
                    ExcKind::ValueError,
                    format!("{name}() iterable argument is empty"),
                );
            }
            let key = kwarg(&kwargs, "key").cloned();
            let mut best = items[0].clone();
            let mut best_k = match &key {
                Some(f) => interp.call(f, vec![best.clone()], Vec::new())?,
                None => best.clone(),
            };
            for it in items.into_iter().skip(1) {
                let k = match &key {
                    Some(f) => interp.call(f, vec![it.clone()], Vec::new())?,
                    None => it.clone(),
                };
                let better = if b == Builtin::Min {
                    order(CmpOp::Lt, &k, &best_k)?
                } else {
                    order(CmpOp::Gt, &k, &best_k)?
                };
                if better {
                    best = it;
                    best_k = k;
                }
            }
            Ok(best)
        }
        Builtin::Abs => {
            arity("abs", &args, 1, 1)?;
            match &args[0] {
                Value::Float(f) => Ok(Value::Float(f.abs())),
                v if as_int(v).is_some() => {
                    let i = as_int(v).unwrap_or(0);
                    i.checked_abs().map(Value::Int).map_or_else(overflow, Ok)
                }
                other => raise(
                    ExcKind::TypeError,
                    format!("bad operand type for abs(): '{}'", other.type_name()),
                ),
            }
        }
        Builtin::Round => {
            arity("round", &args, 1, 2)?;
            let digits = args.get(1).and_then(as_int);
            match (&args[0], digits) {
                (v, None) if as_int(v).is_some() => Ok(Value::Int(as_int(v).unwrap_or(0))),
                (Value::Float(f), None) => {
                    let r = round_half_even(*f);
                    if !r.is_finite() || r.abs() > 9.0e18 {
                        return overflow();
                    }
                    #[allow(clippy::cast_possible_truncation)]
                    Ok(Value::Int(r as i64))
                }
                (Value::Float(f), Some(d)) => {
                    // Python rounds the exact binary value; formatting with the precision
                    // and reading back does the same for the magnitudes tests use.
                    let d = usize::try_from(d.clamp(0, 30)).unwrap_or(0);
                    let text = format!("{f:.d$}");
                    Ok(Value::Float(text.parse().unwrap_or(*f)))
                }
                (v, Some(_)) if as_int(v).is_some() => Ok(Value::Int(as_int(v).unwrap_or(0))),
                (other, _) => raise(
                    ExcKind::TypeError,
                    format!("type {} doesn't define __round__ method", other.type_name()),
                ),
            }
        }
        Builtin::Enumerate => {
            arity("enumerate", &args, 1, 2)?;
            let start = match args.get(1).or_else(|| kwarg(&kwargs, "start")) {
                None => 0,
                Some(v) => match as_int(v) {
                    Some(i) => i,
                    None => {
                        return raise(
                            ExcKind::TypeError,
                            format!(
                                "'{}' object cannot be interpreted as an integer",
                                v.type_name()
                            ),
                        );
                    }
                },
            };
            let items = iterate(&args[0])?;
            let mut out = Vec::with_capacity(items.len());
            for (i, v) in items.into_iter().enumerate() {
                let Some(n) = i64::try_from(i).ok().and_then(|i| start.checked_add(i)) else {
                    return raise(
                        ExcKind::OverflowError,
                        "cannot count past 2**63 - 1 in enumerate (big integers are not supported)",
                    );
                };
                out.push(Value::tuple(vec![Value::Int(n), v]));
            }
            Ok(Value::list(out))
        }
        Builtin::Range => {
            no_kwargs("range", &kwargs)?;
            let (start, stop, step) = range_bounds(&args)?;
            let span = if step > 0 {
                i128::from(stop) - i128::from(start)
            } else {
                i128::from(start) - i128::from(stop)
            };
            let count = if span <= 0 {
                0
            } else {
                (span - 1) / i128::from(step).abs() + 1
            };
            crate::budget::fits(
                usize::try_from(count)
                    .unwrap_or(usize::MAX)
                    .saturating_mul(SLOT),
            )?;
            let mut out = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
            let mut i = start;
            while (step > 0 && i < stop) || (step < 0 && i > stop) {
                out.push(Value::Int(i));
                i = match i.checked_add(step) {
                    Some(n) => n,
                    None => break,
                };
            }
            Ok(Value::list(out))
        }
        Builtin::Zip => {
            let lists: Vec<Vec<Value>> = args.iter().map(iterate).collect::<R<_>>()?;
            let n = lists.iter().map(Vec::len).min().unwrap_or(0);
            Ok(Value::list(
                (0..n)
                    .map(|i| Value::tuple(lists.iter().map(|l| l[i].clone()).collect()))
                    .collect(),
            ))
        }
        Builtin::Print => {
            let sep = kwarg(&kwargs, "sep").map_or_else(|| " ".to_string(), to_str);
            let end = kwarg(&kwargs, "end").map_or_else(|| "\n".to_string(), to_str);
            let text: Vec<String> = args.iter().map(to_str).collect();
            interp.print(&text.join(&sep))?;
            interp.print(&end)?;
            Ok(Value::None)
        }
        Builtin::Repr => {
            arity("repr", &args, 1, 1)?;
            Ok(Value::str(&repr(&args[0])))
        }
        Builtin::Reversed => {
            arity("reversed", &args, 1, 1)?;
            let mut items = iterate(&args[0])?;
            items.reverse();
            Ok(Value::list(items))
        }
        Builtin::Hasattr => {
            arity("hasattr", &args, 2, 2)?;
            let name = want_str("hasattr", &args[1])?.to_string();
            Ok(Value::Bool(get_attr(&args[0], &name).is_ok()))
        }
        Builtin::Getattr => {
            arity("getattr", &args, 2, 3)?;
            let name = want_str("getattr", &args[1])?.to_string();
            match (get_attr(&args[0], &name), args.get(2)) {
                (Ok(v), _) => Ok(v),
                (Err(_), Some(d)) => Ok(d.clone()),
                (Err(e), None) => Err(e),
            }
        }
        Builtin::JsonDumps => {
            arity("dumps", &args, 1, 1)?;
            let mut opts = DumpsOptions::default();
            for (k, v) in &kwargs {
                match k.as_str() {
                    "indent" => {
                        opts.indent = match v {
                            Value::None => None,
                            Value::Str(s) => Some(s.to_string()),
                            v => match as_int(v) {
                                Some(n) => {
                                    Some(" ".repeat(usize::try_from(n.clamp(0, 1000)).unwrap_or(0)))
                                }
                                None => {
                                    return raise(
                                        ExcKind::TypeError,
                                        "indent must be an int or a str",
                                    );
                                }
                            },
                        }
                    }
                    "ensure_ascii" => opts.ensure_ascii = v.truthy(),
                    "sort_keys" => opts.sort_keys = v.truthy(),
                    "separators" => {
                        let parts = iterate(v)?;
                        if let [Value::Str(a), Value::Str(b)] = parts.as_slice() {
                            opts.item_sep = Some(a.to_string());
                            opts.key_sep = b.to_string();
                        } else {
                            return raise(
                                ExcKind::ValueError,
                                "separators must be a (item, key) pair of strings",
                            );
                        }
                    }
                    "default" => {
                        return raise(
                            ExcKind::NotImplementedError,
                            "json.dumps(default=...) is not supported",
                        );
                    }
                    other => {
                        return raise(
                            ExcKind::TypeError,
                            format!("dumps() got an unexpected keyword argument '{other}'"),
                        );
                    }
                }
            }
            match json_dumps(&args[0], &opts) {
                Ok(s) => Ok(Value::str(&s)),
                Err(e) => raise(ExcKind::TypeError, e),
            }
        }
        Builtin::JsonLoads => {
            arity("loads", &args, 1, 1)?;
            let text = want_str("loads", &args[0])?;
            match crate::parse_json(text) {
                Ok(v) => Ok(crate::value::from_json(&v)),
                Err(e) => raise(ExcKind::ValueError, e),
            }
        }
    }
}

fn round_half_even(f: f64) -> f64 {
    let r = f.round();
    if (f - f.trunc()).abs() == 0.5 {
        2.0 * (f / 2.0).round()
    } else {
        r
    }
}

/// Calls a builtin class: `str(x)`, `set(items)`, `dict(a=1)`.
pub fn construct(
    interp: &mut Interp<'_>,
    t: TypeKind,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
) -> R<Value> {
    let _ = interp;
    let name = t.name();
    if t == TypeKind::Text {
        // `Text(role=..., content=...)`, as the reference's pydantic message.
        if !args.is_empty() {
            return raise(ExcKind::TypeError, "Text() takes keyword arguments only");
        }
        let mut role = Value::str("user");
        let mut content = Value::str("");
        let mut metadata = Value::dict(Dict::default());
        for (k, v) in kwargs {
            match k.as_str() {
                "role" => role = v,
                "content" => content = v,
                "metadata" => metadata = v,
                other => {
                    return raise(
                        ExcKind::TypeError,
                        format!("Text() got an unexpected keyword argument '{other}'"),
                    );
                }
            }
        }
        return Ok(crate::value::Object::new_value(
            "Text",
            [
                ("T", Value::str("Text")),
                ("metadata", metadata),
                ("role", role),
                ("content", content),
            ],
        ));
    }
    if t != TypeKind::Dict {
        no_kwargs(name, &kwargs)?;
    }
    arity(name, &args, 0, if t == TypeKind::Int { 2 } else { 1 })?;
    let arg = args.first();
    Ok(match t {
        TypeKind::Str => Value::str(&arg.map(to_str).unwrap_or_default()),
        TypeKind::Bool => Value::Bool(arg.is_some_and(Value::truthy)),
        TypeKind::Int => match arg {
            None => Value::Int(0),
            Some(Value::Float(f)) => {
                if !f.is_finite() {
                    return raise(
                        ExcKind::ValueError,
                        "cannot convert float NaN or infinity to integer",
                    );
                }
                if f.abs() >= 9.2e18 {
                    return overflow();
                }
                #[allow(clippy::cast_possible_truncation)]
                Value::Int(f.trunc() as i64)
            }
            Some(Value::Str(s)) => {
                let t = s.trim().replace('_', "");
                match t.parse::<i64>() {
                    Ok(i) => Value::Int(i),
                    Err(_) => {
                        return raise(
                            ExcKind::ValueError,
                            format!(
                                "invalid literal for int() with base 10: {}",
                                repr(&Value::Str(s.clone()))
                            ),
                        );
                    }
                }
            }
            Some(v) if as_int(v).is_some() => Value::Int(as_int(v).unwrap_or(0)),
            Some(v) => {
                return raise(
                    ExcKind::TypeError,
                    format!(
                        "int() argument must be a string, a bytes-like object or a real number, not '{}'",
                        v.type_name()
                    ),
                );
            }
        },
        TypeKind::Float => match arg {
            None => Value::Float(0.0),
            Some(Value::Str(s)) => match parse_py_float(s) {
                Some(f) => Value::Float(f),
                None => {
                    return raise(
                        ExcKind::ValueError,
                        format!(
                            "could not convert string to float: {}",
                            repr(&Value::Str(s.clone()))
                        ),
                    );
                }
            },
            Some(v) => match as_f64(v) {
                Some(f) => Value::Float(f),
                None => {
                    return raise(
                        ExcKind::TypeError,
                        format!(
                            "float() argument must be a string or a real number, not '{}'",
                            v.type_name()
                        ),
                    );
                }
            },
        },
        TypeKind::List => Value::list(match arg {
            Some(a) => iterate(a)?,
            None => Vec::new(),
        }),
        TypeKind::Tuple => Value::tuple(match arg {
            Some(a) => iterate(a)?,
            None => Vec::new(),
        }),
        TypeKind::Set => {
            let mut s = Set::default();
            if let Some(a) = arg {
                for v in iterate(a)? {
                    s.insert(hash_key(&v)?, v);
                }
            }
            Value::set(s)
        }
        TypeKind::Dict => {
            let mut d = match arg {
                Some(Value::Dict(src)) => src.borrow().clone(),
                Some(a) => {
                    let mut d = Dict::default();
                    for pair in iterate(a)? {
                        let kv = iterate(&pair)?;
                        let [k, v] = kv.as_slice() else {
                            return raise(
                                ExcKind::ValueError,
                                "dictionary update sequence element has the wrong length",
                            );
                        };
                        d.insert(hash_key(k)?, k.clone(), v.clone());
                    }
                    d
                }
                None => Dict::default(),
            };
            for (k, v) in kwargs {
                let kv = Value::str(&k);
                d.insert(hash_key(&kv)?, kv, v);
            }
            Value::dict(d)
        }
        TypeKind::NoneType | TypeKind::Object | TypeKind::Text => {
            return raise(
                ExcKind::TypeError,
                format!("cannot create '{name}' instances"),
            );
        }
    })
}

fn parse_py_float(s: &str) -> Option<f64> {
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    match lower.trim_start_matches(['+', '-']) {
        "inf" | "infinity" => {
            return Some(if lower.starts_with('-') {
                f64::NEG_INFINITY
            } else {
                f64::INFINITY
            });
        }
        "nan" => return Some(f64::NAN),
        _ => {}
    }
    if t.is_empty()
        || !t
            .chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-' | '_'))
    {
        return None;
    }
    t.replace('_', "").parse().ok()
}

/// Calls a method of a builtin type or of a host object.
#[allow(clippy::too_many_lines)]
pub fn call_method(
    interp: &mut Interp<'_>,
    recv: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Vec<(String, Value)>,
) -> R<Value> {
    match recv {
        Value::Object(o) if o.class.as_ref() == "Judge" => {
            return crate::host::call_judge(interp, name, args, kwargs);
        }
        Value::Object(o) if o.class.as_ref() == "TestContext" => {
            return raise(
                ExcKind::NotImplementedError,
                format!("TestContext.{name}() is not supported"),
            );
        }
        _ => {}
    }
    if name != "format"
        && name != "sort"
        && name != "pop"
        && name != "get"
        && name != "setdefault"
        && name != "split"
        && name != "splitlines"
    {
        no_kwargs(name, &kwargs)?;
    }
    match (recv, name) {
        // ---- str ----
        (Value::Str(s), "startswith" | "endswith") => {
            arity(name, &args, 1, 1)?;
            let prefixes: Vec<Value> = match &args[0] {
                Value::Tuple(t) => t.to_vec(),
                other => vec![other.clone()],
            };
            let mut hit = false;
            for p in prefixes {
                let p = match &p {
                    Value::Str(p) => p.clone(),
                    other => {
                        return raise(
                            ExcKind::TypeError,
                            format!(
                                "{name} first arg must be str or a tuple of str, not {}",
                                other.type_name()
                            ),
                        );
                    }
                };
                hit |= if name == "startswith" {
                    s.starts_with(&*p)
                } else {
                    s.ends_with(&*p)
                };
            }
            Ok(Value::Bool(hit))
        }
        (Value::Str(s), "lower") => Ok(Value::str(&s.to_lowercase())),
        (Value::Str(s), "upper") => Ok(Value::str(&s.to_uppercase())),
        (Value::Str(s), "title") => {
            let mut out = String::new();
            let mut prev_alpha = false;
            for c in s.chars() {
                if c.is_alphabetic() {
                    if prev_alpha {
                        out.extend(c.to_lowercase());
                    } else {
                        out.extend(c.to_uppercase());
                    }
                    prev_alpha = true;
                } else {
                    out.push(c);
                    prev_alpha = false;
                }
            }
            Ok(Value::str(&out))
        }
        (Value::Str(s), "capitalize") => {
            let mut chars = s.chars();
            let out = match chars.next() {
                Some(c) => c.to_uppercase().collect::<String>() + &chars.as_str().to_lowercase(),
                None => String::new(),
            };
            Ok(Value::str(&out))
        }
        (Value::Str(s), "strip" | "lstrip" | "rstrip") => {
            arity(name, &args, 0, 1)?;
            let set: Option<Vec<char>> = match args.first() {
                None | Some(Value::None) => None,
                Some(Value::Str(c)) => Some(c.chars().collect()),
                Some(other) => {
                    return raise(
                        ExcKind::TypeError,
                        format!("{name} arg must be None or str, not {}", other.type_name()),
                    );
                }
            };
            let pred = |c: char| match &set {
                Some(cs) => cs.contains(&c),
                None => is_py_space(c),
            };
            let out = match name {
                "strip" => s.trim_matches(pred),
                "lstrip" => s.trim_start_matches(pred),
                _ => s.trim_end_matches(pred),
            };
            Ok(Value::str(out))
        }
        (Value::Str(s), "split") => {
            let sep = args
                .first()
                .or_else(|| kwarg(&kwargs, "sep"))
                .cloned()
                .unwrap_or(Value::None);
            let maxsplit = args
                .get(1)
                .or_else(|| kwarg(&kwargs, "maxsplit"))
                .and_then(as_int)
                .unwrap_or(-1);
            let parts: Vec<Value> = match &sep {
                Value::None => {
                    let words = s.split(is_py_space).filter(|w| !w.is_empty());
                    if maxsplit < 0 {
                        words.map(Value::str).collect()
                    } else {
                        // Rare: split on whitespace with a limit.
                        let mut out = Vec::new();
                        let mut rest = s.trim_start_matches(is_py_space);
                        let mut n = 0;
                        while !rest.is_empty() {
                            if n == maxsplit {
                                out.push(Value::str(rest));
                                break;
                            }
                            let end = rest.find(is_py_space).unwrap_or(rest.len());
                            out.push(Value::str(rest.get(..end).unwrap_or_default()));
                            rest = rest
                                .get(end..)
                                .unwrap_or_default()
                                .trim_start_matches(is_py_space);
                            n += 1;
                        }
                        out
                    }
                }
                Value::Str(sep) => {
                    if sep.is_empty() {
                        return raise(ExcKind::ValueError, "empty separator");
                    }
                    if maxsplit < 0 {
                        s.split(&**sep).map(Value::str).collect()
                    } else {
                        s.splitn(usize::try_from(maxsplit).unwrap_or(0) + 1, &**sep)
                            .map(Value::str)
                            .collect()
                    }
                }
                other => {
                    return raise(
                        ExcKind::TypeError,
                        format!("must be str or None, not {}", other.type_name()),
                    );
                }
            };
            Ok(Value::list(parts))
        }
        (Value::Str(s), "splitlines") => {
            arity("splitlines", &args, 0, 1)?;
            let keep = args
                .first()
                .or_else(|| kwarg(&kwargs, "keepends"))
                .is_some_and(Value::truthy);
            Ok(Value::list(
                splitlines(s, keep).into_iter().map(Value::str).collect(),
            ))
        }
        (Value::Str(s), "join") => {
            arity("join", &args, 1, 1)?;
            let mut out = String::new();
            let room = crate::budget::remaining();
            for (i, it) in iterate(&args[0])?.iter().enumerate() {
                if out.len() > room {
                    crate::budget::fits(out.len())?;
                }
                if i > 0 {
                    out.push_str(s);
                }
                match it {
                    Value::Str(x) => out.push_str(x),
                    other => {
                        return raise(
                            ExcKind::TypeError,
                            format!(
                                "sequence item {i}: expected str instance, {} found",
                                other.type_name()
                            ),
                        );
                    }
                }
            }
            Ok(Value::str(&out))
        }
        (Value::Str(s), "replace") => {
            arity("replace", &args, 2, 3)?;
            let (a, b) = (
                want_str("replace", &args[0])?,
                want_str("replace", &args[1])?,
            );
            let limit = match args.get(2).and_then(as_int) {
                Some(n) if n >= 0 => Some(usize::try_from(n).unwrap_or(usize::MAX)),
                _ => None,
            };
            // The size of the result, before it is built.
            let hits = if a.is_empty() {
                s.chars().count() + 1
            } else {
                s.matches(a).count()
            };
            let hits = limit.map_or(hits, |n| hits.min(n));
            crate::budget::fits(s.len().saturating_add(hits.saturating_mul(b.len())))?;
            match limit {
                Some(n) => Ok(Value::str(&s.replacen(a, b, n))),
                None => Ok(Value::str(&s.replace(a, b))),
            }
        }
        (Value::Str(s), "find" | "index" | "count") => {
            arity(name, &args, 1, 1)?;
            let needle = want_str(name, &args[0])?;
            if name == "count" {
                let n = if needle.is_empty() {
                    s.chars().count() + 1
                } else {
                    s.matches(needle).count()
                };
                return Ok(Value::Int(i64::try_from(n).unwrap_or(0)));
            }
            match s.find(needle) {
                Some(byte) => Ok(Value::Int(
                    i64::try_from(s.get(..byte).unwrap_or_default().chars().count()).unwrap_or(0),
                )),
                None if name == "find" => Ok(Value::Int(-1)),
                None => raise(ExcKind::ValueError, "substring not found"),
            }
        }
        (Value::Str(s), "isdigit") => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(|c| c.is_ascii_digit()),
        )),
        (Value::Str(s), "isalpha") => Ok(Value::Bool(
            !s.is_empty() && s.chars().all(char::is_alphabetic),
        )),
        (Value::Str(s), "format") => str_format(s, &args, &kwargs),
        // ---- list ----
        (Value::List(l), "append") => {
            arity("append", &args, 1, 1)?;
            grow(1)?;
            l.borrow_mut()
                .push(args.into_iter().next().unwrap_or(Value::None));
            Ok(Value::None)
        }
        (Value::List(l), "extend") => {
            arity("extend", &args, 1, 1)?;
            let items = iterate(&args[0])?;
            grow(items.len())?;
            l.borrow_mut().extend(items);
            Ok(Value::None)
        }
        (Value::List(l), "insert") => {
            arity("insert", &args, 2, 2)?;
            let len = i64::try_from(l.borrow().len()).unwrap_or(0);
            let i = as_int(&args[0]).unwrap_or(0);
            let i = if i < 0 {
                i.saturating_add(len).max(0)
            } else {
                i.min(len)
            };
            grow(1)?;
            l.borrow_mut()
                .insert(usize::try_from(i).unwrap_or(0), args[1].clone());
            Ok(Value::None)
        }
        (Value::List(l), "pop") => {
            let len = l.borrow().len();
            if len == 0 {
                return raise(ExcKind::IndexError, "pop from empty list");
            }
            let i = match args.first() {
                Some(v) => index_of(len, v, "pop")?,
                None => len - 1,
            };
            Ok(l.borrow_mut().remove(i))
        }
        (Value::List(l), "remove") => {
            arity("remove", &args, 1, 1)?;
            let pos = l.borrow().iter().position(|x| py_eq(x, &args[0]));
            match pos {
                Some(i) => {
                    l.borrow_mut().remove(i);
                    Ok(Value::None)
                }
                None => raise(ExcKind::ValueError, "list.remove(x): x not in list"),
            }
        }
        (Value::List(l), "copy") => Ok(Value::list(l.borrow().clone())),
        (Value::List(l), "sort") => {
            let items = l.borrow().clone();
            let reverse = kwarg(&kwargs, "reverse").is_some_and(Value::truthy);
            let sorted = sort_values(interp, items, kwarg(&kwargs, "key"), reverse)?;
            l.borrow_mut().0 = sorted;
            Ok(Value::None)
        }
        (Value::List(_) | Value::Tuple(_), "index" | "count") => {
            arity(name, &args, 1, 1)?;
            let items = iterate(recv)?;
            if name == "count" {
                return Ok(Value::Int(
                    i64::try_from(items.iter().filter(|x| py_eq(x, &args[0])).count()).unwrap_or(0),
                ));
            }
            match items.iter().position(|x| py_eq(x, &args[0])) {
                Some(i) => Ok(Value::Int(i64::try_from(i).unwrap_or(0))),
                None => raise(
                    ExcKind::ValueError,
                    format!("{} is not in list", repr(&args[0])),
                ),
            }
        }
        // ---- dict ----
        (Value::Dict(d), "get") => {
            arity("get", &args, 1, 2)?;
            let k = hash_key(&args[0])?;
            Ok(d.borrow()
                .get(&k)
                .unwrap_or_else(|| args.get(1).cloned().unwrap_or(Value::None)))
        }
        (Value::Dict(d), "items") => Ok(Value::DictView(d.clone(), ViewKind::Items)),
        (Value::Dict(d), "keys") => Ok(Value::DictView(d.clone(), ViewKind::Keys)),
        (Value::Dict(d), "values") => Ok(Value::DictView(d.clone(), ViewKind::Values)),
        (Value::Dict(d), "copy") => Ok(Value::dict(d.borrow().clone())),
        (Value::Dict(d), "setdefault") => {
            arity("setdefault", &args, 1, 2)?;
            let k = hash_key(&args[0])?;
            let existing = d.borrow().get(&k);
            if let Some(v) = existing {
                return Ok(v);
            }
            let v = args.get(1).cloned().unwrap_or(Value::None);
            d.borrow_mut().insert(k, args[0].clone(), v.clone());
            Ok(v)
        }
        (Value::Dict(d), "update") => {
            if let Some(other) = args.first() {
                let pairs: Vec<(Value, Value)> = match other {
                    Value::Dict(o) => o.borrow().map().values().cloned().collect(),
                    it => {
                        let mut out = Vec::new();
                        for p in iterate(it)? {
                            let kv = iterate(&p)?;
                            if let [k, v] = kv.as_slice() {
                                out.push((k.clone(), v.clone()));
                            }
                        }
                        out
                    }
                };
                for (k, v) in pairs {
                    let key = hash_key(&k)?;
                    d.borrow_mut().insert(key, k, v);
                }
            }
            for (k, v) in kwargs {
                let kv = Value::str(&k);
                d.borrow_mut().insert(hash_key(&kv)?, kv, v);
            }
            Ok(Value::None)
        }
        (Value::Dict(d), "pop") => {
            arity("pop", &args, 1, 2)?;
            let k = hash_key(&args[0])?;
            let removed = d.borrow_mut().map_mut().shift_remove(&k);
            match (removed, args.get(1)) {
                (Some((_, v)), _) => Ok(v),
                (None, Some(default)) => Ok(default.clone()),
                (None, None) => raise(ExcKind::KeyError, repr(&args[0])),
            }
        }
        // ---- set ----
        (Value::Set(s), "add") => {
            arity("add", &args, 1, 1)?;
            let k = hash_key(&args[0])?;
            s.borrow_mut().insert(k, args[0].clone());
            Ok(Value::None)
        }
        (Value::Set(s), "discard") => {
            arity("discard", &args, 1, 1)?;
            let k = hash_key(&args[0])?;
            s.borrow_mut().map.shift_remove(&k);
            Ok(Value::None)
        }
        (Value::Set(s), "update") => {
            for a in &args {
                for v in iterate(a)? {
                    let k = hash_key(&v)?;
                    s.borrow_mut().insert(k, v);
                }
            }
            Ok(Value::None)
        }
        (Value::Set(s), "copy") => Ok(Value::set(s.borrow().clone())),
        (Value::Set(_), "union" | "intersection" | "difference") => {
            let mut acc = recv.clone();
            for a in &args {
                let mut other = Set::default();
                for v in iterate(a)? {
                    other.insert(hash_key(&v)?, v);
                }
                let op = match name {
                    "union" => Operator::BitOr,
                    "intersection" => Operator::BitAnd,
                    _ => Operator::Sub,
                };
                acc = binary_op(op, &acc, &Value::set(other))?;
            }
            if args.is_empty() {
                acc = Value::set(match recv {
                    Value::Set(s) => s.borrow().clone(),
                    _ => Set::default(),
                });
            }
            Ok(acc)
        }
        (Value::Set(_), "issubset" | "issuperset") => {
            arity(name, &args, 1, 1)?;
            let mut other = Set::default();
            for v in iterate(&args[0])? {
                other.insert(hash_key(&v)?, v);
            }
            let op = if name == "issubset" {
                CmpOp::LtE
            } else {
                CmpOp::GtE
            };
            Ok(Value::Bool(order(op, recv, &Value::set(other))?))
        }
        _ => raise(
            ExcKind::AttributeError,
            format!("'{}' object has no attribute '{name}'", recv.type_name()),
        ),
    }
}

/// Python's `str.isspace` for one character: Unicode white space and the separators
/// `\x1c`..`\x1f`.
fn is_py_space(c: char) -> bool {
    c.is_whitespace() || ('\x1c'..='\x1f').contains(&c)
}

/// `str.splitlines`: the line boundaries CPython uses (`\n`, `\r`, `\r\n`, `\v`, `\f`,
/// `\x1c`, `\x1d`, `\x1e`, `\x85`, `\u2028`, `\u2029`).
fn splitlines(s: &str, keepends: bool) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let end_of_break = match c {
            '\r' => match chars.peek() {
                Some(&(j, '\n')) => {
                    chars.next();
                    j + 1
                }
                _ => i + 1,
            },
            '\n' | '\x0b' | '\x0c' | '\x1c' | '\x1d' | '\x1e' | '\u{85}' | '\u{2028}'
            | '\u{2029}' => i + c.len_utf8(),
            _ => continue,
        };
        let end = if keepends { end_of_break } else { i };
        out.push(s.get(start..end).unwrap_or_default());
        start = end_of_break;
    }
    if start < s.len() {
        out.push(s.get(start..).unwrap_or_default());
    }
    out
}

/// `str.format` with `{}`, `{0}`, `{name}`, `{!r}` and simple format specs.
fn str_format(fmt: &str, args: &[Value], kwargs: &[(String, Value)]) -> R<Value> {
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
