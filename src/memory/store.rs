//! Memories in the memory store: a memory is one row (its fields as written, its vector as
//! base64 of little-endian f32s), a review record another, a guideline change a third; this
//! file turns them into rows and back, and reads and writes the store (`storage::memory`) in
//! those terms.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;

use super::guidelines::GuidelineChange;
use super::model::Memory;
use super::reviews::ReviewRecord;
use crate::storage::memory::{ReviewRow, Store, Tombstone};
use crate::storage::{Row, StoreError, decode, fields};

type Result<T> = std::result::Result<T, StoreError>;

/// A memory as stored, with its vector.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredMemory {
    pub memory: Memory,
    pub vector: Option<Vec<f32>>,
    /// Removed by `forget`: only the id and sequence number remain.
    pub forgotten: bool,
    /// Team mode: the key of the write that made this version on the server.
    pub rev: Option<String>,
}

/// An open memory store, read and written as memories and review records.
pub struct MemoryStore {
    store: Store,
}

impl MemoryStore {
    /// Opens (creating if needed) the store in `dir`, waiting while another process holds it.
    pub async fn open(dir: &std::path::Path) -> Result<MemoryStore> {
        Ok(MemoryStore {
            store: Store::open(dir).await?,
        })
    }

    /// Opens the store, waiting at most `patience` for another process to release it.
    pub async fn open_within(
        dir: &std::path::Path,
        patience: std::time::Duration,
    ) -> Result<MemoryStore> {
        Ok(MemoryStore {
            store: Store::open_within(dir, patience).await?,
        })
    }

    /// Closes the store, waiting until the engine has released its files.
    pub async fn close(self) {
        self.store.close().await;
    }

    /// The sequence number of the last write.
    pub async fn head(&self) -> Result<u64> {
        self.store.head().await
    }

    /// Rows changed after sequence number `after`, in write order.
    pub async fn changes_since(&self, after: u64) -> Result<Vec<StoredMemory>> {
        let rows = self.store.memories_since(after).await?;
        rows.into_iter()
            .map(|row| from_row(row, "reading memories"))
            .collect()
    }

    /// Writes changed memories (each with its vector, if known) and advances the sequence, in
    /// one transaction. Memories must carry their new sequence numbers; `head` is the
    /// highest.
    pub async fn write(&self, rows: &[(&Memory, Option<&[f32]>)], head: u64) -> Result<()> {
        let rows = rows
            .iter()
            .map(|(memory, vector)| to_row(memory, *vector))
            .collect();
        self.store.write(rows, &[], Vec::new(), head).await
    }

    /// Team mode: stores rows as the server sent them (its sequence numbers, revisions and
    /// tombstones) and the review records, in one transaction; `head` is the highest
    /// sequence number seen.
    pub async fn write_mirror(
        &self,
        rows: &[StoredMemory],
        reviews: &[ReviewRecord],
        head: u64,
    ) -> Result<()> {
        let mut live = Vec::new();
        let mut tombstones = Vec::new();
        for row in rows {
            if row.forgotten {
                tombstones.push(Tombstone {
                    id: row.memory.id.clone(),
                    seq: row.memory.seq,
                });
                continue;
            }
            let mut fields = to_row(&row.memory, row.vector.as_deref());
            if let Some(rev) = &row.rev {
                fields.insert("rev".to_string(), rev.as_str().into());
            }
            live.push(fields);
        }
        let reviews = reviews.iter().map(review_row).collect();
        self.store.write(live, &tombstones, reviews, head).await
    }

    /// Team copy: removes every memory row and review record, sequence back to 0.
    pub async fn clear_mirror(&self) -> Result<()> {
        self.store.clear_mirror().await
    }

    /// Replaces forgotten memories' rows with tombstones (id and sequence number only), in
    /// one transaction; the i-th id gets sequence number `first + i`.
    pub async fn tombstones(&self, ids: &[String], first: u64) -> Result<()> {
        let tombstones: Vec<Tombstone> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| Tombstone {
                id: id.clone(),
                seq: first + i as u64,
            })
            .collect();
        self.store.forget(&tombstones).await
    }

    /// Review records written after sequence number `after`.
    pub async fn reviews_since(&self, after: u64) -> Result<Vec<ReviewRecord>> {
        let rows = self.store.reviews_since(after).await?;
        decode(rows, "reading review records")
    }

    /// Stores a review record (replacing an earlier record of the same review) and advances
    /// the sequence, in one transaction.
    pub async fn write_review(&self, record: &ReviewRecord) -> Result<()> {
        self.store
            .write_review(review_row(record), record.seq)
            .await
    }

    /// Every guideline change, oldest first.
    pub async fn guideline_changes(&self) -> Result<Vec<GuidelineChange>> {
        let rows = self.store.guideline_changes().await?;
        decode(rows, "reading guideline changes")
    }

    /// Stores a guideline change (replacing an earlier row of the same change); its id is the
    /// record key, kept also as `change_id`.
    pub async fn write_guideline_change(&self, change: &GuidelineChange) -> Result<()> {
        self.store
            .write_guideline_change(&change.id, guideline_body(change))
            .await
    }

    /// Every stored row, raw (for tests that check what reached the disk).
    pub async fn raw_rows(&self) -> Result<Vec<serde_json::Value>> {
        self.store.raw_rows().await
    }
}

/// A guideline change as stored: its id is the record key, kept also as `change_id`.
pub(crate) fn guideline_body(change: &GuidelineChange) -> Row {
    let mut row = fields(change);
    row.remove("id");
    row.insert("change_id".to_string(), change.id.as_str().into());
    row
}

/// A review record as stored: its id is the record key, kept also as `review_id`.
pub(crate) fn review_body(record: &ReviewRecord) -> Row {
    let mut row = fields(record);
    row.remove("id");
    row.insert("review_id".to_string(), record.id.as_str().into());
    row
}

fn review_row(record: &ReviewRecord) -> ReviewRow {
    ReviewRow {
        id: record.id.clone(),
        body: review_body(record),
    }
}

/// A memory as a row of the `memory` table (also the body the team server stores): lists
/// and metadata are stored even when empty, the type as `kind`, the vector as base64.
pub(crate) fn to_row(memory: &Memory, vector: Option<&[f32]>) -> Row {
    let mut row = fields(memory);
    row.insert("kind".to_string(), memory.kind.as_str().into());
    row.remove("type");
    for field in ["paths", "symbols", "unknown_anchors", "redacted", "history"] {
        row.entry(field)
            .or_insert_with(|| serde_json::Value::Array(Vec::new()));
    }
    row.entry("metadata")
        .or_insert_with(|| serde_json::Value::Object(Default::default()));
    if let Some(vector) = vector {
        row.insert("vector".to_string(), encode_vector(vector).into());
    }
    row.insert("forgotten".to_string(), false.into());
    // Always written, approved included: a row says whether it may be served, here and on
    // a team server, whatever the JSON answers leave out.
    row.insert("status".to_string(), memory.status.as_str().into());
    row
}

/// A row of the `memory` table (selected with `record::id(id) AS key`) as a memory.
pub(crate) fn from_row(row: serde_json::Value, doing: &str) -> Result<StoredMemory> {
    parse_row(row).map_err(|e| StoreError::Decode {
        doing: doing.to_string(),
        message: e.to_string(),
    })
}

/// [`from_row`] with serde's own error, which the team pull redacts (it may quote a value).
pub(crate) fn parse_row(mut row: serde_json::Value) -> serde_json::Result<StoredMemory> {
    #[derive(Deserialize)]
    struct Extra {
        #[serde(default)]
        vector: Option<String>,
        #[serde(default)]
        forgotten: bool,
        key: String,
        #[serde(default)]
        seq: u64,
        #[serde(default)]
        rev: Option<String>,
    }
    let extra: Extra = serde_json::from_value(row.clone())?;
    if extra.forgotten {
        return Ok(StoredMemory {
            memory: tombstone_memory(extra.key, extra.seq),
            vector: None,
            forgotten: true,
            rev: extra.rev,
        });
    }
    if let Some(object) = row.as_object_mut() {
        object.remove("key");
        object.remove("rev");
        object.remove("vector");
        object.remove("forgotten");
        object.insert("id".to_string(), extra.key.clone().into());
        if let Some(kind) = object.remove("kind") {
            object.insert("type".to_string(), kind);
        }
    }
    let memory: Memory = serde_json::from_value(row)?;
    let vector = extra.vector.as_deref().and_then(decode_vector);
    Ok(StoredMemory {
        memory,
        vector,
        forgotten: false,
        rev: extra.rev,
    })
}

fn tombstone_memory(id: String, seq: u64) -> Memory {
    Memory {
        seq,
        ..Memory::new(
            id,
            super::model::MemoryType::ProjectPattern,
            String::new(),
            String::new(),
            0,
        )
    }
}

/// A vector as base64 of its little-endian f32s.
pub(crate) fn encode_vector(vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    BASE64.encode(bytes)
}

/// The inverse of [`encode_vector`]; `None` when the text is not a vector.
pub(crate) fn decode_vector(text: &str) -> Option<Vec<f32>> {
    let bytes = BASE64.decode(text).ok()?;
    if bytes.len() % 4 != 0 {
        return None;
    }
    Some(
        bytes
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::{MemoryType, Status};

    #[tokio::test]
    async fn a_rewritten_memory_loses_the_fields_it_no_longer_has() {
        let dir = tempfile::tempdir().unwrap();
        let store = MemoryStore::open(dir.path()).await.unwrap();
        let mut memory = Memory::new(
            "m_0000000000000001".to_string(),
            MemoryType::Decision,
            "Staging".to_string(),
            "Staging deploys run at noon.".to_string(),
            1_700_000_000_000,
        );
        memory.seq = 1;
        memory.owner.developer = Some("alice".to_string());
        memory.rule.category = Some("release-train".to_string());
        memory.anchors.paths = vec!["deploy/staging.yml".to_string()];
        memory.shared = true;
        memory.status = Status::Pending;
        let vector = [0.5_f32, -1.0, 2.0];
        store.write(&[(&memory, Some(&vector))], 1).await.unwrap();
        let read = store.changes_since(0).await.unwrap();
        assert_eq!(read.len(), 1);
        assert_eq!(read[0].memory, memory);
        assert_eq!(read[0].vector.as_deref(), Some(&vector[..]));

        memory.seq = 2;
        memory.owner.developer = None;
        memory.rule.category = None;
        memory.anchors.paths.clear();
        memory.shared = false;
        memory.status = Status::Approved;
        store.write(&[(&memory, None)], 2).await.unwrap();
        let read = store.changes_since(1).await.unwrap();
        assert_eq!(read[0].memory, memory);
        assert_eq!(read[0].vector, None);
        assert_eq!(store.head().await.unwrap(), 2);
        let raw = serde_json::to_string(&store.raw_rows().await.unwrap()).unwrap();
        assert!(
            !raw.contains("alice") && !raw.contains("release-train"),
            "{raw}"
        );
        assert!(!raw.contains("vector") && !raw.contains("shared"), "{raw}");
        assert!(raw.contains(r#""status":"approved""#), "{raw}");
        store.close().await;
    }
}
