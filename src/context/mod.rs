//! What cairn serves: the ranked context pack (`get_context`) and everything known about one
//! node (`expand`), as compact Markdown for the model plus a structured report for programs,
//! both bounded by a token budget (each an [`Answer`](crate::answer::Answer)). Pure: the
//! caller supplies the graph, facts and clock.

mod expand;
mod lexical;
mod lexicon;
mod pack;
mod standing;
mod target;

use std::collections::HashMap;

use serde::Serialize;

use crate::graph::rank;
use crate::graph::score::{Access, Score, node_score};
use crate::graph::{Graph, Node, NodeKind, impact, impact_link};

pub use expand::{
    ExpandBody, ExpandReport, Include, Known, Link, PossibleCaller, expand, lines_note,
};
pub use lexicon::Lexicon;
pub use pack::{ContextBody, ContextReport, FocusRequest, Freshness, Ranked, context};
pub use standing::Standing;
pub use target::{TargetError, normalise, resolve_target};

/// A memory as the context pack and expansions show it.
#[derive(Debug, Clone, Serialize)]
pub struct MemoryNote {
    pub id: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub content: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub anchors: Vec<String>,
    /// A commit that changed the anchored code after the memory was written.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_changed_since: Option<CodeChanged>,
    /// `org` for a memory of the organisation's scope (absent for the repository's own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The repository an organisation memory's anchors are in, when it is another than the
    /// one answering: they name that repository's files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

impl MemoryNote {
    /// The line it takes in a text answer: `- [type] id: content (anchors)` (`[type · org]`
    /// for the organisation's memories, `(from <origin>: anchors)` for anchors in another
    /// repository), then ` · code changed since: <commit> (<path>)` when it applies. The id
    /// marks the text as served by cairn, so an assistant echoing it back is not taken as
    /// new learning.
    pub fn line(&self) -> String {
        let anchors = anchor_list(&self.anchors, self.origin.as_deref());
        let changed = self
            .code_changed_since
            .as_ref()
            .map_or_else(String::new, |c| format!(" · {}", c.fact()));
        let scope = self
            .scope
            .as_ref()
            .map_or_else(String::new, |s| format!(" · {s}"));
        format!(
            "- [{}{scope}] {}: {}{anchors}{changed}",
            self.kind, self.id, self.content
        )
    }
}

/// A memory's anchors as a line shows them after its text: ` (a, b)`, ` (from <origin>: a,
/// b)` when they are in another repository, nothing without anchors.
pub fn anchor_list<S: AsRef<str>>(anchors: &[S], origin: Option<&str>) -> String {
    if anchors.is_empty() {
        return String::new();
    }
    let listed: Vec<&str> = anchors.iter().map(AsRef::as_ref).collect();
    match origin {
        Some(origin) => format!(" (from {origin}: {})", listed.join(", ")),
        None => format!(" ({})", listed.join(", ")),
    }
}

/// A commit that changed a memory's anchored code after the memory was written: the memory
/// may no longer hold and is flagged, never silently trusted.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct CodeChanged {
    /// The commit id, shortened to 10 characters.
    pub commit: String,
    /// The anchored file or folder it changed.
    pub path: String,
    /// Commit time, seconds since the epoch.
    pub time: i64,
}

impl CodeChanged {
    /// The newest commit after the memory's text was written that changed one of its
    /// anchored files or folders, if any.
    pub fn of(
        history: &crate::history::History,
        paths: &[&str],
        stated_at_ms: i64,
    ) -> Option<CodeChanged> {
        let after = stated_at_ms.div_euclid(1000);
        paths
            .iter()
            .filter_map(|path| history.changed_after(path, after).map(|c| (path, c)))
            .max_by(|(_, a), (_, b)| a.time.cmp(&b.time).then_with(|| b.id.cmp(&a.id)))
            .map(|(path, c)| CodeChanged {
                commit: c.id.chars().take(10).collect(),
                path: path.to_string(),
                time: c.time,
            })
    }

    /// How an answer says it: `code changed since: <commit> (<path>)`.
    pub fn fact(&self) -> String {
        format!("code changed since: {} ({})", self.commit, self.path)
    }
}

/// The default budget of the context pack.
pub const DEFAULT_CONTEXT_TOKENS: usize = 4_000;
/// The default budget of an expansion.
pub const DEFAULT_EXPAND_TOKENS: usize = 2_500;

/// A score's parts, for programs.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ScoreParts {
    pub total: f64,
    pub recency: f64,
    pub frequency: f64,
    pub centrality: f64,
    pub side_effect_cost: f64,
}

impl From<Score> for ScoreParts {
    fn from(s: Score) -> Self {
        let round = |x: f64| (x * 1000.0).round() / 1000.0;
        ScoreParts {
            total: round(s.total()),
            recency: round(s.recency),
            frequency: round(s.frequency),
            centrality: round(s.centrality),
            side_effect_cost: round(s.side_effect_cost),
        }
    }
}

/// Scores every node once for an answer.
pub struct Scorer<'a> {
    graph: &'a Graph,
    /// Use by node position, so a pass over every node hashes no id (ids no node has are
    /// left out: nothing scores them).
    access_at: rustc_hash::FxHashMap<usize, Access>,
    now: i64,
    /// The graph's standing, when the caller has it: a pack without a focus then reads only
    /// the nodes it shows.
    standing: Option<&'a Standing>,
    /// The graph's lexicon, when the caller has it: a focus's words are then looked up, not
    /// matched against every node.
    lexicon: Option<&'a Lexicon>,
}

impl<'a> Scorer<'a> {
    pub fn new(graph: &'a Graph, access: &HashMap<String, Access>, now: i64) -> Self {
        let access_at = access
            .iter()
            .filter_map(|(id, &use_)| Some((graph.node_index(id)?, use_)))
            .collect();
        Scorer {
            graph,
            access_at,
            now,
            standing: None,
            lexicon: None,
        }
    }

    /// This scorer with the graph's standing ([`Standing::of`] of the same graph).
    pub fn with_standing(self, standing: &'a Standing) -> Self {
        Scorer {
            standing: Some(standing),
            ..self
        }
    }

    /// This scorer with the graph's lexicon ([`Lexicon::of`] of the same graph).
    pub fn with_lexicon(self, lexicon: &'a Lexicon) -> Self {
        Scorer {
            lexicon: Some(lexicon),
            ..self
        }
    }

    /// The graph's standing, if the caller gave it.
    pub(crate) fn standing(&self) -> Option<&'a Standing> {
        self.standing
    }

    /// The graph's lexicon, if the caller gave it.
    pub(crate) fn lexicon(&self) -> Option<&'a Lexicon> {
        self.lexicon
    }

    /// The score of one of the graph's nodes.
    pub fn score(&self, node: &Node) -> Score {
        let access = if self.access_at.is_empty() {
            None
        } else {
            self.graph
                .node_index(&node.id)
                .and_then(|i| self.access_at.get(&i))
        };
        node_score(node, access.copied().unwrap_or_default(), self.now)
    }

    /// The score of the node at position `at` of the graph.
    pub(crate) fn score_at(&self, at: usize) -> Score {
        let access = self.access_at.get(&at).copied().unwrap_or_default();
        node_score(&self.graph.nodes[at], access, self.now)
    }

    pub fn graph(&self) -> &'a Graph {
        self.graph
    }

    /// The clock the scores are taken at.
    pub(crate) fn now(&self) -> i64 {
        self.now
    }

    /// The positions of the nodes assistants used (those with a frequency or a use's recency).
    pub(crate) fn used(&self) -> impl Iterator<Item = usize> + '_ {
        self.access_at.keys().copied()
    }
}

/// Nodes a change at the node at `at` can affect directly (its dependents over causal edges),
/// by position, ascending (which is by id).
fn direct_dependents_at(graph: &Graph, at: usize) -> Vec<usize> {
    let kind_of = |i: usize| graph.nodes.get(i).map_or(NodeKind::External, |n| n.kind);
    let mut out: Vec<usize> = graph
        .links_at(at)
        .filter_map(|l| {
            let (from, _) = impact(l.edge, kind_of(l.src))?;
            // `from` is one of the edge's ends: its source's text or its destination's.
            let (from, to) = if std::ptr::eq(from, &*l.edge.src) {
                (l.src, l.dst)
            } else {
                (l.dst, l.src)
            };
            (from == at).then_some(to)
        })
        .filter(|&to| kind_of(to) != NodeKind::External)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Every node reachable downstream of `id` (its blast radius), nearest first.
pub fn blast_radius<'g>(graph: &'g Graph, id: &str) -> Vec<&'g str> {
    nearest_dependents(graph, id, usize::MAX)
}

/// The nearest `limit` nodes of a blast radius, nearest first (breadth first).
/// Walked by node position (nodes are sorted by id, so each node's dependents go by id).
pub fn nearest_dependents<'g>(graph: &'g Graph, id: &str, limit: usize) -> Vec<&'g str> {
    nearest_dependents_at(graph, id, limit)
        .into_iter()
        .map(|i| &*graph.nodes[i].id)
        .collect()
}

/// [`nearest_dependents`] by node position.
pub(crate) fn nearest_dependents_at(graph: &Graph, id: &str, limit: usize) -> Vec<usize> {
    let Some(start) = graph.node_index(id) else {
        return Vec::new();
    };
    let mut seen: rustc_hash::FxHashSet<usize> = rustc_hash::FxHashSet::from_iter([start]);
    let mut order = Vec::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(current) = queue.pop_front() {
        for next in direct_dependents_at(graph, current) {
            if order.len() >= limit {
                return order;
            }
            if seen.insert(next) {
                order.push(next);
                queue.push_back(next);
            }
        }
    }
    order
}

/// A dependent of a node, and how strongly a change at the node reaches it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dependent<'g> {
    pub id: &'g str,
    /// The product of the link strengths along the strongest path to it: 0.85 for a direct
    /// use, 0.85² two uses away, 0.21 over a method-to-class or file-to-definition link.
    pub strength: f64,
}

/// Dependents weaker than this are not listed: a chain of more than a dozen uses, or a class's
/// other users (or a file's other definitions) more than four uses further on.
pub(crate) const MIN_STRENGTH: f64 = 0.1;

/// Up to `limit` dependents of `id`, strongest first and, among equally strong ones, those
/// with the higher impact first: direct callers, importers, subclasses and tests before
/// anything further away, and the users of a method's class (which only stand in for its
/// unresolved callers) after real uses. Dependents weaker than [`MIN_STRENGTH`] are left out.
pub fn strongest_dependents<'g>(graph: &'g Graph, id: &str, limit: usize) -> Vec<Dependent<'g>> {
    dependents(graph, walk_dependents(graph, id, limit, None))
}

/// Walked dependents (position, strength key) as [`Dependent`]s.
fn dependents(graph: &Graph, walked: Vec<(usize, u64)>) -> Vec<Dependent<'_>> {
    walked
        .into_iter()
        .map(|(i, key)| Dependent {
            id: &graph.nodes[i].id,
            strength: key as f64 / STRENGTH_SCALE,
        })
        .collect()
}

/// The first `want` of [`strongest_dependents`] that `keep` admits, found without walking
/// further than they need: once `want` kept dependents are settled, only those exactly as
/// strong are still taken (their impact may put them first) and no dependent is followed on,
/// since every link weakens what it reaches.
pub fn strongest_dependents_kept<'g>(
    graph: &'g Graph,
    id: &str,
    limit: usize,
    want: usize,
    keep: &dyn Fn(&Node) -> bool,
) -> Vec<Dependent<'g>> {
    let mut found = walk_dependents(graph, id, limit, Some((want, keep)));
    found.retain(|d| keep(&graph.nodes[d.0]));
    found.truncate(want);
    dependents(graph, found)
}

/// How many dependents a walk wants, and which it keeps.
type Enough<'k> = (usize, &'k dyn Fn(&Node) -> bool);

/// The walk of [`strongest_dependents`] by position, with each dependent's strength key,
/// ended early once `enough` kept dependents are known.
fn walk_dependents(
    graph: &Graph,
    id: &str,
    limit: usize,
    enough: Option<Enough>,
) -> Vec<(usize, u64)> {
    // Walked by node position (nodes are sorted by id, so ties go as they would by id).
    let Some(start) = graph.node_index(id) else {
        return Vec::new();
    };
    let mut kept = 0;
    // The strength of the last of the first `enough` kept dependents, once settled.
    let mut cut: Option<u64> = None;
    let nodes = &graph.nodes;
    let mut best: rustc_hash::FxHashMap<usize, u64> =
        rustc_hash::FxHashMap::from_iter([(start, strength_key(1.0))]);
    let mut queue = std::collections::BinaryHeap::from([(strength_key(1.0), start)]);
    let mut settled: Vec<(u64, usize)> = Vec::new();
    while let Some((key, current)) = queue.pop() {
        if best.get(&current).is_some_and(|&b| b > key) {
            continue;
        }
        let strength = key as f64 / STRENGTH_SCALE;
        if cut.is_some_and(|cut| key < cut) {
            break;
        }
        if current != start {
            settled.push((key, current));
            if settled.len() >= limit {
                break;
            }
            if let Some((want, keep)) = enough
                && cut.is_none()
                && keep(&nodes[current])
            {
                kept += 1;
                if kept >= want {
                    cut = Some(key);
                }
            }
        }
        // Past the cut only dependents as strong are wanted, and a link reaches none.
        if cut.is_some() {
            continue;
        }
        for crate::graph::Link {
            edge,
            src: s,
            dst: d,
            ..
        } in graph.links_at(current)
        {
            let Some((from, to, link)) = impact_link(edge, nodes[s].kind) else {
                continue;
            };
            // Which end is which: `impact_link` hands back the edge's own ids.
            let at = |end: &str| {
                if std::ptr::eq(end, &*edge.src) { s } else { d }
            };
            let (from, to) = (at(from), at(to));
            let reached = strength * rank::link_strength(link);
            if from != current || reached < MIN_STRENGTH || nodes[to].kind == NodeKind::External {
                continue;
            }
            let key = strength_key(reached);
            if best.get(&to).is_none_or(|&b| b < key) {
                best.insert(to, key);
                queue.push((key, to));
            }
        }
    }
    settled.sort_by(|&(ka, a), &(kb, b)| {
        kb.cmp(&ka)
            .then_with(|| nodes[b].impact.total_cmp(&nodes[a].impact))
            .then_with(|| a.cmp(&b))
    });
    settled.into_iter().map(|(key, i)| (i, key)).collect()
}

/// Strengths compared as integers: paths over the same links in another order are equally
/// strong, whatever the rounding of their products.
const STRENGTH_SCALE: f64 = 1e9;

fn strength_key(strength: f64) -> u64 {
    (strength * STRENGTH_SCALE).round() as u64
}

/// `path:12-40` style location of a node.
pub fn location(node: &Node) -> String {
    if node.start_line == node.end_line {
        format!("L{}", node.start_line)
    } else {
        format!("L{}-{}", node.start_line, node.end_line)
    }
}

/// Graphs built from small Python sources, for the tests of what is served.
#[cfg(test)]
pub(crate) mod testing {
    use crate::graph::{self, Graph, SourceFile};
    use crate::languages::Registry;

    /// The graph of `files` (path, source), as an index of them would build it.
    pub fn graph_of(files: &[(&str, &str)]) -> Graph {
        let registry = Registry::get();
        let sources: Vec<SourceFile> = files
            .iter()
            .map(|(path, text)| {
                let language = registry.for_path(path).expect("a language cairn parses");
                SourceFile {
                    path: path.to_string(),
                    language: language.shared_name(),
                    hash: String::new(),
                    size: text.len() as u64,
                    last_change: 0,
                    is_test: language.is_test_path(path),
                    extract: crate::extract::extract(language, text),
                }
            })
            .collect();
        let refs: Vec<&SourceFile> = sources.iter().collect();
        graph::build(&refs, &[]).0
    }

    /// A shop: pricing (reads the environment), a view calling it, and a test asserting on it.
    pub fn shop() -> Graph {
        graph_of(&[
            (
                "shop/pricing.py",
                "import os\n\ndef price_of(item):\n    return item * 2\n\ndef discount():\n    return float(os.getenv(\"DISCOUNT\", \"0\"))\n",
            ),
            (
                "shop/views.py",
                "from shop.pricing import price_of\n\ndef checkout(items):\n    return sum(price_of(i) for i in items)\n",
            ),
            (
                "tests/test_pricing.py",
                "from shop.pricing import price_of\n\ndef test_price():\n    assert price_of(1) == 2\n",
            ),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::testing::graph_of;
    use super::*;

    #[test]
    fn a_memory_anchored_in_another_repository_says_where() {
        let mut note = MemoryNote {
            id: "m_0000000000000001".to_string(),
            kind: "rejection_pattern".to_string(),
            content: "Close the session.".to_string(),
            anchors: vec!["src/app.py".to_string(), "*.py".to_string()],
            code_changed_since: None,
            scope: Some("org".to_string()),
            origin: None,
        };
        assert_eq!(
            note.line(),
            "- [rejection_pattern · org] m_0000000000000001: Close the session. (src/app.py, *.py)"
        );
        note.origin = Some("github.com/acme/one".to_string());
        assert_eq!(
            note.line(),
            "- [rejection_pattern · org] m_0000000000000001: Close the session. (from github.com/acme/one: src/app.py, *.py)"
        );
        assert_eq!(anchor_list::<&str>(&[], Some("github.com/acme/one")), "");
    }

    #[test]
    fn a_score_by_position_counts_the_same_use_as_by_id() {
        let graph = testing::shop();
        let used = "shop/pricing.py::price_of";
        let access = HashMap::from([
            (
                used.to_string(),
                Access {
                    count: 5,
                    last: 100,
                },
            ),
            ("gone.py::f".to_string(), Access { count: 9, last: 50 }),
        ]);
        let scorer = Scorer::new(&graph, &access, 1_000);
        for (i, node) in graph.nodes.iter().enumerate() {
            assert_eq!(scorer.score_at(i), scorer.score(node), "{}", node.id);
        }
        let at = graph.node_index(used).unwrap();
        assert!(scorer.score_at(at).frequency > 0.0);
    }

    /// The walk by id, as `strongest_dependents` was written before it walked by position.
    fn strongest_dependents_by_id<'g>(
        graph: &'g Graph,
        id: &str,
        limit: usize,
    ) -> Vec<(String, u64)> {
        let Some(start) = graph.node(id) else {
            return Vec::new();
        };
        let kind_of = |id: &str| graph.node(id).map_or(NodeKind::External, |n| n.kind);
        let mut best: HashMap<&'g str, u64> = HashMap::from([(&*start.id, strength_key(1.0))]);
        let mut queue = std::collections::BinaryHeap::from([(strength_key(1.0), &*start.id)]);
        let mut settled: Vec<(&str, u64)> = Vec::new();
        while let Some((key, current)) = queue.pop() {
            if best.get(current).is_some_and(|&b| b > key) {
                continue;
            }
            let strength = key as f64 / STRENGTH_SCALE;
            if current != &*start.id {
                settled.push((current, key));
                if settled.len() >= limit {
                    break;
                }
            }
            let links = graph.incoming(current).chain(graph.outgoing(current));
            for (from, to, link) in links.filter_map(|e| impact_link(e, kind_of(&e.src))) {
                let reached = strength * rank::link_strength(link);
                if from != current || reached < MIN_STRENGTH || kind_of(to) == NodeKind::External {
                    continue;
                }
                let key = strength_key(reached);
                if best.get(to).is_none_or(|&b| b < key) {
                    best.insert(to, key);
                    queue.push((key, to));
                }
            }
        }
        let impact = |id: &str| graph.node(id).map_or(1.0, |n| n.impact);
        settled.sort_by(|a, b| {
            b.1.cmp(&a.1)
                .then_with(|| impact(b.0).total_cmp(&impact(a.0)))
                .then_with(|| a.0.cmp(b.0))
        });
        settled
            .into_iter()
            .map(|(id, key)| (id.to_string(), key))
            .collect()
    }

    /// Walking by position finds the same dependents in the same order as walking by id,
    /// on random graphs of files, classes, methods and outside modules.
    /// Nodes a change at `id` can affect directly, found by id (the reference for
    /// [`direct_dependents_at`]).
    fn direct_dependents_by_id<'g>(graph: &'g Graph, id: &str) -> Vec<&'g str> {
        let kind_of = |id: &str| graph.node(id).map_or(NodeKind::External, |n| n.kind);
        let mut out: Vec<&str> = graph
            .incoming(id)
            .chain(graph.outgoing(id))
            .filter_map(|e| {
                let (from, to) = impact(e, kind_of(&e.src))?;
                (from == id).then_some(to)
            })
            .filter(|to| kind_of(to) != NodeKind::External)
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// The nearest dependents, breadth first by id (the reference for [`nearest_dependents`]).
    fn nearest_dependents_by_id<'g>(graph: &'g Graph, id: &str, limit: usize) -> Vec<&'g str> {
        let Some(start) = graph.node(id) else {
            return Vec::new();
        };
        let mut seen = std::collections::HashSet::from([&*start.id]);
        let mut order = Vec::new();
        let mut queue = std::collections::VecDeque::from([&*start.id]);
        while let Some(current) = queue.pop_front() {
            for next in direct_dependents_by_id(graph, current) {
                if order.len() >= limit {
                    return order;
                }
                if seen.insert(next) {
                    order.push(next);
                    queue.push_back(next);
                }
            }
        }
        order
    }

    #[test]
    fn the_walk_by_position_equals_the_walk_by_id() {
        use crate::graph::{Edge, EdgeKind, IMPORTS_MODULE, IMPORTS_NAMES};
        let mut rng = fastrand::Rng::with_seed(5);
        let (mut found, mut reached) = (0, 0);
        let template = graph_of(&[("a.py", "def f():\n    return 1\n")]);
        let blank = template.nodes[0].as_ref().clone();
        for round in 0..150 {
            let mut nodes = Vec::new();
            let kinds = [
                NodeKind::File,
                NodeKind::Class,
                NodeKind::Method,
                NodeKind::Function,
            ];
            for i in 0..rng.usize(2..25) {
                let mut node = blank.clone();
                node.id = format!("n{i:02}").into();
                node.kind = if rng.usize(0..8) == 0 {
                    NodeKind::External
                } else {
                    kinds[rng.usize(0..kinds.len())]
                };
                // Equal impacts now and then, so ties are broken by id.
                node.impact = rng.usize(0..3) as f64;
                nodes.push(node);
            }
            let ids: Vec<String> = nodes.iter().map(|n| n.id.to_string()).collect();
            // Now and then an edge names an id that is no node (a file gone since).
            let ends: Vec<String> = ids.iter().cloned().chain(["zz_gone".to_string()]).collect();
            let edge_kinds = [
                EdgeKind::Calls,
                EdgeKind::Contains,
                EdgeKind::Imports,
                EdgeKind::Inherits,
            ];
            let edges: Vec<Edge> = (0..rng.usize(0..60))
                .map(|_| {
                    let kind = edge_kinds[rng.usize(0..edge_kinds.len())];
                    let reasons = match (kind, rng.usize(0..3)) {
                        (EdgeKind::Imports, 0) => vec![IMPORTS_NAMES.to_string()],
                        (EdgeKind::Imports, 1) => vec![IMPORTS_MODULE.to_string()],
                        _ => Vec::new(),
                    };
                    Edge {
                        kind,
                        src: ends[rng.usize(0..ends.len())].as_str().into(),
                        dst: ends[rng.usize(0..ends.len())].as_str().into(),
                        lines: Default::default(),
                        reasons: reasons.into_iter().map(Into::into).collect(),
                    }
                })
                .filter(|e| e.src != e.dst)
                .collect();
            let mut unique = edges;
            unique.sort();
            unique.dedup_by(|a, b| a.kind == b.kind && a.src == b.src && a.dst == b.dst);
            let graph = Graph::new(nodes, unique);
            for id in &ids {
                let limit = rng.usize(1..30);
                let ours: Vec<(String, u64)> = strongest_dependents(&graph, id, limit)
                    .into_iter()
                    .map(|d| (d.id.to_string(), strength_key(d.strength)))
                    .collect();
                found += ours.len();
                assert_eq!(
                    ours,
                    strongest_dependents_by_id(&graph, id, limit),
                    "round {round}, {id}"
                );
                // The first few kept ones, walked no further than they need, are those of
                // the whole walk.
                let want = rng.usize(1..6);
                let parity = rng.usize(0..2);
                let keep = |n: &Node| n.id.len() % 2 == parity || n.impact > 1.0;
                let keep = |n: &Node| keep(n) && !n.id.ends_with(['1', '4', '7']);
                let all: Vec<(String, u64)> = strongest_dependents(&graph, id, limit)
                    .into_iter()
                    .filter(|d| graph.node(d.id).is_some_and(keep))
                    .take(want)
                    .map(|d| (d.id.to_string(), strength_key(d.strength)))
                    .collect();
                let kept: Vec<(String, u64)> =
                    strongest_dependents_kept(&graph, id, limit, want, &keep)
                        .into_iter()
                        .map(|d| (d.id.to_string(), strength_key(d.strength)))
                        .collect();
                assert_eq!(kept, all, "round {round}, {id}, {want} kept");
                let nearest = nearest_dependents(&graph, id, limit);
                reached += nearest.len();
                assert_eq!(
                    nearest,
                    nearest_dependents_by_id(&graph, id, limit),
                    "round {round}, {id}"
                );
            }
        }
        assert!(found > 1000, "only {found} dependents found");
        assert!(reached > 1000, "only {reached} dependents reached");
    }

    #[test]
    fn strongest_dependents_put_direct_callers_before_the_class_users() {
        let graph = graph_of(&[
            (
                "app/core.py",
                "class Engine:\n    def stop(self):\n        return 1\n",
            ),
            (
                "app/ctx.py",
                "from app.core import Engine\n\ndef pop():\n    return Engine.stop(Engine())\n\ndef outer():\n    return pop()\n",
            ),
            (
                "app/factory.py",
                "from app.core import Engine\n\ndef make():\n    return Engine()\n",
            ),
            (
                "app/registry.py",
                "from app.core import Engine\n\nkind = Engine\n",
            ),
            (
                "app/settings.py",
                "import app.registry\n\ndef flag():\n    return 1\n",
            ),
        ]);
        let found = strongest_dependents(&graph, "app/core.py::Engine.stop", 100);
        let listed = |id: &str| found.iter().position(|d| d.id == id);
        let position = |id: &str| listed(id).unwrap_or_else(|| panic!("{id}: {found:?}"));
        // The direct caller, then its caller, then the class and its users.
        assert_eq!(found[0].id, "app/ctx.py::pop", "{found:?}");
        assert!((found[0].strength - rank::DAMPING).abs() < 1e-9);
        assert!(position("app/ctx.py::outer") < position("app/core.py::Engine"));
        assert!(position("app/core.py::Engine") < position("app/factory.py::make"));
        assert!(found.windows(2).all(|w| w[0].strength >= w[1].strength));
        // Linked only through the class and a whole-module import: too weak to list.
        assert_eq!(listed("app/settings.py::flag"), None, "{found:?}");
        // The limit keeps the strongest.
        assert_eq!(
            strongest_dependents(&graph, "app/core.py::Engine.stop", 1),
            found[..1]
        );
    }
}
