//! What expressions hold: the class of a call's receiver from annotations, constructor and
//! value flows, declared return types and aliases. Flow-insensitive and conservative: a name
//! bound more than once holds something known only if every binding says the same, and one
//! binding cairn cannot follow makes it unknown.

use std::cell::RefCell;
use std::rc::Rc;

use rustc_hash::FxHashMap as HashMap;

use super::Target;
use super::build::{Inheritance, Resolution, SymbolAt};
use super::kept::{NameSet, interface_method_names};
use crate::extract::{
    FileExtract, Held, Returned, Returns, Text, called, chained_call, generic_path, interned,
    is_literal, widen, without_method_type_arguments,
};

/// What an expression is known to hold.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Known {
    /// An instance of a repository class.
    Instance(SymbolAt),
    /// What a name stands for: a definition, a module, something outside the repository.
    Is(Target),
    /// A value of the language's own types (`[]`, `"…"`, `dict()`), or one of its methods.
    Builtin,
    /// A member a class inherits from outside the repository (`self.assertEqual` in a
    /// `unittest.TestCase`): no project class in its hierarchy binds or defines the name.
    Outside,
    /// A value of the language's own carrier types (Rust's `Result<Store, _>`) holding what
    /// is known of the carried value, if anything: its methods are the language's, unwrapping
    /// (`?`, `.unwrap()`) gives the carried value.
    Carrying(Option<Box<Known>>),
}

/// A file's bindings, by where they bind: indexes into its extraction's `types`.
#[derive(Default)]
pub(super) struct Bindings {
    /// Local names by (scope, name).
    locals: HashMap<(Option<usize>, Text), Vec<usize>>,
    /// Instance attributes by (class, name).
    attributes: HashMap<(usize, Text), Vec<usize>>,
    /// Declared return types by function.
    returns: HashMap<usize, Returns>,
    /// What functions without a declared return type return, by function.
    returned: HashMap<usize, Returned>,
}

impl Bindings {
    pub(super) fn of(extract: &FileExtract) -> Bindings {
        let mut bindings = Bindings::default();
        for (i, hint) in extract.types.iter().enumerate() {
            match (hint.attribute, widen(hint.scope)) {
                (true, Some(class)) => bindings
                    .attributes
                    .entry((class, hint.name))
                    .or_default()
                    .push(i),
                // Read by `Bindings::foreign`.
                (true, None) => {}
                (false, scope) => bindings
                    .locals
                    .entry((scope, hint.name))
                    .or_default()
                    .push(i),
            }
        }
        bindings.returns = extract
            .returns
            .iter()
            .map(|r| (r.symbol, r.clone()))
            .collect();
        bindings.returned = extract
            .returned
            .iter()
            .map(|r| (r.symbol, r.clone()))
            .collect();
        bindings
    }

    /// Attribute names a file assigns on something other than `self`.
    pub(super) fn foreign(extract: &FileExtract) -> impl Iterator<Item = &str> {
        extract
            .types
            .iter()
            .filter(|hint| hint.attribute && hint.scope.is_none())
            .map(|hint| hint.name.as_str())
    }

    /// Names bound at the top level of the file (module variables), each once.
    pub(super) fn top_level_names(&self) -> impl Iterator<Item = &str> {
        self.locals
            .keys()
            .filter(|(scope, _)| scope.is_none())
            .map(|(_, name)| name.as_str())
    }
}

/// Deepest chain of bindings followed (`a = b`, `b = c()`, …).
const MAX_DEPTH: usize = 12;

/// A class and its resolved bases, depth first.
type Ancestry = Rc<[SymbolAt]>;

/// Memo key: (file, scope or class, name, whether an attribute).
type Key = (usize, Option<usize>, Text, bool);

/// Answers what expressions hold, memoised over one graph build.
pub(super) struct Types<'a, 'r> {
    r: &'a Resolution<'r>,
    /// Every class's bases.
    inheritance: &'a Inheritance,
    /// Attribute names assigned on something other than `self` anywhere: their type is unknown.
    foreign: NameSet<'a>,
    /// Names of the methods the repository's interfaces declare: a trait's method may be
    /// implemented for the language's own types (an extension of `Result`).
    interface_methods: NameSet<'a>,
    /// The repository's extension methods by name (C#'s `this` parameter), each with the
    /// type it extends by its last name (`IEnumerable` of `IEnumerable<T>`).
    extensions: HashMap<&'a str, Vec<(SymbolAt, &'a str)>>,
    /// The attributes a framework makes at run time on the subclasses of its classes, where
    /// the repository defines both the class and the class of the values; found once.
    made: std::cell::OnceCell<Vec<Made>>,
    memo: RefCell<HashMap<Key, Option<Known>>>,
    /// Each class's ancestry, worked out once.
    ancestries: RefCell<HashMap<SymbolAt, Ancestry>>,
    /// What each function without a declared return type returns, worked out once.
    returned: RefCell<HashMap<SymbolAt, Option<Known>>>,
    /// How many of those are being worked out inside one another.
    inferring: std::cell::Cell<usize>,
}

impl<'a, 'r> Types<'a, 'r> {
    pub(super) fn new(r: &'a Resolution<'r>, inheritance: &'a Inheritance) -> Types<'a, 'r> {
        // Read from the extractions, not the files' names: those are collected only where a
        // build needs them. A tracked `Kept` counts them.
        let (foreign, interface_methods) = match r.kept {
            Some(kept) => (kept.foreign(), kept.interface_methods()),
            None => (
                NameSet::Collected(
                    r.files
                        .iter()
                        .flat_map(|f| Bindings::foreign(&f.extract))
                        .collect(),
                ),
                NameSet::Collected(
                    r.files
                        .iter()
                        .flat_map(|f| interface_method_names(&f.extract))
                        .collect(),
                ),
            ),
        };
        let mut extensions: HashMap<&str, Vec<(SymbolAt, &str)>> = HashMap::default();
        for (f, file) in r.files.iter().enumerate() {
            for (method, extends) in &file.extract.extensions {
                let name = file.extract.symbols[*method].name.as_str();
                extensions
                    .entry(name)
                    .or_default()
                    .push((SymbolAt::new(f, *method), extended_name(extends)));
            }
        }
        Types {
            r,
            inheritance,
            foreign,
            interface_methods,
            extensions,
            made: std::cell::OnceCell::new(),
            memo: RefCell::new(HashMap::default()),
            ancestries: RefCell::new(HashMap::default()),
            returned: RefCell::new(HashMap::default()),
            inferring: std::cell::Cell::new(0),
        }
    }

    /// A method (or nested definition) by name on a class or, depth first, its resolved bases.
    pub(super) fn method(&self, class: SymbolAt, name: &str) -> Option<SymbolAt> {
        self.ancestry(class)
            .iter()
            .find_map(|&c| self.r.child(c, name))
    }

    /// The extension method `receiver.name(…)` calls where none of the receiver's own methods
    /// has the name: of the extensions of that name whose static class the file sees, the one
    /// for the receiver's class, else for its nearest base (C# picks so; two at the same
    /// distance are none), else for a base outside the repository that the class or one of
    /// its bases names, the one for an outside type of the receiver's name, or for a value
    /// of the language's own types the only one that extends such a type. Nothing known of the
    /// receiver binds none (such a call is a possible call of each).
    pub(super) fn extension(
        &self,
        file: usize,
        scope: Option<usize>,
        receiver: &Known,
        name: &str,
    ) -> Option<SymbolAt> {
        let candidates = self.extensions.get(name)?;
        let seen: Vec<(SymbolAt, &str)> = candidates
            .iter()
            .copied()
            .filter(|&(method, _)| self.sees_owner(file, scope, method))
            .collect();
        let only = |extends: &dyn Fn(&str) -> bool| -> Option<Option<SymbolAt>> {
            let mut matching = seen.iter().filter(|(_, e)| extends(e));
            match (matching.next(), matching.next()) {
                (None, _) => None,
                (Some(&(method, _)), None) => Some(Some(method)),
                (Some(_), Some(_)) => Some(None),
            }
        };
        match receiver {
            Known::Instance(class) => {
                let ancestry = self.ancestry(*class);
                let by_class = ancestry.iter().find_map(|c| {
                    let class_name = self.r.files[c.file].extract.symbols[c.symbol].name.as_str();
                    only(&|extends| extends == class_name)
                });
                match by_class {
                    Some(found) => found,
                    // An extension of a base outside the repository, by the name the class
                    // (or one of its bases) writes (`class Orders : ControllerBase`).
                    None => {
                        let written: Vec<&str> = ancestry
                            .iter()
                            .flat_map(|c| {
                                let extract = &self.r.files[c.file].extract;
                                extract
                                    .bases
                                    .iter()
                                    .filter(move |b| b.class == c.symbol)
                                    .map(|b| extended_name(b.expr.as_str()))
                            })
                            .collect();
                        only(&|extends| written.contains(&extends))?
                    }
                }
            }
            Known::Is(Target::External(outside)) => {
                let outside = extended_name(outside);
                only(&|extends| extends == outside)?
            }
            Known::Builtin => {
                let language = self.r.languages[file];
                only(&|extends| language.is_builtin(extends))?
            }
            _ => None,
        }
    }

    /// An attribute a framework makes on a class of the repository at run time (Django's
    /// `Book.objects`): an instance of the class the language's table names, where the class
    /// or one of its bases is the one the attribute is made for.
    fn made_attribute(&self, class: SymbolAt, name: &str) -> Option<Known> {
        let made = self.made.get_or_init(|| self.find_made());
        if made.is_empty() {
            return None;
        }
        let ancestry = self.ancestry(class);
        made.iter()
            .find(|m| m.attributes.iter().any(|a| a == name) && ancestry.contains(&m.owner))
            .map(|m| Known::Instance(m.instance_of))
    }

    /// The made attributes of the languages' tables whose classes the repository defines.
    fn find_made(&self) -> Vec<Made> {
        let class = |named: &str| -> Option<SymbolAt> {
            let (path, qualname) = named.split_once("::")?;
            self.r.files.iter().enumerate().find_map(|(f, file)| {
                let ends = file.path == path
                    || file
                        .path
                        .strip_suffix(path)
                        .is_some_and(|p| p.ends_with('/'));
                if !ends {
                    return None;
                }
                let symbols = &file.extract.symbols;
                let found = symbols
                    .iter()
                    .position(|s| s.kind.is_class_like() && s.qualname.as_str() == qualname)?;
                Some(SymbolAt::new(f, found))
            })
        };
        let mut made = Vec::new();
        for language in crate::languages::Registry::get().all() {
            for table in &language.spec.made_attributes {
                if let (Some(owner), Some(instance_of)) =
                    (class(&table.class), class(&table.instance_of))
                {
                    made.push(Made {
                        owner,
                        attributes: &table.attributes,
                        instance_of,
                    });
                }
            }
        }
        made
    }

    /// Whether the class holding a method is in sight of a file (imported, or in its own
    /// namespace or one enclosing it).
    fn sees_owner(&self, file: usize, scope: Option<usize>, method: SymbolAt) -> bool {
        let symbols = &self.r.files[method.file].extract.symbols;
        let Some(class) = symbols[method.symbol].parent else {
            return false;
        };
        self.r.name(file, scope, &symbols[class].name)
            == Some(SymbolAt::new(method.file, class).target())
    }

    /// A class and its resolved bases, depth first, each once: a diamond is walked once and a
    /// cycle of bases (invalid, but source can say it) ends.
    fn ancestry(&self, class: SymbolAt) -> Ancestry {
        if let Some(known) = self.ancestries.borrow().get(&class) {
            return known.clone();
        }
        let ancestry: Ancestry = self.walk_ancestry(class).into();
        self.ancestries.borrow_mut().insert(class, ancestry.clone());
        ancestry
    }

    fn walk_ancestry(&self, class: SymbolAt) -> Vec<SymbolAt> {
        const MOST: usize = 64;
        let mut order = Vec::new();
        let mut groups = Vec::new();
        let mut stack = vec![class];
        while let Some(c) = stack.pop() {
            if order.contains(&c) {
                continue;
            }
            order.push(c);
            if order.len() == MOST {
                break;
            }
            // The other declarations of an open class, with their bases, after the bases of
            // this one (a module reopened in many files must not crowd its bases out); each
            // group once, not again from every one of its parts.
            let parts = self.r.parts(c);
            if !parts.is_empty() && !groups.contains(&parts.as_ptr()) {
                groups.push(parts.as_ptr());
                stack.extend(parts.iter().rev());
            }
            let bases = self.inheritance.of(self.r, c);
            stack.extend(bases.resolved.iter().rev().map(|base| base.class));
        }
        order
    }

    /// The class a scope belongs to: the enclosing class, or the type a method declared
    /// outside it is attached to.
    pub(super) fn enclosing_class(&self, file: usize, scope: Option<usize>) -> Option<SymbolAt> {
        let symbols = &self.r.files[file].extract.symbols;
        let mut current = scope;
        while let Some(s) = current {
            if symbols[s].kind.is_class_like() {
                return Some(SymbolAt::new(file, s));
            }
            if let Some(owner) = self.r.owner(SymbolAt::new(file, s)) {
                return Some(owner);
            }
            current = symbols[s].parent;
        }
        None
    }

    /// The classes a scope is inside, innermost first (a method declared outside its type is
    /// inside that type).
    fn enclosing_classes(
        &self,
        file: usize,
        scope: Option<usize>,
    ) -> impl Iterator<Item = SymbolAt> + '_ {
        let symbols = &self.r.files[file].extract.symbols;
        std::iter::successors(scope, move |&s| symbols[s].parent).flat_map(move |s| {
            let at = SymbolAt::new(file, s);
            let own = symbols[s].kind.is_class_like().then_some(at);
            own.into_iter().chain(self.r.owner(at))
        })
    }

    /// The classes whose members a bare name reaches from a scope, innermost first.
    fn implicit_classes(
        &self,
        file: usize,
        scope: Option<usize>,
    ) -> impl Iterator<Item = SymbolAt> + '_ {
        let reach = if self.r.languages[file].spec.implicit_self_innermost {
            1
        } else {
            usize::MAX
        };
        self.enclosing_classes(file, scope).take(reach)
    }

    /// Whether a value is an instance of a class, or a class, that answers calls of any name
    /// (PHP's `__call`, `__callStatic`) in its hierarchy.
    pub(super) fn answers_any(&self, value: &Known) -> bool {
        let class = match *value {
            Known::Instance(class) => class,
            Known::Is(Target::Symbol(cf, cs)) => SymbolAt::new(cf, cs),
            _ => return false,
        };
        let catch_all = &self.r.languages[class.file].spec.catch_all_methods;
        !catch_all.is_empty()
            && self.r.files[class.file].extract.symbols[class.symbol]
                .kind
                .is_class_like()
            && catch_all.iter().any(|m| self.method(class, m).is_some())
    }

    /// What a bare call's name is in a language where class members need no `this.` (Java's
    /// `save()`): a method of an enclosing class or its project bases, innermost first; an
    /// inherited library method (`Outside`) when a hierarchy leaves the repository and nothing
    /// else (no name in sight, no builtin: Ruby's `puts`) names it; `None` when no enclosing
    /// class answers.
    pub(super) fn implicit_member(
        &self,
        file: usize,
        scope: Option<usize>,
        name: &str,
    ) -> Option<Known> {
        let mut outside = false;
        for class in self.implicit_classes(file, scope) {
            if let Some(method) = self.method(class, name) {
                return Some(Known::Is(method.target()));
            }
            outside |= self.inherits_outside(class);
        }
        (outside && self.r.name(file, scope, name).is_none() && !self.is_builtin(file, name))
            .then_some(Known::Outside)
    }

    /// What a bare name holds as a field of an enclosing class (Java's `store.get()`):
    /// `None` when no enclosing class binds or defines it, `Some(None)` when one does but what
    /// it holds is unknown.
    fn implicit_attribute(
        &self,
        file: usize,
        scope: Option<usize>,
        name: &str,
        depth: usize,
    ) -> Option<Option<Known>> {
        self.implicit_classes(file, scope).find_map(|class| {
            if self.foreign.contains(name) && self.has_attribute(class, name) {
                return Some(None);
            }
            self.attribute_at(class, name, depth)
        })
    }

    /// Whether a name is one the file's language always defines (`str`, Java's `System`).
    fn is_builtin(&self, file: usize, name: &str) -> bool {
        self.r.languages[file].is_builtin(name)
    }

    /// Whether a name is the receiver of an enclosing method declared outside its type
    /// (Go's `s` in `func (s *Server) Handle`): it acts as `self` there.
    fn is_receiver(&self, file: usize, scope: Option<usize>, name: &str) -> bool {
        let symbols = &self.r.files[file].extract.symbols;
        let mut current = scope;
        while let Some(s) = current {
            let receiver = symbols[s].receiver.as_ref().and_then(|r| r.name.as_deref());
            if receiver == Some(name) {
                return true;
            }
            current = symbols[s].parent;
        }
        false
    }

    /// What a local name holds as seen from a scope (the scope's own bindings, then enclosing
    /// functions', then the module's): `None` when no binding is in sight, `Some(None)` when
    /// one is but what it holds is unknown.
    pub(super) fn local(
        &self,
        file: usize,
        scope: Option<usize>,
        name: &str,
    ) -> Option<Option<Known>> {
        self.local_at(file, scope, name, 0)
    }

    fn local_at(
        &self,
        file: usize,
        scope: Option<usize>,
        name: &str,
        depth: usize,
    ) -> Option<Option<Known>> {
        let names = self.r.names(file);
        let symbols = &self.r.files[file].extract.symbols;
        let mut current = scope;
        loop {
            let hints = interned(name).and_then(|name| names.bindings.locals.get(&(current, name)));
            if let Some(hints) = hints {
                return Some(self.joined(file, (current, name, false), hints, depth));
            }
            let s = current?;
            // A definition or an import of the name in this scope hides outer bindings.
            let shadowed = names
                .scoped
                .get(&s)
                .is_some_and(|m| interned(name).is_some_and(|name| m.contains_key(&name)))
                || (!symbols[s].kind.is_class_like()
                    && interned(name)
                        .is_some_and(|name| names.children.contains_key(&(Some(s), name))));
            if shadowed {
                return None;
            }
            current = symbols[s].parent;
            // A class body's names are not visible inside its methods.
            while let Some(p) = current
                && symbols[p].kind.is_class_like()
            {
                current = symbols[p].parent;
            }
        }
    }

    /// What an attribute of a class's instances holds: the class's own bindings of it, else its
    /// bases', else a method or nested class of that name.
    fn attribute(&self, class: SymbolAt, name: &str, depth: usize) -> Option<Known> {
        if self.foreign.contains(name) {
            return self
                .method(class, name)
                .filter(|_| !self.has_attribute(class, name))
                .map(|method| Known::Is(method.target()));
        }
        match self.attribute_at(class, name, depth) {
            Some(known) => known,
            None => self.inherits_outside(class).then_some(Known::Outside),
        }
    }

    /// Whether a class or one of its project bases has a base outside the repository.
    fn inherits_outside(&self, class: SymbolAt) -> bool {
        self.ancestry(class)
            .iter()
            .any(|&c| self.inheritance.of(self.r, c).outside())
    }

    fn has_attribute(&self, class: SymbolAt, name: &str) -> bool {
        let Some(name) = interned(name) else {
            return false;
        };
        self.ancestry(class).iter().any(|c| {
            self.r
                .names(c.file)
                .bindings
                .attributes
                .contains_key(&(c.symbol, name))
        })
    }

    /// The attribute as the first class that binds or defines it says (`None` if none does,
    /// `Some(None)` if that class's bindings are unknown: later bases are not consulted).
    fn attribute_at(&self, class: SymbolAt, name: &str, depth: usize) -> Option<Option<Known>> {
        self.ancestry(class).iter().find_map(|&c| {
            let names = self.r.names(c.file);
            let hints =
                interned(name).and_then(|name| names.bindings.attributes.get(&(c.symbol, name)));
            if let Some(hints) = hints {
                return Some(self.joined(c.file, (Some(c.symbol), name, true), hints, depth));
            }
            let member = self.r.child(c, name)?;
            let (mf, s) = (member.file, member.symbol);
            let bindings = &self.r.names(mf).bindings;
            Some(match bindings.returns.get(&s) {
                Some(returns) if returns.property => self.declared(mf, Some(s), &returns.class),
                _ if bindings.returned.get(&s).is_some_and(|r| r.property) => self.inferred(member),
                _ => Some(Known::Is(member.target())),
            })
        })
    }

    /// What every one of a name's bindings holds, if they agree.
    fn joined(
        &self,
        file: usize,
        (scope, name, attribute): (Option<usize>, &str, bool),
        hints: &[usize],
        depth: usize,
    ) -> Option<Known> {
        let key = (file, scope, Text::from(name), attribute);
        if let Some(known) = self.memo.borrow().get(&key) {
            return known.clone();
        }
        if depth > MAX_DEPTH {
            return None;
        }
        // A binding that refers back to itself while being worked out holds nothing known.
        self.memo.borrow_mut().insert(key, None);
        let types = &self.r.files[file].extract.types;
        let mut agreed: Option<Known> = None;
        for &h in hints {
            let hint = &types[h];
            let known = self.held(file, widen(hint.at), &hint.held, depth + 1);
            // A class body's `x = y` is an attribute of instances only if `y` is a class (a
            // function would bind as a method, other objects may be descriptors).
            let in_class_body =
                hint.attribute && hint.at == hint.scope && matches!(hint.held, Held::Same(_));
            let known = known.filter(|k| !in_class_body || self.is_class(k));
            let Some(known) = known else {
                agreed = None;
                break;
            };
            match &agreed {
                Some(seen) if *seen != known => {
                    agreed = None;
                    break;
                }
                _ => agreed = Some(known),
            }
        }
        self.memo.borrow_mut().insert(key, agreed.clone());
        agreed
    }

    pub(super) fn is_function(&self, known: &Known) -> bool {
        matches!(known, Known::Is(Target::Symbol(f, s))
            if self.r.files[*f].extract.symbols[*s].kind.is_callable())
    }

    fn is_class(&self, known: &Known) -> bool {
        matches!(known, Known::Is(Target::Symbol(f, s))
            if self.r.files[*f].extract.symbols[*s].kind.is_class_like())
    }

    fn held(&self, file: usize, at: Option<usize>, held: &Held, depth: usize) -> Option<Known> {
        match held {
            Held::Declared(class) => self.declared(file, at, class),
            Held::Returned(callee) => self.returned(file, at, callee, depth),
            Held::Same(expression) => self.value_at(file, at, expression, depth),
            Held::Builtin => Some(Known::Builtin),
            Held::Fixture(name) => {
                let fixture = self.fixture(file, at, name)?;
                self.result_of(Known::Is(fixture.target()))
            }
            Held::Unknown => None,
        }
    }

    /// The fixture that a test's or a fixture's parameter `name` takes (`at` is the
    /// function): a fixture of that name in the function's classes or its file (defined or
    /// imported), else in the nearest fixture file (`conftest.py`) of its folder or of one
    /// above. A fixture that asks for its own name takes the one it overrides.
    pub(super) fn fixture(&self, file: usize, at: Option<usize>, name: &str) -> Option<SymbolAt> {
        let function = SymbolAt::new(file, at?);
        let fixture = |found: SymbolAt| {
            (found != function
                && self.r.files[found.file]
                    .extract
                    .fixtures
                    .binary_search(&found.symbol)
                    .is_ok())
            .then_some(found)
        };
        let named = |file: usize, scope: Option<usize>| match self.r.name(file, scope, name) {
            Some(Target::Symbol(f, s)) => fixture(SymbolAt::new(f, s)),
            _ => None,
        };
        let parent = self.r.files[file].extract.symbols[function.symbol].parent;
        let own = self
            .enclosing_classes(file, parent)
            .find_map(|class| self.r.child(class, name).and_then(fixture))
            .or_else(|| named(file, parent));
        if own.is_some() {
            return own;
        }
        let from = self.r.languages[file].fixtures_from();
        if from.is_empty() {
            return None;
        }
        let path = self.r.files[file].path.as_str();
        let folders = std::iter::successors(Some(path), |p| p.rsplit_once('/').map(|(d, _)| d))
            .skip(1)
            .map(Some)
            .chain([None]);
        for folder in folders {
            for file_name in from {
                let candidate = match folder {
                    Some(folder) => format!("{folder}/{file_name}"),
                    None => file_name.clone(),
                };
                if let Some(found) = self
                    .r
                    .fixture_file(&candidate)
                    .filter(|&c| c != file)
                    .and_then(|c| named(c, None))
                {
                    return Some(found);
                }
            }
        }
        None
    }

    /// An instance of a declared class; of a type outside the repository, its members are
    /// outside names (`r: sql.DB` makes `r.Query` `database/sql.DB.Query`).
    /// A builtin type that nothing binds (`x: str`, `String s`, `list[Engine]`) holds a
    /// builtin value.
    /// The class itself by one of its class names (PHP's `: self`, `: static`) is an instance
    /// of the enclosing class, as a value declared with its name is.
    fn declared(&self, file: usize, at: Option<usize>, class: &str) -> Option<Known> {
        // A carrier of the language (`Option<Store>`): what it carries is its first argument.
        if let Some((head, arguments)) = class.split_once('<')
            && let Some(arguments) = arguments.strip_suffix('>')
            && self.r.languages[file]
                .spec
                .carriers
                .types
                .iter()
                .any(|t| t == head)
        {
            let carried = first_argument(arguments).trim();
            let carried = self.declared(file, at, carried).map(Box::new);
            return Some(Known::Carrying(carried));
        }
        if self.r.languages[file]
            .spec
            .class_names
            .iter()
            .any(|c| c == class)
        {
            let class = self.enclosing_class(file, at)?;
            return Some(Known::Instance(class));
        }
        match self.r.expression(file, at, class) {
            Some(Target::Symbol(cf, cs))
                if self.r.files[cf].extract.symbols[cs].kind.is_class_like() =>
            {
                Some(Known::Instance(SymbolAt::new(cf, cs)))
            }
            Some(outside @ Target::External(_)) => Some(Known::Is(outside)),
            None if self.is_builtin(file, class) => Some(Known::Builtin),
            // A class with arguments (`list[Engine]`, `Stack[T]`) holds what its head does:
            // a builtin collection's methods are the language's (`items.count(…)` is
            // `list.count`); an outside head (`Union[A, B]`) says nothing.
            None => {
                let (head, _) = class.split_once('[')?;
                self.declared(file, at, head)
                    .filter(|k| matches!(k, Known::Instance(_) | Known::Builtin))
            }
            _ => None,
        }
    }

    /// What calling an expression gives: an instance of a class called, or what a function
    /// declares it returns.
    fn returned(
        &self,
        file: usize,
        at: Option<usize>,
        callee: &str,
        depth: usize,
    ) -> Option<Known> {
        // A builtin's result is a builtin value only for those that make one (`dict()`, not
        // `getattr()`).
        let known = self.named_at(file, at, callee, depth + 1);
        let Some(known) = known.filter(|k| *k != Known::Builtin) else {
            return self
                .builtin_value(file, at, callee)
                .then_some(Known::Builtin);
        };
        self.result_of(known)
    }

    /// What calling a known callee gives: an instance of a class, what a function declares it
    /// returns, outside code for outside code.
    fn result_of(&self, known: Known) -> Option<Known> {
        let Known::Is(Target::Symbol(sf, ss)) = known else {
            // What outside code returns holds outside code.
            return matches!(known, Known::Is(Target::External(_))).then_some(Known::Outside);
        };
        let symbol = &self.r.files[sf].extract.symbols[ss];
        if symbol.kind.is_class_like() {
            return Some(Known::Instance(SymbolAt::new(sf, ss)));
        }
        if !symbol.kind.is_callable() {
            return None;
        }
        let Some(returns) = self.r.names(sf).bindings.returns.get(&ss) else {
            return self.inferred(SymbolAt::new(sf, ss));
        };
        let carried = self.declared(sf, Some(ss), &returns.class);
        match &returns.carrier {
            None => carried,
            // A project type of the carrier's name is no carrier: what it holds is unknown.
            Some(carrier) => match self.r.expression(sf, Some(ss), carrier) {
                Some(Target::Symbol(cf, cs))
                    if self.r.files[cf].extract.symbols[cs].kind.is_class_like() =>
                {
                    None
                }
                _ => Some(Known::Carrying(carried.map(Box::new))),
            },
        }
    }

    /// What a function without a declared return type returns: what all its `return`
    /// statements agree on (`return self`, `return QuerySet(…)`, `return self._chain()`), if
    /// each is known. One that returns back into itself while being worked out is unknown.
    fn inferred(&self, function: SymbolAt) -> Option<Known> {
        if let Some(known) = self.returned.borrow().get(&function) {
            return known.clone();
        }
        // A chain of functions each returning the next's result is followed as far as a chain
        // of bindings is.
        if self.inferring.get() > MAX_DEPTH {
            return None;
        }
        self.returned.borrow_mut().insert(function, None);
        self.inferring.set(self.inferring.get() + 1);
        let (file, symbol) = (function.file, function.symbol);
        let known = self
            .r
            .names(file)
            .bindings
            .returned
            .get(&symbol)
            .and_then(|returned| {
                let mut agreed: Option<Known> = None;
                for held in &returned.values {
                    let known = self.held(file, Some(symbol), held, 0)?;
                    match &agreed {
                        Some(seen) if *seen != known => return None,
                        _ => agreed = Some(known),
                    }
                }
                agreed
            });
        self.inferring.set(self.inferring.get() - 1);
        self.returned.borrow_mut().insert(function, known.clone());
        known
    }

    /// Whether a callee is a builtin that makes a builtin value, not shadowed by any binding.
    fn builtin_value(&self, file: usize, at: Option<usize>, callee: &str) -> bool {
        self.r.languages[file]
            .spec
            .builtins
            .values
            .iter()
            .any(|b| b == callee)
            && self.local(file, at, callee).is_none()
            && self.r.name(file, at, callee).is_none()
    }

    /// What an expression written in a scope holds: a dotted name, or one call of a dotted
    /// name (`Foo()`, `make()`, `self.client()`).
    pub(super) fn value(
        &self,
        file: usize,
        scope: Option<usize>,
        expression: &str,
    ) -> Option<Known> {
        self.value_at(file, scope, expression, 0)
    }

    fn value_at(
        &self,
        file: usize,
        scope: Option<usize>,
        expression: &str,
        depth: usize,
    ) -> Option<Known> {
        let known = self.named_at(file, scope, expression, depth)?;
        if self.r.languages[file].spec.calls_without_parentheses && self.is_function(&known) {
            return self.result_of(known);
        }
        Some(known)
    }

    /// What an expression names: as `value_at`, but a function named is the function, not
    /// what calling it gives.
    fn named_at(
        &self,
        file: usize,
        scope: Option<usize>,
        expression: &str,
        depth: usize,
    ) -> Option<Known> {
        if depth > MAX_DEPTH {
            return None;
        }
        if is_literal(expression) {
            return Some(Known::Builtin);
        }
        let expression = &*without_method_type_arguments(expression);
        if let Some(class) = self.instance_made_of(file, expression) {
            let class = self.value_at(file, scope, class, depth + 1)?;
            return self.instance_of(class);
        }
        let carriers = &self.r.languages[file].spec.carriers;
        // `given.unwrap()` on a name or member declared a carrier (`given: Option<Store>`):
        // what it carries.
        if let Some((head, method)) = called(expression).and_then(|c| c.rsplit_once('.'))
            && carriers.unwrap.iter().any(|u| u == method)
            && let Some(carrying @ Known::Carrying(_)) = self.value_at(file, scope, head, depth + 1)
        {
            return Self::carried(carrying);
        }
        // `new Store()` (C#, Java, TypeScript): what constructing the class gives.
        let made = expression.strip_prefix("new ").map(str::trim_start);
        if let Some(callee) = called(made.unwrap_or(expression)) {
            return self.returned(file, scope, callee, depth + 1);
        }
        if let Some(head) = carriers
            .passes
            .iter()
            .find_map(|p| expression.strip_suffix(p.as_str()))
        {
            return self.value_at(file, scope, head, depth + 1);
        }
        if let Some(head) = carriers
            .suffixes
            .iter()
            .find_map(|s| expression.strip_suffix(s.as_str()))
        {
            return Self::carried(self.value_at(file, scope, head, depth + 1)?);
        }
        if let Some((head, method)) = chained_call(expression) {
            let base = self.value_at(file, scope, head, depth + 1)?;
            if carriers.unwrap.iter().any(|u| u == method) {
                return Self::carried(base);
            }
            let method = self.called_member_at(file, base, method, depth)?;
            return self.result_of(method);
        }
        // A dotted name, its types' arguments kept (`Policy<int>.Handle`).
        let parts = generic_path(expression)?;
        let [.., name] = parts[..] else {
            return None;
        };
        if parts.len() == 1 {
            return self.name(file, scope, expression, depth);
        }
        let head = &expression[..expression.len() - name.len() - 1];
        let base = self.value_at(file, scope, head, depth + 1)?;
        self.member_at(base, name, depth)
    }

    /// `Foo` of `Foo.new(…)` or `Foo.new`, where the language's `new` makes an instance.
    fn instance_made_of<'e>(&self, file: usize, expression: &'e str) -> Option<&'e str> {
        let callee = called(expression).unwrap_or(expression);
        let (class, maker) = callee.rsplit_once('.')?;
        self.r.languages[file]
            .spec
            .instance_makers
            .iter()
            .any(|m| m == maker)
            .then_some(class)
    }

    /// An instance of what a name stands for: of a repository class, or outside code's.
    fn instance_of(&self, class: Known) -> Option<Known> {
        match class {
            Known::Is(Target::Symbol(cf, cs))
                if self.r.files[cf].extract.symbols[cs].kind.is_class_like() =>
            {
                Some(Known::Instance(SymbolAt::new(cf, cs)))
            }
            outside @ Known::Is(Target::External(_)) => Some(outside),
            _ => None,
        }
    }

    /// What a carrier holds, when it is one and that is known.
    fn carried(known: Known) -> Option<Known> {
        match known {
            Known::Carrying(carried) => carried.map(|c| *c),
            _ => None,
        }
    }

    /// What `base.name(…)` calls: the member (an instance's attribute or method, a class's
    /// method, a module's name), or where a call names only methods, an
    /// instance's method (a field of that name aside).
    pub(super) fn called_member(&self, file: usize, base: Known, name: &str) -> Option<Known> {
        self.called_member_at(file, base, name, 0)
    }

    fn called_member_at(
        &self,
        file: usize,
        base: Known,
        name: &str,
        depth: usize,
    ) -> Option<Known> {
        match base {
            Known::Instance(class) if self.r.languages[file].spec.calls_name_methods => {
                self.method_or_outside(class, name)
            }
            base => self.member_at(base, name, depth),
        }
    }

    /// A class's method of a name, else outside code where the class inherits from outside.
    fn method_or_outside(&self, class: SymbolAt, name: &str) -> Option<Known> {
        match self.method(class, name) {
            Some(method) => Some(Known::Is(method.target())),
            None => self.inherits_outside(class).then_some(Known::Outside),
        }
    }

    fn member_at(&self, base: Known, name: &str, depth: usize) -> Option<Known> {
        match base {
            Known::Instance(class)
                if self.r.languages[class.file]
                    .spec
                    .class_members
                    .iter()
                    .any(|m| m == name) =>
            {
                Some(Known::Is(class.target()))
            }
            Known::Instance(class) => self.attribute(class, name, depth + 1),
            Known::Is(Target::Symbol(cf, cs)) => {
                if !self.r.files[cf].extract.symbols[cs].kind.is_class_like() {
                    return None;
                }
                let class = SymbolAt::new(cf, cs);
                self.method_or_outside(class, name)
                    .or_else(|| self.made_attribute(class, name))
            }
            Known::Is(module) => self.r.member(&module, name).map(Known::Is),
            Known::Builtin => Some(Known::Builtin),
            // The carrier's own method, unless an interface of the repository declares one of
            // that name (an extension trait may be implemented for the carrier).
            Known::Carrying(_) => {
                (!self.interface_methods.contains(name)).then_some(Known::Builtin)
            }
            Known::Outside => None,
        }
    }

    /// What a plain name holds: `self` or `cls`, a local binding, a member of the enclosing
    /// class where members are in scope, else what it names.
    fn name(&self, file: usize, scope: Option<usize>, name: &str, depth: usize) -> Option<Known> {
        let language = self.r.languages[file];
        let is_self = language.spec.self_names.iter().any(|s| s == name);
        if is_self || self.is_receiver(file, scope, name) {
            let class = self.enclosing_class(file, scope)?;
            return Some(if language.spec.class_names.iter().any(|c| c == name) {
                Known::Is(class.target())
            } else {
                Known::Instance(class)
            });
        }
        if let Some(bound) = self.local_at(file, scope, name, depth) {
            return bound;
        }
        if language.spec.implicit_self
            && let Some(known) = self.implicit_attribute(file, scope, name, depth)
        {
            return known;
        }
        match self.r.name(file, scope, name) {
            Some(target) => Some(Known::Is(target)),
            // `System.getenv()`, `str.join()`: a builtin that nothing binds.
            None => self.is_builtin(file, name).then_some(Known::Builtin),
        }
    }
}

/// Attributes made at run time on the subclasses of a class (see `MadeAttributes`).
pub(super) struct Made {
    owner: SymbolAt,
    attributes: &'static [String],
    instance_of: SymbolAt,
}

/// The last name of a type as an extension method's `this` names it, without type arguments
/// or `?` (`global::Shop.Store?` -> `Store`, `IEnumerable<T>` -> `IEnumerable`).
fn extended_name(written: &str) -> &str {
    let bare = written.split('<').next().unwrap_or(written);
    let bare = bare.trim_end_matches('?');
    bare.rsplit(['.', ':']).next().unwrap_or(bare)
}

/// The first of a type's arguments (`Store, io.Error` -> `Store`; `Vec<A, B>, E` -> `Vec<A, B>`).
fn first_argument(arguments: &str) -> &str {
    let mut depth = 0usize;
    for (i, c) in arguments.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => return &arguments[..i],
            _ => {}
        }
    }
    arguments
}
