//! The code graph: nodes (files, symbols, external modules) and typed edges, built from
//! extractions by resolving names, then promoted and measured. Pure: no IO.

mod build;
pub mod modules;
mod promote;
pub mod rank;
pub mod reach;
pub use promote::{impact, impact_link, impact_links, measure};
pub mod score;
mod types;

use std::cmp::Ordering;
use std::sync::Arc;

// Node ids come from the repository's own paths and names: a fast hash is safe here.
use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

use crate::extract::FileExtract;

/// Reason on a file-to-file import that uses the module as a whole (`import m`, `from m import
/// *`, a submodule, a name that is not a definition): a change anywhere in it reaches the importer.
pub const IMPORTS_MODULE: &str = "module";
/// Reason on a file-to-file import of definitions only: the importer depends on those symbols,
/// which have their own import edges.
pub const IMPORTS_NAMES: &str = "names";

pub use build::{BuildStats, build, build_focused};
pub use modules::{Roots, Target};

/// A parsed source file, the input of a graph build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Repository-relative, `/`-separated.
    pub path: String,
    pub language: String,
    pub hash: String,
    pub size: u64,
    /// Seconds since the epoch of the last change (git or mtime).
    pub last_change: i64,
    pub is_test: bool,
    pub extract: FileExtract,
}

/// What a node stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    File,
    Class,
    Function,
    Method,
    Interface,
    Type,
    Enum,
    Constant,
    /// A module outside the repository (a package or the standard library).
    External,
}

impl NodeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            NodeKind::File => "file",
            NodeKind::Class => "class",
            NodeKind::Function => "function",
            NodeKind::Method => "method",
            NodeKind::Interface => "interface",
            NodeKind::Type => "type",
            NodeKind::Enum => "enum",
            NodeKind::Constant => "constant",
            NodeKind::External => "external",
        }
    }

    pub fn parse(text: &str) -> Option<NodeKind> {
        serde_json::from_value(serde_json::Value::String(text.to_string())).ok()
    }

    pub fn is_symbol(self) -> bool {
        !matches!(self, NodeKind::File | NodeKind::External)
    }

    pub fn is_class_like(self) -> bool {
        matches!(self, NodeKind::Class | NodeKind::Interface)
    }
}

/// A node of the graph. Ids: `path` for files, `path::Qual.name` for symbols, `ext:module` for
/// external modules. Ids are stable across re-indexes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Node {
    pub id: String,
    pub kind: NodeKind,
    /// The file a node lives in (the module name for external nodes).
    pub path: String,
    pub name: String,
    pub start_line: u32,
    pub end_line: u32,
    pub signature: Option<String>,
    pub doc: Option<String>,
    pub is_test: bool,
    pub side_effects: Vec<String>,
    /// State writes outside constructors.
    pub mutations: u32,
    /// Nodes reachable downstream over causal edges (what a change here can affect).
    pub reach: u32,
    /// Direct dependents over causal edges.
    pub causal_in: u32,
    /// How much of the repository depends on the node, directly or not (see [`rank`]): 1 for
    /// a node nothing depends on. Stores written before it existed load as 1 until the next
    /// index measures them.
    #[serde(default = "rank::neutral")]
    pub impact: f64,
    pub last_change: i64,
    /// The node that contains this one (a symbol's file or class).
    #[serde(default)]
    pub parent: Option<String>,
}

/// The kind of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EdgeKind {
    Contains,
    Imports,
    Inherits,
    Calls,
    Drives,
    AssertsOn,
}

impl EdgeKind {
    /// Kinds stored as edge tables; containment is stored as each symbol's `parent`.
    pub const STORED: [EdgeKind; 5] = [
        EdgeKind::Imports,
        EdgeKind::Inherits,
        EdgeKind::Calls,
        EdgeKind::Drives,
        EdgeKind::AssertsOn,
    ];

    pub const ALL: [EdgeKind; 6] = [
        EdgeKind::Contains,
        EdgeKind::Imports,
        EdgeKind::Inherits,
        EdgeKind::Calls,
        EdgeKind::Drives,
        EdgeKind::AssertsOn,
    ];

    /// The edge table's name.
    pub fn table(self) -> &'static str {
        match self {
            EdgeKind::Contains => "contains",
            EdgeKind::Imports => "imports",
            EdgeKind::Inherits => "inherits",
            EdgeKind::Calls => "calls",
            EdgeKind::Drives => "drives",
            EdgeKind::AssertsOn => "asserts_on",
        }
    }

    /// Causal edges carry change: a change at one end can break the other.
    pub fn is_causal(self) -> bool {
        !matches!(self, EdgeKind::Contains)
    }

    /// Edges whose breakage is expensive (a failing test).
    pub fn is_costly(self) -> bool {
        matches!(self, EdgeKind::AssertsOn)
    }
}

/// A directed edge between two node ids. `lines` are the source lines in `src` that make the
/// edge (import or call sites); `reasons` say why a promoted edge exists.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub src: String,
    pub dst: String,
    pub lines: Vec<u32>,
    pub reasons: Vec<String>,
}

impl Edge {
    /// A stable key, unique per graph.
    pub fn key(&self) -> String {
        format!("{}->{}", self.src, self.dst)
    }
}

/// A whole graph with an index by id.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Shared with other graphs of the same index, so a graph that differs in a few files
    /// costs only those files' nodes and edges.
    pub nodes: Vec<Arc<Node>>,
    pub edges: Vec<Arc<Edge>>,
    index: IdIndex,
    /// Node positions by the address of the node.
    positions: FxHashMap<usize, usize>,
    /// Edge positions by source and by destination node position.
    outgoing: Adjacency,
    incoming: Adjacency,
}

/// Node positions by id without a copy of any id: an id's hash gives a position, and the
/// lookup compares the id found there; ids whose hashes collide are kept apart by id.
#[derive(Debug, Clone, Default)]
struct IdIndex {
    by_hash: FxHashMap<u64, u32>,
    collided: FxHashMap<String, u32>,
}

/// Marks a hash that more than one id has (see `IdIndex::collided`).
const COLLIDED: u32 = u32::MAX;

fn id_hash(id: &str) -> u64 {
    use std::hash::BuildHasher as _;
    rustc_hash::FxBuildHasher.hash_one(id)
}

impl IdIndex {
    fn of(nodes: &[Arc<Node>]) -> IdIndex {
        let mut index = IdIndex {
            by_hash: FxHashMap::with_capacity_and_hasher(nodes.len(), Default::default()),
            collided: FxHashMap::default(),
        };
        for (i, node) in nodes.iter().enumerate() {
            let i = i as u32;
            match index.by_hash.entry(id_hash(&node.id)) {
                std::collections::hash_map::Entry::Vacant(slot) => {
                    slot.insert(i);
                }
                std::collections::hash_map::Entry::Occupied(mut slot) => {
                    let before = *slot.get();
                    if before != COLLIDED {
                        let id = nodes[before as usize].id.clone();
                        index.collided.insert(id, before);
                        slot.insert(COLLIDED);
                    }
                    index.collided.insert(node.id.clone(), i);
                }
            }
        }
        index
    }

    fn get(&self, nodes: &[Arc<Node>], id: &str) -> Option<usize> {
        match *self.by_hash.get(&id_hash(id))? {
            COLLIDED => self.collided.get(id).map(|&i| i as usize),
            i => (nodes[i as usize].id == id).then_some(i as usize),
        }
    }
}

/// Edge positions per node, in one list (compressed rows: node `i`'s are
/// `items[start[i]..start[i + 1]]`), not a list per node.
#[derive(Debug, Clone, Default)]
struct Adjacency {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Adjacency {
    /// From (node, edge) pairs in edge order.
    fn of(nodes: usize, pairs: &[(u32, u32)]) -> Adjacency {
        let mut start = vec![0u32; nodes + 1];
        for &(node, _) in pairs {
            start[node as usize + 1] += 1;
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut next = start.clone();
        let mut items = vec![0u32; pairs.len()];
        for &(node, edge) in pairs {
            let slot = &mut next[node as usize];
            items[*slot as usize] = edge;
            *slot += 1;
        }
        Adjacency { start, items }
    }

    fn at(&self, node: usize) -> &[u32] {
        match (self.start.get(node), self.start.get(node + 1)) {
            (Some(&from), Some(&to)) => &self.items[from as usize..to as usize],
            _ => &[],
        }
    }
}

impl Graph {
    /// A graph from stored nodes and stored edges: containment comes from `parent`.
    pub fn from_stored(nodes: Vec<Node>, mut edges: Vec<Edge>) -> Graph {
        edges.extend(nodes.iter().filter_map(|n| {
            Some(Edge {
                kind: EdgeKind::Contains,
                src: n.parent.clone()?,
                dst: n.id.clone(),
                lines: Vec::new(),
                reasons: Vec::new(),
            })
        }));
        Graph::new(nodes, edges)
    }

    /// Builds the indexes over nodes and edges.
    pub fn new(nodes: Vec<Node>, edges: Vec<Edge>) -> Graph {
        Graph::shared(
            nodes.into_iter().map(Arc::new).collect(),
            edges.into_iter().map(Arc::new).collect(),
        )
    }

    /// Builds the indexes over nodes and edges that may belong to other graphs too.
    pub fn shared(mut nodes: Vec<Arc<Node>>, mut edges: Vec<Arc<Edge>>) -> Graph {
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        edges.sort();
        Graph::indexed(nodes, edges)
    }

    /// A graph patched from another: `kept` nodes and edges are a subsequence of a graph's
    /// (so in order), `fresh` ones are new. The few fresh ones are sorted and put in place by
    /// binary search, so nothing kept is compared again (sorting the whole again compared
    /// every edge: a third of a patch of Django).
    pub fn patched(
        kept_nodes: Vec<Arc<Node>>,
        fresh_nodes: Vec<Arc<Node>>,
        kept_edges: Vec<Arc<Edge>>,
        fresh_edges: Vec<Arc<Edge>>,
    ) -> Graph {
        let nodes = merge_sorted(kept_nodes, fresh_nodes, |a, b| a.id.cmp(&b.id));
        let edges = merge_sorted(kept_edges, fresh_edges, Ord::cmp);
        Graph::indexed(nodes, edges)
    }

    /// The indexes over nodes sorted by id and edges in order.
    fn indexed(nodes: Vec<Arc<Node>>, edges: Vec<Arc<Edge>>) -> Graph {
        let index = IdIndex::of(&nodes);
        let positions: FxHashMap<usize, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, n)| (Arc::as_ptr(n) as usize, i))
            .collect();
        let mut from = Vec::with_capacity(edges.len());
        let mut to = Vec::with_capacity(edges.len());
        for (e, edge) in edges.iter().enumerate() {
            if let (Some(s), Some(d)) = (index.get(&nodes, &edge.src), index.get(&nodes, &edge.dst))
            {
                from.push((s as u32, e as u32));
                to.push((d as u32, e as u32));
            }
        }
        let outgoing = Adjacency::of(nodes.len(), &from);
        let incoming = Adjacency::of(nodes.len(), &to);
        Graph {
            nodes,
            edges,
            index,
            positions,
            outgoing,
            incoming,
        }
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.node_index(id).map(|i| &*self.nodes[i])
    }

    /// The shared node with this id (for a graph built from this one).
    pub fn shared_node(&self, id: &str) -> Option<&Arc<Node>> {
        self.node_index(id).map(|i| &self.nodes[i])
    }

    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.index.get(&self.nodes, id)
    }

    /// The position of one of this graph's own nodes in `nodes`, found by its address
    /// (cheaper than hashing its id).
    pub fn position(&self, node: &Node) -> usize {
        *self
            .positions
            .get(&(node as *const Node as usize))
            .unwrap_or_else(|| panic!("node {} is not from this graph", node.id))
    }

    /// Edges leaving a node.
    pub fn outgoing(&self, id: &str) -> impl Iterator<Item = &Edge> {
        self.edges_at(&self.outgoing, id)
    }

    /// Edges arriving at a node.
    pub fn incoming(&self, id: &str) -> impl Iterator<Item = &Edge> {
        self.edges_at(&self.incoming, id)
    }

    fn edges_at<'a>(&'a self, map: &'a Adjacency, id: &str) -> impl Iterator<Item = &'a Edge> {
        self.node_index(id)
            .map(|i| map.at(i))
            .unwrap_or_default()
            .iter()
            .map(|&e| &*self.edges[e as usize])
    }

    pub fn files(&self) -> impl Iterator<Item = &Node> {
        self.nodes
            .iter()
            .map(|n| &**n)
            .filter(|n| n.kind == NodeKind::File)
    }

    /// Edge counts by kind.
    pub fn edge_counts(&self) -> Vec<(EdgeKind, usize)> {
        EdgeKind::ALL
            .iter()
            .map(|&k| (k, self.edges.iter().filter(|e| e.kind == k).count()))
            .collect()
    }
}

/// Node id of a symbol.
/// `kept` (sorted by `order`) with `fresh` put in: what a stable sort of the two appended
/// gives, with O(fresh · log kept) comparisons.
fn merge_sorted<T>(kept: Vec<T>, mut fresh: Vec<T>, order: impl Fn(&T, &T) -> Ordering) -> Vec<T> {
    if fresh.is_empty() {
        return kept;
    }
    fresh.sort_by(&order);
    // Where each fresh item goes: after every kept item not greater than it.
    let mut start = 0;
    let cuts: Vec<usize> = fresh
        .iter()
        .map(|item| {
            start += kept[start..].partition_point(|k| order(k, item) != Ordering::Greater);
            start
        })
        .collect();
    let mut merged = Vec::with_capacity(kept.len() + fresh.len());
    let mut kept = kept.into_iter();
    let mut taken = 0;
    for (item, cut) in fresh.into_iter().zip(cuts) {
        merged.extend(kept.by_ref().take(cut - taken));
        taken = cut;
        merged.push(item);
    }
    merged.extend(kept);
    merged
}

pub fn symbol_id(path: &str, qualname: &str) -> String {
    format!("{path}::{qualname}")
}

/// Node id of an external module.
pub fn external_id(module: &str) -> String {
    format!("ext:{module}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_in_fresh_items_equals_a_stable_sort_of_both() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..300 {
            // (key, tag): keys repeat, tags tell kept from fresh and their order.
            let mut kept: Vec<(u8, u32)> = (0..rng.usize(0..40))
                .map(|i| (rng.u8(0..12), i as u32))
                .collect();
            kept.sort_by_key(|k| k.0);
            let fresh: Vec<(u8, u32)> = (0..rng.usize(0..8))
                .map(|i| (rng.u8(0..12), 1000 + i as u32))
                .collect();
            let mut expected: Vec<(u8, u32)> = kept.iter().chain(&fresh).copied().collect();
            expected.sort_by_key(|k| k.0);
            let merged = merge_sorted(kept, fresh, |a, b| a.0.cmp(&b.0));
            assert_eq!(merged, expected);
        }
    }

    #[test]
    fn ids_whose_hashes_collide_are_told_apart() {
        let node = |id: &str| {
            Arc::new(Node {
                id: id.to_string(),
                kind: NodeKind::File,
                path: id.to_string(),
                name: id.to_string(),
                start_line: 1,
                end_line: 1,
                signature: None,
                doc: None,
                is_test: false,
                side_effects: Vec::new(),
                mutations: 0,
                reach: 0,
                causal_in: 0,
                impact: 1.0,
                last_change: 0,
                parent: None,
            })
        };
        let nodes: Vec<Arc<Node>> = ["a.py", "b.py", "c.py"].iter().map(|id| node(id)).collect();
        let mut index = IdIndex::of(&nodes);
        // Make b.py's hash a collision, as two ids of one hash would leave it.
        index.by_hash.insert(id_hash("b.py"), COLLIDED);
        index.collided.insert("b.py".to_string(), 1);
        assert_eq!(index.get(&nodes, "a.py"), Some(0));
        assert_eq!(index.get(&nodes, "b.py"), Some(1));
        assert_eq!(index.get(&nodes, "c.py"), Some(2));
        assert_eq!(index.get(&nodes, "d.py"), None);
        // A hash that finds another id's position is no match.
        index.by_hash.insert(id_hash("e.py"), 2);
        assert_eq!(index.get(&nodes, "e.py"), None);
    }

    #[test]
    fn adjacency_lists_each_nodes_edges_in_edge_order() {
        let rows = Adjacency::of(4, &[(2, 0), (0, 1), (2, 2), (3, 3), (2, 4)]);
        assert_eq!(rows.at(0), &[1]);
        assert_eq!(rows.at(1), &[] as &[u32]);
        assert_eq!(rows.at(2), &[0, 2, 4]);
        assert_eq!(rows.at(3), &[3]);
        assert_eq!(rows.at(9), &[] as &[u32]);
    }
}
