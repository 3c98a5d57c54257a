//! The memory store (`ns cairn`, `db memory`), the store of record of memories, and in team
//! mode the local copy of what the server let this developer read (same layout). Each memory
//! is one row of `memory` carrying the write sequence number of its last change, so a process
//! catches up on other processes' writes by reading the rows changed since the last number
//! it saw; `review` holds one row per review id, numbered in the same sequence;
//! `guideline_change` one row per guideline change (few, read whole, not numbered);
//! `memory_meta:head` is the last number.
//!
//! Rows come and go as [`Row`]s: the memory layer decides what a memory's row holds.

use std::path::{Path, PathBuf};
use std::time::Duration;

use surrealdb::Surreal;
use surrealdb::engine::local::Db;
use surrealdb::types::{Object, RecordId, Value};

use super::migrate::{self, Schema, Step};
use super::{Result, Row, object, query_error};

/// The memory store's schema (also the team copy's).
const SCHEMA: Schema = Schema {
    name: "the memory schema",
    record: "memory_meta:schema",
    steps: &[
        Step {
            version: 1,
            sql: include_str!("schema/memory/1.surql"),
        },
        Step {
            version: 2,
            sql: include_str!("schema/memory/2.surql"),
        },
        Step {
            version: 3,
            sql: include_str!("schema/memory/3.surql"),
        },
        Step {
            version: 4,
            sql: include_str!("schema/memory/4.surql"),
        },
    ],
};

/// The memory schema version this cairn writes.
pub const SCHEMA_VERSION: u32 = SCHEMA.version();

/// Fields a stored memory row may hold besides its id. A row written without one of them
/// gets NONE, so writing a memory again clears what it no longer has.
pub const MEMORY_FIELDS: [&str; 37] = [
    "kind",
    "title",
    "content",
    "developer",
    "org",
    "agent",
    "run",
    "metadata",
    "paths",
    "symbols",
    "unknown_anchors",
    "origin",
    "source",
    "source_ref",
    "written_by",
    "created_at",
    "updated_at",
    "valid_from",
    "invalidated_at",
    "superseded_by",
    "supersedes",
    "access_count",
    "last_access",
    "confidence",
    "addressed",
    "addressed_by",
    "shared",
    "category",
    "scope",
    "file_pattern",
    "redacted",
    "status",
    "history",
    "seq",
    "vector",
    "forgotten",
    "rev",
];

/// Inserts `$rows`, replacing every field of rows that exist (see [`MEMORY_FIELDS`]).
const INSERT_MEMORIES: &str = "INSERT INTO memory $rows ON DUPLICATE KEY UPDATE
    kind = $input.kind, title = $input.title, content = $input.content,
    developer = $input.developer, org = $input.org, agent = $input.agent,
    run = $input.run, metadata = $input.metadata, paths = $input.paths, symbols = $input.symbols,
    unknown_anchors = $input.unknown_anchors, origin = $input.origin, source = $input.source,
    source_ref = $input.source_ref, written_by = $input.written_by,
    created_at = $input.created_at, updated_at = $input.updated_at,
    valid_from = $input.valid_from, invalidated_at = $input.invalidated_at,
    superseded_by = $input.superseded_by, supersedes = $input.supersedes,
    access_count = $input.access_count, last_access = $input.last_access,
    confidence = $input.confidence, addressed = $input.addressed,
    addressed_by = $input.addressed_by, shared = $input.shared, category = $input.category,
    scope = $input.scope, file_pattern = $input.file_pattern,
    redacted = $input.redacted, status = $input.status, history = $input.history,
    seq = $input.seq,
    vector = $input.vector, forgotten = $input.forgotten, rev = $input.rev;";

/// Memory rows changed after `$after`, in write order, each with its id as `key`.
const MEMORIES_SINCE: &str =
    "SELECT *, record::id(id) AS key FROM memory WHERE seq > $after ORDER BY seq;";
/// Review records written after `$after`, in write order.
const REVIEWS_SINCE: &str = "SELECT * OMIT id FROM review WHERE seq > $after ORDER BY seq;";
/// Every guideline change, oldest first.
const GUIDELINE_CHANGES: &str = "SELECT * OMIT id FROM guideline_change ORDER BY proposed_at;";

/// A forgotten memory as stored: only its id and sequence number remain.
#[derive(Debug, Clone, PartialEq)]
pub struct Tombstone {
    pub id: String,
    pub seq: u64,
}

/// A review record's row: the review id (the record key) and what is stored under it.
#[derive(Debug, Clone, PartialEq)]
pub struct ReviewRow {
    pub id: String,
    pub body: Row,
}

/// An open memory store.
pub struct Store {
    db: Surreal<Db>,
    lock_file: Option<PathBuf>,
}

impl Store {
    /// Opens (creating if needed) the store in `dir`, waiting while another process holds it.
    pub async fn open(dir: &Path) -> Result<Store> {
        Store::open_within(dir, super::OPEN_PATIENCE).await
    }

    /// Opens the store, waiting at most `patience` for another process to release it, and
    /// migrates its schema forward.
    pub async fn open_within(dir: &Path, patience: Duration) -> Result<Store> {
        let db = super::open_engine(dir, patience).await?;
        let store = Store {
            db,
            lock_file: Some(dir.join("LOCK")),
        };
        store
            .db
            .use_ns("cairn")
            .use_db("memory")
            .await
            .map_err(query_error("selecting the memory database"))?;
        migrate::migrate(&store.db, &SCHEMA, &dir.display().to_string()).await?;
        Ok(store)
    }

    /// Closes the store, waiting until the engine has released its files.
    pub async fn close(self) {
        super::close_engine(self.db, self.lock_file).await;
    }

    /// The sequence number of the last write.
    pub async fn head(&self) -> Result<u64> {
        let doing = "reading the memory sequence";
        let mut response = self
            .db
            .query("SELECT VALUE seq FROM ONLY memory_meta:head")
            .await
            .map_err(query_error(doing))?;
        let seq: Option<i64> = response.take(0).map_err(query_error(doing))?;
        Ok(seq.unwrap_or(0) as u64)
    }

    /// Memory rows changed after sequence number `after`, in write order, each with its id
    /// as `key`.
    pub async fn memories_since(&self, after: u64) -> Result<Vec<serde_json::Value>> {
        self.since(MEMORIES_SINCE, after, "reading memories").await
    }

    /// Review records written after sequence number `after`, in write order.
    pub async fn reviews_since(&self, after: u64) -> Result<Vec<serde_json::Value>> {
        self.since(REVIEWS_SINCE, after, "reading review records")
            .await
    }

    async fn since(&self, sql: &str, after: u64, doing: &str) -> Result<Vec<serde_json::Value>> {
        let mut response = self
            .db
            .query(sql)
            .bind(("after", after as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error(doing))?;
        response.take(0).map_err(query_error(doing))
    }

    /// Writes memory rows (each with its `id`), tombstones and review records, and advances
    /// the sequence to at least `head`, in one transaction.
    pub async fn write(
        &self,
        memories: Vec<Row>,
        tombstones: &[Tombstone],
        reviews: Vec<ReviewRow>,
        head: u64,
    ) -> Result<()> {
        let memories: Vec<Object> = memories.into_iter().map(memory_object).collect();
        let tombstones: Vec<Object> = tombstones.iter().map(tombstone_object).collect();
        let reviews: Vec<Object> = reviews
            .into_iter()
            .map(|review| {
                let mut row = Object::new();
                row.insert("id", RecordId::new("review", review.id.as_str()));
                row.insert("body", object(review.body));
                row
            })
            .collect();
        // An empty INSERT is not worth a statement (a mirror write may carry reviews only).
        let insert = if memories.is_empty() {
            ""
        } else {
            INSERT_MEMORIES
        };
        self.db
            .query(format!(
                "BEGIN TRANSACTION;
                 {insert}
                 FOR $row IN $tombstones {{ UPSERT $row.id CONTENT {{ seq: $row.seq, forgotten: true }} }};
                 FOR $row IN $reviews {{ UPSERT $row.id CONTENT $row.body }};
                 UPSERT memory_meta:head SET seq = math::max([seq OR 0, $head]);
                 COMMIT TRANSACTION;"
            ))
            .bind(("rows", memories))
            .bind(("tombstones", tombstones))
            .bind(("reviews", reviews))
            .bind(("head", head as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing memories"))?;
        Ok(())
    }

    /// Team copy: removes every memory row and review record and sets the sequence back to
    /// 0, in one transaction (the server was restored from a backup and numbers its writes
    /// anew; the copy is pulled again). Guideline changes stay: a pull merges them.
    pub async fn clear_mirror(&self) -> Result<()> {
        self.db
            .query(
                "BEGIN TRANSACTION;
                 DELETE memory;
                 DELETE review;
                 UPSERT memory_meta:head SET seq = 0;
                 COMMIT TRANSACTION;",
            )
            .await
            .and_then(|r| r.check())
            .map_err(query_error("clearing the team copy"))?;
        Ok(())
    }

    /// Replaces forgotten memories' rows with tombstones and sets the sequence to the last
    /// one's number, in one transaction.
    pub async fn forget(&self, tombstones: &[Tombstone]) -> Result<()> {
        let Some(head) = tombstones.iter().map(|t| t.seq).max() else {
            return Ok(());
        };
        let rows: Vec<Object> = tombstones.iter().map(tombstone_object).collect();
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

    /// Stores a review record (replacing an earlier record of the same review) and sets the
    /// sequence to `seq`, in one transaction.
    pub async fn write_review(&self, review: ReviewRow, seq: u64) -> Result<()> {
        self.db
            .query(
                "BEGIN TRANSACTION;
                 UPSERT $id CONTENT $row;
                 UPSERT memory_meta:head SET seq = $head;
                 COMMIT TRANSACTION;",
            )
            .bind(("id", RecordId::new("review", review.id.as_str())))
            .bind(("row", object(review.body)))
            .bind(("head", seq as i64))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing a review record"))?;
        Ok(())
    }

    /// Every guideline change row, oldest first.
    pub async fn guideline_changes(&self) -> Result<Vec<serde_json::Value>> {
        super::select(&self.db, GUIDELINE_CHANGES, "reading guideline changes").await
    }

    /// Stores a guideline change under its id, replacing an earlier row of the same change.
    pub async fn write_guideline_change(&self, id: &str, body: Row) -> Result<()> {
        self.db
            .query("UPSERT $id CONTENT $row;")
            .bind(("id", RecordId::new("guideline_change", id)))
            .bind(("row", object(body)))
            .await
            .and_then(|r| r.check())
            .map_err(query_error("writing a guideline change"))?;
        Ok(())
    }

    /// Every stored memory row, raw (for tests that check what reached the disk).
    pub async fn raw_rows(&self) -> Result<Vec<serde_json::Value>> {
        super::select(&self.db, "SELECT * FROM memory", "reading raw memories").await
    }
}

/// A memory row as stored: its id the record key, every field of [`MEMORY_FIELDS`] present
/// (NONE when the row has no value).
fn memory_object(mut row: Row) -> Object {
    let id = match row.remove("id") {
        Some(serde_json::Value::String(id)) => id,
        _ => String::new(),
    };
    let mut object = object(row);
    object.insert("id", RecordId::new("memory", id.as_str()));
    for field in MEMORY_FIELDS {
        if !object.contains_key(field) {
            object.insert(field, Value::None);
        }
    }
    object
}

fn tombstone_object(tombstone: &Tombstone) -> Object {
    let mut row = Object::new();
    row.insert("id", RecordId::new("memory", tombstone.id.as_str()));
    row.insert("seq", tombstone.seq as i64);
    row
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_field_the_update_names_is_a_memory_field() {
        let named: Vec<&str> = INSERT_MEMORIES
            .split("$input.")
            .skip(1)
            .map(|rest| rest.split([',', ';']).next().unwrap().trim())
            .collect();
        assert_eq!(named, MEMORY_FIELDS);
    }

    #[tokio::test]
    async fn a_version_1_store_gains_review_records_guideline_changes_and_approval() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = super::super::open_engine(dir.path(), super::super::OPEN_PATIENCE)
                .await
                .unwrap();
            db.use_ns("cairn").use_db("memory").await.unwrap();
            db.query(format!(
                "{} UPSERT memory_meta:schema SET version = 1;
                 UPSERT memory:m_0000000000000001 CONTENT {{ kind: 'decision', seq: 1 }};
                 UPSERT memory_meta:head SET seq = 1;",
                SCHEMA.steps[0].sql
            ))
            .await
            .and_then(|r| r.check())
            .unwrap();
            super::super::close_engine(db, Some(dir.path().join("LOCK"))).await;
        }
        let store = Store::open(dir.path()).await.unwrap();
        assert_eq!(
            migrate::stored_version(&store.db, &SCHEMA).await.unwrap(),
            SCHEMA_VERSION
        );
        let rows = store.memories_since(0).await.unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["status"], "approved", "older memories are approved");
        let mut body = Row::new();
        body.insert("review_id".to_string(), "PR-1".into());
        body.insert("seq".to_string(), 2.into());
        store
            .write_review(
                ReviewRow {
                    id: "PR-1".to_string(),
                    body,
                },
                2,
            )
            .await
            .unwrap();
        assert_eq!(store.reviews_since(1).await.unwrap().len(), 1);
        assert_eq!(store.head().await.unwrap(), 2);
        let mut change = Row::new();
        change.insert("change_id".to_string(), "g_0000000000000001".into());
        change.insert("proposed_at".to_string(), 5.into());
        store
            .write_guideline_change("g_0000000000000001", change.clone())
            .await
            .unwrap();
        change.insert("outcome".to_string(), "accepted".into());
        store
            .write_guideline_change("g_0000000000000001", change)
            .await
            .unwrap();
        let changes = store.guideline_changes().await.unwrap();
        assert_eq!(changes.len(), 1, "{changes:?}");
        assert_eq!(changes[0]["outcome"], "accepted");
        assert_eq!(
            store.head().await.unwrap(),
            2,
            "changes take no sequence number"
        );
        store.close().await;
    }
}
