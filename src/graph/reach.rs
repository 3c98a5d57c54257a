//! Reachability counts for every node of a directed graph, correct on cycles: strongly connected
//! components are condensed (iterative Tarjan), then reachable sets are propagated over the
//! condensation in reverse topological order.
//!
//! Up to [`EXACT_UP_TO`] nodes the sets are bitsets, a block of target nodes at a time, so
//! memory stays bounded (Django: ~43k nodes): exact, but the work grows with the square of the
//! graph. Past that, each component keeps a bottom-k sketch instead (the [`SKETCH`] smallest
//! hashes of the node ids it reaches, Cohen's size estimation): a count below [`SKETCH`] is
//! exact, a larger one an estimate with a relative error of about 1/√(k−2) (~9%), and the work
//! grows with the edges. A node's hash depends on its id alone, so a rebuild that changes a few
//! files leaves the estimates of the rest of the graph as they were.

/// Largest graph whose counts are exact.
pub const EXACT_UP_TO: usize = 100_000;

/// Hashes kept per component when counts are estimated.
pub const SKETCH: usize = 128;

/// Target nodes per propagation pass of the exact counts; each component holds one bitset of
/// this many bits.
const BLOCK: usize = 4096;
const WORDS: usize = BLOCK / 64;

/// For each node, how many other nodes are reachable from it: exact up to [`EXACT_UP_TO`]
/// nodes, estimated past that from `keys` (each node's hash of its id, see [`key`]).
pub(crate) fn reach_counts(successors: &[Vec<u32>], keys: &[u64]) -> Vec<u32> {
    if successors.len() <= EXACT_UP_TO {
        exact(successors)
    } else {
        estimated(successors, keys, SKETCH)
    }
}

/// A node's key for estimated counts: a hash of its id, so the same node has the same key in
/// every build.
pub fn key(id: &str) -> u64 {
    xxhash_rust::xxh3::xxh3_64(id.as_bytes())
}

/// Each node's component, each component's members, and the condensed successor lists
/// (sorted, each once).
fn condense(successors: &[Vec<u32>]) -> (Vec<u32>, Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let (component, count) = strongly_connected(successors);
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (node, &c) in component.iter().enumerate() {
        members[c as usize].push(node as u32);
    }
    let mut condensed: Vec<Vec<u32>> = vec![Vec::new(); count];
    for (node, list) in successors.iter().enumerate() {
        let from = component[node];
        for &to in list {
            let to = component[to as usize];
            if to != from {
                condensed[from as usize].push(to);
            }
        }
    }
    for list in &mut condensed {
        list.sort_unstable();
        list.dedup();
    }
    (component, members, condensed)
}

/// Counts from bottom-`k` sketches of the keys each component reaches (itself included).
/// Components are taken in Tarjan's order, successors first; a component's sketch is dropped
/// once every component leading to it has taken it.
pub fn estimated(successors: &[Vec<u32>], keys: &[u64], k: usize) -> Vec<u32> {
    let n = successors.len();
    let (component, members, condensed) = condense(successors);
    let count = members.len();
    let mut waiting = vec![0u32; count];
    for list in &condensed {
        for &s in list {
            waiting[s as usize] += 1;
        }
    }
    let mut sketches: Vec<Vec<u64>> = vec![Vec::new(); count];
    let mut sizes = vec![0u32; count];
    let mut merged = Vec::with_capacity(k);
    for c in 0..count {
        let mut sketch: Vec<u64> = members[c].iter().map(|&m| keys[m as usize]).collect();
        sketch.sort_unstable();
        sketch.dedup();
        sketch.truncate(k);
        for &s in &condensed[c] {
            let s = s as usize;
            bottom_k(&sketch, &sketches[s], k, &mut merged);
            std::mem::swap(&mut sketch, &mut merged);
            waiting[s] -= 1;
            if waiting[s] == 0 {
                sketches[s] = Vec::new();
            }
        }
        sizes[c] = if sketch.len() < k {
            sketch.len() as u32
        } else {
            // The k-th smallest of m uniform hashes lies near k/m of the range.
            let fraction = (sketch[k - 1] as f64 + 1.0) / 18_446_744_073_709_551_616.0;
            ((k - 1) as f64 / fraction)
                .round()
                .clamp(k as f64, n as f64) as u32
        };
        if waiting[c] > 0 {
            sketches[c] = sketch;
        }
    }
    (0..n)
        .map(|node| sizes[component[node] as usize].saturating_sub(1))
        .collect()
}

/// The `k` smallest distinct values of two sorted lists, into `out`.
fn bottom_k(a: &[u64], b: &[u64], k: usize, out: &mut Vec<u64>) {
    out.clear();
    let (mut i, mut j) = (0, 0);
    while out.len() < k && (i < a.len() || j < b.len()) {
        let next = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x == y => {
                i += 1;
                j += 1;
                x
            }
            (Some(&x), Some(&y)) if x < y => {
                i += 1;
                x
            }
            (_, Some(&y)) => {
                j += 1;
                y
            }
            (Some(&x), None) => {
                i += 1;
                x
            }
            (None, None) => break,
        };
        out.push(next);
    }
}

/// Exact counts by blocked bitsets.
pub fn exact(successors: &[Vec<u32>]) -> Vec<u32> {
    let n = successors.len();
    let (component, members, condensed) = condense(successors);
    let count = members.len();
    // Tarjan numbers components in reverse topological order: successors come first, so a
    // component reaches only components numbered below it. Targets are taken in component
    // order (members of a component are contiguous), a block at a time: a block's targets
    // lie in components `lo..`, so components below `lo` neither hold nor reach any of them
    // and are skipped, and a successor that reaches nothing of the block adds nothing.
    let mut start = vec![0u32; count + 1];
    for c in 0..count {
        start[c + 1] = start[c] + members[c].len() as u32;
    }
    let mut totals = vec![0u32; count];
    let mut sets = vec![[0u64; WORDS]; count];
    let mut reaches = vec![false; count];
    let mut lo = 0usize;
    for base in (0..n).step_by(BLOCK) {
        let end = (base + BLOCK).min(n);
        while start[lo + 1] as usize <= base {
            lo += 1;
        }
        for c in lo..count {
            let mut acc = [0u64; WORDS];
            let mut any = false;
            for &s in &condensed[c] {
                let s = s as usize;
                if s < lo {
                    continue;
                }
                if reaches[s] {
                    for (a, b) in acc.iter_mut().zip(sets[s].iter()) {
                        *a |= *b;
                    }
                    any = true;
                }
                let (first, last) = (start[s] as usize, start[s + 1] as usize);
                for target in first.max(base)..last.min(end) {
                    let bit = target - base;
                    acc[bit / 64] |= 1u64 << (bit % 64);
                    any = true;
                }
            }
            reaches[c] = any;
            if any {
                totals[c] += acc.iter().map(|w| w.count_ones()).sum::<u32>();
                sets[c] = acc;
            }
        }
    }
    (0..n)
        .map(|node| {
            let c = component[node] as usize;
            totals[c] + members[c].len() as u32 - 1
        })
        .collect()
}

/// Iterative Tarjan: component id per node (in reverse topological order) and the count.
fn strongly_connected(successors: &[Vec<u32>]) -> (Vec<u32>, usize) {
    const UNSEEN: u32 = u32::MAX;
    let n = successors.len();
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0u32; n];
    let mut on_stack = vec![false; n];
    let mut stack: Vec<u32> = Vec::new();
    let mut component = vec![UNSEEN; n];
    let mut count = 0usize;
    let mut next = 0u32;
    let mut work: Vec<(u32, usize)> = Vec::new();
    for root in 0..n as u32 {
        if index[root as usize] != UNSEEN {
            continue;
        }
        work.push((root, 0));
        while let Some(&(v, child)) = work.last() {
            let vu = v as usize;
            if child == 0 && index[vu] == UNSEEN {
                index[vu] = next;
                low[vu] = next;
                next += 1;
                stack.push(v);
                on_stack[vu] = true;
            }
            if let Some(&w) = successors[vu].get(child) {
                if let Some(top) = work.last_mut() {
                    top.1 += 1;
                }
                let wu = w as usize;
                if index[wu] == UNSEEN {
                    work.push((w, 0));
                } else if on_stack[wu] {
                    low[vu] = low[vu].min(index[wu]);
                }
                continue;
            }
            work.pop();
            if let Some(&(parent, _)) = work.last() {
                low[parent as usize] = low[parent as usize].min(low[vu]);
            }
            if low[vu] == index[vu] {
                while let Some(w) = stack.pop() {
                    on_stack[w as usize] = false;
                    component[w as usize] = count as u32;
                    if w == v {
                        break;
                    }
                }
                count += 1;
            }
        }
    }
    (component, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reachability by plain search, the definition the fast version must match.
    fn naive(successors: &[Vec<u32>]) -> Vec<u32> {
        (0..successors.len())
            .map(|start| {
                let mut seen = vec![false; successors.len()];
                let mut todo = vec![start];
                while let Some(v) = todo.pop() {
                    for &w in &successors[v] {
                        if !seen[w as usize] {
                            seen[w as usize] = true;
                            todo.push(w as usize);
                        }
                    }
                }
                seen[start] = false;
                seen.iter().filter(|&&s| s).count() as u32
            })
            .collect()
    }

    #[test]
    fn chains_cycles_and_self_loops() {
        // 0 -> 1 -> 2 -> 0 (cycle), 2 -> 3, 4 -> 4 (self loop), 5 isolated.
        let graph = vec![vec![1], vec![2], vec![0, 3], vec![], vec![4], vec![]];
        assert_eq!(exact(&graph), vec![3, 3, 3, 0, 0, 0]);
        assert_eq!(estimated(&graph, &keys(6), SKETCH), vec![3, 3, 3, 0, 0, 0]);
    }

    #[test]
    fn matches_plain_search_on_random_graphs() {
        let mut rng = fastrand::Rng::with_seed(7);
        for size in [1usize, 2, 10, 200, 9000] {
            let graph = random(size, &mut rng);
            assert_eq!(exact(&graph), naive(&graph), "size {size}");
        }
    }

    #[test]
    fn matches_plain_search_on_layered_graphs_with_small_cycles() {
        // Mostly acyclic (links to earlier nodes), as code is, with a few back links: many
        // components over several blocks of targets.
        for size in [5000usize, 9000] {
            let graph = layered(size, 300, 11);
            assert_eq!(exact(&graph), naive(&graph), "size {size}");
        }
    }

    fn keys(n: usize) -> Vec<u64> {
        (0..n).map(|i| key(&format!("node {i}"))).collect()
    }

    /// Up to two links from each node to any node.
    fn random(size: usize, rng: &mut fastrand::Rng) -> Vec<Vec<u32>> {
        (0..size)
            .map(|_| {
                (0..rng.usize(0..3))
                    .map(|_| rng.u32(0..size as u32))
                    .collect()
            })
            .collect()
    }

    /// Mostly acyclic links to the previous `span` nodes, with a few back links.
    fn layered(size: usize, span: usize, seed: u64) -> Vec<Vec<u32>> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..size)
            .map(|i| {
                let mut links: Vec<u32> = (0..rng.usize(0..4))
                    .filter(|_| i > 0)
                    .map(|_| rng.u32(i.saturating_sub(span) as u32..i as u32))
                    .collect();
                if rng.u8(0..50) == 0 && i + 3 < size {
                    links.push(i as u32 + rng.u32(1..3));
                }
                links
            })
            .collect()
    }

    #[test]
    fn sketches_larger_than_the_graph_count_exactly() {
        let mut rng = fastrand::Rng::with_seed(5);
        for size in [1usize, 2, 10, 300] {
            let graph = random(size, &mut rng);
            assert_eq!(estimated(&graph, &keys(size), size + 1), naive(&graph));
        }
        let graph = layered(3000, 200, 3);
        assert_eq!(estimated(&graph, &keys(3000), 3001), naive(&graph));
    }

    #[test]
    fn estimates_are_exact_below_the_sketch_and_close_above_it() {
        let size = 20_000;
        let graph = layered(size, 400, 13);
        let truth = naive(&graph);
        let estimate = estimated(&graph, &keys(size), SKETCH);
        let (mut large, mut close) = (0, 0);
        for (node, (&t, &e)) in truth.iter().zip(&estimate).enumerate() {
            if (t as usize) < SKETCH - 1 {
                assert_eq!(
                    e, t,
                    "node {node} reaches fewer nodes than the sketch holds"
                );
            } else {
                large += 1;
                if (e as f64 - t as f64).abs() <= 0.25 * t as f64 {
                    close += 1;
                }
            }
        }
        assert!(
            large > size / 2,
            "the graph must reach past the sketch ({large})"
        );
        assert!(
            close * 100 >= large * 95,
            "{close} of {large} estimates within 25%"
        );
    }

    #[test]
    fn a_change_elsewhere_leaves_estimates_as_they_were() {
        // The same graph with a disconnected chain placed before it: positions move, ids and
        // so keys do not.
        let size = 5000;
        let graph = layered(size, 300, 17);
        let ids = keys(size);
        let before = estimated(&graph, &ids, 64);
        let extra = 700;
        let mut shifted: Vec<Vec<u32>> = (0..extra as u32)
            .map(|i| {
                if i + 1 < extra as u32 {
                    vec![i + 1]
                } else {
                    vec![]
                }
            })
            .collect();
        shifted.extend(
            graph
                .iter()
                .map(|links| links.iter().map(|&l| l + extra as u32).collect()),
        );
        let mut shifted_ids: Vec<u64> = (0..extra).map(|i| key(&format!("extra {i}"))).collect();
        shifted_ids.extend(&ids);
        let after = estimated(&shifted, &shifted_ids, 64);
        assert_eq!(&after[extra..], &before[..]);
    }

    #[test]
    fn large_graphs_are_estimated_and_small_ones_exact() {
        let small = layered(2000, 300, 19);
        let mut not_keys = vec![0u64; 2000];
        not_keys[0] = 1;
        assert_eq!(reach_counts(&small, &not_keys), naive(&small));
        let large = layered(EXACT_UP_TO + 1, 50, 23);
        let ids = keys(EXACT_UP_TO + 1);
        assert_eq!(reach_counts(&large, &ids), estimated(&large, &ids, SKETCH));
    }
}
