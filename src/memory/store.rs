//! Memories in SurrealDB: the store of record. Each memory is one row of the `memory` table
//! (its fields as written, its vector as base64 of little-endian f32s) and carries the write
//! sequence number of its last change, so a process can catch up on other processes'
//! writes by reading the rows changed since the last sequence number it saw.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use serde::Deserialize;
use surrealdb::Surreal;
use surrealdb::engine::local::Db;
use surrealdb::types::{Object, RecordId};

use super::model::Memory;
use crate::memory::reviews::ReviewRecord;
use crate::storage::{self, StoreError, decode, object, query_error};

type Result<T> = std::result::Result<T, StoreError>;

/// The memory schema version this cairn writes.
pub const MEMORY_SCHEMA_VERSION: u32 = 2;

const SCHEMA: &str = "
    DEFINE TABLE IF NOT EXISTS memory SCHEMALESS;
    DEFINE INDEX IF NOT EXISTS memory_seq ON memory FIELDS seq;
    DEFINE TABLE IF NOT EXISTS memory_meta SCHEMALESS;
    DEFINE TABLE IF NOT EXISTS review SCHEMALESS;
    DEFINE INDEX IF NOT EXISTS review_seq ON review FIELDS seq;
";

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

const INSERT_MEMORIES: &str = "INSERT INTO memory $rows ON DUPLICATE KEY UPDATE
    kind = $input.kind, title = $input.title, content = $input.content,
    developer = $input.developer, org = $input.org, agent = $input.agent,
    run = $input.run, paths = $input.paths, symbols = $input.symbols,
    unknown_anchors = $input.unknown_anchors, source = $input.source,
    source_ref = $input.source_ref, written_by = $input.written_by,
    created_at = $input.created_at, updated_at = $input.updated_at,
    valid_from = $input.valid_from, invalidated_at = $input.invalidated_at,
    superseded_by = $input.superseded_by, supersedes = $input.supersedes,
    access_count = $input.access_count, last_access = $input.last_access,
    confidence = $input.confidence, addressed = $input.addressed,
    shared = $input.shared, category = $input.category,
    redacted = $input.redacted, history = $input.history, seq = $input.seq,
    vector = $input.vector, forgotten = $input.forgotten, rev = $input.rev;";

/// Memory rows changed after `$after`, in write order (the local store and the team server).
pub(crate) const MEMORIES_SINCE: &str =
    "SELECT *, record::id(id) AS key FROM memory WHERE seq > $after ORDER BY seq;";
/// Review records written after `$after`, in write order.
pub(crate) const REVIEWS_SINCE: &str =
    "SELECT * OMIT id FROM review WHERE seq > $after ORDER BY seq;";

/// An open memory store.
pub struct MemoryStore {
    db: Surreal<Db>,
    lock_file: Option<PathBuf>,
}

impl MemoryStore {
    /// Opens (creating if needed) the store in `dir`, waiting while another process holds it.
    pub async fn open(dir: &Path) -> Result<MemoryStore> {
        MemoryStore::open_within(dir, std::time::Duration::from_secs(30)).await
    }

    /// Opens the store, waiting at most `patience` for another process to release it.
    pub async fn open_within(dir: &Path, patience: std::time::Duration) -> Result<MemoryStore> {
        let db = storage::open_engine_within(dir, patience).await?;
        let store = MemoryStore {
            db,
            lock_file: Some(dir.join("LOCK")),
        };
        store.prepare(dir).await?;
        Ok(store)
    }

    async fn prepare(&self, dir: &Path) -> Result<()> {
        self.db
            .use_ns("cairn")
            .use_db("memory")
            .await
            .map_err(query_error("selecting the memory database"))?;
        let mut response = self
            .db
            .query("SELECT VALUE version FROM ONLY memory_meta:schema")
            .await
            .map_err(query_error("reading the memory schema version"))?;
        let found: Option<i64> = response.take(0).unwrap_or(None);
        let found = found.unwrap_or(0) as u32;
        if found > MEMORY_SCHEMA_VERSION {
            return Err(StoreError::TooNew {
                path: dir.to_path_buf(),
                found,
                supported: MEMORY_SCHEMA_VERSION,
            });
        }
        if found < MEMORY_SCHEMA_VERSION {
            self.db
                .query(format!(
                    "BEGIN TRANSACTION; {SCHEMA} UPSERT memory_meta:schema SET version = {MEMORY_SCHEMA_VERSION}; COMMIT TRANSACTION;"
                ))
                .await
                .and_then(|r| r.check())
                .map_err(query_error("creating the memory schema"))?;
        }
        Ok(())
    }

    /// Closes the store, waiting until the engine has released its files.
    pub async fn close(self) {
        storage::close_engine(self.db, self.lock_file).await;
    }

    /// The sequence number of the last write.
    pub async fn head(&self) -> Result<u64> {
        let mut response = self
            .db
            .query("SELECT VALUE seq FROM ONLY memory_meta:head")
            .await
            .map_err(query_error("reading the memory sequence"))?;
        let seq: Option<i64> = response
            .take(0)
            .map_err(query_error("reading the memory sequence"))?;
        Ok(seq.unwrap_or(0) as u64)
    }

    /// Rows changed after sequence number `after`, in write order.
    pub async fn changes_since(&self, after: u64) -> Result<Vec<StoredMemory>> {
        let doing = "reading memories";
        let mut response = self
            .db
            .query(MEMORIES_SINCE)
            .bind(("after", after as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error(doing))?;
        let rows: Vec<serde_json::Value> = response.take(0).map_err(query_error(doing))?;
        rows.into_iter().map(|row| from_row(row, doing)).collect()
    }

    /// Writes changed memories (each with its vector, if known) and advances the sequence, in
    /// one transaction. Memories must carry their new sequence numbers; `head` is the
    /// highest.
    pub async fn write(&self, rows: &[(&Memory, Option<&[f32]>)], head: u64) -> Result<()> {
        let objects: Vec<Object> = rows
            .iter()
            .map(|(memory, vector)| to_row(memory, *vector))
            .collect();
        self.insert(objects, Vec::new(), Vec::new(), head).await
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
                let mut tomb = Object::new();
                tomb.insert("id", RecordId::new("memory", row.memory.id.as_str()));
                tomb.insert("seq", row.memory.seq as i64);
                tombstones.push(tomb);
                continue;
            }
            let mut object = to_row(&row.memory, row.vector.as_deref());
            if let Some(rev) = &row.rev {
                object.insert("rev", rev.as_str());
            }
            live.push(object);
        }
        let reviews = reviews.iter().map(review_row).collect();
        self.insert(live, tombstones, reviews, head).await
    }

    async fn insert(
        &self,
        rows: Vec<Object>,
        tombstones: Vec<Object>,
        reviews: Vec<Object>,
        head: u64,
    ) -> Result<()> {
        let rows: Vec<Object> = rows
            .into_iter()
            .map(|mut row| {
                if !row.contains_key("rev") {
                    row.insert("rev", surrealdb::types::Value::None);
                }
                row
            })
            .collect();
        // An empty INSERT is not worth a statement (a mirror write may carry reviews only).
        let insert = if rows.is_empty() { "" } else { INSERT_MEMORIES };
        self.db
            .query(format!(
                "BEGIN TRANSACTION;
                 {insert}
                 FOR $row IN $tombstones {{ UPSERT $row.id CONTENT {{ seq: $row.seq, forgotten: true }} }};
                 FOR $row IN $reviews {{ UPSERT $row.id CONTENT $row.body }};
                 UPSERT memory_meta:head SET seq = math::max([seq OR 0, $head]);
                 COMMIT TRANSACTION;"
            ))
            .bind(("rows", rows))
            .bind(("tombstones", tombstones))
            .bind(("reviews", reviews))
            .bind(("head", head as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing memories"))?;
        Ok(())
    }

    /// Replaces forgotten memories' rows with tombstones (id and sequence number only), in
    /// one transaction; the i-th id gets sequence number `first + i`.
    pub async fn tombstones(&self, ids: &[String], first: u64) -> Result<()> {
        let rows: Vec<Object> = ids
            .iter()
            .enumerate()
            .map(|(i, id)| {
                let mut row = Object::new();
                row.insert("id", RecordId::new("memory", id.as_str()));
                row.insert("seq", (first + i as u64) as i64);
                row.insert("forgotten", true);
                row
            })
            .collect();
        let head = first + ids.len() as u64 - 1;
        self.db
            .query(
                "BEGIN TRANSACTION;
                 FOR $row IN $rows { UPSERT $row.id CONTENT { seq: $row.seq, forgotten: true } };
                 UPSERT memory_meta:head SET seq = $head;
                 COMMIT TRANSACTION;",
            )
            .bind(("rows", rows))
            .bind(("head", head as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("forgetting memories"))?;
        Ok(())
    }

    /// Review records written after sequence number `after`.
    pub async fn reviews_since(&self, after: u64) -> Result<Vec<ReviewRecord>> {
        let doing = "reading review records";
        let mut response = self
            .db
            .query(REVIEWS_SINCE)
            .bind(("after", after as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error(doing))?;
        let rows: Vec<serde_json::Value> = response.take(0).map_err(query_error(doing))?;
        decode(rows, doing)
    }

    /// Stores a review record (replacing an earlier record of the same review) and advances
    /// the sequence, in one transaction.
    pub async fn write_review(&self, record: &ReviewRecord) -> Result<()> {
        self.db
            .query(
                "BEGIN TRANSACTION;
                 UPSERT $id CONTENT $row;
                 UPSERT memory_meta:head SET seq = $head;
                 COMMIT TRANSACTION;",
            )
            .bind(("id", RecordId::new("review", record.id.as_str())))
            .bind(("row", review_body(record)))
            .bind(("head", record.seq as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing a review record"))?;
        Ok(())
    }

    /// Every stored row, raw (for tests that check what reached the disk).
    pub async fn raw_rows(&self) -> Result<Vec<serde_json::Value>> {
        let mut response = self
            .db
            .query("SELECT * FROM memory")
            .await
            .map_err(query_error("reading raw memories"))?;
        response
            .take(0)
            .map_err(query_error("reading raw memories"))
    }
}

/// A review record as stored: its id is the record key, kept also as `review_id`.
fn review_body(record: &ReviewRecord) -> Object {
    let mut row = object(record);
    row.remove("id");
    row.insert("review_id", record.id.as_str());
    row
}

fn review_row(record: &ReviewRecord) -> Object {
    let mut row = Object::new();
    row.insert("id", RecordId::new("review", record.id.as_str()));
    row.insert("body", review_body(record));
    row
}

/// A memory as a row of the `memory` table (also the body the team server stores).
pub(crate) fn to_row(memory: &Memory, vector: Option<&[f32]>) -> Object {
    let mut row = object(memory);
    row.remove("id");
    row.insert("id", RecordId::new("memory", memory.id.as_str()));
    row.insert("kind", memory.kind.as_str());
    row.remove("type");
    // Every field the update clause names must be present; NONE clears it.
    for field in [
        "developer",
        "org",
        "agent",
        "run",
        "source_ref",
        "written_by",
        "invalidated_at",
        "superseded_by",
        "supersedes",
        "last_access",
        "category",
    ] {
        if !row.contains_key(field) {
            row.insert(field, surrealdb::types::Value::None);
        }
    }
    for field in ["paths", "symbols", "unknown_anchors", "redacted", "history"] {
        if !row.contains_key(field) {
            row.insert(field, Vec::<String>::new());
        }
    }
    match vector {
        Some(v) => row.insert("vector", encode_vector(v)),
        None => row.insert("vector", surrealdb::types::Value::None),
    };
    row.insert("forgotten", false);
    row
}

/// A row of the `memory` table (selected with `record::id(id) AS key`) as a memory.
pub(crate) fn from_row(mut row: serde_json::Value, doing: &str) -> Result<StoredMemory> {
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
    let extra: Extra = decode(vec![row.clone()], doing)?.remove(0);
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
    let memory: Memory = decode(vec![row], doing)?.remove(0);
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
pub fn encode_vector(vector: &[f32]) -> String {
    let bytes: Vec<u8> = vector.iter().flat_map(|x| x.to_le_bytes()).collect();
    BASE64.encode(bytes)
}

/// The inverse of [`encode_vector`]; `None` when the text is not a vector.
pub fn decode_vector(text: &str) -> Option<Vec<f32>> {
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
