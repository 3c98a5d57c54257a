//! A graph's edges in order, held in shared chunks: a patch of the graph copies only the chunks
//! its changed files' edges lie in and shares the rest with the graph it came from, so neither
//! making the patched graph nor freeing the old one reaches into every edge (at 50,000 files,
//! 3M edges: one cache miss each, most of a patch's time when each edge was shared by itself).

use std::sync::Arc;

use super::Edge;

/// How many edges a chunk holds when made; a patched chunk that grows past twice this is split.
pub(super) const CHUNK: usize = 1024;

/// Positions per bucket of the lookup from a position to its chunk (`2^BUCKET_BITS`).
const BUCKET_BITS: u32 = 10;

/// Edges by position (`0..len`, in order), in chunks.
#[derive(Debug, Clone, Default)]
pub struct Edges {
    chunks: Vec<Arc<[Arc<Edge>]>>,
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
    pub fn of(edges: Vec<Arc<Edge>>) -> Edges {
        Edges::from_chunks(edges.chunks(CHUNK).map(Arc::from).collect())
    }

    /// Chunks in order; empty ones are left out.
    pub(super) fn from_chunks(mut chunks: Vec<Arc<[Arc<Edge>]>>) -> Edges {
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
    pub fn get(&self, at: usize) -> Option<&Arc<Edge>> {
        (at < self.len()).then(|| {
            let chunk = self.lookup.segment(&self.starts, at);
            &self.chunks[chunk][at - self.starts[chunk] as usize]
        })
    }

    pub fn iter(&self) -> impl DoubleEndedIterator<Item = &Arc<Edge>> + Clone + '_ {
        self.chunks.iter().flat_map(|c| c.iter())
    }

    /// The chunks, each with the position of its first edge.
    pub(super) fn chunks(&self) -> impl Iterator<Item = (usize, &Arc<[Arc<Edge>]>)> + '_ {
        self.chunks
            .iter()
            .zip(&self.starts)
            .map(|(c, &s)| (s as usize, c))
    }

    /// The chunks, to change in place where no other graph shares them.
    pub(super) fn chunks_mut(&mut self) -> impl Iterator<Item = &mut Arc<[Arc<Edge>]>> + '_ {
        self.chunks.iter_mut()
    }

    /// How many edges are not greater than `edge` (where `edge` would go after its equals).
    pub(super) fn count_not_above(&self, edge: &Edge) -> usize {
        let chunk = self
            .chunks
            .partition_point(|c| c.first().is_some_and(|first| **first <= *edge));
        let Some(before) = chunk.checked_sub(1) else {
            return 0;
        };
        self.starts[before] as usize + self.chunks[before].partition_point(|e| **e <= *edge)
    }
}

impl std::ops::Index<usize> for Edges {
    type Output = Arc<Edge>;

    fn index(&self, at: usize) -> &Arc<Edge> {
        self.get(at)
            .unwrap_or_else(|| panic!("edge {at} of {}", self.len()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::EdgeKind;

    fn edge(i: u32) -> Arc<Edge> {
        Arc::new(Edge {
            kind: EdgeKind::Calls,
            src: format!("a{i:06}").into(),
            dst: "b".into(),
            lines: [i].into(),
            reasons: Box::default(),
        })
    }

    /// Every position finds its edge whatever the chunks' sizes, and a search counts the
    /// edges not above a value as a search of the whole list would.
    #[test]
    fn positions_and_searches_see_one_list_through_the_chunks() {
        let mut rng = fastrand::Rng::with_seed(5);
        for round in 0..50 {
            let all: Vec<Arc<Edge>> = (0..rng.u32(0..5000)).map(|i| edge(i * 2)).collect();
            // Chunks of random sizes, some tiny, some several buckets long, some empty.
            let mut chunks: Vec<Arc<[Arc<Edge>]>> = Vec::new();
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
                assert!(Arc::ptr_eq(&edges[i], e), "round {round}, edge {i}");
            }
            assert!(edges.get(all.len()).is_none());
            for probe in 0..60 {
                let wanted = edge(rng.u32(0..10_002) + probe % 2);
                let expected = all.partition_point(|e| **e <= *wanted);
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
}
