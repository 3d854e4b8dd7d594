//! Python modules of a checkout: finding a dotted module's file, parsing it once, and the names
//! its top-level statements bind.

use crate::SurfaceError;
use ruff_python_ast::{Stmt, StmtClassDef};
use ruff_text_size::{Ranged, TextRange};
use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;

/// What a top-level name of a module is bound to (the last binding statement wins, as in
/// Python).
#[derive(Debug, Clone, Copy)]
pub(crate) enum Sym {
    /// `class Name(...)`: the statement index.
    Class(usize),
    /// `def name(...)`.
    Function(usize),
    /// `name = expr` or `name: T = expr`.
    Assign(usize),
    /// `from m import x [as name]`: statement and alias index.
    ImportFrom(usize, usize),
    /// `import a.b [as name]`: statement and alias index.
    Import(usize, usize),
}

/// One parsed module.
pub(crate) struct Module {
    /// Dotted name.
    pub name: String,
    /// Path shown in errors (relative to the data root when inside it).
    pub display: String,
    /// Whether this is a package's `__init__.py`.
    pub is_package: bool,
    /// Top-level statements.
    pub body: Vec<Stmt>,
    line_starts: Vec<usize>,
    /// Top-level names.
    pub symbols: HashMap<String, Sym>,
}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<module {}>", self.name)
    }
}

impl Module {
    /// 1-based line of a byte offset.
    pub fn line(&self, range: TextRange) -> usize {
        let off = range.start().to_usize();
        self.line_starts.partition_point(|&s| s <= off)
    }

    /// An error at a node of this module.
    pub fn err(&self, node: &impl Ranged, message: impl Into<String>) -> SurfaceError {
        SurfaceError::Source {
            file: self.display.clone(),
            line: self.line(node.range()),
            message: message.into(),
        }
    }

    /// The class definition at a statement index.
    pub fn class(&self, idx: usize) -> &StmtClassDef {
        match &self.body[idx] {
            Stmt::ClassDef(c) => c,
            _ => unreachable!("symbol table points at a class"),
        }
    }

    /// The package that relative imports of this module start from.
    pub fn package(&self) -> &str {
        if self.is_package {
            &self.name
        } else {
            self.name.rsplit_once('.').map_or("", |(p, _)| p)
        }
    }
}

/// A reference to a class defined in a project module.
#[derive(Clone)]
pub(crate) struct ClassRef {
    pub module: Rc<Module>,
    pub idx: usize,
}

impl ClassRef {
    pub fn def(&self) -> &StmtClassDef {
        self.module.class(self.idx)
    }
    pub fn name(&self) -> &str {
        self.def().name.id.as_str()
    }
    /// `module.Class`, unique in the checkout.
    pub fn key(&self) -> String {
        format!("{}.{}", self.module.name, self.name())
    }
    pub fn same(&self, other: &ClassRef) -> bool {
        Rc::ptr_eq(&self.module, &other.module) && self.idx == other.idx
    }
}

impl std::fmt::Debug for ClassRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.key())
    }
}

/// Finds and parses project modules under the distribution folders of `servers/`.
pub(crate) struct Sources {
    data_root: PathBuf,
    /// Folders that hold top-level packages (`servers/<dist>/`).
    roots: Vec<PathBuf>,
    cache: RefCell<HashMap<String, Option<Rc<Module>>>>,
    /// Top-level package name -> whether the checkout has it.
    projects: RefCell<HashMap<String, bool>>,
}

impl Sources {
    pub fn new(data_root: &Path) -> Result<Sources, SurfaceError> {
        let servers = data_root.join("servers");
        let rd = std::fs::read_dir(&servers).map_err(|e| SurfaceError::Io {
            path: servers.display().to_string(),
            message: e.to_string(),
        })?;
        let mut roots: Vec<PathBuf> = rd
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        roots.sort();
        Ok(Sources {
            data_root: data_root.to_path_buf(),
            roots,
            cache: RefCell::new(HashMap::new()),
            projects: RefCell::new(HashMap::new()),
        })
    }

    fn display(&self, p: &Path) -> String {
        p.strip_prefix(&self.data_root)
            .unwrap_or(p)
            .display()
            .to_string()
    }

    /// The file of a dotted module, if it is a project module: `<root>/a/b/c.py` or
    /// `<root>/a/b/c/__init__.py`, for the first root that holds package `a`.
    pub fn locate(&self, dotted: &str) -> Option<(PathBuf, bool)> {
        let parts: Vec<&str> = dotted.split('.').collect();
        // Python identifiers only: no empty parts, no path separators.
        let ident = |p: &str| {
            !p.is_empty()
                && !p.starts_with(|c: char| c.is_ascii_digit())
                && p.chars().all(|c| c.is_alphanumeric() || c == '_')
        };
        if !parts.iter().all(|p| ident(p)) {
            return None;
        }
        for root in &self.roots {
            if !root.join(parts[0]).join("__init__.py").is_file() {
                continue;
            }
            let mut dir = root.clone();
            for p in &parts {
                dir.push(p);
            }
            let pkg = dir.join("__init__.py");
            if pkg.is_file() {
                return Some((pkg, true));
            }
            let file = dir.with_extension("py");
            if file.is_file() {
                return Some((file, false));
            }
            return None;
        }
        None
    }

    /// Whether a dotted name's top-level package is one of the checkout's.
    pub fn is_project(&self, dotted: &str) -> bool {
        let top = dotted.split('.').next().unwrap_or("");
        if let Some(&b) = self.projects.borrow().get(top) {
            return b;
        }
        let b = self
            .roots
            .iter()
            .any(|r| r.join(top).join("__init__.py").is_file());
        self.projects.borrow_mut().insert(top.to_string(), b);
        b
    }

    /// The folder of a package module (where its submodules live).
    pub fn package_dir(&self, dotted: &str) -> Option<PathBuf> {
        match self.locate(dotted)? {
            (p, true) => p.parent().map(Path::to_path_buf),
            _ => None,
        }
    }

    /// A project module, parsed once. `Ok(None)` when no such file exists.
    pub fn module(&self, dotted: &str) -> Result<Option<Rc<Module>>, SurfaceError> {
        if let Some(m) = self.cache.borrow().get(dotted) {
            return Ok(m.clone());
        }
        let m = match self.locate(dotted) {
            None => None,
            Some((path, is_package)) => Some(Rc::new(self.parse(dotted, &path, is_package)?)),
        };
        self.cache
            .borrow_mut()
            .insert(dotted.to_string(), m.clone());
        Ok(m)
    }

    /// A project module that must exist.
    pub fn require(&self, dotted: &str) -> Result<Rc<Module>, SurfaceError> {
        self.module(dotted)?.ok_or_else(|| SurfaceError::Io {
            path: format!("servers/*/{}", dotted.replace('.', "/")),
            message: format!("module `{dotted}` not found in the checkout"),
        })
    }

    fn parse(&self, dotted: &str, path: &Path, is_package: bool) -> Result<Module, SurfaceError> {
        let display = self.display(path);
        let source = std::fs::read_to_string(path).map_err(|e| SurfaceError::Io {
            path: display.clone(),
            message: e.to_string(),
        })?;
        parse_module_text(dotted, display, &source, is_package)
    }
}

/// Parses a module's text and builds its symbol table.
pub(crate) fn parse_module_text(
    dotted: &str,
    display: String,
    source: &str,
    is_package: bool,
) -> Result<Module, SurfaceError> {
    let mut line_starts = vec![0];
    line_starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
    let parsed = ruff_python_parser::parse_module(source).map_err(|e| {
        let off = e.location.start().to_usize();
        SurfaceError::Source {
            file: display.clone(),
            line: line_starts.partition_point(|&s| s <= off),
            message: format!("Python syntax error: {}", e.error),
        }
    })?;
    let body = parsed.into_syntax().body;
    let mut symbols = HashMap::new();
    for (i, stmt) in body.iter().enumerate() {
        match stmt {
            Stmt::ClassDef(c) => {
                symbols.insert(c.name.id.to_string(), Sym::Class(i));
            }
            Stmt::FunctionDef(f) => {
                symbols.insert(f.name.id.to_string(), Sym::Function(i));
            }
            Stmt::Assign(a) => {
                for t in &a.targets {
                    if let ruff_python_ast::Expr::Name(n) = t {
                        symbols.insert(n.id.to_string(), Sym::Assign(i));
                    }
                }
            }
            Stmt::AnnAssign(a) => {
                if let (ruff_python_ast::Expr::Name(n), Some(_)) = (&*a.target, &a.value) {
                    symbols.insert(n.id.to_string(), Sym::Assign(i));
                }
            }
            Stmt::ImportFrom(imp) => {
                for (j, al) in imp.names.iter().enumerate() {
                    let bound = al.asname.as_ref().unwrap_or(&al.name);
                    symbols.insert(bound.id.to_string(), Sym::ImportFrom(i, j));
                }
            }
            Stmt::Import(imp) => {
                for (j, al) in imp.names.iter().enumerate() {
                    let bound = match &al.asname {
                        Some(a) => a.id.to_string(),
                        None => al.name.id.split('.').next().unwrap_or("").to_string(),
                    };
                    symbols.insert(bound, Sym::Import(i, j));
                }
            }
            _ => {}
        }
    }
    Ok(Module {
        name: dotted.to_string(),
        display,
        is_package,
        body,
        line_starts,
        symbols,
    })
}
