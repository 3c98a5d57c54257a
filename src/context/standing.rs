//! What a context pack without a focus needs of a graph that only the graph decides, worked
//! out once per graph: its counts, its tests line, the directory tree of the project shape, and
//! for each ranked list its members ordered two ways, by the part of their rank that the clock
//! and assistants' use leave alone (centrality, side-effect cost) and by last change. A call
//! then adds the clock's part (recency) and use (frequency) to the few members it reads: the
//! best `k` are found by walking both orders at once and stopping as soon as no member not
//! yet read can beat the `k`th (Fagin's threshold algorithm), so an answer reads tens of nodes
//! of a graph of any size, not every node, and is exactly what ranking every node would give.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};

use rustc_hash::{FxHashMap, FxHashSet};

use super::Scorer;
use crate::graph::score::{Access, Score, edge_score, node_score, recency};
use crate::graph::{Graph, Node};

/// Added to the bound of what an unread member can score, so that the order of the bound's
/// additions (which may round differently from a score's own) never ends a walk early.
const SLACK: f64 = 1e-9;

/// The parts of a graph's unfocused context pack that do not change with the clock or with
/// use; [`Standing::of`] works them out once per graph.
#[derive(Debug)]
pub struct Standing {
    pub(super) files: usize,
    pub(super) test_files: usize,
    pub(super) symbols: usize,
    /// The modules tests assert on, the most tested first, with how many test files do.
    asserted: Vec<(Arc<str>, usize)>,
    pub(super) top_files: Ranks,
    pub(super) top_symbols: Ranks,
    pub(super) hot_spots: Ranks,
    pub(super) shape: Tree,
    pub(super) links: Links,
}

impl Standing {
    /// Everything the graph alone decides of an unfocused pack.
    pub fn of(graph: &Graph) -> Standing {
        let files: Vec<usize> = (0..graph.nodes.len())
            .filter(|&i| graph.nodes[i].kind == crate::graph::NodeKind::File)
            .collect();
        let test_files = files.iter().filter(|&&i| graph.nodes[i].is_test).count();
        Standing {
            files: files.len(),
            test_files,
            symbols: graph.nodes.iter().filter(|n| n.kind.is_symbol()).count(),
            asserted: super::pack::asserted(graph)
                .into_iter()
                .map(|(m, n)| (m.into(), n))
                .collect(),
            top_files: Ranks::of(graph, super::pack::listed_file, |_| 0.0),
            top_symbols: Ranks::of(graph, super::pack::listed_symbol, |_| 0.0),
            hot_spots: Ranks::of(graph, super::pack::hot_file, super::pack::hot_weight),
            shape: Tree::of(graph, &files),
            links: Links::default(),
        }
    }

    /// The tests line of a pack that shows these modules (`None`: a pack without a focus).
    pub(super) fn tests_line(&self, shown: Option<&FxHashSet<&str>>) -> String {
        super::pack::tests_line(&self.asserted, self.test_files, shown)
    }
}

/// The members of one ranked list (files, symbols, hot spots), in two orders.
#[derive(Debug)]
pub(super) struct Ranks {
    /// Whether a node belongs to the list.
    member: fn(&Node) -> bool,
    /// What the list adds to a member's score (hot spots: their side effects).
    extra: fn(&Node) -> f64,
    /// Members by their rank without recency and use, highest first, then by position (the
    /// positions alone: a walk reads few, and works their keys out again).
    by_standing: Vec<u32>,
    /// Members by last change, latest first, then by position.
    by_change: Vec<u32>,
}

impl Ranks {
    fn of(graph: &Graph, member: fn(&Node) -> bool, extra: fn(&Node) -> f64) -> Ranks {
        let members: Vec<u32> = (0..graph.nodes.len())
            .filter(|&i| member(&graph.nodes[i]))
            .map(|i| i as u32)
            .collect();
        let mut by_standing: Vec<(f64, u32)> = members
            .iter()
            .map(|&i| {
                let node = &graph.nodes[i as usize];
                (extra(node) + unused(node), i)
            })
            .collect();
        by_standing.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let mut by_change: Vec<(i64, u32)> = members
            .iter()
            .map(|&i| (graph.nodes[i as usize].last_change, i))
            .collect();
        by_change.sort_unstable_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        Ranks {
            member,
            extra,
            by_standing: by_standing.into_iter().map(|(_, i)| i).collect(),
            by_change: by_change.into_iter().map(|(_, i)| i).collect(),
        }
    }

    /// The `k` best members at the scorer's clock and use, best first (a higher rank, then
    /// the earlier position): exactly the first `k` of every member sorted so.
    pub(super) fn best(&self, scorer: &Scorer, k: usize) -> Vec<usize> {
        self.best_reading(scorer, k).0
    }

    /// [`Ranks::best`], and how many members it read.
    fn best_reading(&self, scorer: &Scorer, k: usize) -> (Vec<usize>, usize) {
        let graph = scorer.graph();
        let rank = |i: usize| (self.extra)(&graph.nodes[i]) + scorer.score_at(i).total();
        let mut best = Best::new(k);
        // Members someone used score more than their standing says: read each of them.
        let mut read: FxHashSet<u32> = FxHashSet::default();
        for i in scorer.used() {
            if (self.member)(&graph.nodes[i]) {
                read.insert(i as u32);
                best.offer(rank(i), i);
            }
        }
        let (mut standing, mut change) = (self.by_standing.iter(), self.by_change.iter());
        // Until one order is read to its end: then every member has been read.
        while let (Some(&s), Some(&c)) = (standing.next(), change.next()) {
            let (high, late) = (&graph.nodes[s as usize], &graph.nodes[c as usize]);
            let (top, latest) = ((self.extra)(high) + unused(high), late.last_change);
            for at in [s, c] {
                if read.insert(at) {
                    best.offer(rank(at as usize), at as usize);
                }
            }
            // A member still unread comes after these two in both orders: it ranks at most
            // the standing of one and the recency of the other.
            let bound = top + recency(latest, scorer.now()) + SLACK;
            if best.beats(bound) {
                break;
            }
        }
        (best.into_sorted(), read.len())
    }
}

/// Each node's edges that the relationships can show, by the most they add to the node's own
/// rank when the other end has neither recency nor use (its standing and the edge's own
/// part), highest first: worked out for a node when it is first among the best ranked.
#[derive(Debug, Default)]
pub(super) struct Links {
    by_node: Mutex<FxHashMap<u32, Strongest>>,
}

/// A node's edges as [`Links`] orders them: what each adds at most, and its position.
type Strongest = Arc<[(f64, u32)]>;

impl Links {
    /// The strongest relationships at the nodes at `top` (by score, then position; both
    /// exact), as many as the pack shows: a node's edges are read only while they can beat the
    /// weakest kept, so a hub's thousands of weak edges are not.
    pub(super) fn strongest(&self, scorer: &Scorer, top: &[usize]) -> Vec<(f64, usize)> {
        let graph = scorer.graph();
        // The most use can add to the other end's rank.
        let used = scorer
            .used()
            .map(|i| scorer.score_at(i).frequency)
            .fold(0.0, f64::max);
        let mut best = Best::new(super::pack::RELATIONSHIPS);
        let mut read: FxHashSet<u32> = FxHashSet::default();
        for &t in top {
            let rank = scorer.score_at(t).total();
            for &(adds, at) in self.at(graph, t).iter() {
                if best.beats(rank + adds + 1.0 + used + SLACK) {
                    break;
                }
                if read.insert(at) {
                    let link = graph.link(at as usize).expect("an edge between nodes");
                    let score = edge_score(
                        link.edge,
                        &scorer.score_at(link.src),
                        &scorer.score_at(link.dst),
                    );
                    best.offer(score, at as usize);
                }
            }
        }
        best.into_ranked()
    }

    fn at(&self, graph: &Graph, node: usize) -> Strongest {
        let mut by_node = self.by_node.lock().expect("no holder panics");
        by_node
            .entry(node as u32)
            .or_insert_with(|| {
                let mut links: Vec<(f64, u32)> = graph
                    .links_at(node)
                    .filter(|l| super::pack::related(graph, l))
                    .map(|l| {
                        let other = if l.src == node { l.dst } else { l.src };
                        let own = edge_score(l.edge, &Score::default(), &Score::default());
                        (unused(&graph.nodes[other]) + own, l.at as u32)
                    })
                    .collect();
                links.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                links.into()
            })
            .clone()
    }
}

/// A node's score without recency and use: what the graph alone gives it.
fn unused(node: &Node) -> f64 {
    let score = node_score(node, Access::default(), 0);
    score.centrality + score.side_effect_cost
}

/// The `k` best offers so far, the worst on top.
struct Best {
    k: usize,
    heap: BinaryHeap<std::cmp::Reverse<Candidate>>,
}

/// A ranked position: a higher rank is better, then an earlier position.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    rank: f64,
    at: usize,
}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.rank
            .total_cmp(&other.rank)
            .then_with(|| other.at.cmp(&self.at))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Candidate {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Candidate {}

impl Best {
    fn new(k: usize) -> Best {
        Best {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, rank: f64, at: usize) {
        self.heap.push(std::cmp::Reverse(Candidate { rank, at }));
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    /// Whether `k` are held and the worst of them ranks above `bound`.
    fn beats(&self, bound: f64) -> bool {
        self.heap.len() >= self.k && self.heap.peek().is_some_and(|w| w.0.rank > bound)
    }

    fn into_sorted(self) -> Vec<usize> {
        self.into_ranked().into_iter().map(|(_, at)| at).collect()
    }

    /// The offers kept, the best first, with their ranks.
    fn into_ranked(self) -> Vec<(f64, usize)> {
        // `into_sorted_vec` orders the reversed candidates ascending: the best first.
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|c| (c.0.rank, c.0.at))
            .collect()
    }
}

/// The project's directories with what the graph alone decides of their weight (the sum of
/// their files' ranks): the standing part, and the recency part as a sum that one factor turns
/// into any later time's.
#[derive(Debug)]
pub(super) struct Tree {
    pub(super) dirs: super::pack::Dirs,
    /// Per directory (by `Dir::id`): its files' standing.
    standing: Vec<f64>,
    /// Per directory: its files' recency at `latest`, each `exp((last - latest) / 7 days)`.
    recent: Vec<f64>,
    /// The latest change of any file.
    latest: i64,
    /// Each file's directories, outermost first (for the files someone used).
    dirs_of: FxHashMap<u32, Vec<u32>>,
}

impl Tree {
    fn of(graph: &Graph, files: &[usize]) -> Tree {
        let nodes: Vec<&Node> = files.iter().map(|&i| &*graph.nodes[i]).collect();
        let mut dirs = super::pack::Dirs::default();
        let chains: Vec<Vec<u32>> = nodes.iter().map(|n| dirs.add(n)).collect();
        let latest = nodes.iter().map(|n| n.last_change).max().unwrap_or(0);
        let mut standing = vec![0.0; dirs.len()];
        let mut recent = vec![0.0; dirs.len()];
        for (node, chain) in nodes.iter().zip(&chains) {
            let part = unused(node);
            let fresh = recency(node.last_change, latest);
            for &d in chain {
                standing[d as usize] += part;
                recent[d as usize] += fresh;
            }
        }
        Tree {
            dirs,
            standing,
            recent,
            latest,
            dirs_of: files.iter().map(|&i| i as u32).zip(chains).collect(),
        }
    }

    /// Each directory's weight at the scorer's clock and use; none when the clock is before
    /// the latest change (the recency of a change in the future does not factor).
    pub(super) fn weights(&self, scorer: &Scorer) -> Option<Vec<f64>> {
        let now = scorer.now();
        if now < self.latest {
            return None;
        }
        // recency(last, now) = exp(-(now - last) / τ) = exp((last - latest) / τ) · exp(-(now - latest) / τ)
        let factor = recency(self.latest, now);
        let mut weights: Vec<f64> = self
            .standing
            .iter()
            .zip(&self.recent)
            .map(|(s, r)| s + r * factor)
            .collect();
        let graph = scorer.graph();
        for i in scorer.used() {
            let Some(chain) = self.dirs_of.get(&(i as u32)) else {
                continue;
            };
            let node = &graph.nodes[i];
            let unused_rank = unused(node) + recency(node.last_change, now);
            let more = scorer.score_at(i).total() - unused_rank;
            for &d in chain {
                weights[d as usize] += more;
            }
        }
        Some(weights)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::sync::Arc;

    use super::*;
    use crate::context::testing::graph_of;
    use crate::context::{ContextReport, FocusRequest, Freshness, context};

    const DAY: i64 = 86_400;

    /// A random project: modules in a few packages calling and importing each other's
    /// functions and classes, some reading the environment or writing files, some tests.
    fn project(rng: &mut fastrand::Rng, count: usize) -> Graph {
        let dirs = [
            "app",
            "app/core",
            "app/core/db",
            "lib",
            "web/views",
            "tests",
        ];
        let modules: Vec<(String, String)> = (0..count)
            .map(|m| {
                let dir = dirs[rng.usize(..dirs.len())];
                let name = if dir == "tests" {
                    format!("test_m{m}")
                } else {
                    format!("m{m}")
                };
                (
                    format!("{dir}/{name}.py"),
                    format!("{}.{name}", dir.replace('/', ".")),
                )
            })
            .collect();
        let files: Vec<(String, String)> = (0..count)
            .map(|m| {
                let mut text = String::from("import os\n");
                for _ in 0..rng.usize(0..4) {
                    let other = rng.usize(..count);
                    if other != m {
                        text += &format!("from {} import f0, Thing\n", modules[other].1);
                    }
                }
                if rng.bool() {
                    text += "LIMIT = 3\n";
                }
                for f in 0..rng.usize(1..4) {
                    text += &format!("\ndef f{f}(x):\n");
                    match rng.u8(..5) {
                        0 => text += "    return os.getenv('HOME')\n",
                        1 => text += "    open('out.txt', 'w').write(x)\n    return x\n",
                        2 => text += "    return f0(x) + Thing().run()\n",
                        3 => text += "    assert f0(x) == 1\n",
                        _ => text += "    return x\n",
                    }
                }
                if rng.bool() {
                    text += "\nclass Thing:\n    def run(self):\n        self.n = f0(1)\n        return self.n\n";
                }
                (modules[m].0.clone(), text)
            })
            .collect();
        let refs: Vec<(&str, &str)> = files
            .iter()
            .map(|(p, t)| (p.as_str(), t.as_str()))
            .collect();
        let mut graph = graph_of(&refs);
        // Changes at a few times (ties among them), some never recorded.
        let times = [0, 1_000 * DAY, 1_003 * DAY, 1_010 * DAY, 1_040 * DAY];
        for node in graph.nodes.iter_mut() {
            Arc::make_mut(node).last_change = times[rng.usize(..times.len())];
        }
        graph
    }

    fn pack(scorer: &Scorer) -> ContextReport {
        context(
            scorer,
            "repo",
            Freshness::default(),
            FocusRequest::default(),
            &[],
            4_000,
            Vec::new(),
        )
    }

    #[test]
    fn a_pack_from_the_standing_is_the_pack_ranking_every_node_gives() {
        for seed in 0..300 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let count = rng.usize(2..24);
            let graph = project(&mut rng, count);
            let mut access: HashMap<String, Access> = HashMap::new();
            for node in graph.nodes.iter() {
                if rng.u8(..6) != 0 {
                    continue;
                }
                access.insert(
                    node.id.to_string(),
                    Access {
                        count: rng.u64(1..20),
                        last: [0, 1_005 * DAY, 1_041 * DAY][rng.usize(..3)],
                    },
                );
            }
            // Before, at and after the latest change.
            let now = [1_020 * DAY, 1_040 * DAY, 1_060 * DAY, 1_200 * DAY][rng.usize(..4)];
            let scorer = Scorer::new(&graph, &access, now);
            let standing = Standing::of(&graph);
            // Each list's best few, which a walk finds before it reads every member.
            for (ranks, extra) in [
                (&standing.top_files, 0.0),
                (&standing.top_symbols, 0.0),
                (&standing.hot_spots, 1.0),
            ] {
                for k in [1, 3, 10] {
                    let mut every: Vec<(f64, usize)> = ranks
                        .by_change
                        .iter()
                        .map(|&i| {
                            let node = &graph.nodes[i as usize];
                            let more = extra * super::super::pack::hot_weight(node);
                            (more + scorer.score_at(i as usize).total(), i as usize)
                        })
                        .collect();
                    every.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    let expected: Vec<usize> = every.iter().take(k).map(|&(_, i)| i).collect();
                    assert_eq!(ranks.best(&scorer, k), expected, "seed {seed}, k {k}");
                }
            }
            let fast = pack(&Scorer::new(&graph, &access, now).with_standing(&standing));
            let full = pack(&scorer);
            assert_eq!(fast.text, full.text, "seed {seed}");
            assert_eq!(
                serde_json::to_value(&fast.body).unwrap(),
                serde_json::to_value(&full.body).unwrap(),
                "seed {seed}"
            );
        }
    }

    fn focused_pack(scorer: &Scorer, focus: &str, anchors: &[String]) -> ContextReport {
        context(
            scorer,
            "repo",
            Freshness::default(),
            FocusRequest {
                text: Some(focus),
                memory_anchors: anchors,
            },
            &[],
            4_000,
            Vec::new(),
        )
    }

    #[test]
    fn a_focused_pack_from_the_standing_and_lexicon_is_the_pack_ranking_every_node_gives() {
        let foci = [
            "thing run",
            "f0",
            "environment home getenv",
            "write the output",
            "LIMIT",
            "app/core",
            "app/core/db",
            "tests/test_m1.py",
            "web/views/m3.py::f1",
            "os",
            "os/",
            "app/core f1 run",
            "zebra",
            "./",
            "the and",
        ];
        let mut focused = 0;
        for seed in 0..120 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let count = rng.usize(2..24);
            let graph = project(&mut rng, count);
            let access: HashMap<String, Access> = graph
                .nodes
                .iter()
                .step_by(rng.usize(3..7))
                .map(|n| {
                    let count = n.id.len() as u64 % 7 + 1;
                    (
                        n.id.to_string(),
                        Access {
                            count,
                            last: 1_039 * DAY,
                        },
                    )
                })
                .collect();
            let now = [1_020 * DAY, 1_060 * DAY][rng.usize(..2)];
            let standing = Standing::of(&graph);
            let lexicon = super::super::Lexicon::of(&graph, None);
            let anchors: Vec<String> = match rng.u8(..3) {
                0 => vec![graph.nodes[rng.usize(..graph.nodes.len())].id.to_string()],
                _ => Vec::new(),
            };
            for focus in foci {
                let fast = focused_pack(
                    &Scorer::new(&graph, &access, now)
                        .with_standing(&standing)
                        .with_lexicon(&lexicon),
                    focus,
                    &anchors,
                );
                let full = focused_pack(&Scorer::new(&graph, &access, now), focus, &anchors);
                assert_eq!(fast.text, full.text, "seed {seed}, focus {focus:?}");
                assert_eq!(
                    serde_json::to_value(&fast.body).unwrap(),
                    serde_json::to_value(&full.body).unwrap(),
                    "seed {seed}, focus {focus:?}"
                );
                focused += usize::from(fast.text.contains("ranked by the focus"));
            }
        }
        assert!(focused > 500, "{focused} packs kept to their focus");
    }

    #[test]
    fn in_a_large_project_too() {
        // Hubs with many edges, most of them weak: the walks stop early and still agree.
        for seed in 0..4 {
            let mut rng = fastrand::Rng::with_seed(seed);
            let graph = project(&mut rng, 300);
            let access: HashMap<String, Access> = graph
                .nodes
                .iter()
                .step_by(17)
                .map(|n| {
                    let last = 1_039 * DAY;
                    (n.id.to_string(), Access { count: 3, last })
                })
                .collect();
            let scorer = Scorer::new(&graph, &access, 1_041 * DAY);
            let standing = Standing::of(&graph);
            let fast = pack(&Scorer::new(&graph, &access, 1_041 * DAY).with_standing(&standing));
            let full = pack(&scorer);
            assert_eq!(fast.text, full.text, "seed {seed}");
            assert!(fast.body.relationships.len() >= 5, "seed {seed}");
        }
    }

    #[test]
    fn the_best_few_are_found_reading_few_members() {
        // Many files, a handful changed lately: the walk stops long before the end.
        let mut rng = fastrand::Rng::with_seed(7);
        let mut graph = project(&mut rng, 400);
        for (i, node) in graph.nodes.iter_mut().enumerate() {
            Arc::make_mut(node).last_change = if i % 50 == 0 { 1_040 * DAY } else { DAY };
        }
        let standing = Standing::of(&graph);
        let scorer = Scorer::new(&graph, &HashMap::new(), 1_041 * DAY);
        let all = standing.top_symbols.by_standing.len();
        let k = 20;
        let (best, read) = standing.top_symbols.best_reading(&scorer, k);
        let mut every: Vec<(f64, usize)> = standing
            .top_symbols
            .by_standing
            .iter()
            .map(|&i| (scorer.score_at(i as usize).total(), i as usize))
            .collect();
        every.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        let expected: Vec<usize> = every.iter().take(k).map(|&(_, i)| i).collect();
        assert_eq!(best, expected);
        assert!(read * 4 < all, "read {read} of {all}");
    }
}
