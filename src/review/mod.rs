//! `review_diff`: a hunk-precise briefing for a change. Which symbols the hunks touch (on
//! both sides of the change), who depends on them, which tests to run and why ([`evidence`]),
//! what side effects the change adds or drops, what history and the team's memories say about
//! these files.
//!
//! `analyse` is pure (changes, graph and history in, per-file findings out); the caller
//! gathers memories and history for what it found, and `briefing::render` writes the answer
//! within a budget.

pub mod briefing;
pub mod changes;
pub mod diff;
pub mod evidence;
pub mod git;
pub mod guidelines;
pub mod host;
pub mod partners;
pub mod records;
pub mod recurring;
pub mod repo_knowledge;
pub mod stats;

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use crate::context::strongest_dependents_kept;
use crate::extract::{self, FileExtract, Symbol};
use crate::graph::{self, EdgeKind, Graph, Node, NodeKind, SourceFile};
use crate::history::History;
use crate::languages::{Language, Registry};
pub use diff::{ChangeKind, DiffError, FileChange};
pub use evidence::{Evidence, TestToRun};

/// A change larger than one review takes on.
#[derive(Debug, thiserror::Error)]
pub enum TooLarge {
    #[error(
        "{range} holds more than {cap} commits, more than one review takes on: review a shorter range, or raise `max_commits` in the `[review]` table of cairn.toml"
    )]
    Commits { range: String, cap: usize },
    #[error(
        "the change touches {count} files, more than one review takes on ({cap}): review a smaller change, or raise `max_files` in the `[review]` table of cairn.toml"
    )]
    Files { count: usize, cap: usize },
}

/// Refuses a change of more than `cap` files.
pub fn check_files(count: usize, cap: usize) -> Result<(), TooLarge> {
    if count > cap {
        return Err(TooLarge::Files { count, cap });
    }
    Ok(())
}

/// How a symbol changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SymbolChangeKind {
    Added,
    Removed,
    Modified,
}

impl SymbolChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolChangeKind::Added => "added",
            SymbolChangeKind::Removed => "removed",
            SymbolChangeKind::Modified => "modified",
        }
    }
}

/// A caller or importer with the lines of the use.
#[derive(Debug, Clone, Serialize)]
pub struct Use {
    pub id: String,
    pub kind: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub lines: Vec<u32>,
}

/// A changed symbol and what depends on it.
#[derive(Debug, Clone, Serialize)]
pub struct SymbolChange {
    /// `path::Qual.name`, the graph's id.
    pub id: String,
    pub kind: String,
    pub change: SymbolChangeKind,
    /// Its lines on the side it lives on (new side; old side for a removal).
    pub start_line: u32,
    pub end_line: u32,
    /// Changed lines inside it (new side; old side for removed lines).
    pub added_lines: Vec<u32>,
    pub removed_lines: Vec<u32>,
    /// Whether the indexed graph has it (a new symbol is not indexed yet).
    pub indexed: bool,
    /// A function or method whose header (parameters, return type) the change alters.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub signature_changed: bool,
    /// Resolved callers, with call-site lines.
    pub callers: Vec<Use>,
    pub importers: Vec<Use>,
    pub subclasses: Vec<Use>,
    /// Nodes a change here can reach (from the index).
    pub reach: u32,
    /// The strongest few dependents: direct users first, then further ones.
    pub top_dependents: Vec<String>,
    /// Side-effect categories the change adds to or removes from the symbol.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects_added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects_removed: Vec<String>,
    #[serde(skip)]
    pub name: String,
    /// Changed lines as `+`/`-` text, for the briefing.
    #[serde(skip)]
    pub diff_lines: Vec<String>,
}

/// One changed file and its symbols.
#[derive(Debug, Clone, Serialize)]
pub struct FileReport {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_path: Option<String>,
    pub change: ChangeKind,
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<String>,
    pub indexed: bool,
    pub symbols: Vec<SymbolChange>,
    /// Changed lines outside any definition (imports, module code), new side.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub module_lines: Vec<u32>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects_added: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub effects_removed: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    #[serde(skip)]
    pub module_diff: Vec<String>,
}

/// Changed code that no test reaches.
#[derive(Debug, Clone, Serialize)]
pub struct Untested {
    pub id: String,
    pub reason: String,
}

/// What analysis of the diff found, before memories and history are added.
#[derive(Debug, Clone, Default)]
pub struct Analysis {
    pub files: Vec<FileReport>,
    pub tests: Vec<TestToRun>,
    /// Fixtures and helpers of the test trees the change touches (never tests to run).
    pub fixtures: Vec<TestToRun>,
    /// Tests with weaker evidence than those listed, left out.
    pub tests_left_out: usize,
    pub untested: Vec<Untested>,
    pub notes: Vec<String>,
}

impl Analysis {
    /// Repository paths the change touches (both sides of renames).
    pub fn paths(&self) -> Vec<String> {
        let mut paths: BTreeSet<String> = BTreeSet::new();
        for f in &self.files {
            paths.insert(f.path.clone());
            if let Some(old) = &f.old_path {
                paths.insert(old.clone());
            }
        }
        paths.into_iter().collect()
    }

    /// Changed symbols' ids.
    pub fn symbol_ids(&self) -> Vec<String> {
        self.files
            .iter()
            .flat_map(|f| f.symbols.iter().map(|s| s.id.clone()))
            .collect()
    }

    /// Words for a memory search: changed symbol names and file names without their
    /// directories and extensions (`md`, `src`, a package's top directory: words every
    /// memory anchored in the repository shares, which would match them all; memories
    /// anchored on the changed paths are found by their anchors).
    pub fn query_text(&self) -> String {
        let mut words: Vec<String> = Vec::new();
        for f in &self.files {
            let name = std::path::Path::new(&f.path).file_stem();
            words.extend(name.and_then(|n| n.to_str()).map(str::to_string));
            for s in &f.symbols {
                words.push(s.name.clone());
            }
        }
        words.dedup();
        words.join(" ")
    }
}

/// How many of the strongest dependents are walked per symbol.
const RADIUS_WALK: usize = 1_000;
/// Changed lines shown per symbol.
pub(crate) const DIFF_LINES_SHOWN: usize = 12;

/// Reads a repository file's text (for test mentions).
pub(crate) type FileReader<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Maps every change onto symbols, dependents and tests (with the history, for the tests
/// that change together with the changed files).
pub fn analyse(
    changes: &[FileChange],
    graph: &Graph,
    rank: &dyn Fn(&str) -> f64,
    read: FileReader,
    history: &History,
) -> Analysis {
    let registry = Registry::get();
    let mut analysis = Analysis::default();
    for change in changes {
        analysis
            .files
            .push(analyse_file(change, graph, registry, rank));
    }
    evidence::find(&mut analysis, graph, read, history);
    analysis
}

fn analyse_file(
    change: &FileChange,
    graph: &Graph,
    registry: &Registry,
    rank: &dyn Fn(&str) -> f64,
) -> FileReport {
    let language = registry.for_path(change.path());
    let mut report = file_report(change, graph, language);
    if change.binary {
        report
            .notes
            .push("binary file: no lines to map".to_string());
        return report;
    }
    let Some(language) = language else {
        if !change.hunks.is_empty() {
            report
                .notes
                .push("not a language cairn parses: changed lines only".to_string());
        }
        report.module_lines = change.added().map(|(n, _)| n).collect();
        report.module_diff = diff_lines(change, None, None);
        return report;
    };
    if !report.indexed {
        report
            .notes
            .push("not in the index (new, ignored or not indexed yet)".to_string());
    }
    map_onto_symbols(&mut report, change, graph, language, rank);
    report
}

/// The report of a changed file before its lines are mapped: its paths, counts, language,
/// and whether the index has it.
fn file_report(change: &FileChange, graph: &Graph, language: Option<&Language>) -> FileReport {
    let path = change.path().to_string();
    FileReport {
        indexed: graph.node(&path).is_some()
            || change
                .old_path
                .as_deref()
                .is_some_and(|p| graph.node(p).is_some()),
        path,
        old_path: change
            .old_path
            .clone()
            .filter(|old| change.new_path.as_deref() != Some(old.as_str())),
        change: change.kind,
        added: change.added_count(),
        removed: change.removed_count(),
        binary: change.binary,
        language: language.map(|l| l.spec.name.clone()),
        symbols: Vec::new(),
        module_lines: Vec::new(),
        effects_added: Vec::new(),
        effects_removed: Vec::new(),
        notes: Vec::new(),
        module_diff: Vec::new(),
    }
}

/// Maps a changed file of a parsed language onto the symbols it touches, its module-level
/// lines, and the side effects it adds or removes.
fn map_onto_symbols(
    report: &mut FileReport,
    change: &FileChange,
    graph: &Graph,
    language: &Language,
    rank: &dyn Fn(&str) -> f64,
) {
    let path = report.path.clone();
    let sides = Sides::of(change, language, graph);
    if sides.from_index {
        report.notes.push(
            "file content not at hand: symbols mapped by line numbers from the index".to_string(),
        );
    }
    let touches = touched(change, &sides.old_symbols, &sides.new_symbols);
    let effects = EffectsDelta {
        before: effects_by_symbol(language, &sides.old_extract, &sides.old_path),
        after: effects_by_symbol(language, &sides.new_extract, &path),
    };
    if !effects.before.is_empty() || !effects.after.is_empty() {
        let file = effects.of("");
        (report.effects_added, report.effects_removed) = (file.added, file.removed);
    }
    let (module_added, module_removed) = (touches.module_added, touches.module_removed);
    if !module_added.is_empty() || !module_removed.is_empty() {
        report.module_diff = diff_lines(change, Some(&module_added), Some(&module_removed));
        // New-side lines, and for pure deletions the line they happened at.
        report.module_lines = if module_added.is_empty() {
            module_removed
        } else {
            module_added
        };
    }
    let near = Near {
        graph,
        rank,
        path: &path,
    };
    for touched in touches.symbols {
        let side_path = if touched.kind == SymbolChangeKind::Removed {
            &sides.old_path
        } else {
            &path
        };
        report
            .symbols
            .push(symbol_change(change, &near, side_path, touched, &effects));
    }
    report.symbols.sort_by_key(|s| (s.start_line, s.id.clone()));
}

/// Whether a function's or method's header differs between its two sides (both known).
fn re_signed(before: &Symbol, after: &Symbol) -> bool {
    use extract::SymbolKind::{Function, Method};
    matches!(after.kind, Function | Method)
        && !before.signature.is_empty()
        && !after.signature.is_empty()
        && before.signature != after.signature
}

/// Both sides of a changed file: its path before, what each text holds, and its symbols.
struct Sides {
    old_path: String,
    old_extract: Option<FileExtract>,
    new_extract: Option<FileExtract>,
    old_symbols: Vec<Symbol>,
    new_symbols: Vec<Symbol>,
    /// Some side's text was not at hand: its symbols come from the index.
    from_index: bool,
}

impl Sides {
    /// The texts come from git or the working tree; a pasted diff of a file whose content is
    /// not at hand is mapped by line numbers onto the indexed symbols.
    fn of(change: &FileChange, language: &crate::languages::Language, graph: &Graph) -> Sides {
        let path = change.path();
        let old_path = change.old_path.as_deref().unwrap_or(path).to_string();
        let old_extract = change
            .old_text
            .as_deref()
            .map(|t| extract::extract(language, t));
        let new_extract = change
            .new_text
            .as_deref()
            .map(|t| extract::extract(language, t));
        let old_symbols: Vec<Symbol> = match (&old_extract, change.kind) {
            (Some(x), _) => x.symbols.clone(),
            (None, ChangeKind::Added) => Vec::new(),
            (None, _) => symbols_from_graph(graph, &old_path),
        };
        let new_symbols: Vec<Symbol> = match (&new_extract, change.kind) {
            (Some(x), _) => x.symbols.clone(),
            (None, ChangeKind::Deleted) => Vec::new(),
            (None, _) => symbols_from_graph(graph, path),
        };
        let from_index = (change.old_text.is_none() && change.kind != ChangeKind::Added)
            || (change.new_text.is_none() && change.kind != ChangeKind::Deleted);
        Sides {
            old_path,
            old_extract,
            new_extract,
            old_symbols,
            new_symbols,
            from_index,
        }
    }
}

/// A symbol the change touches.
#[derive(Debug)]
struct Touched {
    qualname: String,
    kind: SymbolChangeKind,
    /// The symbol on the side it lives on (new side; old side for a removal).
    symbol: Symbol,
    /// Changed lines inside it, new side.
    added: Vec<u32>,
    /// Changed lines inside it, old side.
    removed: Vec<u32>,
    /// A modified function or method whose header differs between the sides.
    re_signed: bool,
}

/// Where a change's lines fall: the innermost symbols, in the order first touched, and the
/// lines outside any definition.
#[derive(Debug, Default)]
struct Touches {
    symbols: Vec<Touched>,
    module_added: Vec<u32>,
    module_removed: Vec<u32>,
}

impl Touches {
    fn touch(
        &mut self,
        kind: SymbolChangeKind,
        symbol: &Symbol,
        added: Option<u32>,
        removed: Option<u32>,
    ) {
        let entry = match self
            .symbols
            .iter()
            .position(|t| t.qualname == symbol.qualname)
        {
            Some(i) => &mut self.symbols[i],
            None => {
                self.symbols.push(Touched {
                    qualname: symbol.qualname.to_string(),
                    kind,
                    symbol: symbol.clone(),
                    added: Vec::new(),
                    removed: Vec::new(),
                    re_signed: false,
                });
                self.symbols.last_mut().expect("just pushed")
            }
        };
        entry.added.extend(added);
        entry.removed.extend(removed);
    }
}

/// Each symbol's index by its qualified name.
fn qualnames(symbols: &[Symbol]) -> HashMap<&str, usize> {
    symbols
        .iter()
        .enumerate()
        .map(|(i, s)| (s.qualname.as_str(), i))
        .collect()
}

/// Maps each added line onto the innermost new-side symbol and each removed line onto the
/// innermost old-side one: a symbol on both sides is modified, on one side added or removed.
fn touched(change: &FileChange, old_symbols: &[Symbol], new_symbols: &[Symbol]) -> Touches {
    let (old_names, new_names) = (qualnames(old_symbols), qualnames(new_symbols));
    let mut touches = Touches::default();
    for (line, _) in change.added() {
        match innermost(new_symbols, line) {
            Some(i) => {
                let symbol = &new_symbols[i];
                let kind = if old_names.contains_key(symbol.qualname.as_str()) {
                    SymbolChangeKind::Modified
                } else {
                    SymbolChangeKind::Added
                };
                touches.touch(kind, symbol, Some(line), None);
            }
            None => touches.module_added.push(line),
        }
    }
    for (line, _) in change.removed() {
        match innermost(old_symbols, line) {
            Some(i) => {
                let symbol = &old_symbols[i];
                match new_names.get(symbol.qualname.as_str()) {
                    Some(&j) => touches.touch(
                        SymbolChangeKind::Modified,
                        &new_symbols[j],
                        None,
                        Some(line),
                    ),
                    None => touches.touch(SymbolChangeKind::Removed, symbol, None, Some(line)),
                }
            }
            None => touches.module_removed.push(line),
        }
    }
    for t in &mut touches.symbols {
        t.re_signed = t.kind == SymbolChangeKind::Modified
            && old_names
                .get(t.qualname.as_str())
                .is_some_and(|&i| re_signed(&old_symbols[i], &t.symbol));
    }
    touches
}

/// Side-effect categories per symbol (by qualname; the file's own under ""), from a build of
/// the file on its own: the categories come from external modules and calls, which need no
/// other file.
fn effects_by_symbol(
    language: &crate::languages::Language,
    extract: &Option<FileExtract>,
    path: &str,
) -> HashMap<String, Vec<String>> {
    let Some(extract) = extract else {
        return HashMap::new();
    };
    let file = SourceFile {
        path: path.to_string(),
        language: language.shared_name(),
        hash: String::new(),
        size: 0,
        last_change: 0,
        is_test: language.is_test_path(path),
        extract: extract.clone(),
    };
    let (alone, _) = graph::build(&[&file], &[]);
    alone
        .nodes
        .into_iter()
        .filter(|n| n.kind != NodeKind::External)
        .map(|n| {
            let key =
                n.id.strip_prefix(&format!("{path}::"))
                    .unwrap_or_default()
                    .to_string();
            (key, n.side_effects.clone())
        })
        .collect()
}

/// Side effects per symbol before and after the change.
struct EffectsDelta {
    before: HashMap<String, Vec<String>>,
    after: HashMap<String, Vec<String>>,
}

/// The side-effect categories a symbol gains and loses.
#[derive(Default)]
struct EffectsChange {
    added: Vec<String>,
    removed: Vec<String>,
}

impl EffectsDelta {
    /// The categories a symbol gains and loses.
    fn of(&self, key: &str) -> EffectsChange {
        let empty = Vec::new();
        let b = self.before.get(key).unwrap_or(&empty);
        let a = self.after.get(key).unwrap_or(&empty);
        EffectsChange {
            added: a.iter().filter(|c| !b.contains(c)).cloned().collect(),
            removed: b.iter().filter(|c| !a.contains(c)).cloned().collect(),
        }
    }

    /// What a touched symbol's change does to its side effects.
    fn for_change(&self, kind: SymbolChangeKind, qualname: &str) -> EffectsChange {
        match kind {
            SymbolChangeKind::Modified => self.of(qualname),
            SymbolChangeKind::Added => EffectsChange {
                added: self.after.get(qualname).cloned().unwrap_or_default(),
                ..EffectsChange::default()
            },
            SymbolChangeKind::Removed => EffectsChange {
                removed: self.before.get(qualname).cloned().unwrap_or_default(),
                ..EffectsChange::default()
            },
        }
    }
}

/// The graph around a changed file, ranked.
struct Near<'a> {
    graph: &'a Graph,
    rank: &'a dyn Fn(&str) -> f64,
    /// The changed file (new side).
    path: &'a str,
}

impl Near<'_> {
    /// Nodes using `id` over `kind` edges, best first, with the lines of each use.
    fn uses(&self, id: &str, kind: EdgeKind) -> Vec<Use> {
        let rank = self.rank;
        let mut uses: Vec<Use> = self
            .graph
            .incoming(id)
            .filter(|e| e.kind == kind)
            .map(|e| Use {
                id: e.src.to_string(),
                kind: self
                    .graph
                    .node(&e.src)
                    .map_or("unknown", |n| n.kind.as_str())
                    .to_string(),
                lines: e.lines.to_vec(),
            })
            .collect();
        uses.sort_by(|a, b| rank(&b.id).total_cmp(&rank(&a.id)).then(a.id.cmp(&b.id)));
        uses
    }

    /// The strongest few dependents of `id` that are symbols outside the changed file and
    /// its tests: direct callers, importers and subclasses first (highest impact first), then
    /// further ones.
    fn top_dependents(&self, id: &str) -> Vec<String> {
        let elsewhere = |n: &Node| !n.is_test && *n.path != *self.path && n.kind.is_symbol();
        strongest_dependents_kept(self.graph, id, RADIUS_WALK, 5, &elsewhere)
            .into_iter()
            .map(|d| d.id.to_string())
            .collect()
    }
}

/// A touched symbol as the review reports it: its lines, diff, side-effect delta, and (when
/// the index has it) who uses it and what it can reach.
fn symbol_change(
    change: &FileChange,
    near: &Near,
    side_path: &str,
    touched: Touched,
    effects: &EffectsDelta,
) -> SymbolChange {
    let Touched {
        qualname,
        kind,
        symbol,
        mut added,
        mut removed,
        re_signed,
    } = touched;
    added.sort_unstable();
    added.dedup();
    removed.sort_unstable();
    removed.dedup();
    let id = graph::symbol_id(side_path, &qualname);
    let node = near.graph.node(&id);
    let EffectsChange {
        added: effects_added,
        removed: effects_removed,
    } = effects.for_change(kind, &qualname);
    let mut entry = SymbolChange {
        id: id.clone(),
        kind: symbol.kind.as_str().to_string(),
        change: kind,
        start_line: symbol.start_line,
        end_line: symbol.end_line,
        diff_lines: diff_lines(change, Some(&added), Some(&removed)),
        added_lines: added,
        removed_lines: removed,
        indexed: node.is_some(),
        signature_changed: re_signed,
        callers: Vec::new(),
        importers: Vec::new(),
        subclasses: Vec::new(),
        reach: node.map_or(0, |n| n.reach),
        top_dependents: Vec::new(),
        effects_added,
        effects_removed,
        name: symbol.name.into(),
    };
    if node.is_some() {
        entry.callers = near.uses(&id, EdgeKind::Calls);
        entry.importers = near.uses(&id, EdgeKind::Imports);
        entry.subclasses = near.uses(&id, EdgeKind::Inherits);
        entry.top_dependents = near.top_dependents(&id);
    }
    entry
}

/// The changed lines as `+L12 text` / `-L9 text`, limited to the given lines when asked.
fn diff_lines(change: &FileChange, added: Option<&[u32]>, removed: Option<&[u32]>) -> Vec<String> {
    let mut out = Vec::new();
    for hunk in &change.hunks {
        for line in &hunk.lines {
            let keep = match line.op {
                '+' => line
                    .new
                    .is_some_and(|n| added.is_none_or(|a| a.contains(&n))),
                '-' => line
                    .old
                    .is_some_and(|n| removed.is_none_or(|r| r.contains(&n))),
                _ => false,
            };
            if keep {
                let number = if line.op == '+' { line.new } else { line.old };
                out.push(format!(
                    "{}L{} {}",
                    line.op,
                    number.unwrap_or_default(),
                    crate::tokens::truncate(line.text.trim_end(), 160)
                ));
            }
        }
    }
    out
}

/// The innermost symbol whose lines hold `line`.
fn innermost(symbols: &[Symbol], line: u32) -> Option<usize> {
    symbols
        .iter()
        .enumerate()
        .filter(|(_, s)| s.start_line <= line && line <= s.end_line)
        .min_by_key(|(_, s)| (s.end_line - s.start_line, std::cmp::Reverse(s.start_line)))
        .map(|(i, _)| i)
}

/// A file's symbols as the index has them (for diffs whose text is not at hand).
fn symbols_from_graph(graph: &Graph, path: &str) -> Vec<Symbol> {
    let prefix = format!("{path}::");
    graph
        .nodes
        .iter()
        .filter(|n| &*n.path == path && n.kind.is_symbol())
        .filter_map(|n| {
            let qualname = n.id.strip_prefix(&prefix)?.to_string();
            Some(Symbol {
                kind: match n.kind {
                    NodeKind::Class => extract::SymbolKind::Class,
                    NodeKind::Method => extract::SymbolKind::Method,
                    NodeKind::Interface => extract::SymbolKind::Interface,
                    NodeKind::Type => extract::SymbolKind::Type,
                    NodeKind::Enum => extract::SymbolKind::Enum,
                    NodeKind::Constant => extract::SymbolKind::Constant,
                    _ => extract::SymbolKind::Function,
                },
                name: n.name.as_str().into(),
                qualname: qualname.into(),
                start_line: n.start_line,
                end_line: n.end_line,
                signature: n.signature.as_deref().unwrap_or_default().into(),
                doc: None,
                parent: None,
                receiver: None,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_lines_fall_on_the_innermost_symbol_of_their_side() {
        let old = "import os\n\ndef a():\n    return 1\n\ndef b():\n    return 2\n\ndef gone():\n    return 3\n";
        let new = "import os\nimport sys\n\ndef a():\n    return 10\n\ndef b():\n    return 2\n\ndef fresh():\n    return 4\n";
        let change = diff::between(
            ChangeKind::Modified,
            Some("m.py".to_string()),
            Some("m.py".to_string()),
            Some(old.to_string()),
            Some(new.to_string()),
        );
        let python = Registry::get().for_path("m.py").unwrap();
        let symbols = |text: &str| extract::extract(python, text).symbols;
        let touches = touched(&change, &symbols(old), &symbols(new));
        let found: Vec<(&str, SymbolChangeKind, &[u32], &[u32])> = touches
            .symbols
            .iter()
            .map(|t| (t.qualname.as_str(), t.kind, &t.added[..], &t.removed[..]))
            .collect();
        assert_eq!(
            found,
            [
                ("a", SymbolChangeKind::Modified, &[5][..], &[4][..]),
                ("fresh", SymbolChangeKind::Added, &[10, 11][..], &[][..]),
                ("gone", SymbolChangeKind::Removed, &[][..], &[9, 10][..]),
            ]
        );
        assert_eq!(touches.module_added, [2]);
        assert!(touches.module_removed.is_empty());
    }

    #[test]
    fn innermost_prefers_the_method_over_its_class() {
        let sym = |q: &str, a: u32, b: u32| Symbol {
            kind: extract::SymbolKind::Function,
            name: q.into(),
            qualname: q.into(),
            start_line: a,
            end_line: b,
            signature: Default::default(),
            doc: None,
            parent: None,
            receiver: None,
        };
        let symbols = vec![sym("A", 1, 50), sym("A.f", 10, 20), sym("A.g", 21, 30)];
        assert_eq!(innermost(&symbols, 15), Some(1));
        assert_eq!(innermost(&symbols, 40), Some(0));
        assert_eq!(innermost(&symbols, 60), None);
    }
}
