//! A graph's edges in order, held inline in shared chunks: a patch of the graph copies only the
//! chunks its changed files' edges lie in and shares the rest with the graph it came from, so
//! neither making the patched graph nor freeing the old one reaches into every edge (at 50,000
//! files, 3M edges: one cache miss each, most of a patch's time when each edge was shared by
//! itself), and an edge costs no allocation of its own (its header and the slot pointing at it
//! were a third of its size).

use std::sync::Arc;

use super::Edge;

/// How many edges a chunk holds when made; a patched chunk that grows past twice this is split.
pub(super) const CHUNK: usize = 1024;

/// Positions per bucket of the lookup from a position to its chunk (`2^BUCKET_BITS`).
const BUCKET_BITS: u32 = 10;

/// Edges by position (`0..len`, in order), in chunks.
#[derive(Debug, Clone, Default)]
pub struct Edges {
    chunks: Vec<Arc<[Edge]>>,
    /// The position of each chunk's first edge, and the count after the last chunk.
    starts: Vec<u32>,
    /// The chunk of a position (chunks are mostly [`CHUNK`] long, so a lookup walks a step
    /// or two from its bucket's).
    lookup: Buckets,
}

/// From a position to the segment holding it, for segments that start at ascending positions
/// (the first at 0): for each bucket of positions, the segment holding the bucket's first,
/// from which a lookup walks forward.
#[derive(Debug, Clone, Default)]
pub(super) struct Buckets {
    bits: u32,
    first: Vec<u32>,
}

impl Buckets {
    /// Over `0..len`, in buckets of `2^bits` positions.
    pub(super) fn of(starts: &[u32], len: usize, bits: u32) -> Buckets {
        let mut segment = 0;
        let first = (0..len.div_ceil(1 << bits))
            .map(|bucket| {
                segment = Buckets::forward(starts, segment, bucket << bits);
                segment as u32
            })
            .collect();
        Buckets { bits, first }
    }

    /// The segment holding `at` (in `0..len`), of the same `starts`.
    pub(super) fn segment(&self, starts: &[u32], at: usize) -> usize {
        Buckets::forward(starts, self.first[at >> self.bits] as usize, at)
    }

    /// The segment holding `at`, from `segment` (one not after it) on.
    pub(super) fn forward(starts: &[u32], mut segment: usize, at: usize) -> usize {
        while starts.get(segment + 1).is_some_and(|&s| s as usize <= at) {
            segment += 1;
        }
        segment
    }
}

impl Edges {
    /// `edges` in chunks of [`CHUNK`].
    pub fn of(edges: Vec<Edge>) -> Edges {
        Edges::from_chunks(in_chunks(edges))
    }

    /// Chunks in order; empty ones are left out.
    pub(super) fn from_chunks(mut chunks: Vec<Arc<[Edge]>>) -> Edges {
        chunks.retain(|c| !c.is_empty());
        let mut starts = Vec::with_capacity(chunks.len() + 1);
        let mut at = 0u32;
        for chunk in &chunks {
            starts.push(at);
            at = u32::try_from(chunk.len())
                .ok()
                .and_then(|n| at.checked_add(n))
                .expect("a graph has fewer than 4 billion edges");
        }
        starts.push(at);
        let lookup = Buckets::of(&starts, at as usize, BUCKET_BITS);
        Edges {
            chunks,
            starts,
            lookup,
        }
    }

    pub fn len(&self) -> usize {
        self.starts.last().map_or(0, |&n| n as usize)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The edge at `at`.
    pub fn get(&self, at: usize) -> Option<&Edge> {
        (at < self.len()).then(|| {
            let chunk = self.lookup.segment(&self.starts, at);
            &self.chunks[chunk][at - self.starts[chunk] as usize]
        })
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Edge> + Clone + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// The chunks, each with the position of its first edge.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (usize, &Arc<[Edge]>)> + '_ {
        self.chunks
            .iter()
            .zip(&self.starts)
            .map(|(c, &s)| (s as usize, c))
    }

    /// How many edges are not greater than `edge` (where `edge` would go after its equals).
    pub(super) fn count_not_above(&self, edge: &Edge) -> usize {
        let chunk = self
            .chunks
            .partition_point(|c| c.first().is_some_and(|first| first <= edge));
        let Some(before) = chunk.checked_sub(1) else {
            return 0;
        };
        self.starts[before] as usize + self.chunks[before].partition_point(|e| e <= edge)
    }

    /// `edges` again, sharing this list's chunks that hold the same edges: cut where this
    /// list's chunks are cut, so the stretches of edges that did not change keep this list's
    /// copy and the rest is copied into chunks of its own. An exact rebuild after a few saves
    /// thus keeps one copy of most edges. Says how many edges are shared.
    pub(super) fn sharing(&self, edges: &Edges) -> (Edges, usize) {
        let edges: Vec<&Edge> = edges.iter().collect();
        let mut chunks: Vec<Arc<[Edge]>> = Vec::with_capacity(self.chunks.len() + 1);
        let mut shared = 0;
        let mut rest = &edges[..];
        let mut made: Vec<Edge> = Vec::new();
        for old in &self.chunks {
            let (Some(first), Some(last)) = (old.first(), old.last()) else {
                continue;
            };
            // New edges before this chunk's first are made anew; those from its first to its
            // last are the same chunk if they are its edges.
            let lead = rest.partition_point(|e| *e < first);
            made.extend(rest[..lead].iter().map(|&e| e.clone()));
            rest = &rest[lead..];
            let cut = rest.partition_point(|e| *e <= last);
            let (here, after) = rest.split_at(cut);
            rest = after;
            if here.iter().copied().eq(old.iter()) {
                chunks.extend(in_chunks(std::mem::take(&mut made)));
                chunks.push(old.clone());
                shared += cut;
            } else {
                made.extend(here.iter().map(|&e| e.clone()));
                if made.len() >= CHUNK {
                    chunks.extend(in_chunks(std::mem::take(&mut made)));
                }
            }
        }
        made.extend(rest.iter().map(|&e| e.clone()));
        chunks.extend(in_chunks(made));
        (Edges::from_chunks(chunks), shared)
    }
}

/// `edges` in chunks of [`CHUNK`] (the last one shorter), each allocated to its size; the
/// edges are moved, not copied.
pub(super) fn in_chunks(edges: Vec<Edge>) -> Vec<Arc<[Edge]>> {
    let mut chunks = Vec::with_capacity(edges.len().div_ceil(CHUNK));
    let mut edges = edges.into_iter();
    while !edges.as_slice().is_empty() {
        chunks.push(edges.by_ref().take(CHUNK).collect());
    }
    chunks
}

impl std::ops::Index<usize> for Edges {
    type Output = Edge;

    fn index(&self, at: usize) -> &Edge {
        self.get(at)
            .unwrap_or_else(|| panic!("edge {at} of {}", self.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeKind;

    fn edge(i: u32) -> Edge {
        Edge {
            kind: EdgeKind::Calls,
            src: format!("a{i:06}").into(),
            dst: "b".into(),
            lines: [i].into(),
            reasons: Box::default(),
        }
    }

    /// Every position finds its edge whatever the chunks' sizes, and a search counts the
    /// edges not above a value as a search of the whole list would.
    #[test]
    fn positions_and_searches_see_one_list_through_the_chunks() {
        let mut rng = fastrand::Rng::with_seed(5);
        for round in 0..50 {
            let all: Vec<Edge> = (0..rng.u32(0..5000)).map(|i| edge(i * 2)).collect();
            // Chunks of random sizes, some tiny, some several buckets long, some empty.
            let mut chunks: Vec<Arc<[Edge]>> = Vec::new();
            let mut at = 0;
            while at < all.len() {
                let size = match rng.u8(0..4) {
                    0 => rng.usize(0..3),
                    1 => rng.usize(1..40),
                    _ => rng.usize(1..3000),
                };
                let to = (at + size).min(all.len());
                chunks.push(all[at..to].into());
                at = to;
            }
            let edges = Edges::from_chunks(chunks);
            assert_eq!(edges.len(), all.len(), "round {round}");
            assert!(edges.iter().eq(all.iter()), "round {round}");
            for (i, e) in all.iter().enumerate() {
                assert_eq!(&edges[i], e, "round {round}, edge {i}");
            }
            assert!(edges.get(all.len()).is_none());
            for probe in 0..60 {
                let wanted = edge(rng.u32(0..10_002) + probe % 2);
                let expected = all.partition_point(|e| *e <= wanted);
                assert_eq!(edges.count_not_above(&wanted), expected, "round {round}");
            }
        }
        let plain = Edges::of((0..2500).map(edge).collect());
        assert_eq!(
            plain
                .chunks()
                .map(|(s, c)| (s, c.len()))
                .collect::<Vec<_>>(),
            [(0, CHUNK), (CHUNK, CHUNK), (2 * CHUNK, 2500 - 2 * CHUNK)]
        );
    }

    /// A list made again after a few of its edges changed keeps the earlier list's chunks
    /// where their edges are the same, and holds exactly the new edges.
    #[test]
    fn a_list_made_again_shares_the_chunks_whose_edges_did_not_change() {
        let mut rng = fastrand::Rng::with_seed(11);
        for round in 0..40 {
            let before: Vec<Edge> = (0..rng.u32(1..6000)).map(|i| edge(i * 4)).collect();
            // Patched chunks are uneven: cut the earlier list at random.
            let mut chunks: Vec<Arc<[Edge]>> = Vec::new();
            let mut at = 0;
            while at < before.len() {
                let to = (at + rng.usize(1..2 * CHUNK)).min(before.len());
                chunks.push(before[at..to].into());
                at = to;
            }
            let earlier = Edges::from_chunks(chunks);
            // A few edges gone, a few new ones (between and after the old ones).
            let mut after: Vec<Edge> = before
                .iter()
                .filter(|_| rng.u16(0..400) != 0)
                .cloned()
                .collect();
            after.extend((0..rng.u32(0..5)).map(|_| edge(rng.u32(0..6000 * 4 + 40) | 1)));
            after.sort();
            let untouched: usize = earlier
                .chunks()
                .filter(|(_, chunk)| {
                    let (first, last) = (&chunk[0], &chunk[chunk.len() - 1]);
                    after
                        .iter()
                        .filter(|e| first <= *e && *e <= last)
                        .eq(chunk.iter())
                })
                .map(|(_, chunk)| chunk.len())
                .sum();
            let (made, shared) = earlier.sharing(&Edges::of(after.clone()));
            assert!(made.iter().eq(after.iter()), "round {round}");
            assert_eq!(made.len(), after.len(), "round {round}");
            assert_eq!(shared, untouched, "round {round}");
            let reused: usize = made
                .chunks()
                .filter(|(_, c)| earlier.chunks().any(|(_, o)| Arc::ptr_eq(o, c)))
                .map(|(_, c)| c.len())
                .sum();
            assert_eq!(reused, shared, "round {round}");
            assert!(
                made.chunks().all(|(_, c)| c.len() <= 2 * CHUNK),
                "round {round}"
            );
        }
    }
}
