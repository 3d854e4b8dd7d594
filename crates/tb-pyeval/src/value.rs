//! Python values as the test bodies see them: numbers, strings, containers with Python's
//! equality and hashing (`1 == 1.0`, `True == 1`, dict insertion order), and the host objects
//! (`TestContext`, `Judge`, tool calls) the runner hands to a test.

use std::cell::{OnceCell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use indexmap::IndexMap;
use yoke::Yoke;

use crate::interp::Function;

/// The hasher of the evaluator's maps: foldhash, seeded per process (SipHash was a fifth of
/// a body's instructions).
pub type FastState = foldhash::fast::RandomState;

/// The keyword arguments of a call, in the order written.
pub type Kwargs = Vec<(String, Value)>;

/// An insertion-ordered map with [`FastState`].
pub type FastIndexMap<K, V> = IndexMap<K, V, FastState>;

/// The bytes a container slot counts for in the memory budget.
pub const SLOT: usize = std::mem::size_of::<Value>();

/// A Python value.
#[derive(Clone, Debug)]
pub enum Value {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Rc<str>),
    List(Rc<RefCell<Items>>),
    Tuple(Rc<Items>),
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

/// The items of a list or tuple. Dropping one never recurses: nested containers held only
/// here are taken apart one by one (see `drop_values`), so a list nested a million deep
/// is freed without a deep stack.
#[derive(Debug, Default)]
pub struct Items(pub Vec<Value>);

impl std::ops::Deref for Items {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl std::ops::DerefMut for Items {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.0
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            drop_values(std::mem::take(&mut self.0));
        }
    }
}

/// Drops values without recursing: a container held only by the values being dropped
/// gives its contents to the work list before it goes, so it is dropped empty.
pub(crate) fn drop_values(mut stack: Vec<Value>) {
    while let Some(v) = stack.pop() {
        match v {
            Value::List(rc) => {
                if let Ok(cell) = Rc::try_unwrap(rc) {
                    stack.append(&mut cell.into_inner().0);
                }
            }
            Value::Tuple(rc) => {
                if let Ok(mut items) = Rc::try_unwrap(rc) {
                    stack.append(&mut items.0);
                }
            }
            Value::Dict(rc) | Value::DictView(rc, _) => {
                if let Ok(cell) = Rc::try_unwrap(rc) {
                    cell.into_inner().drain_into(&mut stack);
                }
            }
            Value::Set(rc) => {
                if let Ok(cell) = Rc::try_unwrap(rc) {
                    stack.extend(std::mem::take(&mut cell.into_inner().map).into_values());
                }
            }
            Value::Func(rc) => {
                if let Ok(mut f) = Rc::try_unwrap(rc) {
                    f.drain_into(&mut stack);
                }
            }
            Value::Object(rc) => {
                if let Ok(o) = Rc::try_unwrap(rc) {
                    stack.extend(std::mem::take(&mut *o.attrs.borrow_mut()).into_values());
                }
            }
            Value::Method(b, _) => stack.push(*b),
            _ => {}
        }
    }
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
    pub attrs: RefCell<FastIndexMap<Rc<str>, Value>>,
}

impl Drop for Object {
    fn drop(&mut self) {
        let attrs = std::mem::take(self.attrs.get_mut());
        if !attrs.is_empty() {
            drop_values(attrs.into_values().collect());
        }
    }
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
///
/// A dict converted from JSON (the effects a test reads) is lazy: it keeps a pointer to its
/// JSON object (with the document it lives in) and converts nothing until it is read. A
/// lookup by key converts that one entry (and remembers it, so reading it again gives the
/// same object, as Python does); anything that needs every entry (iteration, equality,
/// `repr`, a change) converts them all once, reusing the entries already converted. A lazy
/// dict behaves exactly as the dict [`from_json`] builds eagerly.
#[derive(Default)]
pub struct Dict {
    entries: OnceCell<FastIndexMap<Key, (Value, Value)>>,
    lazy: Option<LazyDict>,
}

/// The JSON object a lazy dict stands for, and its entries converted so far.
struct LazyDict {
    src: JsonRef,
    read: RefCell<Read>,
}

/// The entries of a lazy dict read one by one: a short list (a body reads a few keys of a
/// dict), a hash map past [`Read::SHORT`] entries.
enum Read {
    Short(Vec<(Rc<str>, Value)>),
    Many(HashMap<Rc<str>, Value, FastState>),
}

impl Read {
    const SHORT: usize = 8;

    fn get(&self, k: &str) -> Option<&Value> {
        match self {
            Read::Short(v) => v.iter().find(|(n, _)| &**n == k).map(|(_, v)| v),
            Read::Many(m) => m.get(k),
        }
    }

    fn insert(&mut self, k: Rc<str>, v: Value) {
        match self {
            Read::Short(list) if list.len() < Read::SHORT => list.push((k, v)),
            Read::Short(list) => {
                let mut m: HashMap<Rc<str>, Value, FastState> =
                    std::mem::take(list).into_iter().collect();
                m.insert(k, v);
                *self = Read::Many(m);
            }
            Read::Many(m) => {
                m.insert(k, v);
            }
        }
    }
}

impl std::fmt::Debug for Dict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.entries.get(), &self.lazy) {
            (Some(m), _) => f.debug_struct("Dict").field("map", m).finish(),
            (None, Some(l)) => write!(f, "Dict(lazy {:?})", l.src),
            (None, None) => f.write_str("Dict {}"),
        }
    }
}

impl Clone for Dict {
    /// A shallow copy (`dict.copy()`): the entries' values are shared, as in Python.
    fn clone(&self) -> Self {
        Dict::from_map(self.map().clone())
    }
}

impl Drop for Dict {
    fn drop(&mut self) {
        let mut stack = Vec::new();
        self.drain_into(&mut stack);
        if !stack.is_empty() {
            drop_values(stack);
        }
    }
}

impl Dict {
    /// Moves the keys and values of the entries out (to drop them without recursing).
    fn drain_into(&mut self, stack: &mut Vec<Value>) {
        if let Some(map) = self.entries.take() {
            stack.reserve(map.len() * 2);
            for (_, (k, v)) in map {
                stack.push(k);
                stack.push(v);
            }
        }
        if let Some(l) = self.lazy.as_mut() {
            let read = std::mem::replace(l.read.get_mut(), Read::Short(Vec::new()));
            match read {
                Read::Short(v) => stack.extend(v.into_iter().map(|(_, v)| v)),
                Read::Many(m) => stack.extend(m.into_values()),
            }
        }
    }

    /// A dict with these entries.
    pub fn from_map(map: FastIndexMap<Key, (Value, Value)>) -> Dict {
        Dict {
            entries: OnceCell::from(map),
            lazy: None,
        }
    }

    /// A lazy dict over a JSON object (see [`Dict`]); `src` must point at an object.
    fn lazy(src: JsonRef) -> Dict {
        Dict {
            entries: OnceCell::new(),
            lazy: Some(LazyDict {
                src,
                read: RefCell::new(Read::Short(Vec::new())),
            }),
        }
    }

    /// The JSON object of a lazy dict not converted yet.
    fn pending(&self) -> Option<(&LazyDict, &serde_json::Map<String, serde_json::Value>)> {
        if self.entries.get().is_some() {
            return None;
        }
        let l = self.lazy.as_ref()?;
        l.src.get().as_object().map(|o| (l, o))
    }

    /// Every entry, in insertion order (a lazy dict converts its entries here, once).
    pub fn map(&self) -> &FastIndexMap<Key, (Value, Value)> {
        self.entries.get_or_init(|| {
            let Some(l) = self.lazy.as_ref() else {
                return FastIndexMap::default();
            };
            let Some(o) = l.src.get().as_object() else {
                return FastIndexMap::default();
            };
            let read = l.read.borrow();
            let mut map = FastIndexMap::with_capacity_and_hasher(o.len(), FastState::default());
            for (k, v) in o {
                let (key, value) = if let Some(value) = read.get(k.as_str()) {
                    (Rc::from(k.as_str()), value.clone())
                } else {
                    (Rc::from(k.as_str()), lazy_value(&l.src, Seg::Key(k), v))
                };
                map.insert(Key::Str(Rc::clone(&key)), (Value::Str(key), value));
            }
            map
        })
    }

    /// The entries, to change them.
    pub fn map_mut(&mut self) -> &mut FastIndexMap<Key, (Value, Value)> {
        self.map();
        self.lazy = None;
        match self.entries.get_mut() {
            Some(m) => m,
            None => unreachable!("map() initialised the entries"),
        }
    }

    /// The value of a key (a lazy dict converts only this entry).
    pub fn get(&self, key: &Key) -> Option<Value> {
        if let Some((l, o)) = self.pending() {
            let Key::Str(k) = key else {
                // Every key of a JSON object is a string.
                return None;
            };
            if let Some(v) = l.read.borrow().get(k) {
                return Some(v.clone());
            }
            let (name, json) = o.get_key_value(&**k)?;
            let v = lazy_value(&l.src, Seg::Key(name), json);
            l.read.borrow_mut().insert(Rc::clone(k), v.clone());
            return Some(v);
        }
        self.map().get(key).map(|(_, v)| v.clone())
    }

    /// Whether a key is present.
    pub fn contains_key(&self, key: &Key) -> bool {
        if let Some((_, o)) = self.pending() {
            return matches!(key, Key::Str(k) if o.contains_key(&**k));
        }
        self.map().contains_key(key)
    }

    pub fn insert(&mut self, key: Key, kval: Value, value: Value) {
        let map = self.map_mut();
        if let Some(slot) = map.get_mut(&key) {
            // Python keeps the first key object and replaces the value.
            slot.1 = value;
        } else {
            map.insert(key, (kval, value));
            crate::budget::charge(3 * SLOT);
        }
    }
    pub fn len(&self) -> usize {
        match self.pending() {
            Some((_, o)) => o.len(),
            None => self.map().len(),
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One step into a JSON value.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Seg<'k> {
    Key(&'k str),
    Index(usize),
}

/// A node of a shared JSON document: a reference to the node, kept valid by the document's
/// `Arc` it is yoked to, so reading it is one pointer, not a walk from the root.
#[derive(Clone)]
pub(crate) struct JsonRef(Yoke<&'static serde_json::Value, Arc<serde_json::Value>>);

/// What a step to a missing child reaches (never taken: children are made from their
/// parent's own entries).
static NULL: serde_json::Value = serde_json::Value::Null;

impl std::fmt::Debug for JsonRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let v = self.get();
        match v {
            serde_json::Value::Object(o) => write!(f, "object of {} entries", o.len()),
            serde_json::Value::Array(a) => write!(f, "array of {} items", a.len()),
            other => write!(f, "{other}"),
        }
    }
}

impl JsonRef {
    pub(crate) fn root(doc: &Arc<serde_json::Value>) -> JsonRef {
        JsonRef(Yoke::attach_to_cart(Arc::clone(doc), |v| v))
    }

    pub(crate) fn get(&self) -> &serde_json::Value {
        self.0.get()
    }

    /// The child at `seg` (one lookup in this node).
    pub(crate) fn child(&self, seg: Seg<'_>) -> JsonRef {
        JsonRef(self.0.map_project_cloned(|v, _| {
            let next = match seg {
                Seg::Key(k) => v.get(k),
                Seg::Index(i) => v.get(i),
            };
            next.unwrap_or(&NULL)
        }))
    }
}

/// The Python value of the JSON node `v`, the child at `seg` of `parent`: objects become
/// lazy dicts; lists are built (their objects lazy), scalars converted as [`from_json`] does.
pub(crate) fn lazy_value(parent: &JsonRef, seg: Seg<'_>, v: &serde_json::Value) -> Value {
    // The attempt's context is already in memory: converting it is not the body's building.
    let _paused = crate::budget::pause();
    match v {
        serde_json::Value::Object(_) => Value::dict(Dict::lazy(parent.child(seg))),
        serde_json::Value::Array(a) => {
            let at = parent.child(seg);
            Value::list(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| lazy_value(&at, Seg::Index(i), x))
                    .collect(),
            )
        }
        v => from_json(v),
    }
}

/// The Python value of `root[key]` (JSON), converted lazily: see [`Dict`]. `None` when the
/// root is not an object or has no such key.
pub fn lazy_json_field(root: &Arc<serde_json::Value>, key: &str) -> Option<Value> {
    let v = root.get(key)?;
    Some(lazy_value(&JsonRef::root(root), Seg::Key(key), v))
}

/// A set, in insertion order (CPython's order differs for strings, whose hashes are salted
/// per process; the reference marks messages that show a set's order as varying).
#[derive(Clone, Debug, Default)]
pub struct Set {
    pub map: FastIndexMap<Key, Value>,
}

impl Set {
    pub fn insert(&mut self, key: Key, value: Value) {
        if let indexmap::map::Entry::Vacant(e) = self.map.entry(key) {
            e.insert(value);
            crate::budget::charge(2 * SLOT);
        }
    }
}

impl Value {
    /// A string (its bytes counted against the run's memory budget).
    pub fn str(s: &str) -> Value {
        crate::budget::charge(s.len());
        Value::Str(Rc::from(s))
    }
    /// A list (its slots counted against the run's memory budget).
    pub fn list(items: Vec<Value>) -> Value {
        crate::budget::charge(items.len().saturating_mul(SLOT));
        Value::List(Rc::new(RefCell::new(Items(items))))
    }
    /// A list whose slots were counted as it grew.
    pub(crate) fn list_counted(items: Vec<Value>) -> Value {
        Value::List(Rc::new(RefCell::new(Items(items))))
    }
    /// A tuple (its slots counted against the run's memory budget).
    pub fn tuple(items: Vec<Value>) -> Value {
        crate::budget::charge(items.len().saturating_mul(SLOT));
        Value::Tuple(Rc::new(Items(items)))
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
                let _deeper = crate::budget::deeper()?;
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
///
/// Past [`crate::budget::MAX_VALUE_DEPTH`] nested containers it answers `false` and leaves
/// a trip the evaluator raises as `RecursionError`.
pub fn py_eq(a: &Value, b: &Value) -> bool {
    use Value as V;
    let nested = matches!(
        (a, b),
        (V::List(_), V::List(_))
            | (V::Tuple(_), V::Tuple(_))
            | (V::Dict(_), V::Dict(_))
            | (V::DictView(..), V::DictView(..))
    );
    let _deeper = if nested {
        match crate::budget::deeper() {
            Some(d) => Some(d),
            None => return false,
        }
    } else {
        None
    };
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
            s.map.len() == d.len() && s.map.keys().all(|k| d.contains_key(k))
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
        && x.map()
            .iter()
            .all(|(k, (_, v))| y.get(k).is_some_and(|w| py_eq(v, &w)))
}

/// The entries of a keys or items view as a set keyed by hash (items need hashable values).
pub fn view_set(d: &Dict, kind: ViewKind) -> Option<FastIndexMap<Key, Value>> {
    let mut out = FastIndexMap::default();
    for (k, (kv, v)) in d.map() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repr::repr;
    use proptest::prelude::*;
    use serde_json::json;

    fn lazy(doc: &serde_json::Value) -> Value {
        let root = Arc::new(json!({ "effects": doc }));
        lazy_json_field(&root, "effects").unwrap()
    }

    fn dict_of(v: &Value) -> Rc<RefCell<Dict>> {
        match v {
            Value::Dict(d) => d.clone(),
            other => panic!("not a dict: {other:?}"),
        }
    }

    fn key(s: &str) -> Key {
        Key::Str(Rc::from(s))
    }

    #[test]
    fn lazy_dict_reads_one_entry_and_keeps_its_identity() {
        let doc =
            json!({"users": {"a": {"name": "A", "n": [1, {"x": 2}]}, "b": {"name": "B"}}, "k": 3});
        let v = lazy(&doc);
        let d = dict_of(&v);
        assert_eq!(d.borrow().len(), 2);
        assert!(d.borrow().entries.get().is_none(), "nothing converted yet");
        let users = d.borrow().get(&key("users")).unwrap();
        assert!(
            d.borrow().entries.get().is_none(),
            "a lookup converts only its entry"
        );
        let again = d.borrow().get(&key("users")).unwrap();
        assert!(crate::builtins::is_same(&users, &again));
        assert!(d.borrow().contains_key(&key("k")));
        assert!(!d.borrow().contains_key(&key("zz")));
        assert!(!d.borrow().contains_key(&Key::Int(3)));
        assert!(d.borrow().get(&Key::Int(1)).is_none());
        // Converting every entry reuses the one already read.
        let (_, (_, from_map)) = d
            .borrow()
            .map()
            .get_index(0)
            .map(|(k, e)| (k.clone(), e.clone()))
            .unwrap();
        assert!(crate::builtins::is_same(&users, &from_map));
        assert_eq!(repr(&v), repr(&from_json(&doc)));
    }

    #[test]
    fn lazy_dict_changes_are_seen_through_every_alias() {
        let doc = json!({"users": {"a": {"name": "A"}}});
        let v = lazy(&doc);
        let users = dict_of(&v).borrow().get(&key("users")).unwrap();
        let a = dict_of(&users).borrow().get(&key("a")).unwrap();
        dict_of(&a)
            .borrow_mut()
            .insert(key("name"), Value::str("name"), Value::Int(7));
        dict_of(&users)
            .borrow_mut()
            .map_mut()
            .shift_remove(&key("zz"));
        let a_again = dict_of(&dict_of(&v).borrow().get(&key("users")).unwrap())
            .borrow()
            .get(&key("a"))
            .unwrap();
        assert_eq!(repr(&a_again), "{'name': 7}");
        assert_eq!(repr(&v), "{'users': {'a': {'name': 7}}}");
        // `copy()` is shallow, as in Python: the inner dict is shared.
        let copy = dict_of(&v).borrow().clone();
        assert!(crate::builtins::is_same(
            &copy.get(&key("users")).unwrap(),
            &users
        ));
    }

    #[test]
    fn lazy_dict_keeps_identity_past_the_short_list_of_reads() {
        // More keys read one by one than the short list holds, then every entry converted.
        let doc = serde_json::Value::Object(
            (0..20)
                .map(|i| (format!("k{i}"), json!({"i": i, "l": [{"j": i}]})))
                .collect(),
        );
        let v = lazy(&doc);
        let d = dict_of(&v);
        let read: Vec<Value> = (0..12)
            .map(|i| d.borrow().get(&key(&format!("k{i}"))).unwrap())
            .collect();
        assert!(
            d.borrow().entries.get().is_none(),
            "lookups convert no other entry"
        );
        for (i, r) in read.iter().enumerate() {
            let again = d.borrow().get(&key(&format!("k{i}"))).unwrap();
            assert!(crate::builtins::is_same(r, &again), "k{i} read twice");
        }
        let map: Vec<Value> = d.borrow().map().values().map(|(_, v)| v.clone()).collect();
        for (i, r) in read.iter().enumerate() {
            assert!(
                crate::builtins::is_same(r, &map[i]),
                "k{i} in the converted map"
            );
        }
        assert_eq!(repr(&v), repr(&from_json(&doc)));
    }

    fn json_doc() -> impl Strategy<Value = serde_json::Value> {
        let leaf = prop_oneof![
            Just(serde_json::Value::Null),
            any::<bool>().prop_map(serde_json::Value::from),
            (-1000i64..1000).prop_map(serde_json::Value::from),
            (-100.0f64..100.0).prop_map(serde_json::Value::from),
            "[a-c]{0,3}".prop_map(serde_json::Value::from),
        ];
        leaf.prop_recursive(4, 48, 5, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5).prop_map(serde_json::Value::Array),
                prop::collection::vec(("[a-d]{1,2}", inner), 0..5)
                    .prop_map(|kv| { serde_json::Value::Object(kv.into_iter().collect()) }),
            ]
        })
    }

    /// Reads a path of keys from a value, as `v[k1][k2]...` (string keys on dicts, indexes on
    /// lists), giving the repr of what it reaches.
    fn walk(v: &Value, path: &[String]) -> String {
        let mut cur = v.clone();
        for p in path {
            let next = match &cur {
                Value::Dict(d) => d.borrow().get(&key(p)),
                Value::List(l) => p
                    .len()
                    .checked_sub(1)
                    .and_then(|i| l.borrow().get(i).cloned()),
                _ => None,
            };
            match next {
                Some(n) => cur = n,
                None => return format!("missing {p}"),
            }
        }
        repr(&cur)
    }

    proptest! {
        /// Reading keys of a lazy dict in any order (repeats included), then converting it
        /// whole: every read gives the same object each time and in the converted map, and
        /// the dict reads as the eager one.
        #[test]
        fn lazy_reads_keep_identity(
            n in 0usize..24,
            reads in prop::collection::vec(0usize..30, 0..40),
        ) {
            let doc = serde_json::Value::Object(
                (0..n).map(|i| (format!("k{i}"), json!({"i": i}))).collect(),
            );
            let v = lazy(&doc);
            let d = dict_of(&v);
            let mut seen: Vec<Option<Value>> = vec![None; 30];
            for &r in &reads {
                let got = d.borrow().get(&key(&format!("k{r}")));
                prop_assert_eq!(got.is_some(), r < n);
                if let Some(g) = got {
                    match &seen[r] {
                        Some(first) => prop_assert!(crate::builtins::is_same(first, &g)),
                        None => seen[r] = Some(g),
                    }
                }
            }
            prop_assert_eq!(d.borrow().len(), n);
            let map: Vec<Value> = d.borrow().map().values().map(|(_, v)| v.clone()).collect();
            for (i, s) in seen.iter().enumerate() {
                if let Some(s) = s {
                    prop_assert!(crate::builtins::is_same(s, &map[i]));
                }
            }
            prop_assert_eq!(repr(&v), repr(&from_json(&doc)));
        }

        #[test]
        fn lazy_dicts_read_as_eager_ones(
            doc in json_doc(),
            paths in prop::collection::vec(prop::collection::vec("[a-d]{1,2}", 0..4), 0..6),
        ) {
            let eager = from_json(&doc);
            let lazy = lazy(&doc);
            for p in &paths {
                prop_assert_eq!(walk(&lazy, p), walk(&eager, p));
            }
            prop_assert!(py_eq(&lazy, &eager));
            prop_assert!(py_eq(&eager, &lazy));
            prop_assert_eq!(repr(&lazy), repr(&eager));
            prop_assert_eq!(lazy.truthy(), eager.truthy());
            if let (Value::Dict(l), Value::Dict(e)) = (&lazy, &eager) {
                prop_assert_eq!(l.borrow().len(), e.borrow().len());
            }
        }
    }
}
