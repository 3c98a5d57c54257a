//! Near-duplicate memories: pairs of live memories of one type and partition that say
//! nearly the same thing, for a person to merge (edit one to supersede the other) or forget.
//!
//! The thresholds sit a little below those at which a write is merged (see [`super::write`]):
//! a pair above them is one the write path would merge or nearly did — written before the
//! model was there, its vector computed later, or just under the line. Two memories that
//! conflict (other numbers, opposite words) are different learnings and never a pair.
//!
//! Candidates are found as a write finds its own: the memories sharing a memory's rarest
//! terms (BM25 over its eight rarest), and with vectors its nearest by cosine while the
//! partition is small enough that comparing every memory with every other stays cheap
//! ([`BY_VECTOR_UP_TO`]); above it, only memories sharing rare terms are compared.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde::Serialize;

use super::model::Memory;
use super::search::{Filter, SearchIndex};
use super::{embed, text};

/// Cosine similarity from which two memories are near-duplicates by meaning: below
/// `SAME_MEANING` (0.87), from which a write restating a memory is merged into it.
pub const NEAR_MEANING: f64 = 0.80;
/// Jaccard similarity of the term sets from which two memories are near-duplicates by terms:
/// below `SAME_REWORDED` (0.85), from which a rewording is merged, and above
/// `SAME_IF_CONTAINED` (0.5), which merges only a text holding the other's terms.
pub const NEAR_TERMS: f64 = 0.6;
/// The rarest terms of a memory that look for its near-duplicates (as a write's do).
const CANDIDATE_TERMS: usize = 8;
/// Candidates compared with each memory, by terms and by meaning.
const CANDIDATES: usize = 10;
/// Largest partition in which every memory's nearest neighbours by vector are looked for
/// (each look compares with every memory of the partition).
pub(crate) const BY_VECTOR_UP_TO: usize = 2_000;

/// Two live memories of one type and partition that say nearly the same thing.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NearPair {
    /// The older of the two.
    pub older: String,
    pub newer: String,
    /// Cosine similarity by meaning, or Jaccard similarity of the terms (rounded to 2
    /// places).
    pub similarity: f64,
    /// `meaning` or `terms`: which threshold the pair passed.
    pub by: &'static str,
}

/// Near-duplicate pairs, and whether some partition's were found before the latest change
/// (its comparison still under way).
#[derive(Debug, Default)]
pub struct NearDuplicates {
    pub pairs: Vec<NearPair>,
    pub comparing: bool,
}

/// Where a comparison's pairs arrive (`None` until found).
type Comparison = tokio::sync::watch::Receiver<Option<Arc<Vec<NearPair>>>>;

/// Near-duplicate pairs found and being found, by partition. A partition of 10k memories
/// takes seconds to compare, and its pairs change only with its memories: they are kept
/// with the sequence number they were found at.
#[derive(Default)]
pub(super) struct Found {
    near: HashMap<String, Pairs>,
    /// Comparisons under way: their answer arrives whether or not anyone waits for it.
    comparing: HashMap<String, Wait>,
}

/// A partition's pairs as of a sequence number.
struct Pairs {
    seq: u64,
    pairs: Vec<NearPair>,
}

/// A comparison of a partition's memories as of a sequence number, under way.
#[derive(Clone)]
pub(super) struct Wait {
    partition: String,
    seq: u64,
    comparison: Comparison,
}

/// A partition's pairs, just found.
pub(super) struct Fresh {
    partition: String,
    seq: u64,
    pairs: Arc<Vec<NearPair>>,
}

impl Found {
    /// The comparisons to wait for: for each partition whose pairs are older than `seq`,
    /// the comparison already under way at `seq`, or one `start` begins.
    pub(super) fn waits(
        &mut self,
        partitions: &[String],
        seq: u64,
        start: impl Fn(&str) -> Comparison,
    ) -> Vec<Wait> {
        partitions
            .iter()
            .filter(|p| self.near.get(*p).is_none_or(|kept| kept.seq != seq))
            .map(|partition| {
                let running = self.comparing.get(partition).filter(|w| w.seq == seq);
                match running {
                    Some(wait) => wait.clone(),
                    None => {
                        let wait = Wait {
                            partition: partition.clone(),
                            seq,
                            comparison: start(partition),
                        };
                        self.comparing.insert(partition.clone(), wait.clone());
                        wait
                    }
                }
            })
            .collect()
    }

    /// Forgets a comparison that stopped without an answer.
    pub(super) fn stopped(&mut self, partition: &str) {
        self.comparing.remove(partition);
    }

    /// The pairs of `partitions`: those just found, else those kept (flagged as still
    /// being compared when older than `seq`). Fresh pairs are kept if no write came in
    /// meanwhile.
    pub(super) fn answer(
        &mut self,
        partitions: &[String],
        found: Vec<Fresh>,
        seq: u64,
    ) -> NearDuplicates {
        let mut answer = NearDuplicates::default();
        for partition in partitions {
            if let Some(fresh) = found.iter().find(|f| &f.partition == partition) {
                answer.pairs.extend(fresh.pairs.iter().cloned());
            } else {
                let kept = self.near.get(partition);
                answer.comparing |= kept.is_none_or(|kept| kept.seq != seq);
                answer
                    .pairs
                    .extend(kept.into_iter().flat_map(|kept| kept.pairs.iter().cloned()));
            }
        }
        for fresh in found {
            if fresh.seq == seq {
                self.comparing.remove(&fresh.partition);
                let pairs = Arc::unwrap_or_clone(fresh.pairs);
                self.near.insert(fresh.partition, Pairs { seq, pairs });
            }
        }
        answer
            .pairs
            .sort_by(|a, b| b.similarity.total_cmp(&a.similarity));
        answer
    }
}

impl Wait {
    /// The pairs once found, or `Ok(None)` past `deadline`; `Err(partition)` when the
    /// comparison stopped without an answer.
    pub(super) async fn pairs(
        mut self,
        deadline: Option<tokio::time::Instant>,
    ) -> Result<Option<Fresh>, String> {
        // The borrow of the channel ends inside: it may not be held across an await.
        let done = async {
            let pairs = self.comparison.wait_for(Option::is_some).await;
            pairs.map(|pairs| pairs.clone().expect("waited for some"))
        };
        let pairs = match deadline {
            None => Some(done.await),
            Some(deadline) => tokio::time::timeout_at(deadline, done).await.ok(),
        };
        match pairs {
            None => Ok(None),
            Some(Ok(pairs)) => Ok(Some(Fresh {
                partition: self.partition,
                seq: self.seq,
                pairs,
            })),
            Some(Err(_)) => Err(self.partition),
        }
    }
}

/// Starts comparing a partition's memories for near-duplicates on the blocking pool, over a
/// copy of the memories and their index.
pub(super) fn compare(
    memories: &HashMap<String, Memory>,
    index: &SearchIndex,
    partition: &str,
) -> Comparison {
    let (sender, receiver) = tokio::sync::watch::channel(None);
    let memories = memories.clone();
    let index = index.clone();
    let partition = partition.to_string();
    tokio::task::spawn_blocking(move || {
        let pairs = near_pairs(&memories, &index, &partition);
        let _ = sender.send(Some(Arc::new(pairs)));
    });
    receiver
}

/// The near-duplicate pairs among the live memories of `partition`, most similar first.
pub(super) fn near_pairs(
    memories: &HashMap<String, Memory>,
    index: &SearchIndex,
    partition: &str,
) -> Vec<NearPair> {
    let live = Filter {
        types: 0,
        include_superseded: false,
        // Pending memories are listed on their own page until a person approves them.
        include_unapproved: false,
    };
    let ids = index.ids(partition, live);
    let by_vector = ids.len() <= BY_VECTOR_UP_TO;
    let mut terms: HashMap<&str, BTreeSet<String>> = HashMap::new();
    let mut compared: HashSet<(String, String)> = HashSet::new();
    let mut pairs = Vec::new();
    for id in ids {
        let Some(memory) = memories.get(id) else {
            continue;
        };
        let own = Side {
            memory,
            terms: text::fingerprint(&memory.content),
            vector: index.vector(id),
        };
        for other_id in candidates(&own, index, partition, by_vector) {
            if other_id == id {
                continue;
            }
            let key = if id < other_id.as_str() {
                (id.to_string(), other_id.clone())
            } else {
                (other_id.clone(), id.to_string())
            };
            if !compared.insert(key) {
                continue;
            }
            let Some(other) = memories.get(&other_id) else {
                continue;
            };
            let other_terms = terms
                .entry(other.id.as_str())
                .or_insert_with(|| text::fingerprint(&other.content));
            pairs.extend(pair(&own, other, other_terms, index));
        }
    }
    pairs.sort_by(|a, b| {
        b.similarity
            .total_cmp(&a.similarity)
            .then_with(|| a.older.cmp(&b.older))
            .then_with(|| a.newer.cmp(&b.newer))
    });
    pairs
}

/// A memory being compared: its terms and its vector, computed once.
struct Side<'a> {
    memory: &'a Memory,
    terms: BTreeSet<String>,
    vector: Option<Vec<f32>>,
}

/// The memories of the same type a memory is compared with: its closest by rare terms, and
/// by vector in a partition small enough.
fn candidates(own: &Side, index: &SearchIndex, partition: &str, by_vector: bool) -> Vec<String> {
    let filter = Filter {
        types: own.memory.kind.bit(),
        include_superseded: false,
        include_unapproved: false,
    };
    let mut candidates: Vec<String> = index
        .keyword_with(
            partition,
            &own.memory.content,
            filter,
            CANDIDATES + 1,
            CANDIDATE_TERMS,
        )
        .into_iter()
        .map(|hit| hit.id)
        .collect();
    if by_vector && let Some(vector) = &own.vector {
        candidates.extend(
            index
                .nearest(partition, vector, filter, CANDIDATES + 1)
                .into_iter()
                .map(|hit| hit.id),
        );
    }
    candidates
}

/// The pair of `own` and `other` when they are near by meaning or by terms (and do not
/// conflict), the older first.
fn pair(
    own: &Side,
    other: &Memory,
    other_terms: &BTreeSet<String>,
    index: &SearchIndex,
) -> Option<NearPair> {
    if text::conflicts(&own.terms, other_terms) {
        return None;
    }
    let by_terms = text::jaccard(&own.terms, other_terms);
    let by_meaning = own
        .vector
        .as_deref()
        .zip(index.vector(&other.id))
        .map(|(a, b)| f64::from(embed::cosine(a, &b)));
    let (similarity, by) = match by_meaning {
        Some(meaning) if meaning >= NEAR_MEANING => (meaning, "meaning"),
        _ if by_terms >= NEAR_TERMS => (by_terms, "terms"),
        _ => return None,
    };
    let memory = own.memory;
    let (older, newer) =
        if (memory.validity.created_at, &memory.id) <= (other.validity.created_at, &other.id) {
            (memory, other)
        } else {
            (other, memory)
        };
    Some(NearPair {
        older: older.id.clone(),
        newer: newer.id.clone(),
        similarity: (similarity * 100.0).round() / 100.0,
        by,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::model::MemoryType;
    use crate::memory::search::Entry;

    /// Memories in one partition, with vectors when given.
    fn indexed(
        rows: &[(&str, MemoryType, &str, Option<Vec<f32>>)],
    ) -> (HashMap<String, Memory>, SearchIndex) {
        let mut memories = HashMap::new();
        let mut index = SearchIndex::default();
        for (i, (id, kind, content, vector)) in rows.iter().enumerate() {
            let memory = Memory::new(
                id.to_string(),
                *kind,
                String::new(),
                content.to_string(),
                1_700_000_000_000 + i as i64,
            );
            index.upsert(&Entry {
                approved: true,
                id,
                partition: "project",
                kind: *kind,
                live: true,
                title: "",
                content,
                anchors: &[],
                vector: vector.as_deref(),
            });
            memories.insert(id.to_string(), memory);
        }
        (memories, index)
    }

    /// A unit vector at `angle` radians from the first axis, in the first two dimensions.
    fn at(angle: f32) -> Option<Vec<f32>> {
        Some(vec![angle.cos(), angle.sin(), 0.0])
    }

    #[test]
    fn rewordings_pair_by_terms_and_unrelated_or_conflicting_texts_do_not() {
        use MemoryType::*;
        let (memories, index) = indexed(&[
            (
                "m_a",
                Decision,
                "Cart totals are integers of cents, never floats, in the checkout service",
                None,
            ),
            (
                "m_b",
                Decision,
                "Cart totals are integers of cents in the checkout service, never floats",
                None,
            ),
            (
                "m_c",
                Decision,
                "Retries of the payment gateway stop after 3 attempts",
                None,
            ),
            (
                "m_d",
                Decision,
                "Retries of the payment gateway stop after 5 attempts",
                None,
            ),
            (
                "m_e",
                ProjectPattern,
                "Cart totals are integers of cents, never floats, in the checkout service",
                None,
            ),
        ]);
        let pairs = near_pairs(&memories, &index, "project");
        assert_eq!(
            pairs,
            [NearPair {
                older: "m_a".to_string(),
                newer: "m_b".to_string(),
                similarity: 1.0,
                by: "terms",
            }],
            "other numbers conflict, and another type is another learning"
        );
    }

    #[test]
    fn meanings_pair_from_the_threshold_and_not_below() {
        use MemoryType::*;
        // cos(0.6) ≈ 0.83 ≥ 0.80; cos(0.7) ≈ 0.76 below.
        let (memories, index) = indexed(&[
            (
                "m_a",
                Decision,
                "Sessions expire after idle time on the admin site",
                at(0.0),
            ),
            (
                "m_b",
                Decision,
                "Administrators are logged out when they stop working",
                at(0.6),
            ),
            (
                "m_c",
                Decision,
                "Reports render on the worker queue overnight",
                at(-0.7),
            ),
        ]);
        let pairs = near_pairs(&memories, &index, "project");
        assert_eq!(pairs.len(), 1, "{pairs:?}");
        assert_eq!(
            (pairs[0].older.as_str(), pairs[0].newer.as_str()),
            ("m_a", "m_b")
        );
        assert_eq!((pairs[0].by, pairs[0].similarity), ("meaning", 0.83));
    }

    #[test]
    fn superseded_memories_and_other_partitions_are_left_out() {
        use MemoryType::*;
        let (mut memories, mut index) = indexed(&[
            (
                "m_a",
                Decision,
                "Cart totals are integers of cents, never floats",
                None,
            ),
            (
                "m_b",
                Decision,
                "Cart totals are integers of cents, never floats!",
                None,
            ),
        ]);
        assert_eq!(near_pairs(&memories, &index, "project").len(), 1);
        assert!(near_pairs(&memories, &index, "dev:alice").is_empty());
        let old = memories.get_mut("m_a").unwrap();
        old.validity.invalidated_at = Some(1_700_000_100_000);
        index.upsert(&Entry {
            approved: true,
            id: "m_a",
            partition: "project",
            kind: Decision,
            live: false,
            title: "",
            content: &old.content.clone(),
            anchors: &[],
            vector: None,
        });
        assert!(near_pairs(&memories, &index, "project").is_empty());
    }
}
