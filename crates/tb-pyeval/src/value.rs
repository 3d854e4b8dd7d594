//! Python values as the test bodies see them: numbers, strings, containers with Python's
//! equality and hashing (`1 == 1.0`, `True == 1`, dict insertion order), and the host objects
//! (`TestContext`, `Judge`, tool calls) the runner hands to a test.

use std::cell::RefCell;
use std::rc::Rc;

use indexmap::IndexMap;

use crate::interp::Function;

/// A Python value.
#[derive(Clone, Debug)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<RefCell<Vec<Value>>>),
    Tuple(Rc<Vec<Value>>),
    Dict(Rc<RefCell<Dict>>),
    Set(Rc<RefCell<Set>>),
    /// `d.items()`, `d.keys()`, `d.values()`: live views of a dict.
    DictView(Rc<RefCell<Dict>>, ViewKind),
    Func(Rc<Function>),
    Builtin(Builtin),
    /// A method looked up on a value, not yet called.
    Method(Box<Value>, Rc<str>),
    /// A host object with read-only attributes (`TestContext`, `ToolCall`, ...).
    Object(Rc<Object>),
    /// A class used as a value: `str`, `dict`, `isinstance(x, (list, tuple))`.
    Type(TypeKind),
    /// An imported module (`json`).
    Module(Module),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ViewKind {
    Keys,
    Values,
    Items,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    Json,
}

/// Builtin functions that are not classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    Len,
    Isinstance,
    All,
    Any,
    Sorted,
    Sum,
    Min,
    Max,
    Abs,
    Round,
    Enumerate,
    Range,
    Zip,
    Print,
    Repr,
    Reversed,
    Hasattr,
    Getattr,
    JsonDumps,
    JsonLoads,
}

/// Builtin classes: callable as constructors, and usable with `isinstance`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeKind {
    Str,
    Int,
    Float,
    Bool,
    List,
    Tuple,
    Dict,
    Set,
    NoneType,
    Object,
    /// The reference's `Text` message class (`thinkingbox.common.chat_types.Text`).
    Text,
}

impl TypeKind {
    pub fn name(self) -> &'static str {
        match self {
            TypeKind::Str => "str",
            TypeKind::Int => "int",
            TypeKind::Float => "float",
            TypeKind::Bool => "bool",
            TypeKind::List => "list",
            TypeKind::Tuple => "tuple",
            TypeKind::Dict => "dict",
            TypeKind::Set => "set",
            TypeKind::NoneType => "NoneType",
            TypeKind::Object => "object",
            TypeKind::Text => "Text",
        }
    }
}

/// A host object: a class name and its attributes, in declaration order.
#[derive(Debug)]
pub struct Object {
    pub class: Rc<str>,
    pub attrs: RefCell<IndexMap<Rc<str>, Value>>,
}

impl Object {
    pub fn new_value(class: &str, attrs: impl IntoIterator<Item = (&'static str, Value)>) -> Value {
        Value::Object(Rc::new(Object {
            class: class.into(),
            attrs: RefCell::new(attrs.into_iter().map(|(k, v)| (Rc::from(k), v)).collect()),
        }))
    }
}

/// The hashable form of a value: equal values (`1`, `1.0`, `True`) give equal keys.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    None,
    Int(i64),
    /// A float that is not an integer, by its bits (NaN keys never compare equal in Python;
    /// here they are equal to themselves, which only matters for `nan in {nan}`).
    Float(u64),
    Str(Rc<str>),
    Tuple(Vec<Key>),
    /// Identity-hashed objects (functions, host objects, types) by pointer or tag.
    Ident(usize),
}

/// A dict: insertion order, Python key equality. Each entry keeps the original key value
/// (so `{1.0: x}` still shows `1.0`).
#[derive(Clone, Debug, Default)]
pub struct Dict {
    pub map: IndexMap<Key, (Value, Value)>,
}

impl Dict {
    pub fn get(&self, key: &Key) -> Option<&Value> {
        self.map.get(key).map(|(_, v)| v)
    }
    pub fn insert(&mut self, key: Key, kval: Value, value: Value) {
        if let Some(slot) = self.map.get_mut(&key) {
            // Python keeps the first key object and replaces the value.
            slot.1 = value;
        } else {
            self.map.insert(key, (kval, value));
        }
    }
    pub fn len(&self) -> usize {
        self.map.len()
    }
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

/// A set, in insertion order (CPython's order differs for strings, whose hashes are salted
/// per process; the reference marks messages that show a set's order as varying).
#[derive(Clone, Debug, Default)]
pub struct Set {
    pub map: IndexMap<Key, Value>,
}

impl Set {
    pub fn insert(&mut self, key: Key, value: Value) {
        self.map.entry(key).or_insert(value);
    }
}

impl Value {
    pub fn str(s: &str) -> Value {
        Value::Str(Rc::from(s))
    }
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(RefCell::new(items)))
    }
    pub fn tuple(items: Vec<Value>) -> Value {
        Value::Tuple(Rc::new(items))
    }
    pub fn dict(d: Dict) -> Value {
        Value::Dict(Rc::new(RefCell::new(d)))
    }
    pub fn set(s: Set) -> Value {
        Value::Set(Rc::new(RefCell::new(s)))
    }

    /// Python's `type(v).__name__`.
    pub fn type_name(&self) -> String {
        match self {
            Value::None => "NoneType".into(),
            Value::Bool(_) => "bool".into(),
            Value::Int(_) => "int".into(),
            Value::Float(_) => "float".into(),
            Value::Str(_) => "str".into(),
            Value::List(_) => "list".into(),
            Value::Tuple(_) => "tuple".into(),
            Value::Dict(_) => "dict".into(),
            Value::Set(_) => "set".into(),
            Value::DictView(_, ViewKind::Keys) => "dict_keys".into(),
            Value::DictView(_, ViewKind::Values) => "dict_values".into(),
            Value::DictView(_, ViewKind::Items) => "dict_items".into(),
            Value::Func(_) => "function".into(),
            Value::Builtin(_) => "builtin_function_or_method".into(),
            Value::Method(..) => "method".into(),
            Value::Object(o) => o.class.to_string(),
            Value::Type(_) => "type".into(),
            Value::Module(_) => "module".into(),
        }
    }

    /// Python truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Value::None => false,
            Value::Bool(b) => *b,
            Value::Int(i) => *i != 0,
            Value::Float(f) => *f != 0.0,
            Value::Str(s) => !s.is_empty(),
            Value::List(l) => !l.borrow().is_empty(),
            Value::Tuple(t) => !t.is_empty(),
            Value::Dict(d) => !d.borrow().is_empty(),
            Value::Set(s) => !s.borrow().map.is_empty(),
            Value::DictView(d, _) => !d.borrow().is_empty(),
            _ => true,
        }
    }

    /// The hash key of a hashable value; `None` for unhashable ones (lists, dicts, sets).
    pub fn key(&self) -> Option<Key> {
        Some(match self {
            Value::None => Key::None,
            Value::Bool(b) => Key::Int(i64::from(*b)),
            Value::Int(i) => Key::Int(*i),
            Value::Float(f) => float_key(*f),
            Value::Str(s) => Key::Str(s.clone()),
            Value::Tuple(t) => {
                let mut keys = Vec::with_capacity(t.len());
                for v in t.iter() {
                    keys.push(v.key()?);
                }
                Key::Tuple(keys)
            }
            Value::Func(f) => Key::Ident(Rc::as_ptr(f).cast::<u8>() as usize),
            Value::Object(o) => Key::Ident(Rc::as_ptr(o).cast::<u8>() as usize),
            Value::Type(t) => Key::Ident(*t as usize),
            Value::Builtin(b) => Key::Ident(0x1000 + *b as usize),
            Value::Module(_) => Key::Ident(0x2000),
            Value::List(_)
            | Value::Dict(_)
            | Value::Set(_)
            | Value::DictView(..)
            | Value::Method(..) => return None,
        })
    }
}

fn float_key(f: f64) -> Key {
    // Integral floats hash like the int of the same value.
    if f.fract() == 0.0 && f.is_finite() && f.abs() < 9.0e18 {
        #[allow(clippy::cast_possible_truncation)]
        return Key::Int(f as i64);
    }
    if f == 0.0 {
        return Key::Int(0);
    }
    Key::Float(f.to_bits())
}

/// Python `==`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    use Value as V;
    match (a, b) {
        (V::None, V::None) => true,
        (V::Bool(_) | V::Int(_) | V::Float(_), V::Bool(_) | V::Int(_) | V::Float(_)) => {
            num_eq(a, b)
        }
        (V::Str(x), V::Str(y)) => x == y,
        (V::List(x), V::List(y)) => {
            if Rc::ptr_eq(x, y) {
                return true;
            }
            let (x, y) = (x.borrow(), y.borrow());
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (V::Tuple(x), V::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y.iter()).all(|(p, q)| py_eq(p, q))
        }
        (V::Dict(x), V::Dict(y)) => {
            if Rc::ptr_eq(x, y) {
                return true;
            }
            dict_eq(&x.borrow(), &y.borrow())
        }
        (V::Set(x), V::Set(y)) => {
            let (x, y) = (x.borrow(), y.borrow());
            x.map.len() == y.map.len() && x.map.keys().all(|k| y.map.contains_key(k))
        }
        (V::Set(s), V::DictView(d, ViewKind::Keys))
        | (V::DictView(d, ViewKind::Keys), V::Set(s)) => {
            let (s, d) = (s.borrow(), d.borrow());
            s.map.len() == d.map.len() && s.map.keys().all(|k| d.map.contains_key(k))
        }
        (V::DictView(x, kx), V::DictView(y, ky)) if kx == ky && *kx != ViewKind::Values => {
            let (ix, iy) = (view_set(&x.borrow(), *kx), view_set(&y.borrow(), *ky));
            match (ix, iy) {
                (Some(ix), Some(iy)) => {
                    ix.len() == iy.len() && ix.keys().all(|k| iy.contains_key(k))
                }
                _ => false,
            }
        }
        (V::Func(x), V::Func(y)) => Rc::ptr_eq(x, y),
        (V::Object(x), V::Object(y)) => Rc::ptr_eq(x, y),
        (V::Type(x), V::Type(y)) => x == y,
        (V::Builtin(x), V::Builtin(y)) => x == y,
        (V::Module(x), V::Module(y)) => x == y,
        _ => false,
    }
}

fn dict_eq(x: &Dict, y: &Dict) -> bool {
    x.len() == y.len()
        && x.map
            .iter()
            .all(|(k, (_, v))| y.get(k).is_some_and(|w| py_eq(v, w)))
}

/// The entries of a keys or items view as a set keyed by hash (items need hashable values).
pub fn view_set(d: &Dict, kind: ViewKind) -> Option<IndexMap<Key, Value>> {
    let mut out = IndexMap::new();
    for (k, (kv, v)) in &d.map {
        match kind {
            ViewKind::Keys => {
                out.insert(k.clone(), kv.clone());
            }
            ViewKind::Items => {
                let item = Value::tuple(vec![kv.clone(), v.clone()]);
                out.insert(item.key()?, item);
            }
            ViewKind::Values => return None,
        }
    }
    Some(out)
}

fn num_eq(a: &Value, b: &Value) -> bool {
    match (as_int(a), as_int(b)) {
        (Some(x), Some(y)) => x == y,
        _ => match (as_f64(a), as_f64(b)) {
            (Some(x), Some(y)) => {
                // Compare an int with a float exactly, as Python does.
                match (a, b) {
                    (Value::Float(f), other) | (other, Value::Float(f))
                        if as_int(other).is_some() =>
                    {
                        int_float_eq(as_int(other).unwrap_or_default(), *f)
                    }
                    _ => x == y,
                }
            }
            _ => false,
        },
    }
}

fn int_float_eq(i: i64, f: f64) -> bool {
    if !f.is_finite() || f.fract() != 0.0 {
        return false;
    }
    // Exact: f is integral; compare in i128 to avoid rounding the int.
    if f.abs() >= 1.0e19 {
        return false;
    }
    #[allow(clippy::cast_possible_truncation)]
    let fi = f as i128;
    fi == i128::from(i)
}

pub fn as_int(v: &Value) -> Option<i64> {
    match v {
        Value::Bool(b) => Some(i64::from(*b)),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

pub fn as_f64(v: &Value) -> Option<f64> {
    match v {
        Value::Bool(b) => Some(if *b { 1.0 } else { 0.0 }),
        #[allow(clippy::cast_precision_loss)]
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    }
}

/// Converts parsed JSON (as `json.loads` gives it) into Python values.
pub fn from_json(v: &serde_json::Value) -> Value {
    match v {
        serde_json::Value::Null => Value::None,
        serde_json::Value::Bool(b) => Value::Bool(*b),
        serde_json::Value::Number(n) => {
            // An int beyond i64 (Python would keep it exact) becomes its float value.
            match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => Value::Int(i),
                (None, Some(f)) => Value::Float(f),
                (None, None) => Value::None,
            }
        }
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(a) => Value::list(a.iter().map(from_json).collect()),
        serde_json::Value::Object(o) => {
            let mut d = Dict::default();
            for (k, v) in o {
                let kv = Value::str(k);
                d.insert(Key::Str(Rc::from(k.as_str())), kv, from_json(v));
            }
            Value::dict(d)
        }
    }
}
