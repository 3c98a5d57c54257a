//! Files a change probably leaves out: those using a symbol it removes or whose signature it
//! alters, and those bound to it by a contract (an interface and its implementations, a type
//! it starts using) — the graph says so — and those that usually change with the changed
//! files (history says so). Test files are none of these: they are among the tests to run.

use std::collections::HashMap;
use std::collections::hash_map::Entry;

use super::briefing::{MissingPartner, PartnerReason};
use super::{Analysis, FileReader, FileReport, SymbolChange, SymbolChangeKind, Use};
use crate::graph::possible::{self, Evidence};
use crate::graph::{Edge, EdgeKind, Graph, NodeKind};
use crate::history::History;
use crate::languages::Registry;

/// How many changed files have their history partners looked up.
pub(crate) const HISTORY_FILES: usize = 5;
/// Most files missing from a change named for each kind of evidence.
const SHOWN: usize = 8;
/// History partners named before the files tied by a contract (the strongest history is the
/// better evidence; weaker history comes after them).
const HISTORY_FIRST: usize = 4;

/// The files missing from the change, each with its reason: users of removed or re-signed
/// symbols first, then the files lacking a member the change uses and those a contract binds
/// to it, then history partners (source files before docs and the like, strongest first)
/// with the types the change starts using and the other sides of contracts after the
/// strongest few; each file once, neither in the change nor a test. `read` gives a
/// repository file's text (None when it is gone or cannot be read).
pub fn missing(
    analysis: &Analysis,
    graph: &Graph,
    history: &History,
    in_change: &[String],
    read: FileReader,
) -> Vec<MissingPartner> {
    let registry = Registry::get();
    let wanted = |path: &str, found: &[MissingPartner]| {
        !in_change.iter().any(|p| p == path)
            && registry.test_kind(path).is_none()
            && !found.iter().any(|p| p.path == path)
    };
    let mut found = users(analysis, graph, &wanted);
    let push = |found: &mut Vec<MissingPartner>, partner: MissingPartner| {
        if wanted(&partner.path, found)
            && (graph.node(&partner.path).is_some() || read(&partner.path).is_some())
        {
            found.push(partner);
        }
    };
    let (lacking, used) = named_on_added_lines(analysis, graph, read);
    for partner in lacking
        .into_iter()
        .chain(contracts(analysis, graph))
        .take(SHOWN)
    {
        push(&mut found, partner);
    }
    let mut history = from_history(analysis, history).into_iter();
    let mut from_history = 0;
    while from_history < HISTORY_FIRST
        && let Some(partner) = history.next()
    {
        let before = found.len();
        push(&mut found, partner);
        from_history += found.len() - before;
    }
    let before = found.len();
    for partner in used {
        if found.len() - before == SHOWN / 2 {
            break;
        }
        push(&mut found, partner);
    }
    for partner in interface_pairs(analysis, graph, &found) {
        push(&mut found, partner);
    }
    for partner in history {
        if from_history == SHOWN {
            break;
        }
        let before = found.len();
        push(&mut found, partner);
        from_history += found.len() - before;
    }
    found
}

/// Files bound to a changed method by a contract: the classes implementing an interface
/// whose method the change adds, removes or re-signs, and the interfaces and base classes
/// declaring a method the change removes or re-signs in a class.
fn contracts(analysis: &Analysis, graph: &Graph) -> Vec<MissingPartner> {
    let mut found = Vec::new();
    for file in &analysis.files {
        for symbol in file.symbols.iter().filter(|s| s.kind == "method") {
            let Some((class, name)) = symbol.id.rsplit_once('.') else {
                continue;
            };
            let Some(class_node) = graph.node(class) else {
                continue;
            };
            let re_signed = symbol.change == SymbolChangeKind::Removed
                || (symbol.change == SymbolChangeKind::Modified && symbol.signature_changed);
            if class_node.kind == NodeKind::Interface {
                if symbol.change == SymbolChangeKind::Modified && !symbol.signature_changed {
                    continue;
                }
                for edge in graph
                    .incoming(class)
                    .filter(|e| e.kind == EdgeKind::Inherits)
                {
                    if let Some(implementer) = graph.node(&edge.src) {
                        found.push(tied(implementer, &file.path, "implements", qualname(class)));
                    }
                }
            } else if re_signed {
                for edge in graph
                    .outgoing(class)
                    .filter(|e| e.kind == EdgeKind::Inherits)
                {
                    let declared = format!("{}.{name}", edge.dst);
                    if let Some(base) = graph.node(&declared) {
                        found.push(tied(base, &file.path, "declares", qualname(&declared)));
                    }
                }
            }
        }
    }
    found
}

/// Members a language gives every type, which no file declares (`Gson.class`,
/// `Color.values()`, `Point::new` from a derive).
const IMPLICIT_MEMBERS: &[&str] = &[
    "class",
    "prototype",
    "constructor",
    "values",
    "valueOf",
    "ordinal",
    "name",
    "length",
    "new",
    "default",
    "from",
    "into",
    "clone",
    "this",
    "super",
    "self",
    "toString",
    "equals",
    "hashCode",
    "getClass",
    // Rust derives.
    "deserialize",
    "serialize",
    "parse",
    "try_from",
    "from_str",
];

/// What the added lines of a change say about the repository's types: members they use that
/// the type's file does not declare yet (`TypeAdapters.BIG_DECIMAL_FACTORY` where
/// `TypeAdapters.java` never mentions it: that file must change too), and types they start
/// using (named on added lines and on none of the removed ones), each type one file of the
/// repository declares as a class or interface, in the order first written.
fn named_on_added_lines(
    analysis: &Analysis,
    graph: &Graph,
    read: FileReader,
) -> (Vec<MissingPartner>, Vec<MissingPartner>) {
    let (mut lacking, mut used) = (Vec::new(), Vec::new());
    // A class's file is read once however many of its members the change uses.
    let texts: std::cell::RefCell<HashMap<String, Option<String>>> = Default::default();
    let read_once = |path: &str| {
        texts
            .borrow_mut()
            .entry(path.to_string())
            .or_insert_with(|| read(path))
            .clone()
    };
    for file in &analysis.files {
        let lines = file
            .symbols
            .iter()
            .flat_map(|s| &s.diff_lines)
            .chain(&file.module_diff);
        let (mut added, mut removed): (Vec<Qualified>, Vec<Qualified>) = (Vec::new(), Vec::new());
        for line in lines {
            let Some((head, text)) = line.split_once(' ') else {
                continue;
            };
            let words = if head.starts_with('+') {
                &mut added
            } else {
                &mut removed
            };
            // A line cut short for the briefing ends in a piece of a name: not a name.
            let text = match text.strip_suffix('…') {
                Some(cut) => cut.trim_end_matches(|c: char| c.is_alphanumeric() || c == '_'),
                None => text,
            };
            words.extend(
                qualified_names(text)
                    .filter(|(w, _)| w.len() >= 3 && w.starts_with(char::is_uppercase)),
            );
        }
        let was_named = |word: &str| removed.iter().any(|(w, _)| *w == word);
        let mut seen = std::collections::HashSet::new();
        for (word, member) in added.iter().copied() {
            if !seen.insert((word, member)) {
                continue;
            }
            let declared: Vec<&crate::graph::Node> = graph
                .symbols_named(word)
                .iter()
                .map(|&i| &*graph.nodes[i as usize])
                .filter(|n| n.name == word && n.kind.is_class_like() && !n.is_test)
                .collect();
            let [node] = declared.as_slice() else {
                continue;
            };
            if *node.path == *file.path {
                continue;
            }
            if let Some(member) = member
                && !removed.contains(&(word, Some(member)))
                && lacks(graph, node, member, &read_once)
            {
                lacking.push(tied(node, &file.path, "lacks", &format!("{word}.{member}")));
            } else if !was_named(word) {
                used.push(tied(node, &file.path, "starts using", word));
            }
        }
    }
    (lacking, used)
}

/// An identifier and the member written right after it, if any (`A.b`, `A::b`).
type Qualified<'a> = (&'a str, Option<&'a str>);

/// Each identifier of a line with the member written right after it.
fn qualified_names(text: &str) -> impl Iterator<Item = Qualified<'_>> {
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(is_ident) {
        let from = &rest[start..];
        let end = from.find(|c: char| !is_ident(c)).unwrap_or(from.len());
        let (word, after) = from.split_at(end);
        let member = after
            .strip_prefix("::")
            .or_else(|| after.strip_prefix('.'))
            .and_then(|m| {
                let end = m.find(|c: char| !is_ident(c)).unwrap_or(m.len());
                (end > 0 && m.starts_with(|c: char| c.is_alphabetic() || c == '_'))
                    .then(|| &m[..end])
            });
        out.push((word, member));
        rest = after;
    }
    out.into_iter()
}

/// Whether a repository class lacks `member`: no symbol of the graph is `Class.member`, and
/// neither the class's file nor those of its repository bases mention it (fields and
/// constants are not symbols); unknown (false) when a file cannot be read.
fn lacks(graph: &Graph, class: &crate::graph::Node, member: &str, read: FileReader) -> bool {
    // Python's `__name__`, `__dict__`: every class has them.
    let dunder = member.len() > 4 && member.starts_with("__") && member.ends_with("__");
    if IMPLICIT_MEMBERS.contains(&member) || dunder {
        return false;
    }
    // A base outside the repository may give the member (`Book.objects` of Django's
    // `models.Model`): whether the class lacks it cannot be known.
    let repo_bases = graph
        .outgoing(&class.id)
        .filter(|e| e.kind == EdgeKind::Inherits)
        .count();
    if repo_bases == 0
        && class
            .signature
            .as_deref()
            .is_some_and(|s| names_a_base(s, &class.name))
    {
        return false;
    }
    // A method declared apart from its class's body (Rust's `impl` blocks, Go's receivers).
    let qualified = format!("{}.{member}", class.name);
    let nested = format!(".{qualified}");
    let declared = graph.symbols_named(member).iter().any(|&i| {
        let id = &graph.nodes[i as usize].id;
        id.split_once("::")
            .is_some_and(|(_, q)| q == qualified || q.ends_with(&nested))
    });
    if declared {
        return false;
    }
    let mut files = vec![class.path.to_string()];
    files.extend(
        graph
            .outgoing(&class.id)
            .filter(|e| e.kind == EdgeKind::Inherits)
            .filter_map(|e| graph.node(&e.dst))
            .map(|base| base.path.to_string()),
    );
    files.iter().all(|path| {
        read(path).is_some_and(|text| {
            !text
                .lines()
                .any(|l| super::evidence::mentions_word(l, member))
        })
    })
}

/// Whether a class's header names a base (`class Book(models.Model)`, `class A extends B`,
/// `class A : B`, `class A < B`); a header with type parameters counts as one too (`class
/// A<T>`), which only makes [`lacks`] more careful.
fn names_a_base(signature: &str, name: &str) -> bool {
    let Some(at) = signature.find(name) else {
        return false;
    };
    let rest = &signature[at + name.len()..];
    rest.trim_start().starts_with(['(', ':', '<'])
        || rest.contains(" extends ")
        || rest.contains(" < ")
}

/// For each class among the files found so far, and among the changed files those whose
/// methods the change adds, removes or re-signs (a change inside a body leaves the contract
/// as it was), its one interface in the repository when nothing else implements it; for each
/// interface there, its one implementation: the two sides of a contract change together.
fn interface_pairs(
    analysis: &Analysis,
    graph: &Graph,
    found: &[MissingPartner],
) -> Vec<MissingPartner> {
    let mut out = Vec::new();
    let surface_changed = |file: &FileReport| {
        file.symbols.iter().any(|s| {
            s.kind == "method" && (s.change != SymbolChangeKind::Modified || s.signature_changed)
        })
    };
    let files = analysis
        .files
        .iter()
        .filter(|f| surface_changed(f))
        .map(|f| (f.path.as_str(), f.path.as_str()))
        .chain(
            found
                .iter()
                .filter(|p| !matches!(p.reason, PartnerReason::Uses { .. }))
                .map(|p| (p.path.as_str(), p.with.as_str())),
        );
    for (path, with) in files {
        for node in graph.symbols_in(path) {
            if node.parent.as_deref() != Some(path) {
                continue;
            }
            if node.kind == NodeKind::Interface {
                let implementers: Vec<&Edge> = graph
                    .incoming(&node.id)
                    .filter(|e| e.kind == EdgeKind::Inherits)
                    .collect();
                if let [only] = implementers.as_slice()
                    && let Some(class) = graph.node(&only.src)
                {
                    out.push(tied(class, with, "implements", &node.name));
                }
            } else if node.kind == NodeKind::Class {
                for edge in graph
                    .outgoing(&node.id)
                    .filter(|e| e.kind == EdgeKind::Inherits)
                {
                    let Some(interface) = graph.node(&edge.dst) else {
                        continue;
                    };
                    let sole = graph
                        .incoming(&interface.id)
                        .filter(|e| e.kind == EdgeKind::Inherits)
                        .count()
                        == 1;
                    if interface.kind == NodeKind::Interface && sole {
                        out.push(tied(interface, with, "interface of", &node.name));
                    }
                }
            }
        }
    }
    out
}

/// The file of `node`, tied to the changed file `with` by `how` through `symbol`.
fn tied(node: &crate::graph::Node, with: &str, how: &'static str, symbol: &str) -> MissingPartner {
    MissingPartner {
        path: node.path.to_string(),
        with: with.to_string(),
        reason: PartnerReason::Tied {
            symbol: symbol.to_string(),
            how,
        },
    }
}

/// `Store.save` of `src/store.py::Store.save`.
fn qualname(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, q)| q)
}

/// Files whose symbols call, import or override a symbol the change removes or re-signs (or
/// call a method of its name on a receiver that reads as its class), in the order of the
/// changed symbols and their users (strongest first), up to [`SHOWN`].
fn users(
    analysis: &Analysis,
    graph: &Graph,
    wanted: &dyn Fn(&str, &[MissingPartner]) -> bool,
) -> Vec<MissingPartner> {
    let mut found: Vec<MissingPartner> = Vec::new();
    for file in &analysis.files {
        for symbol in &file.symbols {
            let change = match symbol.change {
                SymbolChangeKind::Removed => "removed",
                SymbolChangeKind::Modified if symbol.signature_changed => "signature",
                _ => continue,
            };
            let Some((_, qualname)) = symbol.id.split_once("::") else {
                continue;
            };
            let imports: &[Use] = if change == "removed" {
                &symbol.importers
            } else {
                &[]
            };
            let uses = symbol
                .callers
                .iter()
                .map(|u| ("calls", u.id.clone()))
                .chain(imports.iter().map(|u| ("imports", u.id.clone())))
                .chain(
                    overriders(graph, symbol)
                        .into_iter()
                        .map(|id| ("overrides", id)),
                )
                .chain(likely_callers(graph, symbol).map(|id| ("may call", id)));
            for (how, user) in uses {
                let Some(node) = graph.node(&user) else {
                    continue;
                };
                if found.len() == SHOWN {
                    return found;
                }
                if wanted(&node.path, &found) {
                    found.push(MissingPartner {
                        path: node.path.to_string(),
                        with: file.path.clone(),
                        reason: PartnerReason::Uses {
                            symbol: qualname.to_string(),
                            how,
                            change,
                        },
                    });
                }
            }
        }
    }
    found
}

/// The callers of a changed method whose receiver's type is unknown but reads as its class
/// (named like it, or returned by one of its methods): the possible callers
/// ([`possible::possible_callers`]) with evidence about the receiver itself, strongest first.
fn likely_callers(graph: &Graph, symbol: &SymbolChange) -> impl Iterator<Item = String> {
    let mut likely: Vec<(u32, String)> = graph
        .node(&symbol.id)
        .map(|method| possible::possible_callers(graph, method))
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p.evidence
                .iter()
                .any(|e| matches!(e, Evidence::NamedLike { .. } | Evidence::ReturnedBy { .. }))
        })
        .map(|p| (p.weight(), p.caller.id.to_string()))
        .collect();
    likely.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    likely.into_iter().map(|(_, id)| id)
}

/// The methods of the same name in the direct subclasses of a changed method's class.
fn overriders(graph: &Graph, symbol: &SymbolChange) -> Vec<String> {
    let Some((class, name)) = symbol
        .id
        .rsplit_once('.')
        .filter(|_| symbol.kind == "method")
    else {
        return Vec::new();
    };
    graph
        .incoming(class)
        .filter(|e| e.kind == EdgeKind::Inherits)
        .map(|e| format!("{}.{name}", e.src))
        .filter(|id| graph.node(id).is_some())
        .collect()
}

/// Files that changed with the first [`HISTORY_FILES`] changed files, each weighed by
/// [`History::partners`] and summed over the changed files it goes with (its `with` the one
/// it goes with most); source files first, then the others (docs, changelogs), strongest
/// first.
fn from_history(analysis: &Analysis, history: &History) -> Vec<MissingPartner> {
    // Each path's summed weight, its strongest weight and the partner made of that.
    let mut by_path: HashMap<String, (f64, f64, MissingPartner)> = HashMap::new();
    for file in analysis.files.iter().take(HISTORY_FILES) {
        for partner in history.partners(&file.path) {
            let weight = partner.weight;
            let candidate = MissingPartner {
                path: partner.path.clone(),
                with: file.path.clone(),
                reason: PartnerReason::History {
                    support: partner.support,
                    of: partner.of,
                    confidence: partner.confidence,
                    weight: (weight * 100.0).round() / 100.0,
                },
            };
            match by_path.entry(partner.path) {
                Entry::Vacant(v) => {
                    v.insert((weight, weight, candidate));
                }
                Entry::Occupied(mut o) => {
                    let (sum, strongest, kept) = o.get_mut();
                    *sum += weight;
                    // The changed file it goes with most names it.
                    if weight > *strongest {
                        *strongest = weight;
                        *kept = candidate;
                    }
                }
            }
        }
    }
    let registry = Registry::get();
    let mut ranked: Vec<(f64, MissingPartner)> = by_path
        .into_values()
        .map(|(sum, _, partner)| (sum, partner))
        .collect();
    ranked.sort_by(|(a, pa), (b, pb)| {
        let source = |p: &MissingPartner| registry.for_path(&p.path).is_none();
        source(pa)
            .cmp(&source(pb))
            .then_with(|| b.total_cmp(a))
            .then_with(|| pa.path.cmp(&pb.path))
    });
    ranked.into_iter().map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::history::CommitInfo;
    use crate::review::{ChangeKind, FileReport};

    fn changed(path: &str) -> FileReport {
        FileReport {
            path: path.to_string(),
            old_path: None,
            change: ChangeKind::Modified,
            added: 1,
            removed: 1,
            binary: false,
            language: Some("python".to_string()),
            indexed: true,
            symbols: Vec::new(),
            module_lines: Vec::new(),
            effects_added: Vec::new(),
            effects_removed: Vec::new(),
            notes: Vec::new(),
            module_diff: Vec::new(),
        }
    }

    fn commit(id: &str, days_ago: i64, files: &[&str]) -> CommitInfo {
        CommitInfo {
            id: id.to_string(),
            time: 1_000_000_000 - days_ago * 86_400,
            author: "a@x".to_string(),
            name: "A".to_string(),
            summary: format!("Change {id}"),
            fix: false,
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn history_partners_add_up_over_the_changed_files_and_leave_out_tests_and_the_change() {
        let history = History::new(vec![
            commit("1", 3, &["app/a.py", "app/shared.py"]),
            commit("2", 2, &["app/b.py", "app/shared.py", "CHANGES.md"]),
            commit("3", 1, &["app/a.py", "app/only_a.py", "tests/test_a.py"]),
            commit("4", 0, &["app/a.py", "app/b.py"]),
        ]);
        let analysis = Analysis {
            files: vec![changed("app/a.py"), changed("app/b.py")],
            ..Analysis::default()
        };
        let graph = Graph::default();
        let in_change = ["app/a.py".to_string(), "app/b.py".to_string()];
        let found = missing(&analysis, &graph, &history, &in_change, &|p| {
            (p != "app/gone.py").then(String::new)
        });
        let listed: Vec<(&str, &str)> = found
            .iter()
            .map(|p| (p.path.as_str(), p.with.as_str()))
            .collect();
        // shared.py goes with both changed files (their weights add up) and is named with the
        // one it goes with most (two fifths of a.py's weighted commits, a third of b.py's);
        // the changelog comes after the source files; the test and the change are left out.
        assert_eq!(
            listed,
            [
                ("app/shared.py", "app/a.py"),
                ("app/only_a.py", "app/a.py"),
                ("CHANGES.md", "app/b.py"),
            ],
            "{found:?}"
        );
        assert!(
            found
                .iter()
                .all(|p| matches!(p.reason, PartnerReason::History { .. }))
        );
        // A partner that no longer exists is not named.
        let gone = History::new(vec![commit("1", 0, &["app/a.py", "app/gone.py"])]);
        let found = missing(&analysis, &graph, &gone, &in_change, &|p| {
            (p != "app/gone.py").then(String::new)
        });
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn history_partners_keep_their_order_and_none_is_lost_around_the_contracts() {
        // Six partners, the newest strongest: named in that order, the fifth included (the
        // first four come before the files tied by contracts, the rest after them).
        let history = History::new(
            (1..=6)
                .map(|i| {
                    let partner = format!("app/p{i}.py");
                    commit(&i.to_string(), i, &["app/a.py", partner.as_str()])
                })
                .collect(),
        );
        let analysis = Analysis {
            files: vec![changed("app/a.py")],
            ..Analysis::default()
        };
        let found = missing(
            &analysis,
            &Graph::default(),
            &history,
            &["app/a.py".to_string()],
            &|_| Some(String::new()),
        );
        let paths: Vec<&str> = found.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "app/p1.py",
                "app/p2.py",
                "app/p3.py",
                "app/p4.py",
                "app/p5.py",
                "app/p6.py"
            ]
        );
    }

    /// The briefing's partners for a diff of a small Java repository (graph built as an index
    /// builds it, no history).
    fn partners_of(diff: &str) -> Vec<(String, String)> {
        let sources = [
            (
                "src/Store.java",
                "interface Store {\n    void save(String key);\n}\n",
            ),
            (
                "src/DiskStore.java",
                "class DiskStore implements Store {\n    public void save(String key) {}\n}\n",
            ),
            (
                "src/MemoryStore.java",
                "class MemoryStore implements Store {\n    public void save(String key) {}\n}\n",
            ),
            ("src/Clock.java", "interface Clock {\n    long now();\n}\n"),
            (
                "src/SystemClock.java",
                "class SystemClock implements Clock {\n    public long now() { return 0; }\n}\n",
            ),
            ("src/Queue.java", "class Queue {}\n"),
            ("src/a/Queue.java", "class Queue {}\n"),
            (
                "src/Limits.java",
                "class Limits {\n    static final int MAX = 3;\n}\n",
            ),
            ("src/Book.java", "class Book extends Model {}\n"),
            (
                "src/Service.java",
                "class Service {\n    void run() {\n        Store s = null;\n    }\n}\n",
            ),
        ];
        let graph = crate::context::testing::graph_of(&sources);
        let mut changes = crate::review::diff::parse(diff).unwrap();
        // Both sides' texts, as a review of the working tree has them.
        for change in &mut changes {
            let (_, old) = sources.iter().find(|(p, _)| *p == change.path()).unwrap();
            change.new_text = crate::review::diff::reconstruct(change, old, false);
            change.old_text = Some(old.to_string());
        }
        let analysis = crate::review::analyse(
            &changes,
            &graph,
            &|_| 0.0,
            &|_| None,
            &History::new(Vec::new()),
        );
        let in_change: Vec<String> = changes.iter().map(|c| c.path().to_string()).collect();
        let read = |path: &str| {
            let (_, text) = sources.iter().find(|(p, _)| *p == path)?;
            Some(text.to_string())
        };
        missing(
            &analysis,
            &graph,
            &History::new(Vec::new()),
            &in_change,
            &read,
        )
        .into_iter()
        .map(|p| match p.reason {
            PartnerReason::Tied { symbol, how } => (p.path, format!("{how} {symbol}")),
            other => panic!("only contracts are known here: {other:?}"),
        })
        .collect()
    }

    fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
        expected
            .iter()
            .map(|(path, why)| (path.to_string(), why.to_string()))
            .collect()
    }

    /// A diff of `Service.run` whose one line `Store s = null;` becomes the `added` lines.
    fn service_change(added: &str) -> String {
        let new_lines = 4 + added.lines().count();
        format!(
            "diff --git a/src/Service.java b/src/Service.java\n\
             --- a/src/Service.java\n+++ b/src/Service.java\n\
             @@ -1,5 +1,{new_lines} @@\n class Service {{\n     void run() {{\n\
             -        Store s = null;\n{added}     }}\n }}\n"
        )
    }

    #[test]
    fn a_method_added_to_an_interface_names_every_implementation_missing_from_the_change() {
        let found = partners_of(
            "diff --git a/src/Store.java b/src/Store.java\n\
             --- a/src/Store.java\n+++ b/src/Store.java\n\
             @@ -1,3 +1,4 @@\n interface Store {\n     void save(String key);\n\
             +    void load(String key);\n }\n",
        );
        assert_eq!(
            found,
            pairs(&[
                ("src/DiskStore.java", "implements Store"),
                ("src/MemoryStore.java", "implements Store"),
            ])
        );
    }

    /// A diff of `SystemClock` whose method `now` becomes `method`.
    fn clock_change(method: &str) -> String {
        format!(
            "diff --git a/src/SystemClock.java b/src/SystemClock.java\n\
             --- a/src/SystemClock.java\n+++ b/src/SystemClock.java\n\
             @@ -1,3 +1,3 @@\n class SystemClock implements Clock {{\n\
             -    public long now() {{ return 0; }}\n\
             +    {method}\n }}\n"
        )
    }

    #[test]
    fn a_method_re_signed_in_a_class_names_the_interface_that_declares_it() {
        let found = partners_of(&clock_change("public long now(int zone) { return 0; }"));
        assert_eq!(found, pairs(&[("src/Clock.java", "declares Clock.now")]));
    }

    #[test]
    fn a_change_inside_a_method_body_leaves_the_contract_alone() {
        let found = partners_of(&clock_change("public long now() { return 1; }"));
        assert_eq!(found, pairs(&[]));
    }

    #[test]
    fn a_type_the_change_starts_using_is_named_with_the_other_side_of_its_contract() {
        // SystemClock is newly written; Clock has no other implementation, so it goes too.
        // Store was already used (on a removed line): not new. Queue is declared twice: which
        // one is meant is not known. Service itself is in the change.
        let found = partners_of(&service_change(
            "+        Store s = new Queue();\n\
             +        Service again = new SystemClock(); // SystemClock\n",
        ));
        assert_eq!(
            found,
            pairs(&[
                ("src/SystemClock.java", "starts using SystemClock"),
                ("src/Clock.java", "interface of SystemClock"),
            ])
        );
    }

    #[test]
    fn a_member_the_change_uses_that_its_class_lacks_names_the_class_file() {
        // Limits.MIN is nowhere in Limits.java: the change is incomplete without it. MAX is
        // there (a field, not a symbol of the graph), values() every enum has, and Store.save
        // is a method of the graph: none of those is lacking.
        let found = partners_of(&service_change(
            "+        Store s = null; s.save(Limits.MAX, Limits.values(), Store.save);\n\
             +        int low = Limits.MIN;\n",
        ));
        assert_eq!(found, pairs(&[("src/Limits.java", "lacks Limits.MIN")]));
        // A class whose base is outside the repository may have anything from it: `objects`
        // is not known to be lacking (Django's models have it from `models.Model`).
        assert_eq!(
            partners_of(&service_change("+        Store s = Book.objects;\n")),
            pairs(&[("src/Book.java", "starts using Book")])
        );
        assert!(names_a_base("class Book(models.Model):", "Book"));
        assert!(names_a_base("public class Shelf extends Base", "Shelf"));
        assert!(names_a_base("class Shelf : DbContext", "Shelf"));
        assert!(names_a_base("class Shelf < ApplicationRecord", "Shelf"));
        assert!(!names_a_base(
            "public final class TypeAdapters",
            "TypeAdapters"
        ));
        // A line the briefing cuts short (160 bytes) in the middle of `Limits.MAX` does not
        // read as a use of a `Limits.MA` it lacks, only of `Limits`.
        let long = format!("+{:<151}Limits.MAX;\n", "        int low = 0; //");
        assert_eq!(
            partners_of(&service_change(&long)),
            pairs(&[("src/Limits.java", "starts using Limits")])
        );
    }
}
