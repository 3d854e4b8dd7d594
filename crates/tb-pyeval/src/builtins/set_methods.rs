//! The methods of `set`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A method of a `set`.
pub(super) fn call(recv: &Value, name: &str, args: Vec<Value>) -> R<Value> {
    match (recv, name) {
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
        _ => no_attribute(recv, name),
    }
}
