//! The methods of `list` and `tuple`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A method of a `list` or a `tuple`.
pub(super) fn call(
    interp: &mut Interp<'_>,
    recv: &Value,
    name: &str,
    args: Vec<Value>,
    kwargs: Kwargs,
) -> R<Value> {
    match (recv, name) {
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
        _ => no_attribute(recv, name),
    }
}
