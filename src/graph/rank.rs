//! The impact measure every node carries: how much of the repository depends on it, as a
//! damped flow of weight from dependents to what they depend on (PageRank on the reversed
//! causal graph, with a weight per kind of link). Unlike reach it discriminates: cycles and the
//! links that over-approximate ("a method reaches its class's users", "a file reaches its
//! definitions") do not saturate it.

/// How much one step of a flow keeps (PageRank's damping): a dependent two steps away counts
/// 0.85² as much as a direct one.
pub const DAMPING: f64 = 0.85;

/// Iterations stop when no node's impact moves by more than this fraction: what is left to
/// add is then below `TOLERANCE · DAMPING / (1 - DAMPING)`, far below the stored hundredths.
const TOLERANCE: f64 = 1e-7;
/// Each step adds at most `DAMPING` times what the one before added, so this many steps
/// reach the tolerance on any graph.
const MAX_ITERATIONS: usize = 120;

/// What an impact link stands for, which sets how much of a dependent's weight flows over it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Link {
    /// A real use: a call, an inheritance, a test asserting on it, an import of a whole module
    /// or of a named definition.
    Use,
    /// A method to its class: the class's users stand in for calls through instances, which
    /// static analysis cannot resolve, so they count for little.
    Member,
    /// A file to its top-level definitions: a change to the file is a change to one of them,
    /// rarely to all.
    Definition,
}

impl Link {
    /// The share of a dependent's weight that flows over links of this kind, before it is
    /// divided among them.
    pub fn weight(self) -> f64 {
        match self {
            Link::Use => 1.0,
            Link::Member | Link::Definition => 0.25,
        }
    }
}

/// The impact of every node, given each node's dependents (`dependents[v]`: the nodes a change
/// at `v` reaches directly, and over which link; a node among its own dependents is passed
/// over). At least 1 (the node itself):
///
/// `impact(v) = 1 + DAMPING · Σ over dependents u of v: share(u → v) · impact(u)`
///
/// where a dependent gives each of its links' kinds its weight (scaled down so the weights
/// of the kinds it has sum to at most 1) and divides a kind's weight evenly among its links
/// of that kind. A caller of twenty functions thus gives each a twentieth of its weight, and
/// a class gives its methods a quarter of its weight between them. Every node passes on at
/// most `DAMPING` of its weight, so the sums converge on any graph, cycles included.
pub fn impact_scores(dependents: &[Vec<(u32, Link)>]) -> Vec<f64> {
    let shares = shares(dependents);
    let mut impact = vec![1.0; dependents.len()];
    let mut next = vec![1.0; dependents.len()];
    for _ in 0..MAX_ITERATIONS {
        let mut moved: f64 = 0.0;
        for (v, list) in dependents.iter().enumerate() {
            let inflow: f64 = list
                .iter()
                .filter(|&&(u, _)| u as usize != v)
                .map(|&(u, link)| shares[u as usize].of(link) * impact[u as usize])
                .sum();
            next[v] = 1.0 + DAMPING * inflow;
            moved = moved.max((next[v] - impact[v]).abs() / next[v]);
        }
        std::mem::swap(&mut impact, &mut next);
        if moved < TOLERANCE {
            break;
        }
    }
    impact
}

/// What one link of each kind takes of a dependent's weight.
#[derive(Debug, Clone, Copy, Default)]
struct Shares {
    per_link: [f64; 3],
}

impl Shares {
    fn of(self, link: Link) -> f64 {
        self.per_link[link as usize]
    }
}

/// Each node's shares, from how many links of each kind it depends over.
fn shares(dependents: &[Vec<(u32, Link)>]) -> Vec<Shares> {
    let mut counts = vec![[0u32; 3]; dependents.len()];
    for (v, list) in dependents.iter().enumerate() {
        for &(u, link) in list.iter().filter(|&&(u, _)| u as usize != v) {
            counts[u as usize][link as usize] += 1;
        }
    }
    const KINDS: [Link; 3] = [Link::Use, Link::Member, Link::Definition];
    counts
        .iter()
        .map(|count| {
            let present: f64 = KINDS
                .iter()
                .filter(|&&k| count[k as usize] > 0)
                .map(|k| k.weight())
                .sum();
            let scale = present.max(1.0);
            let mut shares = Shares::default();
            for kind in KINDS {
                let n = count[kind as usize];
                if n > 0 {
                    shares.per_link[kind as usize] = kind.weight() / scale / f64::from(n);
                }
            }
            shares
        })
        .collect()
}

/// How strongly a change reaches a dependent over one link: the damping times the link's
/// weight. The strength of a path is the product over its links.
pub fn link_strength(link: Link) -> f64 {
    DAMPING * link.weight()
}

/// The impact of a node nothing depends on.
pub(crate) fn neutral() -> f64 {
    1.0
}

/// An impact as stored: rounded to hundredths, so that a rebuild after a small change does
/// not rewrite every node whose impact moved by a hair.
pub fn stored(impact: f64) -> f64 {
    (impact * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Impacts of a graph given as (dependency, dependent, link) triples over `n` nodes.
    fn impacts(n: usize, links: &[(u32, u32, Link)]) -> Vec<f64> {
        let mut dependents = vec![Vec::new(); n];
        for &(from, to, link) in links {
            dependents[from as usize].push((to, link));
        }
        impact_scores(&dependents)
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn a_node_without_dependents_counts_itself() {
        assert_eq!(impacts(2, &[]), vec![1.0, 1.0]);
    }

    #[test]
    fn a_self_use_adds_nothing() {
        let x = impacts(2, &[(0, 0, Link::Use), (0, 1, Link::Use)]);
        assert!(close(x[0], 1.0 + DAMPING));
    }

    #[test]
    fn a_chain_decays_with_distance() {
        // 0 is used by 1, which is used by 2.
        let x = impacts(3, &[(0, 1, Link::Use), (1, 2, Link::Use)]);
        assert!(close(x[2], 1.0));
        assert!(close(x[1], 1.0 + DAMPING));
        assert!(close(x[0], 1.0 + DAMPING * (1.0 + DAMPING)));
    }

    #[test]
    fn a_cycle_does_not_saturate() {
        // A five-node cycle (each uses the one before) and node 5 using node 0, itself used by
        // 6 and 7. Reach is the same for every member of the cycle (the other four and 5, 6,
        // 7); impact ranks node 0, which the outside uses, first and node 1, farthest from
        // it along the uses, last.
        let mut links: Vec<(u32, u32, Link)> =
            (0..5).map(|i| (i, (i + 1) % 5, Link::Use)).collect();
        links.extend([(0, 5, Link::Use), (5, 6, Link::Use), (5, 7, Link::Use)]);
        let x = impacts(8, &links);
        let mut order: Vec<usize> = (0..5).collect();
        order.sort_by(|&a, &b| x[b].total_cmp(&x[a]));
        assert_eq!(order, [0, 4, 3, 2, 1], "{x:?}");
        assert!(x[0] - x[1] > 1.0, "{x:?}");
    }

    #[test]
    fn a_dense_cycle_stays_bounded() {
        // Every node uses every other: each passes at most DAMPING of its weight on.
        let n = 30u32;
        let links: Vec<(u32, u32, Link)> = (0..n)
            .flat_map(|a| {
                (0..n)
                    .filter(move |&b| b != a)
                    .map(move |b| (a, b, Link::Use))
            })
            .collect();
        let x = impacts(n as usize, &links);
        for v in &x {
            // Iterations stop within a few millionths of the limit.
            assert!((v - 1.0 / (1.0 - DAMPING)).abs() < 1e-4, "{v}");
        }
    }

    #[test]
    fn a_methods_class_users_count_less_than_its_direct_callers() {
        // Method 0 of class 2 has one direct caller (1); method 3 of the same class has none.
        // Three users (4, 5, 6) call the class.
        let x = impacts(
            7,
            &[
                (0, 1, Link::Use),
                (0, 2, Link::Member),
                (3, 2, Link::Member),
                (2, 4, Link::Use),
                (2, 5, Link::Use),
                (2, 6, Link::Use),
            ],
        );
        let (called, uncalled, class) = (x[0], x[3], x[2]);
        assert!(class > called, "the class's users are its own: {x:?}");
        assert!(called > uncalled);
        // One direct caller outweighs the class's three users together.
        assert!(called - uncalled > uncalled - 1.0, "{x:?}");
    }

    #[test]
    fn a_dependent_divides_its_weight_among_what_it_uses() {
        // 2 uses only 0; 3 uses 1 and four others.
        let x = impacts(
            8,
            &[
                (0, 2, Link::Use),
                (1, 3, Link::Use),
                (4, 3, Link::Use),
                (5, 3, Link::Use),
                (6, 3, Link::Use),
                (7, 3, Link::Use),
            ],
        );
        assert!(close(x[0], 1.0 + DAMPING));
        assert!(close(x[1], 1.0 + DAMPING / 5.0));
    }

    #[test]
    fn more_dependents_never_lower_an_impact() {
        let mut rng = fastrand::Rng::with_seed(11);
        for _ in 0..50 {
            let n = 12u32;
            let kinds = [Link::Use, Link::Member, Link::Definition];
            let mut links: Vec<(u32, u32, Link)> = (0..20)
                .map(|_| (rng.u32(0..n), rng.u32(0..n), kinds[rng.usize(0..3)]))
                .filter(|(a, b, _)| a != b)
                .collect();
            links.sort();
            links.dedup();
            let before = impacts(n as usize, &links);
            // A new node that depends on node 0 alone.
            links.push((0, n, Link::Use));
            let after = impacts(n as usize + 1, &links);
            assert!(after[0] > before[0] + 0.5, "{before:?} {after:?}");
            for (a, b) in after.iter().zip(&before) {
                assert!(*a + 1e-9 >= *b);
            }
        }
    }
}
