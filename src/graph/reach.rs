//! Reachability counts for every node of a directed graph, correct on cycles: strongly connected
//! components are condensed (iterative Tarjan), then reachable sets are propagated over the
//! condensation in reverse topological order as bitsets, a block of target nodes at a time, so
//! memory stays bounded on large graphs (Django: ~50k nodes).

/// Target nodes per propagation pass; each component holds one bitset of this many bits.
const BLOCK: usize = 4096;
const WORDS: usize = BLOCK / 64;

/// For each node, how many other nodes are reachable from it.
pub fn reach_counts(successors: &[Vec<u32>]) -> Vec<u32> {
    let n = successors.len();
    let (component, count) = strongly_connected(successors);
    // Members per component, and condensed successor lists.
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
        assert_eq!(reach_counts(&graph), vec![3, 3, 3, 0, 0, 0]);
    }

    #[test]
    fn matches_plain_search_on_random_graphs() {
        let mut rng = fastrand::Rng::with_seed(7);
        for size in [1usize, 2, 10, 200, 9000] {
            let graph: Vec<Vec<u32>> = (0..size)
                .map(|_| {
                    (0..rng.usize(0..3))
                        .map(|_| rng.u32(0..size as u32))
                        .collect()
                })
                .collect();
            assert_eq!(reach_counts(&graph), naive(&graph), "size {size}");
        }
    }

    #[test]
    fn matches_plain_search_on_layered_graphs_with_small_cycles() {
        // Mostly acyclic (links to earlier nodes), as code is, with a few back links: many
        // components over several blocks of targets.
        let mut rng = fastrand::Rng::with_seed(11);
        for size in [5000usize, 9000] {
            let graph: Vec<Vec<u32>> = (0..size)
                .map(|i| {
                    let mut links: Vec<u32> = (0..rng.usize(0..4))
                        .filter(|_| i > 0)
                        .map(|_| rng.u32(i.saturating_sub(300) as u32..i as u32))
                        .collect();
                    if rng.u8(0..50) == 0 && i + 3 < size {
                        links.push(i as u32 + rng.u32(1..3));
                    }
                    links
                })
                .collect();
            assert_eq!(reach_counts(&graph), naive(&graph), "size {size}");
        }
    }
}
