//! Builtin functions, operators and the methods of builtin types that test bodies call.

use std::cmp::Ordering;
use std::rc::Rc;

use ruff_python_ast::{CmpOp, Operator};

use crate::interp::{ExcKind, Interp, R, raise};
use crate::repr::{DumpsOptions, json_dumps, repr, to_str};
use crate::value::{
    Builtin, Dict, Key, Kwargs, Module, SLOT, Set, TypeKind, Value, ViewKind, as_f64, as_int,
    py_eq, view_set,
};

mod dict_methods;
mod format;
mod list_methods;
mod ops;
mod set_methods;
mod str_methods;

#[allow(clippy::wildcard_imports)]
use format::*;
pub use format::{ascii, format_value};
pub(crate) use ops::grow;
#[allow(clippy::wildcard_imports)]
use ops::*;
pub use ops::{binary_op, inplace_op, negate, order, py_cmp};

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
    kwargs: Kwargs,
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
    kwargs: Kwargs,
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
pub fn call_method(
    interp: &mut Interp<'_>,
    recv: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
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
    match recv {
        Value::Str(_) => str_methods::call(recv, name, args, kwargs),
        Value::List(_) | Value::Tuple(_) => list_methods::call(interp, recv, name, args, kwargs),
        Value::Dict(_) => dict_methods::call(recv, name, args, kwargs),
        Value::Set(_) => set_methods::call(recv, name, args),
        _ => no_attribute(recv, name),
    }
}

/// Python's `AttributeError` for a method the type does not have.
fn no_attribute(recv: &Value, name: &str) -> R<Value> {
    raise(
        ExcKind::AttributeError,
        format!("'{}' object has no attribute '{name}'", recv.type_name()),
    )
}
