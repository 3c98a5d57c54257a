//! The code graph: nodes (files, symbols, external modules) and typed edges, built from
//! extractions by resolving names, then promoted and measured. Pure: no IO.

mod build;
mod edges;
mod kept;
mod lines;
pub mod modules;
pub mod possible;
mod promote;
pub mod rank;
pub mod reach;
pub use promote::{impact, impact_link, impact_links, measure};
pub mod score;
mod types;

use std::cmp::Ordering;
use std::sync::Arc;

// Node ids come from the repository's own paths and names: a fast hash is safe here.
use rustc_hash::{FxHashMap, FxHashSet};

use serde::{Deserialize, Serialize};

use crate::extract::FileExtract;

/// Reason on a file-to-file import that uses the module as a whole (`import m`, `from m import
/// *`, a submodule, a name that is not a definition): a change anywhere in it reaches the importer.
pub const IMPORTS_MODULE: &str = "module";
/// Reason on a file-to-file import of definitions only: the importer depends on those symbols,
/// which have their own import edges.
pub const IMPORTS_NAMES: &str = "names";

pub use build::{BuildStats, build, build_focused};
pub use edges::Edges;
pub use kept::Kept;
pub use lines::Lines;
pub use modules::{Roots, Target};

/// A parsed source file, the input of a graph build.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SourceFile {
    /// Repository-relative, `/`-separated.
    pub path: String,
    /// The language's shared copy of its name ([`crate::languages::Language::shared_name`]).
    #[serde(deserialize_with = "shared_language")]
    pub language: Arc<str>,
    pub hash: String,
    pub size: u64,
    /// Seconds since the epoch of the last change (git or mtime).
    pub last_change: i64,
    pub is_test: bool,
    pub extract: FileExtract,
}

/// A file's language read back: the language's shared copy of the name.
fn shared_language<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> Result<Arc<str>, D::Error> {
    let name = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
    Ok(crate::languages::Registry::get().shared_name(&name))
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
    /// Shared with the edges at the node, the nodes it contains and its file's symbols (see
    /// [`Ids::share_node`]).
    pub id: Arc<str>,
    pub kind: NodeKind,
    /// The file a node lives in (the module name for external nodes).
    pub path: Arc<str>,
    /// Inline when short (most names), as extraction texts are.
    pub name: crate::extract::Text,
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
    pub parent: Option<Arc<str>>,
    /// Calls made here of a method the repository defines, on a receiver of unknown type:
    /// each may reach any method of that name (see [`Graph::untyped_callers`]).
    #[serde(default, skip_serializing_if = "<[_]>::is_empty")]
    pub untyped_calls: Box<[UntypedCall]>,
}

/// A call `receiver.name(…)` whose receiver's type is unknown (`qs.count()` on a parameter
/// nothing annotates), of a name some class of the repository defines as a method. No edge:
/// it is not known to reach any of them, and one whose receiver is known to be another type
/// (`"a,b".count(",")`, an instance of a class without the method) is not kept at all.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct UntypedCall {
    pub name: crate::extract::Text,
    /// The receiver's last part as written (`root_queryset` of `self.root_queryset`,
    /// `order_by()` of `qs.order_by()`): the evidence of what it holds.
    pub receiver: crate::extract::Text,
    pub lines: Box<[u32]>,
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
    pub(crate) fn is_costly(self) -> bool {
        matches!(self, EdgeKind::AssertsOn)
    }
}

/// A directed edge between two node ids. `lines` are the source lines in `src` that make the
/// edge (import or call sites); `reasons` say why a promoted edge exists. The ends are shared:
/// the edges of a graph at one node hold one copy of its id (see [`Ids`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Edge {
    pub kind: EdgeKind,
    pub src: Arc<str>,
    pub dst: Arc<str>,
    /// One held inline, more in a list of their own size (3M edges at 50k files).
    pub lines: Lines,
    pub reasons: Box<[crate::extract::Text]>,
}

impl Edge {
    /// A stable key, unique per graph.
    pub fn key(&self) -> String {
        format!("{}->{}", self.src, self.dst)
    }
}

/// How a graph differs from an earlier one ([`Graph::sharing`]): nodes by id, edges whole
/// (an edge whose lines or reasons changed counts as removed and added). Measures (reach,
/// impact) are not compared: a patch carries them over and the exact graph works them out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Difference {
    pub nodes_added: usize,
    pub nodes_removed: usize,
    pub edges_added: usize,
    pub edges_removed: usize,
}

impl Difference {
    /// Whether the two graphs have the same nodes and edges.
    pub fn is_empty(&self) -> bool {
        *self == Difference::default()
    }
}

/// A whole graph with an index by id.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Shared with other graphs of the same index, so a graph that differs in a few files
    /// costs only those files' nodes and edges.
    pub nodes: Vec<Arc<Node>>,
    pub edges: Edges,
    index: IdIndex,
    /// Each edge's ends, so a patched graph maps them instead of looking every id up again.
    ends: Vec<Ends>,
    /// Edge positions by source and by destination node position.
    outgoing: Adjacency,
    incoming: Adjacency,
    /// Symbol positions by the last part of their names, made on first use
    /// ([`Graph::symbols_named`]).
    names: std::sync::OnceLock<FxHashMap<Box<str>, Vec<u32>>>,
    /// Positions of the nodes with untyped calls by the called name, made on first use
    /// ([`Graph::untyped_callers`]).
    untyped: std::sync::OnceLock<FxHashMap<Box<str>, Vec<u32>>>,
}

/// The nodes of a patched graph ([`Graph::patch`]) and where the old graph's went.
struct PatchedNodes {
    /// Whether each old node belongs to a changed file, or is an outside module that only
    /// those led to ([`Graph::orphaned_externals`]).
    gone: Vec<bool>,
    /// Whether each old node is in the patched graph: kept, or defined again.
    stays: Vec<bool>,
    /// The ids of the fresh nodes.
    fresh_ids: FxHashSet<Arc<str>>,
    /// Old position -> new position, for every node that stays.
    moved: Vec<u32>,
    /// New position -> old position ([`NO_NODE`] for a node new to the graph).
    origin: Vec<u32>,
    /// The positions of nodes new to the graph.
    new_here: Vec<u32>,
    /// The patched graph's nodes, in order.
    nodes: Vec<Arc<Node>>,
}

/// An edge's source and destination node positions ([`NO_NODE`] for an id that is no node).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Ends {
    src: u32,
    dst: u32,
}

impl Ends {
    /// Whether both ends are nodes of the graph.
    fn linked(self) -> bool {
        self.src != NO_NODE && self.dst != NO_NODE
    }
}

/// An edge at a node, with positions: its own in `Graph::edges`, its ends' in `Graph::nodes`.
#[derive(Debug, Clone, Copy)]
pub struct Link<'g> {
    pub at: usize,
    pub edge: &'g Edge,
    pub src: usize,
    pub dst: usize,
}

/// `list` mapped into a list of its own size. (`collect` would reuse `list`'s allocation,
/// sized for the larger items: a graph of `Arc`s would keep the room of the nodes and edges
/// it was made from, 200 and 80 bytes per item, for as long as it lives.)
fn fresh_list<T, U>(list: Vec<T>, map: impl FnMut(T) -> U) -> Vec<U> {
    let mut fresh = Vec::with_capacity(list.len());
    fresh.extend(list.into_iter().map(map));
    fresh
}

/// Node positions by id without a copy of any id: an id's hash gives a position, and the
/// lookup compares the id found there; ids whose hashes collide are kept apart by id.
#[derive(Debug, Clone, Default)]
struct IdIndex {
    by_hash: FxHashMap<u64, u32>,
    collided: FxHashMap<Arc<str>, u32>,
}

/// From this many edges on, a graph's two adjacency lists are made on two threads.
const PARALLEL_EDGES: usize = 100_000;

/// The end of an edge whose id is no node of the graph.
const NO_NODE: u32 = u32::MAX;

/// No edge position: an edge new to a patched graph, or a run of edges gone from it.
const NO_EDGE: u32 = u32::MAX;

/// Old edge positions per bucket of [`EdgeMoves::lookup`] (`2^MOVE_BUCKET_BITS`).
const MOVE_BUCKET_BITS: u32 = 8;

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
        for i in 0..nodes.len() {
            index.insert(nodes, i as u32);
        }
        index
    }

    /// This index over nodes that moved: `moved[old]` is the new position of the node at
    /// `old` (`NO_NODE` for one gone), `added` the positions of nodes new to it. No kept
    /// node's id is read or hashed again: a patch of a large graph would otherwise reach
    /// into every node's allocation.
    fn remapped(&self, moved: &[u32], nodes: &[Arc<Node>], added: &[u32]) -> IdIndex {
        // A copy of the table changed in place: a pass over its slots, no hashing.
        let mut index = IdIndex {
            by_hash: self.by_hash.clone(),
            collided: FxHashMap::default(),
        };
        index.by_hash.retain(|_, at| {
            if *at == COLLIDED {
                return true;
            }
            *at = moved[*at as usize];
            *at != NO_NODE
        });
        for (id, &old) in &self.collided {
            if moved[old as usize] != NO_NODE {
                index.collided.insert(id.clone(), moved[old as usize]);
            }
        }
        for &i in added {
            index.insert(nodes, i);
        }
        index
    }

    fn insert(&mut self, nodes: &[Arc<Node>], i: u32) {
        let node = &nodes[i as usize];
        match self.by_hash.entry(id_hash(&node.id)) {
            std::collections::hash_map::Entry::Vacant(slot) => {
                slot.insert(i);
            }
            std::collections::hash_map::Entry::Occupied(mut slot) => {
                let before = *slot.get();
                if before != COLLIDED {
                    let id = nodes[before as usize].id.clone();
                    self.collided.insert(id, before);
                    slot.insert(COLLIDED);
                }
                self.collided.insert(node.id.clone(), i);
            }
        }
    }

    fn get(&self, nodes: &[Arc<Node>], id: &str) -> Option<usize> {
        match *self.by_hash.get(&id_hash(id))? {
            COLLIDED => self.collided.get(id).map(|&i| i as usize),
            i => (&*nodes[i as usize].id == id).then_some(i as usize),
        }
    }
}

/// Edge positions per node, in one list (compressed rows: node `i`'s are
/// `items[start[i]..start[i + 1]]`), not a list per node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Adjacency {
    start: Vec<u32>,
    items: Vec<u32>,
}

impl Adjacency {
    /// From the node each edge is listed at (by edge position; `None` for an edge listed
    /// nowhere), without a list of pairs between (a patch builds two of these over every
    /// edge).
    fn of(nodes: usize, at: impl Iterator<Item = Option<u32>> + Clone) -> Adjacency {
        let mut start = vec![0u32; nodes + 1];
        for node in at.clone().flatten() {
            start[node as usize + 1] += 1;
        }
        for i in 0..nodes {
            start[i + 1] += start[i];
        }
        let mut next = start[..nodes].to_vec();
        let mut items = vec![0u32; start[nodes] as usize];
        for (edge, node) in at.enumerate() {
            if let Some(node) = node {
                let slot = &mut next[node as usize];
                items[*slot as usize] = edge as u32;
                *slot += 1;
            }
        }
        Adjacency { start, items }
    }

    fn at(&self, node: usize) -> &[u32] {
        match (self.start.get(node), self.start.get(node + 1)) {
            (Some(&from), Some(&to)) => &self.items[from as usize..to as usize],
            _ => &[],
        }
    }

    /// These lists for a patched graph, in one pass that reads and writes them in order (no
    /// edge's ends are read again): node `i` of the patched graph lists what node
    /// `origin[i]` listed here, moved as `moves` says, and the edges `anew` lists at it
    /// (pairs of node and edge position, in order).
    fn patched(&self, origin: &[u32], moves: &EdgeMoves, anew: &[(u32, u32)]) -> Adjacency {
        let mut start = Vec::with_capacity(origin.len() + 1);
        let mut items = Vec::with_capacity(self.items.len() + anew.len());
        start.push(0);
        let mut anew = anew.iter().peekable();
        for (node, &old) in origin.iter().enumerate() {
            let from = items.len();
            if old != NO_NODE {
                moves.map(self.at(old as usize), &mut items);
            }
            let before = items.len();
            while let Some(&(_, edge)) = anew.next_if(|&&(at, _)| at as usize == node) {
                items.push(edge);
            }
            if items.len() > before {
                items[from..].sort_unstable();
            }
            start.push(items.len() as u32);
        }
        Adjacency { start, items }
    }
}

/// Where the edges of a graph went in a patch of it: runs of old positions, each moved by
/// one offset or gone. A patch keeps most edges in order, so the runs are few.
#[derive(Debug, Default)]
struct EdgeMoves {
    /// The first old position of each run, ascending from 0.
    from: Vec<u32>,
    /// Each run's first new position ([`NO_EDGE`] for a run of edges gone).
    to: Vec<u32>,
    /// The run of an old position (made by [`EdgeMoves::finish`]): a node's list finds its
    /// first run without a search.
    lookup: edges::Buckets,
    /// The old and new positions after the last edge kept.
    next_old: u32,
    next_new: u32,
}

impl EdgeMoves {
    /// The old edge at `old` is the new one at `new` (called in order).
    fn keep(&mut self, old: u32, new: u32) {
        let running = self.to.last().is_some_and(|&to| to != NO_EDGE);
        if old > self.next_old {
            self.from.push(self.next_old);
            self.to.push(NO_EDGE);
        } else if running && new == self.next_new {
            self.next_old += 1;
            self.next_new += 1;
            return;
        }
        self.from.push(old);
        self.to.push(new);
        self.next_old = old + 1;
        self.next_new = new + 1;
    }

    /// The `count` old edges from `old` on are the new ones from `new` on.
    fn keep_all(&mut self, old: u32, new: u32, count: u32) {
        if count > 0 {
            self.keep(old, new);
            self.next_old = old + count;
            self.next_new = new + count;
        }
    }

    /// The old edges after the last one kept are gone.
    fn finish(&mut self, old_edges: usize) {
        if (self.next_old as usize) < old_edges {
            self.from.push(self.next_old);
            self.to.push(NO_EDGE);
        }
        self.lookup = edges::Buckets::of(&self.from, old_edges, MOVE_BUCKET_BITS);
    }

    /// The new positions of the old edges at `list` (ascending) that were kept, onto `out`.
    fn map(&self, list: &[u32], out: &mut Vec<u32>) {
        let Some(&first) = list.first() else {
            return;
        };
        let mut run = self.lookup.segment(&self.from, first as usize);
        for &old in list {
            run = edges::Buckets::forward(&self.from, run, old as usize);
            if self.to[run] != NO_EDGE {
                out.push(self.to[run] + (old - self.from[run]));
            }
        }
    }
}

/// The edges of a patched graph ([`Graph::patch`]), with where the old graph's went.
struct PatchedEdges {
    edges: Edges,
    ends: Vec<Ends>,
    moves: EdgeMoves,
    /// The positions of the edges to list that the old graph did not list: fresh ones, and
    /// kept ones whose end a fresh node now is.
    anew: Vec<u32>,
}

impl PatchedEdges {
    /// The next edge of the patched graph, with its ends: the old graph's edge at `old`
    /// (whose ends were `old_ends[old]`), or a fresh one (`old` is `NO_EDGE`).
    fn take(&mut self, old: usize, at: Ends, old_ends: &[Ends]) {
        let new = self.ends.len() as u32;
        let listed_before = old != NO_EDGE as usize && old_ends[old].linked();
        if old != NO_EDGE as usize {
            self.moves.keep(old as u32, new);
        }
        if at.linked() && !listed_before {
            self.anew.push(new);
        }
        self.ends.push(at);
    }

    /// The old graph's edges from `old` on, all kept, with their ends `mapped` (as
    /// [`PatchedEdges::take`] of each in turn).
    fn take_all(&mut self, old: usize, mapped: &[Option<Ends>], old_ends: &[Ends]) {
        let new = self.ends.len();
        self.moves
            .keep_all(old as u32, new as u32, mapped.len() as u32);
        for (k, (at, before)) in mapped.iter().zip(&old_ends[old..]).enumerate() {
            let at = at.expect("every edge is kept");
            if at.linked() && !before.linked() {
                self.anew.push((new + k) as u32);
            }
            self.ends.push(at);
        }
    }
}

impl Graph {
    /// A graph from stored nodes and edges whose ids `ids` already shares (see
    /// [`Ids::share_node`], [`Ids::share_ends`]): containment comes from `parent`, with the
    /// same shared ids.
    pub fn from_stored(nodes: Vec<Node>, mut edges: Vec<Edge>, mut ids: Ids) -> Graph {
        edges.extend(nodes.iter().filter_map(|n| {
            Some(Edge {
                kind: EdgeKind::Contains,
                src: ids.of(n.parent.as_deref()?),
                dst: ids.of(&n.id),
                lines: Lines::default(),
                reasons: Box::default(),
            })
        }));
        Graph::new(nodes, edges)
    }

    /// Builds the indexes over nodes and edges (their ends as given: see [`Ids`]).
    pub fn new(mut nodes: Vec<Node>, mut edges: Vec<Edge>) -> Graph {
        // In order before each gets its allocation, so the allocations lie mostly in that
        // order too: a pass over the graph (every patch makes one over all edges) then reads
        // memory forward rather than at random (measured: the patch's pass over 3M edges
        // waited on memory for most of its time).
        nodes.sort_by(|a, b| a.id.cmp(&b.id));
        edges.sort();
        Graph::indexed(fresh_list(nodes, Arc::new), edges)
    }

    /// This graph with some files' nodes replaced: the nodes of the files at `paths` (the
    /// file's id is its path, its symbols' start with `path::`; outside modules are no
    /// file's) and the edges out of them give way to
    /// `fresh` nodes and edges; an edge into a node that is gone goes with it, one into a node
    /// that `fresh` defines again stays. A fresh node takes over the old one's measures
    /// (reach, dependents, impact) by id, and a fresh outside module already here is not
    /// added again. Promoted edges (`Drives`, `AssertsOn`) out of a changed file stay while
    /// both their ends do.
    ///
    /// Proportional to the graph only in plain array passes: what is kept is a subsequence
    /// of this graph's nodes and edges, the few fresh ones are put in place by binary
    /// search, and the kept edges' ends are mapped by position, so no kept id is hashed or
    /// compared again; each node's lists of edges are its old ones with the positions moved,
    /// those gone taken out and the fresh ones put in. An outside module that only the
    /// changed files led to, and no fresh edge does, goes (an exact build has an outside
    /// module only while something imports it).
    pub fn patch(&self, paths: &[String], fresh_nodes: Vec<Node>, fresh_edges: Vec<Edge>) -> Graph {
        // Ids of a file's nodes are its path or start with `path::`.
        let changed = |id: &str| {
            paths.iter().any(|p| {
                id.strip_prefix(p.as_str())
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
            })
        };
        let patched = self.patch_nodes(paths, fresh_nodes, &fresh_edges);
        let index = self
            .index
            .remapped(&patched.moved, &patched.nodes, &patched.new_here);
        let PatchedEdges {
            edges,
            ends,
            moves,
            anew,
        } = self.patch_edges(&changed, &patched, &index, fresh_edges);
        let list = |old: &Adjacency, at: fn(&Ends) -> u32| {
            let mut anew: Vec<(u32, u32)> =
                anew.iter().map(|&e| (at(&ends[e as usize]), e)).collect();
            anew.sort_unstable();
            old.patched(&patched.origin, &moves, &anew)
        };
        let (outgoing, incoming) = both(
            ends.len() >= PARALLEL_EDGES,
            || list(&self.outgoing, |e| e.src),
            || list(&self.incoming, |e| e.dst),
        );
        let graph = Graph::with_lists(patched.nodes, index, edges, ends, outgoing, incoming);
        #[cfg(debug_assertions)]
        {
            let (outgoing, incoming) = Graph::lists(graph.nodes.len(), &graph.ends);
            assert_eq!(
                (&graph.outgoing, &graph.incoming),
                (&outgoing, &incoming),
                "a patch's lists of edges are those of its edges"
            );
        }
        graph
    }

    /// The nodes of this graph patched with `fresh` ones (see [`Graph::patch`]), in order,
    /// with where each old one went.
    fn patch_nodes(
        &self,
        changed: &[String],
        fresh: Vec<Node>,
        fresh_edges: &[Edge],
    ) -> PatchedNodes {
        // A file's nodes, in id order: the file's, and the run of ids under `path::` (found
        // by search, so no other node's id is read).
        let mut gone = vec![false; self.nodes.len()];
        let mut changed_nodes = Vec::new();
        for path in changed {
            let file = self.node_index(path);
            for i in file.into_iter().chain(self.symbol_range(path)) {
                if self.nodes[i].kind != NodeKind::External {
                    gone[i] = true;
                    changed_nodes.push(i);
                }
            }
        }
        for orphan in self.orphaned_externals(&changed_nodes, &gone, &fresh, fresh_edges) {
            gone[orphan] = true;
        }
        let mut stays: Vec<bool> = gone.iter().map(|gone| !gone).collect();
        let mut added: Vec<(Arc<Node>, u32)> = Vec::new();
        for mut node in fresh {
            let before = self.node_index(&node.id);
            if let Some(b) = before {
                if node.kind == NodeKind::External {
                    continue;
                }
                let old = &self.nodes[b];
                node.reach = old.reach;
                node.causal_in = old.causal_in;
                node.impact = old.impact;
                stays[b] = true;
            }
            added.push((Arc::new(node), before.map_or(NO_NODE, |b| b as u32)));
        }
        let fresh_ids: FxHashSet<Arc<str>> = added.iter().map(|(n, _)| n.id.clone()).collect();
        let kept = self
            .nodes
            .iter()
            .enumerate()
            .filter(|&(i, _)| !gone[i])
            .map(|(i, n)| (i, (n.clone(), i as u32)));
        let staying = gone.iter().filter(|gone| !**gone).count();
        let mut moved = vec![NO_NODE; self.nodes.len()];
        let mut new_here = Vec::new();
        let mut origin = Vec::with_capacity(staying + added.len());
        let mut nodes: Vec<Arc<Node>> = Vec::with_capacity(staying + added.len());
        merge_sorted(
            &self.nodes,
            kept,
            added,
            |a, b| a.0.id.cmp(&b.0.id),
            |old, fresh| old.id.cmp(&fresh.0.id),
            |(node, old)| {
                let j = nodes.len() as u32;
                if old != NO_NODE {
                    moved[old as usize] = j;
                } else {
                    new_here.push(j);
                }
                origin.push(old);
                nodes.push(node);
            },
        );
        PatchedNodes {
            gone,
            stays,
            fresh_ids,
            moved,
            origin,
            new_here,
            nodes,
        }
    }

    /// The outside modules that only the `gone` nodes (`changed_nodes`) led to and that
    /// nothing fresh leads to: an exact build has an outside module only while something
    /// imports it, so a patch that takes the last import away takes the module too.
    fn orphaned_externals(
        &self,
        changed_nodes: &[usize],
        gone: &[bool],
        fresh: &[Node],
        fresh_edges: &[Edge],
    ) -> Vec<usize> {
        let led_to: FxHashSet<&str> = (fresh.iter())
            .filter(|n| n.kind == NodeKind::External)
            .map(|n| &*n.id)
            .chain(fresh_edges.iter().map(|e| &*e.dst))
            .filter(|id| id.starts_with(EXTERNAL_PREFIX))
            .collect();
        let mut orphans: Vec<usize> = Vec::new();
        for &i in changed_nodes {
            for &edge in self.outgoing.at(i) {
                let to = self.ends[edge as usize].dst;
                if to == NO_NODE {
                    continue;
                }
                let to = to as usize;
                let node = &self.nodes[to];
                if node.kind != NodeKind::External
                    || orphans.contains(&to)
                    || led_to.contains(&*node.id)
                {
                    continue;
                }
                let still_led = self.incoming.at(to).iter().any(|&e| {
                    let from = self.ends[e as usize].src;
                    from == NO_NODE || !gone[from as usize]
                });
                if !still_led {
                    orphans.push(to);
                }
            }
        }
        orphans
    }

    /// The edges of this graph patched with `fresh` ones (see [`Graph::patch`]), in order,
    /// with their ends' positions among the patched nodes. A chunk of edges that keeps all
    /// its edges and takes no fresh one is shared, not copied: only its edges' ends are
    /// mapped (the ends are kept apart from the edges, so no kept edge is read).
    fn patch_edges(
        &self,
        changed: &impl Fn(&str) -> bool,
        patched: &PatchedNodes,
        index: &IdIndex,
        fresh: Vec<Edge>,
    ) -> PatchedEdges {
        let PatchedNodes {
            gone,
            stays,
            fresh_ids,
            moved,
            nodes,
            ..
        } = patched;
        // An end that is no node is judged by its id (an id of a changed file is gone unless
        // a fresh node has it).
        let dangling_stays = |id: &str| !changed(id) || fresh_ids.contains(id);
        let promoted = |e: &Edge| matches!(e.kind, EdgeKind::Drives | EdgeKind::AssertsOn);
        // Whether the old edge at `i` stays, and its ends among the patched nodes.
        let kept = |i: usize, e: &Edge| -> Option<Ends> {
            let Ends { src: s, dst: d } = self.ends[i];
            let (src_gone, src_stays) = match s {
                NO_NODE => (changed(&e.src), dangling_stays(&e.src)),
                s => (gone[s as usize], stays[s as usize]),
            };
            let dst_stays = match d {
                NO_NODE => dangling_stays(&e.dst),
                d => stays[d as usize],
            };
            if !((!src_gone || promoted(e)) && src_stays && dst_stays) {
                return None;
            }
            // An end that was no node is one now if a fresh node has its id.
            // (The ids are read only there: reading them would reach into every edge.)
            let at = |end: u32, id: &Arc<str>| match end {
                NO_NODE if changed(id) || id.starts_with(EXTERNAL_PREFIX) => fresh_ids
                    .contains(id)
                    .then(|| index.get(nodes, id))
                    .flatten()
                    .map_or(NO_NODE, |i| i as u32),
                NO_NODE => NO_NODE,
                end => moved[end as usize],
            };
            Some(Ends {
                src: at(s, &e.src),
                dst: at(d, &e.dst),
            })
        };
        let mut fresh: Vec<(Edge, Ends, u32)> = fresh
            .into_iter()
            .map(|e| {
                let at = |id: &str| index.get(nodes, id).map_or(NO_NODE, |i| i as u32);
                let ends = Ends {
                    src: at(&e.src),
                    dst: at(&e.dst),
                };
                (e, ends, NO_EDGE)
            })
            .collect();
        fresh.sort_by(|a, b| a.0.cmp(&b.0));
        // A fresh edge goes into the chunk of the last old edge not above it (the first chunk
        // if none is).
        let mut fresh = fresh
            .into_iter()
            .map(|f| (self.edges.count_not_above(&f.0), f))
            .peekable();
        let room = self.edges.len() + fresh.len();
        let mut out = PatchedEdges {
            edges: Edges::default(),
            ends: Vec::with_capacity(room),
            moves: EdgeMoves::default(),
            anew: Vec::new(),
        };
        let mut chunks: Vec<Arc<[Edge]>> = Vec::new();
        let mut mapped: Vec<Option<Ends>> = Vec::with_capacity(edges::CHUNK);
        let last = self.edges.chunks().count().saturating_sub(1);
        for (c, (start, chunk)) in self.edges.chunks().enumerate() {
            let end = start + chunk.len();
            let mut here = Vec::new();
            while let Some((_, f)) = fresh.next_if(|&(cut, _)| cut <= end || c == last) {
                here.push(f);
            }
            // The edges are read only where an end is no node or the source goes (ids and
            // kinds decide there).
            mapped.clear();
            mapped.extend(chunk.iter().enumerate().map(|(k, e)| kept(start + k, e)));
            if here.is_empty() && mapped.iter().all(Option::is_some) {
                out.take_all(start, &mapped, &self.ends);
                chunks.push(chunk.clone());
                continue;
            }
            let kept = mapped
                .iter()
                .enumerate()
                .filter_map(|(k, at)| Some((k, (chunk[k].clone(), (*at)?, (start + k) as u32))));
            let mut items = Vec::with_capacity(chunk.len() + here.len());
            merge_sorted(
                chunk,
                kept,
                here,
                |a, b| a.0.cmp(&b.0),
                |old, fresh| old.cmp(&fresh.0),
                |(edge, at, old)| {
                    out.take(old as usize, at, &self.ends);
                    items.push(edge);
                },
            );
            if items.len() > 2 * edges::CHUNK {
                chunks.extend(edges::in_chunks(items));
            } else {
                chunks.push(items.into());
            }
        }
        // A graph with no edges yet.
        let rest: Vec<Edge> = fresh
            .map(|(_, (edge, at, _))| {
                out.take(NO_EDGE as usize, at, &self.ends);
                edge
            })
            .collect();
        chunks.extend(edges::in_chunks(rest));
        out.edges = Edges::from_chunks(chunks);
        out.moves.finish(self.edges.len());
        out
    }

    /// This graph holding `previous`'s copy of every node, and of every chunk of edges, that
    /// is equal in both, so the two share them and this graph's own copies are freed at once.
    /// An exact rebuild after a few files changed thus keeps, for the rest, the allocations the
    /// index already held, rather than a second copy of the whole graph scattered among the build's
    /// temporaries (which the allocator cannot hand back). Says how the two differ.
    pub fn sharing(mut self, previous: &Graph) -> (Graph, Difference) {
        let mut difference = Difference::default();
        let mut nodes_kept = 0;
        for node in &mut self.nodes {
            let Some(old) = previous.shared_node(&node.id) else {
                difference.nodes_added += 1;
                continue;
            };
            nodes_kept += 1;
            if !Arc::ptr_eq(old, node) && **old == **node {
                *node = old.clone();
            }
        }
        difference.nodes_removed = previous.nodes.len() - nodes_kept;
        let mut edges_kept = 0;
        // Both edge lists are in order: one pass over them side by side.
        let mut old = previous.edges.iter().peekable();
        for edge in self.edges.iter() {
            while old.next_if(|&o| o < edge).is_some() {}
            if old.next_if_eq(&edge).is_some() {
                edges_kept += 1;
            }
        }
        // The same edges in the same order: the positions, ends and lists stay as they are.
        self.edges = previous.edges.sharing(&self.edges).0;
        difference.edges_added = self.edges.len() - edges_kept;
        difference.edges_removed = previous.edges.len() - edges_kept;
        (self, difference)
    }

    /// The indexes over nodes sorted by id and edges in order.
    fn indexed(nodes: Vec<Arc<Node>>, edges: Vec<Edge>) -> Graph {
        let index = IdIndex::of(&nodes);
        let at = |id: &str| index.get(&nodes, id).map_or(NO_NODE, |i| i as u32);
        let ends: Vec<Ends> = edges
            .iter()
            .map(|e| Ends {
                src: at(&e.src),
                dst: at(&e.dst),
            })
            .collect();
        let (outgoing, incoming) = Graph::lists(nodes.len(), &ends);
        Graph::with_lists(nodes, index, Edges::of(edges), ends, outgoing, incoming)
    }

    /// The edges leaving and reaching each node, by position. Edges between two nodes are
    /// listed at both. The two lists are made side by side where the graph is large (each is
    /// a pass over every edge).
    fn lists(nodes: usize, ends: &[Ends]) -> (Adjacency, Adjacency) {
        let list = |at: fn(&Ends) -> u32| {
            Adjacency::of(nodes, ends.iter().map(move |e| e.linked().then_some(at(e))))
        };
        both(
            ends.len() >= PARALLEL_EDGES,
            || list(|e| e.src),
            || list(|e| e.dst),
        )
    }

    fn with_lists(
        nodes: Vec<Arc<Node>>,
        index: IdIndex,
        edges: Edges,
        ends: Vec<Ends>,
        outgoing: Adjacency,
        incoming: Adjacency,
    ) -> Graph {
        Graph {
            nodes,
            edges,
            index,
            ends,
            outgoing,
            incoming,
            names: Default::default(),
            untyped: Default::default(),
        }
    }

    pub fn node(&self, id: &str) -> Option<&Node> {
        self.node_index(id).map(|i| &*self.nodes[i])
    }

    /// The positions of the symbols whose name ends in `last` after any `.` (`load` for
    /// `Store.load` and `load`), in order: a bare name is found without a pass over the graph
    /// (the index is made on first use).
    pub fn symbols_named(&self, last: &str) -> &[u32] {
        let names = self.names.get_or_init(|| {
            let mut names: FxHashMap<Box<str>, Vec<u32>> = FxHashMap::default();
            for (i, node) in self.nodes.iter().enumerate() {
                if node.kind.is_symbol() {
                    let name = node.name.rsplit('.').next().unwrap_or(&node.name);
                    names.entry(name.into()).or_default().push(i as u32);
                }
            }
            names
        });
        names.get(last).map_or(&[], Vec::as_slice)
    }

    /// The positions of the nodes that call a method `name` on a receiver of unknown type, in
    /// order (the index is made on first use).
    pub fn untyped_callers(&self, name: &str) -> &[u32] {
        let callers = self.untyped.get_or_init(|| {
            let mut callers: FxHashMap<Box<str>, Vec<u32>> = FxHashMap::default();
            for (i, node) in self.nodes.iter().enumerate() {
                for call in &node.untyped_calls {
                    let at = callers.entry(call.name.as_str().into()).or_default();
                    if at.last() != Some(&(i as u32)) {
                        at.push(i as u32);
                    }
                }
            }
            callers
        });
        callers.get(name).map_or(&[], Vec::as_slice)
    }

    /// The symbols of the file at `path` (ids `path::…`), found in the nodes sorted by id
    /// without a pass over the graph.
    pub fn symbols_in(&self, path: &str) -> &[Arc<Node>] {
        &self.nodes[self.symbol_range(path)]
    }

    /// The files outside `paths` whose code refers to a file at `paths` or its symbols
    /// (imports, calls, bases or promoted links into them), each once, in path order; none if
    /// more than `most` do (found without listing them all).
    pub fn referring_files(&self, paths: &[String], most: usize) -> Option<Vec<&str>> {
        let mut files: FxHashSet<&str> = FxHashSet::default();
        let links = paths
            .iter()
            .flat_map(|path| {
                self.node_index(path)
                    .into_iter()
                    .chain(self.symbol_range(path))
            })
            .flat_map(|at| self.links_in(at))
            .filter(|l| l.edge.kind.is_causal());
        for link in links {
            let path = &*self.nodes[link.src].path;
            if !paths.iter().any(|p| p == path) && files.insert(path) && files.len() > most {
                return None;
            }
        }
        let mut files: Vec<&str> = files.into_iter().collect();
        files.sort_unstable();
        Some(files)
    }

    /// The positions of the symbols of the file at `path`: the run of ids under `path::`.
    fn symbol_range(&self, path: &str) -> std::ops::Range<usize> {
        let prefix = format!("{path}::");
        let from = self.nodes.partition_point(|n| &*n.id < prefix.as_str());
        let to = from + self.nodes[from..].partition_point(|n| n.id.starts_with(prefix.as_str()));
        from..to
    }

    /// The shared node with this id (for a graph built from this one).
    pub fn shared_node(&self, id: &str) -> Option<&Arc<Node>> {
        self.node_index(id).map(|i| &self.nodes[i])
    }

    pub fn node_index(&self, id: &str) -> Option<usize> {
        self.index.get(&self.nodes, id)
    }

    /// The position of one of this graph's own nodes in `nodes`. (Found by its id: a map
    /// by address would cost a patch a pass over every node and 20 MB at 50,000 files.)
    pub fn position(&self, node: &Node) -> usize {
        self.node_index(&node.id)
            .filter(|&i| std::ptr::eq(&*self.nodes[i], node))
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

    /// The edges at a node (by position), arriving ones first, each with its position in
    /// `edges` and its source's and destination's positions: a walk over positions looks no
    /// id up.
    pub fn links_at(&self, node: usize) -> impl Iterator<Item = Link<'_>> {
        self.links_in(node).chain(self.links_out(node))
    }

    /// The edges arriving at a node (by position), with positions as [`Graph::links_at`].
    pub fn links_in(&self, node: usize) -> impl Iterator<Item = Link<'_>> {
        self.incoming
            .at(node)
            .iter()
            .map(|&e| self.link_unchecked(e))
    }

    /// The edges leaving a node (by position), with positions as [`Graph::links_at`].
    pub fn links_out(&self, node: usize) -> impl Iterator<Item = Link<'_>> {
        self.outgoing
            .at(node)
            .iter()
            .map(|&e| self.link_unchecked(e))
    }

    /// An edge the adjacency lists hold (both its ends are nodes).
    fn link_unchecked(&self, edge: u32) -> Link<'_> {
        let ends = self.ends[edge as usize];
        Link {
            at: edge as usize,
            edge: &self.edges[edge as usize],
            src: ends.src as usize,
            dst: ends.dst as usize,
        }
    }

    /// The edge at a position, with its source's and destination's positions, if both are
    /// nodes of the graph.
    pub fn link(&self, edge: usize) -> Option<Link<'_>> {
        let ends = self.ends.get(edge)?;
        ends.linked().then(|| Link {
            at: edge,
            edge: &self.edges[edge],
            src: ends.src as usize,
            dst: ends.dst as usize,
        })
    }

    fn edges_at<'a>(&'a self, map: &'a Adjacency, id: &str) -> impl Iterator<Item = &'a Edge> {
        self.node_index(id)
            .map(|i| map.at(i))
            .unwrap_or_default()
            .iter()
            .map(|&e| &self.edges[e as usize])
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

/// `a()` and `b()`, on two threads if `parallel`.
fn both<A: Send, B>(parallel: bool, a: impl FnOnce() -> A + Send, b: impl FnOnce() -> B) -> (A, B) {
    if !parallel {
        return (a(), b());
    }
    std::thread::scope(|scope| {
        let a = scope.spawn(a);
        let b = b();
        (a.join().expect("listing edges does not panic"), b)
    })
}

/// The items `kept` gives for some positions of `old` (sorted), in order, with `fresh` put
/// in, handed to `take` in order: what a stable sort of the kept items and then the fresh ones
/// gives. A fresh item's place is found by binary search in `old` (`old_order` compares an
/// old item with a fresh one), so no kept item is compared: a fresh edge that sorts late
/// would otherwise be compared with most of 3M edges at 50,000 files.
fn merge_sorted<T, U>(
    old: &[T],
    kept: impl Iterator<Item = (usize, U)>,
    mut fresh: Vec<U>,
    order: impl Fn(&U, &U) -> Ordering,
    old_order: impl Fn(&T, &U) -> Ordering,
    mut take: impl FnMut(U),
) {
    fresh.sort_by(&order);
    // After every old item not greater than it.
    let cuts: Vec<usize> = fresh
        .iter()
        .map(|item| old.partition_point(|o| old_order(o, item) != Ordering::Greater))
        .collect();
    let mut fresh = fresh.into_iter().zip(cuts).peekable();
    for (at, item) in kept {
        while let Some((f, _)) = fresh.next_if(|&(_, cut)| cut <= at) {
            take(f);
        }
        take(item);
    }
    fresh.for_each(|(f, _)| take(f));
}

/// One copy of each edge end's id, for edges to share: a node's id is then kept once for all
/// its edges, not once per edge end (most of a graph's edges' size otherwise). Edges read in
/// batches are shared batch by batch, so the copies freed are reused by the next batch
/// rather than left as holes across the heap (which slowed every later allocation).
#[derive(Default)]
pub struct Ids(FxHashSet<Arc<str>>);

impl Ids {
    /// The shared copy of `id`, made on first sight.
    pub fn of(&mut self, id: &str) -> Arc<str> {
        match self.0.get(id) {
            Some(shared) => shared.clone(),
            None => {
                let shared: Arc<str> = id.into();
                self.0.insert(shared.clone());
                shared
            }
        }
    }

    /// Makes the edges hold the shared copies of their ends.
    pub fn share_ends(&mut self, edges: &mut [Edge]) {
        for edge in edges {
            self.share(&mut edge.src);
            self.share(&mut edge.dst);
        }
    }

    /// Makes the node hold the shared copies of its id, its file and its parent: a symbol's
    /// file is its file node's id, its parent another node's id, all once in memory.
    pub fn share_node(&mut self, node: &mut Node) {
        self.share(&mut node.id);
        self.share(&mut node.path);
        if let Some(parent) = &mut node.parent {
            self.share(parent);
        }
    }

    /// `id` made the shared copy, or kept as the shared copy on first sight.
    fn share(&mut self, id: &mut Arc<str>) {
        match self.0.get(&**id) {
            Some(shared) => {
                if !Arc::ptr_eq(shared, id) {
                    *id = shared.clone();
                }
            }
            None => {
                self.0.insert(id.clone());
            }
        }
    }
}

/// The part of an id a person reads: the symbol after `::` (`QuerySet.count`), or the
/// file's name (`query.py`).
pub fn short_name(id: &str) -> &str {
    match id.split_once("::") {
        Some((_, symbol)) => symbol,
        None => id.rsplit('/').next().unwrap_or(id),
    }
}

/// Node id of a symbol.
pub fn symbol_id(path: &str, qualname: &str) -> String {
    format!("{path}::{qualname}")
}

/// What an external module's node id starts with.
pub(crate) const EXTERNAL_PREFIX: &str = "ext:";

/// Node id of an external module.
pub(crate) fn external_id(module: &str) -> String {
    format!("{EXTERNAL_PREFIX}{module}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_read_back_hold_their_languages_shared_name() {
        let file = |path: &str, language: &str| {
            let file = SourceFile {
                path: path.to_string(),
                language: language.into(),
                hash: String::new(),
                size: 0,
                last_change: 0,
                is_test: false,
                extract: FileExtract::default(),
            };
            serde_json::from_str::<SourceFile>(&serde_json::to_string(&file).unwrap()).unwrap()
        };
        let (a, b) = (file("a.py", "python"), file("b.py", "python"));
        let shared = crate::languages::Registry::get().shared_name("python");
        assert!(Arc::ptr_eq(&a.language, &b.language));
        assert!(Arc::ptr_eq(&a.language, &shared));
        // A name no language has is kept as written.
        assert_eq!(&*file("c.x", "cobol").language, "cobol");
        assert_eq!(a, file("a.py", "python"));
    }

    #[test]
    fn merging_in_fresh_items_equals_a_stable_sort_of_both() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..500 {
            // (key, tag): keys repeat, tags tell old from fresh and their order.
            let mut old: Vec<(u8, u32)> = (0..rng.usize(0..40))
                .map(|i| (rng.u8(0..12), i as u32))
                .collect();
            old.sort_by_key(|k| k.0);
            // Some old items are kept, the rest are gone.
            let kept: Vec<(usize, (u8, u32))> = old
                .iter()
                .copied()
                .enumerate()
                .filter(|_| rng.u8(0..4) > 0)
                .collect();
            let fresh: Vec<(u8, u32)> = (0..rng.usize(0..8))
                .map(|i| (rng.u8(0..12), 1000 + i as u32))
                .collect();
            let mut expected: Vec<(u8, u32)> = kept
                .iter()
                .map(|k| k.1)
                .chain(fresh.iter().copied())
                .collect();
            expected.sort_by_key(|k| k.0);
            let mut merged = Vec::new();
            merge_sorted(
                &old,
                kept.into_iter(),
                fresh,
                |a, b| a.0.cmp(&b.0),
                |a, b| a.0.cmp(&b.0),
                |item| merged.push(item),
            );
            assert_eq!(merged, expected);
        }
    }

    #[test]
    fn ids_whose_hashes_collide_are_told_apart() {
        let node = |id: &str| Arc::new(random_node(id, NodeKind::File, 0));
        let nodes: Vec<Arc<Node>> = ["a.py", "b.py", "c.py"].iter().map(|id| node(id)).collect();
        let mut index = IdIndex::of(&nodes);
        // Make b.py's hash a collision, as two ids of one hash would leave it.
        index.by_hash.insert(id_hash("b.py"), COLLIDED);
        index.collided.insert("b.py".into(), 1);
        assert_eq!(index.get(&nodes, "a.py"), Some(0));
        assert_eq!(index.get(&nodes, "b.py"), Some(1));
        assert_eq!(index.get(&nodes, "c.py"), Some(2));
        assert_eq!(index.get(&nodes, "d.py"), None);
        // A hash that finds another id's position is no match.
        index.by_hash.insert(id_hash("e.py"), 2);
        assert_eq!(index.get(&nodes, "e.py"), None);

        index.by_hash.remove(&id_hash("e.py"));

        // Remapped after a.py went, c.py moved first and d.py came: the collided id moves
        // with its node, and the new node is found.
        let later: Vec<Arc<Node>> = vec![nodes[2].clone(), nodes[1].clone(), node("d.py")];
        let remapped = index.remapped(&[NO_NODE, 1, 0], &later, &[2]);
        assert_eq!(remapped.get(&later, "a.py"), None);
        assert_eq!(remapped.get(&later, "b.py"), Some(1));
        assert_eq!(remapped.get(&later, "c.py"), Some(0));
        assert_eq!(remapped.get(&later, "d.py"), Some(2));
        // b.py gone too: its collided entry goes with it.
        let remapped =
            remapped.remapped(&[0, NO_NODE, 1], &[later[0].clone(), later[2].clone()], &[]);
        assert_eq!(remapped.collided.len(), 0);
    }

    #[test]
    fn a_files_symbols_are_the_ids_under_its_path() {
        let ids = [
            "a.py",
            "a.py.bak::g",
            "a.py::A",
            "a.py::A.m",
            "a.py::f",
            "a.pyx::h",
            "b.py::k",
        ];
        let nodes: Vec<Node> = ids
            .iter()
            .map(|id| random_node(id, NodeKind::Function, 0))
            .collect();
        let graph = Graph::new(nodes, Vec::new());
        let found =
            |path: &str| -> Vec<&str> { graph.symbols_in(path).iter().map(|n| &*n.id).collect() };
        assert_eq!(found("a.py"), ["a.py::A", "a.py::A.m", "a.py::f"]);
        assert_eq!(found("b.py"), ["b.py::k"]);
        assert!(found("c.py").is_empty());
        assert!(found("a").is_empty());
    }

    /// A node of `kind` with `reach`, in the file its id names.
    fn random_node(id: &str, kind: NodeKind, reach: u32) -> Node {
        Node {
            id: id.into(),
            kind,
            path: id.split("::").next().unwrap().into(),
            name: id.into(),
            start_line: 1,
            end_line: 1,
            signature: None,
            doc: None,
            is_test: false,
            side_effects: Vec::new(),
            mutations: 0,
            reach,
            causal_in: 0,
            impact: 1.0,
            last_change: 0,
            parent: None,
            untyped_calls: Box::default(),
        }
    }

    /// Every node with its reach and every edge of a graph, and each node's edges both ways,
    /// as lines.
    fn graph_lines(g: &Graph) -> Vec<String> {
        let mut lines: Vec<String> = g
            .nodes
            .iter()
            .map(|n| format!("node {} {:?} {}", n.id, n.kind, n.reach))
            .collect();
        lines.extend(g.edges.iter().map(|e| format!("edge {e:?}")));
        for n in &g.nodes {
            let out: Vec<String> = g.outgoing(&n.id).map(Edge::key).collect();
            let into: Vec<String> = g.incoming(&n.id).map(Edge::key).collect();
            lines.push(format!("{} out {out:?} in {into:?}", n.id));
        }
        lines
    }

    /// A patch equals the graph built anew from what it keeps and what is fresh, its
    /// adjacency included: the files' nodes and the edges out of them replaced, edges into a
    /// node defined again kept, into one gone dropped, into an id a fresh node now has
    /// listed at it, promoted edges kept while both ends are, measures carried over by id,
    /// outside modules never duplicated.
    #[test]
    fn a_patched_graph_equals_one_built_anew() {
        let mut rng = fastrand::Rng::with_seed(11);
        let kinds = [EdgeKind::Calls, EdgeKind::Imports, EdgeKind::Drives];
        for round in 0..200 {
            let files: Vec<String> = (0..rng.usize(2..6)).map(|f| format!("f{f}.py")).collect();
            let symbols = |rng: &mut fastrand::Rng, reach: u32| -> Vec<Node> {
                let mut nodes = Vec::new();
                for file in &files {
                    nodes.push(random_node(file, NodeKind::File, reach));
                    for s in 0..rng.usize(0..4) {
                        let id = format!("{file}::s{}", s + rng.usize(0..2));
                        nodes.push(random_node(&id, NodeKind::Function, reach));
                    }
                    // A fresh file may define what an edge pointed at in vain.
                    if reach == 0 && rng.usize(0..3) == 0 {
                        let id = format!("{file}::ghost");
                        nodes.push(random_node(&id, NodeKind::Function, reach));
                    }
                }
                // A changed file may import it no more.
                if reach != 0 || rng.bool() {
                    nodes.push(random_node("ext:os", NodeKind::External, reach));
                }
                nodes.sort_by(|a, b| a.id.cmp(&b.id));
                nodes.dedup_by(|a, b| a.id == b.id);
                nodes
            };
            let edges = |rng: &mut fastrand::Rng, ids: &[String], n: usize| -> Vec<Edge> {
                (0..n)
                    .map(|_| Edge {
                        kind: kinds[rng.usize(0..kinds.len())],
                        src: ids[rng.usize(0..ids.len())].as_str().into(),
                        // Now and then an end that is no node.
                        dst: if rng.usize(0..10) == 0 {
                            format!("{}::ghost", files[rng.usize(0..files.len())]).into()
                        } else {
                            ids[rng.usize(0..ids.len())].as_str().into()
                        },
                        lines: [rng.u32(1..5)].into(),
                        reasons: Box::default(),
                    })
                    .collect()
            };
            let old_nodes = symbols(&mut rng, 7);
            let old_ids: Vec<String> = old_nodes.iter().map(|n| n.id.to_string()).collect();
            let count = rng.usize(0..30);
            let mut old_edges = edges(&mut rng, &old_ids, count);
            old_edges.sort();
            old_edges.dedup_by(|a, b| a == b);
            let old = Graph::new(old_nodes.clone(), old_edges.clone());

            let changed: Vec<String> = files.iter().filter(|_| rng.bool()).cloned().collect();
            let in_changed = |id: &str| {
                changed.iter().any(|p| {
                    id.strip_prefix(p.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
                })
            };
            // Fresh: the changed files' nodes anew (some as before, some new), an outside
            // module that is here already, and edges out of the changed files.
            let fresh_nodes: Vec<Node> = symbols(&mut rng, 0)
                .into_iter()
                .filter(|n| n.kind == NodeKind::External || in_changed(&n.id))
                .collect();
            let mut all_ids = old_ids.clone();
            all_ids.extend(fresh_nodes.iter().map(|n| n.id.to_string()));
            let count = rng.usize(0..10);
            let fresh_edges: Vec<Edge> = edges(&mut rng, &all_ids, count)
                .into_iter()
                .filter(|e| in_changed(&e.src))
                .collect();

            let patched = old.patch(&changed, fresh_nodes.clone(), fresh_edges.clone());

            // The same, worked out plainly by id.
            let fresh_ids: Vec<&str> = fresh_nodes
                .iter()
                .filter(|n| n.kind != NodeKind::External || old.node(&n.id).is_none())
                .map(|n| &*n.id)
                .collect();
            // An outside module goes when the changed files' nodes led to it, nothing else
            // does, and nothing fresh will.
            let gone_node = |id: &str| in_changed(id) && old.node(id).is_some();
            let orphaned = |id: &str| {
                id.starts_with(EXTERNAL_PREFIX)
                    && !fresh_nodes.iter().any(|n| &*n.id == id)
                    && !fresh_edges.iter().any(|e| &*e.dst == id)
                    && old_edges.iter().any(|e| &*e.dst == id && gone_node(&e.src))
                    && !old_edges
                        .iter()
                        .any(|e| &*e.dst == id && !gone_node(&e.src))
            };
            let stays = |id: &str| (!in_changed(id) || fresh_ids.contains(&id)) && !orphaned(id);
            let mut nodes: Vec<Node> = old_nodes
                .iter()
                .filter(|n| n.kind == NodeKind::External || !in_changed(&n.id))
                .filter(|n| !orphaned(&n.id))
                .cloned()
                .collect();
            for node in &fresh_nodes {
                if node.kind == NodeKind::External && old.node(&node.id).is_some() {
                    continue;
                }
                let mut node = node.clone();
                if let Some(before) = old.node(&node.id) {
                    node.reach = before.reach;
                }
                nodes.push(node);
            }
            let mut edges: Vec<Edge> = old_edges
                .iter()
                .filter(|e| {
                    (e.kind == EdgeKind::Drives || !in_changed(&e.src))
                        && stays(&e.src)
                        && stays(&e.dst)
                })
                .cloned()
                .collect();
            edges.extend(fresh_edges.iter().cloned());
            let expected = Graph::new(nodes, edges);
            assert_eq!(
                graph_lines(&patched),
                graph_lines(&expected),
                "round {round}, changed {changed:?}"
            );
            // Its index finds every node where it is, and no node that is gone.
            for (i, node) in patched.nodes.iter().enumerate() {
                assert_eq!(patched.node_index(&node.id), Some(i), "round {round}");
            }
            for node in &old_nodes {
                if expected.node(&node.id).is_none() {
                    assert_eq!(patched.node_index(&node.id), None, "round {round}");
                }
            }
        }
    }

    /// Edges with an end in common hold one copy of its id; different ends stay apart.
    #[test]
    fn edges_share_the_ids_of_their_common_ends() {
        let edge = |src: &str, dst: &str| Edge {
            kind: EdgeKind::Calls,
            src: src.into(),
            dst: dst.into(),
            lines: [1].into(),
            reasons: Box::default(),
        };
        let mut edges = vec![
            edge("a::f", "b::g"),
            edge("a::h", "b::g"),
            edge("b::g", "a::f"),
        ];
        Ids::default().share_ends(&mut edges);
        assert!(Arc::ptr_eq(&edges[0].dst, &edges[1].dst));
        assert!(Arc::ptr_eq(&edges[0].src, &edges[2].dst));
        assert!(Arc::ptr_eq(&edges[1].dst, &edges[2].src));
        assert!(!Arc::ptr_eq(&edges[0].src, &edges[1].src));
        assert_eq!((&*edges[1].src, &*edges[2].src), ("a::h", "b::g"));
    }

    /// A graph sharing with an earlier one holds the earlier copy of each node and edge the
    /// two have equal, its own copy of each that differs, and reads exactly as before.
    #[test]
    fn a_graph_shares_what_equals_the_earlier_graph_and_reads_the_same() {
        let call = |src: &str, dst: &str, line: u32| Edge {
            kind: EdgeKind::Calls,
            src: src.into(),
            dst: dst.into(),
            lines: [line].into(),
            reasons: Box::default(),
        };
        let function = |id: &str, reach: u32| random_node(id, NodeKind::Function, reach);
        let earlier = Graph::new(
            vec![
                random_node("a.py", NodeKind::File, 0),
                function("a.py::f", 1),
                function("a.py::g", 1),
                function("b.py::h", 0),
            ],
            vec![
                call("a.py::f", "a.py::g", 2),
                call("a.py::g", "b.py::h", 5),
                call("b.py::h", "a.py::f", 1),
            ],
        );
        let later = Graph::new(
            vec![
                random_node("a.py", NodeKind::File, 0),
                function("a.py::f", 1),
                // Its measure changed.
                function("a.py::g", 2),
                function("c.py::k", 0),
            ],
            vec![
                call("a.py::f", "a.py::g", 2),
                // Its line moved.
                call("a.py::g", "b.py::h", 6),
                call("c.py::k", "a.py::f", 1),
            ],
        );
        // Lists of shared items hold no room beyond them (a list of nodes made into one of
        // `Arc`s would otherwise keep the nodes' room).
        for graph in [&earlier, &later] {
            assert_eq!(graph.nodes.capacity(), graph.nodes.len());
        }
        let patched = earlier.patch(
            &["b.py".to_string()],
            vec![function("b.py::h", 0)],
            Vec::new(),
        );
        assert_eq!(patched.nodes.capacity(), patched.nodes.len());
        let expected = graph_lines(&later);
        let (shared, difference) = later.sharing(&earlier);
        assert_eq!(graph_lines(&shared), expected);
        // b.py::h went, c.py::k came; of the edges only the first is the same in both.
        assert_eq!(
            difference,
            Difference {
                nodes_added: 1,
                nodes_removed: 1,
                edges_added: 2,
                edges_removed: 2,
            }
        );
        assert!(!difference.is_empty());
        assert!(earlier.clone().sharing(&earlier).1.is_empty());
        let node_shared = |id: &str| {
            Arc::ptr_eq(
                shared.shared_node(id).unwrap(),
                earlier.shared_node(id).unwrap(),
            )
        };
        assert!(node_shared("a.py") && node_shared("a.py::f"));
        assert!(!node_shared("a.py::g"));
        // Edges are shared by chunk: the one chunk here changed, so it is the new graph's own;
        // the same edges built again keep the earlier graph's chunk.
        let chunk_shared = |g: &Graph| {
            g.edges
                .chunks()
                .all(|(_, c)| earlier.edges.chunks().any(|(_, o)| Arc::ptr_eq(o, c)))
        };
        assert!(!chunk_shared(&shared));
        let again = Graph::new(
            earlier.nodes.iter().map(|n| (**n).clone()).collect(),
            earlier.edges.iter().cloned().collect(),
        );
        assert!(!chunk_shared(&again));
        let (again, difference) = again.sharing(&earlier);
        assert!(difference.is_empty() && chunk_shared(&again));
        // Positions are found for the graph's own nodes.
        for (i, node) in shared.nodes.iter().enumerate() {
            assert_eq!(shared.position(node), i);
        }
    }

    /// The files referring to a file are those with a causal edge into it or its symbols,
    /// each once, the file itself left out; none past the limit.
    #[test]
    fn the_files_referring_to_a_file_are_found_up_to_a_limit() {
        let link = |kind, src: &str, dst: &str| Edge {
            kind,
            src: src.into(),
            dst: dst.into(),
            lines: [1].into(),
            reasons: Box::default(),
        };
        let function = |id: &str| random_node(id, NodeKind::Function, 0);
        let graph = Graph::new(
            vec![
                random_node("a.py", NodeKind::File, 0),
                function("a.py::f"),
                function("a.py::g"),
                function("b.py::u"),
                function("c.py::v"),
                function("d.py::w"),
            ],
            vec![
                link(EdgeKind::Contains, "a.py", "a.py::f"),
                link(EdgeKind::Calls, "a.py::g", "a.py::f"),
                link(EdgeKind::Calls, "b.py::u", "a.py::f"),
                link(EdgeKind::Calls, "b.py::u", "a.py::g"),
                link(EdgeKind::Imports, "c.py::v", "a.py"),
                link(EdgeKind::Calls, "a.py::f", "d.py::w"),
            ],
        );
        let a = ["a.py".to_string()];
        assert_eq!(graph.referring_files(&a, 5), Some(vec!["b.py", "c.py"]));
        assert_eq!(graph.referring_files(&a, 2), Some(vec!["b.py", "c.py"]));
        assert_eq!(graph.referring_files(&a, 1), None);
        assert_eq!(
            graph.referring_files(&["d.py".to_string()], 5),
            Some(vec!["a.py"])
        );
    }

    #[test]
    #[should_panic(expected = "is not from this graph")]
    fn a_position_is_only_found_for_the_graphs_own_nodes() {
        let graph = || Graph::new(vec![random_node("a.py", NodeKind::File, 0)], Vec::new());
        let (one, other) = (graph(), graph());
        assert_eq!(one.position(&one.nodes[0]), 0);
        // An equal node of another graph.
        one.position(&other.nodes[0]);
    }

    #[test]
    fn adjacency_lists_each_nodes_edges_in_edge_order() {
        let rows = Adjacency::of(
            4,
            [Some(2), Some(0), Some(2), None, Some(3), Some(2)].into_iter(),
        );
        assert_eq!(rows.at(0), &[1]);
        assert_eq!(rows.at(1), &[] as &[u32]);
        assert_eq!(rows.at(2), &[0, 2, 5]);
        assert_eq!(rows.at(3), &[4]);
        assert_eq!(rows.at(9), &[] as &[u32]);
    }

    /// A graph large enough to make its two adjacency lists on two threads lists at each
    /// node exactly the edges leaving and reaching it.
    #[test]
    fn a_large_graphs_edges_are_listed_at_both_ends() {
        let mut rng = fastrand::Rng::with_seed(3);
        let ids: Vec<String> = (0..500).map(|i| format!("m{i}.py")).collect();
        let nodes_of = |ids: &[String]| -> Vec<Node> {
            ids.iter()
                .map(|id| random_node(id, NodeKind::File, 0))
                .collect()
        };
        let nodes = nodes_of(&ids);
        let edges: Vec<Edge> = (0..PARALLEL_EDGES + 1000)
            .map(|i| Edge {
                kind: EdgeKind::Calls,
                src: ids[rng.usize(0..ids.len())].as_str().into(),
                // Now and then an end that is no node.
                dst: if i % 97 == 0 {
                    "ghost.py".into()
                } else {
                    ids[rng.usize(0..ids.len())].as_str().into()
                },
                lines: [i as u32].into(),
                reasons: Box::default(),
            })
            .collect();
        let graph = Graph::new(nodes, edges.clone());
        for id in ids.iter().step_by(7) {
            let mut out: Vec<&Edge> = graph.outgoing(id).collect();
            let mut into: Vec<&Edge> = graph.incoming(id).collect();
            out.sort();
            into.sort();
            let mut expected_out: Vec<&Edge> = edges
                .iter()
                .filter(|e| *e.src == **id && &*e.dst != "ghost.py")
                .collect();
            let mut expected_into: Vec<&Edge> = edges.iter().filter(|e| *e.dst == **id).collect();
            expected_out.sort();
            expected_into.sort();
            assert_eq!(out, expected_out, "{id}");
            assert_eq!(into, expected_into, "{id}");
        }

        // Patched in place (its lists moved, not made again), it lists what a graph built
        // anew lists.
        let changed: Vec<String> = ids.iter().step_by(50).cloned().collect();
        let fresh: Vec<Edge> = changed
            .iter()
            .enumerate()
            .map(|(i, src)| Edge {
                kind: EdgeKind::Imports,
                src: src.as_str().into(),
                dst: ids[(i * 31) % ids.len()].as_str().into(),
                lines: [1].into(),
                reasons: Box::default(),
            })
            .collect();
        let patched = graph.patch(&changed, nodes_of(&changed), fresh.clone());
        let kept = edges
            .iter()
            .filter(|e| !changed.contains(&e.src.to_string()));
        let anew = Graph::new(nodes_of(&ids), kept.cloned().chain(fresh).collect());
        assert_eq!(graph_lines(&patched), graph_lines(&anew));
        assert!(patched.edges.len() < graph.edges.len());
        // The chunks of edges the changed files have none in are shared, not copied.
        let before = graph.edges.chunks().count();
        let shared = graph
            .edges
            .chunks()
            .filter(|(_, old)| patched.edges.chunks().any(|(_, new)| Arc::ptr_eq(old, new)))
            .count();
        assert!(shared * 4 > before * 3, "{shared} of {before} shared");
    }
}
