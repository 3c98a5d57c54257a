//! Pure extraction: source text in, symbols, imports, calls, bases and state writes out, driven
//! by a language's queries. Never fails: what could not be read is reported as a diagnostic.

use crate::tokens::truncate;
use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, QueryCursor, Tree};

use crate::languages::{Language, Queries, QueryKind};

/// A name of an extraction (a symbol's, a module's, a receiver or type as written), interned:
/// one copy per process of each distinct name, held as a pointer. Across a large repository
/// the extractions hold millions of names, resident in the daemon, and most repeat from file
/// to file (`self`, `get`, `str`, a module imported everywhere). Interned names are never
/// freed: a long-lived daemon keeps the few new ones each edit brings.
pub type Text = ustr::Ustr;

/// The interned name equal to `name`, if there is one: a name no extraction holds is in no
/// table keyed by names, and looking it up interns nothing.
pub fn interned(name: &str) -> Option<Text> {
    Text::from_existing(name)
}

/// A symbol's index as the records of calls, imports, writes and bindings hold it: 4 bytes,
/// not 8 (millions of them stay resident in the daemon; a file has far fewer symbols).
pub type At = u32;

/// A record's symbol index as an index into the file's symbols.
pub fn widen(at: Option<At>) -> Option<usize> {
    at.map(|s| s as usize)
}

/// A symbol index as a record holds it.
fn narrow(at: Option<usize>) -> Option<At> {
    at.map(|s| s as At)
}

/// Text kept as written and not interned, because it is mostly unique (signatures, docs): a
/// short one inline (up to 24 bytes), a longer one in an allocation of its own.
pub type Verbatim = compact_str::CompactString;

/// What kind of definition a symbol is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, PartialOrd, Ord)]
#[serde(rename_all = "snake_case")]
pub enum SymbolKind {
    Class,
    Function,
    Method,
    Interface,
    Type,
    Enum,
    Constant,
}

impl SymbolKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Class => "class",
            SymbolKind::Function => "function",
            SymbolKind::Method => "method",
            SymbolKind::Interface => "interface",
            SymbolKind::Type => "type",
            SymbolKind::Enum => "enum",
            SymbolKind::Constant => "constant",
        }
    }

    pub fn is_class_like(self) -> bool {
        matches!(self, SymbolKind::Class | SymbolKind::Interface)
    }

    pub fn is_callable(self) -> bool {
        matches!(self, SymbolKind::Function | SymbolKind::Method)
    }
}

/// A definition with its place in the file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Symbol {
    pub kind: SymbolKind,
    pub name: Text,
    /// Dotted path inside the file: `Class.method`; unique within the file.
    pub qualname: Text,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Verbatim,
    pub doc: Option<Verbatim>,
    /// Index of the enclosing symbol, or of the type a method is declared for elsewhere in
    /// the file (see [`Receiver`]).
    pub parent: Option<usize>,
    /// A method declared outside its type's body: the type and the receiver's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub receiver: Option<Box<Receiver>>,
}

/// The type a method is declared for outside the type's body (Go's `func (s *Server) Handle`):
/// the method is `Server.Handle`, attached to `Server` wherever it is defined (the parent when
/// in the same file; the graph finds it in the package otherwise).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Receiver {
    /// The type's name, without pointer or type arguments.
    pub type_name: Text,
    /// The name the receiver is bound to in the method (`s`): it acts as `self` there.
    pub name: Option<Text>,
}

/// One imported binding (or a whole-module import).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Import {
    pub line: u32,
    /// Innermost symbol the import statement stands in (imports inside functions).
    pub scope: Option<At>,
    /// The module as written: `a.b`, `..pkg` (Python), `./x`, `@/lib/y` (TypeScript).
    pub module: Text,
    /// Imported name (`from m import name`, `import { name } from`), if any.
    pub name: Option<Text>,
    pub alias: Option<Text>,
    /// `import X from` / `X = require(...)`.
    pub default: Option<Text>,
    /// `import * as ns from` / `export * as ns from`.
    pub namespace: Option<Text>,
    /// `from m import *` / `export * from`.
    pub wildcard: bool,
    /// `export … from`: the names become part of this module.
    pub reexport: bool,
    /// `import a.b` in Python: binds `a` (or the alias) to the module.
    pub whole_module: bool,
    /// C#'s `global using A.B;`: an import of every file of the project.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub global: bool,
}

/// A call site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub line: u32,
    pub scope: Option<At>,
    pub name: Text,
    /// The expression before the last dot, as written (`self`, `os.path`, `this.repo`).
    pub receiver: Option<Text>,
    pub is_new: bool,
    /// A bare name that may be a local as well as a call (Ruby's `headers`): a call only where
    /// no local of that name is bound in sight.
    #[serde(default)]
    pub bare: bool,
}

/// A base class (or implemented interface) of a class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Base {
    pub class: usize,
    pub expr: Text,
}

/// A write to instance or module state outside a constructor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mutation {
    pub line: u32,
    pub scope: Option<At>,
    pub target: Text,
}

/// What a name is known to hold, as written where it is bound.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(tag = "kind", content = "expr", rename_all = "snake_case")]
pub enum Held {
    /// An instance of a declared type: a dotted class expression (`x: Store`, `-> Store`).
    Declared(Text),
    /// What calling a dotted expression returns (`x = Store()`, `x = make()`, `new Store()`).
    Returned(Text),
    /// Whatever a dotted expression holds (`self.app = app`, `factory = Store`).
    Same(Text),
    /// A value of the language's own types: a literal (`[]`, `{}`, `"…"`).
    Builtin,
    /// What the test fixture of this name gives: a test's or a fixture's parameter, which the
    /// test runner fills by name (pytest's fixtures, from the file or a `conftest.py` above).
    Fixture(Text),
    /// Something cairn does not follow (a loop variable, `a or b`, an untyped parameter): the
    /// name's type is unknown, whatever other bindings say.
    #[default]
    Unknown,
}

/// A binding of a name: what it is known to hold.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeHint {
    /// Innermost symbol the name belongs to (for attributes: the class; none for an attribute
    /// assigned on something other than `self`).
    pub scope: Option<At>,
    /// Innermost symbol the binding is written in (`self.x = app` in `__init__`: `__init__`).
    pub at: Option<At>,
    pub name: Text,
    /// Absent from the records of extractor versions before 2, which load (as unknown) so
    /// their files are found stale by [`VERSION`] and parsed again.
    #[serde(default)]
    pub held: Held,
    /// An attribute of instances (`self.x`, `this.x`, a class field), not a local name.
    pub attribute: bool,
}

/// The declared return type of a function: a dotted class expression.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Returns {
    pub symbol: usize,
    pub class: Text,
    /// A property: reading the attribute calls the function.
    #[serde(default)]
    pub property: bool,
    /// The type carrying the class, where the function returns one (Rust's `Result` of
    /// `Result<Store, Error>`): its methods are the language's, unwrapping gives the class.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carrier: Option<Text>,
}

/// What a function without a declared return type returns, as its `return` statements
/// write it (`return None` and a bare `return` aside: an optional value has no type of its
/// own). A function that yields, or an `async` one, has none.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Returned {
    pub symbol: usize,
    pub values: Vec<Held>,
    /// A property: reading the attribute calls the function.
    #[serde(default)]
    pub property: bool,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileExtract {
    pub lines: u32,
    #[serde(deserialize_with = "fitted")]
    pub symbols: Vec<Symbol>,
    #[serde(deserialize_with = "fitted")]
    pub imports: Vec<Import>,
    #[serde(deserialize_with = "fitted")]
    pub calls: Vec<Call>,
    #[serde(deserialize_with = "fitted")]
    pub bases: Vec<Base>,
    #[serde(deserialize_with = "fitted")]
    pub mutations: Vec<Mutation>,
    #[serde(default, deserialize_with = "fitted")]
    pub types: Vec<TypeHint>,
    #[serde(default, deserialize_with = "fitted")]
    pub returns: Vec<Returns>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "fitted"
    )]
    pub returned: Vec<Returned>,
    /// The packages or namespaces the file declares (`package a.b;`, `namespace A.B`), in
    /// source order: where its top-level definitions live for a module system that indexes
    /// files by declaration.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub packages: Vec<String>,
    /// Types declared in parts that other files may continue (C#'s `partial class`): indexes
    /// into `symbols`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<usize>,
    /// Functions declared test fixtures (pytest's `@fixture`), ascending: indexes into
    /// `symbols`. A fixture that yields gives what it yields.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fixtures: Vec<usize>,
    /// The fixtures tests and fixtures take by parameter name, which the runner calls for
    /// them: (the function, the name), ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub takes: Vec<(usize, Text)>,
    /// Extension methods (C#'s `static string Label(this Store s)`): the method and the type
    /// its first parameter extends as written (`Store`, `IEnumerable<T>`), ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extensions: Vec<(usize, Text)>,
    /// The [`VERSION`] of the extractor that made this: other versions are re-parsed.
    #[serde(default)]
    pub version: u32,
    /// Problems met while reading the file (syntax errors), one line each.
    pub diagnostics: Vec<String>,
}

impl FileExtract {
    /// Gives back the room the record lists grew into but do not use: the daemon keeps
    /// every file's extraction for as long as it runs.
    fn fit(&mut self) {
        self.symbols.shrink_to_fit();
        self.imports.shrink_to_fit();
        self.calls.shrink_to_fit();
        self.bases.shrink_to_fit();
        self.mutations.shrink_to_fit();
        self.types.shrink_to_fit();
        self.returns.shrink_to_fit();
        self.returned.shrink_to_fit();
    }
}

/// A list read back without room to spare (see [`FileExtract::fit`]): read lists grow by
/// doubling, as their length is not known ahead.
fn fitted<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut list = Vec::<T>::deserialize(deserializer)?;
    list.shrink_to_fit();
    Ok(list)
}

/// Version of what extraction produces; a parse cache made by another version is stale.
pub const VERSION: u32 = 16;

const MAX_SIGNATURE: usize = 160;
const MAX_DOC: usize = 120;
const MAX_RECEIVER: usize = 80;

thread_local! {
    static PARSERS: RefCell<HashMap<String, Parser>> = RefCell::new(HashMap::new());
}

/// Extracts a file's structure. Syntax errors are reported in `diagnostics`; what parsed is kept.
pub fn extract(language: &Language, source: &str) -> FileExtract {
    let Some(tree) = parse(language, source) else {
        return FileExtract {
            diagnostics: vec!["the parser gave up on this file".to_string()],
            ..FileExtract::default()
        };
    };
    let matches = all_matches(language.queries(), &tree, source);
    Extractor::new(language, source, &tree, matches).run()
}

/// The syntax tree of a source, by the thread's parser for the language.
fn parse(language: &Language, source: &str) -> Option<Tree> {
    PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers
            .entry(language.spec.name.clone())
            .or_insert_with(|| {
                let mut parser = Parser::new();
                parser
                    .set_language(&language.grammar)
                    .expect("grammar matches the tree-sitter version");
                parser
            });
        parser.parse(source, None)
    })
}

/// Where a snippet parsed on its own (a macro's arguments) stands in its file: the byte and
/// the line its first character is at.
#[derive(Clone, Copy)]
struct Snippet {
    start: usize,
    line: u32,
}

struct Definition {
    start_byte: usize,
    end_byte: usize,
    name_start: usize,
    symbol: Symbol,
}

/// `*Server`, `Server[T]`, `&mut Server<T>`, `pkg.Server` -> `Server`.
fn receiver_type(text: &str) -> Option<String> {
    // `mut` is a keyword only before a space: `*mutexMap` is a type named mutexMap.
    let text = text.trim().trim_start_matches(['*', '&']).trim_start();
    let text = text.strip_prefix("mut ").unwrap_or(text);
    let text: String = text.split_whitespace().collect();
    let text = text.split(['[', '<']).next().unwrap_or_default();
    let name = text.rsplit(['.', ':']).next().unwrap_or_default();
    is_dotted_name(name).then(|| name.to_string())
}

/// One match's captures, by capture name.
type Captures<'a> = Vec<(&'a str, Node<'a>)>;

/// The matches of a language's queries over one tree, by kind (in [`QueryKind::ALL`] order),
/// each kind's in the order its own query would give them.
type Matches<'a> = [Vec<Captures<'a>>; 6];

/// Walks the tree once with the language's queries as one and sorts the matches by kind.
fn all_matches<'a>(queries: &'a Queries, tree: &'a Tree, source: &'a str) -> Matches<'a> {
    let names = queries.all.capture_names();
    let mut matches: Matches<'a> = Default::default();
    let mut cursor = QueryCursor::new();
    let mut found = cursor.matches(&queries.all, tree.root_node(), source.as_bytes());
    while let Some(m) = found.next() {
        let kind = queries.kind_of(m.pattern_index);
        matches[kind as usize].push(
            m.captures()
                .iter()
                .map(|c| (names[c.index as usize], c.node))
                .collect(),
        );
    }
    matches
}

struct Extractor<'a> {
    language: &'a Language,
    source: &'a str,
    tree: &'a Tree,
    /// What the queries matched.
    matches: Matches<'a>,
    /// The bytes of each definition, sorted by start, parallel to `out.symbols`.
    spans: Vec<std::ops::Range<usize>>,
    name_starts: HashMap<usize, usize>,
    out: FileExtract,
}

impl<'a> Extractor<'a> {
    fn new(language: &'a Language, source: &'a str, tree: &'a Tree, matches: Matches<'a>) -> Self {
        Extractor {
            language,
            source,
            tree,
            matches,
            spans: Vec::new(),
            name_starts: HashMap::new(),
            out: FileExtract {
                lines: source.lines().count() as u32,
                version: VERSION,
                ..FileExtract::default()
            },
        }
    }

    fn run(mut self) -> FileExtract {
        self.report_syntax_errors();
        self.definitions();
        self.imports();
        self.calls();
        self.bases();
        self.mutations();
        self.types();
        self.drop_bare_locals();
        self.out.fit();
        self.out
    }

    /// A bare name bound as a local of its own scope reads the local: no call. (One bound in
    /// an enclosing scope is left for the graph, which sees every scope, to tell.)
    fn drop_bare_locals(&mut self) {
        let out = &mut self.out;
        let locals: std::collections::HashSet<(Option<usize>, &str)> = out
            .types
            .iter()
            .filter(|hint| !hint.attribute)
            .map(|hint| (widen(hint.scope), hint.name.as_str()))
            .collect();
        out.calls.retain(|call| {
            !(call.bare && locals.contains(&(widen(call.scope), call.name.as_str())))
        });
    }

    fn text(&self, node: Node) -> &'a str {
        &self.source[node.byte_range()]
    }

    fn report_syntax_errors(&mut self) {
        let root = self.tree.root_node();
        if !root.has_error() {
            return;
        }
        let mut lines = Vec::new();
        collect_error_lines(root, &mut lines);
        lines.dedup();
        if lines.is_empty() {
            self.out.diagnostics.push("syntax errors".to_string());
            return;
        }
        let shown: Vec<String> = lines.iter().take(5).map(u32::to_string).collect();
        self.out.diagnostics.push(format!(
            "syntax errors at line{} {}{}",
            if lines.len() == 1 { "" } else { "s" },
            shown.join(", "),
            if lines.len() > 5 { ", …" } else { "" }
        ));
    }

    /// Hands each match of a kind of query, its captures by capture name, to `each`.
    fn for_each_match(&self, kind: QueryKind, mut each: impl FnMut(&HashMap<&str, Node<'a>>)) {
        let mut captures: HashMap<&str, Node<'a>> = HashMap::new();
        for m in &self.matches[kind as usize] {
            captures.clear();
            captures.extend(m.iter().copied());
            each(&captures);
        }
    }

    fn definitions(&mut self) {
        let mut found: Vec<Definition> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut partial = std::collections::HashSet::new();
        self.for_each_match(QueryKind::Definitions, |captures| {
            let Some((kind, node)) = captures
                .iter()
                .find_map(|(name, node)| definition_kind(name).map(|kind| (kind, *node)))
            else {
                return;
            };
            if captures.contains_key("partial") {
                partial.insert(node.start_byte());
            }
            let Some(name) = captures.get("name") else {
                return;
            };
            if !seen.insert(node.start_byte()) {
                return;
            }
            let body_start = captures
                .get("body")
                .map_or(node.end_byte(), |b| b.start_byte());
            found.push(Definition {
                start_byte: node.start_byte(),
                end_byte: node.end_byte(),
                name_start: name.start_byte(),
                symbol: Symbol {
                    kind,
                    // A symbol literal names without its colon (Ruby's `attr_reader :name`).
                    name: self.text(*name).trim_start_matches(':').into(),
                    qualname: Text::default(),
                    start_line: node.start_position().row as u32 + 1,
                    end_line: node.end_position().row as u32 + 1,
                    signature: signature(&self.source[node.start_byte()..body_start]).into(),
                    doc: captures
                        .get("doc")
                        .and_then(|d| first_doc_line(self.text(*d)))
                        .map(Verbatim::from),
                    parent: None,
                    receiver: captures
                        .get("receiver")
                        .and_then(|r| receiver_type(self.text(*r)))
                        .map(|type_name| {
                            Box::new(Receiver {
                                type_name: type_name.into(),
                                name: captures.get("receiver.self").map(|n| self.text(*n).into()),
                            })
                        }),
                },
            });
        });
        found.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
        let mut stack: Vec<usize> = Vec::new();
        for (index, mut definition) in found.into_iter().enumerate() {
            while let Some(&top) = stack.last() {
                if self.spans[top].end >= definition.end_byte {
                    break;
                }
                stack.pop();
            }
            definition.symbol.parent = stack.last().copied();
            self.spans.push(definition.start_byte..definition.end_byte);
            self.name_starts.insert(definition.name_start, index);
            self.out.symbols.push(definition.symbol);
            stack.push(index);
        }
        self.out.parts = (0..self.spans.len())
            .filter(|&i| partial.contains(&self.spans[i].start))
            .collect();
        self.attach_receivers();
        self.qualify();
    }

    /// Methods declared for a type outside its body become its methods: their parent is the
    /// file's top-level type of that name, if the file has it.
    fn attach_receivers(&mut self) {
        let types: HashMap<Text, usize> = self
            .out
            .symbols
            .iter()
            .enumerate()
            .rev()
            .filter(|(_, s)| s.parent.is_none() && s.kind.is_class_like())
            .map(|(i, s)| (s.name, i))
            .collect();
        for symbol in &mut self.out.symbols {
            let Some(receiver) = &symbol.receiver else {
                continue;
            };
            if symbol.kind == SymbolKind::Function {
                symbol.kind = SymbolKind::Method;
            }
            if symbol.parent.is_none() {
                symbol.parent = types.get(&receiver.type_name).copied();
            }
        }
    }

    /// Qualified names: `Parent.name` (a method of another file's type: `Type.name`), with
    /// `#2`, `#3` on repeats, in source order; a type a method is attached to may come after
    /// the method, and is named first.
    fn qualify(&mut self) {
        let mut qualnames: HashMap<String, u32> = HashMap::new();
        let mut named = vec![false; self.out.symbols.len()];
        for index in 0..self.out.symbols.len() {
            let mut chain = vec![index];
            while let Some(p) = self.out.symbols[*chain.last().expect("not empty")].parent
                && !named[p]
                && !chain.contains(&p)
            {
                chain.push(p);
            }
            for &i in chain.iter().rev() {
                if !named[i] {
                    self.qualify_one(i, &mut qualnames);
                    named[i] = true;
                }
            }
        }
    }

    fn qualify_one(&mut self, index: usize, qualnames: &mut HashMap<String, u32>) {
        let symbol = &self.out.symbols[index];
        let mut qualname = match (symbol.parent, &symbol.receiver) {
            (Some(p), _) => format!("{}.{}", self.out.symbols[p].qualname, symbol.name),
            (None, Some(receiver)) => format!("{}.{}", receiver.type_name, symbol.name),
            (None, None) => symbol.name.to_string(),
        };
        let is_method = symbol.kind == SymbolKind::Function
            && symbol
                .parent
                .is_some_and(|p| self.out.symbols[p].kind.is_class_like());
        let occurrences = qualnames.entry(qualname.clone()).or_insert(0);
        *occurrences += 1;
        if *occurrences > 1 {
            qualname = format!("{qualname}#{occurrences}");
        }
        let symbol = &mut self.out.symbols[index];
        symbol.qualname = qualname.into();
        if is_method {
            symbol.kind = SymbolKind::Method;
        }
    }

    /// Whether a name is `self` in a scope: one of the language's self names, or the receiver
    /// name of an enclosing method declared outside its type.
    fn is_self_at(&self, name: &str, scope: Option<usize>) -> bool {
        if self.language.spec.self_names.iter().any(|s| s == name) {
            return true;
        }
        let mut current = scope;
        while let Some(s) = current {
            let symbol = &self.out.symbols[s];
            if symbol
                .receiver
                .as_ref()
                .and_then(|r| r.name.as_deref())
                .is_some_and(|n| n == name)
            {
                return true;
            }
            current = symbol.parent;
        }
        false
    }

    /// A name or member access as a dotted name: the language's separators (PHP's `\`, `->`,
    /// `::`) read as `.`, a leading one (PHP's fully qualified `\App\User`) dropped, a member
    /// prefix read as a member of `self` (Ruby's `@store.get` is `self.@store.get`), so the graph
    /// resolves every language's names alike.
    fn dotted<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if let (Some(prefix), Some(this)) = (
            &self.language.spec.member_prefix,
            self.language.spec.self_names.first(),
        ) && text.starts_with(prefix.as_str())
        {
            return Cow::Owned(format!(
                "{this}.{}",
                dotted(text, &self.language.spec.separators)
            ));
        }
        dotted(text, &self.language.spec.separators)
    }

    /// Innermost definition containing a byte offset.
    fn scope_at(&self, byte: usize) -> Option<usize> {
        let end = self.spans.partition_point(|span| span.start <= byte);
        (0..end).rev().find(|&i| self.spans[i].end > byte)
    }

    fn line(node: Node) -> u32 {
        node.start_position().row as u32 + 1
    }

    fn imports(&mut self) {
        let mut imports = Vec::new();
        let mut packages = Vec::new();
        self.for_each_match(QueryKind::Imports, |c| {
            if let Some(package) = c.get("package") {
                let name: String = self.text(*package).split_whitespace().collect();
                packages.push(self.dotted(&name).into_owned());
                return;
            }
            let Some(statement) = c.get("import") else {
                return;
            };
            let item = ["import.name", "import.self", "import.wildcard"]
                .iter()
                .find_map(|key| c.get(key));
            let text = |key: &str| c.get(key).map(|n| self.dotted(self.text(*n)).into_owned());
            let (module, whole_module) = if let Some(module) = text("import.module") {
                (module, true)
            } else if let Some(from) = text("import.from").or_else(|| text("import.source")) {
                (from, false)
            } else if let (Some(group), Some(item)) = (c.get("import.group"), item)
                // A query that captured the item before its group's start gives no import.
                && let Some(lead) = self.source.get(group.start_byte()..item.start_byte())
            {
                let path = grouped_path(lead, &self.language.spec.separators);
                (path, c.contains_key("import.self"))
            } else {
                return;
            };
            let whole_module = whole_module && text("import.name").is_none();
            imports.push(Import {
                line: Self::line(*statement),
                scope: narrow(self.scope_at(statement.start_byte())),
                module: module.into(),
                name: text("import.name").as_deref().map(Text::from),
                alias: text("import.alias").as_deref().map(Text::from),
                default: text("import.default").as_deref().map(Text::from),
                namespace: text("import.namespace").as_deref().map(Text::from),
                wildcard: c.contains_key("import.wildcard"),
                reexport: c.contains_key("import.reexport"),
                whole_module,
                global: c.contains_key("import.global"),
            });
        });
        imports.dedup();
        self.out.imports = imports;
        self.out.packages = packages;
    }

    fn calls(&mut self) {
        let mut calls = Vec::new();
        let mut arguments = Vec::new();
        self.for_each_match(QueryKind::Calls, |c| {
            if let Some(tokens) = c.get("call.macro_arguments") {
                arguments.push(*tokens);
                return;
            }
            let (Some(call), Some(_)) = (c.get("call"), c.get("call.name")) else {
                return;
            };
            let bare = c.contains_key("call.bare");
            if bare && !self.reads_as_value(*call, c.get("call.parent").copied()) {
                return;
            }
            let text = |node: Node| self.text(node);
            calls.push(self.call(c, text, Self::line(*call), call.start_byte()));
        });
        if !arguments.is_empty() {
            for tokens in arguments {
                let at = Snippet {
                    start: tokens.start_byte(),
                    line: Self::line(tokens),
                };
                self.calls_in_arguments(self.text(tokens), at, 0, &mut calls);
            }
            // The arguments' calls among the others, by line.
            calls.sort_by_key(|call| call.line);
        }
        self.out.calls = calls;
    }

    /// A call as a match of the calls query captures it, its nodes' text read by `text`, at
    /// `line` and the byte `start` of the file.
    fn call<'n>(
        &self,
        c: &HashMap<&str, Node<'n>>,
        text: impl Fn(Node<'n>) -> &'n str,
        line: u32,
        start: usize,
    ) -> Call {
        let receiver = c.get("call.receiver").map(|r| {
            // Measured without the layout: a builder chain is written one call a line.
            // Collected only up to the bound: a long chain's receivers would copy it whole
            // at every call.
            let written: String = without_layout(text(*r)).take(MAX_RECEIVER + 1).collect();
            if written.len() > MAX_RECEIVER {
                // Kept: the first character, which tells a long string literal apart.
                written.chars().take(1).chain(['…']).collect()
            } else {
                let written = self.dotted(&written).into_owned();
                if self.language.spec.super_names.contains(&written) {
                    "super".to_string()
                } else {
                    written
                }
            }
        });
        Call {
            line,
            scope: narrow(self.scope_at(start)),
            name: text(c["call.name"]).into(),
            receiver: receiver.as_deref().map(Text::from),
            is_new: c.contains_key("call.new"),
            bare: c.contains_key("call.bare"),
        }
    }

    /// The calls written in a macro's arguments (Rust's `assert_eq!(parse(x), …)`), which the
    /// grammar keeps as tokens: the arguments are parsed on their own as one call's, at the
    /// place they stand in the file; macros in them are read the same way, a few deep.
    fn calls_in_arguments(&self, tokens: &str, at: Snippet, depth: usize, calls: &mut Vec<Call>) {
        const DEEPEST: usize = 3;
        const HEAD: &str = "fn _(){_";
        // Only a macro called with `(…)` or `[…]` takes expressions, and only one with a
        // parenthesis inside may call anything.
        let inner = tokens.get(1..tokens.len().saturating_sub(1)).unwrap_or("");
        if depth == DEEPEST
            || !(tokens.starts_with('(') && tokens.ends_with(')')
                || tokens.starts_with('[') && tokens.ends_with(']'))
            || !inner.contains('(')
        {
            return;
        }
        let snippet = format!("{HEAD}({inner});}}");
        let Some(tree) = parse(self.language, &snippet) else {
            return;
        };
        let matches = all_matches(self.language.queries(), &tree, &snippet);
        let mut captures: HashMap<&str, Node> = HashMap::new();
        let mut nested = Vec::new();
        for m in &matches[QueryKind::Calls as usize] {
            captures.clear();
            captures.extend(m.iter().copied());
            // The snippet's own head is no call of the file.
            let place = |node: Node| node.start_byte().checked_sub(HEAD.len());
            if let Some(tokens) = captures.get("call.macro_arguments") {
                if let Some(offset) = place(*tokens) {
                    let line = at.line + tokens.start_position().row as u32;
                    let start = at.start + offset;
                    nested.push((*tokens, Snippet { start, line }));
                }
                continue;
            }
            let (Some(call), Some(_)) = (captures.get("call"), captures.get("call.name")) else {
                continue;
            };
            let Some(offset) = place(*call) else {
                continue;
            };
            let line = at.line + call.start_position().row as u32;
            let text = |node: Node| &snippet[node.byte_range()];
            calls.push(self.call(&captures, text, line, at.start + offset));
        }
        for (tokens, at) in nested {
            self.calls_in_arguments(&snippet[tokens.byte_range()], at, depth + 1, calls);
        }
    }

    /// Whether a bare name stands where the language reads a value (`bare_calls_in`) in its
    /// parent (given, or looked up: a walk down from the root).
    fn reads_as_value(&self, node: Node, parent: Option<Node>) -> bool {
        let Some(parent) = parent.or_else(|| node.parent()) else {
            return false;
        };
        self.language
            .spec
            .bare_calls_in
            .iter()
            .any(|place| match place.split_once('.') {
                Some((kind, field)) => {
                    parent.kind() == kind
                        && parent
                            .child_by_field_name(field)
                            .is_some_and(|child| child.id() == node.id())
                }
                None => parent.kind() == place,
            })
    }

    fn bases(&mut self) {
        let mut bases = Vec::new();
        self.for_each_match(QueryKind::Inheritance, |c| {
            let (Some(class), Some(base)) = (c.get("class.name"), c.get("base")) else {
                return;
            };
            let Some(&index) = self.name_starts.get(&class.start_byte()) else {
                return;
            };
            let expr: String = self.text(*base).split_whitespace().collect();
            let expr = self.dotted(&expr);
            let expr = expr.split('<').next().unwrap_or_default().to_string();
            bases.push(Base {
                class: index,
                expr: expr.into(),
            });
        });
        self.out.bases = bases;
    }

    fn mutations(&mut self) {
        let mut mutations = Vec::new();
        self.for_each_match(QueryKind::Mutations, |c| {
            let (Some(write), Some(target)) = (c.get("mutation"), c.get("mutation.target")) else {
                return;
            };
            let scope = self.scope_at(write.start_byte());
            if let Some(receiver) = c.get("mutation.receiver")
                && !self.is_self_at(self.text(*receiver), scope)
            {
                return;
            }
            let in_constructor = scope.is_some_and(|s| self.is_constructor(s));
            if in_constructor {
                return;
            }
            mutations.push(Mutation {
                line: Self::line(*write),
                scope: narrow(scope),
                target: self.text(*target).into(),
            });
        });
        self.out.mutations = mutations;
    }
}

impl Extractor<'_> {
    /// Whether a symbol is a constructor: a method the language names so (`__init__`), or one
    /// named as its class or the type it is declared for (Java, C#, C++ out of line).
    fn is_constructor(&self, symbol: usize) -> bool {
        let symbol = &self.out.symbols[symbol];
        let class = match (&symbol.receiver, symbol.parent) {
            (Some(receiver), _) => Some(receiver.type_name.as_str()),
            (None, Some(p)) => Some(self.out.symbols[p].name.as_str()),
            (None, None) => None,
        };
        let constructors = &self.language.spec.constructors;
        symbol.kind == SymbolKind::Method
            && (constructors.iter().any(|c| *c == symbol.name)
                || class == Some(symbol.name.as_str()))
    }

    /// The nearest class enclosing a scope.
    fn class_of(&self, scope: Option<usize>) -> Option<usize> {
        let mut current = scope;
        while let Some(s) = current {
            if self.out.symbols[s].kind.is_class_like() {
                return Some(s);
            }
            current = self.out.symbols[s].parent;
        }
        None
    }

    /// Bindings of names and what they hold, and declared return types. One name node bound
    /// by several patterns keeps its most precise reading (a declaration over a value over
    /// nothing known).
    fn types(&mut self) {
        let mut hints: std::collections::BTreeMap<(usize, bool), (u8, TypeHint)> =
            Default::default();
        let mut returns: std::collections::BTreeMap<usize, Returns> = Default::default();
        let mut returned = Returning::default();
        self.for_each_match(QueryKind::Types, |c| {
            if let (Some(function), Some(annotation)) =
                (c.get("type.returns"), c.get("type.annotation"))
            {
                let written = self.text(*annotation);
                self.note_returns(c, *function, written, &mut returns);
                return;
            }
            if let (Some(function), Some(doc)) = (c.get("type.returns"), c.get("type.doc")) {
                if let Some(written) = doc_type(self.text(*doc), RETURN_TAGS, None) {
                    self.note_returns(c, *function, &written, &mut returns);
                }
                return;
            }
            if self.note_returned(c, &mut returned) {
                return;
            }
            let Some((byte, hint)) = self.binding(c) else {
                return;
            };
            if c.contains_key("type.fixture")
                && let Some(at) = widen(hint.at)
            {
                returned.takes.insert((at, hint.name));
            }
            // One reading per node and role (a TypeScript parameter property binds both a
            // parameter and an attribute).
            let rank = precision(&hint.held);
            match hints.entry((byte, hint.attribute)) {
                std::collections::btree_map::Entry::Vacant(entry) => {
                    entry.insert((rank, hint));
                }
                std::collections::btree_map::Entry::Occupied(mut kept) => {
                    if rank > kept.get().0 {
                        kept.insert((rank, hint));
                    }
                }
            }
        });
        let Returning {
            mut values,
            yields,
            mut yielded,
            properties,
            fixtures,
            parametrized,
            takes,
            extensions,
        } = returned;
        self.out.extensions = extensions.into_iter().collect();
        self.out.takes = takes.difference(&parametrized).cloned().collect();
        self.out.types = hints
            .into_values()
            .map(|(_, mut hint)| {
                if let (Held::Fixture(name), Some(at)) = (&hint.held, widen(hint.at))
                    && parametrized.contains(&(at, *name))
                {
                    hint.held = Held::Unknown;
                }
                hint
            })
            .collect();
        // A fixture that yields gives the test what it yields (its teardown follows), and the
        // runner awaits an `async` one: other generators and coroutines give nothing known.
        // Its declared type is the generator's (`Iterator[Client]`), read from its values.
        for fixture in &fixtures {
            if yields.contains(fixture) {
                values.insert(*fixture, yielded.remove(fixture).unwrap_or_default());
                returns.remove(fixture);
            }
        }
        self.out.returned = values
            .into_iter()
            .filter(|(symbol, _)| {
                let fixture = fixtures.contains(symbol);
                (fixture || !yields.contains(symbol))
                    && !returns.contains_key(symbol)
                    && (fixture || !is_async(&self.out.symbols[*symbol].signature))
            })
            .map(|(symbol, values)| Returned {
                symbol,
                values: values.into_values().collect(),
                property: properties.contains(&symbol),
            })
            // One value not followed leaves the result unknown, as no record does (but a
            // property's record says that reading it calls it).
            .filter(|r| r.property || !r.values.contains(&Held::Unknown))
            .collect();
        self.out.returns = returns.into_values().collect();
        self.out.fixtures = fixtures.into_iter().collect();
    }

    /// Notes what a `return` statement gives, that a function yields, or that a function
    /// with no declared return type is a property; says whether the match was one of those.
    fn note_returned(&self, c: &HashMap<&str, Node>, returned: &mut Returning) -> bool {
        let function_at = |node: &Node| {
            self.scope_at(node.start_byte())
                .filter(|&s| self.out.symbols[s].kind.is_callable())
        };
        let value = c
            .get("type.return_constructor")
            .or(c.get("type.return_value"));
        if let Some(value) = value {
            if let Some(symbol) = function_at(value) {
                let held = if c.contains_key("type.return_constructor") {
                    let text: String = self.text(*value).split_whitespace().collect();
                    let text = self.dotted(&text);
                    Some(if generic_path(&text).is_some() {
                        Held::Returned(text.into())
                    } else {
                        Held::Unknown
                    })
                } else {
                    self.value_held(*value)
                };
                // `return None` says nothing of the type. A return read by two patterns (the
                // class a `new` makes, the value as written) keeps its most precise reading.
                if let Some(held) = held {
                    let statement = c.get("type.return").unwrap_or(value);
                    let at = returned.values.entry(symbol).or_default();
                    let kept = at.entry(statement.start_byte()).or_insert(Held::Unknown);
                    if precision(&held) >= precision(kept) {
                        *kept = held;
                    }
                }
            }
            return true;
        }
        if let Some(point) = c.get("type.yield") {
            if let Some(symbol) = function_at(point) {
                returned.yields.insert(symbol);
                // `yield from` hands on another generator's values: unknown here.
                let from = self.text(*point).split_whitespace().nth(1) == Some("from");
                let held = match c.get("type.yield_value") {
                    Some(_) if from => Some(Held::Unknown),
                    Some(value) => self.value_held(*value),
                    None => None,
                };
                if let Some(held) = held {
                    let at = returned.yielded.entry(symbol).or_default();
                    at.insert(point.start_byte(), held);
                }
            }
            return true;
        }
        if let (Some(function), Some(names)) =
            (c.get("type.parametrized_in"), c.get("type.parametrized"))
        {
            if let Some(&symbol) = self.name_starts.get(&function.start_byte()) {
                let names = self
                    .text(*names)
                    .split(|c: char| c == ',' || c.is_whitespace() || "\"'[]()".contains(c));
                let names = names.filter(|n| !n.is_empty()).map(Text::from);
                returned.parametrized.extend(names.map(|n| (symbol, n)));
            }
            return true;
        }
        if let (Some(method), Some(extends)) = (c.get("type.extension"), c.get("type.extends")) {
            if let Some(&symbol) = self.name_starts.get(&method.start_byte()) {
                let extends: String = self.text(*extends).split_whitespace().collect();
                returned.extensions.insert((symbol, extends.into()));
            }
            return true;
        }
        if let Some(function) = c.get("type.fixture_def") {
            returned
                .fixtures
                .extend(self.name_starts.get(&function.start_byte()).copied());
            return true;
        }
        if let (Some(function), true) = (c.get("type.returns"), c.contains_key("type.property")) {
            returned
                .properties
                .extend(self.name_starts.get(&function.start_byte()).copied());
            return true;
        }
        false
    }

    /// What a returned or yielded value holds: a literal is a builtin value; none for a value
    /// with no type of its own (`None`).
    fn value_held(&self, value: Node) -> Option<Held> {
        if LITERALS.contains(&value.kind()) {
            Some(Held::Builtin)
        } else {
            value_of(&self.dotted(self.text(value)))
        }
    }

    /// Records the declared return type of the function named at `function`, if it is a plain
    /// class; a function read as a property by any pattern stays one.
    fn note_returns(
        &self,
        c: &HashMap<&str, Node>,
        function: Node,
        written: &str,
        returns: &mut std::collections::BTreeMap<usize, Returns>,
    ) {
        let (Some(&symbol), Some(class)) = (
            self.name_starts.get(&function.start_byte()),
            plain_type(&self.dotted(written)),
        ) else {
            return;
        };
        let property = c.contains_key("type.property");
        let carrier = c
            .get("type.carrier")
            .map(|w| Text::from(&self.dotted(self.text(*w))));
        let known = returns.entry(symbol).or_insert(Returns {
            symbol,
            class: class.into(),
            property,
            carrier,
        });
        known.property |= property;
    }

    /// The binding a `types` match makes, with the byte its reading is keyed by (the name's,
    /// or the receiver's for an attribute written on something other than `self`); none when
    /// the match binds no value.
    fn binding(&self, c: &HashMap<&str, Node>) -> Option<(usize, TypeHint)> {
        let name = *c.get("type.name")?;
        if c.contains_key("type.declared") {
            // A name declared where cairn reads no definitions (a function in a macro's
            // tokens): a member of some class, holding something unknown.
            let hint = TypeHint {
                scope: None,
                at: narrow(self.scope_at(name.start_byte())),
                name: self.text(name).into(),
                held: Held::Unknown,
                attribute: true,
            };
            return Some((name.start_byte(), hint));
        }
        // What makes the binding no value is checked before the value is read (a function
        // body can be long).
        if self.binds_no_value(c, name) {
            return None;
        }
        let held = self.held_by(c)?;
        let at = self.binding_at(name);
        if let Some(receiver) = c.get("type.receiver")
            && !self.is_self_at(self.text(*receiver), at)
        {
            // `other.x = …`: some class's attribute `x` is written from outside; which
            // class is unknown (a hint without a class, see `TypeHint::scope`).
            let hint = TypeHint {
                scope: None,
                at: narrow(at),
                name: self.text(name).into(),
                held: Held::Unknown,
                attribute: true,
            };
            return Some((receiver.start_byte(), hint));
        }
        let (scope, attribute) = self.binding_owner(c, at, &held)?;
        let hint = TypeHint {
            scope: narrow(scope),
            at: narrow(at),
            name: self.text(name).into(),
            held,
            attribute,
        };
        Some((name.start_byte(), hint))
    }

    /// Whether a match binds a name the code does not bind to a value: `self` and `cls` (bound
    /// by the language), or a name a definition holds (`const f = () => …` defines a function).
    fn binds_no_value(&self, c: &HashMap<&str, Node>, name: Node) -> bool {
        let is_self = self.is_self_at(self.text(name), self.scope_at(name.start_byte()));
        (is_self && !c.contains_key("type.receiver"))
            || self
                .name_starts
                .get(&name.start_byte())
                .is_some_and(|&s| self.out.symbols[s].kind.is_callable())
    }

    /// What a match's name holds, by the capture that says: a declared type, a constructor
    /// call, a value; none for a value with no type of its own (`None`).
    fn held_by(&self, c: &HashMap<&str, Node>) -> Option<Held> {
        if let Some(doc) = c.get("type.doc") {
            // A docblock's type for the name (`@param Store $store`, `@var Store`); one that
            // names none binds nothing here (the declaration's own pattern binds it).
            let name = c.get("type.name").map(|n| self.text(*n));
            let name = name.filter(|_| !c.contains_key("type.field"));
            let written = doc_type(self.text(*doc), VALUE_TAGS, name)?;
            let class = plain_type(&self.dotted(&written))?;
            return Some(Held::Declared(class.into()));
        }
        let held = if let Some(annotation) = c.get("type.annotation") {
            plain_type(&self.dotted(self.text(*annotation)))
                .map_or(Held::Unknown, |class| Held::Declared(class.into()))
        } else if let Some(constructor) = c.get("type.constructor") {
            let text: String = self.text(*constructor).split_whitespace().collect();
            let text = self.dotted(&text);
            if generic_path(&text).is_some() {
                Held::Returned(text.into())
            } else {
                Held::Unknown
            }
        } else if c.contains_key("type.fixture") {
            Held::Fixture(self.text(*c.get("type.name")?).into())
        } else if let Some(value) = c.get("type.value") {
            if LITERALS.contains(&value.kind()) {
                Held::Builtin
            } else {
                // `None`: an optional value, no type of its own.
                value_of(&self.dotted(self.text(*value)))?
            }
        } else {
            Held::Unknown
        };
        Some(held)
    }

    /// The symbol a binding is written in. A module constant's own name is in its span: the
    /// constant is not a scope.
    fn binding_at(&self, name: Node) -> Option<usize> {
        self.scope_at(name.start_byte())
            .and_then(|s| match self.out.symbols[s].kind {
                SymbolKind::Constant => self.out.symbols[s].parent,
                _ => Some(s),
            })
    }

    /// Whose name a binding written in `at` is, and whether it is an attribute of instances:
    /// none when an attribute has no class, or a class body binds something its instances
    /// may not read.
    fn binding_owner(
        &self,
        c: &HashMap<&str, Node>,
        at: Option<usize>,
        held: &Held,
    ) -> Option<(Option<usize>, bool)> {
        let in_class = at.is_some_and(|s| self.out.symbols[s].kind.is_class_like());
        let (scope, attribute) = if c.contains_key("type.receiver") || c.contains_key("type.field")
        {
            (self.class_of(at), true)
        } else if c.contains_key("type.global") {
            (None, false)
        } else if in_class {
            // A class body's annotation declares its instances' attribute, and a class
            // named there (`client_class = Client`) is what instances read; anything
            // else may be a descriptor, whose instances read something else (checked
            // when the name is resolved).
            if !matches!(held, Held::Declared(_) | Held::Same(_)) {
                return None;
            }
            (at, true)
        } else {
            (at, false)
        };
        if attribute && scope.is_none() {
            return None;
        }
        Some((scope, attribute))
    }
}

/// Whether a definition's signature declares it `async` (`async def`, `public async load(…)`):
/// calling it gives a promise or coroutine, not what it returns.
fn is_async(signature: &str) -> bool {
    let head = signature.split('(').next().unwrap_or(signature);
    head.split_whitespace().any(|word| word == "async")
}

/// What a file's functions return, gathered from its `return` statements and yields.
#[derive(Default)]
struct Returning {
    /// Each function's returned values, by the byte their statement starts at.
    values: std::collections::BTreeMap<usize, std::collections::BTreeMap<usize, Held>>,
    yields: std::collections::BTreeSet<usize>,
    /// Each generator's yielded values, by the byte their `yield` starts at (read for
    /// fixtures only).
    yielded: std::collections::BTreeMap<usize, std::collections::BTreeMap<usize, Held>>,
    properties: std::collections::BTreeSet<usize>,
    /// The functions declared test fixtures.
    fixtures: std::collections::BTreeSet<usize>,
    /// (function, parameter name) the runner fills from a list, not from a fixture.
    parametrized: std::collections::BTreeSet<(usize, Text)>,
    /// (function, parameter name) the runner fills from the fixture of that name.
    takes: std::collections::BTreeSet<(usize, Text)>,
    /// (method, the type it extends as written): extension methods.
    extensions: std::collections::BTreeSet<(usize, Text)>,
}

/// How precise a reading of a name is: a declaration over a value over nothing known.
fn precision(held: &Held) -> u8 {
    match held {
        Held::Declared(_) => 3,
        Held::Returned(_) | Held::Same(_) | Held::Builtin | Held::Fixture(_) => 2,
        Held::Unknown => 1,
    }
}

/// Node kinds of literals, across the grammars: values of the language's own types.
const LITERALS: &[&str] = &[
    "string",
    "concatenated_string",
    "template_string",
    "integer",
    "float",
    "number",
    "list",
    "dictionary",
    "set",
    "list_comprehension",
    "dictionary_comprehension",
    "set_comprehension",
    "array",
    "true",
    "false",
    "interpreted_string_literal",
    "raw_string_literal",
    "int_literal",
    "float_literal",
    "boolean",
    "encapsed_string",
    "string_literal",
    "integer_literal",
    "boolean_literal",
    "char_literal",
];

/// Whether an expression's text is a string, list or number literal as a whole (a string cut
/// short at `…` included).
pub fn is_literal(text: &str) -> bool {
    let body = text.trim_start_matches(|c: char| "rRbBuUfF".contains(c));
    let prefix = text.len() - body.len();
    match body.chars().next() {
        Some(quote @ ('"' | '\'' | '`')) => {
            prefix <= 2 && body.len() > 1 && (body.ends_with(quote) || body.ends_with('…'))
        }
        Some('[') if prefix == 0 => {
            let mut depth = 0usize;
            for (i, c) in body.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth = depth.saturating_sub(1);
                        if depth == 0 {
                            return i == body.len() - 1;
                        }
                    }
                    _ => {}
                }
            }
            false
        }
        Some('0'..='9') if prefix == 0 => body.chars().all(|c| c.is_ascii_digit() || c == '.'),
        _ => false,
    }
}

/// The parts of a dotted name whose parts may carry type arguments (`Policy<Result>.Handle`,
/// `A.B.Builder<int, string>`): split at the dots outside the arguments; `None` when the text
/// is no such name.
pub fn generic_path(text: &str) -> Option<Vec<&str>> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in text.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth = depth.checked_sub(1)?,
            '.' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            ',' | ' ' | '?' | '[' | ']' | '.' if depth > 0 => {}
            c if c.is_alphanumeric() || c == '_' || c == '$' || c == '@' => {}
            _ => return None,
        }
    }
    parts.push(&text[start..]);
    let well_formed = |part: &&str| {
        let name = part.split('<').next().unwrap_or_default();
        is_dotted_name(name) && (name.len() == part.len() || part.ends_with('>'))
    };
    (depth == 0 && parts.iter().all(well_formed)).then_some(parts)
}

/// A call's text with the type arguments of its methods left out (`Policy.Handle<E>()` ->
/// `Policy.Handle()`): they do not change which method is called. A constructed type's stay
/// (`new Builder<int>()` makes a `Builder<T>`, not a `Builder`), as do a type's before a dot.
pub fn without_method_type_arguments(expression: &str) -> std::borrow::Cow<'_, str> {
    if !expression.contains(">(") {
        return expression.into();
    }
    let mut out = String::with_capacity(expression.len());
    let mut rest = expression;
    while let Some(open) = rest.find('<') {
        let (before, from) = rest.split_at(open);
        out.push_str(before);
        let close = from
            .char_indices()
            .scan(0usize, |depth, (i, c)| {
                match c {
                    '<' => *depth += 1,
                    '>' => *depth -= 1,
                    _ => {}
                }
                Some((i, *depth))
            })
            .find(|&(_, depth)| depth == 0)
            .map(|(i, _)| i);
        let Some(close) = close else {
            out.push_str(from);
            return out.into();
        };
        let arguments = &from[..=close];
        let method_call = from[close + 1..].starts_with('(')
            && generic_path(&format!("T{arguments}")).is_some()
            && !constructed(&out);
        if !method_call {
            out.push_str(arguments);
        }
        rest = &from[close + 1..];
    }
    out.push_str(rest);
    out.into()
}

/// Whether the text so far ends with `new Name` (a constructed type's name).
fn constructed(before: &str) -> bool {
    let name_start = before
        .rfind(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .map_or(0, |i| i + 1);
    before[..name_start].ends_with("new ")
}

/// An expression's characters without its layout: whitespace goes, but one space stays
/// between two words (`new Store()`, not `newStore()`).
fn without_layout(text: &str) -> impl Iterator<Item = char> + '_ {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let mut last = None;
    text.split_whitespace().flat_map(move |token| {
        let gap = last.is_some_and(word) && token.starts_with(word);
        last = token.chars().next_back();
        gap.then_some(' ').into_iter().chain(token.chars())
    })
}

/// What an assigned value holds, from its text: a dotted name, one call of a dotted name, or
/// something else; `None` for a null literal.
fn value_of(text: &str) -> Option<Held> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if matches!(text.as_str(), "None" | "null" | "undefined") {
        return None;
    }
    let text = without_method_type_arguments(&text);
    Some(if is_dotted_name(&text) {
        Held::Same(text.into())
    } else if let Some(callee) = called(&text) {
        Held::Returned(callee.into())
    } else if chained_call(&text).is_some() || is_postfixed(&text) {
        // `a.b().c()`, `open()?`, `run().await`: followed as the expression.
        Held::Same(text.into())
    } else {
        Held::Unknown
    })
}

/// `Foo(…)` -> `Foo`: the dotted expression an expression calls, when it is one call.
pub fn called(expression: &str) -> Option<&str> {
    let open = expression.find('(')?;
    if !expression.ends_with(')') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in expression[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 && open + i != expression.len() - 1 {
                    return None;
                }
            }
            _ => {}
        }
    }
    let callee = &expression[..open];
    generic_path(callee).is_some().then_some(callee)
}

/// Whether an expression is a call followed by a postfix operator (Rust's `open()?`,
/// `run().await`), which the language's carriers say how to read.
fn is_postfixed(text: &str) -> bool {
    let call = text
        .strip_suffix('?')
        .or_else(|| text.strip_suffix(".await"))
        .unwrap_or(text);
    call.len() < text.len()
        && (called(call).is_some() || chained_call(call).is_some() || is_postfixed(call))
}

/// `a.b(…).c(…)` -> (`a.b(…)`, `c`): a method called on what a call gives (a builder chain).
pub fn chained_call(expression: &str) -> Option<(&str, &str)> {
    let body = expression.strip_suffix(')')?;
    let mut depth = 1usize;
    let mut open = None;
    for (i, c) in body.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    open = Some(i);
                    break;
                }
            }
            _ => {}
        }
    }
    let (head, method) = body[..open?].rsplit_once('.')?;
    let after_call = head.ends_with(')') || head.ends_with('?') || head.ends_with(".await");
    (after_call && is_dotted_name(method)).then_some((head, method))
}

/// A class name from an annotation: `Foo`, `pkg.Foo`, `"Foo"`, `Optional[Foo]`, `Foo | None`,
/// a pointer or reference `*Foo`, `&Foo`, a class with arguments in brackets (`list[Foo]`,
/// `Stack[T]`: what its head names decides); anything more complex is not a single class.
fn plain_type(annotation: &str) -> Option<String> {
    let mut text = annotation
        .trim()
        .trim_matches(|c| c == '"' || c == '\'')
        .trim_start_matches(['*', '&']);
    if let Some(inner) = text
        .strip_prefix("Optional[")
        .or_else(|| text.strip_prefix("typing.Optional["))
        .and_then(|t| t.strip_suffix(']'))
    {
        text = inner.trim();
    }
    if let Some((left, right)) = text.split_once('|') {
        match (left.trim(), right.trim()) {
            (t, "None") | ("None", t) => text = t,
            _ => return None,
        }
    }
    if let Some((head, arguments)) = text.split_once('[')
        && let Some(arguments) = arguments.strip_suffix(']')
        && !arguments.trim().is_empty()
        && is_dotted_name(head)
    {
        return Some(text.to_string());
    }
    generic_path(text).is_some().then(|| text.to_string())
}

/// Docblock tags that type a parameter, a variable or a property, and those that type what a
/// function returns (`@psalm-`/`@phpstan-` prefixed too).
const VALUE_TAGS: &[&str] = &["param", "var", "type"];
const RETURN_TAGS: &[&str] = &["return", "returns"];

/// The type a docblock (`/** @param Store $store */`, `@return Store`, `@var Store`, JSDoc's
/// `@param {Store} store`) gives one of `tags`, for the name `name` where the tag names one
/// (`$store`; a `@var` that names nothing types what it stands before). A union with `null`
/// is its other part; any other union, an array (`Store[]`) or a generic collection is no
/// single class: none.
fn doc_type(doc: &str, tags: &[&str], name: Option<&str>) -> Option<String> {
    for line in doc.lines() {
        let line = line
            .trim()
            .trim_start_matches("/**")
            .trim_start_matches('*')
            .trim();
        let Some(tagged) = line.strip_prefix('@') else {
            continue;
        };
        let (tag, rest) = tagged
            .split_once(char::is_whitespace)
            .unwrap_or((tagged, ""));
        let tag = tag
            .strip_prefix("psalm-")
            .or_else(|| tag.strip_prefix("phpstan-"))
            .unwrap_or(tag);
        if !tags.contains(&tag) {
            continue;
        }
        let rest = rest.trim().trim_end_matches("*/").trim();
        let (written, after) = match rest.strip_prefix('{') {
            Some(braced) => braced.split_once('}')?,
            None => rest.split_once(char::is_whitespace).unwrap_or((rest, "")),
        };
        // `$store`, `...$rest`; JSDoc's `store`, `[store]`, `[store=make()]`.
        let named = after
            .split_whitespace()
            .next()
            .filter(|n| n.starts_with('$') || (rest.starts_with('{') && !n.starts_with('-')))
            .map(|n| {
                let n = n.trim_start_matches('[').trim_start_matches("...");
                n.split(['=', ']']).next().unwrap_or(n)
            });
        match (name, named) {
            (Some(wanted), Some(named)) if named != wanted => continue,
            (Some(_), None) if tag == "param" => continue,
            _ => {}
        }
        return doc_class(written.trim());
    }
    None
}

/// A docblock's type as one class: `?Store`, `Store|null` -> `Store`; `$this` -> `static`.
fn doc_class(written: &str) -> Option<String> {
    let written = written.trim_start_matches('?');
    let mut parts = written.split('|').map(str::trim).filter(|p| {
        !matches!(
            p.to_ascii_lowercase().as_str(),
            "null" | "undefined" | "void"
        )
    });
    let class = parts.next()?;
    if parts.next().is_some() || class.ends_with("[]") || class.contains('<') {
        return None;
    }
    Some(if class == "$this" { "static" } else { class }.to_string())
}

/// The module of an item in a use tree, from the tree's start to the item (`a::{b::{c, `):
/// groups (`{`, `,`, `}`) collapse to the path that leads to the item, the language's
/// separators (`::`, `\\`) become dots (`a.b`).
fn grouped_path(text: &str, separators: &[String]) -> String {
    let mut open: Vec<String> = Vec::new();
    let mut path = String::new();
    for c in text.chars() {
        match c {
            '{' => open.push(path.clone()),
            ',' => path = open.last().cloned().unwrap_or_default(),
            '}' => {
                open.pop();
            }
            c if c.is_whitespace() => {}
            c => path.push(c),
        }
    }
    dotted(&path, separators).trim_matches('.').to_string()
}

/// A name with the language's separators read as `.`, leading ones dropped (PHP's fully
/// qualified `\App\User`, C++'s `::printf`).
fn dotted<'t>(text: &'t str, separators: &[String]) -> Cow<'t, str> {
    if !separators.iter().any(|s| text.contains(s.as_str())) {
        return Cow::Borrowed(text);
    }
    let mut text = text;
    while let Some(rest) = separators
        .iter()
        .find_map(|s| text.strip_prefix(s.as_str()))
    {
        text = rest;
    }
    let mut dotted = text.to_string();
    for separator in separators {
        dotted = dotted.replace(separator.as_str(), ".");
    }
    Cow::Owned(dotted)
}

/// `name` or `a.b.Name`: identifiers joined by dots, nothing else (`$x` and `@x` are
/// identifiers: PHP's variables, Ruby's instance variables).
pub fn is_dotted_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == '@')
        })
}

fn definition_kind(capture: &str) -> Option<SymbolKind> {
    Some(match capture.strip_prefix("definition.")? {
        "class" => SymbolKind::Class,
        "function" => SymbolKind::Function,
        "method" => SymbolKind::Method,
        "interface" => SymbolKind::Interface,
        "type" => SymbolKind::Type,
        "enum" => SymbolKind::Enum,
        "constant" => SymbolKind::Constant,
        _ => return None,
    })
}

fn collect_error_lines(node: Node, lines: &mut Vec<u32>) {
    if lines.len() > 50 {
        return;
    }
    if node.is_error() || node.is_missing() {
        lines.push(node.start_position().row as u32 + 1);
        return;
    }
    if !node.has_error() {
        return;
    }
    let mut cursor = node.walk();
    for child in node.children(&mut cursor) {
        collect_error_lines(child, lines);
    }
}

/// The header of a definition on one line, bounded.
fn signature(header: &str) -> String {
    let joined: String = header.split_whitespace().collect::<Vec<_>>().join(" ");
    let trimmed = joined
        .trim_end_matches([':', '{', ' ', '=', '>'])
        .trim_end();
    truncate(trimmed, MAX_SIGNATURE)
}

fn first_doc_line(doc: &str) -> Option<String> {
    let inner = doc
        .trim_start_matches(|c: char| "rRuUbBfF".contains(c))
        .trim_matches(|c| c == '"' || c == '\'');
    let line = inner.lines().map(str::trim).find(|l| !l.is_empty())?;
    Some(truncate(line, MAX_DOC))
}

#[cfg(test)]
mod tests;
