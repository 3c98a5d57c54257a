//! What cairn serves: the ranked context pack (`get_context`) and everything known about one
//! node (`expand`), as compact Markdown for the model plus a structured report for programs,
//! both bounded by a token budget (each an [`Answer`](crate::answer::Answer)). Pure: the
//! caller supplies the graph, facts and clock.

mod expand;
mod pack;
mod target;

use std::collections::HashMap;

use serde::Serialize;

use crate::graph::score::{Access, Score, node_score};
use crate::graph::{Graph, Node, NodeKind, impact};

pub use expand::{ExpandBody, ExpandReport, Include, Known, expand, lines_note};
pub use pack::{ContextBody, ContextReport, Freshness, context};
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
}

impl MemoryNote {
    /// The line it takes in a text answer: `- [type] id: content (anchors)`. The id marks the
    /// text as served by cairn, so an assistant echoing it back is not taken as new learning.
    pub fn line(&self) -> String {
        let anchors = if self.anchors.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.anchors.join(", "))
        };
        format!("- [{}] {}: {}{anchors}", self.kind, self.id, self.content)
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
    access: &'a HashMap<String, Access>,
    now: i64,
}

impl<'a> Scorer<'a> {
    pub fn new(graph: &'a Graph, access: &'a HashMap<String, Access>, now: i64) -> Self {
        Scorer { graph, access, now }
    }

    pub fn score(&self, node: &Node) -> Score {
        let access = self.access.get(&node.id).copied().unwrap_or_default();
        node_score(node, access, self.now)
    }

    pub fn graph(&self) -> &'a Graph {
        self.graph
    }
}

/// Nodes a change at `id` can affect directly (its dependents over causal edges).
pub fn direct_dependents<'g>(graph: &'g Graph, id: &str) -> Vec<&'g str> {
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

/// Every node reachable downstream of `id` (its blast radius), nearest first.
pub fn blast_radius<'g>(graph: &'g Graph, id: &str) -> Vec<&'g str> {
    nearest_dependents(graph, id, usize::MAX)
}

/// The nearest `limit` nodes of a blast radius, nearest first (breadth first).
pub fn nearest_dependents<'g>(graph: &'g Graph, id: &str, limit: usize) -> Vec<&'g str> {
    let Some(start) = graph.node(id) else {
        return Vec::new();
    };
    let mut seen: std::collections::HashSet<&str> = std::collections::HashSet::new();
    seen.insert(start.id.as_str());
    let mut order = Vec::new();
    let mut queue = std::collections::VecDeque::from([start.id.as_str()]);
    while let Some(current) = queue.pop_front() {
        for next in direct_dependents(graph, current) {
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
                    language: language.name.clone(),
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
