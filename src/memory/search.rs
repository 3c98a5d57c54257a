//! The in-process search index: BM25 over each memory's title, content and anchors, kept in
//! one partition per scope (the project, each developer), plus the memories' vectors.
//!
//! SurrealDB stays the store of record; this index is rebuilt from it when a process starts
//! and kept in step by every write. It exists because SurrealDB's full-text index scores
//! every match before ordering (a one-word query matching most of 100k memories took
//! ~640 ms), while memory search must answer in milliseconds. A query reads only the
//! partitions it is allowed to (scope is enforced by construction, not by filtering
//! results), and type and validity filters apply before the top-k cut.

use std::collections::HashMap;

use super::model::MemoryType;
use super::text;

/// BM25 parameters (the usual ones).
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Title terms count this many times.
const TITLE_WEIGHT: u16 = 2;

/// What a search may return.
#[derive(Debug, Clone, Copy)]
pub struct Filter {
    /// Bit mask of [`MemoryType::bit`]s; 0 = all types.
    pub types: u16,
    pub include_superseded: bool,
    /// Memories a person has not approved (pending or rejected) too: only a write under the
    /// approval gate compares itself with them; no search that serves memories sets this.
    pub include_unapproved: bool,
}

impl Filter {
    fn admits(&self, slot: &Slot) -> bool {
        slot.alive
            && (self.include_unapproved || slot.approved)
            && (self.include_superseded || slot.live)
            && (self.types == 0 || self.types & slot.kind.bit() != 0)
    }
}

/// A hit: the memory id and its score.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    pub id: String,
    pub score: f32,
}

/// What the index keeps of a memory.
pub struct Entry<'a> {
    pub id: &'a str,
    pub partition: &'a str,
    pub kind: MemoryType,
    pub live: bool,
    /// Approved by a person (or never gated): only these are served.
    pub approved: bool,
    pub title: &'a str,
    pub content: &'a str,
    pub anchors: &'a [String],
    pub vector: Option<&'a [f32]>,
}

impl Entry<'_> {
    fn text_hash(&self) -> u64 {
        let mut text = format!("{}\0{}", self.title, self.content);
        for anchor in self.anchors {
            text.push('\0');
            text.push_str(anchor);
        }
        xxhash_rust::xxh3::xxh3_64(text.as_bytes())
    }
}

#[derive(Clone)]
struct Slot {
    id: String,
    kind: MemoryType,
    /// Not superseded.
    live: bool,
    /// Approved: servable.
    approved: bool,
    /// Not removed from the index.
    alive: bool,
    len: u32,
    /// Hash of the indexed text, to update metadata in place when only that changed.
    text_hash: u64,
    /// The slot's distinct terms, to keep live document frequencies when it is removed.
    terms: Box<[String]>,
    vector: Option<Box<[f32]>>,
}

/// A document holding a term: its slot, and how often (weighted) it holds the term.
#[derive(Debug, Clone, Copy)]
struct Posting {
    slot: u32,
    count: u16,
}

#[derive(Default, Clone)]
struct Partition {
    slots: Vec<Slot>,
    by_id: HashMap<String, u32>,
    /// The documents holding each term.
    postings: HashMap<String, Vec<Posting>>,
    /// Live documents per term (postings keep removed slots until compaction).
    df: HashMap<String, u32>,
    total_len: u64,
    alive: u32,
    dead: u32,
}

impl Partition {
    fn remove(&mut self, id: &str) {
        if let Some(slot) = self.by_id.remove(id) {
            let slot = &mut self.slots[slot as usize];
            slot.alive = false;
            slot.vector = None;
            for term in std::mem::take(&mut slot.terms) {
                if let Some(df) = self.df.get_mut(&term) {
                    *df -= 1;
                    if *df == 0 {
                        self.df.remove(&term);
                    }
                }
            }
            self.total_len -= slot.len as u64;
            self.alive -= 1;
            self.dead += 1;
        }
        if self.dead > 1_000 && self.dead > self.alive / 4 {
            self.compact();
        }
    }

    /// Drops removed slots from the postings and renumbers the rest.
    fn compact(&mut self) {
        let mut renumber = vec![u32::MAX; self.slots.len()];
        let mut slots = Vec::with_capacity(self.alive as usize);
        for (old, slot) in std::mem::take(&mut self.slots).into_iter().enumerate() {
            if slot.alive {
                renumber[old] = slots.len() as u32;
                slots.push(slot);
            }
        }
        for list in self.postings.values_mut() {
            list.retain_mut(|posting| {
                let new = renumber[posting.slot as usize];
                posting.slot = new;
                new != u32::MAX
            });
        }
        self.postings.retain(|_, list| !list.is_empty());
        self.by_id.clear();
        for (i, slot) in slots.iter().enumerate() {
            self.by_id.insert(slot.id.clone(), i as u32);
        }
        self.slots = slots;
        self.dead = 0;
    }

    fn insert(&mut self, entry: &Entry) {
        let slot = self.slots.len() as u32;
        let mut tf: HashMap<String, u16> = HashMap::new();
        let mut len = 0u32;
        let mut add = |text: &str, weight: u16| {
            for term in text::terms(text) {
                *tf.entry(term).or_default() += weight;
                len += weight as u32;
            }
        };
        add(entry.title, TITLE_WEIGHT);
        add(entry.content, 1);
        for anchor in entry.anchors {
            add(anchor, 1);
        }
        let mut terms = Vec::with_capacity(tf.len());
        for (term, count) in tf {
            *self.df.entry(term.clone()).or_default() += 1;
            self.postings
                .entry(term.clone())
                .or_default()
                .push(Posting { slot, count });
            terms.push(term);
        }
        self.slots.push(Slot {
            id: entry.id.to_string(),
            kind: entry.kind,
            live: entry.live,
            approved: entry.approved,
            alive: true,
            len,
            text_hash: entry.text_hash(),
            terms: terms.into_boxed_slice(),
            vector: entry.vector.map(Box::from),
        });
        self.by_id.insert(entry.id.to_string(), slot);
        self.total_len += len as u64;
        self.alive += 1;
    }
}

/// The index over all memories a process knows (cloned only to be read away from the
/// memories' lock).
#[derive(Default, Clone)]
pub struct SearchIndex {
    partitions: HashMap<String, Partition>,
    /// Which partition holds each id.
    home: HashMap<String, String>,
}

impl SearchIndex {
    /// Adds or replaces a memory. A memory whose text and partition did not change keeps
    /// its slot (only its type, validity, approval and vector are updated).
    pub(crate) fn upsert(&mut self, entry: &Entry) {
        if self.home.get(entry.id).map(String::as_str) == Some(entry.partition)
            && let Some(p) = self.partitions.get_mut(entry.partition)
            && let Some(&slot) = p.by_id.get(entry.id)
            && p.slots[slot as usize].text_hash == entry.text_hash()
        {
            let slot = &mut p.slots[slot as usize];
            slot.kind = entry.kind;
            slot.live = entry.live;
            slot.approved = entry.approved;
            slot.vector = entry.vector.map(Box::from);
            return;
        }
        self.remove(entry.id);
        self.partitions
            .entry(entry.partition.to_string())
            .or_default()
            .insert(entry);
        self.home
            .insert(entry.id.to_string(), entry.partition.to_string());
    }

    /// Drops a memory.
    pub fn remove(&mut self, id: &str) {
        if let Some(partition) = self.home.remove(id)
            && let Some(p) = self.partitions.get_mut(&partition)
        {
            p.remove(id);
        }
    }

    /// A memory's vector.
    pub fn vector(&self, id: &str) -> Option<Vec<f32>> {
        let p = self.partitions.get(self.home.get(id)?)?;
        let slot = *p.by_id.get(id)?;
        p.slots[slot as usize]
            .vector
            .as_deref()
            .map(<[f32]>::to_vec)
    }

    /// Memories indexed in a partition.
    #[cfg(test)]
    fn len(&self, partition: &str) -> usize {
        self.partitions
            .get(partition)
            .map_or(0, |p| p.alive as usize)
    }

    /// True when the memory has a vector.
    pub(crate) fn has_vector(&self, id: &str) -> bool {
        self.home
            .get(id)
            .and_then(|p| self.partitions.get(p))
            .and_then(|p| {
                p.by_id
                    .get(id)
                    .map(|&s| p.slots[s as usize].vector.is_some())
            })
            .unwrap_or(false)
    }

    /// BM25 ranking of the memories in `partition` for `query`, best first.
    pub fn keyword(&self, partition: &str, query: &str, filter: Filter, limit: usize) -> Vec<Hit> {
        self.keyword_with(partition, query, filter, limit, usize::MAX)
    }

    /// BM25 ranking using only the `max_terms` rarest terms of `query`: near-duplicates share
    /// their rare terms, and common terms' long posting lists are what a query pays for.
    pub(crate) fn keyword_with(
        &self,
        partition: &str,
        query: &str,
        filter: Filter,
        limit: usize,
        max_terms: usize,
    ) -> Vec<Hit> {
        let Some(p) = self.partitions.get(partition) else {
            return Vec::new();
        };
        if p.alive == 0 || limit == 0 {
            return Vec::new();
        }
        let mut terms = text::terms(query);
        terms.sort();
        terms.dedup();
        if terms.len() > max_terms {
            terms.retain(|t| p.df.contains_key(t));
            terms.sort_by_key(|t| p.df.get(t).copied().unwrap_or(0));
            terms.truncate(max_terms);
        }
        let n = p.alive as f32;
        let avg_len = (p.total_len as f32 / n).max(1.0);
        let mut scores = vec![0f32; p.slots.len()];
        let mut touched = Vec::new();
        for term in &terms {
            let (Some(list), Some(&df)) = (p.postings.get(term), p.df.get(term)) else {
                continue;
            };
            let df = df as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for &Posting { slot, count: tf } in list {
                let s = &p.slots[slot as usize];
                if !s.alive {
                    continue;
                }
                let tf = tf as f32;
                let norm = K1 * (1.0 - B + B * s.len as f32 / avg_len);
                let score = &mut scores[slot as usize];
                if *score == 0.0 {
                    touched.push(slot);
                }
                *score += idf * tf * (K1 + 1.0) / (tf + norm);
            }
        }
        top(
            touched
                .into_iter()
                .filter(|&slot| filter.admits(&p.slots[slot as usize]))
                .map(|slot| (slot, scores[slot as usize])),
            limit,
            p,
        )
    }

    /// Cosine ranking of the memories with vectors in `partition`, best first (vectors are
    /// unit length, so the dot product is the cosine).
    pub fn nearest(
        &self,
        partition: &str,
        query: &[f32],
        filter: Filter,
        limit: usize,
    ) -> Vec<Hit> {
        let Some(p) = self.partitions.get(partition) else {
            return Vec::new();
        };
        top(
            p.slots.iter().enumerate().filter_map(|(i, slot)| {
                let vector = slot.vector.as_deref()?;
                filter.admits(slot).then(|| (i as u32, dot(vector, query)))
            }),
            limit,
            p,
        )
    }

    /// Every admitted memory id in a partition (for rankings without a query).
    pub fn ids(&self, partition: &str, filter: Filter) -> Vec<&str> {
        self.partitions.get(partition).map_or_else(Vec::new, |p| {
            p.slots
                .iter()
                .filter(|s| filter.admits(s))
                .map(|s| s.id.as_str())
                .collect()
        })
    }
}

fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The `limit` best (slot, score) pairs, best first, ties by id.
fn top(scored: impl Iterator<Item = (u32, f32)>, limit: usize, p: &Partition) -> Vec<Hit> {
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// Reverse order, so the heap's top is the worst kept hit.
    struct Worst(f32, u32);
    impl PartialEq for Worst {
        fn eq(&self, other: &Self) -> bool {
            self.cmp(other) == Ordering::Equal
        }
    }
    impl Eq for Worst {}
    impl PartialOrd for Worst {
        fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
            Some(self.cmp(other))
        }
    }
    impl Ord for Worst {
        fn cmp(&self, other: &Self) -> Ordering {
            other.0.total_cmp(&self.0).then(self.1.cmp(&other.1))
        }
    }

    if limit == 0 {
        return Vec::new();
    }
    let mut heap = BinaryHeap::with_capacity(limit + 1);
    for (slot, score) in scored {
        if score <= 0.0 && heap.len() >= limit {
            continue;
        }
        heap.push(Worst(score, slot));
        if heap.len() > limit {
            heap.pop();
        }
    }
    let mut hits: Vec<Hit> = heap
        .into_iter()
        .map(|Worst(score, slot)| Hit {
            id: p.slots[slot as usize].id.clone(),
            score,
        })
        .collect();
    hits.sort_by(|a, b| b.score.total_cmp(&a.score).then_with(|| a.id.cmp(&b.id)));
    hits
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Filter = Filter {
        types: 0,
        include_superseded: false,
        include_unapproved: false,
    };

    fn entry<'a>(id: &'a str, partition: &'a str, content: &'a str) -> Entry<'a> {
        Entry {
            id,
            partition,
            kind: MemoryType::ProjectPattern,
            live: true,
            approved: true,
            title: "",
            content,
            anchors: &[],
            vector: None,
        }
    }

    #[test]
    fn ranks_identifier_matches_first_and_keeps_partitions_apart() {
        let mut index = SearchIndex::default();
        index.upsert(&entry(
            "a",
            "project",
            "Use select_related for author lookups in views.",
        ));
        index.upsert(&entry(
            "b",
            "project",
            "Views must check permissions before lookups.",
        ));
        index.upsert(&entry(
            "c",
            "dev:alice",
            "Alice uses select_related everywhere.",
        ));
        let hits = index.keyword("project", "select_related", ALL, 10);
        assert_eq!(
            hits.iter().map(|h| h.id.as_str()).collect::<Vec<_>>(),
            ["a"]
        );
        let hits = index.keyword("project", "lookups select related", ALL, 10);
        assert_eq!(hits[0].id, "a");
        assert_eq!(hits.len(), 2);
        assert!(
            index
                .keyword("dev:bob", "select_related", ALL, 10)
                .is_empty()
        );
    }

    #[test]
    fn replaced_and_removed_memories_leave_the_results() {
        let mut index = SearchIndex::default();
        index.upsert(&entry(
            "a",
            "project",
            "cache invalidation happens in signals",
        ));
        index.upsert(&entry("a", "project", "templates autoescape"));
        assert!(index.keyword("project", "cache", ALL, 5).is_empty());
        assert_eq!(index.keyword("project", "templates", ALL, 5).len(), 1);
        index.remove("a");
        assert!(index.keyword("project", "templates", ALL, 5).is_empty());
        assert_eq!(index.len("project"), 0);
    }

    #[test]
    fn compaction_keeps_answers() {
        let mut index = SearchIndex::default();
        let ids: Vec<String> = (0..3_000).map(|i| format!("m{i}")).collect();
        for (i, id) in ids.iter().enumerate() {
            let content = if i % 2 == 0 {
                "even rows talk about caching"
            } else {
                "odd rows talk about signals"
            };
            index.upsert(&entry(id, "project", content));
        }
        for id in ids.iter().take(2_000) {
            index.remove(id);
        }
        let hits = index.keyword("project", "caching", ALL, 10_000);
        assert_eq!(hits.len(), 500);
        assert!(
            hits.iter()
                .all(|h| h.id[1..].parse::<usize>().unwrap() >= 2_000)
        );
    }

    #[test]
    fn rewrites_keep_rankings_sound() {
        let mut index = SearchIndex::default();
        index.upsert(&entry("a", "project", "retry payments with backoff"));
        index.upsert(&entry("b", "project", "render templates with autoescape"));
        // Metadata-only rewrites (statistics write-backs) must not skew frequencies.
        for _ in 0..50 {
            index.upsert(&entry("a", "project", "retry payments with backoff"));
        }
        let hits = index.keyword("project", "retry payments", ALL, 5);
        assert_eq!(hits.len(), 1);
        assert!(hits[0].score > 0.0, "{hits:?}");
        // Text rewrites leave dead slots; their terms stop counting.
        for i in 0..50 {
            index.upsert(&entry("a", "project", &format!("retry payments {i}")));
        }
        let hits = index.keyword("project", "retry payments", ALL, 5);
        assert_eq!(hits.len(), 1);
        assert!(hits[0].score > 0.0, "{hits:?}");
    }

    #[test]
    fn filters_apply_before_the_cut() {
        let mut index = SearchIndex::default();
        for i in 0..20 {
            let id = format!("p{i}");
            index.upsert(&entry(&id, "project", "retry payments with backoff"));
        }
        let mut decision = entry("d", "project", "retry payments at most three times");
        decision.kind = MemoryType::Decision;
        index.upsert(&decision);
        let only_decisions = Filter {
            types: MemoryType::Decision.bit(),
            include_superseded: false,
            include_unapproved: false,
        };
        let hits = index.keyword("project", "retry payments", only_decisions, 1);
        assert_eq!(hits[0].id, "d");
    }

    #[test]
    fn nearest_uses_vectors() {
        let mut index = SearchIndex::default();
        let mut a = entry("a", "project", "x");
        a.vector = Some(&[1.0, 0.0]);
        let mut b = entry("b", "project", "y");
        b.vector = Some(&[0.0, 1.0]);
        index.upsert(&a);
        index.upsert(&b);
        let hits = index.nearest("project", &[0.6, 0.8], ALL, 2);
        assert_eq!(hits[0].id, "b");
        assert_eq!(hits[1].id, "a");
    }
}
