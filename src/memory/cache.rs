//! The cache: everything a process knows of the memories — every memory, their search
//! index, reads not yet written back, review records — kept in step with the store by
//! applying each change in sequence order.

use std::collections::HashMap;

use super::model::{FilePattern, Memory};
use super::search::{Entry, SearchIndex};
use super::store::StoredMemory;
use super::{duplicates, reviews, team, write};
use crate::review::records::MemoryVerdicts;

/// Everything a process knows of the memories.
#[derive(Default)]
pub(super) struct State {
    pub(super) loaded: bool,
    /// Sequence number of the last change applied.
    pub(super) seq: u64,
    pub(super) memories: HashMap<String, Memory>,
    pub(super) index: SearchIndex,
    /// Reads not yet written back, by memory id.
    pub(super) access: HashMap<String, Unflushed>,
    /// Ids removed by `forget` (an import must not bring them back).
    pub(super) forgotten: std::collections::HashSet<String>,
    /// Review records by review id.
    pub(super) reviews: HashMap<String, reviews::ReviewRecord>,
    /// What the review records say of each memory they cite, by memory id.
    pub(super) verdicts: HashMap<String, MemoryVerdicts>,
    /// Team mode: what this process knows of the server.
    pub(super) team: team::Sync,
    /// Near-duplicate pairs found and being found.
    pub(super) duplicates: duplicates::Found,
    /// File patterns compiled, by their text (`None`: it does not compile).
    pub(super) globs: HashMap<String, Option<FilePattern>>,
    /// An organisation's store: the identity of the repository reading it, whose files the
    /// anchors of the memories written there name (see [`Memory::anchored_elsewhere`]).
    pub(super) here: Option<String>,
}

/// Reads of a memory not yet written back.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Unflushed {
    pub(super) count: u64,
    /// Milliseconds since the Unix epoch.
    pub(super) last: i64,
}

impl Unflushed {
    /// One more read, at `now`.
    pub(super) fn read_at(&mut self, now: i64) {
        self.count += 1;
        self.last = now;
    }
}

impl State {
    pub(super) fn apply_reviews(&mut self, reviews: Vec<reviews::ReviewRecord>) {
        for review in reviews {
            self.seq = self.seq.max(review.seq);
            self.cite(&review, true);
            if let Some(replaced) = self.reviews.insert(review.id.clone(), review) {
                self.cite(&replaced, false);
            }
        }
    }

    /// Counts (or, `add` false, takes back) what a review record says of the memories it
    /// cites.
    fn cite(&mut self, review: &reviews::ReviewRecord, add: bool) {
        let step = |n: &mut u64| *n = if add { *n + 1 } else { n.saturating_sub(1) };
        for id in &review.applied {
            step(&mut self.verdicts.entry(id.clone()).or_default().applied);
        }
        for id in &review.contradicted {
            step(&mut self.verdicts.entry(id.clone()).or_default().contradicted);
        }
    }

    /// What the review records say of a memory.
    pub(super) fn verdicts_of(&self, id: &str) -> MemoryVerdicts {
        self.verdicts.get(id).copied().unwrap_or_default()
    }

    /// Whether a memory of this store is anchored in another repository than the one
    /// reading it (only an organisation's store has memories that are).
    pub(super) fn anchored_elsewhere(&self, memory: &Memory) -> bool {
        anchored_elsewhere(self.here.as_deref(), memory)
    }

    /// The anchors a memory is searched by: all of them, or for one anchored in another
    /// repository its symbols' names only (its paths name files of that repository).
    fn searchable_anchors(&self, memory: &Memory) -> Vec<String> {
        if self.anchored_elsewhere(memory) {
            memory.anchors.symbol_names().map(str::to_string).collect()
        } else {
            memory.anchors.all().cloned().collect()
        }
    }

    pub(super) fn apply(&mut self, stored: StoredMemory) {
        self.seq = self.seq.max(stored.memory.seq);
        let id = stored.memory.id.clone();
        match &stored.rev {
            Some(rev) => self.team.revs.insert(id.clone(), rev.clone()),
            None => self.team.revs.remove(&id),
        };
        if stored.forgotten {
            self.memories.remove(&id);
            self.index.remove(&id);
            self.forgotten.insert(id);
            return;
        }
        let memory = stored.memory;
        let anchors = self.searchable_anchors(&memory);
        let partition = memory.partition();
        self.index.upsert(&Entry {
            id: &memory.id,
            partition: &partition,
            kind: memory.kind,
            live: memory.is_live(),
            approved: memory.status.is_approved(),
            title: &memory.title,
            content: &memory.content,
            anchors: &anchors,
            vector: stored.vector.as_deref(),
        });
        self.memories.insert(id, memory);
    }
}

/// Whether a memory of an organisation's store read by the repository `here` was written in
/// another (or before cairn kept where); never for a repository's store (`here` is `None`).
pub(super) fn anchored_elsewhere(here: Option<&str>, memory: &Memory) -> bool {
    here.is_some_and(|here| !memory.anchors.written_in(here))
}

pub(super) fn state_vector(state: &State, id: &str) -> Option<Vec<f32>> {
    state.index.vector(id)
}

pub(super) fn state_view<'a>(
    state: &'a State,
    vectors: &'a HashMap<String, Vec<f32>>,
) -> write::View<'a> {
    write::View {
        memories: &state.memories,
        index: &state.index,
        vectors,
    }
}
