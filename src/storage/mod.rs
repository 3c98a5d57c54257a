//! The only place that speaks SurrealQL and calls the SurrealDB client: the graph store
//! ([`graph`]), the memory store and its team copy ([`memory`]), the team server
//! ([`remote`]), their schemas (`schema/<store>/<version>.surql`) and the one migration
//! mechanism that applies them ([`migrate`]).
//!
//! Rows cross this boundary as serde values ([`Row`]) or storage-owned row types: what a
//! memory or a review record is, and how it becomes a row, is the memory layer's business.

pub mod graph;
pub mod memory;
pub mod migrate;
pub mod remote;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;
use serde::de::DeserializeOwned;
use surrealdb::Surreal;
use surrealdb::engine::local::{Db, SurrealKv};
use surrealdb::types::{Object, Value};

pub use graph::{Delta, FileStamp, IndexMeta, SCHEMA_VERSION, SourceRecord, Store};

/// How long opening waits for another cairn process to release the store.
const OPEN_PATIENCE: Duration = Duration::from_secs(30);
/// How long closing waits for the engine to flush and release the store.
const CLOSE_PATIENCE: Duration = Duration::from_secs(10);

/// Storage failures, with what was being done.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("the store at {path} is in use by another process (gave up after {waited:?})")]
    Locked { path: PathBuf, waited: Duration },
    #[error("cannot open the store at {path}: {message}")]
    Open { path: PathBuf, message: String },
    #[error(
        "the store at {store} has schema version {found}, newer than this cairn ({supported}); upgrade cairn"
    )]
    TooNew {
        store: String,
        found: u32,
        supported: u32,
    },
    #[error("store query failed while {doing}: {message}")]
    Query { doing: String, message: String },
    #[error("stored data is unreadable while {doing}: {message}")]
    Decode { doing: String, message: String },
    #[error(
        "the graph store at {path} is damaged or unreadable ({cause}); `cairn index --rebuild` discards it and indexes afresh (memories and reviews are kept)"
    )]
    Damaged { path: PathBuf, cause: String },
    #[error(
        "the disk holding the store is full ({message}): nothing more was written, and what the store held is kept; free some space and cairn writes again"
    )]
    Full { message: String },
}

/// Whether an engine's error says the disk (or the user's quota) is full.
fn is_full(message: &str) -> bool {
    let message = message.to_lowercase();
    [
        "no space left on device",
        "no storage space",
        "disk quota exceeded",
        "storage full",
    ]
    .iter()
    .any(|said| message.contains(said))
}

/// A failure of the engine as a store error: a full disk says so, anything else is `other`.
fn engine_error(error: &surrealdb::Error, other: impl FnOnce(String) -> StoreError) -> StoreError {
    let message = error.to_string();
    if is_full(&message) {
        StoreError::Full { message }
    } else {
        other(message)
    }
}

pub(crate) type Result<T> = std::result::Result<T, StoreError>;

pub(crate) fn query_error(doing: &str) -> impl FnOnce(surrealdb::Error) -> StoreError + '_ {
    move |e| {
        engine_error(&e, |message| StoreError::Query {
            doing: doing.to_string(),
            message,
        })
    }
}

/// A row as the layers above hand it over: its fields by name. A field that is absent or
/// null is stored as NONE (no value).
pub type Row = serde_json::Map<String, serde_json::Value>;

/// The fields of a serialisable value as a row, leaving out absent (null) fields.
pub fn fields(value: &impl Serialize) -> Row {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::Object(map)) => {
            map.into_iter().filter(|(_, v)| !v.is_null()).collect()
        }
        _ => Row::new(),
    }
}

/// A row as a SurrealDB object: null fields become NONE, so `option<…>` fields stay empty.
pub(crate) fn object(row: Row) -> Object {
    let mut object = Object::new();
    for (key, value) in row {
        if value.is_null() {
            object.insert(key, Value::None);
        } else {
            object.insert(key, value);
        }
    }
    object
}

/// Rows decoded into `T`.
pub fn decode<T: DeserializeOwned>(rows: Vec<serde_json::Value>, doing: &str) -> Result<Vec<T>> {
    rows.into_iter()
        .map(|row| {
            serde_json::from_value(row).map_err(|e| StoreError::Decode {
                doing: doing.to_string(),
                message: e.to_string(),
            })
        })
        .collect()
}

/// Opens (creating if needed) the embedded engine in `dir`, waiting at most `patience` for
/// another process to release it.
async fn open_engine(dir: &Path, patience: Duration) -> Result<Surreal<Db>> {
    crate::fsutil::private_dir(dir).map_err(|e| StoreError::Open {
        path: dir.to_path_buf(),
        message: e.to_string(),
    })?;
    let started = Instant::now();
    loop {
        match Surreal::new::<SurrealKv>(dir.to_path_buf()).await {
            Ok(db) => {
                // The engine makes some directories with modes of its own (its log 0750).
                if let Err(e) = crate::fsutil::tighten(dir) {
                    tracing::warn!("cannot make {} private: {e}", dir.display());
                }
                return Ok(db);
            }
            Err(e) if is_lock_error(&e) && !is_full(&e.to_string()) => {
                if started.elapsed() > patience {
                    return Err(StoreError::Locked {
                        path: dir.to_path_buf(),
                        waited: started.elapsed(),
                    });
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(e) => {
                return Err(engine_error(&e, |message| StoreError::Open {
                    path: dir.to_path_buf(),
                    message,
                }));
            }
        }
    }
}

/// Drops the engine and waits until it has flushed its log and released `lock_file`, so the
/// next process finds a cleanly closed store.
async fn close_engine(db: Surreal<Db>, lock_file: Option<PathBuf>) {
    drop(db);
    let Some(lock_file) = lock_file else { return };
    let started = Instant::now();
    while started.elapsed() < CLOSE_PATIENCE {
        let released = std::fs::File::open(&lock_file)
            .map(|file| file.try_lock().is_ok())
            .unwrap_or(true);
        if released {
            return;
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
    tracing::warn!(
        "the store at {} did not close within {CLOSE_PATIENCE:?}",
        lock_file.display()
    );
}

fn is_lock_error(error: &surrealdb::Error) -> bool {
    let text = error.to_string().to_lowercase();
    text.contains("lock") || text.contains("in use") || text.contains("would block")
}

/// Runs a query that returns rows and takes the first statement's rows.
async fn select<C: surrealdb::Connection>(
    db: &Surreal<C>,
    sql: &str,
    doing: &str,
) -> Result<Vec<serde_json::Value>> {
    let mut response = db
        .query(sql)
        .await
        .and_then(|r| r.check())
        .map_err(query_error(doing))?;
    response.take(0).map_err(query_error(doing))
}
