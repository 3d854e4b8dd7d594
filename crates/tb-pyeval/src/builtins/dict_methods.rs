//! The methods of `dict`.

#[allow(clippy::wildcard_imports)]
use super::*;

/// A method of a `dict`.
pub(super) fn call(recv: &Value, name: &str, args: Vec<Value>, kwargs: Kwargs) -> R<Value> {
    match (recv, name) {
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
        _ => no_attribute(recv, name),
    }
}
