//! Which tests to run for a change, and why: test files ranked by the evidence that they
//! exercise it — a test calls or asserts on a changed symbol (a resolved edge), a test names
//! it, the test file changed together with the changed files in the history, or it is near
//! the change in the graph. Fixtures and helpers of the test trees (`conftest.py`, test apps,
//! factories) are listed apart: they are not tests a runner collects.

use std::collections::{BTreeSet, HashMap};

use serde::Serialize;

use super::{Analysis, FileReader, FileReport, SymbolChangeKind, Untested};
use crate::context::{nearest_dependents, strongest_dependents};
use crate::graph::{EdgeKind, Graph, NodeKind};
use crate::history::History;
use crate::languages::Registry;

/// How many test files a review reads to find the lines that name a changed symbol.
const MENTION_READS: usize = 200;
/// How many of the dependents are walked per changed symbol.
const RADIUS_WALK: usize = 1_000;
/// Most test files a briefing lists.
pub(crate) const TESTS_SHOWN: usize = 8;
/// Test files listed only for being near the change in the graph, when stronger evidence
/// names other tests…
const NEAR_ONLY_BESIDE_EVIDENCE: usize = 2;
/// …and when nothing stronger is known.
const NEAR_ONLY: usize = 5;
/// Most fixtures listed.
pub(crate) const FIXTURES_SHOWN: usize = 5;
/// A test file counts as changing with a source file after this many commits together…
const CO_CHANGE_SUPPORT: usize = 2;
/// …making up at least this share of the source file's commits.
const CO_CHANGE_CONFIDENCE: f64 = 0.1;
/// A name mentioned by more than this many test files…
const COMMON_NAME_FILES: usize = 8;
/// …that are at least this share of the test files read says nothing about which of them
/// exercise the change (`get`, `run`, `pop` in a web framework's tests).
const COMMON_NAME_SHARE: f64 = 0.25;

/// The evidence that a test file exercises the change, strongest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Evidence {
    /// The test file is part of the change itself.
    Changed,
    /// A test calls or asserts on a changed symbol (a resolved edge of the graph).
    Calls,
    /// The test file names a changed symbol.
    Names,
    /// The test file is named for a changed file (`ParserTest.java` for `Parser.java`,
    /// `test_parser.py` for `parser.py`): the convention most projects keep.
    NamedFor,
    /// The test file changed together with a changed file in the history.
    ChangedWith,
    /// The test file is near the change in the graph (through imports and calls).
    Near,
}

/// How likely a listed test file is one the change needs, by its strongest evidence in the
/// code (rows: it calls or imports a changed symbol; it names one; neither, only near the
/// change in the graph), by whether it changed with a changed file in the history, and by
/// whether it is named for a changed file, symbol or class (`[code][history][named for]`):
/// the share of such files that the commits themselves changed, pooled over the replay
/// bench's ten public histories, 20 commits each, 1,116 files named (`bench/replay.py
/// --calibrate`; leaving any one history out moves a cell of more than 50 files by 0.12 at
/// most). Where stronger code evidence measured lower than weaker (calls against names for a
/// test named for the change without history, 20 and 22 files), the two are pooled. The
/// history and the name agreeing with the code is what makes a test likely: a test that
/// calls the changed function is needed one time in eight, one that also changed with its
/// file and is named for it two times in three.
const CONFIDENCE: [[[f64; 2]; 2]; 3] = [
    [[0.13, 0.24], [0.36, 0.66]],
    [[0.07, 0.24], [0.32, 0.61]],
    [[0.03, 0.16], [0.08, 0.52]],
];
/// A test file this likely to be needed is among those to run first.
pub(crate) const FIRST_CONFIDENCE: f64 = 0.3;

/// A test file to run (or a fixture the change touches) and why.
#[derive(Debug, Clone, Serialize)]
pub struct TestToRun {
    /// The test file.
    pub id: String,
    /// The strongest evidence.
    pub how: Evidence,
    /// Every kind of evidence found, strongest first.
    pub evidence: Vec<Evidence>,
    /// How likely the change needs this test (0–1): the measured share of test files listed
    /// with the same evidence that the change's commit changed ([`CONFIDENCE`]). None for a
    /// fixture.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Among the tests to run first (confidence at least [`FIRST_CONFIDENCE`]); the rest are
    /// also relevant.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub first: bool,
    /// The evidence in a few words: `calls AppContext.pop (L120); changed with ctx.py in 6 of 9
    /// commits`.
    pub why: String,
    /// Changed symbols (or files, for module-level changes) it covers.
    pub covers: Vec<String>,
    /// Lines of the test file that call or name a changed symbol.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mentions: Vec<u32>,
}

/// What was found about one test file.
#[derive(Debug, Default)]
struct Found {
    changed: bool,
    /// Changed symbols it calls, by display name, with the call lines.
    calls: Vec<Uses>,
    /// Changed symbols it imports by name (the graph's `asserts_on`), with the lines.
    imports: Vec<Uses>,
    /// Changed symbols it names, by name, with the lines.
    names: Vec<Uses>,
    /// The changed file it changed with most.
    changed_with: Option<ChangedWith>,
    /// The changed file it is named for.
    named_for: Option<String>,
    /// The strongest link from the change in the graph.
    near: Option<Nearest>,
    covers: BTreeSet<String>,
}

/// The lines of a test file that use one changed symbol in one way (call, import, name).
#[derive(Debug)]
struct Uses {
    /// The symbol as shown (`AppContext.pop`), or the name written (`pop`).
    name: String,
    lines: Vec<u32>,
}

/// The changed file a test file changed with most in the history.
#[derive(Debug)]
struct ChangedWith {
    path: String,
    /// Commits that changed both.
    together: usize,
    /// Commits that changed the changed file.
    of: usize,
}

/// The strongest link from the change to a test file in the graph.
#[derive(Debug)]
struct Nearest {
    strength: f64,
    /// The changed symbol it links from, as shown.
    what: String,
}

impl Found {
    fn how(&self) -> Evidence {
        if self.changed {
            Evidence::Changed
        } else if !self.calls.is_empty() || !self.imports.is_empty() {
            Evidence::Calls
        } else if !self.names.is_empty() {
            Evidence::Names
        } else if self.named_for.is_some() {
            Evidence::NamedFor
        } else if self.changed_with.is_some() {
            Evidence::ChangedWith
        } else {
            Evidence::Near
        }
    }

    /// Each kind of evidence and whether it was found, strongest first.
    fn found(&self) -> [(bool, Evidence); 6] {
        [
            (self.changed, Evidence::Changed),
            (
                !self.calls.is_empty() || !self.imports.is_empty(),
                Evidence::Calls,
            ),
            (!self.names.is_empty(), Evidence::Names),
            (self.named_for.is_some(), Evidence::NamedFor),
            (self.changed_with.is_some(), Evidence::ChangedWith),
            (self.near.is_some(), Evidence::Near),
        ]
    }

    /// Every kind of evidence found, strongest first.
    fn evidence(&self) -> Vec<Evidence> {
        self.found()
            .into_iter()
            .filter_map(|(found, kind)| found.then_some(kind))
            .collect()
    }

    /// How many kinds of evidence agree (no list: it ranks inside a sort).
    fn kinds(&self) -> usize {
        self.found().iter().filter(|(found, _)| *found).count()
    }

    /// How likely the change needs this test file ([`CONFIDENCE`]); certain for a test
    /// file in the change.
    fn confidence(&self) -> f64 {
        if self.changed {
            return 1.0;
        }
        let code = if !self.calls.is_empty() || !self.imports.is_empty() {
            0
        } else if !self.names.is_empty() {
            1
        } else {
            2
        };
        CONFIDENCE[code][usize::from(self.changed_with.is_some())]
            [usize::from(self.named_for.is_some())]
    }

    fn support(&self) -> usize {
        self.changed_with.as_ref().map_or(0, |c| c.together)
    }

    fn strength(&self) -> f64 {
        self.near.as_ref().map_or(0.0, |n| n.strength)
    }

    /// The evidence in a few words; nearness only when nothing stronger is known.
    fn why(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if self.changed {
            parts.push("changed in this diff".to_string());
        }
        let called: Vec<&str> = self.calls.iter().map(|c| c.name.as_str()).collect();
        let calls = listed(&self.calls, &[]);
        if !calls.is_empty() {
            parts.push(format!("calls {}", named_list(&calls)));
        }
        let imports = listed(&self.imports, &called);
        if !imports.is_empty() {
            parts.push(format!("imports {}", named_list(&imports)));
        }
        // Names are bare (`pop`); what it calls or imports is qualified (`AppContext.pop`).
        let used: Vec<&str> = self
            .calls
            .iter()
            .chain(&self.imports)
            .map(|c| c.name.rsplit('.').next().unwrap_or(&c.name))
            .collect();
        let named = listed(&self.names, &used);
        if !named.is_empty() {
            parts.push(format!("names {}", named_list(&named)));
        }
        if let Some(source) = &self.named_for {
            parts.push(format!("named for {}", file_name(source)));
        }
        if let Some(with) = &self.changed_with {
            parts.push(format!(
                "changed with {} in {} of {} commits",
                file_name(&with.path),
                with.together,
                with.of
            ));
        }
        if parts.is_empty()
            && let Some(near) = &self.near
        {
            parts.push(format!(
                "near {} in the graph ({:.2})",
                near.what, near.strength
            ));
        }
        parts.join("; ")
    }

    fn into_entry(self, id: String) -> TestToRun {
        let mut mentions: Vec<u32> = self
            .calls
            .iter()
            .chain(&self.imports)
            .chain(&self.names)
            .flat_map(|c| c.lines.iter().copied())
            .collect();
        mentions.sort_unstable();
        mentions.dedup();
        let confidence = self.confidence();
        TestToRun {
            how: self.how(),
            evidence: self.evidence(),
            confidence: Some(confidence),
            first: confidence >= FIRST_CONFIDENCE,
            why: self.why(),
            covers: self.covers.iter().cloned().collect(),
            mentions,
            id,
        }
    }
}

/// The entries whose name is not among `except`.
fn listed<'a>(entries: &'a [Uses], except: &[&str]) -> Vec<&'a Uses> {
    entries
        .iter()
        .filter(|uses| !except.contains(&uses.name.as_str()))
        .collect()
}

/// `AppContext.pop (L120), Flask.do_teardown_request (L88) +1 more`.
fn named_list(items: &[&Uses]) -> String {
    let mut out: Vec<String> = items
        .iter()
        .take(2)
        .map(|uses| format!("{}{}", uses.name, lines_in_parens(&uses.lines)))
        .collect();
    if items.len() > 2 {
        out.push(format!("+{} more", items.len() - 2));
    }
    out.join(", ")
}

fn lines_in_parens(lines: &[u32]) -> String {
    match lines {
        [] => String::new(),
        [a] => format!(" (L{a})"),
        [a, b] => format!(" (L{a}, L{b})"),
        [a, b, rest @ ..] => format!(" (L{a}, L{b}, +{})", rest.len()),
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

/// A changed symbol or file, as the evidence speaks of it.
struct Target {
    /// The graph id (`path::Qual.name`, or the path for a module-level change).
    id: String,
    /// What the reader sees: `Qual.name`, or the file name.
    shown: String,
    /// The identifier a test would write (none for a module-level change).
    name: Option<String>,
    indexed: bool,
    removed: bool,
    /// A module-level change (the target is the file).
    module: bool,
}

fn targets(files: &[FileReport], graph: &Graph) -> Vec<Target> {
    let mut out = Vec::new();
    for file in files {
        let language = Registry::get().for_path(&file.path);
        // A test names the class, not its constructor (`__init__`, `constructor`).
        let telling = |name: &str| {
            name.len() >= 3
                && !(name.starts_with("__") && name.ends_with("__"))
                && !language.is_some_and(|l| l.spec.constructors.iter().any(|c| c == name))
        };
        for s in &file.symbols {
            out.push(Target {
                shown: s
                    .id
                    .split_once("::")
                    .map_or(s.id.clone(), |(_, q)| q.to_string()),
                id: s.id.clone(),
                name: Some(s.name.clone()).filter(|n| telling(n)),
                indexed: s.indexed,
                removed: s.change == SymbolChangeKind::Removed,
                module: false,
            });
        }
        if !file.module_lines.is_empty() && graph.node(&file.path).is_some() {
            out.push(Target {
                id: file.path.clone(),
                shown: file_name(&file.path).to_string(),
                name: None,
                indexed: true,
                removed: false,
                module: true,
            });
        }
    }
    out
}

/// Whether a path is a test file, and whether a runner collects it.
fn test_kind(path: &str) -> Option<bool> {
    Registry::get().test_kind(path)
}

/// Finds the tests to run, the fixtures touched and the changed code no test reaches, and
/// writes them into the analysis.
pub fn find(analysis: &mut Analysis, graph: &Graph, read: FileReader, history: &History) {
    let targets = targets(&analysis.files, graph);
    let mut found: HashMap<String, Found> = HashMap::new();
    for file in &analysis.files {
        if file.change != super::ChangeKind::Deleted && test_kind(&file.path).is_some() {
            found.entry(file.path.clone()).or_default().changed = true;
        }
    }
    let mut reached: HashMap<String, bool> = HashMap::new();
    for target in targets.iter().filter(|t| t.indexed && !t.removed) {
        let called = add_calls(&mut found, graph, target);
        let near = add_near(&mut found, graph, target);
        let far = || {
            nearest_dependents(graph, &target.id, RADIUS_WALK)
                .into_iter()
                .any(|d| graph.node(d).is_some_and(|n| n.is_test))
        };
        reached.insert(target.id.clone(), called || near || far());
    }
    add_co_changed(&mut found, &analysis.files, graph, read, history);
    add_named_for(&mut found, &analysis.files, graph);
    let named = add_names(&mut found, &targets, &analysis.files, graph, read);
    let (tests, fixtures, left_out) = rank(found);
    analysis.tests = tests;
    analysis.fixtures = fixtures;
    analysis.tests_left_out = left_out;
    analysis
        .untested
        .extend(untested(&analysis.files, &reached, &named));
}

/// Tests calling the changed symbol or importing it by name (the graph's `asserts_on`), by
/// resolved edges; whether there was one. A module-level change has none: importing a
/// module says little about which of its changes a test exercises.
fn add_calls(found: &mut HashMap<String, Found>, graph: &Graph, target: &Target) -> bool {
    if target.module {
        return false;
    }
    let mut any = false;
    for edge in graph.incoming(&target.id) {
        if !matches!(edge.kind, EdgeKind::Calls | EdgeKind::AssertsOn) {
            continue;
        }
        let Some(caller) = graph.node(&edge.src).filter(|n| n.is_test) else {
            continue;
        };
        let entry = found.entry(caller.path.to_string()).or_default();
        let uses = if edge.kind == EdgeKind::Calls {
            &mut entry.calls
        } else {
            &mut entry.imports
        };
        match uses.iter_mut().find(|c| c.name == target.shown) {
            Some(known) => {
                known.lines.extend(edge.lines.iter().copied());
                known.lines.sort_unstable();
                known.lines.dedup();
            }
            None => uses.push(Uses {
                name: target.shown.clone(),
                lines: edge.lines.to_vec(),
            }),
        }
        entry.covers.insert(target.id.clone());
        any = true;
    }
    any
}

/// Test files among the target's strongest dependents; whether there was one.
fn add_near(found: &mut HashMap<String, Found>, graph: &Graph, target: &Target) -> bool {
    let mut any = false;
    for dependent in strongest_dependents(graph, &target.id, RADIUS_WALK) {
        let Some(node) = graph.node(dependent.id).filter(|n| n.is_test) else {
            continue;
        };
        any = true;
        let entry = found.entry(node.path.to_string()).or_default();
        entry.covers.insert(target.id.clone());
        if entry.strength() < dependent.strength {
            entry.near = Some(Nearest {
                strength: dependent.strength,
                what: target.shown.clone(),
            });
        }
    }
    any
}

/// Test files that changed together with the changed source files in the history, and
/// still exist.
fn add_co_changed(
    found: &mut HashMap<String, Found>,
    files: &[FileReport],
    graph: &Graph,
    read: FileReader,
    history: &History,
) {
    for file in files.iter().filter(|f| test_kind(&f.path).is_none()) {
        for partner in history.co_changes(&file.path, CO_CHANGE_SUPPORT, CO_CHANGE_CONFIDENCE) {
            if test_kind(&partner.path).is_none()
                || !(graph.node(&partner.path).is_some() || read(&partner.path).is_some())
            {
                continue;
            }
            let entry = found.entry(partner.path.clone()).or_default();
            if entry.support() < partner.support {
                entry.changed_with = Some(ChangedWith {
                    path: file.path.clone(),
                    together: partner.support,
                    of: partner.of,
                });
            }
        }
    }
}

/// Test files named for a changed source file, or for a changed symbol or its class (a project that tests
/// by feature: `catch.test.ts` for `$ZodCatch`, `discriminated-unions.test.ts` for
/// `$ZodDiscriminatedUnion`): the same name once the test affix is taken off
/// ([`pairing_name`]), a symbol's also without its leading words ([`symbol_names`]) or a
/// plural's `s`; of several, those nearest the source file in the tree (the most leading
/// folders in common).
fn add_named_for(found: &mut HashMap<String, Found>, files: &[FileReport], graph: &Graph) {
    // (the source file, what the test is named for as the briefing says it, the name).
    let mut sources: Vec<(&str, String, String)> = Vec::new();
    for file in files
        .iter()
        .filter(|f| f.change != super::ChangeKind::Deleted && test_kind(&f.path).is_none())
    {
        if let Some(name) = pairing_name(&file.path, false) {
            sources.push((&file.path, file.path.clone(), name));
        }
        for symbol in file.symbols.iter().take(SYMBOLS_NAMED_FOR) {
            // A method's name and its class's (`ZodCatch.run`: `run`, `ZodCatch`).
            let qualified = symbol.id.rsplit("::").next().unwrap_or(&symbol.id);
            for short in qualified.rsplit('.') {
                for name in symbol_names(short) {
                    if !sources
                        .iter()
                        .any(|(p, _, n)| *p == file.path && *n == name)
                    {
                        sources.push((&file.path, short.to_string(), name));
                    }
                }
            }
        }
    }
    if sources.is_empty() {
        return;
    }
    // Each name's tests, with how many folders they share with it.
    let mut paired: Vec<Vec<(usize, &str)>> = vec![Vec::new(); sources.len()];
    for node in graph
        .nodes
        .iter()
        .filter(|n| n.is_test && n.kind == NodeKind::File)
    {
        let Some(name) = pairing_name(&node.path, true) else {
            continue;
        };
        for (i, (source, _, wanted)) in sources.iter().enumerate() {
            if same_name(wanted, &name) {
                paired[i].push((shared_folders(source, &node.path), &node.path));
            }
        }
    }
    for ((_, named, _), tests) in sources.iter().zip(paired) {
        let nearest = tests.iter().map(|(shared, _)| *shared).max();
        for (_, test) in tests.iter().filter(|(shared, _)| Some(*shared) == nearest) {
            let entry = found.entry(test.to_string()).or_default();
            entry.named_for.get_or_insert_with(|| named.clone());
        }
    }
}

/// Whether two pairing names are one, a plural's `s` aside (`test_url.py` for `_urls.py`,
/// `discriminated-unions.test.ts` for `DiscriminatedUnion`).
fn same_name(a: &str, b: &str) -> bool {
    a == b || a.strip_suffix('s') == Some(b) || b.strip_suffix('s') == Some(a)
}

/// Most changed symbols of one file whose names test files are paired by.
const SYMBOLS_NAMED_FOR: usize = 20;
/// Shortest name a test file is paired with a symbol by: shorter ones (`get`, `run`) name a
/// feature of nothing in particular.
const SYMBOL_NAME_MIN: usize = 4;

/// The names a test file named for a symbol may go by, as [`pairing_name`] reads a file's:
/// the whole name lowercased without `$`, `_` and `-`, and the same without each run of
/// leading words (`$ZodDiscriminatedUnion`: `zoddiscriminatedunion`, `discriminatedunion`,
/// `union`), each of at least [`SYMBOL_NAME_MIN`] letters and not a name that says nothing
/// of its feature (`index`, `utils`, `test`).
fn symbol_names(symbol: &str) -> Vec<String> {
    let letters: Vec<char> = symbol
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    // Where words start: after `_`, at an upper case letter after a lower case one or a digit.
    let mut starts = vec![0];
    for i in 1..letters.len() {
        let (before, here) = (letters[i - 1], letters[i]);
        if (before == '_' && here != '_')
            || (here.is_uppercase() && (before.is_lowercase() || before.is_ascii_digit()))
        {
            starts.push(i);
        }
    }
    let mut names = Vec::new();
    for start in starts {
        let name: String = letters[start..]
            .iter()
            .filter(|c| **c != '_')
            .flat_map(|c| c.to_lowercase())
            .collect();
        let vague = [
            "index", "utils", "util", "test", "tests", "main", "init", "helpers",
        ];
        if name.chars().count() >= SYMBOL_NAME_MIN
            && !vague.contains(&name.as_str())
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// The name a file goes by when a test is paired with what it tests: the file name up to its
/// first dot, lowercased, without `_` and `-`, and for a test without its test affix
/// (`test_`, `_test`, `Test`, `Tests`, `_spec`, `.test`). None for names that say nothing
/// of their file (a package's `__init__`, Rust's `mod` and `lib`) or nothing at all.
fn pairing_name(path: &str, test: bool) -> Option<String> {
    let mut parts = file_name(path).split('.');
    let stem = parts.next().unwrap_or_default();
    // `schemas.test.ts`: the affix is a part of its own.
    let dotted = parts.any(|part| part == "test" || part == "spec");
    let mut name: String = stem
        .chars()
        .filter(|c| *c != '_' && *c != '-')
        .flat_map(char::to_lowercase)
        .collect();
    if test && !dotted {
        let cut = ["tests", "test", "spec"]
            .iter()
            .find_map(|affix| name.strip_suffix(affix))
            .or_else(|| name.strip_prefix("test"))
            .map(str::to_string);
        name = cut?;
    }
    (!name.is_empty() && !["init", "mod", "lib"].contains(&name.as_str())).then_some(name)
}

/// How many leading folders two paths have in common.
fn shared_folders(a: &str, b: &str) -> usize {
    fn folders(path: &str) -> impl Iterator<Item = &str> {
        let folder = path.rsplit_once('/').map_or("", |(folder, _)| folder);
        folder.split('/').filter(|part| !part.is_empty())
    }
    folders(a)
        .zip(folders(b))
        .take_while(|(x, y)| x == y)
        .count()
}

/// A changed symbol a test file names: the name found, the changed symbol, the lines.
struct Mention<'t> {
    name: String,
    target: &'t Target,
    lines: Vec<u32>,
}

/// The changed symbols one test file names.
struct FileMentions<'t> {
    path: String,
    hits: Vec<Mention<'t>>,
}

/// Reads test files for lines naming a changed symbol: those already found first, then
/// those whose name holds a changed file's stem, then the rest, up to [`MENTION_READS`].
/// A name mentioned by many of the files read is too common to count. Returns the targets
/// some test names.
fn add_names(
    found: &mut HashMap<String, Found>,
    targets: &[Target],
    files: &[FileReport],
    graph: &Graph,
    read: FileReader,
) -> BTreeSet<String> {
    let wanted: Vec<(&str, &Target)> = targets
        .iter()
        .filter_map(|t| t.name.as_deref().map(|n| (n, t)))
        .collect();
    let mut named = BTreeSet::new();
    if wanted.is_empty() {
        return named;
    }
    let mut mentions: Vec<FileMentions> = Vec::new();
    let mut read_count = 0usize;
    for path in mention_candidates(found, files, graph)
        .into_iter()
        .take(MENTION_READS)
    {
        let Some(text) = read(path) else { continue };
        read_count += 1;
        let hits = mentions_in(&text, &wanted);
        if !hits.is_empty() {
            mentions.push(FileMentions {
                path: path.to_string(),
                hits,
            });
        }
    }
    let common = common_names(&mentions, &wanted, read_count);
    for FileMentions { path, hits } in mentions {
        for Mention {
            name,
            target,
            lines,
        } in hits
        {
            named.insert(target.id.clone());
            if common.contains(target.id.as_str()) {
                continue;
            }
            let entry = found.entry(path.clone()).or_default();
            entry.covers.insert(target.id.clone());
            entry.names.push(Uses { name, lines });
        }
    }
    named
}

/// The test files to read for names, in the order they are read: those already found, then
/// those whose name holds a changed file's stem, then the rest.
fn mention_candidates<'a>(
    found: &'a HashMap<String, Found>,
    files: &[FileReport],
    graph: &'a Graph,
) -> Vec<&'a str> {
    let stems: Vec<&str> = files
        .iter()
        .map(|f| {
            let name = file_name(&f.path);
            name.split('.').next().unwrap_or(name)
        })
        .filter(|s| s.len() >= 3 && *s != "__init__")
        .collect();
    let mut candidates: Vec<(u8, &str)> = found.keys().map(|p| (0, p.as_str())).collect();
    candidates.extend(
        graph
            .nodes
            .iter()
            .filter(|n| n.is_test && n.kind == NodeKind::File && !found.contains_key(&*n.path))
            .map(|n| {
                let stem_match = stems.iter().any(|s| file_name(&n.path).contains(s));
                (if stem_match { 1 } else { 2 }, &*n.path)
            }),
    );
    candidates.sort();
    candidates.dedup();
    candidates.into_iter().map(|(_, path)| path).collect()
}

/// The changed symbols a test file's text names, with the lines.
fn mentions_in<'t>(text: &str, wanted: &[(&str, &'t Target)]) -> Vec<Mention<'t>> {
    // Most files never name the symbols: a whole-text search rules them out first.
    let present: Vec<&(&str, &Target)> = wanted.iter().filter(|(n, _)| text.contains(n)).collect();
    let mut hits: Vec<Mention> = Vec::new();
    if present.is_empty() {
        return hits;
    }
    for (i, line) in text.lines().enumerate() {
        for (name, target) in &present {
            if !mentions_word(line, name) {
                continue;
            }
            match hits.iter_mut().find(|h| h.target.id == target.id) {
                Some(hit) => hit.lines.push(i as u32 + 1),
                None => hits.push(Mention {
                    name: name.to_string(),
                    target,
                    lines: vec![i as u32 + 1],
                }),
            }
        }
    }
    hits
}

/// The changed symbols named by too many of the `read_count` test files read to say which
/// of them exercise the change.
fn common_names<'t>(
    mentions: &[FileMentions],
    wanted: &[(&str, &'t Target)],
    read_count: usize,
) -> BTreeSet<&'t str> {
    let common = |id: &str| {
        let files = mentions
            .iter()
            .filter(|file| file.hits.iter().any(|h| h.target.id == id))
            .count();
        files > COMMON_NAME_FILES && files as f64 >= read_count as f64 * COMMON_NAME_SHARE
    };
    wanted
        .iter()
        .map(|(_, t)| t.id.as_str())
        .filter(|id| common(id))
        .collect()
}

/// Ranks what was found: tests to run (most likely needed first, then strongest evidence,
/// agreeing evidence, more covered symbols, more commits together, nearer), cut short when
/// evidence is strong; fixtures with real evidence apart. Returns the tests, the fixtures and
/// how many tests were left out.
fn rank(found: HashMap<String, Found>) -> (Vec<TestToRun>, Vec<TestToRun>, usize) {
    let mut all: Vec<(String, Found)> = found.into_iter().collect();
    all.sort_by(|(a, x), (b, y)| {
        y.confidence()
            .total_cmp(&x.confidence())
            .then(x.how().cmp(&y.how()))
            .then(y.kinds().cmp(&x.kinds()))
            .then(y.covers.len().cmp(&x.covers.len()))
            .then(y.support().cmp(&x.support()))
            .then(y.strength().total_cmp(&x.strength()))
            .then(a.cmp(b))
    });
    let (mut tests, mut fixtures) = (Vec::new(), Vec::new());
    let strong = all
        .iter()
        .any(|(p, f)| f.how() < Evidence::Near && test_kind(p) == Some(true));
    let near_cap = if strong {
        NEAR_ONLY_BESIDE_EVIDENCE
    } else {
        NEAR_ONLY
    };
    let (mut near_kept, mut left_out) = (0, 0);
    for (path, f) in all {
        let near_only = f.how() == Evidence::Near;
        if test_kind(&path) != Some(true) {
            if !near_only && fixtures.len() < FIXTURES_SHOWN {
                // Measured on test files only: a fixture has no confidence of its own.
                fixtures.push(TestToRun {
                    confidence: None,
                    first: false,
                    ..f.into_entry(path)
                });
            }
            continue;
        }
        if tests.len() >= TESTS_SHOWN || (near_only && near_kept >= near_cap) {
            left_out += 1;
            continue;
        }
        near_kept += usize::from(near_only);
        tests.push(f.into_entry(path));
    }
    (tests, fixtures, left_out)
}

/// Changed symbols no test is known to reach, and why.
fn untested(
    files: &[FileReport],
    reached: &HashMap<String, bool>,
    named: &BTreeSet<String>,
) -> Vec<Untested> {
    let mut out = Vec::new();
    for file in files {
        for s in &file.symbols {
            let reason = match s.change {
                SymbolChangeKind::Removed => continue,
                // A new symbol a test already names is not flagged.
                _ if named.contains(&s.id) => continue,
                _ if !s.indexed => {
                    "new since the last index: no test is known to reach it (run `cairn index`)"
                }
                _ if reached.get(&s.id) == Some(&false) => {
                    "no test calls it, asserts on it or reaches it through its dependents"
                }
                _ => continue,
            };
            out.push(Untested {
                id: s.id.clone(),
                reason: reason.to_string(),
            });
        }
    }
    out
}

/// Whether `line` names `word` as a whole identifier.
pub(super) fn mentions_word(line: &str, word: &str) -> bool {
    let bytes = line.as_bytes();
    let is_ident = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    line.match_indices(word).any(|(at, _)| {
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + word.len()).copied();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uses(name: &str, lines: &[u32]) -> Uses {
        Uses {
            name: name.to_string(),
            lines: lines.to_vec(),
        }
    }

    fn nearest(strength: f64, what: &str) -> Nearest {
        Nearest {
            strength,
            what: what.to_string(),
        }
    }

    #[test]
    fn stronger_code_evidence_and_agreeing_history_never_lower_the_confidence() {
        for row in CONFIDENCE {
            for named_for in 0..2 {
                assert!(row[0][named_for] <= row[1][named_for], "history: {row:?}");
            }
            for cells in row {
                assert!(cells[0] <= cells[1], "named for a changed file: {row:?}");
                assert!(cells.iter().all(|c| (0.0..1.0).contains(c)), "{row:?}");
            }
        }
        for (history, named_for) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            assert!(
                CONFIDENCE
                    .windows(2)
                    .all(|w| w[0][history][named_for] >= w[1][history][named_for]),
                "calls, names, neither: {CONFIDENCE:?}"
            );
        }
        let changed = Found {
            changed: true,
            ..Found::default()
        };
        assert_eq!(changed.confidence(), 1.0);
    }

    #[test]
    fn tests_are_ranked_by_confidence_and_the_likely_ones_come_first() {
        let mut found = HashMap::new();
        found.insert(
            "tests/test_near.py".to_string(),
            Found {
                near: Some(nearest(0.9, "Store.save")),
                ..Found::default()
            },
        );
        found.insert(
            "tests/test_names.py".to_string(),
            Found {
                names: vec![uses("save", &[9])],
                ..Found::default()
            },
        );
        found.insert(
            "tests/test_store.py".to_string(),
            Found {
                calls: vec![uses("Store.save", &[3])],
                names: vec![uses("save", &[3])],
                changed_with: Some(ChangedWith {
                    path: "app/store.py".to_string(),
                    together: 4,
                    of: 5,
                }),
                ..Found::default()
            },
        );
        let (tests, fixtures, left_out) = rank(found);
        assert!(fixtures.is_empty() && left_out == 0);
        let ids: Vec<&str> = tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "tests/test_store.py",
                "tests/test_names.py",
                "tests/test_near.py"
            ]
        );
        assert_eq!(
            tests[0].evidence,
            [Evidence::Calls, Evidence::Names, Evidence::ChangedWith]
        );
        let likely: Vec<f64> = tests.iter().map(|t| t.confidence.unwrap()).collect();
        assert!(likely.windows(2).all(|w| w[0] >= w[1]), "{likely:?}");
        assert!(likely[0] > likely[2], "{likely:?}");
        for t in &tests {
            assert_eq!(t.first, t.confidence.unwrap() >= FIRST_CONFIDENCE, "{t:?}");
        }
        assert!(tests[0].first && !tests[2].first, "{tests:?}");
    }

    #[test]
    fn a_symbol_goes_by_its_name_and_its_trailing_words() {
        assert_eq!(
            symbol_names("$ZodDiscriminatedUnion"),
            ["zoddiscriminatedunion", "discriminatedunion", "union"]
        );
        assert_eq!(symbol_names("ZodCatch"), ["zodcatch", "catch"]);
        assert_eq!(symbol_names("parse_url"), ["parseurl"]);
        assert_eq!(symbol_names("HTTPServer"), ["httpserver"]);
        // Short and vague names pair with nothing.
        assert!(symbol_names("get").is_empty());
        assert_eq!(symbol_names("buildIndex"), ["buildindex"]);
        assert!(same_name("discriminatedunions", "discriminatedunion"));
        assert!(same_name("url", "urls"));
        assert!(!same_name("url", "urlss"));
        assert!(!same_name("catch", "zodcatch"));
    }

    #[test]
    fn a_test_pairs_with_the_file_it_is_named_for_by_each_languages_convention() {
        let pairs = [
            (
                "src/main/java/a/Parser.java",
                "src/test/java/a/ParserTest.java",
            ),
            ("src/Auth/TokenService.cs", "test/Auth/TokenServiceTests.cs"),
            ("httpx/_client.py", "tests/test_client.py"),
            ("pkg/route_table.go", "pkg/route_table_test.go"),
            ("src/v4/schemas.ts", "src/v4/tests/schemas.test.ts"),
            (
                "lib/http_party/request.rb",
                "spec/http_party/request_spec.rb",
            ),
            (
                "src/Handler/StreamHandler.php",
                "tests/Handler/StreamHandlerTest.php",
            ),
            ("src/buf/chain.rs", "tests/test_chain.rs"),
            ("src/format.h", "test/format-test.cc"),
        ];
        for (source, test) in pairs {
            assert!(
                pairing_name(source, false).is_some()
                    && pairing_name(source, false) == pairing_name(test, true),
                "{source} and {test}"
            );
        }
        // A test file must carry a test affix; a package's or crate's root pairs with nothing.
        assert_eq!(pairing_name("tests/client.py", true), None);
        assert_eq!(pairing_name("tests/test_init.py", true), None);
        assert_eq!(pairing_name("src/lib.rs", false), None);
        // Another name that merely ends like it does not pair.
        assert_ne!(
            pairing_name("src/contest.go", false),
            pairing_name("src/test_test.go", true)
        );
        assert_eq!(shared_folders("a/b/c/x.ts", "a/b/d/y.ts"), 2);
        assert_eq!(shared_folders("x.ts", "a/y.ts"), 0);
    }

    #[test]
    fn mentions_whole_identifiers_only() {
        assert!(mentions_word(
            "    app.dispatch_request()",
            "dispatch_request"
        ));
        assert!(!mentions_word(
            "    app.full_dispatch_request()",
            "dispatch_request"
        ));
        assert!(!mentions_word("dispatch_requests", "dispatch_request"));
    }

    #[test]
    fn why_names_each_kind_of_evidence_in_a_few_words() {
        let found = Found {
            calls: vec![uses("AppContext.pop", &[120])],
            imports: vec![uses("AppContext.pop", &[3]), uses("AppContext", &[3])],
            names: vec![
                uses("pop", &[120, 130]),
                uses("do_teardown_request", &[40, 41, 50, 60]),
            ],
            changed_with: Some(ChangedWith {
                path: "src/flask/ctx.py".to_string(),
                together: 6,
                of: 9,
            }),
            near: Some(nearest(0.72, "AppContext.pop")),
            ..Found::default()
        };
        assert_eq!(found.how(), Evidence::Calls);
        assert_eq!(
            found.why(),
            "calls AppContext.pop (L120); imports AppContext (L3); names do_teardown_request (L40, L41, +2); changed with ctx.py in 6 of 9 commits"
        );
        let near = Found {
            near: Some(nearest(0.61, "Order.total")),
            ..Found::default()
        };
        assert_eq!(near.why(), "near Order.total in the graph (0.61)");
    }

    #[test]
    fn near_only_tests_are_few_beside_stronger_evidence_and_fixtures_stand_apart() {
        let near = |s: f64| Found {
            near: Some(nearest(s, "f")),
            ..Found::default()
        };
        let mut found: HashMap<String, Found> = (0..6)
            .map(|i| {
                (
                    format!("tests/test_near_{i}.py"),
                    near(0.5 - i as f64 / 100.0),
                )
            })
            .collect();
        found.insert(
            "tests/test_named.py".to_string(),
            Found {
                names: vec![uses("f", &[3])],
                ..near(0.1)
            },
        );
        found.insert(
            "tests/conftest.py".to_string(),
            Found {
                names: vec![uses("f", &[9])],
                ..Found::default()
            },
        );
        found.insert("tests/test_apps/app.py".to_string(), near(0.9));
        let (tests, fixtures, left_out) = rank(found);
        let ids: Vec<&str> = tests.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "tests/test_named.py",
                "tests/test_near_0.py",
                "tests/test_near_1.py"
            ]
        );
        assert_eq!(left_out, 4);
        let fixtures: Vec<&str> = fixtures.iter().map(|t| t.id.as_str()).collect();
        assert_eq!(
            fixtures,
            ["tests/conftest.py"],
            "near-only fixtures stay out"
        );
    }
}
