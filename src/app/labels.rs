//! Memories addressed by their labels — the developer, agent and run they were written for,
//! their writer and their metadata — as chat-memory clients address them: learning from a
//! person's own words, finding, selecting, rewriting one in place, and forgetting what one
//! writer wrote.
//!
//! Scope is kept as everywhere else: a developer's memories are reached through their
//! developer only; without one, a search or a selection reads the project's memories.

use std::collections::HashMap;

use super::{AskError, Cairn, RememberRequest};
use crate::memory::model::{self, MAX_CONTENT_BYTES, Metadata};
use crate::memory::{self, Found, Memory, MemoryError, Scope, WriteOutcome};

/// Most memories one learning request may write.
pub const MAX_LEARNINGS: usize = 50;
/// Most memories a find answers.
pub const MAX_FOUND: usize = 100;
/// The length the pieces of a split text aim at, in bytes: a few sentences.
const PIECE_BYTES: usize = 500;

/// What a metadata value must be for a memory to be kept.
#[derive(Debug, Clone, PartialEq)]
pub enum Condition {
    /// This value.
    Is(serde_json::Value),
    /// One of these values.
    OneOf(Vec<serde_json::Value>),
    /// Any value, as long as the key is there.
    Present,
}

impl Condition {
    fn holds(&self, value: Option<&serde_json::Value>) -> bool {
        match (self, value) {
            (_, None) => false,
            (Condition::Present, Some(_)) => true,
            (Condition::Is(wanted), Some(value)) => wanted == value,
            (Condition::OneOf(wanted), Some(value)) => wanted.contains(value),
        }
    }
}

/// A condition on the value of one metadata key.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataCondition {
    pub key: String,
    pub condition: Condition,
}

/// Which memories a request addresses, by their labels. Every label given must match.
#[derive(Debug, Clone, Default)]
pub struct LabelFilter {
    /// The developer a memory belongs to or is about.
    pub developer: Option<String>,
    pub agent: Option<String>,
    pub run: Option<String>,
    /// Who wrote the memory first (`written_by`).
    pub written_by: Option<String>,
    pub metadata: Vec<MetadataCondition>,
}

impl LabelFilter {
    /// The filter with its developer normalised (trimmed, no `@`, lowercase).
    fn normalised(mut self) -> Result<LabelFilter, MemoryError> {
        self.developer = self
            .developer
            .as_deref()
            .map(model::developer_id)
            .transpose()?;
        Ok(self)
    }

    /// True when `memory` carries every label asked for.
    fn labels(&self, memory: &Memory) -> bool {
        let same = |asked: &Option<String>, held: &Option<String>| {
            asked
                .as_deref()
                .is_none_or(|asked| held.as_deref() == Some(asked.trim()))
        };
        same(&self.developer, &memory.owner.developer)
            && same(&self.agent, &memory.owner.agent)
            && same(&self.run, &memory.owner.run)
            && same(&self.written_by, &memory.provenance.written_by)
            && self
                .metadata
                .iter()
                .all(|m| m.condition.holds(memory.metadata.get(&m.key)))
    }

    /// True when `memory` is in the scope the filter reads (its developer's, else the
    /// project's) and carries every label asked for.
    fn keeps(&self, memory: &Memory) -> bool {
        (self.developer.is_some() || !memory.kind.developer_scoped()) && self.labels(memory)
    }
}

/// A person's own words to learn from, as chat clients send them.
#[derive(Debug, Clone)]
pub struct LearnRequest {
    /// The texts, one a turn.
    pub texts: Vec<String>,
    /// Cut texts longer than a few sentences into learnings of a few sentences each; else
    /// each text is one memory, as written.
    pub split: bool,
    /// Everything about each memory but its content.
    pub memory: RememberRequest,
}

/// A search narrowed by labels.
#[derive(Debug, Clone, Default)]
pub struct FindRequest {
    pub text: String,
    pub filter: LabelFilter,
    /// At most [`MAX_FOUND`].
    pub limit: usize,
}

/// Served memories selected by labels, newest first, a page at a time.
#[derive(Debug, Clone, Default)]
pub struct SelectRequest {
    pub filter: LabelFilter,
    /// How many of the newest to skip.
    pub offset: usize,
    pub limit: usize,
}

/// A page of selected memories and how many the filter selects in all.
#[derive(Debug, Clone)]
pub struct Selected {
    pub total: usize,
    pub memories: Vec<Memory>,
}

/// A new text or new metadata for one memory, written in place (its id stays).
#[derive(Debug, Clone, Default)]
pub struct RewriteRequest {
    pub id: String,
    pub content: Option<String>,
    /// Replaces the memory's metadata whole.
    pub metadata: Option<Metadata>,
    pub written_by: Option<String>,
}

/// What kind of label an entity is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EntityKind {
    Developer,
    Agent,
    Run,
}

/// A developer, agent or run that served memories carry, and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct Entity {
    pub kind: EntityKind,
    pub name: String,
    pub memories: usize,
    /// When the first of them was written, and the last changed (milliseconds).
    pub created_at: i64,
    pub updated_at: i64,
}

impl Cairn {
    /// Learns from a person's own words: each text (or each piece of a split one) is written
    /// as `remember` writes, deduplicated against its scope. Every memory is checked before
    /// any is written, so a refused request stores nothing.
    pub async fn learn(&self, request: LearnRequest) -> Result<Vec<WriteOutcome>, AskError> {
        let mut contents = Vec::new();
        for (n, text) in request.texts.iter().enumerate() {
            let text = text.trim();
            if text.is_empty() {
                return Err(invalid(format!(
                    "text {} is empty: nothing was stored",
                    n + 1
                )));
            }
            if request.split {
                contents.extend(pieces(text));
            } else {
                contents.push(text.to_string());
            }
        }
        if contents.is_empty() {
            return Err(invalid("nothing to learn: no text was given".to_string()));
        }
        if contents.len() > MAX_LEARNINGS {
            return Err(invalid(format!(
                "{} memories in one request; at most {MAX_LEARNINGS}: nothing was stored",
                contents.len()
            )));
        }
        let writes = contents
            .into_iter()
            .map(|content| {
                self.new_memory(RememberRequest {
                    content,
                    ..request.memory.clone()
                })
            })
            .collect::<Result<Vec<_>, AskError>>()?;
        for (new, _) in &writes {
            self.memories.check(new)?;
        }
        let mut outcomes = Vec::with_capacity(writes.len());
        for (new, asked) in writes {
            outcomes.push(self.write_memory(new, asked).await?);
        }
        Ok(outcomes)
    }

    /// Searches the memories a filter reads — a developer's own and the project memories
    /// about them, or the project's — best first, keeping those that carry its labels.
    pub async fn find(&self, request: FindRequest) -> Result<Vec<Found>, AskError> {
        let filter = request.filter.normalised()?;
        let query = |developer: Option<String>| memory::Query {
            text: request.text.clone(),
            developer,
            limit: MAX_FOUND,
            // Reads are counted below, once the filter has kept what it answers.
            browsing: true,
            ..memory::Query::default()
        };
        let mut found = self.search_scopes(&query(None)).await?;
        if let Some(developer) = &filter.developer {
            found.extend(self.search_scopes(&query(Some(developer.clone()))).await?);
        }
        found.retain(|f| filter.keeps(&f.memory));
        found.sort_by(|a, b| {
            b.score
                .total_cmp(&a.score)
                .then_with(|| a.memory.id.cmp(&b.memory.id))
        });
        found.truncate(request.limit.clamp(1, MAX_FOUND));
        self.count_reads(&found).await;
        Ok(found)
    }

    /// Served memories a filter selects, newest first: a page of them and their number.
    pub async fn select(&self, request: SelectRequest) -> Result<Selected, AskError> {
        let filter = request.filter.normalised()?;
        let mut selected: Vec<Memory> = self
            .all_scopes()
            .await?
            .into_iter()
            .filter(|m| m.is_served() && filter.keeps(m))
            .collect();
        selected.reverse();
        let total = selected.len();
        let memories = selected
            .into_iter()
            .skip(request.offset)
            .take(request.limit)
            .collect();
        Ok(Selected { total, memories })
    }

    /// Writes a new text or new metadata into a memory in place, keeping its id (the text
    /// it had goes to its history); the text is checked and redacted as a write's.
    pub async fn rewrite(&self, request: RewriteRequest) -> Result<WriteOutcome, AskError> {
        let id = request.id.trim();
        let change = memory::Rewrite {
            content: request.content,
            metadata: request.metadata,
            by: request.written_by,
        };
        let outcome = self.store_of(id).await?.rewrite(id, &change).await?;
        self.queue_embedding();
        Ok(outcome)
    }

    /// Removes for good every memory, of any status and any developer, that the filter's
    /// writer wrote and that carries its labels; returns them. Refused without a writer: it
    /// never removes what others wrote.
    pub async fn forget_written(&self, filter: LabelFilter) -> Result<Vec<Memory>, AskError> {
        let filter = filter.normalised()?;
        if filter.written_by.is_none() {
            return Err(invalid(
                "name the writer whose memories to remove: nothing was removed".to_string(),
            ));
        }
        let (org, repository): (Vec<Memory>, Vec<Memory>) = self
            .all_scopes()
            .await?
            .into_iter()
            .filter(|m| filter.labels(m))
            .partition(|m| m.scope == Scope::Org);
        let ids = |memories: Vec<Memory>| memories.into_iter().map(|m| m.id).collect::<Vec<_>>();
        let mut removed = self.memories.forget_many(&ids(repository)).await?;
        let org = ids(org);
        if !org.is_empty()
            && let Ok(store) = self.org_memories()
        {
            removed.extend(store.forget_many(&org).await?);
        }
        Ok(removed)
    }

    /// The developers, agents and runs that served memories carry, with how many each.
    pub async fn entities(&self) -> Result<Vec<Entity>, AskError> {
        let mut entities: HashMap<(EntityKind, String), Entity> = HashMap::new();
        for memory in self.all_scopes().await?.iter().filter(|m| m.is_served()) {
            let labels = [
                (EntityKind::Developer, &memory.owner.developer),
                (EntityKind::Agent, &memory.owner.agent),
                (EntityKind::Run, &memory.owner.run),
            ];
            for (kind, name) in labels {
                let Some(name) = name else { continue };
                let entity = entities
                    .entry((kind, name.clone()))
                    .or_insert_with(|| Entity {
                        kind,
                        name: name.clone(),
                        memories: 0,
                        created_at: memory.validity.created_at,
                        updated_at: memory.validity.updated_at,
                    });
                entity.memories += 1;
                entity.created_at = entity.created_at.min(memory.validity.created_at);
                entity.updated_at = entity.updated_at.max(memory.validity.updated_at);
            }
        }
        let mut entities: Vec<Entity> = entities.into_values().collect();
        entities.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
        Ok(entities)
    }

    /// Counts found memories as read, each in the store that holds it.
    async fn count_reads(&self, found: &[Found]) {
        let ids = |scope: Scope| -> Vec<&str> {
            found
                .iter()
                .filter(|f| f.memory.scope == scope)
                .map(|f| f.memory.id.as_str())
                .collect()
        };
        self.memories.count_reads(&ids(Scope::Repository)).await;
        if let Ok(org) = self.org_memories() {
            org.count_reads(&ids(Scope::Org)).await;
        }
        self.note_reads();
    }
}

/// A text cut into pieces of whole sentences of up to [`PIECE_BYTES`] each (a text that
/// short is one piece); a sentence longer than a memory holds is cut at spaces.
fn pieces(text: &str) -> Vec<String> {
    let mut pieces: Vec<String> = Vec::new();
    let mut current = String::new();
    let parts = sentences(text)
        .into_iter()
        .flat_map(|s| within(s, MAX_CONTENT_BYTES))
        .filter(|s| !s.is_empty());
    for sentence in parts {
        if !current.is_empty() && current.len() + 1 + sentence.len() > PIECE_BYTES {
            pieces.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(sentence);
    }
    if !current.is_empty() {
        pieces.push(current);
    }
    pieces
}

/// The sentences of a text: ended by `.`, `!` or `?` before a space, or by a line break.
fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let bytes = line.as_bytes();
        for (i, &b) in bytes.iter().enumerate() {
            let ends = matches!(b, b'.' | b'!' | b'?')
                && bytes
                    .get(i + 1)
                    .is_some_and(|next| next.is_ascii_whitespace());
            if ends {
                out.push(line[start..=i].trim());
                start = i + 1;
            }
        }
        out.push(line[start..].trim());
    }
    out.retain(|s| !s.is_empty());
    out
}

/// A sentence in parts of at most `max` bytes, cut at spaces (or inside a word too long).
fn within(sentence: &str, max: usize) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut rest = sentence;
    while rest.len() > max {
        let mut cut = max;
        while !rest.is_char_boundary(cut) {
            cut -= 1;
        }
        let at = rest[..cut].rfind(' ').filter(|&at| at > 0).unwrap_or(cut);
        parts.push(rest[..at].trim());
        rest = rest[at..].trim_start();
    }
    parts.push(rest);
    parts
}

fn invalid(message: String) -> AskError {
    MemoryError::Invalid(message).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_texts_stay_whole_and_long_ones_split_between_sentences() {
        assert_eq!(
            pieces("Cart totals are integers of cents."),
            ["Cart totals are integers of cents."]
        );
        let sentence =
            "Every money amount in the cart is an integer number of cents, never a float.";
        let long = [sentence; 12].join(" ");
        let split = pieces(&long);
        assert!(split.len() > 1, "{split:?}");
        for piece in &split {
            assert!(piece.len() <= PIECE_BYTES, "{piece}");
            assert!(piece.ends_with("float."), "{piece}");
        }
        assert_eq!(split.join(" "), long);
        // Lines end sentences; a sentence over a memory's size is cut at spaces.
        assert_eq!(pieces("one\ntwo"), ["one two"]);
        let endless = "word ".repeat(2_000);
        let split = pieces(&endless);
        assert!(
            split.iter().all(|p| p.len() <= MAX_CONTENT_BYTES),
            "{split:?}"
        );
        assert_eq!(split.join(" ").split(' ').count(), 2_000);
    }

    #[test]
    fn a_filter_reads_one_developer_or_the_project_and_matches_every_label() {
        let mut memory = Memory::new(
            "m_0000000000000001".into(),
            memory::MemoryType::DeveloperPattern,
            "t".into(),
            "Alice forgets to close files.".into(),
            1,
        );
        memory.owner.developer = Some("alice".into());
        memory.owner.agent = Some("reviewer".into());
        memory.metadata.insert("pr".into(), serde_json::json!(12));
        let filter = |developer: Option<&str>| LabelFilter {
            developer: developer.map(str::to_string),
            ..LabelFilter::default()
        };
        assert!(filter(Some("alice")).keeps(&memory));
        assert!(!filter(Some("bob")).keeps(&memory));
        // A developer's memory is not the project's.
        assert!(!filter(None).keeps(&memory));
        assert!(filter(None).labels(&memory));
        let narrowed = |agent: &str, condition: Condition| LabelFilter {
            agent: Some(agent.to_string()),
            metadata: vec![MetadataCondition {
                key: "pr".to_string(),
                condition,
            }],
            ..filter(Some("alice"))
        };
        assert!(narrowed("reviewer", Condition::Is(serde_json::json!(12))).keeps(&memory));
        assert!(!narrowed("reviewer", Condition::Is(serde_json::json!("12"))).keeps(&memory));
        assert!(!narrowed("other", Condition::Present).keeps(&memory));
        let one_of = Condition::OneOf(vec![serde_json::json!(11), serde_json::json!(12)]);
        assert!(narrowed("reviewer", one_of).keeps(&memory));
    }
}
