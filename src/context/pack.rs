//! The context pack: project shape (a compressed directory tree), top-ranked files, symbols and
//! relationships, hot spots and tests, with index freshness, inside a token budget.

use std::collections::BTreeMap;

use rustc_hash::FxHashSet;
use serde::Serialize;

use super::standing::Standing;
use super::{MemoryNote, ScoreParts, Scorer, lexical, location};
use crate::answer::{Answer, LeftOut, Page};
use crate::graph::score::{Score, edge_score};
use crate::graph::{EdgeKind, Graph, Node, NodeKind};

/// How current the index is.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Freshness {
    pub indexed_commit: Option<String>,
    pub head_commit: Option<String>,
    /// Seconds since the epoch.
    pub indexed_at: i64,
    /// Source files changed on disk since the index (first few).
    pub changed_files: Vec<String>,
    pub changed_count: usize,
}

/// A ranked file or symbol.
#[derive(Debug, Clone, Serialize)]
pub struct Ranked {
    pub id: String,
    pub kind: String,
    pub lines: String,
    pub score: ScoreParts,
    /// Nodes a change here can reach.
    pub reach: u32,
    pub dependents: u32,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub side_effects: Vec<String>,
}

/// A ranked relationship.
#[derive(Debug, Clone, Serialize)]
pub struct Relationship {
    pub kind: String,
    pub src: String,
    pub dst: String,
    pub score: f64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reasons: Vec<String>,
}

/// A directory of the project shape.
#[derive(Debug, Clone, Serialize)]
pub struct Directory {
    pub path: String,
    pub files: usize,
}

/// The answer of `get_context`.
pub type ContextReport = Answer<ContextBody>;

/// What the context pack holds, for programs.
#[derive(Debug, Clone, Serialize)]
pub struct ContextBody {
    pub repo: String,
    pub files: usize,
    pub symbols: usize,
    pub freshness: Freshness,
    pub shape: Vec<Directory>,
    pub top_files: Vec<Ranked>,
    pub top_symbols: Vec<Ranked>,
    pub relationships: Vec<Relationship>,
    pub hot_spots: Vec<Ranked>,
    /// Top project memories (patterns, decisions, risks).
    pub memories: Vec<MemoryNote>,
    pub test_files: usize,
}

const LEFT_OUT: LeftOut = LeftOut {
    unit: "items",
    advice: "; raise max_tokens, pass a focus, or use expand",
};

/// What a `get_context` call focuses on: the caller's text (paths, symbols, a task sentence)
/// and the anchors of the memories that match it.
#[derive(Debug, Clone, Copy, Default)]
pub struct FocusRequest<'a> {
    pub text: Option<&'a str>,
    pub memory_anchors: &'a [String],
}

/// Rank added to a node the focus names by path, or to the best lexical match (scaled by its
/// relevance): larger than any score's total, so what the focus names comes first.
const FOCUS_WEIGHT: f64 = 10.0;

/// What the caller focuses on: paths (or directories) and words.
struct Focus {
    paths: Vec<String>,
    words: Vec<String>,
    anchors: Vec<String>,
}

impl Focus {
    fn parse(request: FocusRequest) -> Focus {
        let focus = request.text;
        let mut paths = Vec::new();
        let mut words = Vec::new();
        for token in focus
            .unwrap_or_default()
            .split(|c: char| c.is_whitespace() || c == ',' || c == ';')
            .map(|t| t.trim_matches(|c: char| "\"'`()[]{}".contains(c)))
            .filter(|t| !t.is_empty())
        {
            if token.contains('/') || token.contains("::") || has_source_extension(token) {
                let mut parts = token.split("::");
                let path = parts.next().unwrap_or(token);
                // `path::Class.method`: the symbol's words count as words too.
                if let Some(symbol) = parts.next().filter(|s| !s.is_empty()) {
                    words.push(symbol.to_string());
                }
                if !path.starts_with('/') && !path.split('/').any(|p| p == "..") {
                    paths.push(
                        path.trim_start_matches("./")
                            .trim_end_matches('/')
                            .to_string(),
                    );
                }
            } else if !lexical::words_of(token).is_empty() {
                words.push(token.to_string());
            }
        }
        Focus {
            paths,
            words,
            anchors: request.memory_anchors.to_vec(),
        }
    }

    fn is_empty(&self) -> bool {
        self.paths.is_empty() && self.words.is_empty()
    }

    /// Nothing to rank by: no paths, no words, no memory anchors.
    fn is_none(&self) -> bool {
        self.is_empty() && self.anchors.is_empty()
    }

    /// The positions of the nodes the focus names by path, ascending: found by their ids,
    /// which start with their paths (`path`, `path::symbol`; `ext:module` for a module outside
    /// the project), in the graph's nodes sorted by id.
    fn named(&self, graph: &Graph) -> Vec<usize> {
        let mut named = Vec::new();
        for path in &self.paths {
            for prefix in [
                path.clone(),
                format!("{}{path}", crate::graph::EXTERNAL_PREFIX),
            ] {
                let start = graph.nodes.partition_point(|n| *n.id < *prefix);
                named.extend(
                    (start..graph.nodes.len())
                        .take_while(|&i| graph.nodes[i].id.starts_with(&prefix))
                        .filter(|&i| self.path_boost(&graph.nodes[i]) > 0.0),
                );
            }
        }
        named.sort_unstable();
        named.dedup();
        named
    }

    /// Extra rank for a node the focus names by path.
    fn path_boost(&self, node: &Node) -> f64 {
        if self
            .paths
            .iter()
            .any(|p| *node.path == **p || node.path.starts_with(&format!("{p}/")))
        {
            FOCUS_WEIGHT
        } else {
            0.0
        }
    }
}

fn has_source_extension(token: &str) -> bool {
    crate::languages::Registry::is_source_path(token)
}

/// Builds the context pack within `max_tokens`.
///
/// Each section is capped at a share of the budget so one cannot crowd out the rest; when the
/// caps leave budget unused while items were cut (small repositories), the pack is written
/// again with wider caps and the attempt that leaves out the fewest items wins.
///
/// Without a focus, a scorer that holds the graph's [`Standing`] lets the pack read only the
/// nodes it shows; without it every node is ranked.
pub fn context(
    scorer: &Scorer,
    repo: &str,
    freshness: Freshness,
    focus: FocusRequest,
    memories: &[MemoryNote],
    max_tokens: usize,
    notes: Vec<String>,
) -> ContextReport {
    let focus = Focus::parse(focus);
    let selection = match scorer.standing() {
        Some(standing) if focus.is_none() => Selection::standing(scorer, standing, memories),
        Some(standing) => Selection::focused(scorer, standing, &focus, memories),
        None => Selection::of(Ranking::new(scorer, &focus), None, memories),
    };
    let attempt = |scale: f64| {
        let header = Header {
            repo,
            freshness: freshness.clone(),
            focus: &focus,
        };
        write(&selection, header, max_tokens, notes.clone(), scale)
    };
    let mut best = attempt(1.0);
    for scale in [2.0, 4.0] {
        if best.truncated == 0 || best.tokens as f64 > max_tokens as f64 * 0.85 {
            break;
        }
        let wider = attempt(scale);
        if wider.truncated < best.truncated {
            best = wider;
        }
    }
    best
}

/// An item of a section and the line it takes in the text.
#[derive(Debug, Clone)]
struct Entry<T> {
    line: String,
    item: T,
}

/// What the pack can show, each list best first: the budget decides how much of each is
/// written.
#[derive(Debug)]
struct Selection {
    /// A focus matched: the lists hold what matches it and its neighbours only.
    focused: bool,
    files: usize,
    test_files: usize,
    symbols: usize,
    memories: Vec<Entry<MemoryNote>>,
    shape: Vec<ShapeLine>,
    top_files: Vec<Entry<Ranked>>,
    top_symbols: Vec<Entry<Ranked>>,
    relationships: Vec<Entry<Relationship>>,
    hot_spots: Vec<Entry<Ranked>>,
    tests: String,
}

/// Most entries a section offers.
const TOP_FILES: usize = 60;
const TOP_SYMBOLS: usize = 60;
pub(super) const RELATIONSHIPS: usize = 40;
const HOT_SPOTS: usize = 30;
/// The best-ranked files and symbols whose edges the relationships are chosen from.
const RELATED_FILES: usize = 100;
const RELATED_SYMBOLS: usize = 200;

/// A file the pack's list of files ranks.
pub(super) fn listed_file(n: &Node) -> bool {
    n.kind == NodeKind::File && !n.is_test
}

/// A symbol the pack's list of symbols ranks.
pub(super) fn listed_symbol(n: &Node) -> bool {
    n.kind.is_symbol() && !n.is_test && n.kind != NodeKind::Constant
}

/// A file that can be a hot spot: outside effects or state writes.
pub(super) fn hot_file(n: &Node) -> bool {
    n.kind == NodeKind::File && !n.is_test && (!n.side_effects.is_empty() || n.mutations > 0)
}

/// What a hot spot's effects add to its rank.
pub(super) fn hot_weight(n: &Node) -> f64 {
    n.side_effects.len() as f64 * 2.0
}

impl Selection {
    /// The selection the ranking gives: with a focus that matches, every list keeps to it
    /// (the budget goes to what the caller asked about, not to the rest of the repository).
    /// The standing, when given, has the counts and the tests.
    fn of(ranking: Ranking, standing: Option<&Standing>, memories: &[MemoryNote]) -> Selection {
        let graph = ranking.graph;
        let node = |i: usize| &*graph.nodes[i];
        let kept = |i: usize| !ranking.focused || ranking.at(i).on_focus;
        let candidates: Vec<usize> = match ranking.on_focus_positions() {
            Some(on) if ranking.focused => on,
            _ => (0..graph.nodes.len()).collect(),
        };
        // Everything by position: nodes are sorted by id, so position order is id order.
        let shown: Vec<(usize, f64)> = candidates
            .iter()
            .copied()
            .filter(|&i| {
                let n = node(i);
                n.kind == NodeKind::File && kept(i) && !(ranking.focused && n.is_test)
            })
            .map(|i| (i, ranking.at(i).rank))
            .collect();
        let shown_files: Vec<&Node> = shown.iter().map(|&(i, _)| node(i)).collect();
        let shown_paths: FxHashSet<&str> = shown_files.iter().map(|f| &*f.path).collect();
        let ranked_files = ranking.best_first(
            &candidates,
            |i| listed_file(node(i)) && kept(i),
            TOP_FILES.max(RELATED_FILES),
        );
        let ranked_symbols = ranking.best_first(
            &candidates,
            |i| listed_symbol(node(i)) && kept(i),
            TOP_SYMBOLS.max(RELATED_SYMBOLS),
        );
        let hot: Vec<(f64, usize)> = shown
            .iter()
            .filter(|&&(i, _)| hot_file(node(i)))
            .map(|&(i, rank)| (hot_weight(node(i)) + rank, i))
            .collect();
        let hot: Vec<&Node> = best_of(hot, HOT_SPOTS).into_iter().map(node).collect();
        let ranks: Vec<f64> = shown.iter().map(|&(_, rank)| rank).collect();
        let (dirs, weights) = weighed(&shown_files, &ranks);
        let shown = ranking.focused.then_some(&shown_paths);
        let (files, test_files, symbols, tests) = match standing {
            Some(standing) => (
                standing.files,
                standing.test_files,
                standing.symbols,
                standing.tests_line(shown),
            ),
            None => {
                let files = graph.files().count();
                let test_files = graph.files().filter(|f| f.is_test).count();
                (
                    files,
                    test_files,
                    graph.nodes.iter().filter(|n| n.kind.is_symbol()).count(),
                    tests_line(&asserted(graph), test_files, shown),
                )
            }
        };
        Selection {
            focused: ranking.focused,
            files,
            test_files,
            symbols,
            memories: memory_entries(memories),
            shape: shape_lines(&dirs.root, &weights),
            top_files: file_entries(&ranking, &ranked_files),
            top_symbols: symbol_entries(&ranking, &ranked_symbols),
            relationships: relationship_entries(&ranking, &ranked_files, &ranked_symbols),
            hot_spots: hot_spot_entries(&ranking, &hot),
            tests,
        }
    }

    /// The selection of a focused pack from the graph's standing and lexicon: only the nodes
    /// on the focus are scored. The same as ranking every node gives.
    fn focused(
        scorer: &Scorer,
        standing: &Standing,
        focus: &Focus,
        memories: &[MemoryNote],
    ) -> Selection {
        let ranking = Ranking::on_focus_only(scorer, focus);
        if ranking.focused {
            Selection::of(ranking, Some(standing), memories)
        } else if ranking.nothing_on_focus() {
            // Every rank is its score, as without a focus.
            Selection::standing(scorer, standing, memories)
        } else {
            // Anchors of matching memories alone lift their nodes in a ranking of everything.
            Selection::of(Ranking::new(scorer, focus), Some(standing), memories)
        }
    }

    /// The selection of a pack without a focus, from the graph's standing: only the nodes it
    /// shows (and those assistants used) are scored. The same as [`Selection::of`] gives.
    fn standing(scorer: &Scorer, standing: &Standing, memories: &[MemoryNote]) -> Selection {
        let ranking = Ranking::unfocused(scorer);
        let graph = ranking.graph;
        let nodes = |positions: Vec<usize>| -> Vec<&Node> {
            positions.into_iter().map(|i| &*graph.nodes[i]).collect()
        };
        let ranked_files = nodes(standing.top_files.best(scorer, RELATED_FILES));
        let ranked_symbols = nodes(standing.top_symbols.best(scorer, RELATED_SYMBOLS));
        let hot = nodes(standing.hot_spots.best(scorer, HOT_SPOTS));
        let shape = match standing.shape.weights(scorer) {
            Some(weights) => shape_lines(&standing.shape.dirs.root, &weights),
            // The clock is before the latest change: weigh every file as it is now.
            None => {
                let files: Vec<&Node> = graph.files().collect();
                let ranks: Vec<f64> = files.iter().map(|n| ranking.rank(n)).collect();
                let (dirs, weights) = weighed(&files, &ranks);
                shape_lines(&dirs.root, &weights)
            }
        };
        Selection {
            focused: false,
            files: standing.files,
            test_files: standing.test_files,
            symbols: standing.symbols,
            memories: memory_entries(memories),
            shape,
            top_files: file_entries(&ranking, &ranked_files),
            top_symbols: symbol_entries(&ranking, &ranked_symbols),
            relationships: relationship_lines(
                graph,
                standing
                    .links
                    .strongest(
                        scorer,
                        &top_positions(graph, &ranked_files, &ranked_symbols),
                    )
                    .into_iter(),
            ),
            hot_spots: hot_spot_entries(&ranking, &hot),
            tests: standing.tests_line(None),
        }
    }
}

/// The memories section's entries, in the order given.
fn memory_entries(memories: &[MemoryNote]) -> Vec<Entry<MemoryNote>> {
    memories
        .iter()
        .map(|m| Entry {
            line: m.line(),
            item: m.clone(),
        })
        .collect()
}

/// Nodes' scores and ranks, worked out ahead for every node or for the nodes on the focus, or
/// for each node asked about.
struct Ranking<'g> {
    graph: &'g Graph,
    scorer: &'g Scorer<'g>,
    known: Known,
    /// A focus was given and some node matches it.
    focused: bool,
}

/// The ranks a [`Ranking`] worked out ahead.
enum Known {
    /// Every node's, by position (a large graph is ranked without hashing ids per lookup).
    Every(Vec<NodeRank>),
    /// The nodes on the focus (every other node's rank is its score).
    OnFocus(rustc_hash::FxHashMap<usize, NodeRank>),
    /// None: without a focus, a rank is the score.
    Unfocused,
}

/// A node's score and its rank: the score's total plus the focus boost.
#[derive(Debug, Clone, Copy)]
struct NodeRank {
    score: Score,
    rank: f64,
    /// The focus names it by path, or its words (or a neighbour's) match the focus.
    on_focus: bool,
}

impl<'g> Ranking<'g> {
    fn new(scorer: &'g Scorer<'g>, focus: &Focus) -> Ranking<'g> {
        let graph = scorer.graph();
        let relevance = lexical::relevance(graph, scorer.lexicon(), &focus.words, &focus.anchors);
        let mut scores = graph
            .nodes
            .iter()
            .enumerate()
            .map(|(i, n)| {
                let score = scorer.score_at(i);
                let lexical = relevance.get(i).copied().unwrap_or(0.0) * FOCUS_WEIGHT;
                let boost = focus.path_boost(n);
                NodeRank {
                    score,
                    rank: score.total() + boost + lexical,
                    on_focus: boost > 0.0 || lexical > 0.0,
                }
            })
            .collect::<Vec<NodeRank>>();
        let named: Vec<usize> = (0..graph.nodes.len())
            .filter(|&i| focus.path_boost(&graph.nodes[i]) > 0.0)
            .collect();
        for j in neighbours_of_named(graph, &named) {
            scores[j].on_focus = true;
        }
        let focused = !focus.is_empty() && scores.iter().any(|s| s.on_focus);
        Ranking {
            graph,
            scorer,
            known: Known::Every(scores),
            focused,
        }
    }

    /// With a focus, through the graph's lexicon (when the scorer has it): only the nodes on
    /// the focus are scored and ranked; the same ranks as [`Ranking::new`] gives.
    fn on_focus_only(scorer: &'g Scorer<'g>, focus: &Focus) -> Ranking<'g> {
        let graph = scorer.graph();
        let relevance = lexical::relevance(graph, scorer.lexicon(), &focus.words, &focus.anchors);
        let rank_of = |i: usize, on_focus: bool| {
            let score = scorer.score_at(i);
            let lexical = relevance.get(i).copied().unwrap_or(0.0) * FOCUS_WEIGHT;
            let boost = focus.path_boost(&graph.nodes[i]);
            NodeRank {
                score,
                rank: score.total() + boost + lexical,
                on_focus: on_focus || boost > 0.0 || lexical > 0.0,
            }
        };
        let named = focus.named(graph);
        let mut known: rustc_hash::FxHashMap<usize, NodeRank> = relevance
            .iter()
            .enumerate()
            .filter(|&(_, &r)| r > 0.0)
            .map(|(i, _)| i)
            .chain(named.iter().copied())
            .map(|i| (i, rank_of(i, false)))
            .collect();
        for j in neighbours_of_named(graph, &named) {
            known.entry(j).or_insert_with(|| rank_of(j, true));
        }
        let focused = !focus.is_empty() && !known.is_empty();
        Ranking {
            graph,
            scorer,
            known: Known::OnFocus(known),
            focused,
        }
    }

    /// Without a focus: a node's rank is its score.
    fn unfocused(scorer: &'g Scorer<'g>) -> Ranking<'g> {
        Ranking {
            graph: scorer.graph(),
            scorer,
            known: Known::Unfocused,
            focused: false,
        }
    }

    /// Whether no node is on the focus (known only when the nodes on it were ranked ahead).
    fn nothing_on_focus(&self) -> bool {
        matches!(&self.known, Known::OnFocus(known) if known.is_empty())
    }

    /// The positions of the nodes on the focus, ascending, when only they were ranked ahead.
    fn on_focus_positions(&self) -> Option<Vec<usize>> {
        match &self.known {
            Known::OnFocus(known) => {
                let mut on: Vec<usize> = known.keys().copied().collect();
                on.sort_unstable();
                Some(on)
            }
            _ => None,
        }
    }

    /// The score and rank of the node at `i`.
    fn at(&self, i: usize) -> NodeRank {
        let unranked = || {
            let score = self.scorer.score_at(i);
            NodeRank {
                score,
                rank: score.total(),
                on_focus: false,
            }
        };
        match &self.known {
            Known::Every(scores) => scores[i],
            Known::OnFocus(known) => known.get(&i).copied().unwrap_or_else(unranked),
            Known::Unfocused => unranked(),
        }
    }

    /// The score and its parts, as an entry shows them; nothing in a focused pack, which
    /// ranks by the focus first (the parts are in the structured answer).
    fn explained(&self, node: &Node) -> String {
        if self.focused {
            String::new()
        } else {
            format!(" {}", self.score(node).explain())
        }
    }

    fn score(&self, node: &Node) -> Score {
        self.at(self.graph.position(node)).score
    }

    fn rank(&self, node: &Node) -> f64 {
        self.at(self.graph.position(node)).rank
    }

    /// The best `limit` of the nodes among `candidates` (positions) that `wanted` admits, best
    /// first; nodes are stored sorted by id, so position breaks ties by id. Ranked by position,
    /// with no lookup per node (every symbol may be a candidate).
    fn best_first(
        &self,
        candidates: &[usize],
        wanted: impl Fn(usize) -> bool,
        limit: usize,
    ) -> Vec<&'g Node> {
        let keyed: Vec<(f64, usize)> = candidates
            .iter()
            .filter(|&&i| wanted(i))
            .map(|&i| (self.at(i).rank, i))
            .collect();
        best_of(keyed, limit)
            .into_iter()
            .map(|i| &*self.graph.nodes[i])
            .collect()
    }

    fn ranked(&self, node: &Node) -> Ranked {
        Ranked {
            id: node.id.to_string(),
            kind: node.kind.as_str().to_string(),
            lines: location(node),
            score: self.score(node).into(),
            reach: node.reach,
            dependents: node.causal_in,
            side_effects: node.side_effects.clone(),
        }
    }
}

/// The positions of the best `limit` of `keyed` (rank, position), highest rank first, then
/// lowest position: the best are picked out (linear time) and only they are sorted, so the
/// order is that of sorting all.
fn best_of(mut keyed: Vec<(f64, usize)>, limit: usize) -> Vec<usize> {
    let order = |a: &(f64, usize), b: &(f64, usize)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if limit == 0 {
        return Vec::new();
    }
    if keyed.len() > limit {
        keyed.select_nth_unstable_by(limit - 1, order);
        keyed.truncate(limit);
    }
    keyed.sort_by(order);
    keyed.into_iter().map(|(_, i)| i).collect()
}

/// The code the focus names by path (`named`, positions) has its neighbours on the focus too,
/// as the words' best matches lend theirs (`lexical`): what calls, imports or is called by it,
/// and their files.
fn neighbours_of_named(graph: &Graph, named: &[usize]) -> Vec<usize> {
    let mut near: Vec<usize> = named
        .iter()
        .flat_map(|&i| graph.links_at(i))
        .filter(|l| l.edge.kind.is_causal())
        .flat_map(|l| [l.src, l.dst])
        .filter(|&j| graph.nodes[j].kind != NodeKind::External)
        .collect();
    let files: Vec<usize> = near
        .iter()
        .filter_map(|&j| graph.node_index(&graph.nodes[j].path))
        .collect();
    near.extend(files);
    near
}

fn file_entries(ranking: &Ranking, ranked_files: &[&Node]) -> Vec<Entry<Ranked>> {
    ranked_files
        .iter()
        .take(TOP_FILES)
        .map(|node| {
            let definitions = ranking
                .graph
                .outgoing(&node.id)
                .filter(|e| e.kind == EdgeKind::Contains)
                .count();
            Entry {
                line: format!(
                    "- {}{} · reach {} · deps {} · {definitions} defs{}",
                    node.id,
                    ranking.explained(node),
                    node.reach,
                    node.causal_in,
                    effects_suffix(node)
                ),
                item: ranking.ranked(node),
            }
        })
        .collect()
}

fn symbol_entries(ranking: &Ranking, ranked_symbols: &[&Node]) -> Vec<Entry<Ranked>> {
    ranked_symbols
        .iter()
        .take(TOP_SYMBOLS)
        .map(|node| Entry {
            line: format!(
                "- {} ({} {}){} · reach {} · deps {}{}",
                node.id,
                node.kind.as_str(),
                location(node),
                ranking.explained(node),
                node.reach,
                node.causal_in,
                effects_suffix(node)
            ),
            item: ranking.ranked(node),
        })
        .collect()
}

/// The strongest causal edges among the best-ranked files and symbols.
fn relationship_entries(
    ranking: &Ranking,
    ranked_files: &[&Node],
    ranked_symbols: &[&Node],
) -> Vec<Entry<Relationship>> {
    let graph = ranking.graph;
    // Only the edges at the best-ranked nodes, found through the graph's adjacency, by
    // position: edges are kept in order, so an edge's position orders as the edge does.
    let mut at_top: Vec<crate::graph::Link> = top_positions(graph, ranked_files, ranked_symbols)
        .into_iter()
        .flat_map(|i| graph.links_at(i))
        .filter(|l| related(graph, l))
        .collect();
    at_top.sort_unstable_by_key(|l| l.at);
    at_top.dedup_by_key(|l| l.at);
    // In a focused pack, between code on the focus only.
    let on_focus = |i: usize| !ranking.focused || ranking.at(i).on_focus;
    let mut relationships: Vec<(f64, f64, usize)> = at_top
        .into_iter()
        .filter(|l| on_focus(l.src) && on_focus(l.dst))
        .map(|l| {
            let (s, d) = (&ranking.at(l.src), &ranking.at(l.dst));
            let score = edge_score(l.edge, &s.score, &d.score);
            // In a focused pack, the edges between the code nearest the focus first (by the
            // focus's part of the ends' ranks, to two places: the scores order the rest).
            let nearest = |r: &NodeRank| ((r.rank - r.score.total()) * 100.0).round() / 100.0;
            let key = if ranking.focused {
                nearest(s).min(nearest(d))
            } else {
                0.0
            };
            (key, score, l.at)
        })
        .collect();
    relationships.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then_with(|| b.1.total_cmp(&a.1))
            .then_with(|| a.2.cmp(&b.2))
    });
    relationships.truncate(RELATIONSHIPS);
    relationship_lines(
        graph,
        relationships.into_iter().map(|(_, score, at)| (score, at)),
    )
}

/// The positions of the best-ranked files and symbols whose edges the relationships are
/// chosen from.
pub(super) fn top_positions(graph: &Graph, files: &[&Node], symbols: &[&Node]) -> Vec<usize> {
    files
        .iter()
        .take(RELATED_FILES)
        .chain(symbols.iter().take(RELATED_SYMBOLS))
        .map(|n| graph.position(n))
        .collect()
}

/// An edge the relationships can show: causal (not a test's drive), between code.
pub(super) fn related(graph: &Graph, link: &crate::graph::Link) -> bool {
    let code = |i: usize| graph.nodes[i].kind != NodeKind::External;
    link.edge.kind.is_causal()
        && link.edge.kind != EdgeKind::Drives
        && code(link.src)
        && code(link.dst)
}

/// The relationships section's entries: each edge (by position) with its score.
fn relationship_lines(
    graph: &Graph,
    chosen: impl Iterator<Item = (f64, usize)>,
) -> Vec<Entry<Relationship>> {
    chosen
        .map(|(score, at)| {
            let edge = &graph.edges[at];
            Entry {
                line: format!(
                    "- {} -{}-> {}{} ({score:.1})",
                    edge.src,
                    edge.kind.table(),
                    edge.dst,
                    lines_suffix(&edge.lines)
                ),
                item: Relationship {
                    kind: edge.kind.table().to_string(),
                    src: edge.src.to_string(),
                    dst: edge.dst.to_string(),
                    score: (score * 100.0).round() / 100.0,
                    reasons: edge.reasons.iter().map(|r| r.to_string()).collect(),
                },
            }
        })
        .collect()
}

/// Files with side effects or state writes (the most effects first, as ranked).
fn hot_spot_entries(ranking: &Ranking, hot: &[&Node]) -> Vec<Entry<Ranked>> {
    hot.iter()
        .map(|node| Entry {
            line: format!(
                "- {}: {}{}",
                node.id,
                if node.side_effects.is_empty() {
                    "no outside effects".to_string()
                } else {
                    node.side_effects.join(", ")
                },
                if node.mutations > 0 {
                    format!(" · {} state writes", node.mutations)
                } else {
                    String::new()
                }
            ),
            item: ranking.ranked(node),
        })
        .collect()
}

/// What the pack's opening lines say besides the counts.
struct Header<'a> {
    repo: &'a str,
    freshness: Freshness,
    focus: &'a Focus,
}

/// Each section's share of the budget, in the order written.
struct Shares {
    memories: f64,
    shape: f64,
    files: f64,
    symbols: f64,
    relationships: f64,
    hot_spots: f64,
}

/// The shares of a pack of the whole repository.
const WHOLE: Shares = Shares {
    memories: 0.15,
    shape: 0.2,
    files: 0.22,
    symbols: 0.22,
    relationships: 0.14,
    hot_spots: 0.12,
};

/// The shares of a focused pack: the matching symbols first, the shape only where the focus
/// is.
const FOCUSED: Shares = Shares {
    memories: 0.15,
    shape: 0.06,
    files: 0.18,
    symbols: 0.39,
    relationships: 0.12,
    hot_spots: 0.1,
};

/// Writes one attempt at the pack, each section within its share of the budget times
/// `scale`.
fn write(
    selection: &Selection,
    header: Header,
    max_tokens: usize,
    notes: Vec<String>,
    scale: f64,
) -> ContextReport {
    let mut out = Page::new(max_tokens, notes);
    write_header(&mut out, selection, &header);
    let share =
        |out: &Page, fraction: f64| out.used() + (out.max() as f64 * fraction * scale) as usize;
    let mut body = ContextBody {
        repo: header.repo.to_string(),
        files: selection.files,
        symbols: selection.symbols,
        freshness: header.freshness,
        shape: Vec::new(),
        top_files: Vec::new(),
        top_symbols: Vec::new(),
        relationships: Vec::new(),
        hot_spots: Vec::new(),
        memories: Vec::new(),
        test_files: selection.test_files,
    };
    let shares = if selection.focused { &FOCUSED } else { &WHOLE };
    // What the team learned: the top project memories.
    if !selection.memories.is_empty() {
        let limit = share(&out, shares.memories);
        out.force("## Memories (patterns, decisions, risks)".to_string());
        body.memories = fit(&mut out, &selection.memories, limit);
    }
    let limit = share(&out, shares.shape);
    out.force(if selection.focused {
        "## Shape (where the focus is)".to_string()
    } else {
        "## Shape".to_string()
    });
    body.shape = write_shape(&mut out, &selection.shape, limit);
    let limit = share(&out, shares.files);
    out.force("## Top files".to_string());
    body.top_files = fit(&mut out, &selection.top_files, limit);
    let limit = share(&out, shares.symbols);
    out.force("## Top symbols".to_string());
    body.top_symbols = fit(&mut out, &selection.top_symbols, limit);
    let limit = share(&out, shares.relationships);
    out.force("## Key relationships".to_string());
    body.relationships = fit(&mut out, &selection.relationships, limit);
    let limit = share(&out, shares.hot_spots);
    out.force("## Hot spots (side effects, state writes)".to_string());
    body.hot_spots = fit(&mut out, &selection.hot_spots, limit);
    out.force("## Tests".to_string());
    out.push(selection.tests.clone());
    out.finish(body, LEFT_OUT)
}

fn write_header(out: &mut Page, selection: &Selection, header: &Header) {
    out.force(format!(
        "# cairn context: {} — {} files ({} tests), {} symbols",
        header.repo, selection.files, selection.test_files, selection.symbols
    ));
    out.force(freshness_line(&header.freshness));
    let focus = header.focus;
    if !focus.is_empty() {
        out.force(format!(
            "focus: {}",
            focus
                .paths
                .iter()
                .chain(focus.words.iter())
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
        ));
    }
    out.force(if selection.focused {
        "ranked by the focus, then by score; reach = nodes a change can affect; deps = direct dependents".to_string()
    } else {
        "score = recency + frequency + centrality + side-effect cost (r f c s); c = ln impact (what depends on it, nearest weighing most); reach = nodes a change can affect; deps = direct dependents".to_string()
    });
}

/// Writes the entries that fit under `limit` (a running total); returns their items.
fn fit<T: Clone>(out: &mut Page, entries: &[Entry<T>], limit: usize) -> Vec<T> {
    entries
        .iter()
        .filter(|entry| out.push_until(entry.line.clone(), limit))
        .map(|entry| entry.item.clone())
        .collect()
}

/// Writes the project shape: shallow levels first, deeper ones while the share lasts, a
/// directory only under its shown parent; returns the directories written.
fn write_shape(out: &mut Page, lines: &[ShapeLine], limit: usize) -> Vec<Directory> {
    let mut order: Vec<usize> = (0..lines.len()).collect();
    order.sort_by_key(|&i| (lines[i].depth, i));
    let mut chosen = vec![false; lines.len()];
    let mut spent = out.used();
    for i in order {
        let parent_shown = lines[i].parent.is_none_or(|p| chosen[p]);
        if parent_shown && spent + lines[i].cost <= limit {
            chosen[i] = true;
            spent += lines[i].cost;
        }
    }
    let mut shown = Vec::new();
    for (line, chosen) in lines.iter().zip(chosen) {
        if chosen && out.push_costed(line.text.clone(), line.cost, usize::MAX) {
            shown.push(line.directory.clone());
        } else {
            out.dropped += 1;
        }
    }
    shown
}

fn freshness_line(f: &Freshness) -> String {
    let short = |c: &str| c.chars().take(10).collect::<String>();
    let commit = match (&f.indexed_commit, &f.head_commit) {
        (Some(indexed), Some(head)) if indexed == head => {
            format!("at commit {} (HEAD)", short(indexed))
        }
        (Some(indexed), Some(head)) => {
            format!(
                "at commit {}; HEAD has moved to {}",
                short(indexed),
                short(head)
            )
        }
        (Some(indexed), None) => format!("at commit {}", short(indexed)),
        (None, _) => "outside git".to_string(),
    };
    let changed = if f.changed_count == 0 {
        "no indexed file changed since".to_string()
    } else {
        format!(
            "{} indexed files changed since (run cairn index): {}{}",
            f.changed_count,
            f.changed_files.join(", "),
            if f.changed_count > f.changed_files.len() {
                ", …"
            } else {
                ""
            }
        )
    };
    format!("index {commit}; {changed}")
}

fn effects_suffix(node: &Node) -> String {
    if node.side_effects.is_empty() {
        String::new()
    } else {
        format!(" · effects: {}", node.side_effects.join(","))
    }
}

fn lines_suffix(lines: &[u32]) -> String {
    match lines {
        [] => String::new(),
        [one] => format!(" L{one}"),
        [first, rest @ ..] => format!(" L{first} +{}", rest.len()),
    }
}

/// The test files and the modules most of them assert on (`shown`: among the modules a
/// focused pack keeps to).
pub(super) fn tests_line<S: AsRef<str>>(
    asserted: &[(S, usize)],
    test_files: usize,
    shown: Option<&FxHashSet<&str>>,
) -> String {
    let listed: Vec<String> = asserted
        .iter()
        .filter(|(m, _)| shown.is_none_or(|s| s.contains(m.as_ref())))
        .take(5)
        .map(|(path, n)| format!("{} ({n})", path.as_ref()))
        .collect();
    match (listed.is_empty(), shown.is_some()) {
        (true, false) => format!("{test_files} test files; none import project modules directly"),
        (true, true) => format!("{test_files} test files; none assert on these modules directly"),
        (false, false) => format!(
            "{test_files} test files; most tested modules: {}",
            listed.join(", ")
        ),
        (false, true) => format!(
            "{test_files} test files; most tested of these modules: {}",
            listed.join(", ")
        ),
    }
}

/// The modules test files assert on (directly or on their definitions), with how many test
/// files do, the most tested first (then by path).
pub(super) fn asserted(graph: &Graph) -> Vec<(&str, usize)> {
    let mut pairs: FxHashSet<(&str, &str)> = FxHashSet::default();
    for (e, _) in graph
        .edges
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == EdgeKind::AssertsOn)
    {
        if let Some(link) = graph.link(e) {
            let (test, target) = (&graph.nodes[link.src], &graph.nodes[link.dst]);
            pairs.insert((&*target.path, &*test.path));
        }
    }
    let mut asserted: BTreeMap<&str, usize> = BTreeMap::new();
    for (module, _) in pairs {
        *asserted.entry(module).or_default() += 1;
    }
    let mut most: Vec<(&str, usize)> = asserted.into_iter().collect();
    most.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(b.0)));
    most
}

/// One line of the project shape.
#[derive(Debug)]
struct ShapeLine {
    text: String,
    /// Tokens of the line with its line break.
    cost: usize,
    directory: Directory,
    depth: usize,
    parent: Option<usize>,
}

impl ShapeLine {
    fn new(text: String, directory: Directory, depth: usize, parent: Option<usize>) -> ShapeLine {
        ShapeLine {
            cost: crate::tokens::count(&text) + 1,
            text,
            directory,
            depth,
            parent,
        }
    }
}

/// A directory of the project shape: its files, their languages, its subdirectories, and a
/// number (`id`) by which a shape weighs it.
#[derive(Debug, Default)]
pub(super) struct Dir {
    id: u32,
    files: usize,
    languages: BTreeMap<String, usize>,
    children: BTreeMap<String, Dir>,
}

/// The directories of a set of files, numbered as they are first met (the root is 0).
#[derive(Debug, Default)]
pub(super) struct Dirs {
    pub(super) root: Dir,
    /// Directories below the root.
    below: u32,
}

impl Dirs {
    /// Adds a file; the ids of the directories it is in, the root first.
    pub(super) fn add(&mut self, file: &Node) -> Vec<u32> {
        let extension = file.path.rsplit_once('.').map_or("", |(_, e)| e);
        let mut dir = &mut self.root;
        dir.files += 1;
        let mut chain = vec![dir.id];
        let Some((folders, _)) = file.path.rsplit_once('/') else {
            return chain;
        };
        // Names are copied only when first met.
        for part in folders.split('/') {
            if !dir.children.contains_key(part) {
                self.below += 1;
                let id = self.below;
                dir.children.insert(
                    part.to_string(),
                    Dir {
                        id,
                        ..Dir::default()
                    },
                );
            }
            dir = dir.children.get_mut(part).expect("inserted above");
            dir.files += 1;
            match dir.languages.get_mut(extension) {
                Some(count) => *count += 1,
                None => {
                    dir.languages.insert(extension.to_string(), 1);
                }
            }
            chain.push(dir.id);
        }
        chain
    }

    /// How many directories there are, the root included.
    pub(super) fn len(&self) -> usize {
        self.below as usize + 1
    }
}

/// The shape of `files`, each weighing its rank: their directories, and each directory's
/// weight by id (its files' ranks summed).
fn weighed(files: &[&Node], ranks: &[f64]) -> (Dirs, Vec<f64>) {
    let mut dirs = Dirs::default();
    let chains: Vec<Vec<u32>> = files.iter().map(|f| dirs.add(f)).collect();
    let mut weights = vec![0.0; dirs.len()];
    for (&weight, chain) in ranks.iter().zip(&chains) {
        for &d in chain {
            weights[d as usize] += weight;
        }
    }
    (dirs, weights)
}

const SHAPE_CHILDREN: [usize; 3] = [10, 6, 4];

/// The project's directories as an indented tree, most important (by `weights`) first,
/// compressed: chains of single directories are joined and long sibling lists end with a count
/// of the rest.
fn shape_lines(root: &Dir, weights: &[f64]) -> Vec<ShapeLine> {
    let mut out = Vec::new();
    let top_level = root.files - root.children.values().map(|c| c.files).sum::<usize>();
    if top_level > 0 {
        out.push(ShapeLine::new(
            format!("- ./ {top_level} files at the top level"),
            Directory {
                path: String::new(),
                files: top_level,
            },
            0,
            None,
        ));
    }
    render_dir(root, weights, "", 0, None, &mut out);
    out
}

fn render_dir(
    dir: &Dir,
    weights: &[f64],
    prefix: &str,
    depth: usize,
    parent: Option<usize>,
    out: &mut Vec<ShapeLine>,
) {
    let Some(&max_children) = SHAPE_CHILDREN.get(depth) else {
        return;
    };
    let mut children: Vec<(&String, &Dir)> = dir.children.iter().collect();
    // Weights equal to six places are equal: a pack without a focus sums the same parts in
    // another order (`Standing`), which may round differently.
    let weight = |d: &Dir| (weights[d.id as usize] * 1e6).round();
    children.sort_by(|a, b| {
        weight(b.1)
            .total_cmp(&weight(a.1))
            .then_with(|| a.0.cmp(b.0))
    });
    let indent = "  ".repeat(depth);
    for (name, child) in children.iter().take(max_children) {
        let mut path = format!("{prefix}{name}/");
        let mut node = *child;
        while node.children.len() == 1
            && node.files == node.children.values().next().map_or(0, |c| c.files)
        {
            let (next_name, next) = node.children.iter().next().expect("one child");
            path.push_str(next_name);
            path.push('/');
            node = next;
        }
        let languages: Vec<String> = node
            .languages
            .iter()
            .map(|(ext, n)| format!("{ext} {n}"))
            .collect();
        let shown = path.strip_prefix(prefix).unwrap_or(&path).to_string();
        out.push(ShapeLine::new(
            format!(
                "{indent}- {shown} {} files ({})",
                node.files,
                languages.join(", ")
            ),
            Directory {
                path: path.trim_end_matches('/').to_string(),
                files: node.files,
            },
            depth,
            parent,
        ));
        let me = out.len() - 1;
        if node.children.len() > 1 {
            render_dir(node, weights, &path, depth + 1, Some(me), out);
        }
    }
    if children.len() > max_children {
        let rest: usize = children[max_children..].iter().map(|(_, d)| d.files).sum();
        out.push(ShapeLine::new(
            format!(
                "{indent}- … {} more directories ({rest} files)",
                children.len() - max_children
            ),
            Directory {
                path: format!("{prefix}…"),
                files: rest,
            },
            depth,
            parent,
        ));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::context::testing::shop;

    fn ids<T>(entries: &[Entry<T>], id: impl Fn(&T) -> String) -> Vec<String> {
        entries.iter().map(|e| id(&e.item)).collect()
    }

    #[test]
    fn selection_ranks_the_focus_first_and_finds_effects_and_calls() {
        let graph = shop();
        let access = HashMap::new();
        let scorer = Scorer::new(&graph, &access, 0);
        let focus = Focus::parse(FocusRequest {
            text: Some("shop/views.py"),
            ..FocusRequest::default()
        });
        let selection = Selection::of(Ranking::new(&scorer, &focus), None, &[]);
        assert_eq!((selection.files, selection.test_files), (3, 1));
        assert_eq!(
            ids(&selection.top_files, |r| r.id.clone()),
            ["shop/views.py", "shop/pricing.py"]
        );
        assert_eq!(selection.top_symbols[0].item.id, "shop/views.py::checkout");
        let hot = &selection.hot_spots;
        assert_eq!(ids(hot, |r| r.id.clone()), ["shop/pricing.py"]);
        assert_eq!(hot[0].line, "- shop/pricing.py: env");
        assert!(
            ids(&selection.relationships, |r| format!(
                "{} {} {}",
                r.src, r.kind, r.dst
            ))
            .contains(&"shop/views.py::checkout calls shop/pricing.py::price_of".to_string()),
            "{:?}",
            selection.relationships
        );
        assert_eq!(
            selection.tests,
            "1 test files; most tested of these modules: shop/pricing.py (1)"
        );
    }

    #[test]
    fn the_best_picked_out_are_the_first_of_sorting_all() {
        let mut rng = fastrand::Rng::with_seed(3);
        for _ in 0..200 {
            // Few distinct ranks, so ties are broken by position.
            let keyed: Vec<(f64, usize)> = (0..rng.usize(0..300))
                .map(|i| (f64::from(rng.u8(..6)), i * 7 % 301))
                .collect();
            let mut all = keyed.clone();
            all.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
            for limit in [0, 1, 5, 60, 400] {
                let expected: Vec<usize> = all.iter().take(limit).map(|&(_, i)| i).collect();
                assert_eq!(best_of(keyed.clone(), limit), expected, "limit {limit}");
            }
        }
    }

    #[test]
    fn a_section_writes_what_fits_and_counts_the_rest() {
        let entries: Vec<Entry<usize>> = (0..50)
            .map(|i| Entry {
                line: format!("- entry number {i} with a few words"),
                item: i,
            })
            .collect();
        let mut page = Page::new(1_000, Vec::new());
        let limit = page.used() + 100;
        let kept = fit(&mut page, &entries, limit);
        assert!(!kept.is_empty() && kept.len() < 50);
        assert_eq!(kept, (0..kept.len()).collect::<Vec<_>>());
        assert_eq!(page.dropped, 50 - kept.len());
        assert!(page.used() <= limit);
    }
}
