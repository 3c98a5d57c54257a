//! Pure extraction: source text in, symbols, imports, calls, bases and state writes out, driven
//! by a language's queries. Never fails: what could not be read is reported as a diagnostic.

use crate::tokens::truncate;
use std::cell::RefCell;
use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use streaming_iterator::StreamingIterator;
use tree_sitter::{Node, Parser, Query, QueryCursor, Tree};

use crate::languages::Language;

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
    pub name: String,
    /// Dotted path inside the file: `Class.method`; unique within the file.
    pub qualname: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: String,
    pub doc: Option<String>,
    /// Index of the enclosing symbol.
    pub parent: Option<usize>,
}

/// One imported binding (or a whole-module import).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Import {
    pub line: u32,
    /// Innermost symbol the import statement stands in (imports inside functions).
    pub scope: Option<usize>,
    /// The module as written: `a.b`, `..pkg` (Python), `./x`, `@/lib/y` (TypeScript).
    pub module: String,
    /// Imported name (`from m import name`, `import { name } from`), if any.
    pub name: Option<String>,
    pub alias: Option<String>,
    /// `import X from` / `X = require(...)`.
    pub default: Option<String>,
    /// `import * as ns from` / `export * as ns from`.
    pub namespace: Option<String>,
    /// `from m import *` / `export * from`.
    pub wildcard: bool,
    /// `export … from`: the names become part of this module.
    pub reexport: bool,
    /// `import a.b` in Python: binds `a` (or the alias) to the module.
    pub whole_module: bool,
}

/// A call site.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Call {
    pub line: u32,
    pub scope: Option<usize>,
    pub name: String,
    /// The expression before the last dot, as written (`self`, `os.path`, `this.repo`).
    pub receiver: Option<String>,
    pub is_new: bool,
}

/// A base class (or implemented interface) of a class.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Base {
    pub class: usize,
    pub expr: String,
}

/// A write to instance or module state outside a constructor.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Mutation {
    pub line: u32,
    pub scope: Option<usize>,
    pub target: String,
}

/// What a name is known to hold: a declared type or a constructed class, as written.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TypeHint {
    /// Innermost symbol the name belongs to (for attributes: the class).
    pub scope: Option<usize>,
    pub name: String,
    /// A dotted class expression (`Store`, `models.Model`).
    pub class: String,
    /// An attribute of instances (`self.x`, `this.x`, a class field), not a local name.
    pub attribute: bool,
}

/// Everything extracted from one file.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FileExtract {
    pub lines: u32,
    pub symbols: Vec<Symbol>,
    pub imports: Vec<Import>,
    pub calls: Vec<Call>,
    pub bases: Vec<Base>,
    pub mutations: Vec<Mutation>,
    #[serde(default)]
    pub types: Vec<TypeHint>,
    /// Problems met while reading the file (syntax errors), one line each.
    pub diagnostics: Vec<String>,
}

const MAX_SIGNATURE: usize = 160;
const MAX_DOC: usize = 120;
const MAX_RECEIVER: usize = 80;

thread_local! {
    static PARSERS: RefCell<HashMap<String, Parser>> = RefCell::new(HashMap::new());
}

/// Extracts a file's structure. Syntax errors are reported in `diagnostics`; what parsed is kept.
pub fn extract(language: &Language, source: &str) -> FileExtract {
    let tree = PARSERS.with(|parsers| {
        let mut parsers = parsers.borrow_mut();
        let parser = parsers.entry(language.name.clone()).or_insert_with(|| {
            let mut parser = Parser::new();
            parser
                .set_language(&language.grammar)
                .expect("grammar matches the tree-sitter version");
            parser
        });
        parser.parse(source, None)
    });
    let Some(tree) = tree else {
        return FileExtract {
            diagnostics: vec!["the parser gave up on this file".to_string()],
            ..FileExtract::default()
        };
    };
    Extractor::new(language, source, &tree).run()
}

struct Definition {
    start_byte: usize,
    end_byte: usize,
    name_start: usize,
    symbol: Symbol,
}

struct Extractor<'a> {
    language: &'a Language,
    source: &'a str,
    tree: &'a Tree,
    /// Definitions sorted by start byte, parallel to `out.symbols`.
    spans: Vec<(usize, usize)>,
    name_starts: HashMap<usize, usize>,
    out: FileExtract,
}

impl<'a> Extractor<'a> {
    fn new(language: &'a Language, source: &'a str, tree: &'a Tree) -> Self {
        Extractor {
            language,
            source,
            tree,
            spans: Vec::new(),
            name_starts: HashMap::new(),
            out: FileExtract {
                lines: source.lines().count() as u32,
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
        self.out
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

    /// Runs a query and hands each match's captures, by capture name, to `each`.
    fn for_each_match(&self, query: &Query, mut each: impl FnMut(&HashMap<&str, Node<'a>>)) {
        let names = query.capture_names();
        let mut cursor = QueryCursor::new();
        let mut matches = cursor.matches(query, self.tree.root_node(), self.source.as_bytes());
        let mut captures: HashMap<&str, Node<'a>> = HashMap::new();
        while let Some(m) = matches.next() {
            captures.clear();
            for capture in m.captures() {
                captures.insert(names[capture.index as usize], capture.node);
            }
            each(&captures);
        }
    }

    fn definitions(&mut self) {
        let mut found: Vec<Definition> = Vec::new();
        let mut seen = std::collections::HashSet::new();
        self.for_each_match(&self.language.queries.definitions, |captures| {
            let Some((kind, node)) = captures
                .iter()
                .find_map(|(name, node)| definition_kind(name).map(|kind| (kind, *node)))
            else {
                return;
            };
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
                    name: self.text(*name).to_string(),
                    qualname: String::new(),
                    start_line: node.start_position().row as u32 + 1,
                    end_line: node.end_position().row as u32 + 1,
                    signature: signature(&self.source[node.start_byte()..body_start]),
                    doc: captures
                        .get("doc")
                        .and_then(|d| first_doc_line(self.text(*d))),
                    parent: None,
                },
            });
        });
        found.sort_by_key(|d| (d.start_byte, std::cmp::Reverse(d.end_byte)));
        let mut stack: Vec<usize> = Vec::new();
        let mut qualnames: HashMap<String, u32> = HashMap::new();
        for (index, mut definition) in found.into_iter().enumerate() {
            while let Some(&top) = stack.last() {
                if self.spans[top].1 >= definition.end_byte {
                    break;
                }
                stack.pop();
            }
            let parent = stack.last().copied();
            let symbol = &mut definition.symbol;
            symbol.parent = parent;
            if let Some(p) = parent {
                let parent_symbol = &self.out.symbols[p];
                if symbol.kind == SymbolKind::Function && parent_symbol.kind.is_class_like() {
                    symbol.kind = SymbolKind::Method;
                }
                symbol.qualname = format!("{}.{}", parent_symbol.qualname, symbol.name);
            } else {
                symbol.qualname = symbol.name.clone();
            }
            let occurrences = qualnames.entry(symbol.qualname.clone()).or_insert(0);
            *occurrences += 1;
            if *occurrences > 1 {
                symbol.qualname = format!("{}#{}", symbol.qualname, occurrences);
            }
            self.spans
                .push((definition.start_byte, definition.end_byte));
            self.name_starts.insert(definition.name_start, index);
            self.out.symbols.push(definition.symbol);
            stack.push(index);
        }
    }

    /// Innermost definition containing a byte offset.
    fn scope_at(&self, byte: usize) -> Option<usize> {
        let end = self.spans.partition_point(|(start, _)| *start <= byte);
        (0..end).rev().find(|&i| self.spans[i].1 > byte)
    }

    fn line(node: Node) -> u32 {
        node.start_position().row as u32 + 1
    }

    fn imports(&mut self) {
        let mut imports = Vec::new();
        self.for_each_match(&self.language.queries.imports, |c| {
            let Some(statement) = c.get("import") else {
                return;
            };
            let text = |key: &str| c.get(key).map(|n| self.text(*n).to_string());
            let (module, whole_module) = if let Some(module) = text("import.module") {
                (module, true)
            } else if let Some(from) = text("import.from").or_else(|| text("import.source")) {
                (from, false)
            } else {
                return;
            };
            let whole_module = whole_module && text("import.name").is_none();
            imports.push(Import {
                line: Self::line(*statement),
                scope: self.scope_at(statement.start_byte()),
                module,
                name: text("import.name"),
                alias: text("import.alias"),
                default: text("import.default"),
                namespace: text("import.namespace"),
                wildcard: c.contains_key("import.wildcard"),
                reexport: c.contains_key("import.reexport"),
                whole_module,
            });
        });
        imports.dedup();
        self.out.imports = imports;
    }

    fn calls(&mut self) {
        let mut calls = Vec::new();
        self.for_each_match(&self.language.queries.calls, |c| {
            let (Some(call), Some(name)) = (c.get("call"), c.get("call.name")) else {
                return;
            };
            let receiver = c.get("call.receiver").map(|r| {
                let text = self.text(*r);
                if text.len() > MAX_RECEIVER {
                    "…".to_string()
                } else {
                    text.split_whitespace().collect()
                }
            });
            calls.push(Call {
                line: Self::line(*call),
                scope: self.scope_at(call.start_byte()),
                name: self.text(*name).to_string(),
                receiver,
                is_new: c.contains_key("call.new"),
            });
        });
        self.out.calls = calls;
    }

    fn bases(&mut self) {
        let mut bases = Vec::new();
        self.for_each_match(&self.language.queries.inheritance, |c| {
            let (Some(class), Some(base)) = (c.get("class.name"), c.get("base")) else {
                return;
            };
            let Some(&index) = self.name_starts.get(&class.start_byte()) else {
                return;
            };
            let expr: String = self.text(*base).split_whitespace().collect();
            let expr = expr.split('<').next().unwrap_or_default().to_string();
            bases.push(Base { class: index, expr });
        });
        self.out.bases = bases;
    }

    fn mutations(&mut self) {
        let mut mutations = Vec::new();
        self.for_each_match(&self.language.queries.mutations, |c| {
            let (Some(write), Some(target)) = (c.get("mutation"), c.get("mutation.target")) else {
                return;
            };
            if let Some(receiver) = c.get("mutation.receiver") {
                let receiver = self.text(*receiver);
                if !self.language.self_names.iter().any(|s| s == receiver) {
                    return;
                }
            }
            let scope = self.scope_at(write.start_byte());
            let in_constructor = scope.is_some_and(|s| {
                let symbol = &self.out.symbols[s];
                symbol.kind == SymbolKind::Method
                    && self.language.constructors.contains(&symbol.name)
            });
            if in_constructor {
                return;
            }
            mutations.push(Mutation {
                line: Self::line(*write),
                scope,
                target: self.text(*target).to_string(),
            });
        });
        self.out.mutations = mutations;
    }
}

impl Extractor<'_> {
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

    fn types(&mut self) {
        let mut hints = Vec::new();
        self.for_each_match(&self.language.queries.types, |c| {
            let Some(name) = c.get("type.name") else {
                return;
            };
            let class = match (c.get("type.annotation"), c.get("type.constructor")) {
                (Some(annotation), _) => plain_type(self.text(*annotation)),
                (None, Some(constructor)) => plain_type(self.text(*constructor)),
                (None, None) => None,
            };
            let Some(class) = class else { return };
            let scope = self.scope_at(name.start_byte());
            let (scope, attribute) = match (c.get("type.receiver"), c.contains_key("type.field")) {
                (Some(receiver), _) => {
                    if !self
                        .language
                        .self_names
                        .iter()
                        .any(|s| s == self.text(*receiver))
                    {
                        return;
                    }
                    (self.class_of(scope), true)
                }
                (None, true) => (self.class_of(scope), true),
                (None, false) => (scope, false),
            };
            if attribute && scope.is_none() {
                return;
            }
            hints.push(TypeHint {
                scope,
                name: self.text(*name).to_string(),
                class,
                attribute,
            });
        });
        self.out.types = hints;
    }
}

/// A class name from an annotation: `Foo`, `pkg.Foo`, `"Foo"`, `Optional[Foo]`, `Foo | None`;
/// anything more complex is not a single class.
fn plain_type(annotation: &str) -> Option<String> {
    let mut text = annotation.trim().trim_matches(|c| c == '"' || c == '\'');
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
    is_dotted_name(text).then(|| text.to_string())
}

/// `name` or `a.b.Name`: identifiers joined by dots, nothing else.
pub fn is_dotted_name(text: &str) -> bool {
    !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.split('.').all(|part| {
            !part.is_empty()
                && part
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '_' || c == '$')
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
