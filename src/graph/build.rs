//! Building the graph from extractions: nodes, containment, import resolution to files, and
//! calls and bases resolved only where the target is knowable.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use serde::{Deserialize, Serialize};

use super::kept::{Kept, NameSet, Names, method_names};
use super::modules::{self, ModuleSystem, Roots, SystemFile, SystemFiles};
use super::types::{Bindings, Known, Types};
use super::{
    Edge, EdgeKind, Graph, IMPORTS_MODULE, IMPORTS_NAMES, Node, NodeKind, SourceFile, Target,
    external_id, promote, symbol_id,
};
use crate::extract::{Call, Import, SymbolKind, Text, interned, widen};
use crate::languages::{Language, ModuleKind, Registry};

/// How well names resolved, for the index summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct BuildStats {
    pub calls_resolved: u64,
    pub calls_builtin: u64,
    pub calls_external: u64,
    pub calls_unresolved: u64,
    /// Unresolved calls of a name some class defines as a method, on a receiver of unknown
    /// type: kept as possible calls ([`super::UntypedCall`]).
    #[serde(default)]
    pub calls_untyped: u64,
    pub imports_internal: u64,
    pub imports_external: u64,
    pub imports_unresolved: u64,
    pub bases_resolved: u64,
    pub bases_external: u64,
    pub bases_unresolved: u64,
}

impl BuildStats {
    /// Share of calls to project code that could not be bound to a definition.
    pub fn unresolved_call_share(&self) -> f64 {
        let total = self.calls_resolved + self.calls_unresolved;
        if total == 0 {
            0.0
        } else {
            self.calls_unresolved as f64 / total as f64
        }
    }
}

/// A name bound in a file by an import, before member lookup.
#[derive(Debug, Clone)]
pub(super) enum Binding {
    Module(Target),
    Member(Target, Text),
}

#[derive(Default)]
pub(super) struct FileNames {
    /// Module-level bindings from imports.
    imports: HashMap<Text, Binding>,
    /// Bindings from imports inside a definition, by that definition.
    pub(super) scoped: HashMap<usize, HashMap<Text, Binding>>,
    /// Modules whose names this file takes wholesale (`from m import *`, `export * from`).
    wildcards: Vec<Target>,
    /// Definitions by (parent, name).
    pub(super) children: HashMap<(Option<usize>, Text), usize>,
    /// Every import with the module it resolved to.
    modules: Vec<ResolvedImport>,
    /// What names and attributes are bound to.
    pub(super) bindings: Bindings,
    /// Imports of outside modules.
    outside: Vec<OutsideImport>,
    /// How the file's imports resolved.
    resolved: ImportCounts,
}

/// An import and the module it resolved to.
struct ResolvedImport {
    import: Import,
    module: Target,
}

/// An import of an outside module: the module's outside name and the import's line.
struct OutsideImport {
    name: String,
    line: u32,
}

/// How many of a file's imports resolved inside the repository, outside it, or not at all.
#[derive(Default, Clone, Copy)]
struct ImportCounts {
    internal: u64,
    external: u64,
    unresolved: u64,
}

/// Names of every file and how to look them up.
pub(super) struct Resolution<'a> {
    pub(super) files: &'a [&'a SourceFile],
    pub(super) languages: Vec<&'a Language>,
    /// The module system of every language in use.
    systems: HashMap<ModuleKind, Box<dyn ModuleSystem + 'a>>,
    /// Each file's names, collected when first asked for: a focused build asks for the files
    /// it reads and those their names lead to, not every file.
    names: Vec<std::cell::OnceCell<FileNames>>,
    members: RefCell<HashMap<(usize, String), Option<Target>>>,
    /// Methods declared in another file than their type: (type, name) -> method.
    methods: HashMap<(SymbolAt, Text), SymbolAt>,
    /// The type each of those methods belongs to.
    owners: HashMap<SymbolAt, SymbolAt>,
    /// Packages without a file of their own (Go's directories): name -> the files defining it
    /// at the top level, ascending.
    packages: HashMap<ModuleKind, HashMap<String, HashMap<String, Vec<usize>>>>,
    /// The declarations of one class, where a class is declared more than once: C#'s
    /// `partial class` parts across a namespace's files, Ruby's reopened classes and modules.
    /// Each declaration -> every declaration of that class, itself included; a member of one
    /// is a member of all (no edge: they are one class).
    parts: HashMap<SymbolAt, std::rc::Rc<Declarations>>,
    /// The name of every definition, field and property in the repository, for languages
    /// where a name nothing declares is outside (see `Language::undeclared_is_outside`).
    declared: HashSet<String>,
    /// The name of every method in the repository, made on first use (or counted by a
    /// tracked [`Kept`]).
    method_names: std::cell::OnceCell<NameSet<'a>>,
    /// The names a tracked [`Kept`] counts, which a build then need not collect.
    pub(super) kept: Option<&'a Names>,
    /// The files of fixtures (`conftest.py`) by path, made on first use.
    fixture_files: std::cell::OnceCell<HashMap<&'a str, usize>>,
}

/// A definition of the repository: its file's position in the build and its index among that
/// file's symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct SymbolAt {
    pub(super) file: usize,
    pub(super) symbol: usize,
}

impl SymbolAt {
    pub(super) fn new(file: usize, symbol: usize) -> SymbolAt {
        SymbolAt { file, symbol }
    }

    /// The definition as what a name stands for.
    pub(super) fn target(self) -> Target {
        Target::Symbol(self.file, self.symbol)
    }
}

/// The declarations of one class, shared by each of them, and what they define by name (the
/// first declaration's that defines it): a lookup is one probe, not one per declaration (a
/// module reopened in every file of a gem).
pub(super) struct Declarations {
    parts: Vec<SymbolAt>,
    children: HashMap<Text, SymbolAt>,
}

/// What one class inherits: its bases resolved.
#[derive(Default)]
pub(super) struct ClassBases {
    /// The repository's classes it names as bases, in the order written.
    pub(super) resolved: Vec<BaseClass>,
    /// How many bases are outside the repository (a library's class, a builtin value type).
    external: u64,
    /// How many bases name nothing the repository or its imports know.
    unresolved: u64,
}

/// A base a class names that is one of the repository's classes.
pub(super) struct BaseClass {
    /// The base class.
    pub(super) class: SymbolAt,
    /// The line of the declaration that names it.
    pub(super) line: u32,
}

impl ClassBases {
    /// Whether a base is outside the repository: names it does not define may be inherited.
    pub(super) fn outside(&self) -> bool {
        self.external > 0
    }
}

/// Every class's bases, resolved when first asked for: a focused build resolves those of
/// its own classes and of the classes its calls reach, not every class's.
pub(super) struct Inheritance {
    /// Each class's base records, in file order. A record on a method (Rust's `impl Trait
    /// for Type`) is the type's. With a tracked [`Kept`], only those on methods declared
    /// outside their type: the others are in the class's own file, read when it is asked for.
    records: BTreeMap<SymbolAt, Vec<BaseRecord>>,
    /// Whether `records` holds every record.
    whole: bool,
    resolved: RefCell<HashMap<SymbolAt, std::rc::Rc<ClassBases>>>,
}

/// Where a class names a base: the file, and the base's index in its extraction's `bases`.
#[derive(Debug, Clone, Copy)]
pub(super) struct BaseRecord {
    file: usize,
    base: usize,
}

impl Inheritance {
    fn new(r: &Resolution) -> Inheritance {
        let whole = r.kept.is_none();
        let mut records: BTreeMap<SymbolAt, Vec<BaseRecord>> = BTreeMap::new();
        // A record on a method declared outside its type can only be in a file with such
        // methods.
        let files = if whole {
            (0..r.files.len()).collect()
        } else {
            r.with_receivers()
        };
        for f in files {
            for (b, base) in r.files[f].extract.bases.iter().enumerate() {
                let class = match r.own_implementer(f, base.class) {
                    Some(class) if whole => Some(class),
                    Some(_) => continue,
                    None => r.owner(SymbolAt::new(f, base.class)),
                };
                // An impl for a type outside the repository has no class here to inherit.
                if let Some(class) = class {
                    let record = BaseRecord { file: f, base: b };
                    records.entry(class).or_default().push(record);
                }
            }
        }
        Inheritance {
            records,
            whole,
            resolved: RefCell::new(HashMap::default()),
        }
    }

    /// A class's base records, in file order.
    fn records(&self, r: &Resolution, class: SymbolAt) -> Vec<BaseRecord> {
        let mut records = self.records.get(&class).cloned().unwrap_or_default();
        if !self.whole {
            let bases = &r.files[class.file].extract.bases;
            records.extend(
                (0..bases.len())
                    .filter(|&b| r.own_implementer(class.file, bases[b].class) == Some(class))
                    .map(|b| BaseRecord {
                        file: class.file,
                        base: b,
                    }),
            );
            records.sort_by_key(|record| (record.file, record.base));
        }
        records
    }

    /// The classes of file `f` with base records, ascending.
    fn classes_in(&self, r: &Resolution, f: usize) -> Vec<SymbolAt> {
        let mut classes: Vec<SymbolAt> = self
            .records
            .range(SymbolAt::new(f, 0)..SymbolAt::new(f + 1, 0))
            .map(|(&class, _)| class)
            .collect();
        if !self.whole {
            classes.extend(
                r.files[f]
                    .extract
                    .bases
                    .iter()
                    .filter_map(|base| r.own_implementer(f, base.class)),
            );
            classes.sort();
            classes.dedup();
        }
        classes
    }

    /// A class's bases (none for a class that names none).
    pub(super) fn of(&self, r: &Resolution, class: SymbolAt) -> std::rc::Rc<ClassBases> {
        if let Some(known) = self.resolved.borrow().get(&class) {
            return known.clone();
        }
        let mut bases = ClassBases::default();
        let mut seen: HashSet<&str> = HashSet::default();
        for BaseRecord { file: f, base: b } in self.records(r, class) {
            let file = r.files[f];
            let base = &file.extract.bases[b];
            if !seen.insert(base.expr.as_str()) {
                continue;
            }
            let scope = file.extract.symbols[base.class].parent;
            match r.expression(f, scope, &base.expr) {
                Some(Target::Symbol(bf, bs))
                    if r.files[bf].extract.symbols[bs].kind.is_class_like() =>
                {
                    let line = file.extract.symbols[base.class].start_line;
                    bases.resolved.push(BaseClass {
                        class: SymbolAt::new(bf, bs),
                        line,
                    });
                }
                Some(Target::External(_)) => bases.external += 1,
                // A builtin value type (`dict`), not `object`: its methods are known.
                None if r.languages[f]
                    .spec
                    .builtins
                    .values
                    .iter()
                    .any(|v| *v == base.expr) =>
                {
                    bases.external += 1
                }
                _ => bases.unresolved += 1,
            }
        }
        let bases = std::rc::Rc::new(bases);
        self.resolved.borrow_mut().insert(class, bases.clone());
        bases
    }
}

/// Builds the whole graph of a repository from its parsed files.
pub fn build(files: &[&SourceFile], roots: &[Roots]) -> (Graph, BuildStats) {
    let (nodes, edges, stats) = build_parts(files, roots, None, None);
    (promote::promote(nodes, edges), stats)
}

/// The nodes of the files at `focus` (and the external modules any file imports) and the
/// edges out of them, resolved against all `files`; no promotions or measures. This is what
/// changes when those files change and no name elsewhere does (see `index::Live::patch`).
/// Module tables that `kept` holds for the same files are used again, and kept for the next.
pub fn build_focused(
    files: &[&SourceFile],
    roots: &[Roots],
    focus: &std::collections::HashSet<usize>,
    kept: &mut Kept,
) -> (Vec<Node>, Vec<Edge>) {
    let (nodes, edges, _) = build_parts(files, roots, Some(focus), Some(kept));
    (nodes, edges)
}

fn build_parts<'a>(
    files: &'a [&'a SourceFile],
    roots: &'a [Roots],
    focus: Option<&std::collections::HashSet<usize>>,
    kept: Option<&'a mut Kept>,
) -> (Vec<Node>, Vec<Edge>, BuildStats) {
    let resolution = Resolution::of(files, roots, kept);
    let inheritance = Inheritance::new(&resolution);
    let mut builder = Builder {
        focus: focus.cloned(),
        ..Builder::default()
    };
    builder.outside_imports(&resolution);
    builder.nodes_and_containment(files);
    builder.imports(&resolution);
    builder.inheritance(&resolution, &inheritance);
    builder.calls(&resolution, &inheritance);
    builder.side_effects(&resolution);
    builder.untyped_calls(resolution.files);
    let Builder {
        mut nodes,
        edges,
        stats,
        ..
    } = builder;
    let edges = share_ids(&mut nodes, edges);
    (nodes, edges, stats)
}

impl<'a> Resolution<'a> {
    /// What resolving names across `files` needs: each language's module system over its
    /// files and roots (using the tables `kept` holds), packages, partial classes joined,
    /// methods attached to their types.
    fn of(
        files: &'a [&'a SourceFile],
        roots: &'a [Roots],
        kept: Option<&'a mut Kept>,
    ) -> Resolution<'a> {
        let registry = Registry::get();
        let languages: Vec<&Language> = files
            .iter()
            .map(|f| {
                registry
                    .by_name(&f.language)
                    .expect("files carry registered languages")
            })
            .collect();
        let inputs = system_inputs(files, roots, &languages);
        let (mut tables, names) = match kept {
            Some(Kept { modules, names }) => (Some(modules), names.as_ref()),
            None => (None, None),
        };
        let mut resolution = Resolution {
            names: (0..files.len())
                .map(|_| std::cell::OnceCell::new())
                .collect(),
            files,
            systems: inputs
                .into_iter()
                .map(|(kind, input)| (kind, modules::system(kind, input, tables.as_deref_mut())))
                .collect(),
            languages,
            members: RefCell::new(HashMap::default()),
            methods: HashMap::default(),
            owners: HashMap::default(),
            packages: HashMap::default(),
            parts: HashMap::default(),
            declared: HashSet::default(),
            method_names: std::cell::OnceCell::new(),
            kept: names,
            fixture_files: std::cell::OnceCell::new(),
        };
        resolution.index_packages();
        resolution.join_parts();
        resolution.attach_methods();
        resolution
    }
}

/// What each module system of the registry is given: its languages, its roots, and the
/// files of its languages (`languages` holds each file's).
fn system_inputs<'a>(
    files: &'a [&'a SourceFile],
    roots: &'a [Roots],
    languages: &[&'a Language],
) -> BTreeMap<ModuleKind, SystemFiles<'a>> {
    let mut inputs: BTreeMap<ModuleKind, SystemFiles> = BTreeMap::new();
    for language in Registry::get().all() {
        let input = inputs
            .entry(language.module_system)
            .or_insert_with(|| SystemFiles {
                files: Vec::new(),
                languages: Vec::new(),
                roots: roots
                    .iter()
                    .filter(|r| r.system == language.module_system)
                    .collect(),
                extracts: HashMap::default(),
            });
        input.languages.push(language);
    }
    for (i, file) in files.iter().enumerate() {
        if let Some(input) = inputs.get_mut(&languages[i].module_system) {
            input.files.push(SystemFile {
                index: i,
                path: &file.path,
            });
            input.extracts.insert(i, &file.extract);
        }
    }
    inputs
}

/// The built edges, their ids shared with the nodes' (and with each other's), in the order of
/// (kind, source id, destination id).
fn share_ids(nodes: &mut [Node], edges: EdgeTable) -> Vec<Edge> {
    let EdgeTable {
        mut ends,
        numbers,
        facts,
    } = edges;
    drop(numbers);
    let mut ids = super::Ids::default();
    for end in &mut ends {
        ids.share(end);
    }
    for node in nodes {
        ids.share_node(node);
    }
    // Each end's place among the ids in order, so that the edges sort by numbers.
    let mut by_id: Vec<u32> = (0..ends.len() as u32).collect();
    by_id.sort_unstable_by(|&a, &b| ends[a as usize].cmp(&ends[b as usize]));
    let mut place = vec![0u32; ends.len()];
    for (i, &n) in by_id.iter().enumerate() {
        place[n as usize] = i as u32;
    }
    let mut facts: Vec<_> = facts.into_iter().collect();
    facts.sort_unstable_by_key(|&((kind, src, dst), _)| {
        (kind, place[src as usize], place[dst as usize])
    });
    facts
        .into_iter()
        .map(|((kind, src, dst), (mut lines, mut reasons))| {
            lines.sort_unstable();
            lines.dedup();
            reasons.sort_unstable();
            reasons.dedup();
            Edge {
                kind,
                src: ends[src as usize].clone(),
                dst: ends[dst as usize].clone(),
                lines: lines.into(),
                reasons: reasons.into_iter().map(Into::into).collect(),
            }
        })
        .collect()
}

/// The edges being built, their ends numbered: at 50,000 files a build makes 3M edges, and a
/// map keyed by two id strings each (with a set per edge for its lines) was most of a cold
/// index's peak memory.
#[derive(Default)]
struct EdgeTable {
    /// The ids of the ends, by number.
    ends: Vec<Arc<str>>,
    /// The number of each id in `ends`.
    numbers: HashMap<Arc<str>, u32>,
    facts: HashMap<(EdgeKind, u32, u32), EdgeFacts>,
}

impl EdgeTable {
    fn number(&mut self, id: String) -> u32 {
        if let Some(&n) = self.numbers.get(id.as_str()) {
            return n;
        }
        let n = u32::try_from(self.ends.len()).expect("fewer than 2^32 node ids");
        let id: Arc<str> = id.into();
        self.ends.push(id.clone());
        self.numbers.insert(id, n);
        n
    }

    /// The lines and reasons of the edge, made empty on first sight.
    fn facts(&mut self, kind: EdgeKind, src: String, dst: String) -> &mut EdgeFacts {
        let key = (kind, self.number(src), self.number(dst));
        self.facts.entry(key).or_default()
    }
}

/// What a call was found to reach.
enum Reached {
    /// A target, or none known (an unresolved call).
    Target(Option<Target>),
    /// A builtin or outside call, counted as such where it was found: nothing more to record.
    Counted,
}

/// What `super().name(…)` reaches: the method of the first resolved base of the enclosing
/// class that has it.
fn super_call_target(
    r: &Resolution,
    inheritance: &Inheritance,
    types: &Types,
    f: usize,
    call: &Call,
) -> Option<Target> {
    types
        .enclosing_class(f, widen(call.scope))
        .and_then(|c| {
            inheritance
                .of(r, c)
                .resolved
                .iter()
                .find_map(|base| types.method(base.class, &call.name))
        })
        .map(SymbolAt::target)
}

/// What is known of an edge being built so far: source lines and reasons (sorted and made
/// unique when the edge is made).
type EdgeFacts = (Vec<u32>, Vec<&'static str>);

#[derive(Default)]
struct Builder {
    nodes: Vec<Node>,
    edges: EdgeTable,
    stats: BuildStats,
    externals: BTreeSet<String>,
    /// Side-effect categories per (file, scope symbol).
    effects: BTreeMap<(usize, Option<usize>), BTreeSet<String>>,
    /// Calls on receivers of unknown type per (file, scope symbol).
    untyped: BTreeMap<(usize, Option<usize>), UntypedAt>,
    /// Only these files' nodes and outgoing edges are built (all when `None`).
    focus: Option<std::collections::HashSet<usize>>,
}

/// The calls of one scope on receivers of unknown type: (name, receiver) -> lines.
type UntypedAt = BTreeMap<(Text, Text), Vec<u32>>;

fn symbol_kind(kind: SymbolKind) -> NodeKind {
    match kind {
        SymbolKind::Class => NodeKind::Class,
        SymbolKind::Function => NodeKind::Function,
        SymbolKind::Method => NodeKind::Method,
        SymbolKind::Interface => NodeKind::Interface,
        SymbolKind::Type => NodeKind::Type,
        SymbolKind::Enum => NodeKind::Enum,
        SymbolKind::Constant => NodeKind::Constant,
    }
}

impl Builder {
    /// Whether file `f`'s nodes and edges are wanted.
    fn wants(&self, f: usize) -> bool {
        self.focus.as_ref().is_none_or(|focus| focus.contains(&f))
    }

    fn edge(&mut self, kind: EdgeKind, src: String, dst: String, line: Option<u32>) {
        self.edge_because(kind, src, dst, line, None);
    }

    fn edge_because(
        &mut self,
        kind: EdgeKind,
        src: String,
        dst: String,
        line: Option<u32>,
        reason: Option<&'static str>,
    ) {
        if src == dst {
            return;
        }
        let (lines, reasons) = self.edges.facts(kind, src, dst);
        lines.extend(line);
        reasons.extend(reason);
    }

    fn node_id(files: &[&SourceFile], file: usize, symbol: Option<usize>) -> String {
        let path = &files[file].path;
        match symbol {
            Some(s) => symbol_id(path, &files[file].extract.symbols[s].qualname),
            None => path.clone(),
        }
    }

    fn nodes_and_containment(&mut self, files: &[&SourceFile]) {
        for (f, file) in files.iter().enumerate() {
            if !self.wants(f) {
                continue;
            }
            let mutations_by_scope = file.extract.mutations.iter().fold(
                HashMap::<Option<usize>, u32>::default(),
                |mut counts, m| {
                    *counts.entry(widen(m.scope)).or_default() += 1;
                    counts
                },
            );
            self.nodes.push(Node {
                id: file.path.as_str().into(),
                kind: NodeKind::File,
                path: file.path.as_str().into(),
                name: file.path.rsplit('/').next().unwrap_or(&file.path).into(),
                start_line: 1,
                end_line: file.extract.lines.max(1),
                signature: None,
                doc: None,
                is_test: file.is_test,
                side_effects: Vec::new(),
                mutations: file.extract.mutations.len() as u32,
                reach: 0,
                causal_in: 0,
                impact: super::rank::neutral(),
                last_change: file.last_change,
                parent: None,
                untyped_calls: Box::default(),
            });
            for (s, symbol) in file.extract.symbols.iter().enumerate() {
                let parent = Self::node_id(files, f, symbol.parent);
                let id = Self::node_id(files, f, Some(s));
                self.nodes.push(Node {
                    id: id.as_str().into(),
                    kind: symbol_kind(symbol.kind),
                    path: file.path.as_str().into(),
                    name: symbol.qualname,
                    start_line: symbol.start_line,
                    end_line: symbol.end_line,
                    signature: Some(symbol.signature.to_string()),
                    doc: symbol.doc.as_deref().map(String::from),
                    is_test: file.is_test,
                    side_effects: Vec::new(),
                    mutations: mutations_by_scope.get(&Some(s)).copied().unwrap_or(0),
                    reach: 0,
                    causal_in: 0,
                    impact: super::rank::neutral(),
                    last_change: file.last_change,
                    parent: Some(parent.as_str().into()),
                    untyped_calls: Box::default(),
                });
                self.edge(EdgeKind::Contains, parent, id, None);
            }
        }
        for module in std::mem::take(&mut self.externals) {
            self.nodes.push(Node {
                id: external_id(&module).into(),
                kind: NodeKind::External,
                path: module.as_str().into(),
                name: module.into(),
                start_line: 0,
                end_line: 0,
                signature: None,
                doc: None,
                is_test: false,
                side_effects: Vec::new(),
                mutations: 0,
                reach: 0,
                causal_in: 0,
                impact: super::rank::neutral(),
                last_change: 0,
                parent: None,
                untyped_calls: Box::default(),
            });
        }
    }

    /// IMPORTS edges to repository files; `from pkg import module` depends on the submodule, and
    /// `from module import Symbol` also imports the symbol itself.
    /// IMPORTS edges to outside modules, whose nodes are made with the files'.
    fn outside_imports(&mut self, r: &Resolution) {
        for f in 0..r.files.len() {
            if !self.wants(f) {
                continue;
            }
            let names = r.names(f);
            let counts = names.resolved;
            self.stats.imports_internal += counts.internal;
            self.stats.imports_external += counts.external;
            self.stats.imports_unresolved += counts.unresolved;
            for outside in &names.outside {
                let importer = r.files[f].path.clone();
                let module = external_id(&outside.name);
                self.edge(EdgeKind::Imports, importer, module, Some(outside.line));
                self.externals.insert(outside.name.clone());
            }
        }
    }

    fn imports(&mut self, r: &Resolution) {
        for f in 0..r.files.len() {
            if !self.wants(f) {
                continue;
            }
            let names = r.names(f);
            for ResolvedImport { import, module } in &names.modules {
                // An import inside a function is that function's dependency, not the file's.
                let importer = Self::node_id(r.files, f, widen(import.scope));
                let member = import.name.as_ref().and_then(|n| r.member(module, n));
                let dst = match (module, &member) {
                    (_, Some(Target::File(sub))) => *sub,
                    // A type's file (a static import from a type: Java's `import static a.B.m`).
                    (Target::File(m) | Target::Symbol(m, _), _) => *m,
                    // A definition imported from a package (Java's `import a.b.C`, PHP's
                    // `use App\Models\User`): the file defining it.
                    (Target::Package(..), Some(Target::Symbol(sf, _))) => *sf,
                    (Target::Package(kind, package), None) if import.name.is_none() => {
                        // A package directory (Go) is used as a whole: every file of it.
                        for &file in r.package_files(*kind, package) {
                            if r.files[file].is_test {
                                continue;
                            }
                            let dst = r.files[file].path.clone();
                            self.edge_because(
                                EdgeKind::Imports,
                                importer.clone(),
                                dst,
                                Some(import.line),
                                Some(IMPORTS_MODULE),
                            );
                        }
                        continue;
                    }
                    _ => continue,
                };
                // The importer depends on the named symbol, or on the whole module.
                let reason = if let Some(Target::Symbol(sf, ss)) = member {
                    let symbol = Self::node_id(r.files, sf, Some(ss));
                    self.edge(
                        EdgeKind::Imports,
                        importer.clone(),
                        symbol,
                        Some(import.line),
                    );
                    IMPORTS_NAMES
                } else {
                    IMPORTS_MODULE
                };
                let dst = r.files[dst].path.clone();
                self.edge_because(
                    EdgeKind::Imports,
                    importer,
                    dst,
                    Some(import.line),
                    Some(reason),
                );
            }
        }
    }

    /// INHERITS edges out of the wanted classes, and the bases' statistics.
    fn inheritance(&mut self, r: &Resolution, inheritance: &Inheritance) {
        let files: Vec<usize> = match &self.focus {
            Some(focus) => {
                let mut files: Vec<usize> = focus.iter().copied().collect();
                files.sort();
                files
            }
            None => (0..r.files.len()).collect(),
        };
        for class in files.into_iter().flat_map(|f| inheritance.classes_in(r, f)) {
            let bases = inheritance.of(r, class);
            self.stats.bases_resolved += bases.resolved.len() as u64;
            self.stats.bases_external += bases.external;
            self.stats.bases_unresolved += bases.unresolved;
            for base in &bases.resolved {
                self.edge(
                    EdgeKind::Inherits,
                    Self::node_id(r.files, class.file, Some(class.symbol)),
                    Self::node_id(r.files, base.class.file, Some(base.class.symbol)),
                    Some(base.line),
                );
            }
        }
    }

    fn calls(&mut self, r: &Resolution, inheritance: &Inheritance) {
        let types = Types::new(r, inheritance);
        for (f, file) in r.files.iter().enumerate() {
            if !self.wants(f) {
                continue;
            }
            for call in &file.extract.calls {
                // A bare name bound as a local in sight reads the local: no call.
                if call.bare && types.local(f, widen(call.scope), &call.name).is_some() {
                    continue;
                }
                if let Reached::Target(target) = self.call_target(r, inheritance, &types, f, call) {
                    self.record_call(r, f, call, target);
                }
            }
            self.fixture_calls(r, &types, f);
        }
    }

    /// A CALLS edge from each test or fixture to each fixture it takes by parameter name: the
    /// runner calls the fixture for it. On the function's first line; not counted as a call of
    /// the source (a parameter no fixture of the repository gives is the runner's or a
    /// plugin's: `tmp_path`).
    fn fixture_calls(&mut self, r: &Resolution, types: &Types, f: usize) {
        let extract = &r.files[f].extract;
        for (at, name) in &extract.takes {
            let at = *at;
            if let Some(fixture) = types.fixture(f, Some(at), name) {
                let line = extract.symbols[at].start_line;
                let caller = Self::node_id(r.files, f, Some(at));
                let callee = Self::node_id(r.files, fixture.file, Some(fixture.symbol));
                self.edge(EdgeKind::Calls, caller, callee, Some(line));
            }
        }
    }

    /// What a call in file `f` reaches, by how it is written: a bare name, `super`, or a
    /// member of a receiver.
    fn call_target(
        &mut self,
        r: &Resolution,
        inheritance: &Inheritance,
        types: &Types,
        f: usize,
        call: &Call,
    ) -> Reached {
        let language = r.languages[f];
        match call.receiver.as_deref() {
            // `cls(…)` in a class method makes an instance of the class.
            None if language.spec.class_names.iter().any(|c| *c == call.name) => Reached::Target(
                types
                    .enclosing_class(f, widen(call.scope))
                    .map(SymbolAt::target),
            ),
            None => self.bare_call_target(r, types, f, call),
            // Python's `super()`, TypeScript's `super`; Rust's `super::f()` is a path.
            Some(receiver)
                if (receiver == "super" || receiver.starts_with("super("))
                    && r.system(f).path_root(f, receiver).is_none() =>
            {
                Reached::Target(super_call_target(r, inheritance, types, f, call))
            }
            Some(receiver) => self.member_call_target(r, types, f, call, receiver),
        }
    }

    /// What a call of a bare name reaches: a local alias, a member of the enclosing class
    /// (languages without `this.`), a name in scope, or a builtin.
    fn bare_call_target(
        &mut self,
        r: &Resolution,
        types: &Types,
        f: usize,
        call: &Call,
    ) -> Reached {
        let language = r.languages[f];
        let local = (!language.spec.locals_uncallable)
            .then(|| types.local(f, widen(call.scope), &call.name))
            .flatten()
            .or_else(|| {
                // `save()` inside a class of a language without `this.` (Java, C#).
                (language.spec.implicit_self && !call.is_new)
                    .then(|| types.implicit_member(f, widen(call.scope), &call.name))
                    .flatten()
                    .map(Some)
            });
        match local {
            // A local alias (`make = Foo`): what it stands for, if known.
            Some(Some(Known::Is(target))) => Reached::Target(Some(target)),
            Some(Some(Known::Outside)) => {
                self.stats.calls_external += 1;
                Reached::Counted
            }
            Some(_) => Reached::Target(None),
            // `new Store()` in a method of Store makes a Store, as anywhere.
            None => match r.name(f, widen(call.scope), &call.name) {
                Some(t) => Reached::Target(Some(t)),
                None if language.is_builtin(&call.name) => {
                    self.stats.calls_builtin += 1;
                    self.effect_of_call(f, widen(call.scope), language, &call.name);
                    Reached::Counted
                }
                None => Reached::Target(None),
            },
        }
    }

    /// What a call of a member of `receiver` reaches, by what the receiver holds.
    fn member_call_target(
        &mut self,
        r: &Resolution,
        types: &Types,
        f: usize,
        call: &Call,
        receiver: &str,
    ) -> Reached {
        let language = r.languages[f];
        // Ruby's `self.class` reads the class (naming a method calls it there): the language's
        // own, no call of the class.
        if language.spec.calls_without_parentheses
            && language.spec.class_members.iter().any(|m| *m == call.name)
        {
            self.stats.calls_builtin += 1;
            return Reached::Counted;
        }
        let base = types.value(f, widen(call.scope), receiver);
        // Nothing is known of the value, or only that it is read from a function (a property
        // whose value nothing declares, `self.constrained_target`).
        let untyped = base.as_ref().is_none_or(|b| types.is_function(b));
        // A class that answers any name (PHP's `__call`) may answer this one.
        let catch_all = base.as_ref().is_some_and(|b| types.answers_any(b));
        let called = base
            .clone()
            .and_then(|base| types.called_member(f, base, &call.name));
        // No method of the receiver's own has the name: an extension method may (C#).
        if !matches!(called, Some(Known::Is(Target::Symbol(..))))
            && let Some(base) = &base
            && let Some(extension) = types.extension(f, widen(call.scope), base, &call.name)
        {
            return Reached::Target(Some(extension.target()));
        }
        match called {
            Some(Known::Is(target)) => Reached::Target(Some(target)),
            Some(Known::Builtin) => {
                self.stats.calls_builtin += 1;
                // `System.getenv()`: a builtin type's function, by its written name.
                let name = format!("{receiver}.{}", call.name);
                self.effect_of_call(f, widen(call.scope), language, &name);
                Reached::Counted
            }
            Some(Known::Outside) => {
                self.stats.calls_external += 1;
                Reached::Counted
            }
            // `x.ShouldBe()`: a method no file of the repository defines is outside code (an
            // extension method of a package, a platform type's).
            Some(Known::Instance(..) | Known::Carrying(_)) | None
                if !catch_all && r.undeclared_method(f, &call.name) =>
            {
                self.stats.calls_external += 1;
                Reached::Counted
            }
            Some(Known::Instance(..) | Known::Carrying(_)) | None => {
                // Only where nothing is known of the receiver: one known to be of a type
                // without the method (or of none of the repository's) reaches no method of
                // that name.
                if untyped && r.defines_method(&call.name) {
                    self.stats.calls_untyped += 1;
                    self.untyped
                        .entry((f, widen(call.scope)))
                        .or_default()
                        .entry((call.name, receiver_tail(receiver).into()))
                        .or_default()
                        .push(call.line);
                }
                Reached::Target(None)
            }
        }
    }

    /// Counts a call by what it reaches, with its edge to a symbol or the side effects of an
    /// outside name.
    fn record_call(&mut self, r: &Resolution, f: usize, call: &Call, target: Option<Target>) {
        match target {
            Some(Target::Symbol(cf, cs)) => {
                self.stats.calls_resolved += 1;
                let caller = Self::node_id(r.files, f, widen(call.scope));
                let callee = Self::node_id(r.files, cf, Some(cs));
                self.edge(EdgeKind::Calls, caller, callee, Some(call.line));
            }
            Some(Target::External(name)) => {
                self.stats.calls_external += 1;
                self.effect_of_call(f, widen(call.scope), r.languages[f], &name);
            }
            _ => self.stats.calls_unresolved += 1,
        }
    }

    /// Records the side-effect categories a call to an outside name implies.
    fn effect_of_call(
        &mut self,
        file: usize,
        scope: Option<usize>,
        language: &Language,
        name: &str,
    ) {
        for (category, rule) in &language.spec.side_effects {
            let hit = rule.calls.iter().any(|c| c == name)
                || rule.modules.iter().any(|m| dotted_within(name, m));
            if hit {
                self.effects
                    .entry((file, scope))
                    .or_default()
                    .insert(category.clone());
            }
        }
    }

    fn side_effects(&mut self, r: &Resolution) {
        for (f, file) in r.files.iter().enumerate() {
            if !self.wants(f) {
                continue;
            }
            let language = r.languages[f];
            for import in &file.extract.imports {
                let module = import.module.trim_start_matches("node:");
                // An imported name counts as itself too: `import java.io.File` is `java.io.File`.
                let named = import.name.as_ref().map(|n| format!("{module}.{n}"));
                for (category, rule) in &language.spec.side_effects {
                    if rule.modules.iter().any(|m| {
                        dotted_within(module, m)
                            || *m == import.module
                            || named.as_deref().is_some_and(|n| dotted_within(n, m))
                    }) {
                        self.effects
                            .entry((f, None))
                            .or_default()
                            .insert(category.clone());
                    }
                }
            }
        }
        let mut by_id: HashMap<String, BTreeSet<String>> = HashMap::default();
        for ((f, scope), categories) in &self.effects {
            let file_id = Self::node_id(r.files, *f, None);
            by_id
                .entry(file_id)
                .or_default()
                .extend(categories.iter().cloned());
            if scope.is_some() {
                by_id
                    .entry(Self::node_id(r.files, *f, *scope))
                    .or_default()
                    .extend(categories.iter().cloned());
            }
        }
        for node in &mut self.nodes {
            if let Some(categories) = by_id.remove(&*node.id) {
                node.side_effects = categories.into_iter().collect();
            }
        }
    }

    /// Gives each node the calls on receivers of unknown type made in it.
    fn untyped_calls(&mut self, files: &[&SourceFile]) {
        let mut by_id: HashMap<String, Vec<super::UntypedCall>> = HashMap::default();
        for ((f, scope), calls) in std::mem::take(&mut self.untyped) {
            by_id.insert(
                Self::node_id(files, f, scope),
                calls
                    .into_iter()
                    .map(|((name, receiver), lines)| super::UntypedCall {
                        name,
                        receiver,
                        lines: lines.into(),
                    })
                    .collect(),
            );
        }
        for node in &mut self.nodes {
            if let Some(calls) = by_id.remove(&*node.id) {
                node.untyped_calls = calls.into();
            }
        }
    }
}

/// The last part of a call's receiver as written, arguments left out: `root_queryset` of
/// `self.root_queryset`, `order_by()` of `queryset.order_by("pk")`, `items` of `self.items[0]`.
fn receiver_tail(receiver: &str) -> String {
    let mut depth = 0usize;
    let mut start = 0;
    let bytes = receiver.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'.' if depth == 0 => start = i + 1,
            b':' if depth == 0 && bytes.get(i + 1) == Some(&b':') => start = i + 2,
            b'>' if depth == 0 && i > 0 && bytes[i - 1] == b'-' => start = i + 1,
            _ => {}
        }
    }
    let tail = receiver[start.min(receiver.len())..].trim();
    // The name, and `()` when the tail is a call; an index or other brackets dropped.
    let name_end = tail
        .find(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$' || c == '@'))
        .unwrap_or(tail.len());
    let name = &tail[..name_end];
    if !name.is_empty() && tail[name_end..].starts_with('(') {
        format!("{name}()")
    } else {
        name.to_string()
    }
}

/// `a.b.c` is within `a.b` (and equal to itself).
fn dotted_within(name: &str, module: &str) -> bool {
    name == module
        || name
            .strip_prefix(module)
            .is_some_and(|rest| rest.starts_with('.') || rest.starts_with('/'))
}

impl Resolution<'_> {
    /// The module system of a file's language.
    fn system(&self, file: usize) -> &dyn ModuleSystem {
        self.system_of(self.languages[file].module_system)
    }

    fn system_of(&self, kind: ModuleKind) -> &dyn ModuleSystem {
        self.systems
            .get(&kind)
            .expect("every registered module system is built")
            .as_ref()
    }

    /// A file's names, collected on first use.
    pub(super) fn names(&self, file: usize) -> &FileNames {
        self.names[file].get_or_init(|| self.file_names(file))
    }

    /// Resolves an import's module to a target, counted in `names`, which also keeps an
    /// outside module's name for its IMPORTS edge.
    fn module_of(&self, file: usize, import: &Import, names: &mut FileNames) -> Option<Target> {
        let target = self.system(file).resolve(file, &import.module);
        match &target {
            Some(Target::File(_) | Target::Package(..) | Target::Symbol(..)) => {
                names.resolved.internal += 1
            }
            Some(Target::External(module)) => {
                names.resolved.external += 1;
                let name = self.system(file).external_name(module).to_string();
                names.outside.push(OutsideImport {
                    name,
                    line: import.line,
                });
            }
            None => names.resolved.unresolved += 1,
        }
        target
    }

    /// Collects a file's own definitions and the names its imports bind (no other file's
    /// names are read, so the order files are collected in does not matter).
    fn file_names(&self, file: usize) -> FileNames {
        let mut names = FileNames::default();
        let extract = &self.files[file].extract;
        for (s, symbol) in extract.symbols.iter().enumerate() {
            let name = symbol.qualname.rsplit('.').next().unwrap_or(&symbol.name);
            // A method declared for a type of another file is attached by `attach_methods`.
            if name.contains('#') || (symbol.receiver.is_some() && symbol.parent.is_none()) {
                continue;
            }
            names.children.insert((symbol.parent, Text::from(name)), s);
        }
        names.bindings = Bindings::of(extract);
        for import in &extract.imports {
            let Some(module) = self.module_of(file, import, &mut names) else {
                continue;
            };
            names.modules.push(ResolvedImport {
                import: import.clone(),
                module: module.clone(),
            });
            let mut bind = |local: Text, binding: Binding| match widen(import.scope) {
                Some(scope) => {
                    names
                        .scoped
                        .entry(scope)
                        .or_default()
                        .insert(local, binding);
                }
                None => {
                    names.imports.insert(local, binding);
                }
            };
            if import.wildcard {
                names.wildcards.push(module.clone());
                continue;
            }
            if let Some(namespace) = &import.namespace {
                bind(*namespace, Binding::Module(module.clone()));
            }
            if let Some(default) = &import.default {
                // A package's default export is the package as far as cairn can tell.
                let binding = match &module {
                    Target::External(_) => Binding::Module(module.clone()),
                    _ => Binding::Member(module.clone(), *default),
                };
                bind(*default, binding);
            }
            if let Some(name) = &import.name {
                let local = import.alias.unwrap_or(*name);
                bind(local, Binding::Member(module.clone(), *name));
            }
            if import.whole_module {
                match &import.alias {
                    Some(alias) => bind(*alias, Binding::Module(module.clone())),
                    None => {
                        if let Some((local, target)) =
                            self.system(file)
                                .implicit_binding(file, &import.module, &module)
                        {
                            bind(local.into(), Binding::Module(target));
                        }
                    }
                }
            }
        }
        // What the file's project imports for all its files (C#'s `<Using Include=…/>`): names
        // seen after the file's own imports, no dependency of the file on any one of them.
        let system = self.system(file);
        names.wildcards.extend(
            system
                .implicit_imports(file)
                .iter()
                .filter_map(|spec| system.resolve(file, spec))
                .filter(|target| matches!(target, Target::Package(..) | Target::Symbol(..))),
        );
        names
    }

    /// Attaches the methods declared for a type of another file (Go's methods in any file of
    /// the type's package) to that type, found by name from the method's file.
    fn attach_methods(&mut self) {
        let mut methods = HashMap::default();
        let mut owners = HashMap::default();
        let mut unattached = Vec::new();
        for f in self.with_receivers() {
            let file = self.files[f];
            for (s, symbol) in file.extract.symbols.iter().enumerate() {
                let Some(receiver) = &symbol.receiver else {
                    continue;
                };
                if symbol.parent.is_some() || symbol.qualname.contains('#') {
                    continue;
                }
                let owner = match self.top_level(f, &receiver.type_name) {
                    Some(Target::Symbol(tf, ts))
                        if self.files[tf].extract.symbols[ts].kind.is_class_like() =>
                    {
                        SymbolAt::new(tf, ts)
                    }
                    _ => {
                        unattached.push((f, symbol.name));
                        continue;
                    }
                };
                let method = SymbolAt::new(f, s);
                methods.entry((owner, symbol.name)).or_insert(method);
                owners.insert(method, owner);
            }
        }
        self.methods = methods;
        self.owners = owners;
        self.count_unattached(unattached);
    }

    /// The files that may declare methods outside their type's body, ascending: those a
    /// tracked [`Kept`] lists (the files come in path order), or every file.
    fn with_receivers(&self) -> Vec<usize> {
        match self.kept {
            Some(kept) => kept
                .receivers
                .iter()
                .filter_map(|path| {
                    self.files
                        .binary_search_by(|f| f.path.as_str().cmp(path))
                        .ok()
                })
                .collect(),
            None => (0..self.files.len()).collect(),
        }
    }

    /// In a flat namespace, a definition qualified by what is no class of the repository (C++'s
    /// `int store::open() {…}`, a namespace's function) is not bound by its name, but it makes
    /// a same-named definition elsewhere ambiguous and is no outside name.
    fn count_unattached(&mut self, unattached: Vec<(usize, Text)>) {
        for (f, name) in unattached {
            let Some(Target::Package(kind, package)) = self.system(f).own_package(f) else {
                continue;
            };
            if !self.system_of(kind).undefined_is_outside(&name) {
                continue;
            }
            let files = self
                .packages
                .entry(kind)
                .or_default()
                .entry(package)
                .or_default()
                .entry(name.to_string())
                .or_default();
            if !files.contains(&f) {
                files.push(f);
            }
        }
    }

    /// A definition inside a class (or any definition), or a method attached to it from
    /// another file.
    pub(super) fn child(&self, class: SymbolAt, name: &str) -> Option<SymbolAt> {
        let children = &self.names(class.file).children;
        if let Some(&c) = interned(name).and_then(|name| children.get(&(Some(class.symbol), name)))
        {
            return Some(SymbolAt::new(class.file, c));
        }
        if let Some(&method) = interned(name).and_then(|name| self.methods.get(&(class, name))) {
            return Some(method);
        }
        self.parts
            .get(&class)
            .and_then(|declarations| declarations.children.get(&interned(name)?).copied())
    }

    /// Every declaration of the class a class-like symbol declares, itself included; none
    /// unless the class is declared more than once (C#'s parts, Ruby's reopened classes).
    pub(super) fn parts(&self, class: SymbolAt) -> &[SymbolAt] {
        self.parts
            .get(&class)
            .map_or(&[], |declarations| declarations.parts.as_slice())
    }

    /// Groups the declarations of each class of the languages with open classes: the same
    /// qualified name in any file of the language is one class.
    fn join_parts(&mut self) {
        let mut by_name: BTreeMap<(&str, &str), Vec<SymbolAt>> = BTreeMap::new();
        for (f, file) in self.files.iter().enumerate() {
            if !self.languages[f].spec.open_classes {
                continue;
            }
            for (s, symbol) in file.extract.symbols.iter().enumerate() {
                if symbol.kind.is_class_like() && !symbol.qualname.contains('#') {
                    by_name
                        .entry((&self.languages[f].spec.name, &symbol.qualname))
                        .or_default()
                        .push(SymbolAt::new(f, s));
                }
            }
        }
        for declarations in by_name.into_values() {
            if declarations.len() > 1 {
                self.join(declarations);
            }
        }
    }

    /// Makes declarations one class: each shares the list of all of them.
    fn join(&mut self, parts: Vec<SymbolAt>) {
        let mut children = HashMap::default();
        for part in &parts {
            for ((parent, name), &c) in &self.names(part.file).children {
                if *parent == Some(part.symbol) {
                    children.entry(*name).or_insert(SymbolAt::new(part.file, c));
                }
            }
        }
        let shared = std::rc::Rc::new(Declarations { parts, children });
        for &part in &shared.parts {
            self.parts.insert(part, shared.clone());
        }
    }

    /// The class a base recorded on a definition belongs to, when it is in the same file:
    /// the definition itself, or a method's class; none for a method declared outside its
    /// type, whose type is its [`Resolution::owner`].
    fn own_implementer(&self, file: usize, symbol: usize) -> Option<SymbolAt> {
        let symbols = &self.files[file].extract.symbols;
        if !symbols[symbol].kind.is_callable() {
            return Some(SymbolAt::new(file, symbol));
        }
        match symbols[symbol].parent {
            Some(p) if symbols[p].kind.is_class_like() => Some(SymbolAt::new(file, p)),
            _ => None,
        }
    }

    /// The type a method declared in another file belongs to.
    pub(super) fn owner(&self, method: SymbolAt) -> Option<SymbolAt> {
        self.owners.get(&method).copied()
    }

    fn resolve_binding(&self, binding: &Binding) -> Option<Target> {
        match binding {
            Binding::Module(target) => Some(target.clone()),
            Binding::Member(module, name) => self.member(module, name),
        }
    }

    /// The file at `path` if it is one whose fixtures its folder's tests take by name
    /// (`[tests] fixtures_from`).
    pub(super) fn fixture_file(&self, path: &str) -> Option<usize> {
        let files = self.fixture_files.get_or_init(|| {
            self.files
                .iter()
                .enumerate()
                .filter(|(f, file)| {
                    let from = self.languages[*f].fixtures_from();
                    !from.is_empty() && {
                        let name = file.path.rsplit('/').next().unwrap_or(&file.path);
                        from.iter().any(|n| n == name)
                    }
                })
                .map(|(f, file)| (file.path.as_str(), f))
                .collect()
        });
        files.get(path).copied()
    }

    /// A name as seen from a scope of a file: imports and definitions of the enclosing scopes,
    /// then the module's own.
    pub(super) fn name(&self, file: usize, scope: Option<usize>, name: &str) -> Option<Target> {
        let names = self.names(file);
        let symbols = &self.files[file].extract.symbols;
        let mut current = scope;
        while let Some(s) = current {
            if let Some(binding) = names.scoped.get(&s).and_then(|m| m.get(&interned(name)?)) {
                return self.resolve_binding(binding);
            }
            if !symbols[s].kind.is_class_like()
                && let Some(&child) =
                    interned(name).and_then(|name| names.children.get(&(Some(s), name)))
            {
                return Some(Target::Symbol(file, child));
            }
            if symbols[s].kind.is_class_like()
                && self.languages[file].spec.lexical_constants
                && let Some(child) = self.child(SymbolAt::new(file, s), name)
                && !self.files[child.file].extract.symbols[child.symbol]
                    .kind
                    .is_callable()
            {
                return Some(child.target());
            }
            current = symbols[s].parent;
        }
        self.top_level(file, name)
    }

    /// A module-level name of a file: its definitions, then its imports, then its own
    /// package's definitions and subpackages (Go: the other files of its directory; a test
    /// file's names are seen only from test files), then the names every file sees.
    fn top_level(&self, file: usize, name: &str) -> Option<Target> {
        let names = self.names(file);
        if let Some(&s) = interned(name).and_then(|name| names.children.get(&(None, name))) {
            return Some(Target::Symbol(file, s));
        }
        if let Some(binding) = interned(name).and_then(|name| names.imports.get(&name)) {
            return self.resolve_binding(binding);
        }
        let own = match self.system(file).own_package(file) {
            Some(Target::Package(kind, package)) => Some((kind, package)),
            _ => None,
        };
        // The file's own package: its definitions, then its sub-packages (PHP's `Models\User`
        // inside `namespace App`).
        if let Some((kind, package)) = &own
            && let Some(found) = self
                .enclosing_definition(file, *kind, package, name)
                .or_else(|| self.system(file).package_member(package, name))
        {
            return Some(found);
        }
        // Where a path can start (Rust's `crate` and crates, PHP's root namespaces): after
        // the package's own names, which a root's name does not hide.
        if let Some(root) = self.system(file).path_root(file, name) {
            return Some(root);
        }
        // Then the types of imported packages and the members of imported types (Java's
        // `import a.b.*`, C#'s `using A.B;`); a file module's wildcard (Python's `from m
        // import *`) is what the module exports, not names the importer sees.
        // A test file sees the test files' types too (a test project's helpers).
        let with_tests = self.files[file].is_test;
        names
            .wildcards
            .iter()
            // (Not the fallback of a named member: a namespace imported whole shows other
            // code only its code.)
            .find_map(|w| match w {
                Target::Package(kind, package) => self
                    .package_definition(*kind, package, name, with_tests)
                    .or_else(|| self.system_of(*kind).package_member(package, name)),
                Target::Symbol(..) => self.member(w, name),
                _ => None,
            })
            .or_else(|| self.import_ignoring_case(file, name))
            .or_else(|| {
                let (kind, package) = own?;
                self.outside_name(file, kind, &package, name)
            })
            .or_else(|| self.undeclared_name(file, name))
    }

    /// The one import whose name differs from the written name only in case, where the
    /// language reads names without regard to case (PHP: `extends PhpUnitTestCase` names
    /// `use … as PHPUnitTestCase`).
    fn import_ignoring_case(&self, file: usize, name: &str) -> Option<Target> {
        if !self.languages[file].spec.names_ignore_case {
            return None;
        }
        let mut found = self
            .names(file)
            .imports
            .iter()
            .filter(|(local, _)| local.eq_ignore_ascii_case(name));
        let (_, binding) = found.next()?;
        found.next().is_none().then_some(())?;
        self.resolve_binding(binding)
    }

    /// A name of a file's own package, or (C#) of a namespace enclosing it, innermost first.
    fn enclosing_definition(
        &self,
        file: usize,
        kind: ModuleKind,
        package: &str,
        name: &str,
    ) -> Option<Target> {
        let with_tests = self.files[file].is_test;
        let found = self.package_definition(kind, package, name, with_tests);
        if found.is_some() || !self.languages[file].spec.enclosing_namespaces {
            return found;
        }
        package
            .match_indices('.')
            .rev()
            .find_map(|(dot, _)| self.package_definition(kind, &package[..dot], name, with_tests))
    }

    /// A name no file of the repository defines, in a language that brings names in unseen
    /// (C#'s implicit and project-wide usings), and not a builtin: outside.
    /// Only an identifier can be declared: PHP's `$x` is a variable nothing binds, not an
    /// outside name.
    fn undeclared_name(&self, file: usize, name: &str) -> Option<Target> {
        let identifier = name.chars().all(|c| c.is_alphanumeric() || c == '_');
        (identifier && self.undeclared(file, name) && !self.languages[file].is_builtin(name))
            .then(|| Target::External(name.to_string()))
    }

    /// Whether a name (`Store`, `Cache<T>`: its generic arguments aside) is defined by no file
    /// of the repository, in a language where such a name is outside.
    pub(super) fn undeclared(&self, file: usize, name: &str) -> bool {
        self.languages[file].spec.undeclared_is_outside && self.declared_nowhere(file, name)
    }

    /// Whether some class of the repository defines a method `name`.
    fn defines_method(&self, name: &str) -> bool {
        self.method_names
            .get_or_init(|| match self.kept {
                Some(kept) => kept.methods(),
                None => NameSet::Collected(
                    self.files
                        .iter()
                        .flat_map(|f| method_names(&f.extract))
                        .collect(),
                ),
            })
            .contains(name)
    }

    /// Whether a method name is declared by no file of the repository, in a language where
    /// such a method (or any such name) is outside.
    fn undeclared_method(&self, file: usize, name: &str) -> bool {
        let language = self.languages[file];
        (language.spec.undeclared_is_outside || language.spec.undeclared_methods_are_outside)
            && self.declared_nowhere(file, name)
    }

    /// Whether no file of the repository declares a name (generic arguments aside; without
    /// case where the language reads names so).
    fn declared_nowhere(&self, file: usize, name: &str) -> bool {
        let bare = name.split('<').next().unwrap_or(name);
        if self.languages[file].spec.names_ignore_case {
            !self.declared.contains(&bare.to_lowercase())
        } else {
            !self.declared.contains(bare)
        }
    }

    /// Where one namespace holds every file's names (C's program, Ruby's constants), a name no
    /// file of the package defines or binds at the top level, and not a builtin, is outside:
    /// a library's function, type or constant.
    fn outside_name(
        &self,
        file: usize,
        kind: ModuleKind,
        package: &str,
        name: &str,
    ) -> Option<Target> {
        (!self.package_defines(kind, package, name)
            && self.system_of(kind).undefined_is_outside(name)
            && !self.languages[file].is_builtin(name))
        .then(|| Target::External(name.to_string()))
    }

    /// The files of a package without a file of its own (Go: its directory's).
    fn package_files(&self, kind: ModuleKind, package: &str) -> &[usize] {
        self.system_of(kind).package_files(package)
    }

    /// Indexes the top-level names of packages without a file of their own, so a lookup is
    /// one probe instead of a walk over the package's files. In a flat namespace, names bound
    /// at the top level (variables, C++ namespaces) are the package's too: they make a
    /// same-named definition ambiguous and are no outside name.
    fn index_packages(&mut self) {
        let mut packages: HashMap<ModuleKind, HashMap<String, HashMap<String, Vec<usize>>>> =
            HashMap::default();
        for f in 0..self.files.len() {
            let Some(Target::Package(kind, package)) = self.system(f).own_package(f) else {
                continue;
            };
            let names = packages
                .entry(kind)
                .or_default()
                .entry(package)
                .or_default();
            for (parent, name) in self.names(f).children.keys() {
                if parent.is_none() {
                    names.entry(name.to_string()).or_default().push(f);
                }
            }
            // A name bound at the top level is the program's where it would be outside.
            let system = self.system_of(kind);
            for name in self.names(f).bindings.top_level_names() {
                if system.undefined_is_outside(name) {
                    let files = names.entry(name.to_string()).or_default();
                    if files.last() != Some(&f) {
                        files.push(f);
                    }
                }
            }
        }
        self.parts_of_types(&packages);
        self.packages = packages;
        let declares =
            |l: &Language| l.spec.undeclared_is_outside || l.spec.undeclared_methods_are_outside;
        if self.languages.iter().any(|l| declares(l)) {
            // Fields and properties too: `options.OnRetry()` calls a delegate the repository
            // may have stored there, which is unknown, not outside.
            self.declared = self
                .files
                .iter()
                .enumerate()
                .filter(|&(i, _)| declares(self.languages[i]))
                .flat_map(|(i, f)| {
                    let ignore_case = self.languages[i].spec.names_ignore_case;
                    let symbols = f.extract.symbols.iter().map(|s| &s.name);
                    let fields = f.extract.types.iter().filter(|h| h.attribute);
                    symbols.chain(fields.map(|h| &h.name)).map(move |name| {
                        if ignore_case {
                            name.as_str().to_lowercase()
                        } else {
                            name.to_string()
                        }
                    })
                })
                .collect();
        }
    }

    /// Whether any file of a package defines (or, where names are undefined outside, binds) a
    /// name at the top level.
    fn package_defines(&self, kind: ModuleKind, package: &str, name: &str) -> bool {
        self.packages
            .get(&kind)
            .and_then(|packages| packages.get(package))
            .is_some_and(|names| names.contains_key(name))
    }

    /// The types a package's files declare in parts (C#'s `partial class`): a name every
    /// defining file declares as a part.
    fn parts_of_types(
        &mut self,
        packages: &HashMap<ModuleKind, HashMap<String, HashMap<String, Vec<usize>>>>,
    ) {
        for (name, files) in packages.values().flat_map(|p| p.values()).flatten() {
            if files.len() < 2 {
                continue;
            }
            let group: Vec<SymbolAt> = files
                .iter()
                .filter_map(|&f| {
                    let &s = self.names(f).children.get(&(None, interned(name)?))?;
                    let part = self.files[f].extract.parts.contains(&s);
                    part.then_some(SymbolAt::new(f, s))
                })
                .collect();
            if group.len() == files.len() {
                self.join(group);
            }
        }
    }

    /// A top-level definition of a package's files, if exactly one file defines the name or
    /// every one declares a part of one class (test files only when `with_tests`).
    fn package_definition(
        &self,
        kind: ModuleKind,
        package: &str,
        name: &str,
        with_tests: bool,
    ) -> Option<Target> {
        if let Some((bare, _)) = name.split_once('<') {
            return self.generic(kind, package, bare, type_arity(name), with_tests);
        }
        let defining = self.packages.get(&kind)?.get(package)?.get(name)?;
        let mut found = defining
            .iter()
            .filter(|&&f| with_tests || !self.files[f].is_test);
        let &f = found.next()?;
        let &s = self.names(f).children.get(&(None, interned(name)?))?;
        // Another file defining the name makes it ambiguous, unless both declare one class.
        let parts = self.parts.get(&SymbolAt::new(f, s));
        for &other in found {
            let same_class = self
                .names(other)
                .children
                .get(&(None, Text::from(name)))
                .and_then(|&os| self.parts.get(&SymbolAt::new(other, os)))
                .zip(parts)
                .is_some_and(|(theirs, ours)| std::rc::Rc::ptr_eq(theirs, ours));
            if !same_class {
                // Two types of one name: the one without type parameters, if it is alone
                // (C#'s `Builder` beside `Builder<T>`).
                return self.non_generic(defining, name, with_tests);
            }
        }
        Some(Target::Symbol(f, s))
    }

    /// Of a package's types of a name, the one with `arity` type parameters (`Builder<int>`
    /// is the `Builder<T>` beside a `Builder` and a `Builder<K, V>`), if one class is.
    fn generic(
        &self,
        kind: ModuleKind,
        package: &str,
        name: &str,
        arity: usize,
        with_tests: bool,
    ) -> Option<Target> {
        let defining = self.packages.get(&kind)?.get(package)?.get(name)?;
        let mut found = defining
            .iter()
            .filter(|&&f| with_tests || !self.files[f].is_test)
            .filter_map(|&f| {
                let &s = self.names(f).children.get(&(None, interned(name)?))?;
                let symbol = &self.files[f].extract.symbols[s];
                (symbol.kind.is_class_like()
                    && type_parameters(&symbol.signature, name) == Some(arity))
                .then_some(SymbolAt::new(f, s))
            });
        let first = found.next()?;
        let parts = self.parts.get(&first);
        let one_class = found.all(|other| {
            self.parts
                .get(&other)
                .zip(parts)
                .is_some_and(|(theirs, ours)| std::rc::Rc::ptr_eq(theirs, ours))
        });
        one_class.then_some(first.target())
    }

    /// Of a package's same-named types, the one without type parameters when all the others
    /// have some (C#'s `Builder` beside `Builder<T>`): what the bare name means. A generic use
    /// (`new Builder<T>()`) is written with its arguments and never looked up this way.
    fn non_generic(&self, defining: &[usize], name: &str, with_tests: bool) -> Option<Target> {
        let mut plain = defining
            .iter()
            .filter(|&&f| with_tests || !self.files[f].is_test)
            .filter_map(|&f| {
                let &s = self.names(f).children.get(&(None, interned(name)?))?;
                let symbol = &self.files[f].extract.symbols[s];
                (symbol.kind.is_class_like() && !is_generic(&symbol.signature, name))
                    .then_some((f, s))
            });
        let (f, s) = plain.next()?;
        plain.next().is_none().then_some(Target::Symbol(f, s))
    }

    /// A dotted expression (`os.path`, `models.Model`, `Foo`) from a scope.
    pub(super) fn expression(
        &self,
        file: usize,
        scope: Option<usize>,
        expr: &str,
    ) -> Option<Target> {
        // `A.B.Builder<int>`: the parts' type arguments name a generic type.
        let parts = crate::extract::generic_path(expr)?;
        let (first, parts) = parts.split_first()?;
        if first.starts_with('@') {
            return None;
        }
        let mut target = self.name(file, scope, first)?;
        for &part in parts {
            target = match target {
                Target::External(module) => Target::External(format!("{module}.{part}")),
                Target::Symbol(f, s) => self.child(SymbolAt::new(f, s), part)?.target(),
                module => self.member(&module, part)?,
            };
        }
        Some(target)
    }

    /// A name exported by a module: its definitions, its submodules (Python), the names its
    /// imports bind (re-exports) and its wildcard imports. Memoised; cycles resolve to nothing.
    pub(super) fn member(&self, module: &Target, name: &str) -> Option<Target> {
        match module {
            Target::External(m) => Some(Target::External(format!("{m}.{name}"))),
            // A test file's definition only when nothing else has the name: code that names
            // it from another package is test code (PHP's `use App\Tests\Mocks\Clock`, Go's
            // `export_test.go` seen by its external test package).
            Target::Package(kind, package) => self
                .package_definition(*kind, package, name, false)
                .or_else(|| self.system_of(*kind).package_member(package, name))
                .or_else(|| self.package_definition(*kind, package, name, true)),
            Target::Symbol(f, s) => self
                .child(SymbolAt::new(*f, *s), name)
                .map(SymbolAt::target),
            Target::File(f) => {
                let key = (*f, name.to_string());
                if let Some(known) = self.members.borrow().get(&key) {
                    return known.clone();
                }
                self.members.borrow_mut().insert(key.clone(), None);
                let found = self.file_member(*f, name);
                self.members.borrow_mut().insert(key, found.clone());
                found
            }
        }
    }

    fn file_member(&self, file: usize, name: &str) -> Option<Target> {
        let children = &self.names(file).children;
        if let Some(&s) = interned(name).and_then(|name| children.get(&(None, name))) {
            return Some(Target::Symbol(file, s));
        }
        if let Some(found) = self.system(file).submodule(file, name) {
            return Some(found);
        }
        if let Some(binding) = interned(name).and_then(|name| self.names(file).imports.get(&name)) {
            return self.resolve_binding(binding);
        }
        self.names(file)
            .wildcards
            .iter()
            .find_map(|w| self.member(w, name))
    }
}

/// How many type arguments a generic name is written with (`Builder<int, Map<a, b>>`: 2).
fn type_arity(name: &str) -> usize {
    let mut depth = 0usize;
    let mut commas = 0;
    for c in name.chars() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.saturating_sub(1),
            ',' if depth == 1 => commas += 1,
            _ => {}
        }
    }
    commas + 1
}

/// How many type parameters a type's declaration gives it (`class Builder<TKey, TValue>`: 2);
/// `None` when it has none.
fn type_parameters(signature: &str, name: &str) -> Option<usize> {
    let (at, _) = signature.match_indices(name).find(|&(at, _)| {
        let before = signature[..at].chars().next_back();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
    })?;
    // A signature may end inside the parameters (its `>` trimmed with the `{`).
    let parameters = signature[at + name.len()..].trim_start();
    let end = parameters.find('>').unwrap_or(parameters.len());
    parameters
        .starts_with('<')
        .then(|| type_arity(&parameters[..end]))
}

/// Whether a type's declaration gives it type parameters (`class Builder<T> : Base<T>`): its
/// name is followed by `<` where the signature first names it.
fn is_generic(signature: &str, name: &str) -> bool {
    signature
        .match_indices(name)
        .find(|&(at, _)| {
            let before = signature[..at].chars().next_back();
            !before.is_some_and(|c| c.is_alphanumeric() || c == '_')
        })
        .is_some_and(|(at, _)| signature[at + name.len()..].trim_start().starts_with('<'))
}

#[cfg(test)]
mod tests {
    use super::{EdgeTable, is_generic, receiver_tail, share_ids, type_arity, type_parameters};
    use crate::graph::EdgeKind;

    #[test]
    fn built_edges_come_in_id_order_with_each_line_and_reason_once() {
        let mut table = EdgeTable::default();
        let mut add = |kind, src: &str, dst: &str, line: u32, reason| {
            let (lines, reasons) = table.facts(kind, src.into(), dst.into());
            lines.push(line);
            reasons.extend(reason);
        };
        // Numbered in the order first seen, which is not the ids' order.
        add(EdgeKind::Calls, "b.py::g", "a.py::f", 9, None);
        add(EdgeKind::Calls, "a.py::h", "b.py::g", 3, Some("call"));
        add(EdgeKind::Imports, "b.py", "a.py", 1, None);
        add(EdgeKind::Calls, "b.py::g", "a.py::f", 2, None);
        add(EdgeKind::Calls, "b.py::g", "a.py::f", 9, None);
        add(EdgeKind::Calls, "a.py::h", "b.py::g", 3, Some("call"));
        add(EdgeKind::Calls, "a.py::h", "a.py::f", 4, None);
        let edges = share_ids(&mut [], table);
        let listed: Vec<(EdgeKind, &str, &str, &[u32], usize)> = edges
            .iter()
            .map(|e| (e.kind, &*e.src, &*e.dst, &*e.lines, e.reasons.len()))
            .collect();
        let mut expected = vec![
            (EdgeKind::Calls, "a.py::h", "a.py::f", &[4][..], 0),
            (EdgeKind::Calls, "a.py::h", "b.py::g", &[3][..], 1),
            (EdgeKind::Calls, "b.py::g", "a.py::f", &[2, 9][..], 0),
            (EdgeKind::Imports, "b.py", "a.py", &[1][..], 0),
        ];
        expected.sort_by_key(|&(kind, src, dst, _, _)| (kind, src, dst));
        assert_eq!(listed, expected);
        // An id is one allocation however many edges end at it.
        let from_g = edges.iter().find(|e| &*e.src == "b.py::g").unwrap();
        let into_g = edges.iter().find(|e| &*e.dst == "b.py::g").unwrap();
        assert!(std::sync::Arc::ptr_eq(&from_g.src, &into_g.dst));
    }

    #[test]
    fn a_receiver_is_told_by_its_last_part() {
        for (receiver, tail) in [
            ("qs", "qs"),
            ("self.root_queryset", "root_queryset"),
            ("queryset.order_by(\"pk\")", "order_by()"),
            ("queryset.filter(a=b.c).exclude(x=y.z)", "exclude()"),
            ("self.items[0]", "items"),
            ("Store::open()", "open()"),
            ("$this->repo", "repo"),
            ("get_queryset()", "get_queryset()"),
            ("(a or b)", ""),
        ] {
            assert_eq!(receiver_tail(receiver), tail, "{receiver}");
        }
    }

    #[test]
    fn a_type_is_generic_by_its_own_parameters_not_its_bases() {
        assert!(is_generic(
            "public sealed class Builder<TResult> : BuilderBase",
            "Builder"
        ));
        assert!(is_generic("class Options <T>", "Options"));
        assert!(!is_generic(
            "public class Options : Options<object>",
            "Options"
        ));
        assert!(!is_generic(
            "public class Builder : MyBuilder<int>",
            "Builder"
        ));
        assert!(!is_generic("public class Store", "Store"));
    }

    #[test]
    fn a_generic_name_is_the_type_with_as_many_parameters() {
        assert_eq!(type_arity("Builder<int>"), 1);
        assert_eq!(type_arity("Builder<Map<int, string>, int>"), 2);
        assert_eq!(type_parameters("class Pair<K, V", "Pair"), Some(2));
        let two = "public class PipelineBuilder<TKey, TValue> : Builder<TKey>";
        assert_eq!(type_parameters(two, "PipelineBuilder"), Some(2));
        assert_eq!(
            type_parameters("class Builder : Base<int>", "Builder"),
            None
        );
    }
}
