//! mem0's shapes on the wire: the bodies its clients send (fields cairn does not use are
//! ignored, as mem0's server ignores them) and the memories, write events, histories and
//! entities they read back. Only this file and its module know them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::app::{Entity, EntityKind};
use crate::clock::rfc3339_of_ms;
use crate::memory::model::Metadata;
use crate::memory::{Action, Memory, Status};

/// Whose memories a call is about: mem0's ids at the top of the body, or in `filters` (where
/// the hosted API takes them, with metadata conditions).
#[derive(Debug, Default, Deserialize)]
pub struct Ids {
    #[serde(default)]
    pub user_id: Option<String>,
    #[serde(default)]
    pub agent_id: Option<String>,
    #[serde(default)]
    pub run_id: Option<String>,
    #[serde(default)]
    pub filters: Option<Value>,
}

/// `POST /memories` and the hosted add paths.
#[derive(Debug, Deserialize)]
pub(crate) struct AddBody {
    /// A list of `{role, content}` turns, one turn, or a text (a user turn).
    pub messages: Value,
    #[serde(flatten)]
    pub ids: Ids,
    #[serde(default)]
    pub metadata: Option<Metadata>,
    /// `false`: each user turn is stored as written (after redaction), not split.
    #[serde(default)]
    pub infer: Option<bool>,
}

/// `POST /search` and the hosted search paths.
#[derive(Debug, Deserialize)]
pub struct SearchBody {
    pub query: String,
    #[serde(flatten)]
    pub ids: Ids,
    #[serde(default)]
    pub top_k: Option<usize>,
    /// What older clients call `top_k`.
    #[serde(default)]
    pub limit: Option<usize>,
    #[serde(default)]
    pub threshold: Option<f64>,
}

/// `PUT /memories/{id}`: a new text (`text`, or `data` and `memory` as older clients call
/// it), new metadata, or both.
#[derive(Debug, Deserialize)]
pub(crate) struct UpdateBody {
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub data: Option<String>,
    #[serde(default)]
    pub memory: Option<String>,
    #[serde(default)]
    pub metadata: Option<Metadata>,
}

/// The hosted API's listing (`POST /v2/memories/`, `/v3/memories/`).
#[derive(Debug, Default, Deserialize)]
pub(crate) struct ListBody {
    #[serde(flatten)]
    pub ids: Ids,
}

/// A memory as mem0 answers it, with cairn's type (and its status while it is not served).
#[derive(Debug, Serialize)]
pub struct Item {
    pub id: String,
    pub memory: String,
    /// What a write did: `ADD`, `UPDATE`, `DELETE` or `NONE`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event: Option<&'static str>,
    /// An UPDATE's text before it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub previous_memory: Option<String>,
    /// A search hit's relevance, 0–1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub user_id: Option<String>,
    pub agent_id: Option<String>,
    pub run_id: Option<String>,
    pub metadata: Metadata,
    pub created_at: String,
    pub updated_at: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
    /// Why a write did what it did (cairn's notes).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

impl Item {
    /// A memory as an item.
    pub fn of(memory: &Memory) -> Item {
        Item {
            id: memory.id.clone(),
            memory: memory.content.clone(),
            event: None,
            previous_memory: None,
            score: None,
            user_id: memory.owner.developer.clone(),
            agent_id: memory.owner.agent.clone(),
            run_id: memory.owner.run.clone(),
            metadata: memory.metadata.clone(),
            created_at: rfc3339_of_ms(memory.validity.created_at),
            updated_at: rfc3339_of_ms(memory.validity.updated_at),
            kind: memory.kind.as_str(),
            status: (memory.status != Status::Approved).then(|| memory.status.as_str()),
            notes: Vec::new(),
        }
    }

    /// The item with the event a write answered.
    pub(crate) fn with_event(self, event: &'static str) -> Item {
        Item {
            event: Some(event),
            ..self
        }
    }
}

/// mem0's name of a write's event; a supersede is told as the new memory's ADD (and the old
/// one's DELETE, see [`Item`]).
pub(crate) fn event_name(action: Action) -> &'static str {
    match action {
        Action::Add | Action::Supersede => "ADD",
        Action::Update => "UPDATE",
        Action::None => "NONE",
        Action::Delete => "DELETE",
    }
}

/// One change in a memory's history, as mem0 lists them.
#[derive(Debug, Serialize)]
pub struct Change {
    pub id: String,
    pub memory_id: String,
    pub old_memory: Option<String>,
    pub new_memory: Option<String>,
    pub event: &'static str,
    pub created_at: String,
    pub updated_at: String,
    pub is_deleted: bool,
    pub actor_id: Option<String>,
    pub role: Option<String>,
}

/// A memory's history as mem0 lists it, oldest first: its ADD, each change of its text
/// (UPDATE), and its DELETE once superseded. Changes that left the text as it was (anchors
/// moved, shared) are left out.
pub fn history(memory: &Memory) -> Vec<Change> {
    let change =
        |n: usize, old: Option<&str>, new: Option<&str>, event, at, by: &Option<String>| Change {
            id: format!("{}:{n}", memory.id),
            memory_id: memory.id.clone(),
            old_memory: old.map(str::to_string),
            new_memory: new.map(str::to_string),
            event,
            created_at: rfc3339_of_ms(at),
            updated_at: rfc3339_of_ms(at),
            is_deleted: event == "DELETE",
            actor_id: by.clone(),
            role: None,
        };
    // The text each revision led to: the next revision's "before", or the current text.
    let after: Vec<&str> = memory
        .history
        .iter()
        .skip(1)
        .map(|r| r.content.as_str())
        .chain(std::iter::once(memory.content.as_str()))
        .collect();
    let first = memory
        .history
        .first()
        .map_or(memory.content.as_str(), |r| r.content.as_str());
    let mut changes = vec![change(
        0,
        None,
        Some(first),
        "ADD",
        memory.validity.created_at,
        &memory.provenance.written_by,
    )];
    for (revision, next) in memory.history.iter().zip(after) {
        let n = changes.len();
        match revision.event {
            Action::Supersede | Action::Delete => changes.push(change(
                n,
                Some(&revision.content),
                None,
                "DELETE",
                revision.at,
                &revision.by,
            )),
            Action::Update if revision.content != next => changes.push(change(
                n,
                Some(&revision.content),
                Some(next),
                "UPDATE",
                revision.at,
                &revision.by,
            )),
            _ => {}
        }
    }
    changes
}

/// An entity as mem0 lists them (`GET /v1/entities/`).
#[derive(Debug, Serialize)]
pub(crate) struct EntityItem {
    pub id: String,
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub total_memories: usize,
    pub created_at: String,
    pub updated_at: String,
}

impl EntityItem {
    pub fn of(entity: &Entity) -> EntityItem {
        EntityItem {
            id: entity.name.clone(),
            name: entity.name.clone(),
            kind: entity_type(entity.kind),
            total_memories: entity.memories,
            created_at: rfc3339_of_ms(entity.created_at),
            updated_at: rfc3339_of_ms(entity.updated_at),
        }
    }
}

/// mem0's entity type of a label.
pub(crate) fn entity_type(kind: EntityKind) -> &'static str {
    match kind {
        EntityKind::Developer => "user",
        EntityKind::Agent => "agent",
        EntityKind::Run => "run",
    }
}

/// A page of the hosted API's listing.
#[derive(Debug, Serialize)]
pub struct Page {
    pub count: usize,
    pub next: Option<String>,
    pub previous: Option<String>,
    pub results: Vec<Item>,
}

/// `{"results": [...]}`, with cairn's notes about the whole request when there are any.
#[derive(Debug, Serialize)]
pub(crate) struct Results<T: Serialize> {
    pub results: Vec<T>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// `{"message": ...}`, with how many memories a removal took when it took several.
#[derive(Debug, Serialize)]
pub(crate) struct Message {
    pub message: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub deleted: Option<usize>,
}

/// An update's answer: mem0's message and the memory as it is now.
#[derive(Debug, Serialize)]
pub struct Updated {
    pub message: &'static str,
    #[serde(flatten)]
    pub item: Item,
}

/// The hosted API's key check (`GET /v1/ping/`).
#[derive(Debug, Serialize)]
pub(crate) struct Ping {
    pub status: &'static str,
    pub org_id: Option<String>,
    pub project_id: Option<String>,
    pub user_email: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryType, Revision};

    #[test]
    fn a_history_lists_the_add_each_text_change_and_the_supersede() {
        let mut memory = Memory::new(
            "m_0000000000000001".into(),
            MemoryType::Decision,
            "t".into(),
            "Use UTC in storage and logs.".into(),
            1_700_000_000_000,
        );
        let revision = |at: i64, event: Action, content: &str| Revision {
            at,
            event,
            title: "t".into(),
            content: content.into(),
            by: Some("mem0".into()),
            note: None,
        };
        memory.history = vec![
            revision(1_700_000_001_000, Action::Update, "Use UTC."),
            // Only the anchors moved: the text stayed.
            revision(1_700_000_002_000, Action::Update, "Use UTC everywhere."),
            revision(1_700_000_003_000, Action::Update, "Use UTC everywhere."),
            revision(
                1_700_000_004_000,
                Action::Supersede,
                "Use UTC in storage and logs.",
            ),
        ];
        let changes = history(&memory);
        let events: Vec<(&str, Option<&str>, Option<&str>)> = changes
            .iter()
            .map(|c| (c.event, c.old_memory.as_deref(), c.new_memory.as_deref()))
            .collect();
        assert_eq!(
            events,
            [
                ("ADD", None, Some("Use UTC.")),
                ("UPDATE", Some("Use UTC."), Some("Use UTC everywhere.")),
                (
                    "UPDATE",
                    Some("Use UTC everywhere."),
                    Some("Use UTC in storage and logs.")
                ),
                ("DELETE", Some("Use UTC in storage and logs."), None),
            ]
        );
        assert_eq!(changes[0].created_at, "2023-11-14T22:13:20.000+00:00");
        assert!(changes[3].is_deleted);
        assert_eq!(changes[1].id, "m_0000000000000001:1");
    }
}
